//! The reports within a memory budget, whatever the number of links:
//! txt, json and tsv are written here; html and xlsx take
//! their links through the same [`walk`].
//!
//! The pairs' text is read once (a piped input is first spooled to a
//! temporary file), and the kept links several times from a temporary file
//! of 25 bytes a link that the first read writes ([`Source`]):
//!
//! 1. check the pairs (header, digest, trailer, file table), apply the
//!    thresholds and the filters, and join the files of each kept link
//!    (union-find over file ids);
//! 2. count each cluster's links and sum their similarities (in (a, b)
//!    order, as the in-memory report does, so the figures are the same);
//! 3. for the clusters that may be likely templates, the 10th percentile and
//!    the median of their bytes in common (collected when they fit in the
//!    budget, else sorted by cluster through the external sorter: one read
//!    either way);
//! 4. write the report, clusters in their order: the links are read once
//!    more and sorted by (cluster rank, a, b) through the shared external
//!    sorter, in memory when they fit in what `--memory` leaves, else in
//!    runs on disk merged as the report is written ([`walk`]). Several
//!    txt, json and tsv reports take the walk's steps on a thread each
//!    ([`fan_out`]).
//!
//! Step 2 also finds each file's reclaimable bytes (the most it shares
//! with one larger file of its cluster: the clusters' ranking), its best
//! share (html, xlsx), and the sub-clusters and closest relatives of the
//! large clusters.
//!
//! Memory: `--memory` in all. The model (the file table, the identical
//! sets, the clusters, the counters of steps 1-3; ~150 bytes per file,
//! estimated from the counts by [`crate::report::model::model_bytes`]) is
//! taken from it first, and the links get what is left; when the model
//! alone is over `--memory`, fsim-report says so on stderr and goes on.

