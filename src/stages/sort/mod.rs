//! `fsim-sort`: external sort of chunk records by hash (paper 2.5 step 2),
//! byte-identical to `LC_ALL=C sort`, in bounded memory.
//!
//! The text is parsed once into 24-byte binary records ([`ChunkKey`]) with a
//! table-driven hex parser, sorted in memory in runs that fill the
//! `--memory` budget (the halves on separate threads, merged on the fly, so
//! parallelism costs no extra memory), spilled as binary runs into a private
//! temp dir, then k-way merged with bounded fan-in and formatted back to
//! text only once. Text conversion costs more than the sort (NOTES.md), so
//! both directions avoid allocation and `fmt`.
//!
//! The generic part, [`ExternalSorter`] over any [`FixedRecord`], is meant
//! for reuse (e.g. `fsim-analyze` sorting [`PairRecord`]s out of core):
//!
//! ```
//! use fsim::stages::sort::{ExternalSorter, PairRecord, SortOptions};
//! let mut s = ExternalSorter::<PairRecord>::new(SortOptions::with_memory(64 << 20));
//! s.push(PairRecord { a: 2, b: 1, bytes: 10 }).unwrap();
//! s.push(PairRecord { a: 1, b: 5, bytes: 20 }).unwrap();
//! let out: Vec<PairRecord> = s.finish().unwrap().collect::<fsim::Result<_>>().unwrap();
//! assert_eq!(out[0].a, 1);
//! ```
//!
//! With `--resume-dir`, runs are kept (fsynced) in that directory with a
//! journal instead, so that a killed sort continues after its last finished
//! run ([`crate::stages::sort::resume`]).
//!
//! Memory: `--memory` bounds the record buffer (and, while merging, the run
//! read buffers); fixed I/O buffers of about 3 MiB come on top. Disk: one
//! binary copy of the input (24 bytes per record, less than half the text).

pub mod keys;
pub mod resume;

pub use keys::{
    cmp_decimal_strings, format_chunk_line, parse_chunk_line, ChunkKey, FixedRecord, PairRecord,
    MAX_CHUNK_LINE,
};

use crate::error::{Context, Error, Result};
use crate::formats::open_input;
use crate::formats::{classify_line, ChunkRecord, Digest, InputCheck, Kind, Line};
use crate::io::Output;
use crate::stages::sort::resume::{Journal, Position};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

// ---------------------------------------------------------------------------
// The external sorter
// ---------------------------------------------------------------------------

/// Smallest accepted memory budget. Tiny budgets exist to force the on-disk
/// path in tests (4 KiB = 170 chunk records per run).
pub const MIN_MEMORY: u64 = 4 << 10;

/// Default bound on the number of runs merged at once (open files).
pub const DEFAULT_FAN_IN: usize = 64;

/// Options of an [`ExternalSorter`].
#[derive(Debug, Clone)]
pub struct SortOptions {
    /// Bytes for the in-memory record buffer (and for merge buffers later).
    pub memory: u64,
    /// Parent of the private temp dir; `None` = `$TMPDIR` or /tmp.
    pub tmpdir: Option<PathBuf>,
    /// Threads sorting a run (each sorts one part; parts are merged as the
    /// run is written, so this costs no extra memory).
    pub threads: usize,
    /// Maximum runs merged at once; more runs are merged in several passes.
    pub fan_in: usize,
}

impl SortOptions {
    pub fn with_memory(memory: u64) -> Self {
        SortOptions {
            memory,
            tmpdir: None,
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            fan_in: DEFAULT_FAN_IN,
        }
    }
}

/// Sorts any number of [`FixedRecord`]s in bounded memory.
///
/// `push` items in any order, then `finish` returns them sorted. Items are
/// kept in memory until the budget is full; then the buffer is sorted and
/// written as a binary run to a private temp dir (created on first spill
/// under [`SortOptions::tmpdir`], removed when the sorter or the returned
/// [`Sorted`] is dropped). If nothing was spilled, `finish` spills nothing.
///
/// [`ExternalSorter::keep_runs_in`] instead keeps the runs in a given
/// directory, fsynced, so that a caller that journals them (`fsim-sort
/// --resume-dir`, [`crate::stages::sort::resume`]) can continue after a kill.
pub struct ExternalSorter<T: FixedRecord> {
    opts: SortOptions,
    cap: usize,
    buf: Vec<T>,
    dir: RunDir,
    /// Finished runs: path and number of items.
    runs: Vec<(PathBuf, u64)>,
    next_run: usize,
    spilled: usize,
    pushed: u64,
}

