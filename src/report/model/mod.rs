//! The report's model: what `fsim-report` builds from the file table and
//! the pairs (identical sets, clusters, their links) before any format
//! renders it, and the options it is built with.
//!
//! This file holds the model's types; what builds them is beside it, a job
//! a file: the options (config.rs), what is read before the pairs
//! (prelude.rs), the pairs read and each link's thresholds and filters
//! (pairs.rs), a cluster and the clusters' order (clusters.rs), what the
//! model takes of `--memory` (memory.rs), and how the figures are written
//! (numbers.rs).

mod clusters;
mod config;
mod memory;
mod numbers;
mod pairs;
mod prelude;

pub(crate) use clusters::{make_cluster, median_size, rank_order};
pub use config::{ColorChoice, Config, Format, HtmlOptions};
pub(crate) use memory::{model_bytes, ModelCounts};
pub use numbers::human_bytes;
pub(crate) use numbers::r1;
pub(crate) use pairs::{check_verify_threshold, keep_link, pass_link, report_params, scan_pairs};
pub(crate) use prelude::{prelude, Prelude};

use crate::formats::files::CompactTable;
use crate::formats::headers::FilesTrailer;
use crate::formats::{hex128, Params};
use std::collections::HashMap;

pub use crate::formats::{percent, symmetric, PercentOf};

/// A cluster flagged as a likely template (`crate::report::templates::likely_template`).
#[derive(Debug, Clone)]
pub struct TemplateHint {
    /// Bytes shared by almost all its links (the 10th percentile).
    pub bytes: u64,
    /// The command that marks it.
    pub command: String,
}

/// One similar pair as read from the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub a: u32,
    pub b: u32,
    /// Bytes in common: exact when `exact`, else a lower bound.
    pub common: u64,
    pub shared_chunks: u64,
    /// Verified by fsim-verify (`common` is the exact figure).
    pub exact: bool,
}

/// A cluster of similar files.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub id: ClusterId,
    pub kind: &'static str,
    /// Representative file ids, by size descending then id.
    pub files: Vec<u32>,
    /// Number of links (they are read again, cluster by cluster, when a
    /// format writes them: src/report/stream/).
    pub link_count: usize,
    pub total_size: u64,
    /// Bytes a reviewer could remove (docs/pipeline.md, "Ranking"): over
    /// its files, the most bytes each shares with one larger file of the
    /// cluster (larger: earlier in `files`); the largest file counts 0.
    pub reclaimable: u64,
    pub avg_similarity: f64,
    /// Set when the cluster looks like template similarity (boxed, as
    /// the review: a report holds one `Cluster` per cluster, 300,000 at a
    /// million files, and few have either).
    pub template: Option<Box<TemplateHint>>,
    /// How a large cluster is shown (`Config::review_files`).
    pub review: Option<Box<Review>>,
    /// The reported folder pair that holds all its files, if any
    /// (`FolderReport::explains`).
    pub folder_pair: Option<u32>,
}

/// A cluster's id: the first 10 hex digits of the smallest content hash
/// of its files, stable across runs that find the same cluster. Held as
/// bytes (a `String` per cluster cost ~40 more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClusterId([u8; 10]);

impl ClusterId {
    fn of(hash: u128) -> ClusterId {
        let mut id = [0u8; 10];
        id.copy_from_slice(&hex128(hash).as_bytes()[..10]);
        ClusterId(id)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits")
    }
}

impl std::fmt::Display for ClusterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl serde::Serialize for ClusterId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the reports show of a large cluster besides (json, tsv) or instead
/// of (text, html) all its links.
#[derive(Debug, Clone)]
pub struct Review {
    /// Single-linkage sub-clusters at each level of `REVIEW_LEVELS`:
    /// (number of sub-clusters, files in the largest), singletons included.
    pub levels: Vec<(usize, usize)>,
    /// The sub-cluster of each file at each level, in the order of
    /// `Cluster::files`: sub-clusters are numbered from 1 in the order of
    /// their first (largest) file.
    pub sub: Vec<[u32; 3]>,
    /// The closest links of each file (by symmetric similarity, then the
    /// other file's id), in the order of `Cluster::files`.
    pub closest: Vec<Vec<Pair>>,
    /// The few files that hold the cluster together, when it falls apart
    /// without them ([`Hubs`]).
    pub hubs: Option<Hubs>,
}

/// The files a large cluster is chained through: each linked to at least
/// a [`HUB_SHARE`]th of the cluster's files (and to [`HUB_MIN_LINKS`]). A
/// licence header or a generated page's frame makes such hubs: a small
/// file that is mostly the header is "inside" every file that carries it,
/// and links files that share nothing else. The cluster is marked only
/// when the hubs are at most a fifth of it and, without their links, no
/// group of its other files holds half of them: a cluster of genuinely
/// alike files (every file linked to most others) has hubs everywhere
/// and stays whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Hubs {
    /// (file, its links in the cluster), most links first, then file id.
    pub files: Vec<(u32, u32)>,
    /// The groups the other files form by their links between them
    /// (single linkage, singletons included).
    pub groups: usize,
    /// Files in the largest of those groups.
    pub largest: usize,
}

/// A hub is linked to at least 1/`HUB_SHARE` of its cluster's files.
pub const HUB_SHARE: usize = 10;

/// ... and to at least this many files.
pub const HUB_MIN_LINKS: u32 = 10;

impl Hubs {
    /// Whether a file of `links` links is a hub of a cluster of `files`.
    pub fn is_hub(links: u32, files: usize) -> bool {
        links >= HUB_MIN_LINKS && links as usize * HUB_SHARE >= files
    }

