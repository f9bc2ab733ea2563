//! What the report's model takes of `--memory` ([`model_bytes`]), an
//! estimate from counts, so that what the budget decides is the same on
//! every run, and what it leaves the links ([`Report::link_budget`]).

use super::{Cluster, HardLinks, IdenticalSet, Pair, Report, SameContent, CLOSEST};
use crate::formats::files::CompactTable;

/// What fsim-report holds whatever its input: the process and its binary
/// (~5 MiB resident at start), the 1 MiB output buffer and a piece written
/// beside it, a format's per-cluster text.
pub(crate) const BASE_BYTES: u64 = 12 << 20;

/// Counts that size the report's model (see [`model_bytes`]).
pub(crate) struct ModelCounts<'a> {
    pub files: &'a CompactTable,
    pub clusters: usize,
    /// Files in some cluster.
    pub clustered: usize,
    /// Files of the clusters shown as sub-clusters and closest relatives.
    pub reviewed: usize,
    pub identical: &'a [IdenticalSet],
    pub same_content: &'a [SameContent],
    /// The per-file best share is kept (html, xlsx).
    pub best: bool,
}

/// An estimate of what the report holds besides its links, computed from
/// counts, not measured, so that what the budget decides (how many
/// clusters share a read, whether xlsx keeps its outlines) is the same on
/// every run: the file table as held, per file its sizes (twice: the
/// percentages' and a scratch copy for the reads after the first), path
/// filter, collection, cluster rank and best share, the clusters and their
/// members, the review of the large ones, the identical sets, the counters
/// of the build (union-find, covered bytes, per-cluster sums: freed before
/// the links are read, but their pages stay with the process), and
/// [`BASE_BYTES`]. docs/formats.md ("Memory") gives the figures; `make
/// bench` measures the peak against `--memory` at a million files.
pub(crate) fn model_bytes(m: &ModelCounts) -> u64 {
    use std::mem::size_of;
    let n = m.files.len() as u64;
    // Held: sizes (twice), path filter, collection, rank, best share;
    // build: union-find, links, covered bytes, review slot.
    let per_file =
        8 + 8 + 1 + size_of::<usize>() as u64 + 4 + if m.best { 8 } else { 0 } + 4 + 4 + 8 + 4;
    // A Vec's allocation costs its bytes plus ~16 of the allocator; the
    // build counts links, similarity, a first link, the largest and the
    // template figure per cluster.
    let per_cluster = size_of::<Cluster>() as u64 + 16 + 8 + 8 + 40 + 8 + 16 + 1;
    // Held: sub-clusters, closest links, a hub's entry; build: four
    // union-finds, links and hub flag, the closest links with their
    // similarity.
    let per_reviewed = 12
        + 8
        + 4
        + 4
        + 1
        + size_of::<Vec<Pair>>() as u64
        + (CLOSEST * size_of::<Pair>()) as u64
        + 16
        + 12
        + size_of::<Vec<(f64, Pair)>>() as u64
        + (CLOSEST * size_of::<(f64, Pair)>()) as u64
        + 16;
    let sets = m.identical.len() as u64;
    // A set's files, and 8 bytes for each other name of a file in it.
    let set_files: u64 = m
        .identical
        .iter()
        .map(|s| s.files.len() as u64 + 2 * s.disk.other_names.len() as u64)
        .sum();
    let per_set = size_of::<IdenticalSet>() as u64 + 16 + 2 * (4 + size_of::<usize>() as u64);
    // Same content groups: the group, its id and files (their build
    // sorted (hash, id) pairs of 32 bytes, freed before the links).
    let same: u64 = m
        .same_content
        .iter()
        .map(|g| size_of::<SameContent>() as u64 + 32 + 4 * g.files.len() as u64)
        .sum();
    BASE_BYTES
        + m.files.heap_bytes()
        + n * per_file
        + m.clusters as u64 * per_cluster
        + m.clustered as u64 * 4
        + m.reviewed as u64 * per_reviewed
        + sets * per_set
        + set_files * 4
        + same
}

impl Report {
    /// What the report holds besides its links ([`model_bytes`]).
    pub(crate) fn model_bytes(&self) -> u64 {
        model_bytes(&ModelCounts {
            files: &self.files,
            clusters: self.clusters.len(),
            clustered: self.clusters.iter().map(|c| c.files.len()).sum(),
            reviewed: self
                .clusters
                .iter()
                .filter(|c| c.review.is_some())
                .map(|c| c.files.len())
                .sum(),
            identical: &self.identical,
            same_content: &self.same_content,
            best: !self.best.is_empty(),
        }) + self.folders.heap_bytes()
            + self.hard_links_bytes()
    }

    /// What the names of one file hold: each group and its names.
    fn hard_links_bytes(&self) -> u64 {
        let group = std::mem::size_of::<HardLinks>() as u64 + 10 + 32;
        self.hard_links
            .iter()
            .map(|h| group + 4 * h.files.len() as u64)
            .sum()
    }

    /// The memory left for links within `--memory`. When nothing is left,
    /// every cluster is read alone and a cluster of more than one link is
    /// written as its links come: the least memory the report can take.
    pub(crate) fn link_budget(&self) -> u64 {
        self.config.memory.saturating_sub(self.model_bytes()).max(1)
    }
}
