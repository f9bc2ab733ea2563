//! Step 5 and section 2.4 of the paper: turn the similar pairs into what an
//! analyst reads. Identical files are reported apart (sets, files, overhead
//! bytes), and similar files are grouped into clusters (connected components
//! of the similarity graph), ranked, each with its files, its links,
//! total size, average similarity and a type.
//!
//! Thresholds are applied here again, on what the analysis kept, so trying a
//! stricter threshold takes seconds and needs no re-run (sif's
//! post-processing). Cluster and set ids are derived from content, so they
//! stay the same across re-runs on the same data.
//!
//! Clusters are ranked by what a reviewer gains (docs/pipeline.md,
//! "Ranking"): the bytes that could be removed, then the files involved;
//! every format shows them in that order with the same figures.
//!
//! Memory: the file table (ids, sizes, content hashes, paths) is held in
//! memory (O(files), like partition). Every format holds at most
//! `--memory` of links besides (src/report/stream/), plus a constant of
//! its own: the html page's caps (src/report/html.rs), xlsx's rows in
//! flight (src/report/xlsx.rs).
//!
//! This module holds the [`Report`] type's shared helpers and the step's
//! flow ([`run`]); each format has its own writer: text.rs, json.rs,
//! tsv.rs, html.rs, xlsx.rs and actions.rs (`sh`).

pub mod actions;
pub mod collections;
pub mod filter;
pub mod folders;
pub mod html;
mod json;
pub mod model;
pub mod notes;
pub mod stream;
pub mod templates;
mod text;
mod tsv;
pub mod xlsx;

use crate::error::{Error, Result};
use crate::formats::escape_path_string;
use crate::formats::headers::PairsHeader;
use serde_json::{json, Value};

pub use crate::formats::{percent, symmetric, PercentOf};
pub use model::{human_bytes, ColorChoice, Config, Format, Report};
pub(crate) use tsv::TSV_HEADER;

/// Documents read as raw bytes listed by name in the text and json
/// reports at most (a million broken files must not make a million lines:
/// the count is given, and fsim-chunk's warnings name them all).
pub(crate) const MAX_UNREADABLE: usize = 100;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    bold: &'static str,
    dim: &'static str,
    head: &'static str,
    kind: &'static str,
    pct: &'static str,
    reset: &'static str,
}

impl Style {
    fn new(color: bool) -> Style {
        if color {
            Style {
                bold: "\x1b[1m",
                dim: "\x1b[2m",
                head: "\x1b[1;34m",
                kind: "\x1b[35m",
                pct: "\x1b[33m",
                reset: "\x1b[0m",
            }
        } else {
            Style {
                bold: "",
                dim: "",
                head: "",
                kind: "",
                pct: "",
                reset: "",
            }
        }
    }
}

impl Report {
    fn path(&self, id: u32) -> String {
        escape_path_string(self.files.path(id))
    }

    /// The size percentages refer to: the payload when templates were
    /// ignored, else the file's size.
    pub fn size(&self, id: u32) -> u64 {
        self.sizes[id as usize]
    }

    /// Name of a file's collection, when there are collections.
    pub fn collection(&self, id: u32) -> Option<&str> {
        self.collections
            .get(self.coll[id as usize])
            .map(|c| c.name.as_str())
    }

    /// Chunks fsim-partition dropped as too common (degree limit): (limit,
    /// chunks, files holding one when known). Pairs of these files linked
    /// only through such chunks were never candidates.
    pub fn pruned(&self) -> Option<(u64, u64, Option<u64>)> {
        let p = self.header().pruned?;
        Some((p.degree_limit.unwrap_or(0), p.chunks, p.files))
    }

    /// The pairs' header parameters, typed. `scan_pairs` read them as a
    /// [`PairsHeader`] (a malformed one stopped it), so they parse; the
    /// default stands for a report built without pairs (tests).
    pub fn header(&self) -> PairsHeader {
        PairsHeader::parse(&self.params).unwrap_or_default()
    }

    /// The one-line note on [`Report::pruned`], for every format: what
    /// the degree limit dropped, and what the site-template rule dropped.
    pub fn pruned_note(&self) -> Option<String> {
        let p = self.header().pruned?;
        let files = match p.files {
            Some(f) => format!("{f} files hold one"),
            None => "the files holding them were not counted".to_string(),
        };
        let limit = p.degree_limit.unwrap_or(0);
        let mut what = Vec::new();
        let ubiquitous = p.chunks.saturating_sub(p.site_chunks);
        if ubiquitous > 0 {
            what.push(format!(
                "{ubiquitous} chunks found in more than {limit} files were ignored as boilerplate"
            ));
        }
        if p.site_chunks > 0 {
            what.push(format!(
                "{} chunks repeated in web pages of {} or more names were ignored as a generated site's template",
                p.site_chunks,
                p.site_names.unwrap_or(0)
            ));
        }
        Some(format!(
            "{} ({files}): pairs linked only through them are not reported, and other figures of those files are exact only where verified (fsim-partition --max-degree, --degree-floor, --site-names)",
            what.join(", and ")
        ))
    }

