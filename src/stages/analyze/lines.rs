//! A second candidate source: pairs of small text files, and of
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
//! The same bound cuts the pairs at the threshold fsim-verify keeps pairs
//! from ([`LineSource::verify_floor`]): a pair whose overlap is under it
//! cannot reach it, and would cost fsim-verify two files read for nothing
//! (on a source tree with translation catalogs, five candidates in six).
//! Long lines (over fsim-verify's [`LONG_LINE`](crate::stages::verify::LONG_LINE): one-line XML, minified
//! code, single-line JSON) are cut into the pieces fsim-verify compares
//! ([`for_each_line_token`]), so the overlap bounds its figure for them
//! too, and two versions of a one-line file share most of their pieces
//! where they share no line.
//!
//! A pair found here and not by the chunks is written with `common` = 0 and
//! `shared` = 0 (no chunk evidence: without verification it reports
//! nothing); fsim-verify gives it its exact figure. Pairs the chunks found
//! keep their chunk figures. The files must be reachable (as for
//! fsim-verify); a file that cannot be read, or whose size changed since
//! chunking, is left out of this source (fsim-verify warns about it).
//!
//! Cost: reading the selected files once (`-j` threads read and hash the
//! files of a window of 256 files or 4 MiB; their lines are interned in
//! the files' order), and per line shared by `d` contents `d²/2` additions (one row
//! of the contents after `a` at a time, with a dense accumulator, `-j`
//! threads over the rows). Memory: the hashed lines of one window, the line
//! postings (8 bytes per distinct line of a content, twice: each content's
//! list and the line's) and the line table (~40 bytes per distinct line),
//! within three quarters of `--capacity` (the bins are done by then): when
//! they would not fit, the lines are split by hash into passes that each
//! fit ([`line_pairs`]); plus one accumulator per thread (8 bytes per
//! selected content). The pairs go to the analysis's pair store as they
//! are found, which spills them beyond its quarter of `--capacity`.

use super::{Pair, PairStore, Thresholds};
use crate::error::Result;
use crate::formats::{percent, FileEntry, FileType, ViewKind};
use crate::io::hashing::MixedMap;
use crate::stages::verify::for_each_line_token;
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
    /// The threshold fsim-verify keeps pairs from (percent; 0: none): a
    /// pair whose overlap, an upper bound of fsim-verify's figure, is under
    /// it as a percentage of the smaller file is not a candidate
    /// ([`reaches`]).
    pub verify_floor: f64,
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
    /// Passes over the lines (more than 1 when they were over the memory).
    pub passes: u64,
}

/// A distinct content: file id, size, (interned line, occurrences) sorted.
type Content = (u32, u64, Vec<(u32, u32)>);

/// One pass's contents, the length of each interned line, and the files
/// left out.
type PassLines = (Vec<Content>, Vec<u32>, u64);

/// A translation catalog: a source catalog by its name (`.po`, `.pot`), a
/// compiled one (`.mo`) by its bytes, read as its messages (its view).
pub fn is_catalog(e: &FileEntry) -> bool {
    e.path.ends_with(b".po") || e.path.ends_with(b".pot") || e.view.kind == ViewKind::Mo
}

fn selected(e: &FileEntry, src: &LineSource) -> bool {
    e.ftype == FileType::Text
        && e.size > 0
        && (e.size <= src.max_size || (src.catalogs && is_catalog(e)))
}

