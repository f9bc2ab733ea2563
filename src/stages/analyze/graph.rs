//! The in-memory path: a bin's bipartite graph as two compressed adjacency
//! arrays, and step 4 on it (candidates through shared chunks, merge-style
//! count of the bytes in common), on several threads in a fixed order.

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
            let la = self.chunks_of(a);
            if la.is_empty() {
                continue;
            }
            acc.cand.clear();
            for ca in la {
                let files = self.files_of(ca.idx as usize);
                let len = self.chunk_len[ca.idx as usize] as u64;
                // Lists are sorted by file: skip files up to A (symmetry, step 4b).
                let from = files.partition_point(|e| e.idx as usize <= a);
                for e in &files[from..] {
                    let b = e.idx as usize;
                    let add = ca.occ.min(e.occ) as u64 * len;
                    if acc.bytes[b] == 0 {
                        acc.cand.push(e.idx);
                    }
                    acc.bytes[b] += add;
                    acc.shared[b] += 1;
                }
            }
            acc.cand.sort_unstable();
            for &b in acc.cand.iter() {
                let b = b as usize;
                let (common, shared) = (acc.bytes[b], acc.shared[b]);
                (acc.bytes[b], acc.shared[b]) = (0, 0);
                out.extend(bin.pair(a, b, common, shared, th));
            }
        }
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
    ) -> Result<()> {
        let n = bin.ids.len();
        let local: Vec<bool> = bin.ids.iter().map(|&id| changed.any(id, id)).collect();
        let mut acc = Accumulator::new(n);
        let mut v = Vec::new();
        for x in (0..n).filter(|&x| local[x]) {
            acc.cand.clear();
            let lx = self.chunks_of(x);
            for cx in lx {
                let len = self.chunk_len[cx.idx as usize] as u64;
                for e in self.files_of(cx.idx as usize) {
                    let b = e.idx as usize;
                    if b == x {
                        continue;
                    }
                    if acc.bytes[b] == 0 {
                        acc.cand.push(e.idx);
                    }
                    acc.bytes[b] += cx.occ.min(e.occ) as u64 * len;
                    acc.shared[b] += 1;
                }
            }
            for &b in acc.cand.iter() {
                let b = b as usize;
                let (common, shared) = (acc.bytes[b], acc.shared[b]);
                (acc.bytes[b], acc.shared[b]) = (0, 0);
                if !local[b] || b > x {
                    v.extend(bin.pair(x.min(b), x.max(b), common, shared, th));
                }
            }
            if v.len() >= 1 << 14 {
                out.extend(&v)?;
                v.clear();
            }
        }
        out.extend(&v)
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
    ) -> Result<()> {
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
            return out.extend(&v);
        }
        // Small blocks taken dynamically balance files of very different degrees.
        const BLOCK: usize = 256;
        let blocks = n.div_ceil(BLOCK);
        let next = AtomicUsize::new(0);
        let store = Mutex::new(out);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| -> Result<()> {
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
                        store.lock().expect("pair store lock").extend(&v)
                    })
                })
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().expect("analysis thread panicked"))
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
}

impl Accumulator {
    fn new(files: usize) -> Accumulator {
        Accumulator {
            bytes: vec![0; files],
            shared: vec![0; files],
            cand: Vec::new(),
        }
    }
}