/// Where runs go.
enum RunDir {
    /// A private temp dir, created on the first spill, removed on drop.
    Temp(Option<tempfile::TempDir>),
    /// A directory the caller owns: runs are fsynced and left there.
    Kept(PathBuf),
}

impl<T: FixedRecord> ExternalSorter<T> {
    pub fn new(mut opts: SortOptions) -> Self {
        opts.memory = opts.memory.max(MIN_MEMORY);
        opts.threads = opts.threads.max(1);
        opts.fan_in = opts.fan_in.max(2);
        let cap = ((opts.memory / std::mem::size_of::<T>().max(1) as u64) as usize).max(16);
        // Reserved, not touched: pages become resident only as records come.
        ExternalSorter {
            opts,
            cap,
            buf: Vec::new(),
            dir: RunDir::Temp(None),
            runs: Vec::new(),
            next_run: 0,
            spilled: 0,
            pushed: 0,
        }
    }

    /// A sorter whose runs are written (and fsynced) into `dir`, which the
    /// caller owns, starting with `runs` finished earlier (path, items):
    /// they count as pushed. New runs are numbered after the highest
    /// `run<N>.bin` among them, so a run written but never journaled is
    /// simply overwritten.
    pub fn keep_runs_in(opts: SortOptions, dir: PathBuf, runs: Vec<(PathBuf, u64)>) -> Self {
        let mut s = Self::new(opts);
        s.next_run = runs
            .iter()
            .filter_map(|(p, _)| run_number(p))
            .max()
            .unwrap_or(0);
        s.pushed = runs.iter().map(|r| r.1).sum();
        s.runs = runs;
        s.dir = RunDir::Kept(dir);
        s
    }

    /// True when the next [`ExternalSorter::push`] would sort and spill the
    /// buffer: a caller that journals its input position spills here
    /// itself ([`ExternalSorter::spill`]), where the position is known.
    #[inline]
    pub fn spill_due(&self) -> bool {
        self.buf.len() == self.buf.capacity() && self.buf.capacity() >= self.cap
    }

    /// Sort and write the buffer as a run now (nothing when it is empty).
    pub fn spill(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.spill_buffer()
    }

    /// The finished runs: path and number of items.
    pub fn runs(&self) -> &[(PathBuf, u64)] {
        &self.runs
    }

    /// Add one item; may sort and spill a run.
    #[inline]
    pub fn push(&mut self, item: T) -> Result<()> {
        if self.buf.len() == self.buf.capacity() {
            self.grow_or_spill()?;
        }
        self.buf.push(item);
        self.pushed += 1;
        Ok(())
    }

    /// Items pushed so far.
    pub fn len(&self) -> u64 {
        self.pushed
    }

    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// Runs written to disk so far (including merge passes' outputs).
    pub fn runs_spilled(&self) -> usize {
        self.spilled
    }

    #[cold]
    fn grow_or_spill(&mut self) -> Result<()> {
        if self.buf.capacity() < self.cap {
            // Reserve the whole budget once: untouched pages cost nothing,
            // and doubling would copy and briefly hold 1.5x the budget.
            self.buf.reserve_exact(self.cap - self.buf.len());
            return Ok(());
        }
        self.spill_buffer()
    }

    fn spill_buffer(&mut self) -> Result<()> {
        let parts = sort_parts(&mut self.buf, self.opts.threads);
        let path = self.new_run_path()?;
        let mut w = RunWriter::create(&path)?;
        let mut merge = SliceMerge::new(&self.buf, &parts);
        while let Some(x) = merge.next() {
            w.push(x)?;
        }
        w.finish(self.durable())?;
        self.runs.push((path, self.buf.len() as u64));
        self.spilled += 1;
        self.buf.clear();
        Ok(())
    }

    /// Runs are fsynced only when kept for a resume: a private temp dir
    /// dies with the process anyway.
    fn durable(&self) -> bool {
        matches!(self.dir, RunDir::Kept(_))
    }

    fn new_run_path(&mut self) -> Result<PathBuf> {
        if let RunDir::Temp(None) = self.dir {
            let parent = self.opts.tmpdir.clone().unwrap_or_else(std::env::temp_dir);
            let d = tempfile::Builder::new()
                .prefix("fsim-sort.")
                .tempdir_in(&parent)
                .ctx(|| {
                    format!(
                        "cannot create a temporary directory in {}",
                        parent.display()
                    )
                })?;
            self.dir = RunDir::Temp(Some(d));
        }
        let dir = match &self.dir {
            RunDir::Temp(d) => d.as_ref().expect("temp dir just created").path(),
            RunDir::Kept(d) => d.as_path(),
        };
        self.next_run += 1;
        Ok(dir.join(format!("run{:06}.bin", self.next_run)))
    }

