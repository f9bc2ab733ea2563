//! The clusters from the figures of steps 2 and 3: each made with its
//! figures and review, then sorted into the report's order (their rank).

use super::figures::LinkFigures;
use super::join::NONE;
use crate::report::model::{make_cluster, rank_order, Cluster, Report};

/// The clusters with their figures (the per-cluster and per-file counters
/// of `lf` are freed), and the review of the big ones.
pub(super) fn make_clusters(
    report: &Report,
    members: Vec<Vec<u32>>,
    cluster_of: &[u32],
    lf: &mut LinkFigures,
    template: Vec<Option<u64>>,
) -> Vec<Cluster> {
    let covered = std::mem::take(&mut lf.covered);
    let (count, sum) = (std::mem::take(&mut lf.count), std::mem::take(&mut lf.sum));
    let first = std::mem::take(&mut lf.first);
    let mut clusters: Vec<Cluster> = members
        .into_iter()
        .enumerate()
        .map(|(c, m)| {
            let reclaimable = m.iter().map(|&f| covered[f as usize]).sum();
            make_cluster(
                &report.files,
                &report.sizes,
                m,
                count[c],
                sum[c],
                first[c].expect("a cluster has a link"),
                template[c],
                reclaimable,
            )
        })
        .collect();
    drop((covered, count, sum, first, template));
    for cl in clusters.iter_mut() {
        if lf.big[cluster_of[cl.files[0] as usize] as usize] {
            cl.review = Some(Box::new(lf.review_of(cl)));
        }
    }
    clusters
}

/// Sort the clusters into their order and renumber `cluster_of` to ranks.
pub(super) fn rank(clusters: &mut [Cluster], cluster_of: &mut [u32]) {
    clusters.sort_by(rank_order);
    // A cluster's index before the sort is its files' `cluster_of`.
    let mut rank_of = vec![0u32; clusters.len()];
    for (r, cl) in clusters.iter().enumerate() {
        rank_of[cluster_of[cl.files[0] as usize] as usize] = r as u32;
    }
    for c in cluster_of.iter_mut() {
        if *c != NONE {
            *c = rank_of[*c as usize];
        }
    }
}