use crate::error::{Error, Result};
use crate::formats::{percent, symmetric, Params};
use crate::io::sorter::{le_u32, le_u64, ExternalSorter, FixedRecord, SortOptions, MIN_MEMORY};
use crate::io::Output;
use crate::report::folders::{FolderReport, Folders, SetRef};
use crate::report::model::{
    check_verify_threshold, keep_link, make_cluster, median_size, model_bytes, pass_link, prelude,
    rank_order, report_params, scan_pairs, Cluster, Config, Format, ModelCounts, Pair, Prelude,
    Report, Review, CLOSEST, REVIEW_LEVELS,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// No cluster.
const NONE: u32 = u32::MAX;

/// What reading the links again needs: the kept links (thresholds and
/// filters passed), in the pairs' order, as the first read found them,
/// in a temporary file of [`KEPT_RECORD`] bytes a link (`--tmpdir`).
///
/// The later reads (the figures, the templates, the folder pairs' three
/// passes, the walk of each report) take them from it: each read of the
/// pairs' text parsed and checked every line again (on Django + moment
/// ~40 ms a read, seven reads), and a kept link's record is half a
/// verified pair's line.
pub(crate) struct Source {
    kept: tempfile::NamedTempFile,
}

/// Bytes of a kept link in [`Source`]'s file: a, b (u32), common,
/// shared_chunks (u64), exact (u8), little-endian.
const KEPT_RECORD: usize = 25;

impl Source {
    /// Every kept link (thresholds and filters passed), in file order.
    fn kept(&mut self, each: &mut dyn FnMut(Pair)) -> Result<()> {
        use std::io::Read;
        let path = self.kept.path();
        let fail = |e: std::io::Error| Error::msg(format!("reading {}: {e}", path.display()));
        let file = std::fs::File::open(path).map_err(fail)?;
        let mut r = std::io::BufReader::with_capacity(1 << 20, file);
        let mut rec = [0u8; KEPT_RECORD];
        loop {
            match r.read_exact(&mut rec) {
                Ok(()) => each(Pair {
                    a: le_u32(&rec, 0),
                    b: le_u32(&rec, 4),
                    common: le_u64(&rec, 8),
                    shared_chunks: le_u64(&rec, 16),
                    exact: rec[24] != 0,
                }),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(fail(e)),
            }
        }
    }
}

/// Writes the kept links of the first read ([`Source`]).
struct KeptWriter {
    out: std::io::BufWriter<std::fs::File>,
    file: tempfile::NamedTempFile,
    failed: Option<std::io::Error>,
}

impl KeptWriter {
    fn create(config: &Config) -> Result<KeptWriter> {
        let dir = config.tmpdir.clone().unwrap_or_else(std::env::temp_dir);
        let file = temp_file(&dir, "fsim-report-links.", "")?;
        let handle = file
            .as_file()
            .try_clone()
            .map_err(|e| Error::msg(format!("{}: {e}", file.path().display())))?;
        Ok(KeptWriter {
            out: std::io::BufWriter::with_capacity(1 << 20, handle),
            file,
            failed: None,
        })
    }

    fn push(&mut self, p: &Pair) {
        use std::io::Write;
        let mut rec = [0u8; KEPT_RECORD];
        rec[0..4].copy_from_slice(&p.a.to_le_bytes());
        rec[4..8].copy_from_slice(&p.b.to_le_bytes());
        rec[8..16].copy_from_slice(&p.common.to_le_bytes());
        rec[16..24].copy_from_slice(&p.shared_chunks.to_le_bytes());
        rec[24] = u8::from(p.exact);
        if self.failed.is_none() {
            self.failed = self.out.write_all(&rec).err();
        }
    }

    fn finish(self) -> Result<Source> {
        use std::io::Write;
        let path = self.file.path().display().to_string();
        let mut out = self.out;
        let done = match self.failed {
            Some(e) => Err(e),
            None => out.flush(),
        };
        done.map_err(|e| Error::msg(format!("writing {path}: {e}")))?;
        Ok(Source { kept: self.file })
    }
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// Spool a piped or standard input to a temporary file.
fn spool(config: &Config) -> Result<Option<tempfile::NamedTempFile>> {
    let path = &config.pairs;
    let regular =
        path.as_os_str() != "-" && std::fs::metadata(path).map(|m| m.is_file()).unwrap_or(true);
    if regular {
        return Ok(None);
    }
    let dir = config.tmpdir.clone().unwrap_or_else(std::env::temp_dir);
    let mut tmp = temp_file(&dir, "fsim-report-pairs.", "")?;
    let (mut input, name) = crate::formats::open_input(path)?;
    std::io::copy(&mut input, tmp.as_file_mut())
        .map_err(|e| Error::msg(format!("spooling {name} to {}: {e}", tmp.path().display())))?;
    Ok(Some(tmp))
}

/// A temporary file in `dir`, removed on drop.
pub(crate) fn temp_file(
    dir: &std::path::Path,
    prefix: &str,
    suffix: &str,
) -> Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .tempfile_in(dir)
        .map_err(|e| {
            Error::msg(format!(
                "cannot create a temporary file in {}: {e}",
                dir.display()
            ))
        })
}

/// An output written through a 1 MiB buffer.
pub(crate) struct Buffered {
    out: Output,
    buf: String,
}

impl Buffered {
    pub(crate) fn create(path: Option<&std::path::Path>) -> Result<Buffered> {
        Ok(Buffered {
            out: Output::create(path)?,
            buf: String::new(),
        })
    }

    pub(crate) fn push(&mut self, s: &str) -> Result<()> {
        if s.len() >= 1 << 20 {
            // Written as it is: a large piece never doubles the buffer.
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
            return self.out.write_all(s.as_bytes());
        }
        self.buf.push_str(s);
        if self.buf.len() >= 1 << 20 {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Bytes that need not be UTF-8 (a path as it is on disk).
    pub(crate) fn push_bytes(&mut self, b: &[u8]) -> Result<()> {
        self.out.write_all(self.buf.as_bytes())?;
        self.buf.clear();
        self.out.write_all(b)
    }

    pub(crate) fn finish(mut self) -> Result<()> {
        self.out.write_all(self.buf.as_bytes())?;
        self.out.finish()
    }
}

/// Step 1's result: the clusters, numbered by smallest file id for now.
struct Joined {
    /// Cluster of each file (`NONE`: in no kept link).
    cluster_of: Vec<u32>,
    /// The files of each cluster, in id order.
    members: Vec<Vec<u32>>,
    pair_params: Params,
    pairs_read: u64,
    /// Links above the thresholds that the filters dropped.
    filtered_links: u64,
    /// The kept links, for the reads after this one.
    source: Source,
}

/// Step 1: check, threshold, filter, join: the clusters of the kept links.
fn join(config: &Config, path: &Path, pre: &mut Prelude) -> Result<Joined> {
    let mut kept = KeptWriter::create(config)?;
    let n = pre.files.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    let mut linked = vec![false; n];
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
                linked[p.a as usize] = true;
                linked[p.b as usize] = true;
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
        if !linked[f as usize] {
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
        pair_params,
        pairs_read,
        filtered_links: n_above - n_kept,
        source: kept.finish()?,
    })
}

/// Step 2's figures: per cluster its links and similarity; per file the
/// most bytes it shares with one larger file of its cluster (what could be
/// removed) and, for html and xlsx, the largest share of it in one link;
/// the sub-clusters and closest relatives of the large clusters.
struct LinkFigures {
    count: Vec<usize>,
    sum: Vec<f64>,
    first: Vec<Option<Pair>>,
    max_common: Vec<u64>,
    covered: Vec<u64>,
    want_best: bool,
    best: Vec<f64>,
    facts: BTreeSet<(u32, usize)>,
    /// Clusters reviewed as sub-clusters and closest relatives (all
    /// formats but tsv, over `--review-files` files).
    big: Vec<bool>,
    /// Each file's slot among the files of the big clusters.
    slot: Vec<u32>,
    /// Files in the big clusters.
    in_big: u32,
    /// A union-find over the slots per review level.
    level_parent: Vec<Vec<u32>>,
    /// The `CLOSEST` closest relatives of each slot.
    closest: Vec<Vec<(f64, Pair)>>,
}

impl LinkFigures {
    fn new(report: &Report, members: &[Vec<u32>]) -> LinkFigures {
        let (n, k) = (report.files.len(), members.len());
        // Computed when a report asked for uses them; the others ignore them.
        let want_best = report.config.writes(&[Format::Html, Format::Xlsx]);
        let review = report.config.writes(&[
            Format::Text,
            Format::Json,
            Format::Html,
            Format::Xlsx,
            Format::Sh,
        ]);
        let big: Vec<bool> = members
            .iter()
            .map(|m| review && m.len() > report.config.review_files)
            .collect();
        // The files of the large clusters get consecutive slots, so their
        // union-finds and closest relatives take memory for them alone.
        let mut slot = vec![NONE; if big.iter().any(|&b| b) { n } else { 0 }];
        let mut in_big = 0u32;
        for (c, m) in members.iter().enumerate() {
            if big[c] {
                for &f in m {
                    slot[f as usize] = in_big;
                    in_big += 1;
                }
            }
        }
        LinkFigures {
            count: vec![0; k],
            sum: vec![0.0; k],
            first: vec![None; k],
            max_common: vec![0; k],
            covered: vec![0; n],
            want_best,
            best: vec![0.0; if want_best { n } else { 0 }],
            facts: BTreeSet::new(),
            big,
            slot,
            in_big,
            level_parent: REVIEW_LEVELS
                .iter()
                .map(|_| (0..in_big).collect())
                .collect(),
            closest: vec![Vec::new(); in_big as usize],
        }
    }

    /// Count link `p` of cluster `c`.
    #[inline]
    fn add(&mut self, report: &Report, c: usize, p: Pair) {
        let sizes = &report.sizes;
        self.count[c] += 1;
        let (sa, sb) = (sizes[p.a as usize], sizes[p.b as usize]);
        // The smaller file (size, then the larger id) is covered.
        let small = if (std::cmp::Reverse(sa), p.a) < (std::cmp::Reverse(sb), p.b) {
            p.b
        } else {
            p.a
        };
        let cov = &mut self.covered[small as usize];
        *cov = (*cov).max(p.common);
        if self.want_best {
            for (f, s) in [(p.a, sa), (p.b, sb)] {
                let x = &mut self.best[f as usize];
                *x = x.max(percent(p.common, s));
            }
        }
        crate::report::collections::add_similar(report, &mut self.facts, &p);
        let sim = symmetric(p.common, sa, sb);
        self.sum[c] += sim;
        self.first[c].get_or_insert(p);
        self.max_common[c] = self.max_common[c].max(p.common);
        if self.big[c] {
            self.review(p, sim);
        }
    }

    /// Join link `p` (similarity `sim`) at each review level it reaches,
    /// and keep it among its files' closest relatives if it is one.
    #[inline]
    fn review(&mut self, p: Pair, sim: f64) {
        let (xa, xb) = (self.slot[p.a as usize], self.slot[p.b as usize]);
        for (l, parent) in REVIEW_LEVELS.iter().zip(self.level_parent.iter_mut()) {
            if sim >= *l {
                let (ra, rb) = (find(parent, xa), find(parent, xb));
                if ra != rb {
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
            }
        }
        for (me, x) in [(p.a, xa), (p.b, xb)] {
            let top = &mut self.closest[x as usize];
            let key = |x: &(f64, Pair)| {
                let o = if x.1.a == me { x.1.b } else { x.1.a };
                // Similarities are >= 0: their bits order them.
                (std::cmp::Reverse(x.0.to_bits()), o)
            };
            let new = (sim, p);
            if top.len() < CLOSEST || key(&new) < key(top.last().unwrap()) {
                let at = top.partition_point(|x| key(x) < key(&new));
                top.insert(at, new);
                top.truncate(CLOSEST);
            }
        }
    }

    /// The sub-clusters at each review level and the closest relatives of
    /// each file of `cl`, a big cluster (its relatives are taken).
    fn review_of(&mut self, cl: &Cluster) -> Review {
        let slot = &self.slot;
        let mut sub = vec![[0u32; 3]; cl.files.len()];
        let levels = self
            .level_parent
            .iter_mut()
            .enumerate()
            .map(|(l, parent)| {
                // Sub-clusters numbered by their first (largest) file.
                let mut label: std::collections::HashMap<u32, u32> = Default::default();
                let mut sizes: Vec<usize> = Vec::new();
                for (i, &f) in cl.files.iter().enumerate() {
                    let next = label.len() as u32 + 1;
                    let x = *label.entry(find(parent, slot[f as usize])).or_insert(next);
                    if x as usize > sizes.len() {
                        sizes.push(0);
                    }
                    sizes[x as usize - 1] += 1;
                    sub[i][l] = x;
                }
                (sizes.len(), sizes.iter().copied().max().unwrap_or(0))
            })
            .collect();
        let closest = cl
            .files
            .iter()
            .map(|&f| {
                std::mem::take(&mut self.closest[slot[f as usize] as usize])
                    .into_iter()
                    .map(|x| x.1)
                    .collect()
            })
            .collect();
        Review {
            levels,
            sub,
            closest,
        }
    }
}

/// Step 2: read the kept links once for their [`LinkFigures`].
fn link_figures(
    report: &Report,
    source: &mut Source,
    cluster_of: &[u32],
    members: &[Vec<u32>],
) -> Result<LinkFigures> {
    let mut lf = LinkFigures::new(report, members);
    source.kept(&mut |p| lf.add(report, cluster_of[p.a as usize] as usize, p))?;
    Ok(lf)
}

/// Step 3, likely templates: the 10th percentile and the median of bytes
/// in common, for the clusters that are (nearly) cliques. One read of the
/// links either way: their bytes in common are held when all the
/// candidates' fit in what the model leaves of `--memory`, else sorted by
/// cluster through the external sorter ([`Templates::sorted`]). Reading
/// them in batches of what fits, and a cluster too large for the budget
/// alone by narrowing a histogram over a few reads, was quadratic when the
/// model left little: more than 20 minutes at a million files and
/// `--memory 128M`.
fn likely_templates(
    report: &Report,
    source: &mut Source,
    cluster_of: &[u32],
    members: &[Vec<u32>],
    lf: &LinkFigures,
) -> Result<Vec<Option<u64>>> {
    let k = members.len();
    let min_files = report.config.template_min_files;
    let candidate = |c: usize| {
        let f = members[c].len() as u64;
        f >= min_files.max(3) as u64 && lf.count[c] as u64 * 10 >= f * (f - 1) / 2 * 9
    };
    let mut template: Vec<Option<u64>> = vec![None; k];
    // What is left of --memory beside the model (its build's counters
    // included).
    let budget = {
        let model = model_bytes(&ModelCounts {
            files: &report.files,
            clusters: k,
            clustered: members.iter().map(|m| m.len()).sum(),
            reviewed: lf.in_big as usize,
            identical: &report.identical,
            same_content: &report.same_content,
            best: lf.want_best,
        });
        report.config.memory.saturating_sub(model).max(1)
    };
    // 8 bytes per link, 8 per file (its closest relative), 24 per cluster.
    let need = |c: usize| (lf.count[c] + members[c].len() + 3) as u64 * 8;
    let cands: Vec<usize> = (0..k).filter(|&c| candidate(c)).collect();
    if cands.is_empty() {
        return Ok(template);
    }
    if cands.iter().map(|&c| need(c)).sum::<u64>() > budget {
        let t = Templates {
            cluster_of,
            members,
            lf,
        };
        t.sorted(report, source, &cands, budget, &mut template)?;
        return Ok(template);
    }
    // Each candidate's bytes in common (`commons`, from `first[x].0` on)
    // and each of its files' most bytes in common with another
    // (`closest`, from `first[x].1` on, in the order of its members: by
    // id, as `join` found them): two allocations, exactly what `need`
    // counts, returned whole when freed (a vector a cluster and a map of
    // the files took half as much again, and their freed pieces stayed
    // resident under the links' sorter: 277 MiB at `--memory 256M`).
    let mut slot = vec![NONE; k];
    let mut first = Vec::with_capacity(cands.len());
    let (mut links, mut files) = (0, 0);
    for (x, &c) in cands.iter().enumerate() {
        slot[c] = x as u32;
        first.push((links, files));
        links += lf.count[c];
        files += members[c].len();
    }
    let mut next: Vec<usize> = first.iter().map(|f| f.0).collect();
    let mut commons = vec![0u64; links];
    let mut closest = vec![0u64; files];
    source.kept(&mut |p| {
        let c = cluster_of[p.a as usize] as usize;
        let Some(x) = slot.get(c).filter(|&&x| x != NONE).map(|&x| x as usize) else {
            return;
        };
        commons[next[x]] = p.common;
        next[x] += 1;
        for f in [p.a, p.b] {
            let at = members[c].binary_search(&f).expect("a member");
            let m = &mut closest[first[x].1 + at];
            *m = (*m).max(p.common);
        }
    })?;
    for (x, &c) in cands.iter().enumerate() {
        let (l, f) = first[x];
        template[c] = crate::report::templates::likely_template(
            members[c].len(),
            &commons[l..l + lf.count[c]],
            median_size(&report.sizes, &members[c]),
            min_files,
            &closest[f..f + members[c].len()],
        );
    }
    Ok(template)
}

/// A figure of a likely-template candidate, sorted by cluster
/// ([`Templates::sorted`]): `key` is the cluster's index `<< 32`, plus 0
/// for a link's bytes in common, or plus a file's id + 1 for that file's
/// most bytes in common with another file of the cluster. A cluster's
/// links come first, by bytes in common (its percentiles are read at
/// their ranks), then its files, each once (the sorter keeps the last,
/// the greatest, of a file's figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TemplateFigure {
    key: u64,
    common: u64,
}

impl FixedRecord for TemplateFigure {
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.key.to_le_bytes());
        out[8..16].copy_from_slice(&self.common.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        TemplateFigure {
            key: le_u64(b, 0),
            common: le_u64(b, 8),
        }
    }
}

/// What the sorted test of the likely templates reads.
struct Templates<'a> {
    cluster_of: &'a [u32],
    members: &'a [Vec<u32>],
    lf: &'a LinkFigures,
}