    /// Sort what is left and return all items in order.
    pub fn finish(self) -> Result<Sorted<T>> {
        self.finish_with(|_| Ok(()))
    }

    /// [`ExternalSorter::finish`], calling `on_runs` with the list of
    /// finished runs each time it changes on disk: after the last buffer is
    /// spilled, and after each merge pass, before the runs it merged are
    /// removed (so a journal written there never names a removed run).
    pub fn finish_with(
        mut self,
        mut on_runs: impl FnMut(&[(PathBuf, u64)]) -> Result<()>,
    ) -> Result<Sorted<T>> {
        if self.runs.is_empty() {
            let parts = sort_parts(&mut self.buf, self.opts.threads);
            let pos = parts.iter().map(|p| p.0).collect();
            return Ok(Sorted {
                inner: SortedInner::Memory {
                    buf: std::mem::take(&mut self.buf),
                    parts,
                    pos,
                },
                spilled: 0,
                _dir: None,
            });
        }
        if !self.buf.is_empty() {
            self.spill_buffer()?;
        }
        on_runs(&self.runs)?;
        self.buf = Vec::new(); // give the budget to the merge buffers
        let block = self.read_block();
        while self.runs.len() > self.opts.fan_in {
            let group: Vec<(PathBuf, u64)> = self.runs.drain(..self.opts.fan_in).collect();
            let path = self.new_run_path()?;
            let mut merge = HeapMerge::<T>::open(&group, block)?;
            let mut w = RunWriter::create(&path)?;
            while let Some(x) = merge.next_item()? {
                w.push(x)?;
            }
            w.finish(self.durable())?;
            drop(merge);
            self.runs.push((path, group.iter().map(|r| r.1).sum()));
            self.spilled += 1;
            on_runs(&self.runs)?;
            for (p, _) in &group {
                std::fs::remove_file(p).ctx(|| format!("removing {}", p.display()))?;
            }
        }
        let merge = HeapMerge::open(&self.runs, block)?;
        let dir = match std::mem::replace(&mut self.dir, RunDir::Temp(None)) {
            RunDir::Temp(d) => d,
            RunDir::Kept(_) => None,
        };
        Ok(Sorted {
            inner: SortedInner::Disk(merge),
            spilled: self.spilled,
            _dir: dir,
        })
    }

    /// Read buffer per run while merging: the budget shared by the runs
    /// merged at once, within 4 KiB..1 MiB.
    fn read_block(&self) -> usize {
        let per = self.opts.memory as usize / (self.opts.fan_in + 1);
        let per = per.clamp(4 << 10, 1 << 20);
        (per / T::SIZE).max(1) * T::SIZE
    }
}

/// N of a run file named `run<N>.bin`.
fn run_number(p: &Path) -> Option<usize> {
    let name = p.file_name()?.to_str()?;
    name.strip_prefix("run")?.strip_suffix(".bin")?.parse().ok()
}

/// Sort `buf` in `threads` parts in parallel; returns the part ranges.
fn sort_parts<T: FixedRecord>(buf: &mut [T], threads: usize) -> Vec<(usize, usize)> {
    let n = buf.len();
    let threads = if n < 1 << 16 { 1 } else { threads };
    if threads <= 1 {
        buf.sort_unstable();
        return vec![(0, n)];
    }
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        for part in buf.chunks_mut(per) {
            s.spawn(move || part.sort_unstable());
        }
    });
    (0..n).step_by(per).map(|a| (a, (a + per).min(n))).collect()
}

/// Merge of a few sorted parts of one slice (one per sorting thread).
struct SliceMerge<'a, T> {
    buf: &'a [T],
    parts: &'a [(usize, usize)],
    pos: Vec<usize>,
}

impl<'a, T: FixedRecord> SliceMerge<'a, T> {
    fn new(buf: &'a [T], parts: &'a [(usize, usize)]) -> Self {
        SliceMerge {
            buf,
            parts,
            pos: parts.iter().map(|p| p.0).collect(),
        }
    }

    #[inline]
    fn next(&mut self) -> Option<T> {
        merge_step(self.buf, self.parts, &mut self.pos)
    }
}

/// One step of a linear-scan merge of `parts` (few parts: a scan beats a heap).
#[inline]
fn merge_step<T: FixedRecord>(buf: &[T], parts: &[(usize, usize)], pos: &mut [usize]) -> Option<T> {
    let mut best: Option<usize> = None;
    for (i, &(_, end)) in parts.iter().enumerate() {
        if pos[i] < end {
            best = match best {
                Some(b) if buf[pos[b]] <= buf[pos[i]] => Some(b),
                _ => Some(i),
            };
        }
    }
    let b = best?;
    let x = buf[pos[b]];
    pos[b] += 1;
    Some(x)
}

