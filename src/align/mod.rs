//! Longest common subsequences of token ids whose cost depends on the
//! lengths of the two sequences, not on how much they differ.
//!
//! fsim's exact figure is the bytes of a longest common subsequence (LCS) of
//! two files' lines. Myers' `O((N+M)·D)` diff is fast when two files differ
//! by a few lines and slow exactly where the line source sends pairs: two
//! locales of one translation catalog, slices that overlap only in part.
//! [`Lcs`] computes an LCS with the bit-parallel algorithm of Allison & Dix
//! (1986) in Hyyrö's formulation (2004): the row of the dynamic programme
//! for one token of b is a bit vector over the tokens of a, and one row
//! costs `⌈n/64⌉` word operations (an and, an add, an and-not, an or),
//! whatever the distance, so a pair costs `⌈n/64⌉·m` of them.
//!
//! **Traceback.** The row vectors of a block of the problem are kept (one
//! bit per cell); the path is read back from the last cell with one bit
//! test per step: bit `i-1` of row `j` set means `L[i][j] = L[i-1][j]`
//! (token `a[i-1]` is skipped); clear, the tokens are equal and `a[i-1]`,
//! `b[j-1]` are matched when they are the same token, otherwise `b[j-1]` is
//! skipped. Problems whose rows would not fit in [`BLOCK_WORDS`] are split
//! in the middle of b as Hirschberg does (a forward pass over the first
//! half, a backward one over the second, the best split of a from the two
//! last rows, the smallest on ties), so memory is `O(n + m + BLOCK_WORDS)`
//! words and the cost at most twice that of one pass per level that splits.
//!
//! **Which LCS.** Among common subsequences of the greatest length there
//! may be several, with different bytes. The one returned is fixed by the
//! rules above and by the constant [`BLOCK_WORDS`] only (never by timing,
//! threads or memory), so a figure is reproducible; docs/formats.md says
//! how it compares with Myers' choice.
//!
//! **Match vectors.** A token of a that occurs often has its bit vector
//! built once (dense); a rare one (fewer than a quarter of a row's words
//! occurrences) has its bits set into a zeroed scratch row for the one step
//! that needs them and cleared after, so the vectors take at most ~4 words
//! per token of a, however many distinct tokens a has.

/// Words of row vectors kept for one traceback block (4 MiB: two catalogs
/// of 5,000 lines fit): larger problems are split (Hirschberg). A
/// constant, so that the subsequence chosen among equally long ones never
/// depends on a setting.
pub const BLOCK_WORDS: usize = 1 << 19;

/// Row words kept between problems (512 KiB); a larger block's rows are
/// given back, so that idle state stays small.
const ROWS_KEEP: usize = 1 << 16;

/// Reusable state of the bit-parallel LCS (buffers kept between pairs).
#[derive(Default)]
pub struct Lcs {
    /// Per token id: its slot in the match vectors (`NONE`: not in a).
    slot_of: Vec<u32>,
    /// Per slot: occurrences in a, then (dense slots) the row's offset in
    /// `dense`, or `NONE` for a sparse slot.
    count: Vec<u32>,
    dense_at: Vec<u32>,
    /// Sparse slots: positions in a, grouped by slot (`occ_start[s]..`).
    occ_start: Vec<u32>,
    occ: Vec<u32>,
    dense: Vec<u64>,
    /// A zeroed row that sparse slots are set into for one step.
    scratch: Vec<u64>,
    /// Current row, and the rows kept for a traceback.
    row: Vec<u64>,
    rows: Vec<u64>,
    /// Hirschberg: the prefix LCS values of the forward and backward rows.
    forward: Vec<u32>,
    backward: Vec<u32>,
    /// Token ids touched in `slot_of` (reset after each build).
    touched: Vec<u32>,
    /// Reversed copy of a, for backward passes.
    rev_a: Vec<u32>,
    /// Tests only: a smaller block, to exercise the splits (0: [`BLOCK_WORDS`]).
    #[cfg(test)]
    block: usize,
}

const NONE: u32 = u32::MAX;

fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

impl Lcs {
    pub fn new() -> Lcs {
        Lcs::default()
    }

