//! The report's model: what `fsim-report` builds from the file table and
//! the pairs (identical sets, clusters, their links) before any format
//! renders it, and the options it is built with.

use crate::error::{Error, Result};
use crate::formats::headers::{FilesTrailer, PairsHeader, ReportParams};
use crate::formats::open_input;
use crate::formats::{
    escape_path_string, hex128, pairs, Digest, InputCheck, Kind, Line, LineReader, Params,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::formats::files::{read_compact_table, CompactTable};
pub use crate::formats::{percent, symmetric, PercentOf};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Tsv,
    /// One self-contained page (src/report/html.rs).
    Html,
    /// A workbook with outlined rows (src/report/xlsx.rs); needs `-o FILE`.
    Xlsx,
    /// A shell script of actions for the identical files, reviewed and run
    /// by a person (src/report/actions.rs).
    Sh,
}

impl Config {
    /// Every report asked for: the main one, then the `--also` ones.
    pub(crate) fn outputs(&self) -> impl Iterator<Item = (Format, Option<&std::path::Path>)> {
        std::iter::once((self.format, self.output.as_deref()))
            .chain(self.also.iter().map(|(f, p)| (*f, Some(p.as_path()))))
    }

    /// Whether any report asked for is in one of `formats`.
    pub(crate) fn writes(&self, formats: &[Format]) -> bool {
        self.outputs().any(|(f, _)| formats.contains(&f))
    }
}

/// When the text report is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// When writing to a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

