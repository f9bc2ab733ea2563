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
//!
//! This file takes the steps in order ([`prepare`], [`write`]); each is
//! a file of its own: the link source (source.rs), step 1 (join.rs), step
//! 2 (figures.rs), step 3 (templates.rs), the clusters and their order
//! (clusters.rs), the folder pairs (folder_pairs.rs), step 4 (walk.rs),
//! the txt, json and tsv reports (sink.rs, fan.rs) and their output
//! (buffered.rs).

mod buffered;
mod clusters;
mod fan;
mod figures;
mod folder_pairs;
mod join;
mod sink;
mod source;
mod templates;
mod walk;

pub(crate) use buffered::Buffered;
pub(crate) use sink::Target;
pub(crate) use source::{temp_file, Source};
pub(crate) use walk::{walk, Visit};

use crate::error::Result;
use crate::report::model::{prelude, report_params, Config, Report};
use clusters::{make_clusters, rank};
use fan::{fan_out, Tee};
use figures::link_figures;
use folder_pairs::folder_pairs;
use join::{join, Joined};
use sink::Sink;
use source::spool;
use std::collections::BTreeSet;
use templates::likely_templates;

/// The report without its links, what reading them again needs, and the
/// rank of each file's cluster (for [`walk`]).
pub(crate) fn prepare(config: Config) -> Result<(Report, Source, Vec<u32>)> {
    build(config)
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
        degree,
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
    let mut lf = link_figures(&report, &mut source, &cluster_of, &members, &degree)?;
    let template = likely_templates(&report, &mut source, &cluster_of, &members, &lf)?;
    let mut clusters = make_clusters(&report, members, &cluster_of, &mut lf, template);
    report.similar_facts = std::mem::take(&mut lf.facts);
    report.best = std::mem::take(&mut lf.best);
    drop((lf, degree));
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

/// Say on stderr when the model, with what the folder step held beside
/// it, is over `--memory`.
fn warn_if_over_memory(report: &Report) {
    let model = report.model_bytes() + report.folders.held;
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
        let mut sink = Sink::create(t)?;
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
