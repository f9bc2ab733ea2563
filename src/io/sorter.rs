//! The external sorter: fixed-size records ([`FixedRecord`]) sorted in
//! memory-sized runs on several threads, spilled to disk and merged,
//! resumable through `crate::stages::sort::resume`. fsim-sort sorts chunk
//! keys with it, fsim-analyze its pairs, fsim-report its links (so it is in
//! the io layer, below both).

use crate::error::{Context, Error, Result};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// A record of fixed binary size that [`ExternalSorter`] can spill to disk.
/// The on-disk encoding is private to one sort (it never outlives the temp
/// dir), so native layout choices are fine; `Ord` is the sort order.
pub trait FixedRecord: Ord + Copy + Send + Sync + 'static {
    /// Encoded size in bytes.
    const SIZE: usize;
    /// Write exactly `SIZE` bytes into `out` (`out.len() == SIZE`).
    fn encode(&self, out: &mut [u8]);
    /// Read back what [`FixedRecord::encode`] wrote (`buf.len() == SIZE`).
    fn decode(buf: &[u8]) -> Self;
}

/// The little-endian `u32` at `at` of a record's bytes, for the
/// [`FixedRecord::decode`]s (they are handed exactly `SIZE` bytes).
#[inline]
pub fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The little-endian `u64` at `at` of a record's bytes, as [`le_u32`].
#[inline]
pub fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

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
/// --resume-dir`, `crate::stages::sort::resume`) can continue after a kill.
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
    /// [`ExternalSorter::keep_last_of`].
    same: Option<SameGroup<T>>,
}

