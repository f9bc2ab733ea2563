//! The comparison of two tokenized files: tokens interned once per file a,
//! the tokens absent from the other file pruned, an upper bound against the
//! threshold, the common prefix and suffix taken as they are, then the
//! middle aligned by the cheaper exact algorithm ([`choose`]): the
//! bit-parallel LCS, whose cost depends only on the lengths, or Myers when
//! the anchors show the two files differ by few tokens; the cheap LIS of
//! unique tokens only when both are over their budgets.

use super::*;
use similar::algorithms::DiffHook;
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
    /// `below`, found from the LCS length, before the traceback
    /// (false: by the token bound before any diff).
    pub in_diff: bool,
}

impl Comparison {
    /// A pair stopped by the token bound, before any diff: `bound`, an
    /// upper bound of its LCS's bytes, is below the floor.
    fn stopped(bound: u64) -> Comparison {
        Comparison {
            common: bound,
            below: true,
            ..Comparison::default()
        }
    }
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
#[derive(Default)]
pub struct Differ {
    /// Bytes in common a pair must be able to reach to be aligned (0: any):
    /// when the tokens of a found in b, or those of b found in a, weigh
    /// less, the LCS cannot reach it and the pair stops there; once the
    /// LCS length is known, the bytes of that many of the largest tokens
    /// of either side bound it again, before the traceback.
    pub floor: u64,
    map: TokenMap,
    a_ids: Vec<u32>,
    stamp: Vec<u32>,
    pair_no: u32,
    pa: Vec<u32>,
    pa_idx: Vec<u32>,
    pb: Vec<u32>,
    pb_idx: Vec<u32>,
    /// Scratch of the bound from the LCS length ([`top_bytes`]).
    top_a: Vec<u64>,
    /// The weights of `pa_idx` and `pb_idx` (set when `floor` > 0).
    weights: [Weights; 2],
    /// The bit-parallel LCS and its matches.
    lcs: crate::align::Lcs,
    matched: Vec<(u32, u32)>,
    /// Scratch of the unique-token anchors ([`Lis`]).
    lis: Lis,
}

impl Differ {
    pub fn new() -> Differ {
        Differ::default()
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
        ] {
            if v.capacity() > keep {
                *v = Vec::new();
            }
        }
        if self.top_a.capacity() > keep {
            self.top_a = Vec::new();
        }
        if self.matched.capacity() > keep {
            self.matched = Vec::new();
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
        let floor = self.floor;
        // The token bound is kept as the lists are pruned: each side's bytes
        // found in the other, plus what is left to look at, bound the LCS.
        // A pair that cannot reach the floor stops at the token that makes
        // it so (most candidates of a site's pages sharing a theme do),
        // before the rest of b is looked up and before a's pass.
        self.pb.clear();
        self.pb_idx.clear();
        let mut wb = Weights::default();
        let size_b = b.starts.last().copied().unwrap_or(0);
        for (j, h) in b.hashes.iter().enumerate() {
            if let Some(&id) = self.map.get(h) {
                self.stamp[id as usize] = no;
                self.pb.push(id);
                self.pb_idx.push(j as u32);
                wb.add(b.bytes(j, 1));
            } else if floor > 0 && wb.sum + (size_b - b.starts[j + 1]) < floor {
                return Comparison::stopped(wb.sum + (size_b - b.starts[j + 1]));
            }
        }
        self.pa.clear();
        self.pa_idx.clear();
        let mut wa = Weights::default();
        let size_a = a.starts.last().copied().unwrap_or(0);
        for (i, &id) in self.a_ids.iter().enumerate() {
            if self.stamp[id as usize] == no {
                self.pa.push(id);
                self.pa_idx.push(i as u32);
                wa.add(a.bytes(i, 1));
            } else if floor > 0 && wa.sum + (size_a - a.starts[i + 1]) < floor {
                return Comparison::stopped(wa.sum + (size_a - a.starts[i + 1]));
            }
        }
        if floor > 0 {
            self.weights = [wa, wb];
            let bound = wa.sum.min(wb.sum);
            if bound < floor {
                return Comparison::stopped(bound);
            }
        }
        self.align(a, b, want_regions)
    }

