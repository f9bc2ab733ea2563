//! Deterministic sample repositories with planted relationships, for
//! `make demo` and the end-to-end tests: unrelated documents, near-duplicate
//! versions, a document contained in another, a group of successive
//! versions, identical copies, files sharing a long template preamble, and
//! a few odd files (empty, binary). The generator also writes a manifest of
//! what it planted, so a test can check the report against the truth.
//! Benchmark repositories too: bulk documents, versions, overlapping
//! extracts, slices of source that overlap in part ([`generate_slices`]),
//! and translation catalogs ([`generate_catalogs`]).
//!
//! Text is built from a fixed English vocabulary with a fixed PRNG
//! (SplitMix64), so the same seed gives the same bytes on every machine.
//!
//! One file per job: `text.rs` the vocabulary and the text helpers,
//! `sample.rs` the sample repository, `bulk.rs` the `--bulk` and
//! `--versions` repositories, `overlap.rs`, `slices.rs` and `catalogs/`
//! the other benchmark repositories. Every item is re-exported here.

mod bulk;
mod catalogs;
mod overlap;
mod sample;
mod slices;
mod text;

pub use bulk::{generate_bulk, generate_versions, Bulk};
pub use catalogs::{generate_catalogs, Catalogs};
pub use overlap::{generate_overlap, Overlap};
pub use sample::{generate, manifest, CorpusSpec, Planted};
pub use slices::{
    code, generate_slices, Slices, SLICE_BODY_PER_FILE, SLICE_MAX, SLICE_MEDIAN,
    SLICE_NEAR_PERCENT, SLICE_SIGMA,
};
pub use text::{document, edit, edit_lines};

/// SplitMix64: tiny, fast, and fully specified, so corpora are reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// A value fixed by `parts` alone (SplitMix64 steps folded over them): the
/// per-(locale, entry, release) choices must not depend on the order of
/// generation, so that a locale's catalog is the same whatever the others.
fn mix(parts: &[u64]) -> u64 {
    let mut x = 0x5eed_ca7a_1065_u64;
    for &p in parts {
        x = Rng::new(x ^ p.wrapping_mul(0xd6e8_feb8_6659_fd93)).next_u64();
    }
    x
}

/// Uniform in [0, 1).
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}
