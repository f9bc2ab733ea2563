//! A second candidate source (issue 17): pairs of small text files, and of
//! translation catalogs, whose lines are in common but too scattered for a
//! chunk to survive. A catalog alternates `msgid` lines, the same in every
//! locale, with `msgstr` lines, different in each; a 500-byte file edited
//! every few lines keeps no 100-byte chunk. Chunks find neither, whatever
//! the floor; their lines do.
//!
//! For the selected files (text files of at most `max_size` bytes, and
//! catalogs — `.po`, `.pot` — of any size when asked), each distinct content
//! (one file per content hash, the smallest id, as the chunk analysis
//! collapses copies) is read and cut into lines (up to and including `\n`,
//! as fsim-verify's), each line identified by its xxh3-64 hash. Every two
//! contents sharing a line get their **multiset line overlap**: the sum over
//! the distinct lines they share of min(occurrences in a, occurrences in b)
//! × the line's length. It is an upper bound of the bytes of a longest
//! common subsequence of lines (every common line is a line of both files,
//! used at most as often as it occurs in each), so a pair whose exact
//! figure reaches `min_percent` always has an overlap that does: keeping
//! the pairs whose overlap reaches the threshold loses none of them.
//!
//! A pair found here and not by the chunks is written with `common` = 0 and
//! `shared` = 0 (no chunk evidence: without verification it reports
//! nothing); fsim-verify gives it its exact figure. Pairs the chunks found
//! keep their chunk figures. The files must be reachable (as for
//! fsim-verify); a file that cannot be read, or whose size changed since
//! chunking, is left out of this source (fsim-verify warns about it).
//!
//! Cost: reading the selected files once, and per line shared by `d`
//! contents `d²/2` additions (one row of the contents after `a` at a time,
//! with a dense accumulator, `-j` threads over the rows). Memory: the line
//! postings (8 bytes per distinct line of a content, twice: each content's
//! list and the line's), the line table (~24 bytes per distinct line) and
//! one accumulator per thread (8 bytes per selected content); the pairs go
//! to the analysis's pair store as they are found, which spills them
//! beyond its share of `--capacity`.

use super::{Pair, PairStore, Thresholds};
use crate::error::Result;
use crate::formats::{FileEntry, FileType};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use xxhash_rust::xxh3::xxh3_64;

/// Which files the line source looks at, and its threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineSource {
    /// Text files of at most this many bytes (0: none).
    pub max_size: u64,
    /// Also translation catalogs (`.po`, `.pot`), whatever their size.
    pub catalogs: bool,
    /// Keep a pair when its line overlap reaches this (percent of the file
    /// the analysis thresholds name, and their `min_bytes`).
    pub thresholds: Thresholds,
}

/// What the line source did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LineStats {
    /// Distinct contents compared.
    pub contents: u64,
    /// Selected files left out (unreadable, or changed since chunking).
    pub unreadable: u64,
    /// Pairs kept by the line overlap (before merging with the chunk pairs).
    pub pairs: u64,
    /// Of those, pairs the chunk analysis had not kept.
    pub added: u64,
}

/// A distinct content: file id, size, (interned line, occurrences) sorted.
type Content = (u32, u64, Vec<(u32, u32)>);

/// A translation catalog, by its name.
pub fn is_catalog(path: &[u8]) -> bool {
    path.ends_with(b".po") || path.ends_with(b".pot")
}

fn selected(e: &FileEntry, src: &LineSource) -> bool {
    e.ftype == FileType::Text
        && e.size > 0
        && (e.size <= src.max_size || (src.catalogs && is_catalog(&e.path)))
}

/// The file's bytes, if it is still the file of the table (same size and
/// mtime, as fsim-verify checks).
fn read_unchanged(e: &FileEntry) -> Option<Vec<u8>> {
    let path = Path::new(OsStr::from_bytes(&e.path));
    let mut f = crate::io::longpath::open_file(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file()
        || meta.len() != e.size
        || meta.mtime() != e.mtime_s
        || meta.mtime_nsec() as u32 != e.mtime_ns
    {
        return None;
    }
    let mut data = Vec::with_capacity(e.size as usize);
    f.read_to_end(&mut data).ok()?;
    (data.len() as u64 == e.size).then_some(data)
}

/// Lines of `data` as (hash, length), up to and including `\n`.
fn lines(data: &[u8]) -> impl Iterator<Item = (u64, u32)> + '_ {
    data.split_inclusive(|&c| c == b'\n')
        .map(|l| (xxh3_64(l), l.len() as u32))
}

