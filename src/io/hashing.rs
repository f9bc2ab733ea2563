//! Hash tables of keys that are already hashes or small integers: one
//! multiply and a fold instead of SipHash (a fifth of fsim-verify's time
//! on Django's .mo catalogs, and most of the line source's interning).
//! Not for keys an adversary chooses freely: the keys these tables hold
//! are xxh3 hashes of content or ids fsim assigned.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for one u64 (or a few): multiply by the golden ratio, fold.
#[derive(Default)]
pub struct Mixed(u64);

impl Hasher for Mixed {
    fn write(&mut self, bytes: &[u8]) {
        // Each byte folded into the state (`write_u64` mixes it in).
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        let x = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = x ^ (x >> 29);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` hashed with [`Mixed`].
pub type MixedMap<K, V> = HashMap<K, V, BuildHasherDefault<Mixed>>;

/// A `HashSet` hashed with [`Mixed`].
pub type MixedSet<K> = HashSet<K, BuildHasherDefault<Mixed>>;

/// Ask for `r`'s cache line, to be read soon: a table larger than the
/// caches misses on most look-ups, and a loop that knows its next few
/// overlaps those misses instead of waiting for each in turn.
#[inline]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults nor changes memory;
    // the pointer is a live reference's.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (r as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

#[cfg(test)]
mod tests {
    use super::Mixed;
    use std::hash::{Hash, Hasher};

    fn hash(k: impl Hash) -> u64 {
        let mut h = Mixed::default();
        k.hash(&mut h);
        h.finish()
    }

    /// Every part of a key counts, through the byte path too: the byte
    /// path once kept only the last byte (every `(id, byte)` key of the
    /// same byte collided, and fsim-verify's file cache took 6x longer).
    #[test]
    fn keys_that_differ_hash_differently() {
        let of_bytes: std::collections::HashSet<u64> =
            (0u32..1000).map(|i| hash((i, 7u8))).collect();
        assert_eq!(of_bytes.len(), 1000);
        assert_ne!(hash([1u8, 2]), hash([2u8, 1]));
        assert_ne!(hash((1u32, 2u32)), hash((2u32, 1u32)));
    }
}
