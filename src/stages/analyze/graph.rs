//! The in-memory path: a bin's bipartite graph as two compressed adjacency
//! arrays, and step 4 on it (candidates through shared chunks, merge-style
//! count of the bytes in common), on several threads in a fixed order.

use super::defer::{self, Deferred};
use super::files::BinFiles;
use super::groups::{Entry, GroupSink};
use super::{Pair, PairStore, Thresholds};
use crate::error::Result;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The bipartite graph of one bin, as two compressed adjacency arrays.
/// Chunk indices follow the hash order of the bin and file indices the id
/// order, so both lists come out sorted without sorting.
#[derive(Default)]
pub(super) struct Graph {
    chunk_start: Vec<u32>,
    chunk_len: Vec<u32>,
    chunk_files: Vec<Entry>,
    file_start: Vec<u32>,
    file_chunks: Vec<Entry>,
    defer: Deferred,
}

impl GroupSink for Graph {
    #[inline]
    fn group(&mut self, len: u32, entries: &[Entry]) -> Result<()> {
        self.chunk_len.push(len);
        self.chunk_files.extend_from_slice(entries);
        self.chunk_start.push(self.chunk_files.len() as u32);
        Ok(())
    }
}

impl Graph {
    pub(super) fn with_capacity(files: usize, records: usize) -> Graph {
        let mut chunk_start = Vec::with_capacity(records / 2 + 1);
        chunk_start.push(0);
        Graph {
            chunk_start,
            chunk_len: Vec::with_capacity(records / 2),
            chunk_files: Vec::with_capacity(records),
            file_start: Vec::with_capacity(files + 1),
            file_chunks: Vec::new(),
            defer: Deferred::default(),
        }
    }