/// Writes a binary run.
struct RunWriter<T> {
    w: BufWriter<File>,
    scratch: Vec<u8>,
    path: PathBuf,
    _t: std::marker::PhantomData<T>,
}

impl<T: FixedRecord> RunWriter<T> {
    fn create(path: &Path) -> Result<Self> {
        let f = File::create(path).ctx(|| format!("cannot create sort run {}", path.display()))?;
        Ok(RunWriter {
            w: BufWriter::with_capacity(256 << 10, f),
            scratch: vec![0; T::SIZE],
            path: path.to_path_buf(),
            _t: Default::default(),
        })
    }

    #[inline]
    fn push(&mut self, x: T) -> Result<()> {
        x.encode(&mut self.scratch);
        let path = &self.path;
        self.w
            .write_all(&self.scratch)
            .ctx(|| format!("writing sort run {}", path.display()))
    }

    /// Flush; `durable`: also fsync, so that a journal written next may
    /// name the run.
    fn finish(self, durable: bool) -> Result<()> {
        let path = self.path;
        let f = self
            .w
            .into_inner()
            .map_err(|e| e.into_error())
            .ctx(|| format!("writing sort run {}", path.display()))?;
        if durable {
            f.sync_all()
                .ctx(|| format!("writing sort run {}", path.display()))?;
        }
        Ok(())
    }
}

/// Reads a binary run in blocks.
struct RunReader {
    f: File,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    path: PathBuf,
}

impl RunReader {
    fn open(path: &Path, block: usize) -> Result<Self> {
        let f = File::open(path).ctx(|| format!("cannot open sort run {}", path.display()))?;
        Ok(RunReader {
            f,
            buf: vec![0; block],
            pos: 0,
            len: 0,
            path: path.to_path_buf(),
        })
    }

    #[inline]
    fn next<T: FixedRecord>(&mut self) -> Result<Option<T>> {
        if self.pos + T::SIZE > self.len {
            self.refill()?;
            if self.pos + T::SIZE > self.len {
                if self.pos != self.len {
                    return Err(Error::msg(format!(
                        "sort run {} is truncated",
                        self.path.display()
                    )));
                }
                return Ok(None);
            }
        }
        let x = T::decode(&self.buf[self.pos..self.pos + T::SIZE]);
        self.pos += T::SIZE;
        Ok(Some(x))
    }

    #[cold]
    fn refill(&mut self) -> Result<()> {
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        while self.len < self.buf.len() {
            let n = self
                .f
                .read(&mut self.buf[self.len..])
                .ctx(|| format!("reading sort run {}", self.path.display()))?;
            if n == 0 {
                break;
            }
            self.len += n;
        }
        Ok(())
    }
}

/// Heap entry: smallest item first, ties by run number (any order would do:
/// equal items are identical).
struct HeapItem<T>(T, usize);

impl<T: Ord> PartialEq for HeapItem<T> {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0 && self.1 == o.1
    }
}
impl<T: Ord> Eq for HeapItem<T> {}
impl<T: Ord> PartialOrd for HeapItem<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T: Ord> Ord for HeapItem<T> {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

/// k-way merge of binary runs.
struct HeapMerge<T> {
    readers: Vec<RunReader>,
    heap: BinaryHeap<HeapItem<T>>,
}

impl<T: FixedRecord> HeapMerge<T> {
    fn open(runs: &[(PathBuf, u64)], block: usize) -> Result<Self> {
        let mut readers = Vec::with_capacity(runs.len());
        let mut heap = BinaryHeap::with_capacity(runs.len());
        for (i, (p, _)) in runs.iter().enumerate() {
            let mut r = RunReader::open(p, block)?;
            if let Some(x) = r.next::<T>()? {
                heap.push(HeapItem(x, i));
            }
            readers.push(r);
        }
        Ok(HeapMerge { readers, heap })
    }