    /// `Some` when `hubs` hold a cluster of `files` files together: at
    /// most a fifth of it, and no group of the others holds half of them.
    pub fn marked(
        hubs: Vec<(u32, u32)>,
        files: usize,
        groups: usize,
        largest: usize,
    ) -> Option<Hubs> {
        let rest = files - hubs.len();
        (!hubs.is_empty() && hubs.len() * 5 <= files && largest * 2 < rest).then_some(Hubs {
            files: hubs,
            groups,
            largest,
        })
    }
}

/// Symmetric similarity levels of the sub-clusters of a large cluster.
pub const REVIEW_LEVELS: [f64; 3] = [50.0, 70.0, 90.0];

/// Closest relatives shown per file of a large cluster.
pub const CLOSEST: usize = 3;

/// A set of files with identical content: equal raw bytes, not empty on
/// disk, at least two files among them (names of one file are one file:
/// a group of those alone is a [`HardLinks`]).
#[derive(Debug, Clone)]
pub struct IdenticalSet {
    pub id: String,
    /// Length on disk of each file (its raw size).
    pub size: u64,
    /// Every name with this content, in file id order.
    pub files: Vec<u32>,
    /// The figures of the set on disk ([`OnDisk`]).
    pub disk: OnDisk,
    /// The reported folder pair that holds all its files, if any.
    pub folder_pair: Option<u32>,
}

/// What a group of names with one content is on disk: which names are
/// another name of a file listed before them (hard links), and how many
/// are members of archives. Sparse: most sets have neither.
#[derive(Debug, Clone, Default)]
pub struct OnDisk {
    /// Distinct files outside archives (names of one file count once).
    pub files: u32,
    /// Members of archives: copies nobody can remove alone (one member
    /// met in two collections counts once).
    pub in_archives: u32,
    /// (name, the first name of its file) of each name after the first of
    /// a file with several names, in file id order.
    pub other_names: Vec<(u32, u32)>,
}

impl OnDisk {
    /// The figures of `names` (file id order) in `table`.
    pub fn of(table: &CompactTable, names: &[u32]) -> OnDisk {
        let mut d = OnDisk::default();
        let mut first: HashMap<(u64, u64), u32> = HashMap::new();
        for &f in names {
            let e = table.at(f);
            // A member met again (its archive named in two collections)
            // is another name of that member, as a file's is of the file.
            match e.link.map(|l| *first.entry(l).or_insert(f)) {
                Some(k) if k != f => d.other_names.push((f, k)),
                _ if e.archive.is_some() => d.in_archives += 1,
                _ => d.files += 1,
            }
        }
        d
    }

    /// The first name of `f`'s file when `f` is another name of it.
    pub fn name_of(&self, f: u32) -> Option<u32> {
        self.other_names
            .binary_search_by_key(&f, |&(x, _)| x)
            .ok()
            .map(|k| self.other_names[k].1)
    }
}

impl IdenticalSet {
    /// Bytes a plan could reclaim (docs/formats.md, *Reports*): one
    /// file's length on disk for each file on disk past the one kept.
    /// Another name of a file frees nothing, nor does a member of an
    /// archive (nobody can remove it alone).
    pub fn overhead(&self) -> u64 {
        self.size * u64::from(self.disk.files.saturating_sub(1))
    }
}

/// Names of one file (hard links) with no other file of their content:
/// one file, nothing to reclaim.
#[derive(Debug, Clone)]
pub struct HardLinks {
    /// The first 10 hex digits of the content hash.
    pub id: String,
    /// The file's length on disk.
    pub size: u64,
    /// Its names, in file id order.
    pub files: Vec<u32>,
}

/// Files whose content views are equal but whose bytes differ ("same
/// content, different file"): a docx saved twice, a text and its
/// gzip. Identity stays by raw bytes, so they are not an identical set,
/// and nothing is reclaimable by deleting one (the files differ).
#[derive(Debug, Clone)]
pub struct SameContent {
    /// The first 10 hex digits of the view hash.
    pub id: String,
    /// Length of the content they share (each file's view).
    pub size: u64,
    /// Every file with this content, identical copies included, in file
    /// id order; at least two raw contents among them.
    pub files: Vec<u32>,
}

/// Everything a report format needs.
pub struct Report {
    pub files: CompactTable,
    pub params: Params,
    pub config: Config,
    pub identical: Vec<IdenticalSet>,
    /// Names of one file with no other file of their content ([`HardLinks`]).
    pub hard_links: Vec<HardLinks>,
    /// The file table's trailer: folders and files the walk reached twice,
    /// the work folders and the files it left out.
    pub walk: FilesTrailer,
    /// Same content, different file ([`SameContent`]).
    pub same_content: Vec<SameContent>,
    pub clusters: Vec<Cluster>,
    /// Identical set of a representative file, by file id.
    pub set_of: HashMap<u32, usize>,
    pub pairs_read: u64,
    /// Size of each file as the percentages use it: its payload (size less
    /// its template chunks) when the analysis ignored templates, else its
    /// size.
    pub sizes: Vec<u64>,
    /// Collections of a merged file table (empty: one unnamed collection).
    pub collections: Vec<crate::formats::collections::Collection>,
    /// Collection index of each file.
    pub coll: Vec<usize>,
    /// Links that passed the thresholds but not the filters.
    pub filtered_links: u64,
    /// (file, other collection) pairs of the similar links, gathered while
    /// reading the links (src/report/collections.rs).
    pub similar_facts: std::collections::BTreeSet<(u32, usize)>,
    /// Per file: the largest percentage of it found in one of its links
    /// (html and xlsx; empty for the other formats).
    pub best: Vec<f64>,
    /// Folders that are copies or versions of each other
    /// (src/report/folders/), before the file clusters in every format.
    pub folders: crate::report::folders::FolderReport,
}
