//! Chunk groups counted only for the pairs other chunks propose.
//!
//! A chunk held by many files links every two of them: walking its group
//! costs k(k−1)/2 visits for k files, whatever the chunk's length. The
//! last piece of a file, cut where the file ends, is often a byte or a
//! few (`\n`, `.\n`, `}\n`), and at 10^7 small files such a chunk is held
//! by 10^5 of them: 99 % of the visits, for pairs that chunk alone can
//! never keep. So a large group (`Options::defer_from` files or more,
//! most of which the chunk alone cannot lift to the thresholds) is
//! **deferred**, with a bound that keeps the output exact:
//!
//! - each file's **deferred bytes** are the bytes of its deferred chunks
//!   (occurrences × length, summed); a file is **light** when no pair
//!   whose smaller file it is can be kept with that many bytes in common
//!   ([`Thresholds::may_keep`]), and **heavy** otherwise;
//! - a pair of two light files that shares deferred chunks only has at
//!   most the smaller file's deferred bytes in common, so it is never
//!   kept: it need not be found;
//! - every other pair is found and gets its exact figures: from a heavy
//!   file the deferred groups are walked whole, from a light one only
//!   their heavy files (each group holds its heavy files first, then its
//!   light ones, each run in file order), and a pair of two light files
//!   found through another chunk gets the deferred chunks both hold
//!   added by a search of one file's deferred chunks in the other's list
//!   ([`overlap`]).
//!
//! So the kept pairs and their bytes and chunks in common are those of
//! walking every group; the work of a deferred group is its heavy files
//! times its size, and one search per pair of light files that share
//! another chunk. Feature methods (whose pairs are judged by the count of
//! shared features, not by bytes) defer nothing.

use super::groups::Entry;

/// Chunk groups of fewer files than this are walked whole (the default
/// of `Options::defer_from`): deferring costs a search per pair of light
/// files found otherwise, which a small group's few visits do not repay.
pub const DEFER_FROM: usize = 64;

/// A group is deferred when the chunk alone lifts at most one in this
/// many of its files to the thresholds: each file it lifts is heavy, and
/// walks every deferred group it is in whole.
pub(super) const LIFTED_AT_MOST_ONE_IN: usize = 16;

/// The deferred chunks of a bin and which of its files are light.
#[derive(Default)]
pub(super) struct Deferred {
    /// (chunk, count of its heavy files, which its list holds first) of
    /// each deferred chunk, in chunk order.
    pub(super) chunks: Vec<(u32, u32)>,
    /// Whether each file of the bin is light; empty when nothing is
    /// deferred.
    pub(super) light: Vec<bool>,
    /// The least group size deferred: smaller groups are never looked up.
    pub(super) from: usize,
}

impl Deferred {
    /// Whether file `f` is light (false when nothing is deferred).
    #[inline]
    pub(super) fn is_light(&self, f: usize) -> bool {
        self.light.get(f).copied().unwrap_or(false)
    }

    /// The count of heavy files at the head of chunk `c`'s list of
    /// `files` files when it is deferred.
    #[inline]
    pub(super) fn heavy_of(&self, c: u32, files: usize) -> Option<usize> {
        if self.light.is_empty() || files < self.from {
            return None;
        }
        let k = self.chunks.binary_search_by_key(&c, |&(c, _)| c).ok()?;
        Some(self.chunks[k].1 as usize)
    }
}

/// The bytes and chunks in common of two files through the deferred
/// chunks: `own`, the first file's deferred chunks as (chunk,
/// occurrences) in chunk order, against `other`, the second file's whole
/// chunk list in chunk order; `len` the chunks' lengths. The shorter list
/// is walked and each of its chunks searched for in the longer.
pub(super) fn overlap(own: &[Entry], other: &[Entry], len: &[u32]) -> (u64, u32) {
    let (mut bytes, mut shared) = (0u64, 0u32);
    let mut add = |c: u32, x: u32, y: u32| {
        bytes += x.min(y) as u64 * len[c as usize] as u64;
        shared += 1;
    };
    if own.len() <= other.len() {
        for a in own {
            if let Ok(k) = other.binary_search_by_key(&a.idx, |e| e.idx) {
                add(a.idx, a.occ, other[k].occ);
            }
        }
    } else {
        for b in other {
            if let Ok(k) = own.binary_search_by_key(&b.idx, |e| e.idx) {
                add(b.idx, own[k].occ, b.occ);
            }
        }
    }
    (bytes, shared)
}