/// Whether two items, adjacent in the order, are of one group
/// ([`ExternalSorter::keep_last_of`]).
pub type SameGroup<T> = fn(&T, &T) -> bool;

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
            same: None,
        }
    }

    /// Of each group of items (`same`: consecutive in the order, such as
    /// those of one key), keep only the last, the greatest: dropped as
    /// each run is written and in the merges, so a caller that wants the
    /// best of each key neither writes nor reads back the others. The
    /// order must keep a group together (`same` true of two items is true
    /// of every item between them).
    pub fn keep_last_of(mut self, same: SameGroup<T>) -> Self {
        self.same = Some(same);
        self
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
        let mut last = LastOf::new(self.same);
        while let Some(x) = merge.next() {
            if let Some(y) = last.feed(x) {
                w.push(y)?;
            }
        }
        if let Some(y) = last.end() {
            w.push(y)?;
        }
        let n = w.finish(self.durable())?;
        self.runs.push((path, n));
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
                last: LastOf::new(self.same),
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
            let mut last = LastOf::new(self.same);
            while let Some(x) = merge.next_item()? {
                if let Some(y) = last.feed(x) {
                    w.push(y)?;
                }
            }
            if let Some(y) = last.end() {
                w.push(y)?;
            }
            let n = w.finish(self.durable())?;
            drop(merge);
            self.runs.push((path, n));
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
            last: LastOf::new(self.same),
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

/// The last item of each group of a sorted stream
/// ([`ExternalSorter::keep_last_of`]); every item when there are no groups.
struct LastOf<T> {
    same: Option<SameGroup<T>>,
    pending: Option<T>,
}

impl<T: FixedRecord> LastOf<T> {
    fn new(same: Option<SameGroup<T>>) -> Self {
        LastOf {
            same,
            pending: None,
        }
    }

    /// Item `x` comes next: the item that goes on, if any (the last of
    /// the group `x` ends).
    #[inline]
    fn feed(&mut self, x: T) -> Option<T> {
        let Some(same) = self.same else {
            return Some(x);
        };
        match self.pending.replace(x) {
            Some(p) if !same(&p, &x) => Some(p),
            _ => None,
        }
    }

    /// The last group's item, at the end of the stream.
    fn end(&mut self) -> Option<T> {
        self.pending.take()
    }
}

/// Writes a binary run.
struct RunWriter<T> {
    w: BufWriter<File>,
    scratch: Vec<u8>,
    path: PathBuf,
    written: u64,
    _t: std::marker::PhantomData<T>,
}

impl<T: FixedRecord> RunWriter<T> {
    fn create(path: &Path) -> Result<Self> {
        let f = File::create(path).ctx(|| format!("cannot create sort run {}", path.display()))?;
        Ok(RunWriter {
            w: BufWriter::with_capacity(256 << 10, f),
            scratch: vec![0; T::SIZE],
            path: path.to_path_buf(),
            written: 0,
            _t: Default::default(),
        })
    }

    #[inline]
    fn push(&mut self, x: T) -> Result<()> {
        x.encode(&mut self.scratch);
        self.written += 1;
        let path = &self.path;
        self.w
            .write_all(&self.scratch)
            .ctx(|| format!("writing sort run {}", path.display()))
    }

    /// Flush; `durable`: also fsync, so that a journal written next may
    /// name the run. The number of items written.
    fn finish(self, durable: bool) -> Result<u64> {
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
        Ok(self.written)
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
    last: LastOf<T>,
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
        loop {
            let x = match &mut self.inner {
                SortedInner::Memory { buf, parts, pos } => merge_step(buf, parts, pos),
                SortedInner::Disk(m) => m.next_item()?,
            };
            let Some(x) = x else {
                return Ok(self.last.end());
            };
            if let Some(y) = self.last.feed(x) {
                return Ok(Some(y));
            }
        }
    }
}

impl<T: FixedRecord> Iterator for Sorted<T> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        self.next_item().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (key, value): a group is a key.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    struct Item(u32, u32);

    impl FixedRecord for Item {
        const SIZE: usize = 8;
        fn encode(&self, out: &mut [u8]) {
            out[..4].copy_from_slice(&self.0.to_le_bytes());
            out[4..].copy_from_slice(&self.1.to_le_bytes());
        }
        fn decode(b: &[u8]) -> Self {
            let at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
            Item(at(0), at(4))
        }
    }

    fn items() -> Vec<Item> {
        let mut x = 12345u64;
        (0..20_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                Item((x >> 33) as u32 % 700, (x >> 13) as u32 % 5_000)
            })
            .collect()
    }

    fn sorted(opts: SortOptions, grouped: bool) -> (Vec<Item>, Vec<u64>) {
        let mut s = ExternalSorter::new(opts);
        if grouped {
            s = s.keep_last_of(|a: &Item, b: &Item| a.0 == b.0);
        }
        for x in items() {
            s.push(x).unwrap();
        }
        let counts: Vec<u64> = s.runs().iter().map(|r| r.1).collect();
        let out = s.finish().unwrap().map(|x| x.unwrap()).collect();
        (out, counts)
    }

    #[test]
    fn keep_last_of_keeps_each_groups_greatest_in_memory_and_on_disk() {
        let mut want = items();
        want.sort_unstable();
        let (all, _) = sorted(SortOptions::with_memory(MIN_MEMORY), false);
        assert_eq!(all, want);
        let mut best: Vec<Item> = Vec::new();
        for &x in &want {
            match best.last_mut() {
                Some(l) if l.0 == x.0 => *l = x,
                _ => best.push(x),
            }
        }
        assert_eq!(best.len(), 700);
        // Many runs, merged two at a time: the groups span runs.
        let mut small = SortOptions::with_memory(MIN_MEMORY);
        small.fan_in = 2;
        small.threads = 2;
        let (got, counts) = sorted(small, true);
        assert_eq!(got, best);
        // Each run was written with one item a group.
        assert!(
            counts.len() > 2 && counts.iter().all(|&n| n <= 700),
            "{counts:?}"
        );
        let (got, counts) = sorted(SortOptions::with_memory(64 << 20), true);
        assert!(counts.is_empty());
        assert_eq!(got, best);
    }
}