/// The pairs of the selected files whose line overlap reaches the
/// threshold, ids of the smallest file of each content, handed to `out`
/// (which sorts them, within its memory) in batches as the workers find
/// them: however many pairs there are, none is held here.
pub fn line_pairs(
    files: &[FileEntry],
    src: &LineSource,
    threads: usize,
    out: &mut PairStore,
) -> Result<LineStats> {
    let mut stats = LineStats::default();
    // One file per content: the smallest id.
    let mut first: HashMap<u128, usize> = HashMap::new();
    let mut reps: Vec<usize> = Vec::new();
    for (i, e) in files.iter().enumerate() {
        if selected(e, src) && !first.contains_key(&e.content) {
            first.insert(e.content, i);
            reps.push(i);
        }
    }
    reps.sort_by_key(|&i| files[i].id);
    // Read, intern the lines, count them per content.
    let mut intern: HashMap<u64, u32> = HashMap::new();
    let mut line_len: Vec<u32> = Vec::new();
    let mut contents: Vec<Content> = Vec::new();
    let mut counts: HashMap<u32, u32> = HashMap::new();
    for &i in &reps {
        let e = &files[i];
        let Some(data) = read_unchanged(e) else {
            stats.unreadable += 1;
            continue;
        };
        counts.clear();
        for (h, len) in lines(&data) {
            let next = line_len.len() as u32;
            let l = *intern.entry(h).or_insert(next);
            if l == next {
                line_len.push(len);
            }
            *counts.entry(l).or_insert(0) += 1;
        }
        let mut v: Vec<(u32, u32)> = counts.iter().map(|(&l, &c)| (l, c)).collect();
        v.sort_unstable();
        contents.push((e.id, e.size, v));
    }
    stats.contents = contents.len() as u64;
    // Postings: line -> (content index, count), content indexes increasing.
    let mut postings: Vec<Vec<(u32, u32)>> = vec![Vec::new(); line_len.len()];
    for (ci, (_, _, v)) in contents.iter().enumerate() {
        for &(l, c) in v {
            postings[l as usize].push((ci as u32, c));
        }
    }
    // Rows in blocks over `threads` workers; blocks put back in order.
    let n = contents.len();
    const BLOCK: usize = 64;
    let blocks = n.div_ceil(BLOCK);
    let next = AtomicUsize::new(0);
    let threads = threads.max(1).min(blocks.max(1));
    let found_pairs = AtomicUsize::new(0);
    let store = Mutex::new(out);
    std::thread::scope(|s| -> Result<()> {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<()> {
                    let mut acc = vec![0u64; n];
                    let mut touched: Vec<u32> = Vec::new();
                    let mut found = Vec::new();
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= blocks {
                            break;
                        }
                        for a in b * BLOCK..((b + 1) * BLOCK).min(n) {
                            let (ida, sa, ref la) = contents[a];
                            for &(l, ca) in la {
                                let post = &postings[l as usize];
                                let start = post.partition_point(|&(c, _)| c as usize <= a);
                                let len = line_len[l as usize] as u64;
                                for &(cb, nb) in &post[start..] {
                                    let slot = &mut acc[cb as usize];
                                    if *slot == 0 {
                                        touched.push(cb);
                                    }
                                    *slot += ca.min(nb) as u64 * len;
                                }
                            }
                            touched.sort_unstable();
                            for &cb in &touched {
                                let common = std::mem::take(&mut acc[cb as usize]);
                                let (idb, sb, _) = contents[cb as usize];
                                if src.thresholds.keep(common, sa, sb) {
                                    found.push(Pair {
                                        a: ida,
                                        b: idb,
                                        size_a: sa,
                                        size_b: sb,
                                        common: 0,
                                        shared: 0,
                                    });
                                }
                            }
                            touched.clear();
                        }
                        if found.len() >= 1 << 14 {
                            found_pairs.fetch_add(found.len(), Ordering::Relaxed);
                            store.lock().expect("pair store lock").extend(&found)?;
                            found.clear();
                        }
                    }
                    found_pairs.fetch_add(found.len(), Ordering::Relaxed);
                    store.lock().expect("pair store lock").extend(&found)
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("line source worker panicked"))
    })?;
    stats.pairs = found_pairs.into_inner() as u64;
    Ok(stats)
}

/// The pairs in (a, b) order with one line per pair: a pair that both
/// sources found keeps its chunk figures. The line source's copy has
/// common = shared = 0, so it sorts just before the chunks' copy, which
/// replaces it.
pub fn keep_chunk_figures<I: Iterator<Item = Result<Pair>>>(
    sorted: I,
) -> impl Iterator<Item = Result<Pair>> {
    let mut it = sorted.peekable();
    std::iter::from_fn(move || {
        let mut p = match it.next()? {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        while let Some(Ok(q)) = it.peek() {
            if (q.a, q.b) != (p.a, p.b) {
                break;
            }
            p = *q;
            it.next();
        }
        Some(Ok(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: u32, b: u32, common: u64) -> Pair {
        Pair {
            a,
            b,
            size_a: 10,
            size_b: 10,
            common,
            shared: u32::from(common > 0),
        }
    }

    #[test]
    fn merge_keeps_chunk_figures_and_order() {
        let mut store = crate::stages::analyze::PairStore::new(1 << 20, None);
        for p in [pair(0, 2, 7), pair(1, 3, 5)] {
            store.push(p).unwrap();
        }
        store
            .extend(&[pair(0, 1, 0), pair(0, 2, 0), pair(2, 3, 0)])
            .unwrap();
        let c: Vec<Pair> = keep_chunk_figures(store.finish().unwrap())
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            c,
            vec![pair(0, 1, 0), pair(0, 2, 7), pair(1, 3, 5), pair(2, 3, 0)]
        );
    }

    #[test]
    fn catalogs_by_name() {
        assert!(is_catalog(b"locale/fr/LC_MESSAGES/django.po"));
        assert!(is_catalog(b"messages.pot"));
        assert!(!is_catalog(b"django.mo"));
        assert!(!is_catalog(b"report.pdf"));
    }

    #[test]
    fn lines_keep_their_newline() {
        let v: Vec<u32> = lines(b"ab\n\ncd").map(|(_, n)| n).collect();
        assert_eq!(v, vec![3, 1, 2]);
    }
}
