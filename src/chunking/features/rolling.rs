//! The window fingerprint shared by every feature method: a Karp-Rabin
//! polynomial hash of the last `w` bytes modulo the Mersenne prime
//! 2^61 - 1 (Manber's construction with a larger modulus), rolled in O(1)
//! per byte, then passed through a 64-bit finaliser so that its low bits
//! (sif's selection, `mod n`) and its order (`min`) are uniform.
//!
//! **The base, the modulus and the finaliser define every feature**: they
//! are part of the record format (`hash=kr61` in the headers).

/// The modulus 2^61 - 1.
pub const P: u64 = (1 << 61) - 1;

/// The Karp-Rabin base (any value in 2..P; fixed forever).
pub const BASE: u64 = 0x0de5_1a5e_ba5e_f00d % P;

/// `a * b mod P` for `a, b < P`.
#[inline(always)]
pub fn mulmod(a: u64, b: u64) -> u64 {
    let r = a as u128 * b as u128;
    let x = (r as u64 & P) + (r >> 61) as u64;
    let x = (x & P) + (x >> 61);
    if x >= P {
        x - P
    } else {
        x
    }
}

/// `a + b mod P` for `a, b < P`.
#[inline(always)]
fn addmod(a: u64, b: u64) -> u64 {
    let x = a + b;
    if x >= P {
        x - P
    } else {
        x
    }
}

/// The SplitMix64 finaliser: a bijection of u64 with good avalanche.
#[inline(always)]
pub fn mix64(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The Karp-Rabin value of a whole slice (no rolling).
pub fn kr(data: &[u8]) -> u64 {
    data.iter()
        .fold(0u64, |h, &b| addmod(mulmod(h, BASE), b as u64 + 1))
}

/// Call `f(start, fingerprint)` for every window of `w` bytes of `data`,
/// in order of `start`. Data shorter than `w` (but not empty) is one
/// window: a short file still has a feature. Empty data has none.
pub fn for_each_window(data: &[u8], w: usize, mut f: impl FnMut(usize, u64)) {
    let w = w.max(1);
    if data.is_empty() {
        return;
    }
    if data.len() <= w {
        f(0, mix64(kr(data)));
        return;
    }
    // BASE^(w-1): the weight of the byte that leaves the window.
    let mut top = 1u64;
    for _ in 1..w {
        top = mulmod(top, BASE);
    }
    let mut out_tab = [0u64; 256];
    for (b, slot) in out_tab.iter_mut().enumerate() {
        *slot = P - mulmod(b as u64 + 1, top);
    }
    let mut h = kr(&data[..w]);
    f(0, mix64(h));
    for start in 1..=data.len() - w {
        let old = data[start - 1];
        let new = data[start + w - 1];
        h = addmod(
            mulmod(addmod(h, out_tab[old as usize]), BASE),
            new as u64 + 1,
        );
        f(start, mix64(h));
    }
}

/// All window fingerprints of `data` (see [`for_each_window`]).
pub fn fingerprints(data: &[u8], w: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(data.len().saturating_sub(w) + 1);
    for_each_window(data, w, |_, fp| v.push(fp));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rolling_equals_direct() {
        let data: Vec<u8> = (0..500u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for w in [1, 5, 20, 50] {
            let mut n = 0;
            for_each_window(&data, w, |s, fp| {
                assert_eq!(fp, mix64(kr(&data[s..s + w])), "w={w} start={s}");
                n += 1;
            });
            assert_eq!(n, data.len() - w + 1);
        }
    }

    #[test]
    fn short_and_empty() {
        assert!(fingerprints(b"", 20).is_empty());
        assert_eq!(fingerprints(b"abc", 20), vec![mix64(kr(b"abc"))]);
        assert_eq!(fingerprints(b"abc", 3).len(), 1);
        // Leading zero bytes count: "\0a" and "a" differ.
        assert_ne!(kr(b"\0a"), kr(b"a"));
    }

    #[test]
    fn known_answer() {
        // Pins the base, modulus and finaliser: a change here changes
        // every feature file.
        assert_eq!(format!("{:016x}", mix64(kr(b"fsim"))), KA);
    }
    const KA: &str = "273b43c8bf395e3a";
}
