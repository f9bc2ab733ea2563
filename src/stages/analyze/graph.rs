//! The in-memory path: a bin's bipartite graph as two compressed adjacency
//! arrays, and step 4 on it (candidates through shared chunks, merge-style
//! count of the bytes in common), on several threads in a fixed order.

use super::files::BinFiles;
use super::groups::{Entry, GroupSink};
use super::{Pair, Thresholds};
use crate::error::Result;
use std::sync::atomic::{AtomicUsize, Ordering};

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

    /// Bytes and chunks in common of two sorted chunk lists (footnote 2).
    #[inline]
    fn common(&self, a: &[Entry], b: &[Entry]) -> (u64, u32) {
        let (mut i, mut j) = (0, 0);
        let (mut bytes, mut shared) = (0u64, 0u32);
        while i < a.len() && j < b.len() {
            let (x, y) = (a[i], b[j]);
            if x.idx < y.idx {
                i += 1;
            } else if x.idx > y.idx {
                j += 1;
            } else {
                bytes += x.occ.min(y.occ) as u64 * self.chunk_len[x.idx as usize] as u64;
                shared += 1;
                i += 1;
                j += 1;
            }
        }
        (bytes, shared)
    }

    /// Step 4 for the files `range` of the bin, appending kept pairs.
    fn pairs_for(
        &self,
        bin: &BinFiles,
        range: std::ops::Range<usize>,
        th: &Thresholds,
        stamp: &mut [u32],
        cand: &mut Vec<u32>,
        out: &mut Vec<Pair>,
    ) {
        for a in range {
            let la = self.chunks_of(a);
            if la.is_empty() {
                continue;
            }
            cand.clear();
            let mark = a as u32 + 1;
            for ca in la {
                let files = self.files_of(ca.idx as usize);
                // Lists are sorted by file: skip files up to A (symmetry, step 4b).
                let from = files.partition_point(|e| e.idx as usize <= a);
                for e in &files[from..] {
                    let s = &mut stamp[e.idx as usize];
                    if *s != mark {
                        *s = mark;
                        cand.push(e.idx);
                    }
                }
            }
            cand.sort_unstable();
            for &b in cand.iter() {
                let (common, shared) = self.common(la, self.chunks_of(b as usize));
                out.extend(bin.pair(a, b as usize, common, shared, th));
            }
        }
    }

    /// Step 4 for the whole bin on `threads` threads; the result is in
    /// (a, b) order whatever the number of threads.
    pub(super) fn all_pairs(
        &self,
        bin: &BinFiles,
        th: &Thresholds,
        threads: usize,
        out: &mut Vec<Pair>,
    ) {
        let n = bin.ids.len();
        let threads = if self.chunk_files.len() < 20_000 {
            1
        } else {
            threads.max(1)
        };
        if threads == 1 {
            let mut stamp = vec![0u32; n];
            let mut cand = Vec::new();
            self.pairs_for(bin, 0..n, th, &mut stamp, &mut cand, out);
            return;
        }
        // Small blocks taken dynamically balance files of very different degrees.
        const BLOCK: usize = 256;
        let blocks = n.div_ceil(BLOCK);
        let next = AtomicUsize::new(0);
        let mut results: Vec<(usize, Vec<Pair>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut stamp = vec![0u32; n];
                        let mut cand = Vec::new();
                        let mut mine = Vec::new();
                        loop {
                            let blk = next.fetch_add(1, Ordering::Relaxed);
                            if blk >= blocks {
                                break;
                            }
                            let mut v = Vec::new();
                            self.pairs_for(
                                bin,
                                blk * BLOCK..((blk + 1) * BLOCK).min(n),
                                th,
                                &mut stamp,
                                &mut cand,
                                &mut v,
                            );
                            if !v.is_empty() {
                                mine.push((blk, v));
                            }
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("analysis thread panicked"))
                .collect()
        });
        results.sort_unstable_by_key(|r| r.0);
        for (_, v) in results {
            out.extend_from_slice(&v);
        }
    }
}
