//! A cluster made from its members and figures ([`make_cluster`]), and the
//! order of the clusters in every format ([`rank_order`]).

use super::{Cluster, ClusterId, Pair, TemplateHint};
use crate::formats::files::CompactTable;

/// Median size of a cluster's members (its files sorted by size
/// descending), as `likely_template` takes it.
pub(crate) fn median_size(sizes: &[u64], members: &[u32]) -> u64 {
    let mut s: Vec<u64> = members.iter().map(|&m| sizes[m as usize]).collect();
    s.sort_unstable_by(|x, y| y.cmp(x));
    s[s.len() / 2]
}

/// A cluster from its members (any order), its link count, the sum of its
/// links' symmetric similarities (summed in (a, b) order), one of its links,
/// its likely-template figure and its reclaimable bytes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn make_cluster(
    files: &CompactTable,
    sizes: &[u64],
    mut members: Vec<u32>,
    link_count: usize,
    sim_sum: f64,
    first: Pair,
    template: Option<u64>,
    reclaimable: u64,
) -> Cluster {
    let size = |id: u32| sizes[id as usize];
    members.sort_by(|&x, &y| size(y).cmp(&size(x)).then(x.cmp(&y)));
    let total_size: u64 = members.iter().map(|&m| size(m)).sum();
    let avg = sim_sum / link_count as f64;
    let n = members.len();
    let kind = if n == 2 {
        // The paper's "contains": the smaller file is (mostly) inside a
        // file at least half as large again.
        let p = first;
        let (small, large) = (size(p.a).min(size(p.b)), size(p.a).max(size(p.b)));
        if large * 2 >= small * 3 {
            "contains"
        } else {
            "pair"
        }
    } else if link_count == n * (n - 1) / 2 {
        "clique"
    } else {
        "group"
    };
    let id_hash = members.iter().map(|&m| files.content(m)).min().unwrap_or(0);
    let id = ClusterId::of(id_hash);
    let template = template.map(|t| {
        Box::new(TemplateHint {
            bytes: t,
            command: crate::report::templates::mark_command(id.as_str()),
        })
    });
    Cluster {
        id,
        kind,
        files: members,
        link_count,
        total_size,
        reclaimable,
        avg_similarity: avg,
        template,
        review: None,
        folder_pair: None,
    }
}

/// The order of the clusters in every format (docs/pipeline.md,
/// "Ranking"): most bytes a reviewer could remove first, then most files,
/// then largest total, then id.
pub(crate) fn rank_order(x: &Cluster, y: &Cluster) -> std::cmp::Ordering {
    y.reclaimable
        .cmp(&x.reclaimable)
        .then(y.files.len().cmp(&x.files.len()))
        .then(y.total_size.cmp(&x.total_size))
        .then(x.id.cmp(&y.id))
}
