//! The comparison of two tokenized files: tokens interned once per file a,
//! the tokens absent from the other file pruned, an upper bound against the
//! threshold, then Myers (`similar`) for the exact LCS, or the cheap LIS of
//! unique tokens when the cost guard says Myers could be too slow.

use super::*;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A region shared by two files: `len` bytes at `off_a` in a and `off_b` in b.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub off_a: u64,
    pub off_b: u64,
    pub len: u64,
}

/// The result of comparing two tokenized files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Bytes of the common subsequence found.
    pub common: u64,
    /// Maximal runs of consecutive matched tokens (when asked for).
    pub regions: Vec<Region>,
    /// True when `common` is the LCS (false: the cost guard gave up and
    /// `common` is a lower bound).
    pub exact: bool,
    /// True when the pair cannot reach [`Differ::floor`]: `common` is then
    /// an upper bound (below the floor) and no diff was made, or it was
    /// stopped ([`Comparison::in_diff`]).
    pub below: bool,
    /// `below`, found by the edit-distance bound of [`Differ::bounded`]
    /// (false: by the token bound before any diff).
    pub in_diff: bool,
}

/// A hasher for keys that are already uniform hashes (xxh3-128).
#[derive(Default)]
pub(super) struct PreHashed(u64);

impl Hasher for PreHashed {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64 ^ (v >> 64) as u64;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) type TokenMap = HashMap<u128, u32, BuildHasherDefault<PreHashed>>;

/// Reusable state to compare one file a with many files b: a's tokens are
/// interned once ([`Differ::set_a`]), each b is looked up in that table
/// (tokens of b absent from a cannot match and are dropped on the spot).
/// Pairs of fewer tokens go straight to the diff: on them the pass costs
/// more than it saves. On the 100,000-file overlap repository (files of
/// ~150 lines, 1.14 M pairs above the 50 % threshold) it stopped 1,099
/// pairs and cost 25 % more CPU, the anchors it needs to skip similar pairs
/// alone a fifth of the run; its gain is on long files, where a diff that
/// would run to a large D is stopped after a fraction of it.
pub const BOUND_FROM_TOKENS: usize = 4096;

#[derive(Default)]
pub struct Differ {
    /// Bytes in common a pair must be able to reach to be diffed (0: any):
    /// when the tokens of a found in b, or those of b found in a, weigh
    /// less, the LCS cannot reach it and the pair stops there.
    pub floor: u64,
    /// The edit-distance pass ([`Differ::bounded`]) runs on pairs of at
    /// least this many tokens (both files, after pruning).
    pub bound_from: usize,
    map: TokenMap,
    a_ids: Vec<u32>,
    stamp: Vec<u32>,
    pair_no: u32,
    pa: Vec<u32>,
    pa_idx: Vec<u32>,
    pb: Vec<u32>,
    pb_idx: Vec<u32>,
    /// Scratch of [`Differ::bounded`]: the furthest x of each diagonal, and
    /// the sums of the largest token lengths of each side.
    v: Vec<u32>,
    top_a: Vec<u64>,
    top_b: Vec<u64>,
    /// Scratch of the unique-token anchors ([`Lis`]).
    lis: Lis,
}

impl Differ {
    pub fn new() -> Differ {
        Differ {
            bound_from: BOUND_FROM_TOKENS,
            ..Differ::default()
        }
    }

    /// Intern the tokens of file a.
    pub fn set_a(&mut self, a: &Tokens) {
        self.trim(a.len());
        self.map.clear();
        self.a_ids.clear();
        for &h in &a.hashes {
            let next = self.map.len() as u32;
            let id = *self.map.entry(h).or_insert(next);
            self.a_ids.push(id);
        }
        self.stamp.clear();
        self.stamp.resize(self.map.len(), 0);
        self.pair_no = 0;
    }