/// ANSI styles of the text report; all empty without colour.
/// Options of `fsim-report`.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: PathBuf,
    pub pairs: PathBuf,
    pub output: Option<PathBuf>,
    pub format: Format,
    /// More reports written from the same model (`--also FORMAT=FILE`):
    /// the pairs are read and the model built once for all of them.
    pub also: Vec<(Format, PathBuf)>,
    pub min_percent: f64,
    pub min_bytes: u64,
    pub percent_of: PercentOf,
    /// Options of the HTML format.
    pub html: crate::report::model::HtmlOptions,
    /// Colour in the text report.
    pub color: ColorChoice,
    /// sif's post-processing filters (src/report/filter.rs).
    pub filters: crate::report::filter::Filters,
    /// Smallest cluster flagged as a likely template.
    pub template_min_files: usize,
    /// The templates files the analysis ignored (`--templates`): checked
    /// against the pairs header; the HTML views mark their chunks.
    pub templates: Vec<PathBuf>,
    /// Budget of the links held at once (`--memory`), besides what grows
    /// with the number of files and the stated constants of each format.
    pub memory: u64,
    /// Where a piped pairs input is spooled (`--tmpdir`; default: the
    /// system's temporary folder).
    pub tmpdir: Option<PathBuf>,
    /// A cluster of more files than this is shown as sub-clusters and each
    /// file's closest relatives: instead of its links in the text and html
    /// reports, beside them in the json (`--review-files`).
    pub review_files: usize,
    /// Which copy of an identical set the actions script keeps (`--keep`).
    pub keep: crate::report::actions::keep::Keep,
}

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
    /// Members of archives: copies nobody can remove alone.
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
            if e.archive.is_some() {
                d.in_archives += 1;
                continue;
            }
            match e.link.map(|l| *first.entry(l).or_insert(f)) {
                Some(k) if k != f => d.other_names.push((f, k)),
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

/// The "same content, different file" groups of `files` (those `path_ok`
/// keeps): files of one view hash (a raw file's is its content hash, a
/// content view's the file table's view hash) with at least two raw
/// contents. Only the content views' hashes are looked up, so this costs
/// little when few files are documents. Largest content first, then by
/// first file.
pub(crate) fn same_content(files: &CompactTable, path_ok: &[bool]) -> Vec<SameContent> {
    let wanted: std::collections::HashSet<u128> = files
        .view_hashes()
        .iter()
        .filter(|&&(i, _)| path_ok[i as usize])
        .map(|&(_, h)| h)
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let mut ids: Vec<(u128, u32)> = files
        .iter()
        .filter(|f| f.size > 0 && path_ok[f.id as usize])
        .filter_map(|f| files.view_hash(f.id).map(|h| (h, f.id)))
        .filter(|(h, _)| wanted.contains(h))
        .collect();
    ids.sort_unstable();
    let mut groups: Vec<SameContent> = ids
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|g| {
            g.iter()
                .any(|&(_, i)| files.content(i) != files.content(g[0].1))
        })
        .map(|g| SameContent {
            id: hex128(g[0].0)[..10].to_string(),
            size: files.at(g[0].1).size,
            files: g.iter().map(|&(_, i)| i).collect(),
        })
        .collect();
    groups.sort_by(|x, y| y.size.cmp(&x.size).then(x.files[0].cmp(&y.files[0])));
    groups
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
    // build: union-find, linked, covered bytes, review slot.
    let per_file =
        8 + 8 + 1 + size_of::<usize>() as u64 + 4 + if m.best { 8 } else { 0 } + 4 + 1 + 8 + 4;
    // A Vec's allocation costs its bytes plus ~16 of the allocator; the
    // build counts links, similarity, a first link, the largest and the
    // template figure per cluster.
    let per_cluster = size_of::<Cluster>() as u64 + 16 + 8 + 8 + 40 + 8 + 16 + 1;
    // Held: sub-clusters, closest links; build: three union-finds and the
    // closest links with their similarity.
    let per_reviewed = 12
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

/// fsim-verify drops the pairs under its `--min-percent` (the Makefile
/// gives it the report's): a report with a lower threshold, or one that
/// the dropped pairs could pass, would miss links without saying so, so it
/// is refused, naming the threshold to verify with.
pub(crate) fn check_verify_threshold(params: &Params, config: &Config, name: &str) -> Result<()> {
    let header = PairsHeader::parse(params).map_err(|m| Error::input(name, 1, m))?;
    if header.delta.is_some() {
        return Err(Error::input(
            name,
            1,
            "these pairs are only those of the files changed since an earlier run (delta=1, from fsim-analyze --previous-files): report on fsim-verify --previous's output",
        ));
    }
    let Some(verify) = header.verify else {
        return Ok(());
    };
    let Some(v) = verify.min_percent.filter(|&v| v > 0.0) else {
        return Ok(());
    };
    let of = verify.percent_of();
    // A share of the larger file is never above the share of the smaller:
    // links kept at >= X % of the larger are >= X % of the smaller.
    let covered = config.min_percent >= v && (of == config.percent_of || of == PercentOf::Smaller);
    if covered {
        return Ok(());
    }
    let of = of.as_str();
    Err(Error::input(
        name,
        1,
        format!(
            "verified with --min-percent {v} of the {of} file, so the links under it are not here: --min-percent {} of the {} file needs fsim-verify --min-percent {} --percent-of {} (make MIN_PERCENT={} verifies again)",
            config.min_percent,
            config.percent_of.as_str(),
            config.min_percent,
            config.percent_of.as_str(),
            config.min_percent
        ),
    ))
}

/// Read the analysis' pairs, check them against the file table, and hand
/// each to `each` in file order; the sizes the percentages use are set in
/// `sizes` (and handed to `each` with the pair). Returns the pairs' header
/// parameters.
pub(crate) fn scan_pairs(
    path: &Path,
    files: &CompactTable,
    table_params: &Params,
    files_name: &str,
    sizes: &mut [u64],
    each: &mut dyn FnMut(Pair, &[u64]),
) -> Result<Params> {
    let mut payloads = false;
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let mut check = InputCheck::new(Kind::Pairs, "pairs");
    let mut seen = Digest::default();
    while let Some((line, line_no)) = r.next_numbered()? {
        let err = |m: String| Error::input(&name, line_no, m);
        match line {
            Line::Header(k, p) => {
                check.header(k, p.clone()).map_err(err)?;
                // Read typed here so that `Report::header` always parses.
                payloads |= PairsHeader::parse(&p).map_err(err)?.templates.is_some();
                if let Some(d) = p.chunking_difference(table_params) {
                    return Err(Error::input(
                        &name,
                        line_no,
                        format!("pairs and file table {files_name} come from runs with different parameters: {d}"),
                    ));
                }
            }
            Line::Trailer(k, p) => check.trailer(k, &p).map_err(err)?,
            Line::Comment(_) => {}
            Line::Data(d) => {
                // 6 fields from fsim-analyze, 8 from fsim-verify (exact
                // figure and status appended).
                let (p, figure) = pairs::parse_line(d).map_err(|e| err(e.message()))?;
                let (a, b, sa, sb, common) = (p.a, p.b, p.size_a, p.size_b, p.common);
                let shared = u64::from(p.shared);
                // The exact figure replaces the chunk lower bound; a
                // lower-bound line keeps the better of its two lower bounds.
                let (best, exact) = match figure {
                    None => (common, false),
                    Some(f) if f.exact => (f.bytes, true),
                    Some(f) => (f.bytes.max(common), false),
                };
                // Sizes only (`CompactTable::get` also finds the path and archive).
                let size = |id: u32| ((id as usize) < files.len()).then(|| files.size(id));
                let (fa, fb) = (size(a), size(b));
                // With templates the pairs carry payload sizes.
                let fits = |f: u64, s: u64| f == s || (payloads && f > s);
                match (fa, fb) {
                    (Some(fa), Some(fb)) if fits(fa, sa) && fits(fb, sb) && a < b => {
                        sizes[a as usize] = sa;
                        sizes[b as usize] = sb;
                    }
                    _ => {
                        return Err(err(format!(
                            "pair {a}-{b} does not match the file table {files_name} (unknown id or other size): pairs from another run?"
                        )))
                    }
                }
                seen.add_mix(p.mix());
                each(
                    Pair {
                        a,
                        b,
                        common: best,
                        shared_chunks: shared,
                        exact,
                    },
                    sizes,
                );
            }
        }
    }
    check.finish(&seen, &name, r.line_number())?;
    Ok(check.params.unwrap_or_default())
}

/// Round to one decimal, so reports are stable and readable.
pub(crate) fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// What both ways of building a report read before the pairs: the file
/// table, its collections, the identical sets and the path filters.
pub(crate) struct Prelude {
    pub files: CompactTable,
    pub table_params: Params,
    pub files_name: String,
    pub collections: Vec<crate::formats::collections::Collection>,
    pub coll: Vec<usize>,
    pub sizes: Vec<u64>,
    pub path_ok: Vec<bool>,
    pub identical: Vec<IdenticalSet>,
    pub hard_links: Vec<HardLinks>,
    pub set_of: HashMap<u32, usize>,
    pub same_content: Vec<SameContent>,
    /// The file table's trailer: the walk's counts.
    pub walk: FilesTrailer,
}

pub(crate) fn prelude(config: &Config) -> Result<Prelude> {
    let (files, table_params, trailer) = read_compact_table(&config.files)?;
    // Only the walk's counts: the scan checked the keys it needs, and a
    // table written by a test may give the others loosely.
    let walk = FilesTrailer {
        repeated: trailer.get_u64("repeated"),
        work_folders: trailer.get_u64("work-folders"),
        excluded: trailer.get_u64("excluded"),
        left_out_by: trailer.get("left-out-by").map(str::to_string),
        ..FilesTrailer::default()
    };
    let files_name = config.files.display().to_string();
    let collections = crate::formats::collections::read(&config.files)?;
    let coll = crate::formats::collections::of_files(&collections, files.len())
        .map_err(|m| Error::msg(format!("{files_name}: {m}")))?;
    let sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
    let filters = &config.filters;
    let path_filtered = !filters.include.is_empty() || !filters.exclude.is_empty();
    let path_ok: Vec<bool> = files
        .iter()
        .map(|f| !path_filtered || filters.file_ok(&escape_path_string(f.path)))
        .collect();

    let (identical, hard_links) = identical_sets(&files, &path_ok);
    let mut set_of = HashMap::new();
    for (i, s) in identical.iter().enumerate() {
        set_of.insert(s.files[0], i);
    }
    let same_content = same_content(&files, &path_ok);
    Ok(Prelude {
        files,
        table_params,
        files_name,
        collections,
        coll,
        sizes,
        path_ok,
        identical,
        hard_links,
        set_of,
        same_content,
        walk,
    })
}

/// The identical sets (2.4) of the files `path_ok` keeps, and the names
/// of one file with no other file of their content: equal content hash
/// (raw bytes), not empty on disk (a document with no text is a file like
/// any other). Sets by overhead (largest first), hard links by size, then
/// by first file. The ids are sorted by content: 4 bytes a file, where a
/// map from content to ids cost ~80 (80 MB at a million files, over the
/// report's budget).
pub(crate) fn identical_sets(
    files: &CompactTable,
    path_ok: &[bool],
) -> (Vec<IdenticalSet>, Vec<HardLinks>) {
    let mut ids: Vec<u32> = files
        .iter()
        .filter(|f| f.raw_size > 0 && path_ok[f.id as usize])
        .map(|f| f.id)
        .collect();
    ids.sort_unstable_by_key(|&i| (files.content(i), i));
    let (mut identical, mut hard_links) = (Vec::new(), Vec::new());
    for v in ids.chunk_by(|&x, &y| files.content(x) == files.content(y)) {
        if v.len() < 2 {
            continue;
        }
        let id = hex128(files.content(v[0]))[..10].to_string();
        let (size, disk) = (files.raw_size(v[0]), OnDisk::of(files, v));
        if disk.files == 1 && disk.in_archives == 0 {
            let files = v.to_vec();
            hard_links.push(HardLinks { id, size, files });
            continue;
        }
        identical.push(IdenticalSet {
            id,
            size,
            files: v.to_vec(),
            disk,
            folder_pair: None,
        });
    }
    identical.sort_by(|x, y| {
        y.overhead()
            .cmp(&x.overhead())
            .then(x.files[0].cmp(&y.files[0]))
    });
    hard_links.sort_by(|x, y| y.size.cmp(&x.size).then(x.files[0].cmp(&y.files[0])));
    (identical, hard_links)
}

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
    let id_hash = members
        .iter()
        .map(|&m| files.at(m).content)
        .min()
        .unwrap_or(0);
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

/// Does a link pass the thresholds?
pub(crate) fn keep_link(config: &Config, sizes: &[u64], p: &Pair) -> bool {
    let (sa, sb) = (sizes[p.a as usize], sizes[p.b as usize]);
    let base = config.percent_of.base(sa, sb);
    p.common >= config.min_bytes && p.common > 0 && percent(p.common, base) >= config.min_percent
}

/// Does a link (above the thresholds) pass the filters?
pub(crate) fn pass_link(
    config: &Config,
    files: &CompactTable,
    sizes: &[u64],
    path_ok: &[bool],
    coll: &[usize],
    p: &Pair,
) -> bool {
    let (a, b) = (p.a as usize, p.b as usize);
    path_ok[a]
        && path_ok[b]
        && config
            .filters
            .link_ok(files, (p.a, p.b), sizes[a], sizes[b], coll[a], coll[b])
}

/// The report's parameters: the pairs' plus the report's own.
pub(crate) fn report_params(pair_params: Params, config: &Config) -> Params {
    let own = ReportParams {
        min_percent: config.min_percent,
        min_bytes: config.min_bytes,
        percent_of: config.percent_of,
        filters: config.filters.describe(),
    };
    pair_params.merged(&own.to_params())
}

/// Human-readable size: `812 B`, `12.3 KiB`, `4.1 MiB`.
pub fn human_bytes(n: u64) -> String {
    match crate::cli::byte_units(n) {
        (_, "B") => format!("{n} B"),
        (v, unit) => format!("{v:.1} {unit}"),
    }
}

/// Options of the HTML format.
#[derive(Debug, Clone, Copy)]
pub struct HtmlOptions {
    /// Side-by-side views for at most this many links (first clusters first).
    pub max_views: usize,
    /// Bytes of text embedded per viewed file at most.
    pub text_cap: usize,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        HtmlOptions {
            max_views: 200,
            text_cap: 256 << 10,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::files::{FileEntry, FileType, FileView, ViewKind};

    /// A file of `content` and `size` on disk, with a view of `view`
    /// bytes, a hard-link mark and an archive prefix when given.
    fn entry(
        id: u32,
        content: u128,
        size: u64,
        view: u64,
        link: Option<u64>,
        member: bool,
    ) -> FileEntry {
        let mut v = FileView::raw(size);
        if view != size {
            v.kind = ViewKind::Gzip;
        }
        v.link = link.map(|ino| (1, ino));
        v.archive = member.then_some(6);
        FileEntry {
            id,
            size: view,
            mtime_s: 0,
            mtime_ns: 0,
            content,
            ftype: FileType::Text,
            view: v,
            path: format!("a.zip!/f{id}").into_bytes(),
        }
    }

    /// The overhead is the bytes on disk a plan could free: names of one
    /// file count once, archive members and empty views nothing apart.
    #[test]
    fn overhead_counts_each_file_on_disk_once() {
        let mut t = CompactTable::default();
        let files = [
            // One file, three names: no set.
            entry(0, 1, 100, 100, Some(7), false),
            entry(1, 1, 100, 100, Some(7), false),
            entry(2, 1, 100, 100, Some(7), false),
            // A gzip (view 900 bytes), its hard link, a copy, a member.
            entry(3, 2, 300, 900, Some(8), false),
            entry(4, 2, 300, 900, Some(8), false),
            entry(5, 2, 300, 900, None, false),
            entry(6, 2, 300, 900, None, true),
            // A loose file and its copy in an archive: nothing to free.
            entry(7, 3, 50, 50, None, false),
            entry(8, 3, 50, 50, None, true),
            // Documents without text (view empty), byte for byte alike.
            entry(9, 4, 40, 0, None, false),
            entry(10, 4, 40, 0, None, false),
        ];
        for f in &files {
            t.push(f);
        }
        let (sets, links) = identical_sets(&t, &[true; 11]);
        assert_eq!(links.len(), 1);
        assert_eq!((links[0].size, &links[0].files[..]), (100, &[0, 1, 2][..]));
        let figures: Vec<(u64, u64, u32, u32)> = sets
            .iter()
            .map(|s| (s.size, s.overhead(), s.disk.files, s.disk.in_archives))
            .collect();
        assert_eq!(figures, [(300, 300, 2, 1), (40, 40, 2, 0), (50, 0, 1, 1)]);
        assert_eq!(sets[0].disk.other_names, [(4, 3)]);
        assert_eq!(sets[0].disk.name_of(4), Some(3));
        assert_eq!(sets[0].disk.name_of(5), None);
    }
}
