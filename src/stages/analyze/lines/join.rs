//! The line source's join: each content (the partner) looks its lines up
//! in the postings of the prefixes of the contents before it (the rows,
//! smaller), adds up what they share there, and the rows whose bound
//! still reaches the threshold get their exact overlap by a merge of the
//! rest of their lines with the partner's ([`super`]).

use super::order::{kept, Loaded, Postings};
use super::spill::Spilled;
use super::Held;
use super::LineFiles;
use super::{LineSource, Pair, PairStore};
use crate::error::Result;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The rows of a join and what it keeps.
pub(super) struct Probe<'a> {
    pub set: &'a Loaded,
    pub post: &'a Postings,
    /// A re-run: the postings of the changed rows alone (an unchanged
    /// partner is only compared with them).
    pub changed_post: Option<&'a Postings>,
    pub src: &'a LineSource,
}

/// A content compared with the rows before it.
pub(super) struct Partner<'a> {
    pub id: u32,
    pub size: u64,
    /// Its lines the rows' set holds, (rank, occurrences) by rank.
    pub lines: &'a [(u32, u32)],
    /// Rows before it: it is compared with rows `0..rows`.
    pub rows: usize,
    /// Changed since the earlier run (always, in a run from scratch).
    pub changed: bool,
}

/// One worker's state.
pub(super) struct Work {
    acc: Vec<u64>,
    touched: Vec<u32>,
    found: Vec<Pair>,
    /// Pairs whose overlap was merged, and pairs kept.
    pub candidates: u64,
    pub pairs: u64,
}

impl Work {
    pub fn new(rows: usize) -> Work {
        Work {
            acc: vec![0; rows],
            touched: Vec::new(),
            found: Vec::new(),
            candidates: 0,
            pairs: 0,
        }
    }

    /// The pairs found to `store` once there are enough of them (or all,
    /// when `all`).
    pub fn flush(&mut self, store: &Mutex<&mut PairStore>, all: bool) -> Result<()> {
        if all || self.found.len() >= 1 << 14 {
            self.pairs += self.found.len() as u64;
            store.lock().expect("pair store lock").extend(&self.found)?;
            self.found.clear();
        }
        Ok(())
    }
}