    /// Give back the memory of a large file once the files are smaller
    /// (the buffers keep the capacity of the largest file seen otherwise).
    pub(super) fn trim(&mut self, tokens: usize) {
        const KEEP: usize = 1 << 16;
        let keep = (2 * tokens).max(KEEP);
        if self.map.capacity() > keep {
            self.map = TokenMap::default();
        }
        for v in [
            &mut self.a_ids,
            &mut self.stamp,
            &mut self.pa,
            &mut self.pa_idx,
            &mut self.pb,
            &mut self.pb_idx,
            &mut self.v,
        ] {
            if v.capacity() > keep {
                *v = Vec::new();
            }
        }
        for v in [&mut self.top_a, &mut self.top_b] {
            if v.capacity() > keep {
                *v = Vec::new();
            }
        }
    }

    /// Compare b with the a given to [`Differ::set_a`].
    pub fn compare(&mut self, a: &Tokens, b: &Tokens, want_regions: bool) -> Comparison {
        debug_assert_eq!(a.len(), self.a_ids.len());
        self.pair_no = self.pair_no.wrapping_add(1);
        if self.pair_no == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.pair_no = 1;
        }
        let no = self.pair_no;
        self.pb.clear();
        self.pb_idx.clear();
        for (j, h) in b.hashes.iter().enumerate() {
            if let Some(&id) = self.map.get(h) {
                self.stamp[id as usize] = no;
                self.pb.push(id);
                self.pb_idx.push(j as u32);
            }
        }
        self.pa.clear();
        self.pa_idx.clear();
        for (i, &id) in self.a_ids.iter().enumerate() {
            if self.stamp[id as usize] == no {
                self.pa.push(id);
                self.pa_idx.push(i as u32);
            }
        }
        if self.floor > 0 {
            let bytes = |idx: &[u32], t: &Tokens| -> u64 {
                idx.iter().map(|&i| t.bytes(i as usize, 1)).sum()
            };
            let bound = bytes(&self.pa_idx, a).min(bytes(&self.pb_idx, b));
            if bound < self.floor {
                return Comparison {
                    common: bound,
                    below: true,
                    ..Comparison::default()
                };
            }
        }
        if self.floor > 0 && self.pa.len() + self.pb.len() >= self.bound_from {
            if let Some(bound) = self.bounded(a, b) {
                return Comparison {
                    common: bound,
                    below: true,
                    in_diff: true,
                    ..Comparison::default()
                };
            }
        }
        let mut hook = Runs {
            pa_idx: &self.pa_idx,
            pb_idx: &self.pb_idx,
            a,
            b,
            want_regions,
            out: Comparison {
                exact: true,
                ..Comparison::default()
            },
            cur: None,
        };
        let n = self.pa.len() + self.pb.len();
        let affordable = n <= EXACT_TOKENS || {
            let anchors = self.lis.run(&self.pa, &self.pb, self.stamp.len());
            let d_bound = (n - 2 * anchors.len()) as u64;
            if (n as u64).saturating_mul(d_bound) <= MYERS_BUDGET {
                true
            } else {
                for &(i, j) in anchors {
                    let _ = similar::algorithms::DiffHook::equal(&mut hook, i, j, 1);
                }
                hook.out.exact = false;
                false
            }
        };
        if affordable {
            let _ = similar::algorithms::myers::diff(
                &mut hook,
                &self.pa[..],
                0..self.pa.len(),
                &self.pb[..],
                0..self.pb.len(),
            );
        }
        hook.flush();
        hook.out
    }
}

