//! The pairs found so far, kept sorted by (a, b) in bounded memory.
//!
//! The number of pairs is not bounded by the bins' size: files that share
//! boilerplate (the navigation of generated HTML pages, say) give pairs
//! quadratic in the files of a component. 52 k rustdoc pages gave 348 M
//! candidate pairs, and the analysis held them in a `Vec` (40 bytes each,
//! 13.9 GB) before writing them. They now go through the shared external
//! sorter with a quarter of `--capacity`: a bin that yields more spills
//! sorted runs to `--tmpdir`, merged as the pairs file is written. Since
//! (a, b) is unique, the order of pushes (threads, bins) does not change
//! the output.

use super::Pair;
use crate::error::Result;
use crate::io::sorter::{le_u32, le_u64};
use crate::stages::sort::keys::FixedRecord;
use crate::stages::sort::{ExternalSorter, SortOptions, Sorted};
use std::path::PathBuf;

/// Part of `--capacity` given to the pairs' buffer.
pub const PAIRS_SHARE: u64 = 4;

impl FixedRecord for Pair {
    const SIZE: usize = 36;
    #[inline]
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.a.to_le_bytes());
        out[4..8].copy_from_slice(&self.b.to_le_bytes());
        out[8..16].copy_from_slice(&self.size_a.to_le_bytes());
        out[16..24].copy_from_slice(&self.size_b.to_le_bytes());
        out[24..32].copy_from_slice(&self.common.to_le_bytes());
        out[32..36].copy_from_slice(&self.shared.to_le_bytes());
    }
    #[inline]
    fn decode(b: &[u8]) -> Self {
        Pair {
            a: le_u32(b, 0),
            b: le_u32(b, 4),
            size_a: le_u64(b, 8),
            size_b: le_u64(b, 16),
            common: le_u64(b, 24),
            shared: le_u32(b, 32),
        }
    }
}

/// Sorts the pairs of every bin within `capacity / PAIRS_SHARE` bytes.
pub struct PairStore {
    sorter: ExternalSorter<Pair>,
    /// Where it spills, and where the line source spills its lines.
    tmpdir: Option<PathBuf>,
}

impl std::fmt::Debug for PairStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PairStore({} pairs)", self.sorter.len())
    }
}

impl PairStore {
    pub fn new(capacity: u64, tmpdir: Option<PathBuf>) -> PairStore {
        let mut opts = SortOptions::with_memory(capacity / PAIRS_SHARE);
        opts.tmpdir = tmpdir.clone();
        PairStore {
            sorter: ExternalSorter::new(opts),
            tmpdir,
        }
    }

    /// The folder for temporary files (`--tmpdir`; `None`: the system's).
    pub fn tmpdir(&self) -> Option<&std::path::Path> {
        self.tmpdir.as_deref()
    }

    #[inline]
    pub fn push(&mut self, p: Pair) -> Result<()> {
        self.sorter.push(p)
    }

    pub fn extend(&mut self, ps: &[Pair]) -> Result<()> {
        ps.iter().try_for_each(|&p| self.sorter.push(p))
    }

    /// Pairs pushed so far.
    pub fn len(&self) -> u64 {
        self.sorter.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorter.is_empty()
    }

    /// Runs written to disk (0 when every pair fitted in memory).
    pub fn runs_spilled(&self) -> usize {
        self.sorter.runs_spilled()
    }

    /// The pairs in (a, b) order.
    pub fn finish(self) -> Result<Sorted<Pair>> {
        self.sorter.finish()
    }

    /// Every pair, in order, in memory (tests).
    #[cfg(test)]
    pub fn into_vec(self) -> Vec<Pair> {
        self.finish()
            .expect("sorting pairs")
            .map(|p| p.expect("reading pairs"))
            .collect()
    }
}