    /// Align the pruned lists of a pair that can reach the floor: the
    /// common prefix and suffix as they are, the middle by [`choose`]'s
    /// algorithm; runs and bytes through [`Runs`].
    fn align(&mut self, a: &Tokens, b: &Tokens, want_regions: bool) -> Comparison {
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
        // The lines both files start and end with are matched as they are
        // (an LCS can always take them); the middle is aligned.
        let (n, m) = (self.pa.len(), self.pb.len());
        let pre = common_prefix(&self.pa, &self.pb);
        let suf = common_prefix_rev(&self.pa[pre..], &self.pb[pre..]);
        let (ma, mb) = (&self.pa[pre..n - suf], &self.pb[pre..m - suf]);
        let ids = self.stamp.len();
        let _ = hook.equal(0, 0, pre);
        // One side's middle a subsequence of the other's (a licence header
        // and its few shared lines inside a larger file; two locales of a
        // catalog whose shared lines come in the same order): all of its
        // tokens are the LCS, the one figure any alignment gives, found in
        // one pass. For the figure only: a view's runs come from the
        // alignment below, so that its choice among equally long
        // subsequences stays the one docs/formats.md describes.
        let contained = !want_regions
            && (embed(ma, mb, &mut self.matched, false) || embed(mb, ma, &mut self.matched, true));
        if contained {
            for &(i, j) in &self.matched {
                let _ = hook.equal(pre + i as usize, pre + j as usize, 1);
            }
        }
        match (!contained).then(|| choose(ma, mb, ids, &mut self.lis)) {
            None => {}
            Some(Align::BitParallel) => {
                let floor = self.floor;
                let (tops, pa_idx, pb_idx) = (&mut self.top_a, &self.pa_idx, &self.pb_idx);
                let [wa, wb] = self.weights;
                let mut below = None;
                self.matched.clear();
                self.lcs.matches_if(ma, mb, ids, &mut self.matched, |l| {
                    let l = pre + l + suf;
                    if floor == 0 || wa.top_at_least(n, l, floor) && wb.top_at_least(m, l, floor) {
                        return true;
                    }
                    let bound = top_bytes(tops, pa_idx, a, l).min(top_bytes(tops, pb_idx, b, l));
                    below = (bound < floor).then_some(bound);
                    below.is_none()
                });
                if let Some(bound) = below {
                    return Comparison {
                        common: bound,
                        below: true,
                        in_diff: true,
                        ..Comparison::default()
                    };
                }
                for &(i, j) in &self.matched {
                    let _ = hook.equal(pre + i as usize, pre + j as usize, 1);
                }
            }
            Some(Align::Myers) => {
                let _ = similar::algorithms::myers::diff(
                    &mut hook,
                    &self.pa,
                    pre..n - suf,
                    &self.pb,
                    pre..m - suf,
                );
            }
            Some(Align::Anchors) => {
                for &(i, j) in self.lis.run(ma, mb, ids) {
                    let _ = hook.equal(pre + i, pre + j, 1);
                }
                hook.out.exact = false;
            }
        }
        let _ = hook.equal(n - suf, m - suf, suf);
        hook.flush();
        hook.out
    }
}

/// Whether `short` is a subsequence of `long`; if so, its tokens' positions
/// matched greedily (each at the first place left in `long`) in `out`, as
/// (position in short, position in long), or the other way round when
/// `swap`. O(|long|); false at once when `short` is the longer.
pub(super) fn embed(short: &[u32], long: &[u32], out: &mut Vec<(u32, u32)>, swap: bool) -> bool {
    out.clear();
    if short.len() > long.len() {
        return false;
    }
    let mut j = 0;
    for (i, &t) in short.iter().enumerate() {
        let Some(k) = long[j..].iter().position(|&x| x == t) else {
            return false;
        };
        j += k;
        out.push(if swap {
            (j as u32, i as u32)
        } else {
            (i as u32, j as u32)
        });
        j += 1;
    }
    true
}

/// How the middle of a pair (after its common prefix and suffix) is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Align {
    /// Bit-parallel LCS ([`crate::align::Lcs`]): cost `⌈n/64⌉·m`.
    BitParallel,
    /// Myers (`similar`): cost `O((n+m)·D)`, cheaper when D is small.
    Myers,
    /// Too long for either within its budget: the anchors' common
    /// subsequence, a lower bound (status `lower-bound`).
    Anchors,
}