impl Templates<'_> {
    /// The likely-template test of the candidates `cands` in one read of
    /// the links: each link's bytes in common and its files' figures go
    /// through the external sorter (`budget` bytes of buffer, runs in
    /// `--tmpdir`), and each cluster's percentiles and closer relatives
    /// are counted as its sorted figures come: the same figures as
    /// [`crate::report::templates::likely_template`] on them all.
    fn sorted(
        &self,
        report: &Report,
        source: &mut Source,
        cands: &[usize],
        budget: u64,
        template: &mut [Option<u64>],
    ) -> Result<()> {
        let mut is_cand = vec![false; self.members.len()];
        for &c in cands {
            is_cand[c] = true;
        }
        let mut opts = SortOptions::with_memory(budget.max(MIN_MEMORY));
        opts.tmpdir = report.config.tmpdir.clone();
        // A file's figures are one group; links' (low word 0) are not.
        let same: fn(&TemplateFigure, &TemplateFigure) -> bool =
            |x, y| x.key == y.key && x.key as u32 != 0;
        let mut sorter = ExternalSorter::new(opts).keep_last_of(same);
        let (mut err, mut run) = (None, None::<TemplateFigure>);
        let cluster_of = self.cluster_of;
        source.kept(&mut |p| {
            let c = cluster_of[p.a as usize];
            if err.is_some() || !is_cand[c as usize] {
                return;
            }
            let key = |f: u32| u64::from(c) << 32 | (u64::from(f) + 1);
            let figure = |key| TemplateFigure {
                key,
                common: p.common,
            };
            let mut out = [
                Some(figure(u64::from(c) << 32)),
                Some(figure(key(p.b))),
                None,
            ];
            // File a's links come together (the pairs' order): combined
            // here, one figure a file instead of one a link.
            match &mut run {
                Some(r) if r.key == key(p.a) => r.common = r.common.max(p.common),
                _ => out[2] = run.replace(figure(key(p.a))),
            }
            for f in out.into_iter().flatten() {
                if let Err(e) = sorter.push(f) {
                    err = Some(e);
                }
            }
        })?;
        if let Some(r) = run {
            sorter.push(r)?;
        }
        err.map_or(Ok(()), Err)?;
        let mut sorted = sorter.finish()?;
        let mut next = sorted.next_item()?;
        while let Some(first) = next {
            let c = (first.key >> 32) as usize;
            let len = self.lf.count[c] as u64;
            let (mut i, mut p10, mut median) = (0u64, 0, 0);
            while let Some(f) = next.filter(|f| f.key == first.key & !0xffff_ffff) {
                if i == len / 10 {
                    p10 = f.common;
                }
                if i == len / 2 {
                    median = f.common;
                }
                i += 1;
                next = sorted.next_item()?;
            }
            let mut closer = 0;
            while let Some(f) = next.filter(|f| f.key >> 32 == c as u64) {
                closer += usize::from(f.common * 8 >= p10 * 9);
                next = sorted.next_item()?;
            }
            template[c] = crate::report::templates::uniform_template_of(
                p10,
                median,
                median_size(&report.sizes, &self.members[c]),
                closer,
                self.members[c].len(),
            );
        }
        Ok(())
    }
}

