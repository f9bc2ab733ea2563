//! One worker: verifies the pairs of a unit of work (reads and tokenizes
//! each file once, through the shared cache, cuts templates out, compares),
//! recycling its buffers so that it allocates nothing per pair once warm.

use super::cache::{lock, SharedCache, BUF_KEEP, SPARE_COUNT, SPARE_MAX, WORK_PER_BYTE};
use super::plan::Plan;
use super::*;
use crate::chunking::chunker::Chunker;
use crate::formats::FileEntry;
use crate::formats::{percent, PercentOf};
use std::collections::HashMap;
use std::sync::Arc;

/// What verification gave for one pair.
#[derive(Debug, Clone, Default)]
pub(super) struct Outcome {
    /// Exact figure, or the best lower bound known.
    pub(super) common: u64,
    pub(super) exact: bool,
    pub(super) regions: Vec<Region>,
    /// (file id, reason) of files found stale for this pair.
    pub(super) stale: Vec<(u32, Stale)>,
    /// Stopped early: `common` is an upper bound below the threshold (the
    /// pair is dropped as an exact one below it would be).
    pub(super) below: bool,
    /// `below`, found from the LCS length (before the traceback).
    pub(super) in_diff: bool,
}

/// Per-thread state kept across batches.
pub(super) struct Worker {
    /// Token buffers of files no longer needed, reused for the next files.
    pub(super) spare: Vec<Tokens>,
    /// Entries taken out of the cache, to recycle once the lock is released.
    pub(super) gone: Vec<Arc<Tokens>>,
    /// Working memory reserved in the cache's budget ([`WORK_PER_BYTE`]).
    reserved: u64,
    differ: Differ,
    /// File bytes: kept at the largest length read (see [`read_checked`]).
    buf: Vec<u8>,
    /// Of the content views read again (`Limits::within_memory(--memory)`).
    pub(super) limits: crate::content::Limits,
    pieces: Chunker,
    /// Files found stale by this worker (not retried).
    bad: HashMap<u32, Stale>,
    pub(super) files_read: u64,
    pub(super) bytes_read: u64,
    /// Templates and the run's chunker, when the analysis ignored templates.
    pub(super) templates: Option<Arc<(crate::formats::templates::TemplateSet, Chunker)>>,
    payload: Vec<u8>,
    /// `--min-percent` and `--percent-of`: pairs that cannot reach it stop
    /// before the diff.
    pub(super) threshold: (f64, PercentOf),
}

/// Why a file's payload cannot be compared (the analysis measured another).
fn payload_changed(now: usize, then: u64) -> Stale {
    format!("its payload is {now} bytes now, {then} in the analysis (file or templates changed)")
}

impl Worker {
    pub(super) fn new() -> Worker {
        Worker {
            spare: Vec::new(),
            gone: Vec::new(),
            reserved: 0,
            differ: Differ::new(),
            buf: Vec::new(),
            limits: crate::content::Limits::default(),
            pieces: piece_chunker(),
            bad: HashMap::new(),
            files_read: 0,
            bytes_read: 0,
            templates: None,
            payload: Vec::new(),
            threshold: (0.0, PercentOf::Smaller),
        }
    }

    /// The fewest bytes in common with which pair `p` reaches the
    /// threshold (0: no threshold): an LCS below it is dropped anyway.
    pub(super) fn floor(&self, p: &PairIn) -> u64 {
        let (min, of) = self.threshold;
        if min <= 0.0 {
            return 0;
        }
        let whole = base(p, of);
        let mut f = ((min / 100.0 * whole as f64) as u64).saturating_sub(1);
        while f <= whole && percent(f, whole) < min {
            f += 1;
        }
        f
    }

    /// Take back a file's tokens once nobody else holds them.
    pub(super) fn recycle(&mut self, t: Arc<Tokens>) {
        if let Ok(t) = Arc::try_unwrap(t) {
            self.keep_spare(t);
        }
    }

    /// Keep token buffers for the next file, unless enough are kept or
    /// they are large.
    fn keep_spare(&mut self, t: Tokens) {
        if self.spare.len() < SPARE_COUNT && t.mem() <= SPARE_MAX {
            self.spare.push(t);
        }
    }

    /// Bytes this worker keeps between pairs: its file and payload
    /// buffers and its spare token buffers (reserved in the cache's
    /// budget with the pair's working memory).
    fn held(&self) -> u64 {
        let spare: u64 = self.spare.iter().map(Tokens::mem).sum();
        (self.buf.capacity() + self.payload.capacity()) as u64 + spare
    }

    /// Reserve the working memory of a pair of files of `a` and `b` bytes
    /// (0, 0 between pairs): [`WORK_PER_BYTE`] per byte, and the rows the
    /// bit-parallel alignment may keep (a token per byte at most), with
    /// the buffers the worker keeps ([`Worker::held`]). Locks only when it
    /// grows or halves.
    pub(super) fn reserve(&mut self, cache: &SharedCache, a: u64, b: u64) {
        let need = (a + b)
            .saturating_mul(WORK_PER_BYTE)
            .saturating_add(crate::align::Lcs::rows_bytes(a, b))
            .saturating_add(self.held());
        if need > self.reserved || need < self.reserved / 2 {
            lock(cache).reserve(self.reserved, need, &mut self.gone);
            self.reserved = need;
            self.free_gone();
        }
    }

    /// Free what the cache handed back, outside its lock: the cached
    /// copies are sized to their files, no buffer to reuse ([`Worker::load`]).
    pub(super) fn free_gone(&mut self) {
        self.gone.clear();
    }