    /// Template chunks ignored by the analysis: (count, digest), as the
    /// header writes them.
    pub fn templates(&self) -> Option<(String, String)> {
        let t = self.header().templates?;
        Some((t.chunks.to_string(), crate::formats::hex128(t.sum)))
    }

    /// The other members of a representative's identical set, the copies
    /// apart from the other names of a file among them (hard links: a
    /// name of the representative or of one of its copies, no copy
    /// itself): (copies, other names).
    pub(crate) fn copies_apart(&self, id: u32) -> (Vec<u32>, Vec<u32>) {
        let Some(&s) = self.set_of.get(&id) else {
            return (Vec::new(), Vec::new());
        };
        let set = &self.identical[s];
        set.files[1..]
            .iter()
            .partition(|&&x| set.disk.name_of(x).is_none())
    }

    pub fn summary(&self) -> Value {
        let cluster_files: usize = self.clusters.iter().map(|c| c.files.len()).sum();
        let cluster_bytes: u64 = self.clusters.iter().map(|c| c.total_size).sum();
        let reclaimable: u64 = self.clusters.iter().map(|c| c.reclaimable).sum();
        let ident_files: usize = self.identical.iter().map(|s| s.files.len()).sum();
        let overhead: u64 = self.identical.iter().map(|s| s.overhead()).sum();
        json!({
            "files": self.files.len(),
            "clusters": self.clusters.len(),
            "cluster_files": cluster_files,
            "cluster_bytes": cluster_bytes,
            "reclaimable_bytes": reclaimable,
            "links": self.clusters.iter().map(|c| c.link_count).sum::<usize>(),
            "folder_pairs": self.folders.pairs.len(),
            "identical_sets": self.identical.len(),
            "identical_files": ident_files,
            "overhead_bytes": overhead,
            "identical_in_archives": self.identical.iter().map(|s| u64::from(s.disk.in_archives)).sum::<u64>(),
            "hard_link_files": self.hard_links.len(),
            "hard_link_names": self.hard_links.iter().map(|h| h.files.len()).sum::<usize>(),
            "same_content_groups": self.same_content.len(),
            "same_content_files": self.same_content.iter().map(|g| g.files.len()).sum::<usize>(),
            "filtered_links": self.filtered_links,
            "likely_templates": self.clusters.iter().filter(|c| c.template.is_some()).count(),
            "pruned_chunks": self.pruned().map_or(0, |p| p.1),
            "pruned_files": self.pruned().and_then(|p| p.2).unwrap_or(0),
            "site_template_chunks": self.header().pruned.map_or(0, |p| p.site_chunks),
        })
    }

    /// The view a file was compared by, as the reports name it: `docx
    /// text`, `gzip content`, ..., or `raw`.
    pub(crate) fn view_label(&self, id: u32) -> String {
        self.files
            .view_kind(id)
            .label()
            .unwrap_or_else(|| "raw".into())
    }

    /// The view of a file as the tsv, html and xlsx link rows give it:
    /// its label, empty for raw bytes, so that the rows of raw files read
    /// as they did before views existed.
    pub(crate) fn view_field(&self, id: u32) -> String {
        self.files.view_kind(id).label().unwrap_or_default()
    }

    /// What name `f` of a set is beside `k`, the first name of its file: a
    /// hard link, or the same path met in another collection (fsim-merge
    /// gives both one identity: src/stages/collections.rs).
    pub(crate) fn other_name_note(&self, f: u32, k: u32) -> String {
        if self.files.path(f) == self.files.path(k) {
            "the same file again, in another collection".to_string()
        } else {
            format!("another name of {}: hard link", self.path(k))
        }
    }

    /// What a set's overhead leaves out, when it leaves anything out:
    /// other names of its files, members of archives.
    pub(crate) fn disk_note(&self, s: &model::IdenticalSet) -> Option<String> {
        let (names, members) = (s.disk.other_names.len(), s.disk.in_archives);
        if names == 0 && members == 0 {
            return None;
        }
        let mut parts = vec![format!("{} files on disk", s.disk.files)];
        match names {
            0 => {}
            1 => parts.push("1 more name of one of them (hard link)".to_string()),
            n => parts.push(format!("{n} more names of them (hard links)")),
        }
        match members {
            0 => {}
            1 => parts.push("1 inside an archive".to_string()),
            n => parts.push(format!("{n} inside archives")),
        }
        Some(format!(
            "{}: the overhead counts each file on disk once",
            parts.join(", ")
        ))
    }

