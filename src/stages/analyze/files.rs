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
}

impl BinFiles {
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
