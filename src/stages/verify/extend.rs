//! The byte-level measure of binary pairs: the runs of matched
//! pieces, extended byte by byte into the unmatched bytes around them, and
//! the gaps left between them filled.
//!
//! The LCS over content-defined pieces alone counts a piece only when it is
//! identical in both files, so an edit costs the whole pieces it touches
//! (~64 bytes each side), and how much depends on where the chunker cut: a
//! figure nobody can check with `cmp`. The measure counts bytes, each of
//! them equal in both files, in runs a reviewer can check one by one
//! (docs/formats.md, "verified pairs"; `scripts/check-runs.py`). It costs
//! a few passes over the bytes of the gaps: linear, whatever the sizes.
//!
//! The definition ([`extend_runs`]):
//!
//! 1. **Anchors**: the runs of matched pieces (the piece LCS), between an
//!    empty run at the start of both files and one at their end.
//! 2. **Extension**: from first to last, each anchor grows to the left
//!    while the bytes before it agree and it does not reach the run before
//!    it (as already grown), then to the right while the bytes after it
//!    agree and it does not reach the next anchor's start.
//! 3. **Gaps**: between two consecutive runs, the bytes left in a and in b.
//!    A gap of the same length in both (the runs around it are on the same
//!    diagonal: a substitution) counts its bytes equal at the same place,
//!    as `cmp -l` shows them: each maximal stretch of them is a run; but
//!    not when no piece matched at all (the gap then lies between the
//!    files' common start and end, which anchor nothing). A gap of different lengths, each under
//!    [`GAP_MAX`] bytes, is anchored again by the [`K`]-byte strings that
//!    occur once in each side of it (the longest chain of them in order
//!    in both), which then go through 2 and 3 inside the gap, up to
//!    [`DEPTH`] times.
//! 4. Runs that touch in both files are one run. Bytes in common is the
//!    sum of their lengths.
//!
//! The result is a chain of identical byte runs, in the same order and
//! disjoint in both files, each ending on both sides at a byte that
//! differs, at the end of a file, or against the next run in one of the
//! files ([`check_runs`] checks exactly that). It is at most the LCS of
//! the bytes, never less than the piece LCS, and equal to the file size
//! minus the bytes `cmp -l` lists when the files differ by substitutions
//! amid matched pieces.

use super::Region;

/// Length of the strings that anchor a gap (step 3): long enough that
/// random bytes seldom repeat one, short enough to anchor between edits a
/// few dozen bytes apart.
pub const K: usize = 8;

/// Largest gap side anchored again (step 3): its sieves cost a byte per
/// byte of the gap, its table 48 bytes per string both sides hold.
pub const GAP_MAX: usize = 1 << 18;

/// Levels of re-anchoring inside gaps.
pub const DEPTH: u32 = 3;