    /// Build the file → chunks side from the chunk → files side.
    pub(super) fn finish(&mut self, files: usize) {
        let mut start = vec![0u32; files + 1];
        for e in &self.chunk_files {
            start[e.idx as usize + 1] += 1;
        }
        for i in 0..files {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut fc = vec![Entry { idx: 0, occ: 0 }; self.chunk_files.len()];
        for c in 0..self.chunk_len.len() {
            let (s, e) = (
                self.chunk_start[c] as usize,
                self.chunk_start[c + 1] as usize,
            );
            for f in &self.chunk_files[s..e] {
                let slot = &mut fill[f.idx as usize];
                fc[*slot as usize] = Entry {
                    idx: c as u32,
                    occ: f.occ,
                };
                *slot += 1;
            }
        }
        self.file_start = start;
        self.file_chunks = fc;
    }

    /// Defer the groups of at least `from` files that the chunk alone
    /// cannot make a pair of ([`defer`]): mark the light files and put
    /// each deferred group's heavy files first. Call after
    /// [`Graph::finish`]; nothing is deferred for a feature method.
    pub(super) fn defer(&mut self, bin: &BinFiles, th: &Thresholds, from: usize) {
        if bin.spec.is_some() {
            return;
        }
        let from = from.max(2);
        let mut chosen = Vec::new();
        for c in 0..self.chunk_len.len() {
            let files = self.files_of(c);
            if files.len() < from {
                continue;
            }
            let len = self.chunk_len[c] as u64;
            let lifted = files
                .iter()
                .filter(|e| th.may_keep(e.occ as u64 * len, bin.sizes[e.idx as usize]))
                .count();
            if lifted * defer::LIFTED_AT_MOST_ONE_IN <= files.len() {
                chosen.push(c as u32);
            }
        }
        if chosen.is_empty() {
            return;
        }
        let mut bytes = vec![0u64; bin.ids.len()];
        for &c in &chosen {
            let len = self.chunk_len[c as usize] as u64;
            for e in self.files_of(c as usize) {
                bytes[e.idx as usize] += e.occ as u64 * len;
            }
        }
        let light: Vec<bool> = (0..bytes.len())
            .map(|f| !th.may_keep(bytes[f], bin.sizes[f]))
            .collect();
        drop(bytes);
        let mut chunks = Vec::with_capacity(chosen.len());
        let mut lights = Vec::new();
        for c in chosen {
            let (s, e) = (
                self.chunk_start[c as usize] as usize,
                self.chunk_start[c as usize + 1] as usize,
            );
            let files = &mut self.chunk_files[s..e];
            lights.clear();
            lights.extend(files.iter().filter(|f| light[f.idx as usize]));
            let mut heavy = 0;
            for i in 0..files.len() {
                if !light[files[i].idx as usize] {
                    files[heavy] = files[i];
                    heavy += 1;
                }
            }
            files[heavy..].copy_from_slice(&lights);
            chunks.push((c, heavy as u32));
        }
        self.defer = Deferred {
            chunks,
            light,
            from,
        };
    }

    #[inline]
    fn chunks_of(&self, f: usize) -> &[Entry] {
        &self.file_chunks[self.file_start[f] as usize..self.file_start[f + 1] as usize]
    }

    #[inline]
    fn files_of(&self, c: usize) -> &[Entry] {
        &self.chunk_files[self.chunk_start[c] as usize..self.chunk_start[c + 1] as usize]
    }

    /// Step 4 for the files `range` of the bin, appending kept pairs.
    ///
    /// The bytes in common (footnote 2: sum over shared chunks of
    /// min(occurrences) × length) are added up while A's chunk lists are
    /// walked to find its candidates, so each posting is visited once per
    /// pair it contributes to; merging A's chunk list with each candidate's
    /// would cost |A| + |B| per pair, which is what made a 2 MB file paired
    /// with 12,000 pages cost seconds.
    fn pairs_for(
        &self,
        bin: &BinFiles,
        range: std::ops::Range<usize>,
        th: &Thresholds,
        acc: &mut Accumulator,
        out: &mut Vec<Pair>,
    ) {
        for a in range {
            self.gather(a, true, acc);
            acc.cand.sort_unstable();
            for k in 0..acc.cand.len() {
                let b = acc.cand[k] as usize;
                let (common, shared) = self.figures(a, b, acc);
                out.extend(bin.pair(a, b, common, shared, th));
            }
        }
    }

    /// A's candidates into `acc`: the files after A (`after`) or all but
    /// A that share a chunk with it, with the bytes and chunks in common
    /// so far; the groups deferred from a light A are walked for their
    /// heavy files alone, and A's deferred chunks kept for
    /// [`Graph::figures`].
    fn gather(&self, a: usize, after: bool, acc: &mut Accumulator) {
        acc.cand.clear();
        acc.own.clear();
        let light = self.defer.is_light(a);
        for ca in self.chunks_of(a) {
            let files = self.files_of(ca.idx as usize);
            let len = self.chunk_len[ca.idx as usize] as u64;
            match self.defer.heavy_of(ca.idx, files.len()) {
                None => acc.walk(files, a, after, ca.occ, len),
                Some(heavy) => {
                    // Heavy files first, then light ones, each in order.
                    acc.walk(&files[..heavy], a, after, ca.occ, len);
                    if light {
                        acc.own.push(*ca);
                    } else {
                        acc.walk(&files[heavy..], a, after, ca.occ, len);
                    }
                }
            }
        }
    }

    /// The bytes and chunks A and its candidate B have in common (after
    /// [`Graph::gather`] for A): what the walk added, and for two light
    /// files the deferred chunks both hold. B's slots are reset.
    #[inline]
    fn figures(&self, a: usize, b: usize, acc: &mut Accumulator) -> (u64, u32) {
        let (mut common, mut shared) = (acc.bytes[b], acc.shared[b]);
        (acc.bytes[b], acc.shared[b]) = (0, 0);
        if !acc.own.is_empty() && self.defer.is_light(b) {
            debug_assert!(self.defer.is_light(a));
            let (c, s) = defer::overlap(&acc.own, self.chunks_of(b), &self.chunk_len);
            (common, shared) = (common + c, shared + s);
        }
        (common, shared)
    }

    /// Step 4 for a re-run: only the pairs with a changed file. Each changed
    /// file's chunks are walked to every file sharing one, on both sides of
    /// it in id order, so the work follows the changed files' chunks and
    /// not the bin's; a pair of two changed files is written from the
    /// smaller.
    pub(super) fn changed_pairs(
        &self,
        bin: &BinFiles,
        th: &Thresholds,
        changed: &super::Changed,
        out: &mut PairStore,
    ) -> Result<u64> {
        let n = bin.ids.len();
        let local: Vec<bool> = bin.ids.iter().map(|&id| changed.any(id, id)).collect();
        let mut acc = Accumulator::new(n);
        let mut v = Vec::new();
        for x in (0..n).filter(|&x| local[x]) {
            self.gather(x, false, &mut acc);
            for k in 0..acc.cand.len() {
                let b = acc.cand[k] as usize;
                let (common, shared) = self.figures(x, b, &mut acc);
                if !local[b] || b > x {
                    v.extend(bin.pair(x.min(b), x.max(b), common, shared, th));
                }
            }
            if v.len() >= 1 << 14 {
                out.extend(&v)?;
                v.clear();
            }
        }
        out.extend(&v)?;
        Ok(acc.visits)
    }

    /// Step 4 for the whole bin on `threads` threads, into `out`, which
    /// sorts: threads hand over their pairs in batches as they go, so no
    /// thread holds more than a batch whatever the bin yields.
    pub(super) fn all_pairs(
        &self,
        bin: &BinFiles,
        th: &Thresholds,
        threads: usize,
        out: &mut PairStore,
    ) -> Result<u64> {
        /// Pairs a thread gathers before taking the store's lock.
        const BATCH: usize = 1 << 14;
        let n = bin.ids.len();
        let threads = if self.chunk_files.len() < 20_000 {
            1
        } else {
            threads.max(1)
        };
        if threads == 1 {
            let mut acc = Accumulator::new(n);
            let mut v = Vec::new();
            for a in 0..n {
                self.pairs_for(bin, a..a + 1, th, &mut acc, &mut v);
                if v.len() >= BATCH {
                    out.extend(&v)?;
                    v.clear();
                }
            }
            out.extend(&v)?;
            return Ok(acc.visits);
        }
        // Small blocks taken dynamically balance files of very different degrees.
        const BLOCK: usize = 256;
        let blocks = n.div_ceil(BLOCK);
        let next = AtomicUsize::new(0);
        let store = Mutex::new(out);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| -> Result<u64> {
                        let mut acc = Accumulator::new(n);
                        let mut v = Vec::new();
                        loop {
                            let blk = next.fetch_add(1, Ordering::Relaxed);
                            if blk >= blocks {
                                break;
                            }
                            for a in blk * BLOCK..((blk + 1) * BLOCK).min(n) {
                                self.pairs_for(bin, a..a + 1, th, &mut acc, &mut v);
                                if v.len() >= BATCH {
                                    store.lock().expect("pair store lock").extend(&v)?;
                                    v.clear();
                                }
                            }
                        }
                        store.lock().expect("pair store lock").extend(&v)?;
                        Ok(acc.visits)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("analysis thread panicked"))
                .sum()
        })
    }
}

