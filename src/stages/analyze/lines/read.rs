//! Reading the line source's files: each file's lines (fsim-verify's
//! tokens: lines up to and including `\n`, long lines cut into pieces) as
//! (xxh3-64 hash, length, occurrences), a raw file streamed a block at a
//! time, read by `-j` workers a window of files at a time.

use crate::formats::FileEntry;
use crate::stages::verify::for_each_line_token;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// One file's distinct lines as (hash, length, occurrences), sorted by
/// hash; `None` when unreadable or changed since chunking.
pub(super) type FileLines = Option<Vec<(u64, u32, u32)>>;

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

    fn finish(mut self) -> Vec<(u64, u32, u32)> {
        self.merge();
        self.v
    }

    /// The tokens of one line (or of the last one, without `\n`).
    fn line(&mut self, line: &[u8]) {
        for_each_line_token(line, |s, e| self.push(&line[s..e]));
    }
}

/// The lines of `e`, counted, if it is still the file of the table (same
/// size and mtime, as fsim-verify checks): the content view it was chunked
/// from, if any (one per thread, at most the default 64 MiB, as fsim-chunk
/// reads), else its bytes a [`BLOCK`] at a time.
pub(super) fn file_lines(e: &FileEntry) -> FileLines {
    file_lines_by(e, BLOCK)
}

pub(super) fn file_lines_by(e: &FileEntry, block: usize) -> FileLines {
    if !e.view.is_raw() || e.view.is_member() {
        let data = crate::content::entry_view(e, &crate::content::Limits::default()).ok()?;
        let mut c = Counted::default();
        for_each_line_token(&data, |s, e| c.push(&data[s..e]));
        return Some(c.finish());
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
    let mut c = Counted::default();
    let mut buf = vec![0u8; block.max(1)];
    // The start of a line that a block cut.
    let mut carry: Vec<u8> = Vec::new();
    let mut total = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        total += n as u64;
        let mut data = &buf[..n];
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
    }
    if !carry.is_empty() {
        c.line(&carry);
    }
    (total == e.size).then(|| c.finish())
}

/// `reps` cut in windows of at most [`WINDOW`] files and, unless one file
/// alone exceeds it, [`WINDOW_BYTES`] of them, in their order.
pub(super) fn windows<'a>(
    files: &'a [FileEntry],
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

/// [`file_lines`] of `reps`, in their order, over `threads` workers (file
/// `i` of the window by worker `i % threads`: catalogs and small files
/// spread over them).
pub(super) fn window_lines(files: &[FileEntry], reps: &[usize], threads: usize) -> Vec<FileLines> {
    let threads = threads.clamp(1, reps.len().max(1));
    if threads == 1 {
        return reps.iter().map(|&i| file_lines(&files[i])).collect();
    }
    let mut parts: Vec<Vec<FileLines>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    reps.iter()
                        .skip(t)
                        .step_by(threads)
                        .map(|&i| file_lines(&files[i]))
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
