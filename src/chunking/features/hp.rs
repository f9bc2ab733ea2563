//! The HP evaluation paper's fingerprint samplers over windows of `w` bytes
//! (Forman et al.'s colleagues, "An evaluation of syntactic similarity
//! algorithms"): Mod_n, Min_n and BSW_n. Sketch_n is in `minhash.rs`.

use super::rolling::for_each_window;

/// Mod_n: every fingerprint whose value mod n is 0 (about one window in n).
pub(super) fn modn(data: &[u8], w: usize, n: u32, push: &mut impl FnMut(u32, u64)) {
    let n = n.max(1) as u64;
    for_each_window(data, w, |_, fp| {
        if fp % n == 0 {
            push(0, fp)
        }
    });
}

/// Min_n: the n numerically smallest distinct fingerprints. A bounded
/// ordered set: after the first windows a fingerprint rarely beats the
/// current maximum, so this costs little more than the rolling hash.
pub(super) fn minn(data: &[u8], w: usize, n: u32, push: &mut impl FnMut(u32, u64)) {
    let n = n as usize;
    let mut set = std::collections::BTreeSet::new();
    let mut max = u64::MAX;
    for_each_window(data, w, |_, fp| {
        if (set.len() < n || fp < max) && set.insert(fp) {
            if set.len() > n {
                set.pop_last();
            }
            if set.len() == n {
                max = *set.last().unwrap();
            }
        }
    });
    for fp in set {
        push(0, fp);
    }
}

/// The n smallest distinct fingerprints, by sorting all of them (test model).
#[cfg(test)]
fn distinct_smallest(data: &[u8], w: usize, n: usize) -> Vec<u64> {
    let mut all = super::rolling::fingerprints(data, w);
    all.sort_unstable();
    all.dedup();
    all.truncate(n);
    all
}

/// BSW_n: cut where the fingerprint mod n is 0 (the window ending a chunk
/// belongs to it), and keep the smallest fingerprint of each chunk; the
/// windows after the last boundary form the last chunk.
pub(super) fn bsw_min(data: &[u8], w: usize, n: u32, push: &mut impl FnMut(u32, u64)) {
    let n = n.max(1) as u64;
    let mut cur = u64::MAX;
    let mut open = false;
    for_each_window(data, w, |_, fp| {
        cur = cur.min(fp);
        open = true;
        if fp % n == 0 {
            push(0, cur);
            cur = u64::MAX;
            open = false;
        }
    });
    if open {
        push(0, cur);
    }
}

#[cfg(test)]
mod tests {
    use super::super::rolling::fingerprints;
    use super::super::tests::text;
    use super::*;

    fn collect(f: impl Fn(&mut dyn FnMut(u32, u64))) -> Vec<u64> {
        let mut v = Vec::new();
        f(&mut |_, x| v.push(x));
        v
    }

    #[test]
    fn mod_selects_multiples() {
        let d = text(20_000, 3);
        let got = collect(|p| modn(&d, 20, 100, &mut |t, x| p(t, x)));
        let want: Vec<u64> = fingerprints(&d, 20)
            .into_iter()
            .filter(|f| f % 100 == 0)
            .collect();
        assert_eq!(got, want);
        // About one window in 100.
        assert!((120..=280).contains(&got.len()), "{}", got.len());
    }

    #[test]
    fn min_is_n_smallest_distinct() {
        let d = text(20_000, 4);
        let got = collect(|p| minn(&d, 20, 100, &mut |t, x| p(t, x)));
        assert_eq!(got, distinct_smallest(&d, 20, 100));
        assert_eq!(got.len(), 100);
        // Repeated windows: all zeros has one distinct window.
        let z = vec![0u8; 5000];
        assert_eq!(collect(|p| minn(&z, 20, 100, &mut |t, x| p(t, x))).len(), 1);
        // Known answer on a tiny input.
        let t = collect(|p| minn(b"abcabcabd", 3, 2, &mut |t, x| p(t, x)));
        let mut all = fingerprints(b"abcabcabd", 3);
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 4); // abc bca cab abd
        assert_eq!(t, all[..2]);
    }

    #[test]
    fn bsw_min_one_per_chunk() {
        let d = text(50_000, 5);
        let fps = fingerprints(&d, 20);
        let got = collect(|p| bsw_min(&d, 20, 100, &mut |t, x| p(t, x)));
        let mut want = Vec::new();
        let mut cur = u64::MAX;
        for (i, &f) in fps.iter().enumerate() {
            cur = cur.min(f);
            if f % 100 == 0 || i + 1 == fps.len() {
                want.push(cur);
                cur = u64::MAX;
            }
        }
        assert_eq!(got, want);
        assert!((350..=650).contains(&got.len()), "{}", got.len());
    }
}