impl Differ {
    /// Myers' greedy forward pass over the pruned tokens, stopped as soon
    /// as the pair cannot reach [`Differ::floor`] (issue 16): once no path
    /// of fewer than `d` edits reaches the end, the LCS has at most
    /// `(N + M - d) / 2` tokens, and so at most the bytes of that many of
    /// the largest tokens of each side. Returns that bound when it falls
    /// below the floor (the pair is then dropped as its exact figure, lower
    /// still, would be), or `None`: the diff must be made. The verdict is
    /// the full diff's, so the output does not change; the pass costs what
    /// the diff costs, so a pair that reaches the floor pays twice, and a
    /// dissimilar one stops after a fraction of its edit distance. The pass
    /// gives up (`None`) after [`MYERS_BUDGET`] steps: the cost guard then
    /// decides as without it.
    fn bounded(&mut self, a: &Tokens, b: &Tokens) -> Option<u64> {
        let (n, m) = (self.pa.len(), self.pb.len());
        let floor = self.floor;
        // A common subsequence of the unique tokens is a lower bound of the
        // LCS: if it weighs the floor, the pass cannot stop, and a pair that
        // is plainly similar pays neither the pass nor the sorts below.
        let anchors = self.lis.run(&self.pa, &self.pb, self.stamp.len());
        let lis = anchors.len();
        let lis_bytes: u64 = anchors
            .iter()
            .map(|&(i, _)| a.bytes(self.pa_idx[i] as usize, 1))
            .sum();
        if lis_bytes >= floor {
            return None;
        }
        let tops = |idx: &[u32], t: &Tokens, top: &mut Vec<u64>| {
            top.clear();
            top.extend(idx.iter().map(|&i| t.bytes(i as usize, 1)));
            top.sort_unstable_by(|x, y| y.cmp(x));
            top.insert(0, 0);
            for k in 1..top.len() {
                top[k] += top[k - 1];
            }
        };
        tops(&self.pa_idx, a, &mut self.top_a);
        tops(&self.pb_idx, b, &mut self.top_b);
        let (top_a, top_b) = (&self.top_a, &self.top_b);
        // Bytes of an LCS of at most `l` tokens.
        let bound = |l: usize| top_a[l.min(n)].min(top_b[l.min(m)]);
        // Diagonal k = x - y in -d..=d at k + off (Myers' V array).
        // If even that many tokens could weigh the floor, the pass cannot
        // stop either (it stops at a D above the real one or not at all).
        if bound(lis) >= floor {
            return None;
        }
        let off = n + m + 1;
        self.v.clear();
        self.v.resize(2 * (n + m) + 3, 0);
        let v = &mut self.v;
        let (pa, pb) = (&self.pa, &self.pb);
        let mut work = 0u64;
        for d in 0..=(n + m) {
            // No path of fewer than d edits reached the end.
            let l = (n + m - d) / 2;
            if bound(l) < floor {
                return Some(bound(l));
            }
            let d = d as isize;
            let mut k = -d;
            while k <= d {
                let at = (k + off as isize) as usize;
                let mut x = if k == -d || (k != d && v[at - 1] < v[at + 1]) {
                    v[at + 1] as usize
                } else {
                    v[at - 1] as usize + 1
                };
                let v_start = x;
                let mut y = (x as isize - k) as usize;
                while x < n && y < m && pa[x] == pb[y] {
                    x += 1;
                    y += 1;
                }
                v[at] = x as u32;
                work += 1 + (x - v_start) as u64;
                if x >= n && y >= m {
                    // The edit distance is d: the LCS has (n + m - d) / 2
                    // tokens exactly.
                    let l = (n + m - d as usize) / 2;
                    return (bound(l) < floor).then(|| bound(l));
                }
                k += 2;
            }
            if work > MYERS_BUDGET {
                return None;
            }
        }
        None
    }
}

/// Compare two tokenized files (a fresh [`Differ`]: for tests and one-offs).
pub fn compare(a: &Tokens, b: &Tokens, want_regions: bool) -> Comparison {
    let mut d = Differ::new();
    d.set_a(a);
    d.compare(a, b, want_regions)
}

/// A cheap common subsequence of two token lists: the longest increasing
/// run of positions of the tokens that occur exactly once in each
/// (patience anchors), as (index in pa, index in pb), increasing. The
/// buffers are kept between pairs: allocating them per pair cost more than
/// the search.
#[derive(Default)]
pub(super) struct Lis {
    count_a: Vec<u8>,
    count_b: Vec<u8>,
    pos_a: Vec<u32>,
    seq: Vec<(u32, u32)>,
    tails: Vec<usize>,
    prev: Vec<usize>,
    out: Vec<(usize, usize)>,
}

