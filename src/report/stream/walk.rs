//! Step 4, the walk: the kept links sorted by (cluster rank, a, b) through
//! the external sorter and handed, cluster by cluster, to what a format
//! does with them ([`Visit`]).

use super::source::Source;
use crate::error::Result;
use crate::io::sorter::{le_u32, le_u64, ExternalSorter, FixedRecord, SortOptions, MIN_MEMORY};
use crate::report::model::{Pair, Report};

/// What a format does with the clusters and their links, in report order
/// ([`walk`]).
pub(crate) trait Visit {
    /// Whether the links of cluster `i` are read for it.
    fn wants(&self, r: &Report, i: usize) -> bool;
    fn start(&mut self, r: &Report, i: usize) -> Result<()>;
    /// A link of cluster `i`, in (a, b) order.
    fn link(&mut self, r: &Report, i: usize, l: &Pair) -> Result<()>;
    fn end(&mut self, r: &Report, i: usize) -> Result<()>;
}

/// A kept link tagged with the rank of its cluster, as the walk sorts it:
/// by (rank, a, b), the order in which the reports write links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RankedLink {
    rank: u32,
    a: u32,
    b: u32,
    exact: bool,
    common: u64,
    shared_chunks: u64,
}

impl FixedRecord for RankedLink {
    const SIZE: usize = 29;
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.rank.to_le_bytes());
        out[4..8].copy_from_slice(&self.a.to_le_bytes());
        out[8..12].copy_from_slice(&self.b.to_le_bytes());
        out[12] = self.exact as u8;
        out[13..21].copy_from_slice(&self.common.to_le_bytes());
        out[21..29].copy_from_slice(&self.shared_chunks.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        RankedLink {
            rank: le_u32(b, 0),
            a: le_u32(b, 4),
            b: le_u32(b, 8),
            exact: b[12] != 0,
            common: le_u64(b, 13),
            shared_chunks: le_u64(b, 21),
        }
    }
}

/// Hand the first `upto` clusters, in their order, and the links of those
/// `v` wants to `v`, within `budget` bytes of links. The links are read
/// once and sorted by (cluster rank, a, b) through the shared external
/// sorter: in memory when they fit in the budget, else in sorted runs on
/// disk (`--tmpdir`, 29 bytes a link) merged as they are written. So the
/// time is linear in the links whatever the budget (reading them back
/// once per budget's worth, as before, was quadratic), and a pairs file not
/// sorted by (a, b) needs nothing more.
pub(crate) fn walk(
    report: &Report,
    source: &mut Source,
    rank: &[u32],
    upto: usize,
    budget: u64,
    v: &mut dyn Visit,
) -> Result<()> {
    let k = upto.min(report.clusters.len());
    let wanted: Vec<bool> = (0..k).map(|i| v.wants(report, i)).collect();
    let mut opts = SortOptions::with_memory(budget.max(MIN_MEMORY));
    opts.tmpdir = report.config.tmpdir.clone();
    let mut sorter = ExternalSorter::<RankedLink>::new(opts);
    if wanted.iter().any(|&w| w) {
        let mut err = None;
        source.kept(&mut |p| {
            let r = rank[p.a as usize] as usize;
            if err.is_none() && r < k && wanted[r] {
                let l = RankedLink {
                    rank: r as u32,
                    a: p.a,
                    b: p.b,
                    exact: p.exact,
                    common: p.common,
                    shared_chunks: p.shared_chunks,
                };
                if let Err(e) = sorter.push(l) {
                    err = Some(e);
                }
            }
        })?;
        if let Some(e) = err {
            return Err(e);
        }
    }
    let mut links = sorter.finish()?;
    let mut next = links.next_item()?;
    for i in 0..k {
        v.start(report, i)?;
        while let Some(l) = next.filter(|l| l.rank as usize == i) {
            let p = Pair {
                a: l.a,
                b: l.b,
                common: l.common,
                shared_chunks: l.shared_chunks,
                exact: l.exact,
            };
            v.link(report, i, &p)?;
            next = links.next_item()?;
        }
        v.end(report, i)?;
    }
    Ok(())
}