    #[inline]
    fn next_item(&mut self) -> Result<Option<T>> {
        let Some(mut top) = self.heap.peek_mut() else {
            return Ok(None);
        };
        let x = top.0;
        match self.readers[top.1].next::<T>()? {
            Some(y) => top.0 = y,
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
        Ok(Some(x))
    }
}

enum SortedInner<T> {
    Memory {
        buf: Vec<T>,
        parts: Vec<(usize, usize)>,
        pos: Vec<usize>,
    },
    Disk(HeapMerge<T>),
}

/// The sorted items; holds the temp dir until dropped.
pub struct Sorted<T: FixedRecord> {
    inner: SortedInner<T>,
    spilled: usize,
    _dir: Option<tempfile::TempDir>,
}

impl<T: FixedRecord> Sorted<T> {
    /// Runs written to disk by the sort (0 when everything fit in memory).
    pub fn runs_spilled(&self) -> usize {
        self.spilled
    }

    /// Next item in order (the fast path; [`Iterator`] wraps it).
    #[inline]
    pub fn next_item(&mut self) -> Result<Option<T>> {
        match &mut self.inner {
            SortedInner::Memory { buf, parts, pos } => Ok(merge_step(buf, parts, pos)),
            SortedInner::Disk(m) => m.next_item(),
        }
    }
}

impl<T: FixedRecord> Iterator for Sorted<T> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        self.next_item().transpose()
    }
}

/// Collects formatted lines and hands them to an [`Output`] in large
/// blocks, so the per-line cost is a copy of 55 bytes.
pub struct LineSink {
    buf: Vec<u8>,
}

impl LineSink {
    const FLUSH_AT: usize = 1 << 20;

    pub fn new() -> Self {
        LineSink {
            buf: Vec::with_capacity(Self::FLUSH_AT + 4096),
        }
    }

    #[inline]
    pub fn chunk(&mut self, k: &ChunkKey, out: &mut Output) -> Result<()> {
        let mut line = [0u8; 64];
        let n = format_chunk_line(k, &mut line);
        self.raw(&line[..n], out)
    }

    #[inline]
    pub fn raw(&mut self, bytes: &[u8], out: &mut Output) -> Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= Self::FLUSH_AT {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    pub fn flush(&mut self, out: &mut Output) -> Result<()> {
        out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl Default for LineSink {
    fn default() -> Self {
        Self::new()
    }
}

// ---------------------------------------------------------------------------
// Block line reader
// ---------------------------------------------------------------------------

/// Reads lines from large blocks with `memchr`, without a copy or an
/// allocation per line, counting line numbers for error messages. A last
/// line without newline is an error (that is what a cut-off file looks like).
pub struct FastLines<R> {
    inner: R,
    name: String,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    line: u64,
    last: usize,
    /// Input bytes up to the end of the line last returned.
    offset: u64,
}

impl<R: Read> FastLines<R> {
    pub fn new(inner: R, name: impl Into<String>) -> Self {
        FastLines {
            inner,
            name: name.into(),
            buf: vec![0; 1 << 20],
            start: 0,
            end: 0,
            eof: false,
            line: 0,
            last: 0,
            offset: 0,
        }
    }

    /// Continue numbering from a resume point: `inner` was positioned at
    /// byte `offset`, just after line `line`.
    pub fn starting_at(mut self, line: u64, offset: u64) -> Self {
        self.line = line;
        self.offset = offset;
        self
    }

    /// Input bytes up to the end of the line last returned (its newline
    /// included).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of the line last returned (1-based).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// An input error at the current line.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::input(self.name.clone(), self.line, msg)
    }

    /// Next line without its newline.
    #[inline]
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        loop {
            if let Some(p) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let s = self.start;
                self.last = s;
                self.start += p + 1;
                self.line += 1;
                self.offset += p as u64 + 1;
                return Ok(Some(&self.buf[s..s + p]));
            }
            if self.eof {
                if self.start < self.end {
                    self.line += 1;
                    self.start = self.end;
                    return Err(self.error("last line has no newline: the file is truncated"));
                }
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// Next line with its position, for callers that need to make an error
    /// while still holding the line.
    #[inline]
    pub fn next_line_at(&mut self) -> Result<Option<(&[u8], At<'_>)>> {
        match self.next_line()? {
            None => Ok(None),
            Some(_) => {
                // Re-borrow immutably: the line is `last..start - 1`.
                Ok(Some((
                    &self.buf[self.last..self.start - 1],
                    At {
                        name: &self.name,
                        line: self.line,
                    },
                )))
            }
        }
    }

    #[cold]
    fn fill(&mut self) -> Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let n = self.buf.len();
            self.buf.resize(n * 2, 0); // a line longer than the buffer
        }
        let n = loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::Io {
                        context: format!("reading {} after line {}", self.name, self.line),
                        source: e,
                    })
                }
            }
        };
        if n == 0 {
            self.eof = true;
        }
        self.end += n;
        Ok(())
    }
}

/// A line's position, for error messages.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    pub name: &'a str,
    pub line: u64,
}