/// The clusters with their figures (the per-cluster and per-file counters
/// of `lf` are freed), and the review of the big ones.
fn make_clusters(
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
fn rank(clusters: &mut [Cluster], cluster_of: &mut [u32]) {
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

/// Build the report without its links: clusters with their figures, and
/// what reading the links again needs; and the rank (output position) of
/// each file's cluster.
fn build(config: Config) -> Result<(Report, Source, Vec<u32>)> {
    crate::io::wait_for_input(&config.pairs)?;
    let spooled = spool(&config)?;
    let path = spooled
        .as_ref()
        .map_or_else(|| config.pairs.clone(), |t| t.path().to_path_buf());
    let mut pre = prelude(&config)?;
    let Joined {
        mut cluster_of,
        members,
        pair_params,
        pairs_read,
        filtered_links,
        mut source,
    } = join(&config, &path, &mut pre)?;
    drop(spooled);
    let mut report = Report {
        files: pre.files,
        params: report_params(pair_params, &config),
        config,
        identical: pre.identical,
        hard_links: pre.hard_links,
        walk: pre.walk,
        same_content: pre.same_content,
        clusters: Vec::new(),
        set_of: pre.set_of,
        pairs_read,
        sizes: pre.sizes,
        collections: pre.collections,
        coll: pre.coll,
        filtered_links,
        similar_facts: BTreeSet::new(),
        best: Vec::new(),
        folders: Default::default(),
    };
    let mut lf = link_figures(&report, &mut source, &cluster_of, &members)?;
    let template = likely_templates(&report, &mut source, &cluster_of, &members, &lf)?;
    let mut clusters = make_clusters(&report, members, &cluster_of, &mut lf, template);
    report.similar_facts = std::mem::take(&mut lf.facts);
    report.best = std::mem::take(&mut lf.best);
    drop(lf);
    rank(&mut clusters, &mut cluster_of);
    report.clusters = clusters;
    report.folders = folder_pairs(&report, &mut source)?;
    let explains = std::mem::take(&mut report.folders.explains);
    let (of_clusters, of_sets) = explains.split_at(report.clusters.len());
    for (c, &k) in report.clusters.iter_mut().zip(of_clusters) {
        c.folder_pair = k;
    }
    for (s, &k) in report.identical.iter_mut().zip(of_sets) {
        s.folder_pair = k;
    }
    warn_if_over_memory(&report);
    Ok((report, source, cluster_of))
}

/// The folder pairs of the kept links and the identical sets, their
/// credits sorted within what `--memory` leaves the links.
fn folder_pairs(report: &Report, source: &mut Source) -> Result<FolderReport> {
    // No link is held meanwhile: what the links may hold is the folder
    // pairs' (`Folders::new` shares it).
    let mut sort = SortOptions::with_memory(report.link_budget());
    sort.tmpdir = report.config.tmpdir.clone();
    let sets: Vec<SetRef> = report
        .identical
        .iter()
        .map(|s| SetRef {
            // The folder figures are in the sizes the links use (a
            // view's), as the folders' bytes are.
            size: report.files.size(s.files[0]),
            files: &s.files,
        })
        .collect();
    let mut folders = Folders::new(&report.files, &sets, &report.set_of, sort)?;
    let mut feed = |folders: &mut Folders| {
        let mut failed = None;
        source.kept(&mut |p| {
            if failed.is_none() {
                failed = folders.link(p.a, p.b, p.common).err();
            }
        })?;
        failed.map_or(Ok(()), Err)
    };
    let groups: Vec<&[u32]> = report
        .clusters
        .iter()
        .map(|c| &c.files[..])
        .chain(report.identical.iter().map(|s| &s.files[..]))
        .collect();
    let mut found = folders.figure(report.config.min_percent, &groups, &mut feed)?;
    if !found.pairs.is_empty() {
        // Another pass for the file lists of the first pairs.
        folders.start_details(&found)?;
        feed(&mut folders)?;
        folders.finish_details(&mut found)?;
    }
    Ok(found)
}

/// Say on stderr when the model alone is over `--memory`.
fn warn_if_over_memory(report: &Report) {
    let model = report.model_bytes();
    if model > report.config.memory {
        let mib = |b: u64| b.div_ceil(1 << 20);
        // One write: under `make -j` another process's line may not land
        // in the middle of it (tests/driver/resume.rs reads them).
        crate::cli::stderr_line(format_args!(
            "fsim-report: warning: --memory {} MiB is less than what {} files and {} clusters need ({} MiB, docs/formats.md \"Memory\"); going on above it, with its links sorted on disk (--memory {}M would hold it)",
            mib(report.config.memory),
            report.files.len(),
            report.clusters.len(),
            mib(model),
            mib(model) + 1
        ));
    }
}

/// Where the report goes: the output file through a 1 MiB buffer.
struct Sink {
    out: Buffered,
    format: Format,
    color: bool,
    /// Links written in the current cluster.
    in_cluster: usize,
    /// Clusters written.
    clusters: usize,
    /// The json text of the current cluster after its links.
    json_tail: String,
    /// A link's json text (reused).
    scratch: Vec<u8>,
    /// A json text indented ([`indent_into`], reused).
    indented: Vec<u8>,
}

/// Markers of the values written apart in the json document.
const MARK: &str = "\u{1}fsim-stream\u{1}";
const FILES: &str = "\u{1}fsim-stream-files\u{1}";
const FOLDERS: &str = "\u{1}fsim-stream-folders\u{1}";
const FAMILIES: &str = "\u{1}fsim-stream-folder-families\u{1}";

/// A marker as serde_json writes it.
fn quoted(m: &str) -> String {
    format!("\"{}\"", m.replace('\u{1}', "\\u0001"))
}

fn pretty(v: &Value) -> Result<String> {
    serde_json::to_string_pretty(v).map_err(|e| Error::msg(format!("json: {e}")))
}

/// `text` with every line but the first indented by `n` spaces, appended
/// to `out` ([`indent`] without its `String`s: the folder pairs' list is a
/// tenth of a json report).
fn indent_into(text: &[u8], n: usize, out: &mut Vec<u8>) {
    let mut rest = text;
    while let Some(k) = memchr::memchr(b'\n', rest) {
        out.extend_from_slice(&rest[..=k]);
        out.extend(std::iter::repeat_n(b' ', n));
        rest = &rest[k + 1..];
    }
    out.extend_from_slice(rest);
}

/// Indent every line but the first by `n` spaces.
fn indent(s: &str, n: usize) -> String {
    let mut out = Vec::with_capacity(s.len());
    indent_into(s.as_bytes(), n, &mut out);
    String::from_utf8(out).expect("spaces added after newlines of UTF-8")
}

impl Sink {
    fn push(&mut self, s: &str) -> Result<()> {
        self.out.push(s)
    }

    fn head(&mut self, r: &Report) -> Result<()> {
        match self.format {
            Format::Text => self.push(&r.text_head(self.color)),
            Format::Tsv => {
                self.push(crate::report::TSV_HEADER)?;
                for f in &r.folders.pairs {
                    self.push(&f.tsv())?;
                }
                self.push(&r.tsv_same_content())?;
                self.push(&r.tsv_hard_links())?;
                self.push(&r.notes_tsv())
            }
            _ => self.push("{\n  \"clusters\": "),
        }
    }

    fn start(&mut self, r: &Report, c: &Cluster) -> Result<()> {
        self.in_cluster = 0;
        match self.format {
            Format::Text => {
                let out = &mut self.out;
                r.text_cluster(self.color, c, &mut |s| out.push(s))
            }
            Format::Tsv => Ok(()),
            _ => {
                let (mf, ml) = (Value::String(FILES.into()), Value::String(MARK.into()));
                let j = indent(&pretty(&r.cluster_json(c, mf, ml))?, 4);
                let (qf, ql) = (quoted(FILES), quoted(MARK));
                // Keys are in order: nothing before "files" holds a path,
                // nothing after "links" does: the files' marker is the first
                // match, the links' the last.
                let f = j
                    .find(&qf)
                    .ok_or_else(|| Error::msg("json: files marker"))?;
                let l = j
                    .rfind(&ql)
                    .ok_or_else(|| Error::msg("json: cluster marker"))?;
                self.json_tail = j[l + ql.len()..].to_string();
                let lead = if self.clusters == 0 {
                    "[\n    "
                } else {
                    ",\n    "
                };
                self.push(lead)?;
                self.push(&j[..f])?;
                for i in 0..c.files.len() {
                    self.push(if i == 0 { "[\n        " } else { ",\n        " })?;
                    self.scratch.clear();
                    r.write_file_json(c, i, 8, &mut self.scratch);
                    self.out.push_bytes(&self.scratch)?;
                }
                self.push("\n      ]")?;
                self.push(&j[f + qf.len()..l])
            }
        }
    }

    fn link(&mut self, r: &Report, c: &Cluster, l: &Pair) -> Result<()> {
        self.in_cluster += 1;
        match self.format {
            Format::Text => self.push(&r.text_link(self.color, l)),
            Format::Tsv => self.push(&r.tsv_link(c, l)),
            _ => {
                let lead = if self.in_cluster == 1 {
                    "[\n        "
                } else {
                    ",\n        "
                };
                self.push(lead)?;
                self.scratch.clear();
                r.write_link_json(l, 8, &mut self.scratch);
                self.out.push_bytes(&self.scratch)
            }
        }
    }

    fn end(&mut self) -> Result<()> {
        self.clusters += 1;
        if matches!(self.format, Format::Json) {
            let close = if self.in_cluster == 0 {
                "[]"
            } else {
                "\n      ]"
            };
            self.push(close)?;
            let t = std::mem::take(&mut self.json_tail);
            self.push(&t)?;
        }
        Ok(())
    }

    fn tail(&mut self, r: &Report) -> Result<()> {
        match self.format {
            Format::Text => self.push(&r.text_tail(self.color)),
            Format::Tsv => Ok(()),
            _ => {
                self.push(if self.clusters == 0 { "[]" } else { "\n  ]" })?;
                let j = pretty(&r.json_top(MARK, FOLDERS, FAMILIES))?;
                let m = quoted(MARK);
                let at = j.find(&m).ok_or_else(|| Error::msg("json: marker"))?;
                if &j[..at] != "{\n  \"clusters\": " {
                    return Err(Error::msg("json: clusters is not the first key"));
                }
                let mut rest = &j[at + m.len()..];
                // The folder pairs and their families, in the keys' order,
                // one at a time: there may be many more than fit in
                // --memory as one value.
                let mut marks = [FAMILIES, FOLDERS];
                marks.sort_by_key(|m| rest.find(&quoted(m)));
                for mark in marks {
                    let fm = quoted(mark);
                    let fat = rest.find(&fm).ok_or_else(|| Error::msg("json: marker"))?;
                    self.push(&rest[..fat])?;
                    if mark == FOLDERS {
                        let f = &r.folders.pairs;
                        self.json_list(f.iter().map(|p| p.to_json(&r.files)))?;
                    } else {
                        self.json_list(r.folders.families.iter().map(|f| f.to_json()))?;
                    }
                    rest = &rest[fat + fm.len()..];
                }
                self.push(&format!("{rest}\n"))
            }
        }
    }

    /// A json list at the second level, its values written one by one.
    fn json_list(&mut self, values: impl Iterator<Item = Value>) -> Result<()> {
        let mut empty = true;
        for v in values {
            self.push(if empty { "[\n    " } else { ",\n    " })?;
            let mut text = std::mem::take(&mut self.scratch);
            text.clear();
            serde_json::to_writer_pretty(&mut text, &v)
                .map_err(|e| Error::msg(format!("json: {e}")))?;
            self.indented.clear();
            indent_into(&text, 4, &mut self.indented);
            self.scratch = text;
            self.out.push_bytes(&self.indented)?;
            empty = false;
        }
        self.push(if empty { "[]" } else { "\n  ]" })
    }

    fn finish(self) -> Result<()> {
        self.out.finish()
    }
}

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

/// The report without its links, what reading them again needs, and the
/// rank of each file's cluster (for [`walk`]).
pub(crate) fn prepare(config: Config) -> Result<(Report, Source, Vec<u32>)> {
    build(config)
}

impl Visit for Sink {
    fn wants(&self, r: &Report, i: usize) -> bool {
        // The text report shows a reviewed cluster's closest relatives.
        self.format != Format::Text || r.clusters[i].review.is_none()
    }
    fn start(&mut self, r: &Report, i: usize) -> Result<()> {
        Sink::start(self, r, &r.clusters[i])
    }
    fn link(&mut self, r: &Report, i: usize, l: &Pair) -> Result<()> {
        Sink::link(self, r, &r.clusters[i], l)
    }
    fn end(&mut self, _: &Report, _: usize) -> Result<()> {
        Sink::end(self)
    }
}

/// A txt, json or tsv report to write, and whether in colour.
pub(crate) struct Target {
    pub format: Format,
    pub output: Option<PathBuf>,
    pub color: bool,
}

/// Several reports fed by one walk: each is given the clusters' starts and
/// ends, and the links of the clusters it wants.
struct Tee(Vec<Sink>);

impl Visit for Tee {
    fn wants(&self, r: &Report, i: usize) -> bool {
        self.0.iter().any(|s| s.wants(r, i))
    }
    fn start(&mut self, r: &Report, i: usize) -> Result<()> {
        self.0.iter_mut().try_for_each(|s| Visit::start(s, r, i))
    }
    fn link(&mut self, r: &Report, i: usize, l: &Pair) -> Result<()> {
        for s in self.0.iter_mut().filter(|s| s.wants(r, i)) {
            Visit::link(s, r, i, l)?;
        }
        Ok(())
    }
    fn end(&mut self, r: &Report, i: usize) -> Result<()> {
        self.0.iter_mut().try_for_each(|s| Visit::end(s, r, i))
    }
}

/// Write the txt, json and tsv reports of `targets` within the memory
/// budget, their links read and sorted once for all of them.
pub(crate) fn write(
    report: &Report,
    source: &mut Source,
    rank: &[u32],
    targets: &[Target],
) -> Result<()> {
    if targets.is_empty() {
        return Ok(());
    }
    let mut tee = Tee(Vec::with_capacity(targets.len()));
    for t in targets {
        let mut sink = Sink {
            out: Buffered::create(t.output.as_deref())?,
            format: t.format,
            color: t.color,
            in_cluster: 0,
            clusters: 0,
            json_tail: String::new(),
            scratch: Vec::new(),
            indented: Vec::new(),
        };
        sink.head(report)?;
        tee.0.push(sink);
    }
    let budget = report.link_budget();
    if tee.0.len() == 1 {
        walk(report, source, rank, usize::MAX, budget, &mut tee)?;
        return tee.0.into_iter().try_for_each(|s| s.close(report));
    }
    fan_out(report, tee.0, |fan| {
        walk(report, source, rank, usize::MAX, budget, fan)
    })
}

impl Sink {
    /// Write the report's tail and flush it.
    fn close(mut self, r: &Report) -> Result<()> {
        self.tail(r)?;
        self.finish()
    }
}

/// A step of the walk, as [`Fan`] hands it to each report's thread.
#[derive(Clone, Copy)]
enum Step {
    Start(usize),
    Link(usize, Pair),
    End(usize),
}

/// Steps handed over at once: large enough that a hand-over costs nothing
/// next to the writing, small enough to be nothing in memory (40 bytes a
/// step, two batches in flight a report).
const STEPS: usize = 4096;

/// The walk's steps, in batches, to the threads of several reports
/// ([`fan_out`]): each writes its own file while the walk reads and sorts
/// the links, and the json report (most of the writing) no longer waits
/// for the text one.
struct Fan {
    batch: Vec<Step>,
    to: Vec<std::sync::mpsc::SyncSender<std::sync::Arc<Vec<Step>>>>,
    wants: Vec<bool>,
}

impl Fan {
    fn step(&mut self, s: Step) -> Result<()> {
        self.batch.push(s);
        if self.batch.len() >= STEPS {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> Result<()> {
        let batch = std::sync::Arc::new(std::mem::take(&mut self.batch));
        for to in &self.to {
            if to.send(batch.clone()).is_err() {
                // Its thread returns the error that stopped it.
                return Err(Error::msg("a report stopped"));
            }
        }
        Ok(())
    }
}

impl Visit for Fan {
    fn wants(&self, _: &Report, i: usize) -> bool {
        self.wants[i]
    }
    fn start(&mut self, _: &Report, i: usize) -> Result<()> {
        self.step(Step::Start(i))
    }
    fn link(&mut self, _: &Report, i: usize, l: &Pair) -> Result<()> {
        self.step(Step::Link(i, *l))
    }
    fn end(&mut self, _: &Report, i: usize) -> Result<()> {
        self.step(Step::End(i))
    }
}

/// Write `sinks` (their heads written) on a thread each, fed the steps
/// that `walk` gives a [`Fan`]; the first error of a report or of the walk.
fn fan_out(
    report: &Report,
    sinks: Vec<Sink>,
    walk: impl FnOnce(&mut Fan) -> Result<()>,
) -> Result<()> {
    let wants = (0..report.clusters.len())
        .map(|i| sinks.iter().any(|s| s.wants(report, i)))
        .collect();
    // Set when the walk failed: the reports are then dropped unfinished
    // (their temporary files removed), never closed half-written.
    let aborted = std::sync::atomic::AtomicBool::new(false);
    let aborted = &aborted;
    std::thread::scope(|scope| {
        let mut fan = Fan {
            batch: Vec::with_capacity(STEPS),
            to: Vec::new(),
            wants,
        };
        let mut writers = Vec::new();
        for mut sink in sinks {
            let (to, from) = std::sync::mpsc::sync_channel::<std::sync::Arc<Vec<Step>>>(2);
            fan.to.push(to);
            writers.push(scope.spawn(move || -> Result<()> {
                for batch in from {
                    for &step in batch.iter() {
                        match step {
                            Step::Start(i) => Visit::start(&mut sink, report, i)?,
                            Step::Link(i, l) if sink.wants(report, i) => {
                                Visit::link(&mut sink, report, i, &l)?
                            }
                            Step::Link(..) => {}
                            Step::End(i) => Visit::end(&mut sink, report, i)?,
                        }
                    }
                }
                if aborted.load(std::sync::atomic::Ordering::SeqCst) {
                    return Ok(());
                }
                sink.close(report)
            }));
        }
        let walked = walk(&mut fan).and_then(|()| fan.send());
        if walked.is_err() {
            aborted.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        drop(fan);
        let mut written = Ok(());
        for w in writers {
            let r = w.join().expect("a report's writer panicked");
            if written.is_ok() {
                written = r;
            }
        }
        // A report's own error (which stopped the walk) says more than
        // the walk's.
        written.and(walked)
    })
}
