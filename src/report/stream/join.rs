//! Step 1, joining: check the pairs, apply the thresholds and filters, and
//! join the files of each kept link into clusters (union-find over file
//! ids), writing the kept links for the reads after this one.

use super::source::{KeptWriter, Source};
use crate::error::Result;
use crate::formats::Params;
use crate::report::model::{
    check_verify_threshold, keep_link, pass_link, scan_pairs, Config, Prelude,
};
use std::path::Path;

/// No cluster.
pub(super) const NONE: u32 = u32::MAX;

pub(super) fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// Step 1's result: the clusters, numbered by smallest file id for now.
pub(super) struct Joined {
    /// Cluster of each file (`NONE`: in no kept link).
    pub(super) cluster_of: Vec<u32>,
    /// The files of each cluster, in id order.
    pub(super) members: Vec<Vec<u32>>,
    /// Each file's kept links (the hubs of a large cluster, step 2).
    pub(super) degree: Vec<u32>,
    pub(super) pair_params: Params,
    pub(super) pairs_read: u64,
    /// Links above the thresholds that the filters dropped.
    pub(super) filtered_links: u64,
    /// The kept links, for the reads after this one.
    pub(super) source: Source,
}

/// Step 1: check, threshold, filter, join: the clusters of the kept links.
pub(super) fn join(config: &Config, path: &Path, pre: &mut Prelude) -> Result<Joined> {
    let mut kept = KeptWriter::create(config)?;
    let n = pre.files.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    let mut degree = vec![0u32; n];
    let (mut pairs_read, mut n_above, mut n_kept) = (0u64, 0u64, 0u64);
    let pair_params = {
        let (files, path_ok, coll) = (&pre.files, &pre.path_ok, &pre.coll);
        scan_pairs(
            path,
            files,
            &pre.table_params,
            &pre.files_name,
            &mut pre.sizes,
            &mut |p, sizes| {
                pairs_read += 1;
                if !keep_link(config, sizes, &p) {
                    return;
                }
                n_above += 1;
                if !pass_link(config, files, sizes, path_ok, coll, &p) {
                    return;
                }
                n_kept += 1;
                kept.push(&p);
                for f in [p.a, p.b] {
                    let d = &mut degree[f as usize];
                    *d = d.saturating_add(1);
                }
                let (ra, rb) = (find(&mut parent, p.a), find(&mut parent, p.b));
                if ra != rb {
                    let (lo, hi) = (ra.min(rb), ra.max(rb));
                    parent[hi as usize] = lo;
                }
            },
        )?
    };
    check_verify_threshold(&pair_params, config, &path.display().to_string())?;

    // Clusters, numbered by smallest file id for now.
    let mut cluster_of = vec![NONE; n];
    let mut members: Vec<Vec<u32>> = Vec::new();
    for f in 0..n as u32 {
        if degree[f as usize] == 0 {
            continue;
        }
        let r = find(&mut parent, f);
        let c = if r == f {
            members.push(Vec::new());
            (members.len() - 1) as u32
        } else {
            cluster_of[r as usize]
        };
        cluster_of[f as usize] = c;
        members[c as usize].push(f);
    }
    Ok(Joined {
        cluster_of,
        members,
        degree,
        pair_params,
        pairs_read,
        filtered_links: n_above - n_kept,
        source: kept.finish()?,
    })
}