impl Probe<'_> {
    /// The pairs of `x` with the rows before it.
    pub fn probe(&self, x: &Partner, w: &mut Work) {
        let post = match self.changed_post {
            Some(changed) if !x.changed => changed,
            _ => self.post,
        };
        let Work {
            acc,
            touched,
            found,
            candidates,
            ..
        } = w;
        let len = &self.set.len;
        for &(r, nx) in x.lines {
            let list = post.of(r);
            let list = &list[..list.partition_point(|&(y, _)| (y as usize) < x.rows)];
            let l = len[r as usize] as u64;
            for &(y, ny) in list {
                let slot = &mut acc[y as usize];
                if *slot == 0 {
                    touched.push(y);
                }
                *slot += nx.min(ny) as u64 * l;
            }
        }
        for &y in touched.iter() {
            let y = y as usize;
            let common = std::mem::take(&mut acc[y]);
            let (idy, sy) = self.set.meta[y];
            let (p, rest) = self.set.prefix[y];
            if !kept(common + rest, sy, x.size, self.src) {
                continue;
            }
            *candidates += 1;
            let tail = &self.set.lines_of(y)[p as usize..];
            let common = common + overlap(tail, x.lines, len);
            if kept(common, sy, x.size, self.src) {
                let ((a, size_a), (b, size_b)) = if idy < x.id {
                    ((idy, sy), (x.id, x.size))
                } else {
                    ((x.id, x.size), (idy, sy))
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

    /// Every content of the set as a partner of the rows before it, `-j`
    /// workers taking blocks of them. Returns (candidates, pairs).
    pub fn in_memory(
        &self,
        changed: Option<&[bool]>,
        threads: usize,
        store: &Mutex<&mut PairStore>,
    ) -> Result<(u64, u64)> {
        let n = self.set.contents();
        const BLOCK: usize = 64;
        let blocks = n.div_ceil(BLOCK);
        let next = AtomicUsize::new(0);
        self.workers(threads.min(blocks.max(1)), store, |w| {
            loop {
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= blocks {
                    break;
                }
                for x in b * BLOCK..((b + 1) * BLOCK).min(n) {
                    let (id, size) = self.set.meta[x];
                    let partner = Partner {
                        id,
                        size,
                        lines: self.set.lines_of(x),
                        rows: x,
                        changed: changed.is_none_or(|c| c[x]),
                    };
                    self.probe(&partner, w);
                }
                w.flush(store, false)?;
            }
            Ok(())
        })
    }

    /// The contents `later` (after every row, in the contents' order) as
    /// partners of all the rows, their lines taken from the spill file by
    /// one of `-j` workers each; `changed` says which changed since the
    /// earlier run. Returns (candidates, pairs).
    pub fn read_later(
        &self,
        files: &LineFiles,
        later: &[Held],
        spill: &Spilled,
        changed: impl Fn(&Held) -> bool + Sync,
        threads: usize,
        store: &Mutex<&mut PairStore>,
    ) -> Result<(u64, u64)> {
        let next = AtomicUsize::new(0);
        let rows = self.set.contents();
        self.workers(threads.min(later.len().max(1)), store, |w| {
            let mut buf = Vec::new();
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(h) = later.get(k) else { break };
                let lines = spill.read(h.at, &mut buf)?;
                let ranked = self.set.rank(&lines.lines);
                let partner = Partner {
                    id: files.id(h.row as usize),
                    size: lines.size,
                    lines: &ranked,
                    rows,
                    changed: changed(h),
                };
                self.probe(&partner, w);
                w.flush(store, false)?;
            }
            Ok(())
        })
    }

    /// `threads` workers running `job`, each with its [`Work`]; their
    /// counts summed.
    fn workers(
        &self,
        threads: usize,
        store: &Mutex<&mut PairStore>,
        job: impl Fn(&mut Work) -> Result<()> + Sync,
    ) -> Result<(u64, u64)> {
        let rows = self.set.contents();
        let counts = std::thread::scope(|s| -> Result<Vec<(u64, u64)>> {
            let workers: Vec<_> = (0..threads.max(1))
                .map(|_| {
                    s.spawn(|| -> Result<(u64, u64)> {
                        let mut w = Work::new(rows);
                        job(&mut w)?;
                        w.flush(store, true)?;
                        Ok((w.candidates, w.pairs))
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("line source worker panicked"))
                .collect()
        })?;
        Ok(counts
            .into_iter()
            .fold((0, 0), |(c, p), (a, b)| (c + a, p + b)))
    }
}

/// The overlap of two contents' lines, (rank, occurrences) sorted by
/// rank: Σ over the ranks in both of min(occurrences) × length. Each line
/// of the shorter list is looked for in the longer one by a search that
/// gallops from the last place found, so a small content against a large
/// one costs about its own lines' logarithms.
pub(super) fn overlap(a: &[(u32, u32)], b: &[(u32, u32)], len: &[u32]) -> u64 {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut from = 0usize;
    let mut sum = 0u64;
    for &(r, n) in short {
        let rest = &long[from..];
        if rest.is_empty() {
            break;
        }
        // The first entry of rank r or more lies in rest[bound/2..bound].
        let mut bound = 1usize;
        while bound < rest.len() && rest[bound - 1].0 < r {
            bound *= 2;
        }
        let lo = bound / 2;
        let at = lo + rest[lo..bound.min(rest.len())].partition_point(|e| e.0 < r);
        from += at;
        if let Some(&(rl, m)) = long.get(from) {
            if rl == r {
                sum += n.min(m) as u64 * len[r as usize] as u64;
                from += 1;
            }
        }
    }
    sum
}
