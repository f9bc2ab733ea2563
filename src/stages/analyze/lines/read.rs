//! Reading the line source's files: each file's lines (fsim-verify's
//! tokens: lines up to and including `\n`, long lines cut into pieces) as
//! (xxh3-64 hash, length, occurrences), a raw file streamed a block at a
//! time, read by `-j` workers a window of files at a time, less what
//! [`super::exclude`] leaves out.

use super::cache::{key_of, Pass};
use super::exclude::Exclude;
use super::LineFiles;
use crate::formats::FileEntry;
use crate::stages::verify::for_each_line_token;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// One file's distinct lines as (hash, length, occurrences), sorted by
/// hash, and its size (its payload's with templates); `None` when
/// unreadable or changed since chunking.
pub(super) type FileLines = Option<Lines>;

/// A file's lines as the line source counts them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Lines {
    /// Bytes: the file's, or its payload's when templates are cut out.
    pub size: u64,
    /// Distinct lines (a page's theme lines left out), (hash, length,
    /// occurrences) by hash.
    pub lines: Vec<(u64, u32, u32)>,
}

impl Lines {
    pub fn len(&self) -> usize {
        self.lines.len()
    }
}

/// Bytes of a raw file read at a time: a file is never held whole, only
/// this block and the line it ends in.
const BLOCK: usize = 256 << 10;

/// Files read at once by the workers of [`window_lines`]: their hashed
/// lines (16 bytes per distinct line of a file) are held until used, so a
/// window is bounded by a count and by the bytes of its files, whichever
/// comes first (one file alone may exceed the bytes).
const WINDOW: usize = 256;

/// The bytes of the files of one window (see [`WINDOW`]): at most 16
/// bytes held per line of at least 2 bytes, so at most 32 MiB of hashed
/// lines, and a few MiB on real texts.
const WINDOW_BYTES: u64 = 4 << 20;

/// Lines of `data` as (hash, length), up to and including `\n`, long
/// lines cut into fsim-verify's pieces (the tests' reference).
#[cfg(test)]
pub(super) fn lines(data: &[u8]) -> Vec<(u64, u32)> {
    let mut v = Vec::new();
    for_each_line_token(data, |s, e| v.push((xxh3_64(&data[s..e]), (e - s) as u32)));
    v
}

/// The distinct lines of a file as they come, counted: sorted and merged
/// whenever the list doubles, so it holds at most about twice the file's
/// distinct lines, however many lines it has.
#[derive(Default)]
struct Counted {
    v: Vec<(u64, u32, u32)>,
    merged: usize,
}

impl Counted {
    #[inline]
    fn push(&mut self, line: &[u8]) {
        self.v.push((xxh3_64(line), line.len() as u32, 1));
        if self.v.len() >= (2 * self.merged).max(1 << 16) {
            self.merge();
        }
    }

    fn merge(&mut self) {
        self.v.sort_unstable_by_key(|&(h, _, _)| h);
        self.v.dedup_by(|line, kept| {
            let same = line.0 == kept.0;
            if same {
                kept.2 = kept.2.saturating_add(line.2);
            }
            same
        });
        self.merged = self.v.len();
    }

    fn finish(mut self, size: u64) -> Lines {
        self.merge();
        Lines {
            size,
            lines: self.v,
        }
    }

    /// The tokens of one line (or of the last one, without `\n`).
    fn line(&mut self, line: &[u8]) {
        for_each_line_token(line, |s, e| self.push(&line[s..e]));
    }
}

/// The lines of a site's theme left out of those of a page's content.
fn cut_theme(content: u128, lines: &mut Lines, ex: &Exclude) {
    if ex.cuts_theme_of(content) {
        lines.lines.retain(|l| !ex.is_theme(l.0));
    }
}

/// The lines of `e`, counted, if it is still the file of the table (same
/// size and mtime, as fsim-verify checks): the content view it was chunked
/// from, if any (one per thread, at most the default 64 MiB, as fsim-chunk
/// reads), else its bytes `block` bytes at a time; with templates, the
/// payload of the whole file. A site's theme is not cut (what a line sets
/// file keeps).
pub(super) fn file_lines_by(e: &FileEntry, block: usize, ex: &Exclude) -> FileLines {
    let viewed = !e.view.is_raw() || e.view.is_member();
    if viewed || ex.templates.is_some() {
        let data = if viewed {
            crate::content::entry_view(e, &crate::content::Limits::default()).ok()?
        } else {
            let mut data = Vec::with_capacity(e.size as usize);
            read_raw(e, BLOCK, |b| data.extend_from_slice(b))?;
            data
        };
        let payload;
        let data = match ex.templates {
            Some(t) => {
                let mut out = Vec::new();
                crate::chunking::reader::payload(&t.chunker, &t.set, &data, &mut out);
                payload = out;
                &payload
            }
            None => &data,
        };
        let mut c = Counted::default();
        for_each_line_token(data, |s, e| c.push(&data[s..e]));
        // The payload's size with templates (what the chunk pairs and
        // fsim-verify measure), else the file's, as the table says.
        let size = match ex.templates {
            Some(_) => data.len() as u64,
            None => e.size,
        };
        return Some(c.finish(size));
    }
    let mut c = Counted::default();
    // The start of a line that a block cut.
    let mut carry: Vec<u8> = Vec::new();
    read_raw(e, block, |mut data| {
        while let Some(nl) = memchr::memchr(b'\n', data) {
            if carry.is_empty() {
                c.line(&data[..=nl]);
            } else {
                carry.extend_from_slice(&data[..=nl]);
                c.line(&carry);
                carry.clear();
            }
            data = &data[nl + 1..];
        }
        carry.extend_from_slice(data);
    })?;
    if !carry.is_empty() {
        c.line(&carry);
    }
    Some(c.finish(e.size))
}