/// Pairs whose bit-parallel cost is under this many word operations
/// (~0.65 ns each: at most ~170 µs, two catalogs of 3,000 lines) are
/// aligned bit-parallel without looking further: the anchors that would
/// pick Myers cost a sizeable share of such a pair (a quarter of the time
/// on generated catalogs at 2^14).
const SMALL_COST: u64 = 1 << 18;

/// Myers' steps cost about this many bit-parallel word operations each (a
/// step is a diagonal probe with a compare and a branch, a word operation
/// four arithmetic instructions over sequential memory): an estimate, and
/// only the choice between two exact algorithms depends on it.
const MYERS_STEP: u64 = 4;

/// The cheaper exact algorithm for `ma` × `mb`, from the bit-parallel cost
/// and an upper bound of Myers' (the edit distance is at most the tokens
/// outside the anchors' common subsequence). Depends only on the data.
pub(super) fn choose(ma: &[u32], mb: &[u32], ids: usize, lis: &mut Lis) -> Align {
    let bp = crate::align::Lcs::cost(ma.len(), mb.len());
    if bp <= SMALL_COST {
        return Align::BitParallel;
    }
    let n = (ma.len() + mb.len()) as u64;
    let d_bound = n - 2 * lis.run(ma, mb, ids).len() as u64;
    let myers = n.saturating_mul(d_bound);
    if myers.saturating_mul(MYERS_STEP) < bp {
        Align::Myers
    } else if bp <= BIT_BUDGET {
        Align::BitParallel
    } else if myers <= MYERS_BUDGET {
        Align::Myers
    } else {
        Align::Anchors
    }
}

/// Length of the common prefix of two token lists.
fn common_prefix(x: &[u32], y: &[u32]) -> usize {
    x.iter().zip(y).take_while(|(p, q)| p == q).count()
}

/// Length of the common suffix of two token lists.
fn common_prefix_rev(x: &[u32], y: &[u32]) -> usize {
    x.iter()
        .rev()
        .zip(y.iter().rev())
        .take_while(|(p, q)| p == q)
        .count()
}

/// Total and largest bytes of the tokens a pair kept on one side.
#[derive(Debug, Clone, Copy, Default)]
struct Weights {
    sum: u64,
    max: u64,
}

impl Weights {
    /// One more token kept, of `x` bytes.
    #[inline]
    fn add(&mut self, x: u64) {
        self.sum += x;
        self.max = self.max.max(x);
    }

    /// Whether the `l` largest of these `len` tokens surely weigh `floor`:
    /// the `len - l` left out weigh at most `max` each. Settles most pairs
    /// whose LCS is most of their tokens without [`top_bytes`]' selection.
    fn top_at_least(&self, len: usize, l: usize, floor: u64) -> bool {
        let out = (len.saturating_sub(l) as u64).saturating_mul(self.max);
        self.sum.saturating_sub(out) >= floor
    }
}

/// Bytes of the `l` largest tokens at `idx` of `t`: no LCS of `l` tokens
/// weighs more. Linear (a selection, not a sort), `scratch` reused.
fn top_bytes(scratch: &mut Vec<u64>, idx: &[u32], t: &Tokens, l: usize) -> u64 {
    if l >= idx.len() {
        return idx.iter().map(|&i| t.bytes(i as usize, 1)).sum();
    }
    if l == 0 {
        return 0;
    }
    scratch.clear();
    scratch.extend(idx.iter().map(|&i| t.bytes(i as usize, 1)));
    scratch.select_nth_unstable_by(l - 1, |x, y| y.cmp(x));
    scratch[..l].iter().sum()
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