    /// Word operations of one forward pass over `a` × `b`: the cost model
    /// callers compare with other algorithms'.
    pub fn cost(n: usize, m: usize) -> u64 {
        words_for(n) as u64 * m as u64
    }

    /// Most bytes of rows kept for a problem of `n` × `m` tokens (callers
    /// that budget memory reserve it): one block at most.
    pub fn rows_bytes(n: u64, m: u64) -> u64 {
        n.div_ceil(64).saturating_mul(m).min(BLOCK_WORDS as u64) * 8
    }

    /// Length of an LCS of `a` and `b` (token ids below `ids`), one forward
    /// pass, no traceback.
    pub fn length(&mut self, a: &[u32], b: &[u32], ids: usize) -> usize {
        if a.is_empty() || b.is_empty() {
            return 0;
        }
        self.build(a, ids);
        self.forward_pass(b.iter().copied(), a.len(), false);
        self.reset_slots();
        zeros(&self.row, a.len())
    }

    /// The matched positions `(i, j)` of one LCS of `a` and `b` (token ids
    /// below `ids`), increasing, appended to `out`.
    pub fn matches(&mut self, a: &[u32], b: &[u32], ids: usize, out: &mut Vec<(u32, u32)>) {
        self.matches_if(a, b, ids, out, |_| true);
    }

    /// [`Lcs::matches`], once `wanted` has accepted the LCS length: the
    /// length is known after the forward pass, so a caller that needs only
    /// pairs above a threshold stops before the traceback. Returns the
    /// length; `out` is left as it was when `wanted` refuses.
    pub fn matches_if(
        &mut self,
        a: &[u32],
        b: &[u32],
        ids: usize,
        out: &mut Vec<(u32, u32)>,
        wanted: impl FnOnce(usize) -> bool,
    ) -> usize {
        let len = if self.fits(a.len(), b.len()) {
            // One block: the length comes with the kept rows.
            if a.is_empty() || b.is_empty() {
                wanted(0);
                return 0;
            }
            self.forward_kept(a, b, ids);
            let len = zeros(&self.row, a.len());
            if wanted(len) {
                self.traceback(a, b, 0, 0, out);
            }
            len
        } else {
            let len = self.length(a, b, ids);
            if wanted(len) {
                self.solve(a, b, 0, 0, ids, out);
            }
            len
        };
        if self.rows.capacity() > ROWS_KEEP {
            self.rows = Vec::new();
        }
        len
    }

    /// Whether an `n` × `m` problem is one traceback block.
    fn fits(&self, n: usize, m: usize) -> bool {
        #[cfg(test)]
        let limit = if self.block > 0 {
            self.block
        } else {
            BLOCK_WORDS
        };
        #[cfg(not(test))]
        let limit = BLOCK_WORDS;
        words_for(n).saturating_mul(m) <= limit || m <= 1
    }

    fn solve(
        &mut self,
        a: &[u32],
        b: &[u32],
        off_a: u32,
        off_b: u32,
        ids: usize,
        out: &mut Vec<(u32, u32)>,
    ) {
        if a.is_empty() || b.is_empty() {
            return;
        }
        if self.fits(a.len(), b.len()) {
            self.forward_kept(a, b, ids);
            self.traceback(a, b, off_a, off_b, out);
            return;
        }
        let mid = b.len() / 2;
        let cut = self.split(a, &b[..mid], &b[mid..], ids);
        self.solve(&a[..cut], &b[..mid], off_a, off_b, ids, out);
        self.solve(
            &a[cut..],
            &b[mid..],
            off_a + cut as u32,
            off_b + mid as u32,
            ids,
            out,
        );
    }