/// The bytes of the raw file `e`, `block` at a time, to `each`; `None`
/// when it cannot be read or is no longer the file of the table.
fn read_raw(e: &FileEntry, block: usize, mut each: impl FnMut(&[u8])) -> Option<()> {
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
    let mut buf = vec![0u8; block.max(1)];
    let mut total = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        total += n as u64;
        each(&buf[..n]);
    }
    (total == e.size).then_some(())
}

/// `reps` cut in windows of at most [`WINDOW`] files and, unless one file
/// alone exceeds it, [`WINDOW_BYTES`] of them, in their order.
pub(super) fn windows<'a>(
    files: &'a LineFiles,
    reps: &'a [usize],
) -> impl Iterator<Item = &'a [usize]> {
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
                bytes += files.size(i);
                bytes <= WINDOW_BYTES
            })
            .count()
            .max(1);
        let (window, next) = rest.split_at(n);
        rest = next;
        Some(window)
    })
}

/// The lines of `reps` ([`file_lines_by`], a [`BLOCK`] at a time, less a
/// site's theme), in their order, over `threads` workers (file
/// `i` of the window by worker `i % threads`: catalogs and small files
/// spread over them); with `pass`, the earlier run's lines of the
/// contents it holds taken instead of reading them, and each content's
/// lines kept for the next run ([`super::cache`]).
pub(super) fn window_lines(
    files: &LineFiles,
    reps: &[usize],
    threads: usize,
    ex: &Exclude,
    pass: &mut Pass,
) -> Vec<FileLines> {
    let mut got: Vec<FileLines> = vec![None; reps.len()];
    let mut missed: Vec<usize> = Vec::with_capacity(reps.len());
    // The keys, found once a window when the pass takes or keeps sets.
    let keys: Vec<_> = match pass.cursor.is_some() || pass.keep.is_some() {
        true => reps.iter().map(|&i| key_of(files, i)).collect(),
        false => Vec::new(),
    };
    for (k, key) in keys.iter().enumerate() {
        match pass.cursor.as_mut().and_then(|c| c.take(key)) {
            Some(lines) => {
                pass.taken += 1;
                got[k] = Some(lines);
            }
            None => missed.push(k),
        }
    }
    if keys.is_empty() {
        missed.extend(0..reps.len());
    }
    pass.read += missed.len() as u64;
    let read = read_lines(files, reps, &missed, threads, ex);
    for (k, lines) in missed.into_iter().zip(read) {
        got[k] = lines;
    }
    for (k, (lines, &i)) in got.iter_mut().zip(reps).enumerate() {
        if let Some(l) = lines {
            if let Some(keep) = pass.keep.as_mut() {
                keep.push(&keys[k], l);
            }
            cut_theme(files.content(i), l, ex);
        }
    }
    got
}

/// Every line of the contents `changed` (rows of the file table), read
/// now as the pass would read them, for a re-run's join to intern only
/// those of the other contents ([`super::Filter`]); `None` when one of
/// them cannot be read (the pass may yet take it from the earlier sets)
/// or the set takes more than `cap` bytes.
pub(super) fn changed_lines(
    files: &LineFiles,
    changed: &[usize],
    threads: usize,
    ex: &Exclude,
    cap: u64,
) -> Option<crate::io::hashing::MixedSet<u64>> {
    let mut set = crate::io::hashing::MixedSet::default();
    for window in windows(files, changed) {
        let all: Vec<usize> = (0..window.len()).collect();
        for (&i, lines) in window
            .iter()
            .zip(read_lines(files, window, &all, threads, ex))
        {
            let mut lines = lines?;
            cut_theme(files.content(i), &mut lines, ex);
            set.extend(lines.lines.iter().map(|l| l.0));
            if super::Filter::bytes(&set) > cap {
                return None;
            }
        }
    }
    Some(set)
}

/// The lines of the files `reps[k]` for each `k` of `which`, as the files
/// give them, in that order, over `threads` workers.
fn read_lines(
    files: &LineFiles,
    reps: &[usize],
    which: &[usize],
    threads: usize,
    ex: &Exclude,
) -> Vec<FileLines> {
    let one = |k: &usize| file_lines_by(&files.entry(reps[*k]), BLOCK, ex);
    let threads = threads.clamp(1, which.len().max(1));
    if threads == 1 {
        return which.iter().map(one).collect();
    }
    let mut parts: Vec<Vec<FileLines>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    which
                        .iter()
                        .skip(t)
                        .step_by(threads)
                        .map(one)
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
    (0..which.len())
        .map(|k| iters[k % threads].next().expect("one result a file"))
        .collect()
}