    /// The walk's counts of the file table's trailer as one line, when
    /// any is not zero: what was reached twice and read once, and what
    /// was left out.
    pub fn walk_note(&self) -> Option<String> {
        let w = &self.walk;
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut parts = Vec::new();
        if let Some(n) = w.repeated.filter(|&n| n > 0) {
            parts.push(plural(
                n,
                "folder or file reached twice was read once",
                "folders or files reached twice were read once",
            ));
        }
        if let Some(n) = w.work_folders.filter(|&n| n > 0) {
            parts.push(plural(
                n,
                "fsim work folder left out",
                "fsim work folders left out",
            ));
        }
        if let Some(n) = w.excluded.filter(|&n| n > 0) {
            let rules = w
                .left_out_by
                .as_deref()
                .unwrap_or("--exclude or the size limits");
            parts.push(format!(
                "{} left out by {rules}",
                plural(n, "file or folder", "files or folders")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The templates files given with `--templates`, if any. They must be the
/// set the analysis ignored (the pairs header names it): marking other
/// chunks as template in the views would mislead the analyst.
pub(crate) fn load_templates(
    report: &Report,
) -> Result<Option<crate::formats::templates::TemplateSet>> {
    let paths = &report.config.templates;
    if paths.is_empty() {
        return Ok(None);
    }
    let set = crate::formats::templates::TemplateSet::load(paths, &report.params)?;
    set.check_against(&report.params, "the pairs")
        .map_err(|m| Error::msg(format!("{}: {m}", report.config.pairs.display())))?;
    Ok(Some(set))
}

/// `fsim-report`: read, build, write in the chosen formats. The model is
/// built once for all of them, and the text, json and tsv reports take
/// their links from one walk (`--also`): `make report`'s default of txt
/// and json costs one read of the pairs and one model, not two.
pub fn run(config: Config, quiet: bool) -> Result<()> {
    let start = std::time::Instant::now();
    // The budget is the whole process's peak RSS: what a phase frees must
    // not stay resident under the next.
    crate::io::return_freed_memory();
    check_outputs(&config)?;
    crate::content::store::use_beside(&config.files);
    let color = |output: Option<&std::path::Path>| match config.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            use std::io::IsTerminal;
            output.is_none_or(|p| p.as_os_str() == "-")
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let streamed: Vec<stream::Target> = config
        .outputs()
        .filter(|(f, _)| matches!(f, Format::Text | Format::Json | Format::Tsv))
        .map(|(format, output)| stream::Target {
            format,
            output: output.map(|p| p.to_path_buf()),
            color: color(output),
        })
        .collect();
    let (report, mut source, rank) = stream::prepare(config)?;
    let templates = load_templates(&report)?;
    stream::write(&report, &mut source, &rank, &streamed)?;
    for (format, output) in report.config.outputs() {
        match format {
            Format::Text | Format::Json | Format::Tsv => {}
            Format::Sh => {
                let mut out = stream::Buffered::create(output)?;
                actions::write(&report, &mut out)?;
                out.finish()?;
            }
            Format::Html => html::write(&report, &mut source, &rank, templates.as_ref(), output)?,
            Format::Xlsx => {
                let output = output.expect("checked: xlsx has an output file");
                xlsx::write(&report, &mut source, &rank, output)?
            }
        }
    }
    if !quiet {
        let s = report.summary();
        crate::cli::stderr_line(format_args!(
            "fsim-report: {} pairs read, {} clusters, {} identical sets, {:.2} s",
            report.pairs_read,
            s["clusters"],
            s["identical_sets"],
            start.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// `--also FORMAT=FILE`: another report written from the same model.
pub fn parse_also(s: &str) -> std::result::Result<(Format, std::path::PathBuf), String> {
    use clap::ValueEnum;
    let (format, file) = s
        .split_once('=')
        .ok_or_else(|| format!("expected FORMAT=FILE (e.g. json=report.json), not {s:?}"))?;
    let format = Format::from_str(format, false)
        .map_err(|_| format!("{format:?} is not a format: text, json, tsv, html, xlsx or sh"))?;
    if file.is_empty() {
        return Err(format!("no file after {s:?}"));
    }
    Ok((format, file.into()))
}

/// An xlsx workbook needs a file, and two reports cannot share one, nor
/// standard output.
fn check_outputs(config: &Config) -> Result<()> {
    let mut seen: Vec<&std::path::Path> = Vec::new();
    for (format, output) in config.outputs() {
        let path = output.filter(|p| p.as_os_str() != "-");
        if format == Format::Xlsx && path.is_none() {
            return Err(Error::msg(
                "--format xlsx writes a workbook: give the output file with -o FILE.xlsx",
            ));
        }
        let p = path.unwrap_or(std::path::Path::new("-"));
        if seen.contains(&p) {
            return Err(Error::msg(format!(
                "two reports would be written to {}: give each format its own file (--also FORMAT=FILE)",
                if p.as_os_str() == "-" { "standard output".to_string() } else { p.display().to_string() }
            )));
        }
        seen.push(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(812), "812 B");
        assert_eq!(human_bytes(12 * 1024 + 300), "12.3 KiB");
        assert_eq!(human_bytes(5 << 20), "5.0 MiB");
    }

    #[test]
    fn similarity_measures() {
        assert_eq!(symmetric(50, 100, 100), 50.0);
        assert_eq!(symmetric(100, 100, 300), 50.0);
        assert_eq!(percent(1, 0), 0.0);
    }
}