/// The file's bytes, if it is still the file of the table (same size and
/// mtime, as fsim-verify checks): the content view it was chunked from, if
/// any (one per thread, at most the default 64 MiB, as fsim-chunk reads).
fn read_unchanged(e: &FileEntry) -> Option<Vec<u8>> {
    if !e.view.is_raw() || e.view.is_member() {
        return crate::content::entry_view(e, &crate::content::Limits::default()).ok();
    }
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

/// Lines of `data` as (hash, length), up to and including `\n`, long
/// lines cut into fsim-verify's pieces.
fn lines(data: &[u8]) -> Vec<(u64, u32)> {
    let mut v = Vec::new();
    for_each_line_token(data, |s, e| v.push((xxh3_64(&data[s..e]), (e - s) as u32)));
    v
}

/// Bytes the line source holds per (content, distinct line): its entry in
/// the content's list and in the line's postings (8 + 8), and the line's
/// share of the intern table, length and postings header (~40, counted
/// per entry: a line has at least one).
const BYTES_PER_ENTRY: u64 = 56;

/// The pairs of the selected files whose line overlap reaches the
/// threshold, ids of the smallest file of each content, handed to `out`
/// (which sorts them, within its memory) in batches as the workers find
/// them: however many pairs there are, none is held here.
///
/// Memory: at most `memory` for the lines (besides one accumulator of 8
/// bytes per content per thread). When the lines of all contents do not fit
/// ([`BYTES_PER_ENTRY`] per distinct line of a content), the lines are
/// split by hash into P passes, each reading the files again and keeping
/// the lines of its share; a pair is kept when its overlap in one pass
/// reaches 1/P of the threshold. A pair whose whole overlap reaches the
/// threshold reaches 1/P of it in at least one pass, so none is lost; the
/// extra candidates cost fsim-verify a bound check each.
///
/// `only`: a re-run's changed files ([`super::Changed`]): only the pairs
/// with one of them are looked for (the others are in the earlier run's
/// verified pairs), so each row of an unchanged content is skipped, and a
/// changed content's row takes its partners on both sides.
pub fn line_pairs(
    files: &[FileEntry],
    src: &LineSource,
    threads: usize,
    memory: u64,
    only: Option<&super::Changed>,
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
    drop(first);
    reps.sort_by_key(|&i| files[i].id);
    let store = Mutex::new(out);
    let mut passes = 1u64;
    let mut pass = 0u64;
    while pass < passes {
        let read = read_lines(files, &reps, threads, passes, pass, memory)?;
        let Some((contents, line_len, unreadable)) = read else {
            // Over the budget in one pass: count the entries, then split.
            let entries = count_entries(files, &reps)?;
            passes = (entries * BYTES_PER_ENTRY).div_ceil(memory.max(1)).max(2);
            pass = 0;
            continue;
        };
        if pass == 0 {
            stats.unreadable = unreadable;
            stats.contents = contents.len() as u64;
        }
        let changed: Option<Vec<bool>> =
            only.map(|c| contents.iter().map(|&(id, ..)| c.any(id, id)).collect());
        let rows = Rows {
            src,
            passes,
            changed: changed.as_deref(),
        };
        stats.pairs += compare(&contents, &line_len, &rows, threads, &store)?;
        pass += 1;
    }
    stats.passes = passes;
    Ok(stats)
}

/// One file's lines of a pass as a worker reads them: (hash, length,
/// occurrences) sorted by hash; `None` when unreadable or changed.
type FileLines = Option<Vec<(u64, u32, u32)>>;

/// Files read at once by the workers of [`read_lines`]: their hashed
/// lines (16 bytes per distinct line of a file) are held until interned,
/// so a window is bounded by a count and by the bytes of its files,
/// whichever comes first (one file alone may exceed the bytes).
const WINDOW: usize = 256;

/// The bytes of the files of one window (see [`WINDOW`]): at most 16
/// bytes held per line of at least 2 bytes, so at most 32 MiB of hashed
/// lines, and a few MiB on real texts.
const WINDOW_BYTES: u64 = 4 << 20;

/// `reps` cut in windows of at most [`WINDOW`] files and, unless one file
/// alone exceeds it, [`WINDOW_BYTES`] of them, in their order.
fn windows<'a>(files: &'a [FileEntry], reps: &'a [usize]) -> impl Iterator<Item = &'a [usize]> {
    let mut rest = reps;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0u64;
        let n = rest
            .iter()
            .take(WINDOW)
            .take_while(|&&i| {
                bytes += files[i].size;
                bytes <= WINDOW_BYTES
            })
            .count()
            .max(1);
        let (window, next) = rest.split_at(n);
        rest = next;
        Some(window)
    })
}

/// The lines of `e` whose hash is `pass` modulo `passes`, counted.
fn file_lines(e: &FileEntry, passes: u64, pass: u64) -> FileLines {
    let data = read_unchanged(e)?;
    let mut v: Vec<(u64, u32, u32)> = lines(&data)
        .into_iter()
        .filter_map(|(h, len)| (h % passes == pass).then_some((h, len, 1)))
        .collect();
    v.sort_unstable_by_key(|&(h, _, _)| h);
    v.dedup_by(|line, kept| {
        let same = line.0 == kept.0;
        kept.2 += u32::from(same);
        same
    });
    Some(v)
}

