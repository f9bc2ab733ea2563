//! The file table of one bin and the judgement of one pair of its files
//! (feature methods turn shared features into estimated bytes here).

use super::{Pair, Thresholds};
use crate::chunking::features::{self, MethodSpec};
use std::collections::HashMap;

/// The file table of one bin (id order), with the representative of each
/// identical-content set.
#[derive(Default)]
pub(super) struct BinFiles {
    pub(super) ids: Vec<u32>,
    pub(super) sizes: Vec<u64>,
    /// true for the smallest id of each content (the one analysed).
    pub(super) is_rep: Vec<bool>,
    pub(super) by_content: HashMap<u128, u32>,
    /// Feature methods: each file's distinct features (F line field 6).
    pub(super) features: Vec<u32>,
    /// Feature methods: how shared features become a similarity.
    pub(super) spec: Option<MethodSpec>,
    /// The local index of each file id from `ids[0]` on (`u32::MAX`: not
    /// in the bin), when the ids are dense enough ([`BinFiles::index_ids`]);
    /// empty: `ids` is searched.
    pub(super) local_of: Vec<u32>,
}

impl BinFiles {
    /// Index the bin's ids (all its `F` lines read) for [`BinFiles::local`]
    /// when they span at most twice their number: at most 8 bytes a file,
    /// within the memory model's per-file cost. One bin of a whole
    /// repository, the usual case, is dense. Every record of the bin looks
    /// its file up: a binary search over tens of thousands of ids was a
    /// sixth of fsim-analyze's time on the releases tree.
    pub(super) fn index_ids(&mut self) {
        self.local_of.clear();
        let (Some(&lo), Some(&hi)) = (self.ids.first(), self.ids.last()) else {
            return;
        };
        let span = (hi - lo) as usize + 1;
        if span > 2 * self.ids.len() {
            return;
        }
        self.local_of.resize(span, u32::MAX);
        for (i, &id) in self.ids.iter().enumerate() {
            self.local_of[(id - lo) as usize] = i as u32;
        }
    }

    /// The local index of file `id`, if it is in the bin.
    #[inline]
    pub(super) fn local(&self, id: u32) -> Option<usize> {
        if self.local_of.is_empty() {
            return self.ids.binary_search(&id).ok();
        }
        let from = id.checked_sub(self.ids[0])?;
        let i = *self.local_of.get(from as usize)?;
        (i != u32::MAX).then_some(i as usize)
    }

    /// The pair of local files `x < y` with `common` bytes and `shared`
    /// chunks in common, if it passes the thresholds. For feature methods
    /// `common` becomes the estimated bytes in common of the method's
    /// similarity estimate ([`crate::chunking::features::common_bytes`]); a pair
    /// whose estimate is 0 (megashingles: fewer than two supershingles;
    /// b-bit: at or below chance) is not a candidate.
    #[inline]
    pub(super) fn pair(
        &self,
        x: usize,
        y: usize,
        common: u64,
        shared: u32,
        th: &Thresholds,
    ) -> Option<Pair> {
        let (sa, sb) = (self.sizes[x], self.sizes[y]);
        let common = match &self.spec {
            None => common,
            Some(spec) => {
                let (fa, fb) = (self.features[x] as u64, self.features[y] as u64);
                let r = features::estimate(spec, shared as u64, fa, fb);
                if r <= 0.0 {
                    return None;
                }
                features::common_bytes(r, sa, sb)
            }
        };
        th.keep(common, sa, sb).then(|| Pair {
            a: self.ids[x],
            b: self.ids[y],
            size_a: sa,
            size_b: sb,
            common,
            shared,
        })
    }
}