impl Lis {
    /// The anchors of `pa` and `pb`, whose tokens are below `ids`.
    pub(super) fn run(&mut self, pa: &[u32], pb: &[u32], ids: usize) -> &[(usize, usize)] {
        const NONE: u32 = u32::MAX;
        if self.count_a.len() < ids {
            self.count_a.resize(ids, 0);
            self.count_b.resize(ids, 0);
            self.pos_a.resize(ids, NONE);
        }
        let (count_a, count_b, pos_a) = (&mut self.count_a, &mut self.count_b, &mut self.pos_a);
        for (i, &t) in pa.iter().enumerate() {
            count_a[t as usize] = count_a[t as usize].saturating_add(1);
            pos_a[t as usize] = i as u32;
        }
        for &t in pb {
            count_b[t as usize] = count_b[t as usize].saturating_add(1);
        }
        // (position in a, position in b) of unique tokens, in b order.
        self.seq.clear();
        self.seq.extend(
            pb.iter()
                .enumerate()
                .filter(|(_, &t)| count_a[t as usize] == 1 && count_b[t as usize] == 1)
                .map(|(j, &t)| (pos_a[t as usize], j as u32)),
        );
        // Left as found for the next pair: only the touched entries.
        for &t in pa.iter().chain(pb) {
            (count_a[t as usize], count_b[t as usize], pos_a[t as usize]) = (0, 0, NONE);
        }
        // Longest increasing subsequence on the a positions (patience sorting).
        let seq = &self.seq;
        self.tails.clear();
        self.prev.clear();
        self.prev.resize(seq.len(), usize::MAX);
        for (k, &(x, _)) in seq.iter().enumerate() {
            let p = self.tails.partition_point(|&t| seq[t].0 < x);
            if p > 0 {
                self.prev[k] = self.tails[p - 1];
            }
            if p == self.tails.len() {
                self.tails.push(k);
            } else {
                self.tails[p] = k;
            }
        }
        self.out.clear();
        let mut k = self.tails.last().copied().unwrap_or(usize::MAX);
        while k != usize::MAX {
            self.out.push((seq[k].0 as usize, seq[k].1 as usize));
            k = self.prev[k];
        }
        self.out.reverse();
        &self.out
    }
}

/// Diff hook: sums the bytes of matched tokens and merges consecutive
/// matches (in the original, unpruned positions) into regions.
pub(super) struct Runs<'x> {
    pa_idx: &'x [u32],
    pb_idx: &'x [u32],
    a: &'x Tokens,
    b: &'x Tokens,
    want_regions: bool,
    out: Comparison,
    /// Current run: (token in a, token in b, tokens).
    cur: Option<(usize, usize, usize)>,
}

impl Runs<'_> {
    pub(super) fn flush(&mut self) {
        if let Some((i, j, n)) = self.cur.take() {
            let len = self.a.bytes(i, n);
            debug_assert_eq!(len, self.b.bytes(j, n));
            self.out.common += len;
            if self.want_regions {
                self.out.regions.push(Region {
                    off_a: self.a.starts[i],
                    off_b: self.b.starts[j],
                    len,
                });
            }
        }
    }
}

impl similar::algorithms::DiffHook for Runs<'_> {
    type Error = std::convert::Infallible;

    fn equal(
        &mut self,
        old: usize,
        new: usize,
        len: usize,
    ) -> std::result::Result<(), Self::Error> {
        for k in 0..len {
            let i = self.pa_idx[old + k] as usize;
            let j = self.pb_idx[new + k] as usize;
            match &mut self.cur {
                Some((ci, cj, n)) if *ci + *n == i && *cj + *n == j => *n += 1,
                _ => {
                    self.flush();
                    self.cur = Some((i, j, 1));
                }
            }
        }
        Ok(())
    }
}