    /// Tokens of file `f` (its index among the entries held, which keys
    /// the cache and the plan, not its id), from the cache, or read and
    /// tokenized into recycled buffers (and cached when `keep`: a later
    /// group needs it).
    pub(super) fn load(
        &mut self,
        cache: &SharedCache,
        f: u32,
        e: &FileEntry,
        payload: u64,
        mode: Mode,
        keep: bool,
    ) -> std::result::Result<Arc<Tokens>, Stale> {
        if let Some(s) = self.bad.get(&f) {
            return Err(s.clone());
        }
        if keep {
            if let Some(t) = lock(cache).get((f, mode)) {
                return Ok(t);
            }
        }
        let data = match read_checked(e, &mut self.buf, &self.limits) {
            Ok(d) => d,
            Err(s) => {
                self.bad.insert(f, s.clone());
                return Err(s);
            }
        };
        self.files_read += 1;
        self.bytes_read += data.len() as u64;
        let mut t = self.spare.pop().unwrap_or_default();
        match &self.templates {
            None => tokenize_into(data, mode, &self.pieces, &mut t),
            Some(tc) => {
                crate::chunking::reader::payload(&tc.1, &tc.0, data, &mut self.payload);
                if self.payload.len() as u64 != payload {
                    let s = payload_changed(self.payload.len(), payload);
                    self.bad.insert(f, s.clone());
                    return Err(s);
                }
                tokenize_into(&self.payload, mode, &self.pieces, &mut t);
            }
        }
        if self.buf.len() > BUF_KEEP {
            // Do not keep a large file's buffer for the rest of the run.
            self.buf = Vec::new();
        }
        if keep {
            // Cached for long: a copy of exactly the file's size, the
            // buffers tokenized into kept for the next file. Shrinking
            // those in place left a hole after each cached file that only
            // a smaller block could fill: the heap grew to twice the cache
            // (fsim-verify at --memory 128M on the 100,000-file overlap
            // tree: 380 MiB before, 264 MiB after, with an arena a thread).
            let kept = Tokens {
                hashes: t.hashes.clone(),
                starts: t.starts.clone(),
                data: t.data.clone(),
            };
            self.keep_spare(std::mem::replace(&mut t, kept));
        }
        let t = Arc::new(t);
        if keep {
            lock(cache).put((f, mode), t.clone(), &mut self.gone);
            self.free_gone();
        }
        Ok(t)
    }

    /// Verify a run of pairs, `first` the index in the batch of the first
    /// (consecutive pairs with the same a share the tokenization and
    /// interning of a).
    pub(super) fn run(
        &mut self,
        cache: &SharedCache,
        pairs: &[PairIn],
        first: usize,
        files: &[FileEntry],
        plan: &Plan,
        want_regions: bool,
    ) -> Vec<Outcome> {
        let first = first as u32;
        let mut out = Vec::with_capacity(pairs.len());
        let mut cur: Option<(u32, Mode, std::result::Result<Arc<Tokens>, Stale>)> = None;
        for (k, p) in pairs.iter().enumerate() {
            let at = first + k as u32;
            let (fa, fb) = (&files[p.a as usize], &files[p.b as usize]);
            self.reserve(cache, fa.size, fb.size);
            let mode = Mode::of(fa.ftype, fb.ftype);
            if !matches!(&cur, Some((a, m, _)) if *a == p.a && *m == mode) {
                if let Some((_, _, Ok(t))) = cur.take() {
                    self.recycle(t);
                }
                let ta = self.load(cache, p.a, fa, p.size_a, mode, plan.keep(p.a));
                if let Ok(t) = &ta {
                    self.differ.set_a(t);
                }
                cur = Some((p.a, mode, ta));
            }
            let lower = |stale: Vec<(u32, Stale)>| Outcome {
                common: p.common,
                exact: false,
                regions: Vec::new(),
                stale,
                below: false,
                in_diff: false,
            };
            let o = match &cur {
                Some((_, _, Ok(ta))) => {
                    let pieces = mode == Mode::Pieces;
                    match self.load(cache, p.b, fb, p.size_b, mode, plan.keep(p.b)) {
                        Ok(tb) => {
                            // Binary pairs: the bound before the diff counts
                            // whole pieces, and the byte measure can exceed
                            // the pieces matched, so it does not bound it.
                            self.differ.floor = if pieces { 0 } else { self.floor(p) };
                            let mut c = self.differ.compare(ta, &tb, want_regions || pieces);
                            if pieces {
                                // Pieces keep their file's bytes (the payload
                                // with templates), cached or just read.
                                debug_assert_eq!(ta.data.len() as u64, p.size_a);
                                debug_assert_eq!(tb.data.len() as u64, p.size_b);
                                c.common = extend_runs(&mut c.regions, &ta.data, &tb.data);
                                if !want_regions {
                                    c.regions = Vec::new();
                                }
                            }
                            self.recycle(tb);
                            Outcome {
                                common: if c.exact || c.below {
                                    c.common
                                } else {
                                    c.common.max(p.common)
                                },
                                // Below the threshold: dropped like an exact
                                // figure below it (the exact one is smaller).
                                exact: c.exact || c.below,
                                regions: if c.exact { c.regions } else { Vec::new() },
                                stale: Vec::new(),
                                below: c.below,
                                in_diff: c.in_diff,
                            }
                        }
                        Err(s) => lower(vec![(p.b, s)]),
                    }
                }
                Some((_, _, Err(s))) => lower(vec![(p.a, s.clone())]),
                None => unreachable!("set above"),
            };
            out.push(o);
            // No later pair needs these: free their tokens.
            for f in [p.a, p.b] {
                if plan.keep(f) && !plan.needed_from(f, at + 1) {
                    lock(cache).remove(f, &mut self.gone);
                }
            }
            self.free_gone();
        }
        if let Some((_, _, Ok(t))) = cur {
            self.recycle(t);
        }
        self.reserve(cache, 0, 0);
        out
    }
}