/// [`file_lines`] of `reps`, in their order, over `threads` workers (file
/// `i` of the window by worker `i % threads`: catalogs and small files
/// spread over them).
fn window_lines(
    files: &[FileEntry],
    reps: &[usize],
    threads: usize,
    passes: u64,
    pass: u64,
) -> Vec<FileLines> {
    let threads = threads.clamp(1, reps.len().max(1));
    if threads == 1 {
        return reps
            .iter()
            .map(|&i| file_lines(&files[i], passes, pass))
            .collect();
    }
    let mut parts: Vec<Vec<FileLines>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    reps.iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|&i| file_lines(&files[i], passes, pass))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("line source reader panicked"))
            .collect()
    });
    let mut iters: Vec<_> = parts.iter_mut().map(|p| p.drain(..)).collect();
    (0..reps.len())
        .map(|k| iters[k % threads].next().expect("one result a file"))
        .collect()
}

/// Lines of the selected files as (interned line, occurrences) per
/// content, and each interned line's length, keeping only the lines whose
/// hash is `pass` modulo `passes`; `None` when one pass would hold more
/// than `memory`. Also the number of files left out (unreadable or
/// changed). The files are read and their lines hashed and counted by
/// `threads` workers, a window at a time; the lines are interned here, in
/// the files' order.
fn read_lines(
    files: &[FileEntry],
    reps: &[usize],
    threads: usize,
    passes: u64,
    pass: u64,
    memory: u64,
) -> Result<Option<PassLines>> {
    let mut intern: MixedMap<u64, u32> = MixedMap::default();
    let mut line_len: Vec<u32> = Vec::new();
    let mut contents: Vec<Content> = Vec::new();
    let (mut unreadable, mut entries) = (0u64, 0u64);
    for window in windows(files, reps) {
        let read = window_lines(files, window, threads, passes, pass);
        for (&i, lines) in window.iter().zip(read) {
            let e = &files[i];
            let Some(lines) = lines else {
                unreadable += 1;
                continue;
            };
            let mut v: Vec<(u32, u32)> = lines
                .iter()
                .map(|&(h, len, count)| {
                    let next = line_len.len() as u32;
                    let l = *intern.entry(h).or_insert(next);
                    if l == next {
                        line_len.push(len);
                    }
                    (l, count)
                })
                .collect();
            v.sort_unstable();
            entries += v.len() as u64;
            if passes == 1 && entries * BYTES_PER_ENTRY > memory {
                return Ok(None);
            }
            contents.push((e.id, e.size, v));
        }
    }
    Ok(Some((contents, line_len, unreadable)))
}

/// (content, distinct line) entries of the selected files, each read once
/// more, holding one file's lines at a time.
fn count_entries(files: &[FileEntry], reps: &[usize]) -> Result<u64> {
    let mut seen: std::collections::HashSet<u64> = Default::default();
    let mut entries = 0u64;
    for &i in reps {
        if let Some(data) = read_unchanged(&files[i]) {
            seen.clear();
            seen.extend(lines(&data).into_iter().map(|(h, _)| h));
            entries += seen.len() as u64;
        }
    }
    Ok(entries)
}

/// Every two contents sharing a line (of this pass): their overlap, and
/// the pair handed to `store` when `passes` times it reaches the
/// threshold. Returns the pairs kept.
/// What [`compare`] keeps of each row.
struct Rows<'a> {
    src: &'a LineSource,
    /// Passes over the lines (a pass sees a share of each pair's lines).
    passes: u64,
    /// A re-run's changed contents (by content index), when only their
    /// pairs are wanted.
    changed: Option<&'a [bool]>,
}

impl Rows<'_> {
    /// The partners of content `a` its row takes from a line's postings:
    /// those after it; in a re-run, none for an unchanged `a`, and for a
    /// changed one also those before it that did not change (whose rows
    /// are skipped).
    #[inline]
    fn partners<'p>(&self, a: usize, post: &'p [(u32, u32)]) -> &'p [(u32, u32)] {
        match self.changed {
            None => &post[post.partition_point(|&(c, _)| c as usize <= a)..],
            Some(ch) if ch[a] => post,
            Some(_) => &[],
        }
    }

    /// Whether the row of `a` counts partner `b` (itself, or a changed
    /// content before it, whose own row has the pair, do not).
    #[inline]
    fn counts(&self, a: usize, b: usize) -> bool {
        match self.changed {
            None => true,
            Some(ch) => b > a || (b < a && !ch[b]),
        }
    }
}