/// Length of the common prefix of `a` and `b` (8 bytes at a time).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().expect("8 bytes"));
        let y = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if x != y {
            return i + ((x ^ y).trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common suffix of `a` and `b`.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// Grow the anchors `anchors` (in order and disjoint in both files, inside
/// `lo..hi`) byte by byte (step 2), bounded by `lo` and `hi`; empty anchors
/// at `lo` and `hi` grow too. Returns the runs, possibly empty ones.
fn grow(anchors: &[Region], a: &[u8], b: &[u8], lo: (u64, u64), hi: (u64, u64)) -> Vec<Region> {
    let at = |(off_a, off_b): (u64, u64)| Region {
        off_a,
        off_b,
        len: 0,
    };
    let all: Vec<Region> = std::iter::once(at(lo))
        .chain(anchors.iter().copied())
        .chain(std::iter::once(at(hi)))
        .collect();
    let mut out: Vec<Region> = Vec::with_capacity(all.len());
    for k in 0..all.len() {
        let r = all[k];
        let (lo_a, lo_b) = out
            .last()
            .map(|p| (p.off_a + p.len, p.off_b + p.len))
            .unwrap_or(lo);
        let left = common_suffix(
            &a[lo_a as usize..r.off_a as usize],
            &b[lo_b as usize..r.off_b as usize],
        ) as u64;
        let (ea, eb) = (r.off_a + r.len, r.off_b + r.len);
        let (hi_a, hi_b) = all.get(k + 1).map(|n| (n.off_a, n.off_b)).unwrap_or(hi);
        let right = common_prefix(
            &a[ea as usize..hi_a as usize],
            &b[eb as usize..hi_b as usize],
        ) as u64;
        out.push(Region {
            off_a: r.off_a - left,
            off_b: r.off_b - left,
            len: left + r.len + right,
        });
    }
    out
}

/// Append `r` to the chain `out`, merged with the last run if they touch
/// in both files.
fn push(out: &mut Vec<Region>, r: Region) {
    if r.len == 0 {
        return;
    }
    match out.last_mut() {
        Some(p) if p.off_a + p.len == r.off_a && p.off_b + p.len == r.off_b => p.len += r.len,
        _ => out.push(r),
    }
}

/// The runs of `grown` with their gaps filled (step 3), onto `out`.
/// `whole`: the gap is both files entire (no aligned fill).
fn fill(grown: &[Region], a: &[u8], b: &[u8], depth: u32, whole: bool, out: &mut Vec<Region>) {
    for (k, r) in grown.iter().enumerate() {
        if k > 0 {
            let p = grown[k - 1];
            let (a0, b0) = (p.off_a + p.len, p.off_b + p.len);
            gap(a, b, (a0, b0), (r.off_a, r.off_b), depth, whole, out);
        }
        push(out, *r);
    }
}

/// Fill the gap `lo..hi` (step 3).
fn gap(
    a: &[u8],
    b: &[u8],
    lo: (u64, u64),
    hi: (u64, u64),
    depth: u32,
    whole: bool,
    out: &mut Vec<Region>,
) {
    let (na, nb) = ((hi.0 - lo.0) as usize, (hi.1 - lo.1) as usize);
    if na == 0 || nb == 0 {
        return;
    }
    let (ga, gb) = (
        &a[lo.0 as usize..hi.0 as usize],
        &b[lo.1 as usize..hi.1 as usize],
    );
    if na == nb && !whole {
        // A substitution: the bytes equal at the same place, as `cmp -l`.
        let mut i = 0;
        while i < na {
            let n = common_prefix(&ga[i..], &gb[i..]);
            if n > 0 {
                push(
                    out,
                    Region {
                        off_a: lo.0 + i as u64,
                        off_b: lo.1 + i as u64,
                        len: n as u64,
                    },
                );
                i += n;
            } else {
                i += 1;
            }
        }
        return;
    }
    if depth == 0 || na > GAP_MAX || nb > GAP_MAX {
        return;
    }
    let anchors: Vec<Region> = unique_strings(ga, gb)
        .into_iter()
        .map(|r| Region {
            off_a: r.off_a + lo.0,
            off_b: r.off_b + lo.1,
            len: r.len,
        })
        .collect();
    if anchors.is_empty() {
        return;
    }
    let grown = grow(&anchors, a, b, lo, hi);
    fill(&grown, a, b, depth - 1, false, out);
}

/// The longest chain, in order in both, of the [`K`]-byte strings that
/// occur once in `a` and once in `b`, as disjoint runs (overlapping
/// strings on one diagonal merged, others crossing the run before dropped).
fn unique_strings(a: &[u8], b: &[u8]) -> Vec<Region> {
    if a.len() < K || b.len() < K {
        return Vec::new();
    }
    chain_of(Grams::of(a, b).unique())
}

/// A string that occurs more than once in a gap's side `a`.
const MANY: u32 = u32::MAX - 1;

/// A slot no string holds.
const EMPTY: u32 = u32::MAX;

/// One [`K`]-byte string of a gap: where it is in `a` (or [`MANY`]), how
/// many times in `b` (up to 2) and where it was last seen there.
#[derive(Clone, Copy)]
struct Slot {
    key: u64,
    a: u32,
    times_b: u32,
    b: u32,
}

/// The [`K`]-byte strings of a gap's side `a` that side `b` may hold (its
/// [`Sieve`] says so), counted in `b`: open addressing with linear probing
/// over one array. This pass was 60 % of fsim-verify's time when 1 % of
/// the releases tree was edited as bytes (its catalogs, broken by the
/// edit and then still viewed, as binary: 277,654 gaps, most of 4-64 KiB,
/// nine in ten of their strings in one side only); the strings kept out
/// leave a table a fifth the size (fsim-verify there 5.2 -> 4.8 CPU-s,
/// the same runs). Such catalogs have no view since `views=6`; any binary
/// pair with long gaps still costs this pass.
struct Grams {
    slots: Vec<Slot>,
    shift: u32,
}

impl Grams {
    /// The table of those of `a`'s strings `b` may hold (at most half
    /// full), counted in `b`.
    fn of(a: &[u8], b: &[u8]) -> Grams {
        let in_b = Sieve::of(b);
        let kept: Vec<u32> = (0..=a.len() - K)
            .filter(|&i| in_b.may_hold(key(a, i)))
            .map(|i| i as u32)
            .collect();
        let size = (2 * kept.len()).next_power_of_two().max(16);
        let empty = Slot {
            key: 0,
            a: EMPTY,
            times_b: 0,
            b: 0,
        };
        let mut t = Grams {
            slots: vec![empty; size],
            shift: 64 - size.trailing_zeros(),
        };
        for i in kept {
            let k = key(a, i as usize);
            let at = t.find(k);
            let s = &mut t.slots[at];
            (s.key, s.a) = (k, if s.a == EMPTY { i } else { MANY });
        }
        let in_a = Sieve::of(a);
        for j in 0..=b.len() - K {
            let k = key(b, j);
            if !in_a.may_hold(k) {
                continue;
            }
            let at = t.find(k);
            let s = &mut t.slots[at];
            if s.a != EMPTY {
                s.times_b = (s.times_b + 1).min(2);
                s.b = j as u32;
            }
        }
        t
    }

    /// The slot of string `k`: the one that holds it, or the empty one
    /// where it would go.
    #[inline]
    fn find(&self, k: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = (mix(k) >> self.shift) as usize;
        while self.slots[i].a != EMPTY && self.slots[i].key != k {
            i = (i + 1) & mask;
        }
        i
    }

    /// (position in a, position in b) of the strings once in each, in b
    /// order.
    fn unique(self) -> Vec<(u32, u32)> {
        let mut seq: Vec<(u32, u32)> = self
            .slots
            .iter()
            .filter(|s| s.a < MANY && s.times_b == 1)
            .map(|s| (s.a, s.b))
            .collect();
        seq.sort_unstable_by_key(|e| e.1);
        seq
    }
}

/// The [`K`]-byte string of `s` at `i`, as a number.
#[inline]
fn key(s: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(s[i..i + K].try_into().expect("K bytes"))
}

/// `k` hashed: its top bits place it.
#[inline]
fn mix(k: u64) -> u64 {
    (k ^ (k >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Eight bits per string of a side, one set for each string: a string
/// whose bit is clear is not in that side.
struct Sieve {
    bits: Vec<u64>,
    shift: u32,
}

impl Sieve {
    fn of(s: &[u8]) -> Sieve {
        let size = (8 * (s.len() - K + 1)).next_power_of_two().max(64);
        let mut sieve = Sieve {
            bits: vec![0; size / 64],
            shift: 64 - size.trailing_zeros(),
        };
        for j in 0..=s.len() - K {
            let at = sieve.at(key(s, j));
            sieve.bits[at / 64] |= 1 << (at % 64);
        }
        sieve
    }

    #[inline]
    fn at(&self, k: u64) -> usize {
        (mix(k).rotate_left(32) >> self.shift) as usize
    }

    #[inline]
    fn may_hold(&self, k: u64) -> bool {
        let at = self.at(k);
        self.bits[at / 64] & (1 << (at % 64)) != 0
    }
}

/// The longest chain of `seq` (pairs of positions in a and b, in b order)
/// increasing in a too, as disjoint runs.
fn chain_of(seq: Vec<(u32, u32)>) -> Vec<Region> {
    // Longest increasing subsequence of the a positions.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev = vec![usize::MAX; seq.len()];
    for (k, &(x, _)) in seq.iter().enumerate() {
        let p = tails.partition_point(|&t| seq[t].0 < x);
        if p > 0 {
            prev[k] = tails[p - 1];
        }
        if p == tails.len() {
            tails.push(k);
        } else {
            tails[p] = k;
        }
    }
    let mut chain = Vec::with_capacity(tails.len());
    let mut k = tails.last().copied().unwrap_or(usize::MAX);
    while k != usize::MAX {
        chain.push(seq[k]);
        k = prev[k];
    }
    chain.reverse();
    let mut out: Vec<Region> = Vec::new();
    for (i, j) in chain {
        let (i, j) = (i as u64, j as u64);
        match out.last_mut() {
            Some(r) if i - r.off_a == j - r.off_b && i <= r.off_a + r.len => {
                r.len = i + K as u64 - r.off_a;
            }
            Some(r) if i < r.off_a + r.len || j < r.off_b + r.len => {}
            _ => out.push(Region {
                off_a: i,
                off_b: j,
                len: K as u64,
            }),
        }
    }
    out
}

/// The measure's runs (module doc) of the bytes `a` and `b`, from the
/// matched runs `runs` (in order and disjoint in both files, as the piece
/// diff gives them), in place; returns the bytes in common.
pub fn extend_runs(runs: &mut Vec<Region>, a: &[u8], b: &[u8]) -> u64 {
    debug_assert!(runs
        .windows(2)
        .all(|w| w[0].off_a + w[0].len <= w[1].off_a && w[0].off_b + w[0].len <= w[1].off_b));
    let end = (a.len() as u64, b.len() as u64);
    let grown = grow(runs, a, b, (0, 0), end);
    let mut out = Vec::with_capacity(grown.len());
    // No piece matched: the one gap lies between the files' common start
    // and end, which anchor nothing, and their bytes equal at the same
    // place (if the sizes agree) are chance, not a substitution.
    let whole = runs.is_empty();
    fill(&grown, a, b, DEPTH, whole, &mut out);
    *runs = out;
    runs.iter().map(|r| r.len).sum()
}

/// Check that `runs` is a chain of the measure (module doc) over `a` and
/// `b` and return its bytes: what a reviewer checks, as a test oracle.
#[cfg(test)]
pub fn check_runs(runs: &[Region], a: &[u8], b: &[u8]) -> std::result::Result<u64, String> {
    let mut prev_a = 0u64;
    let mut prev_b = 0u64;
    let mut total = 0;
    for (k, r) in runs.iter().enumerate() {
        let (sa, sb, n) = (r.off_a as usize, r.off_b as usize, r.len as usize);
        if r.len == 0 || r.off_a < prev_a || r.off_b < prev_b {
            return Err(format!("run {k} {r:?} empty, out of order or overlapping"));
        }
        if a.get(sa..sa + n) != b.get(sb..sb + n) || sa + n > a.len() || sb + n > b.len() {
            return Err(format!("run {k} {r:?}: bytes differ"));
        }
        let left_blocked = sa as u64 == prev_a || sb as u64 == prev_b || a[sa - 1] != b[sb - 1];
        let (next_a, next_b) = runs
            .get(k + 1)
            .map(|n| (n.off_a as usize, n.off_b as usize))
            .unwrap_or((a.len(), b.len()));
        let right_blocked = sa + n == next_a || sb + n == next_b || a[sa + n] != b[sb + n];
        if !left_blocked || !right_blocked {
            return Err(format!("run {k} {r:?} is not maximal"));
        }
        prev_a = r.off_a + r.len;
        prev_b = r.off_b + r.len;
        total += r.len;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::hashing::MixedMap;
    use proptest::prelude::*;

    /// The unique strings as a `HashMap` finds them (the table's oracle).
    fn unique_by_map(a: &[u8], b: &[u8]) -> Vec<(u32, u32)> {
        let mut seen: MixedMap<u64, (u32, u32, u32)> = MixedMap::default();
        for i in 0..=a.len() - K {
            seen.entry(key(a, i))
                .and_modify(|e| e.0 = MANY)
                .or_insert((i as u32, 0, 0));
        }
        for j in 0..=b.len() - K {
            if let Some(e) = seen.get_mut(&key(b, j)) {
                e.1 += 1;
                e.2 = j as u32;
            }
        }
        let mut seq: Vec<(u32, u32)> = seen
            .values()
            .filter(|e| e.0 != MANY && e.1 == 1)
            .map(|e| (e.0, e.2))
            .collect();
        seq.sort_unstable_by_key(|e| e.1);
        seq
    }

    /// Bytes of a small alphabet (strings repeat) and `b` an edited `a`.
    fn sides() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
        (1u8..=255, proptest::collection::vec(any::<u8>(), 8..3000)).prop_flat_map(
            |(alphabet, raw)| {
                let a: Vec<u8> = raw.iter().map(|x| x % alphabet.max(2)).collect();
                let n = a.len();
                (
                    Just(a),
                    proptest::collection::vec((0..n, 0usize..40, any::<u8>()), 0..12),
                )
                    .prop_map(|(a, edits)| {
                        let mut b = a.clone();
                        for (at, cut, x) in edits {
                            let at = at.min(b.len());
                            let end = (at + cut).min(b.len());
                            b.splice(at..end, [x, x.wrapping_add(1)]);
                        }
                        (a, b)
                    })
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_table_finds_what_a_map_finds((a, b) in sides()) {
            prop_assume!(b.len() >= K);
            prop_assert_eq!(Grams::of(&a, &b).unique(), unique_by_map(&a, &b));
        }
    }

    #[test]
    fn strings_repeated_in_a_anchor_nothing() {
        let a = b"0123456789abcdef0123456789";
        let b = b"xx0123456789abcdefyy";
        // "01234567".."23456789" recur in a; "3456789a".."9abcdef0"... once.
        let seq = Grams::of(a, b).unique();
        assert!(seq.iter().all(|&(i, _)| (3..=9).contains(&i)), "{seq:?}");
        assert_eq!(seq.first(), Some(&(3, 5)));
        assert_eq!(
            unique_strings(a, b),
            vec![Region {
                off_a: 3,
                off_b: 5,
                len: 13
            }]
        );
    }
}