    /// Where to cut a so that an LCS of `a` × (`b1` ++ `b2`) is an LCS of
    /// `a[..cut]` × `b1` followed by one of `a[cut..]` × `b2` (the smallest
    /// such cut).
    fn split(&mut self, a: &[u32], b1: &[u32], b2: &[u32], ids: usize) -> usize {
        let n = a.len();
        self.build(a, ids);
        self.forward_pass(b1.iter().copied(), n, false);
        self.reset_slots();
        // forward[i] = LCS(a[..i], b1).
        prefix_zeros(&self.row, n, &mut self.forward);
        self.rev_a.clear();
        self.rev_a.extend(a.iter().rev());
        let rev_a = std::mem::take(&mut self.rev_a);
        self.build(&rev_a, ids);
        self.forward_pass(b2.iter().rev().copied(), n, false);
        self.reset_slots();
        self.rev_a = rev_a;
        // backward[k] = LCS(a[n-k..], b2), from the reversed pass's row.
        prefix_zeros(&self.row, n, &mut self.backward);
        let mut best = (0u32, 0usize);
        for (cut, f) in self.forward.iter().enumerate() {
            let total = f + self.backward[n - cut];
            if total > best.0 || cut == 0 {
                best = (total, cut);
            }
        }
        best.1
    }

    /// One block's forward pass, every row kept.
    fn forward_kept(&mut self, a: &[u32], b: &[u32], ids: usize) {
        self.build(a, ids);
        self.rows.clear();
        self.forward_pass(b.iter().copied(), a.len(), true);
        self.reset_slots();
    }

    /// The path back from the last cell of the rows just kept.
    fn traceback(
        &mut self,
        a: &[u32],
        b: &[u32],
        off_a: u32,
        off_b: u32,
        out: &mut Vec<(u32, u32)>,
    ) {
        let words = words_for(a.len());
        let start = out.len();
        let (mut i, mut j) = (a.len(), b.len());
        while i > 0 && j > 0 {
            let row = &self.rows[(j - 1) * words..j * words];
            if row[(i - 1) / 64] >> ((i - 1) % 64) & 1 == 1 {
                i -= 1;
            } else if a[i - 1] == b[j - 1] {
                i -= 1;
                j -= 1;
                out.push((off_a + i as u32, off_b + j as u32));
            } else {
                j -= 1;
            }
        }
        out[start..].reverse();
    }

    /// The match vectors of `a` (token ids below `ids`).
    fn build(&mut self, a: &[u32], ids: usize) {
        let n = a.len();
        let words = words_for(n);
        if self.slot_of.len() < ids {
            self.slot_of.resize(ids, NONE);
        }
        self.count.clear();
        self.touched.clear();
        for &t in a {
            let s = &mut self.slot_of[t as usize];
            if *s == NONE {
                *s = self.count.len() as u32;
                self.count.push(0);
                self.touched.push(t);
            }
            self.count[*s as usize] += 1;
        }
        // Dense when setting its bits each step would cost more than a
        // quarter of the step's words.
        let dense_from = (words / 4).max(1) as u32;
        self.dense_at.clear();
        self.occ_start.clear();
        let mut dense_rows = 0u32;
        let mut occ_total = 0u32;
        for &c in &self.count {
            if c >= dense_from {
                self.dense_at.push(dense_rows);
                self.occ_start.push(occ_total);
                dense_rows += 1;
            } else {
                self.dense_at.push(NONE);
                self.occ_start.push(occ_total);
                occ_total += c;
            }
        }
        self.occ_start.push(occ_total);
        self.dense.clear();
        self.dense.resize(dense_rows as usize * words, 0);
        self.occ.clear();
        self.occ.resize(occ_total as usize, 0);
        // Fill: `count` is reused as the fill cursor of each sparse slot.
        self.count.iter_mut().for_each(|c| *c = 0);
        for (i, &t) in a.iter().enumerate() {
            let s = self.slot_of[t as usize] as usize;
            match self.dense_at[s] {
                NONE => {
                    let at = self.occ_start[s] + self.count[s];
                    self.occ[at as usize] = i as u32;
                    self.count[s] += 1;
                }
                d => self.dense[d as usize * words + i / 64] |= 1 << (i % 64),
            }
        }
        self.scratch.clear();
        self.scratch.resize(words, 0);
    }

    fn reset_slots(&mut self) {
        for &t in &self.touched {
            self.slot_of[t as usize] = NONE;
        }
        self.touched.clear();
    }