impl At<'_> {
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::input(self.name, self.line, msg)
    }
}

// ---------------------------------------------------------------------------
// fsim-sort
// ---------------------------------------------------------------------------

/// Records merged between two updates of the merge's progress bar: the
/// update is an atomic store, kept out of the per-record path.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Validated options of `fsim-sort`.
#[derive(Debug, Clone)]
pub struct Config {
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub memory: u64,
    pub tmpdir: Option<PathBuf>,
    pub threads: usize,
    pub fan_in: usize,
    pub quiet: bool,
    /// Keep finished runs here with a journal, to resume after a kill
    /// ([`crate::stages::sort::resume`]).
    pub resume_dir: Option<PathBuf>,
}

/// What a run did (for the summary and for tests).
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Records in the output.
    pub records: u64,
    /// Of these, records in runs kept from a killed sort (not read again).
    pub resumed: u64,
    pub header_lines: usize,
    pub runs_spilled: usize,
    pub seconds: f64,
}

impl Summary {
    /// `fsim-sort: R records (S sorted, K resumed), H header lines, N runs spilled, T s`.
    pub fn line(&self) -> String {
        format!(
            "fsim-sort: {} records ({} sorted, {} resumed), {} header lines, {} runs spilled, {:.2} s",
            self.records,
            self.records - self.resumed,
            self.resumed,
            self.header_lines,
            self.runs_spilled,
            self.seconds
        )
    }
}

/// An input file read from byte `offset` on (a resumed sort).
fn open_input_at(path: &Path, offset: u64) -> Result<(Box<dyn std::io::BufRead + Send>, String)> {
    use std::io::{Seek, SeekFrom};
    let name = path.display().to_string();
    let mut f = File::open(path).ctx(|| format!("cannot open {name}"))?;
    f.seek(SeekFrom::Start(offset))
        .ctx(|| format!("cannot seek in {name}"))?;
    Ok((
        Box::new(std::io::BufReader::with_capacity(64 << 10, f)),
        name,
    ))
}