fn compare(
    contents: &[Content],
    line_len: &[u32],
    rows: &Rows,
    threads: usize,
    store: &Mutex<&mut PairStore>,
) -> Result<u64> {
    let (src, passes) = (rows.src, rows.passes);
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
                                let post = rows.partners(a, &postings[l as usize]);
                                let len = line_len[l as usize] as u64;
                                for &(cb, nb) in post {
                                    if rows.changed.is_some() && !rows.counts(a, cb as usize) {
                                        continue;
                                    }
                                    let slot = &mut acc[cb as usize];
                                    if *slot == 0 {
                                        touched.push(cb);
                                    }
                                    *slot += ca.min(nb) as u64 * len;
                                }
                            }
                            // In the order first touched: the pair store
                            // sorts the pairs.
                            for &cb in &touched {
                                let common = std::mem::take(&mut acc[cb as usize]);
                                let (idb, sb, _) = contents[cb as usize];
                                let most = common.saturating_mul(passes);
                                if src.thresholds.keep(most, sa, sb)
                                    && reaches(most, sa, sb, src.verify_floor)
                                {
                                    // Lower id first (a re-run's row also
                                    // takes partners before it).
                                    let ((a, size_a), (b, size_b)) = if ida < idb {
                                        ((ida, sa), (idb, sb))
                                    } else {
                                        ((idb, sb), (ida, sa))
                                    };
                                    found.push(Pair {
                                        a,
                                        b,
                                        size_a,
                                        size_b,
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
    Ok(found_pairs.into_inner() as u64)
}

/// Whether a pair whose line overlap is `most` bytes can reach fsim-verify's
/// threshold `floor`: fsim-verify drops a pair whose figure is under
/// `floor` % of the file its `--percent-of` names, and the figure is at
/// most the overlap. Measured against the smaller file, the largest
/// percentage either setting gives, and with fsim-verify's own
/// [`percent`], so a pair it would keep is never left out.
fn reaches(most: u64, size_a: u64, size_b: u64, floor: f64) -> bool {
    floor <= 0.0 || percent(most, size_a.min(size_b)) >= floor
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
    use crate::stages::verify::LONG_LINE;

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

    /// Catalog-like files (the same msgids, msgstrs of their own): split
    /// into passes by a small budget, the line source keeps every pair it
    /// keeps in one pass (and may add candidates for fsim-verify).
    #[test]
    fn passes_within_memory_lose_no_pair() {
        let t = tempfile::tempdir().unwrap();
        let texts: Vec<Vec<u8>> = (0..12u32)
            .map(|f| {
                let mut text = String::new();
                for m in 0..200 {
                    text.push_str(&format!("msgid \"message {m}\"\n"));
                    // Files 0-5 share their translations, 6-11 have their own.
                    let lang = if f < 6 { 0 } else { f };
                    text.push_str(&format!("msgstr \"traduction {m} {lang}\"\n\n"));
                }
                text.into_bytes()
            })
            .collect();
        let files = table(t.path(), "po", &texts);
        let src = LineSource {
            max_size: 0,
            catalogs: true,
            thresholds: Thresholds {
                min_bytes: 0,
                min_percent: 60.0,
                percent_of: crate::formats::PercentOf::Smaller,
            },
            verify_floor: 0.0,
        };
        let run = |memory: u64| {
            let mut store = crate::stages::analyze::PairStore::new(1 << 20, None);
            let st = line_pairs(&files, &src, 2, memory, None, &mut store).unwrap();
            let pairs: Vec<(u32, u32)> = keep_chunk_figures(store.finish().unwrap())
                .map(|p| p.map(|p| (p.a, p.b)).unwrap())
                .collect();
            (st, pairs)
        };
        let (one, all) = run(1 << 30);
        // The 15 pairs among files 0-5 share all their lines; msgids alone
        // are under 60 %.
        let want: Vec<(u32, u32)> = (0..6u32)
            .flat_map(|a| (a + 1..6).map(move |b| (a, b)))
            .collect();
        assert_eq!(all, want);
        assert_eq!((one.contents, one.passes), (12, 1));
        // ~400 distinct lines a file: 12 × 400 × 56 bytes need 5 passes in
        // 64 KiB.
        let (split, some) = run(64 << 10);
        assert_eq!((split.contents, split.passes), (12, 5));
        assert!(want.iter().all(|p| some.contains(p)), "{some:?}");
    }

    /// Files `fNN.EXT` written to a temporary folder, as the file table
    /// has them.
    fn table(dir: &Path, ext: &str, texts: &[Vec<u8>]) -> Vec<FileEntry> {
        use std::os::unix::fs::MetadataExt;
        texts
            .iter()
            .enumerate()
            .map(|(f, text)| {
                let path = dir.join(format!("f{f:02}.{ext}"));
                std::fs::write(&path, text).unwrap();
                let m = std::fs::metadata(&path).unwrap();
                FileEntry {
                    id: f as u32,
                    size: m.len(),
                    mtime_s: m.mtime(),
                    mtime_ns: m.mtime_nsec() as u32,
                    content: f as u128 + 1,
                    ftype: FileType::Text,
                    view: crate::formats::FileView::raw(m.len()),
                    path: path.as_os_str().as_encoded_bytes().to_vec(),
                }
            })
            .collect()
    }

    /// The pairs `src` keeps of `files`, in one pass.
    #[test]
    fn workers_read_the_files_in_their_order_and_count_each_line() {
        let t = tempfile::tempdir().unwrap();
        let texts: Vec<Vec<u8>> = (0..11)
            .map(|f| format!("same\nline {f}\nsame\n{}", "x\n".repeat(f)).into_bytes())
            .collect();
        let mut files = table(t.path(), "txt", &texts);
        // A changed file is left out in its place.
        files[4].size += 1;
        let reps: Vec<usize> = (0..files.len()).collect();
        let one = window_lines(&files, &reps, 1, 1, 0);
        assert!(one[4].is_none() && one.iter().filter(|l| l.is_none()).count() == 1);
        let lines = one[7].clone().unwrap();
        let counts: Vec<u32> = lines.iter().map(|&(_, _, c)| c).collect();
        assert_eq!(counts.iter().sum::<u32>(), 10, "3 lines and 7 of x");
        assert_eq!(counts.len(), 3, "same, line 7, x");
        for threads in [2, 3, 16] {
            assert_eq!(window_lines(&files, &reps, threads, 1, 0), one, "{threads}");
        }
    }

    /// A window closes at 256 files or at 4 MiB of them, and a file
    /// larger than that is a window alone: every file once, in order.
    #[test]
    fn windows_are_bounded_by_files_and_by_bytes() {
        let t = tempfile::tempdir().unwrap();
        let mut files = table(t.path(), "txt", &vec![b"x\n".to_vec(); 600]);
        for (i, e) in files.iter_mut().enumerate() {
            e.size = match i {
                0..=299 => 10,
                300 => 9 << 20,
                _ => 1 << 20,
            };
        }
        let reps: Vec<usize> = (0..files.len()).collect();
        let sizes: Vec<usize> = windows(&files, &reps).map(|w| w.len()).collect();
        assert_eq!(&sizes[..4], &[256, 44, 1, 4]);
        assert_eq!(sizes.iter().sum::<usize>(), 600);
        let order: Vec<usize> = windows(&files, &reps).flatten().copied().collect();
        assert_eq!(order, reps);
    }

    fn kept(files: &[FileEntry], src: &LineSource) -> Vec<(u32, u32)> {
        kept_with(files, src, None, 1 << 30)
    }

    fn kept_with(
        files: &[FileEntry],
        src: &LineSource,
        only: Option<&super::super::Changed>,
        memory: u64,
    ) -> Vec<(u32, u32)> {
        let mut store = crate::stages::analyze::PairStore::new(1 << 20, None);
        line_pairs(files, src, 2, memory, only, &mut store).unwrap();
        keep_chunk_figures(store.finish().unwrap())
            .map(|p| p.map(|p| (p.a, p.b)).unwrap())
            .collect()
    }

    /// A re-run's line source (`only`: the changed files) finds exactly
    /// the pairs with a changed file that a full run finds, whichever files
    /// changed (first, last, neighbours, none, all), in one pass or many.
    #[test]
    fn a_rerun_finds_the_pairs_of_its_changed_files_and_no_other() {
        let t = tempfile::tempdir().unwrap();
        // Every file shares lines with several others: 40 lines from a
        // pool of 60, drawn by the file's number.
        let texts: Vec<Vec<u8>> = (0..14u64)
            .map(|f| {
                (0..40u64)
                    .map(|i| format!("pool line {:03}\n", (i * (f % 5 + 1) + f) % 60))
                    .collect::<String>()
                    .into_bytes()
            })
            .collect();
        let files = table(t.path(), "txt", &texts);
        let src = LineSource {
            max_size: 1 << 20,
            catalogs: false,
            thresholds: Thresholds {
                min_bytes: 0,
                min_percent: 20.0,
                percent_of: crate::formats::PercentOf::Smaller,
            },
            verify_floor: 0.0,
        };
        for memory in [1 << 30, 16 << 10] {
            let all = kept_with(&files, &src, None, memory);
            assert!(all.len() > 30, "{}", all.len());
            for changed in [vec![0], vec![13], vec![5, 6], vec![], (0..14).collect()] {
                let mut flags = vec![false; files.len()];
                changed.iter().for_each(|&f| flags[f] = true);
                let c = super::super::Changed {
                    count: changed.len() as u64,
                    flags,
                };
                let want: Vec<(u32, u32)> =
                    all.iter().copied().filter(|&(a, b)| c.any(a, b)).collect();
                let got = kept_with(&files, &src, Some(&c), memory);
                assert_eq!(got, want, "changed {changed:?}, memory {memory}");
            }
        }
    }

    /// A pair whose overlap is under fsim-verify's threshold is not a
    /// candidate (fsim-verify would drop it); long lines count by the
    /// pieces fsim-verify compares, so two versions of a one-line file
    /// are a candidate where their only lines differ.
    #[test]
    fn pairs_under_the_verify_threshold_are_cut_and_long_lines_count_by_pieces() {
        let t = tempfile::tempdir().unwrap();
        let shared: Vec<u8> = (0..100)
            .flat_map(|i| format!("shared line number {i:04}\n").into_bytes())
            .collect();
        let own = |tag: &str| -> Vec<u8> {
            (0..150)
                .flat_map(|i| format!("{tag} line of its own {i:04}\n").into_bytes())
                .collect()
        };
        // 40 % of each file in common.
        let a = [shared.clone(), own("first")].concat();
        let b = [shared.clone(), own("second")].concat();
        // One-line XML, one attribute changed.
        let xml = |v: &str| -> Vec<u8> {
            let mut l: Vec<u8> = (0..200)
                .flat_map(|i| {
                    format!("<e id=\"{i}\" k=\"{}\">text {i}</e>", i * 37 % 101).into_bytes()
                })
                .collect();
            l.splice(4000..4000, v.bytes());
            l
        };
        let files = table(t.path(), "txt", &[a, b, xml(" x=\"1\""), xml(" x=\"2\"")]);
        assert!(files[2].size as usize > LONG_LINE);
        let src = |cut: f64| LineSource {
            max_size: 1 << 20,
            catalogs: false,
            thresholds: Thresholds {
                min_bytes: 0,
                min_percent: 30.0,
                percent_of: crate::formats::PercentOf::Smaller,
            },
            verify_floor: cut,
        };
        let p01 = percent(shared.len() as u64, files[0].size.min(files[1].size));
        assert!((35.0..45.0).contains(&p01), "{p01}");
        assert_eq!(kept(&files, &src(0.0)), vec![(0, 1), (2, 3)]);
        // At the overlap: kept; just above: cut.
        assert_eq!(kept(&files, &src(p01)), vec![(0, 1), (2, 3)]);
        assert_eq!(kept(&files, &src(p01 + 0.1)), vec![(2, 3)]);
        assert_eq!(kept(&files, &src(98.0)), vec![(2, 3)]);
        assert_eq!(kept(&files, &src(100.0)), vec![]);
    }

    #[test]
    fn catalogs_by_name_or_compiled_by_their_bytes() {
        let entry = |path: &str, kind: ViewKind| FileEntry {
            id: 0,
            size: 10,
            mtime_s: 0,
            mtime_ns: 0,
            content: 1,
            ftype: FileType::Text,
            view: crate::formats::FileView {
                kind,
                ..crate::formats::FileView::raw(10)
            },
            path: path.as_bytes().to_vec(),
        };
        assert!(is_catalog(&entry(
            "locale/fr/LC_MESSAGES/django.po",
            ViewKind::Raw
        )));
        assert!(is_catalog(&entry("messages.pot", ViewKind::Raw)));
        assert!(is_catalog(&entry("django.mo.bak", ViewKind::Mo)));
        assert!(!is_catalog(&entry("django.mo", ViewKind::Raw)));
        assert!(!is_catalog(&entry("report.pdf", ViewKind::Pdf)));
    }

    #[test]
    fn lines_keep_their_newline() {
        let v: Vec<u32> = lines(b"ab\n\ncd").iter().map(|&(_, n)| n).collect();
        assert_eq!(v, vec![3, 1, 2]);
        let long = [vec![b'x'; LONG_LINE], b", y\n".to_vec()].concat();
        let v: Vec<u32> = lines(&long).iter().map(|&(_, n)| n).collect();
        assert!(v.len() > 1 && v.iter().sum::<u32>() as usize == long.len());
    }
}