    /// Run the rows of `b` over the vectors built for a (`n` tokens),
    /// leaving the last row in `row` (and every row in `rows` when `keep`).
    /// A bit of the row is clear where the LCS grows along a.
    fn forward_pass(&mut self, b: impl Iterator<Item = u32>, n: usize, keep: bool) {
        let words = words_for(n);
        self.row.clear();
        self.row.resize(words, !0);
        if keep {
            self.rows.reserve(words * b.size_hint().0);
        }
        for t in b {
            let s = self.slot_of.get(t as usize).copied().unwrap_or(NONE);
            if s != NONE {
                let s = s as usize;
                match self.dense_at[s] {
                    NONE => {
                        let occ =
                            &self.occ[self.occ_start[s] as usize..self.occ_start[s + 1] as usize];
                        for &p in occ {
                            self.scratch[p as usize / 64] |= 1 << (p % 64);
                        }
                        step(&mut self.row, &self.scratch);
                        for &p in occ {
                            self.scratch[p as usize / 64] = 0;
                        }
                    }
                    d => {
                        let d = d as usize * words;
                        step(&mut self.row, &self.dense[d..d + words]);
                    }
                }
            }
            if keep {
                self.rows.extend_from_slice(&self.row);
            }
        }
    }
}

/// One row: `V' = (V + (V & M)) | (V & !M)`, the add carried across words.
///
/// Four words a turn: the carry then stays in the processor's flag from
/// one add to the next, where a word a turn saved and restored it each
/// time (twice as fast from ~50 words, two catalogs of 3,000 lines; the
/// same for a few words).
#[inline]
fn step(v: &mut [u64], m: &[u64]) {
    let n = v.len().min(m.len());
    let (v, m) = (&mut v[..n], &m[..n]);
    let mut carry = false;
    let mut vs = v.chunks_exact_mut(4);
    let mut ms = m.chunks_exact(4);
    for (x, mw) in (&mut vs).zip(&mut ms) {
        let (x0, x1, x2, x3) = (x[0], x[1], x[2], x[3]);
        let (s0, c) = add_carry(x0, x0 & mw[0], carry);
        let (s1, c) = add_carry(x1, x1 & mw[1], c);
        let (s2, c) = add_carry(x2, x2 & mw[2], c);
        let (s3, c) = add_carry(x3, x3 & mw[3], c);
        carry = c;
        x[0] = s0 | (x0 & !mw[0]);
        x[1] = s1 | (x1 & !mw[1]);
        x[2] = s2 | (x2 & !mw[2]);
        x[3] = s3 | (x3 & !mw[3]);
    }
    for (x, &mw) in vs.into_remainder().iter_mut().zip(ms.remainder()) {
        let (s, c) = add_carry(*x, *x & mw, carry);
        carry = c;
        *x = s | (*x & !mw);
    }
}

/// `a + b + carry` and its carry out (`u64::carrying_add`, stable only
/// from Rust 1.91); the compiler makes it one add with carry.
#[inline(always)]
fn add_carry(a: u64, b: u64, carry: bool) -> (u64, bool) {
    let (s1, c1) = a.overflowing_add(b);
    let (s2, c2) = s1.overflowing_add(carry as u64);
    (s2, c1 | c2)
}

/// Clear bits among the first `n` of `row`: the LCS length.
fn zeros(row: &[u64], n: usize) -> usize {
    let full = n / 64;
    let mut z: usize = row[..full].iter().map(|w| w.count_zeros() as usize).sum();
    if !n.is_multiple_of(64) {
        let mask = (1u64 << (n % 64)) - 1;
        z += (!row[full] & mask).count_ones() as usize;
    }
    z
}

/// `out[k]` = clear bits among the first `k` of `row`, for k in 0..=n: the
/// LCS of the first k tokens of the pass's a with its b.
fn prefix_zeros(row: &[u64], n: usize, out: &mut Vec<u32>) {
    out.clear();
    out.reserve(n + 1);
    let mut l = 0u32;
    out.push(0);
    for i in 0..n {
        l += (row[i / 64] >> (i % 64) & 1 == 0) as u32;
        out.push(l);
    }
}

#[cfg(test)]
mod tests;