/// Sort chunk files; see the module doc. Nothing is written when an input
/// is invalid, truncated or mixed. With `resume_dir`, finished runs are
/// journaled there and a killed sort continues after them.
pub fn run(cfg: &Config) -> Result<Summary> {
    let t0 = Instant::now();
    if cfg.memory < MIN_MEMORY {
        return Err(Error::msg(format!(
            "--memory must be at least {MIN_MEMORY} bytes (4K)"
        )));
    }
    let default_input = [PathBuf::from("-")];
    let inputs: &[PathBuf] = if cfg.inputs.is_empty() {
        &default_input
    } else {
        &cfg.inputs
    };
    let (journal, cp) = match &cfg.resume_dir {
        Some(d) => {
            let (j, cp) = Journal::open(d, inputs, cfg.memory)?;
            (Some(j), cp)
        }
        None => (None, None),
    };
    let out = Output::create(cfg.output.as_deref())?;
    let mut opts = SortOptions::with_memory(cfg.memory);
    opts.tmpdir = cfg.tmpdir.clone();
    opts.threads = cfg.threads.max(1);
    opts.fan_in = cfg.fan_in;
    let mut sorter = match &journal {
        Some(j) => ExternalSorter::<ChunkKey>::keep_runs_in(
            opts,
            j.dir().to_path_buf(),
            cp.as_ref().map(|c| c.runs.clone()).unwrap_or_default(),
        ),
        None => ExternalSorter::<ChunkKey>::new(opts),
    };
    let resumed = sorter.len();
    // The '#' lines read before the kill passed these checks then; they are
    // replayed so that the checks go on from where they were.
    let mut meta: Vec<(usize, Vec<u8>)> = cp.as_ref().map(|c| c.meta.clone()).unwrap_or_default();
    let mut hash_lines: Vec<Vec<u8>> = meta.iter().map(|m| m.1.clone()).collect();
    let mut all = InputCheck::new(Kind::Chunks, "records");
    for (_, l) in &meta {
        if let Ok(Line::Header(kind, params)) = classify_line(l) {
            all.header(kind, params).map_err(Error::msg)?;
        }
    }
    // Progress, phase 1: bytes of input read (ETA when the inputs are files).
    let paths: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let progress = crate::io::progress::Progress::for_inputs("fsim-sort", &paths, cfg.quiet);
    let start = cp.as_ref().map_or(0, |c| c.at.input);
    for (idx, path) in inputs.iter().enumerate().skip(start) {
        let here = cp.as_ref().map(|c| c.at).filter(|at| at.input == idx);
        let mut check = InputCheck::new(Kind::Chunks, "records");
        let mut seen = Digest::default();
        let mut lines = match here {
            Some(at) => {
                for (_, l) in meta.iter().filter(|m| m.0 == idx) {
                    match classify_line(l) {
                        Ok(Line::Header(kind, params)) => check.header(kind, params),
                        Ok(Line::Trailer(kind, params)) => check.trailer(kind, &params),
                        _ => Ok(()),
                    }
                    .map_err(Error::msg)?;
                }
                seen = at.seen;
                let (reader, name) = open_input_at(path, at.offset)?;
                FastLines::new(progress.reader(reader), name).starting_at(at.line, at.offset)
            }
            None => {
                let (reader, name) = open_input(path)?;
                FastLines::new(progress.reader(reader), name)
            }
        };
        while let Some(line) = lines.next_line()? {
            if let Some(k) = parse_chunk_line(line) {
                if let Some(j) = &journal {
                    if sorter.spill_due() {
                        // Spill here, where the input position is known,
                        // then journal it: it starts at this line.
                        let len = line.len() as u64 + 1;
                        sorter.spill()?;
                        let at = Position {
                            input: idx,
                            offset: lines.offset() - len,
                            line: lines.line_number() - 1,
                            seen,
                        };
                        j.write(sorter.runs(), &at, &meta)?;
                        crate::io::test_abort_after_run(sorter.runs_spilled() as u64);
                    }
                }
                seen.add(&k.record());
                sorter.push(k)?;
                continue;
            }
            if line.first() == Some(&b'#') {
                let owned = line.to_vec();
                match classify_line(&owned).map_err(|m| lines.error(m))? {
                    Line::Header(kind, params) => {
                        check
                            .header(kind, params.clone())
                            .map_err(|m| lines.error(m))?;
                        all.header(kind, params).map_err(|m| lines.error(m))?;
                    }
                    Line::Trailer(kind, params) => {
                        check.trailer(kind, &params).map_err(|m| lines.error(m))?
                    }
                    Line::Comment(_) | Line::Data(_) => {}
                }
                if journal.is_some() {
                    meta.push((idx, owned.clone()));
                }
                hash_lines.push(owned);
                continue;
            }
            let why = if ChunkRecord::parse(line).is_some() {
                " (without leading zeros in the length)"
            } else {
                ""
            };
            return Err(lines.error(format!("expected {}{why}", ChunkRecord::EXPECTED)));
        }
        check.finish(&seen, lines.name(), lines.line_number())?;
    }
    // `#` sorts before every hex digit: these lines come first, in byte order.
    hash_lines.sort_unstable();
    // Formatting (here) overlaps writing (on the writer's thread).
    let mut w = crate::io::bgwrite::BgWriter::new(out);
    for l in &hash_lines {
        w.raw(l)?;
        w.raw(b"\n")?;
    }
    let records = sorter.len();
    progress.finish();
    // Phase 2: records merged and written (the bar is up while the last run
    // is sorted and any intermediate merge passes run, its clock going).
    let progress =
        crate::io::progress::Progress::items("fsim-sort: merging", records, "records", cfg.quiet);
    let end = Position {
        input: inputs.len(),
        ..Position::default()
    };
    let mut sorted = sorter.finish_with(|runs| match &journal {
        Some(j) => j.write(runs, &end, &meta),
        None => Ok(()),
    })?;
    let runs_spilled = sorted.runs_spilled();
    let mut line = [0u8; 64];
    let mut done = 0u64;
    while let Some(k) = sorted.next_item()? {
        let n = format_chunk_line(&k, &mut line);
        w.raw(&line[..n])?;
        done += 1;
        if done.is_multiple_of(PROGRESS_EVERY) {
            progress.set_position(done);
        }
    }
    drop(sorted);
    w.finish()?.finish()?;
    if let Some(j) = journal {
        j.remove();
    }
    progress.finish();
    Ok(Summary {
        records,
        resumed,
        header_lines: hash_lines.len(),
        runs_spilled,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(hash: u128, file: u32, len: u32) -> ChunkKey {
        ChunkRecord { hash, file, len }.into()
    }

    fn tiny(fan_in: usize, threads: usize) -> SortOptions {
        SortOptions {
            memory: MIN_MEMORY,
            tmpdir: None,
            threads,
            fan_in,
        }
    }

    fn sort_all<T: FixedRecord>(items: &[T], opts: SortOptions) -> (Vec<T>, usize) {
        let mut s = ExternalSorter::new(opts);
        for &x in items {
            s.push(x).unwrap();
        }
        let sorted = s.finish().unwrap();
        let spilled = sorted.runs_spilled();
        (sorted.collect::<Result<Vec<T>>>().unwrap(), spilled)
    }

    fn arb_key() -> impl Strategy<Value = ChunkKey> {
        // A small hash and file space so that ties on hash and file occur.
        (
            0u128..8,
            any::<u128>(),
            prop::bool::ANY,
            0u32..4,
            prop_oneof![0u32..200, any::<u32>()],
        )
            .prop_map(|(small, big, use_small, file, len)| {
                key(if use_small { small } else { big }, file, len)
            })
    }

    proptest! {
        #[test]
        fn external_sort_matches_vec_sort(items in prop::collection::vec(arb_key(), 0..3000), fan_in in 2usize..5) {
            let (got, _) = sort_all(&items, tiny(fan_in, 2));
            let mut want = items.clone();
            want.sort();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn pair_records_sort(items in prop::collection::vec((0u32..50, 0u32..50, any::<u64>()), 0..2000)) {
            let items: Vec<PairRecord> = items.into_iter().map(|(a, b, bytes)| PairRecord { a, b, bytes }).collect();
            let (got, _) = sort_all(&items, tiny(3, 1));
            let mut want = items.clone();
            want.sort();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn key_order_is_text_byte_order(a in arb_key(), b in arb_key()) {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            a.record().write(&mut x);
            b.record().write(&mut y);
            // Compare lines without their newline, as sort does.
            prop_assert_eq!(a.cmp(&b), x[..x.len() - 1].cmp(&y[..y.len() - 1]));
        }

        #[test]
        fn format_and_parse_match_chunk_record(k in arb_key()) {
            let mut want = Vec::new();
            k.record().write(&mut want);
            let mut line = [0u8; 64];
            let n = format_chunk_line(&k, &mut line);
            prop_assert_eq!(&line[..n], &want[..]);
            prop_assert_eq!(parse_chunk_line(&want[..n - 1]), Some(k));
        }

        #[test]
        fn fast_parser_never_panics(line in prop::collection::vec(any::<u8>(), 0..80)) {
            if let Some(k) = parse_chunk_line(&line) {
                prop_assert_eq!(ChunkRecord::parse(&line), Some(k.record()));
            }
        }
    }

    #[test]
    fn non_canonical_lines_are_refused() {
        let ok = b"0123456789abcdef0123456789abcdef\t0000000001\t12";
        assert!(parse_chunk_line(ok).is_some());
        assert!(parse_chunk_line(b"0123456789abcdef0123456789abcdef\t0000000001\t012").is_none());
        assert!(parse_chunk_line(b"0123456789ABCDEF0123456789abcdef\t0000000001\t12").is_none());
        assert!(
            parse_chunk_line(b"0123456789abcdef0123456789abcdef\t0000000001\t4294967296").is_none()
        );
        assert!(parse_chunk_line(b"0123456789abcdef0123456789abcdef\t0000000001\t0").is_some());
    }

    #[test]
    fn many_spills_and_passes_give_the_same_order() {
        let items: Vec<ChunkKey> = (0..20_000u64)
            .map(|i| {
                key(
                    crate::formats::mix128(i as u128 % 5000),
                    (i % 7) as u32,
                    (i % 13) as u32 * 11,
                )
            })
            .collect();
        let (got, spilled) = sort_all(&items, tiny(3, 2));
        // 170 records per run: ~118 runs, then merge passes of 3.
        assert!(spilled > 150, "{spilled} runs");
        let mut want = items.clone();
        want.sort();
        assert_eq!(got, want);
        let (mem, spilled) = sort_all(&items, SortOptions::with_memory(64 << 20));
        assert_eq!(spilled, 0);
        assert_eq!(mem, want);
    }

    #[test]
    fn decimal_string_order() {
        let mut v: Vec<u32> = vec![
            0,
            1,
            9,
            10,
            11,
            12,
            119,
            120,
            2,
            100,
            1000,
            u32::MAX,
            4_000_000_000,
        ];
        let mut s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        v.sort_by(|a, b| cmp_decimal_strings(*a, *b));
        s.sort();
        assert_eq!(v.iter().map(|x| x.to_string()).collect::<Vec<_>>(), s);
    }

    #[test]
    fn fast_lines_reports_truncation() {
        let mut l = FastLines::new(&b"a\nbc"[..], "x");
        assert_eq!(l.next_line().unwrap(), Some(&b"a"[..]));
        let e = l.next_line().unwrap_err().to_string();
        assert_eq!(e, "x:2: last line has no newline: the file is truncated");
    }
}
