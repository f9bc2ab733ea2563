//! Min-wise hashing (Broder; HP's Sketch_n; Manasse's refinements):
//!
//! * Sketch_n: n hash functions `h_i(x) = mix64(x ^ seed_i)` over the
//!   window fingerprints; keep each one's minimum, tagged with `i`. Two
//!   files agree at position i with probability equal to their resemblance.
//! * b-bit: the same, keeping only the low b bits of each minimum (tagged);
//!   agreement probability r + (1 - r) 2^-b, corrected by the estimator.
//! * one-permutation hashing: one hash, its range split into n bins, the
//!   minimum of each bin; an empty bin takes the value of the first
//!   non-empty bin to its right (circularly) mixed with the distance
//!   (densification by rotation, Shrivastava & Li 2014), so every file has
//!   n values and agreement is again unbiased for the resemblance.
//! * supershingles: the k × s sketch values cut into s runs of k, each run
//!   hashed to one value (Manasse): a run matches with probability r^k.

use super::rolling::{for_each_window, mix64};

/// The i-th seed of the hash family (SplitMix64 sequence).
fn seed(i: u32) -> u64 {
    mix64(0x736b_6574_6368_6e21u64.wrapping_add((i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)))
}

/// The n minima of the hash family over the windows of `data`, or None for
/// empty data.
fn minima(data: &[u8], w: usize, n: u32) -> Option<Vec<u64>> {
    if data.is_empty() {
        return None;
    }
    // Distinct fingerprints first: repeated windows cost one hash pass.
    let mut fps = Vec::with_capacity(data.len());
    for_each_window(data, w, |_, fp| fps.push(fp));
    fps.sort_unstable();
    fps.dedup();
    let seeds: Vec<u64> = (0..n).map(seed).collect();
    let mut mins = vec![u64::MAX; n as usize];
    for &fp in &fps {
        for (m, &s) in mins.iter_mut().zip(&seeds) {
            let h = mix64(fp ^ s);
            if h < *m {
                *m = h;
            }
        }
    }
    Some(mins)
}

/// Sketch_n, or b-bit minwise hashing when `bbits` is given.
pub(super) fn sketch(
    data: &[u8],
    w: usize,
    n: u32,
    bbits: Option<u32>,
    push: &mut impl FnMut(u32, u64),
) {
    let Some(mins) = minima(data, w, n) else {
        return;
    };
    let mask = match bbits {
        Some(b) if b < 64 => (1u64 << b) - 1,
        _ => u64::MAX,
    };
    for (i, m) in mins.into_iter().enumerate() {
        push(i as u32, m & mask);
    }
}

/// Seed of the one-permutation hash.
const ONE_PERM_SEED: u64 = 0x6f6e_6570_6572_6d21;

/// One-permutation hashing with n bins, densified by rotation.
pub(super) fn one_perm(data: &[u8], w: usize, n: u32, push: &mut impl FnMut(u32, u64)) {
    let n = n as usize;
    let mut bins = vec![u64::MAX; n];
    let mut any = false;
    for_each_window(data, w, |_, fp| {
        let h = mix64(fp ^ ONE_PERM_SEED);
        let bin = ((h as u128 * n as u128) >> 64) as usize;
        if h < bins[bin] {
            bins[bin] = h;
        }
        any = true;
    });
    if !any {
        return;
    }
    for j in 0..n {
        let (mut k, mut d) = (j, 0u64);
        while bins[k] == u64::MAX {
            k = (k + 1) % n;
            d += 1;
        }
        let v = if d == 0 {
            bins[k]
        } else {
            mix64(bins[k] ^ d.wrapping_mul(0xa076_1d64_78bd_642f))
        };
        push(j as u32, v);
    }
}

/// Supershingles: s hashes of runs of k sketch values.
pub(super) fn supershingles(
    data: &[u8],
    w: usize,
    k: u32,
    s: u32,
    push: &mut impl FnMut(u32, u64),
) {
    let Some(mins) = minima(data, w, k * s) else {
        return;
    };
    for (j, run) in mins.chunks(k as usize).enumerate() {
        let v = run.iter().fold(0x7375_7065_7273_6821u64, |h, &x| {
            mix64(h ^ x).rotate_left(17)
        });
        push(j as u32, v);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{edit, jaccard, text};
    use super::*;

    fn run(f: impl FnOnce(&mut dyn FnMut(u32, u64))) -> Vec<(u32, u64)> {
        let mut v = Vec::new();
        f(&mut |t, x| v.push((t, x)));
        v
    }

    #[test]
    fn sketch_shapes() {
        let d = text(30_000, 11);
        let s = run(|p| sketch(&d, 20, 100, None, &mut |t, x| p(t, x)));
        assert_eq!(s.len(), 100);
        assert!(s.iter().enumerate().all(|(i, &(t, _))| t == i as u32));
        let b = run(|p| sketch(&d, 20, 100, Some(4), &mut |t, x| p(t, x)));
        assert!(b.iter().zip(&s).all(|(x, y)| x.1 == y.1 & 15));
        assert!(run(|p| sketch(b"", 20, 100, None, &mut |t, x| p(t, x))).is_empty());
        let o = run(|p| one_perm(&d, 20, 100, &mut |t, x| p(t, x)));
        assert_eq!(o.len(), 100);
        // A tiny input fills one bin; densification fills the others.
        let o = run(|p| one_perm(b"tiny", 20, 16, &mut |t, x| p(t, x)));
        assert_eq!(o.len(), 16);
        let distinct: std::collections::HashSet<u64> = o.iter().map(|x| x.1).collect();
        assert_eq!(distinct.len(), 16);
        let ss = run(|p| supershingles(&d, 20, 14, 6, &mut |t, x| p(t, x)));
        assert_eq!(ss.len(), 6);
    }

    #[test]
    fn one_perm_agreement_is_unbiased() {
        // Average over many pairs of the agreement rate ≈ mean Jaccard.
        let (mut est, mut exact) = (0.0, 0.0);
        for seed in 0..20 {
            let a = text(8_000, 100 + seed);
            let b = edit(&a, 20, seed);
            let ra = run(|p| one_perm(&a, 20, 64, &mut |t, x| p(t, x)));
            let rb = run(|p| one_perm(&b, 20, 64, &mut |t, x| p(t, x)));
            est += ra.iter().zip(&rb).filter(|(x, y)| x == y).count() as f64 / 64.0;
            exact += jaccard(&a, &b, 20);
        }
        assert!(((est - exact) / 20.0).abs() < 0.03, "{est} vs {exact}");
    }
}