/// One thread's scratch for [`Graph::pairs_for`], indexed by the bin's
/// file index: the bytes and chunks each file shares with the current A so
/// far. Every shared chunk adds at least one byte, so a zero marks a file
/// not yet seen for this A; only the candidates' slots are reset after A.
struct Accumulator {
    bytes: Vec<u64>,
    shared: Vec<u32>,
    cand: Vec<u32>,
    /// A light A's deferred chunks, in chunk order ([`defer`]).
    own: Vec<Entry>,
    /// Entries of the chunks' file lists visited: the work of the walk.
    visits: u64,
}

impl Accumulator {
    fn new(files: usize) -> Accumulator {
        Accumulator {
            bytes: vec![0; files],
            shared: vec![0; files],
            cand: Vec::new(),
            own: Vec::new(),
            visits: 0,
        }
    }

    /// Add a chunk of `len` bytes that A holds `occ` times to the other
    /// files of `files` (sorted by file), or with `after` to those after A
    /// (the files up to A are skipped, by symmetry, step 4b).
    #[inline]
    fn walk(&mut self, files: &[Entry], a: usize, after: bool, occ: u32, len: u64) {
        let from = if after {
            files.partition_point(|e| e.idx as usize <= a)
        } else {
            0
        };
        self.visits += (files.len() - from) as u64;
        for e in &files[from..] {
            let b = e.idx as usize;
            if b == a {
                continue;
            }
            if self.bytes[b] == 0 {
                self.cand.push(e.idx);
            }
            self.bytes[b] += occ.min(e.occ) as u64 * len;
            self.shared[b] += 1;
        }
    }
}
