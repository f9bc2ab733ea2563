//! Hash tables of keys that are already hashes or small integers: one
//! multiply and a fold instead of SipHash (a fifth of fsim-verify's time
//! on Django's .mo catalogs, and most of the line source's interning).
//! Not for keys an adversary chooses freely: the keys these tables hold
//! are xxh3 hashes of content or ids fsim assigned.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for one u64 (or a few): multiply by the golden ratio, fold.
#[derive(Default)]
pub struct Mixed(u64);

impl Hasher for Mixed {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
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
