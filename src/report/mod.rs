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
//! `--memory` of links besides (src/report/stream.rs), plus a constant of
//! its own: the html page's caps (src/report/html.rs), xlsx's rows in
//! flight (src/report/xlsx.rs).

pub mod actions;
pub mod collections;
pub mod filter;
pub mod folders;
pub mod html;
pub mod model;
pub mod notes;
pub mod stream;
pub mod templates;
pub mod xlsx;

use crate::error::{Error, Result};
use crate::formats::escape_path_string;
use crate::formats::headers::PairsHeader;
use serde_json::{json, Value};

pub use crate::formats::{percent, symmetric, PercentOf};
pub use model::{human_bytes, ColorChoice, Config, Format, Report};
use model::{r1, Pair};

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
        escape_path_string(self.files.at(id).path)
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

    /// [`Report::link_json`] as serde_json pretty-prints it, every line but
    /// the first indented by `indent` more spaces, appended to `out`: the
    /// same bytes, written without building the value and its text twice
    /// (links are most of a json report: 191,845 on Django + moment, where
    /// the value, its text and the indented copy cost 0.45 s of 2.1).
    pub(crate) fn write_link_json(&self, p: &Pair, indent: usize, out: &mut Vec<u8>) {
        let (sa, sb) = (self.size(p.a), self.size(p.b));
        let mut json = JsonObject::new(indent, out);
        json.path("a", self.files.path(p.a));
        json.number("a_id", p.a);
        json.path("b", self.files.path(p.b));
        json.number("b_id", p.b);
        json.number("bytes_in_common", p.common);
        json.raw("exact", if p.exact { "true" } else { "false" });
        json.float("percent_of_a", r1(percent(p.common, sa)));
        json.float("percent_of_b", r1(percent(p.common, sb)));
        json.float("percent_symmetric", r1(symmetric(p.common, sa, sb)));
        json.number("shared_chunks", p.shared_chunks);
        self.write_view(&mut json, "view_a", p.a);
        self.write_view(&mut json, "view_b", p.b);
        json.end();
    }

    /// The json document with marker strings for `clusters`, `folders` and
    /// `folder_families`: they are written apart, one value at a time.
    pub(crate) fn json_top(&self, marker: &str, folders: &str, families: &str) -> Value {
        let params: serde_json::Map<String, Value> = self
            .params
            .0
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let identical: Vec<Value> = self
            .identical
            .iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "size": s.size,
                    "overhead_bytes": s.overhead(),
                    "files_on_disk": s.disk.files,
                    "inside_archives": s.disk.in_archives,
                    "other_names": s.disk.other_names.iter().map(|&(f, k)| json!({
                        "path": self.path(f),
                        "name_of": self.path(k),
                    })).collect::<Vec<_>>(),
                    "folder_pair": s.folder_pair,
                    "files": s.files.iter().map(|&f| self.path(f)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let (documents, archives, unread) = self.notes_json();
        json!({
            "fsim_report": 1,
            "params": params,
            "summary": self.summary(),
            "folders": folders,
            "folder_families": families,
            "folders_wide_identical_sets": self.folders.wide_sets,
            "unreadable_documents": documents,
            "members_left_out": archives,
            "unreadable_files": unread,
            "identical_sets": identical,
            "hard_links": self.hard_links.iter().map(|h| json!({
                "id": h.id,
                "size": h.size,
                "names": h.files.iter().map(|&f| self.path(f)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "walk": self.walk_json(),
            "same_content": self.same_content.iter().map(|g| self.same_content_json(g)).collect::<Vec<_>>(),
            "clusters": marker,
            "collections": self.collections.iter().map(|c| json!({
                "name": c.name,
                "files": c.files,
                "bytes": self.files.size_sum(c.first, c.files),
            })).collect::<Vec<_>>(),
            "collection_overlap": crate::report::collections::overlap(self).iter().map(|o| o.to_json(self)).collect::<Vec<_>>(),
        })
    }

    /// The json report's `walk`: the trailer's counts (0 when absent) and
    /// [`Report::walk_note`].
    pub(crate) fn walk_json(&self) -> Value {
        let w = &self.walk;
        json!({
            "repeated": w.repeated.unwrap_or(0),
            "work_folders": w.work_folders.unwrap_or(0),
            "excluded": w.excluded.unwrap_or(0),
            "excluded_by": w.left_out_by,
            "note": self.walk_note(),
        })
    }

    /// The tsv rows of the names of one file: the first name with each
    /// other (`cluster` = `hard-links`, `type` = the file's id, sizes the
    /// file's, reclaimable 0), and a `note` row (`type` = `walk`) with
    /// [`Report::walk_note`].
    pub(crate) fn tsv_hard_links(&self) -> String {
        let mut o = String::new();
        for h in &self.hard_links {
            let (n, size) = (h.files.len(), h.size);
            for &f in &h.files[1..] {
                o.push_str(&format!(
                    "hard-links\t{}\t{n}\t{size}\t100.0\t{size}\t100.0\t100.0\t{size}\t{size}\t{}\t{}\t0\t\t\n",
                    h.id,
                    self.path(h.files[0]),
                    self.path(f),
                ));
            }
        }
        if let Some(note) = self.walk_note() {
            o.push_str(&format!(
                "note\twalk\t0\t0\t0.0\t0\t0.0\t0.0\t0\t0\t\t{note}\t0\t\t\n"
            ));
        }
        o
    }

    /// The view a file was compared by, as the reports name it: `docx
    /// text`, `gzip content`, ..., or `raw`.
    pub(crate) fn view_label(&self, id: u32) -> String {
        self.files
            .at(id)
            .view
            .label()
            .unwrap_or_else(|| "raw".into())
    }

    /// The view of a file as the tsv, html and xlsx link rows give it:
    /// its label, empty for raw bytes, so that the rows of raw files read
    /// as they did before views existed.
    pub(crate) fn view_field(&self, id: u32) -> String {
        self.files.at(id).view.label().unwrap_or_default()
    }

    /// `  [docx text]` after a file's path in the text report when it was
    /// compared by a content view, nothing for raw bytes.
    pub(crate) fn view_suffix(&self, id: u32) -> String {
        match self.files.at(id).view.label() {
            Some(l) => format!("  [{l}]"),
            None => String::new(),
        }
    }

    /// A "same content, different file" group in the json document.
    pub(crate) fn same_content_json(&self, g: &model::SameContent) -> Value {
        json!({
            "id": g.id,
            "content_size": g.size,
            "files": g.files.iter().map(|&f| json!({
                "path": self.path(f),
                "view": self.view_label(f),
            })).collect::<Vec<_>>(),
        })
    }

    /// Section A2 of the text report: files whose content views are equal
    /// but whose bytes differ (nothing when there are none).
    fn text_same_content(&self, o: &mut String, st: &Style) {
        use std::fmt::Write;
        if self.same_content.is_empty() {
            return;
        }
        let (bold, dim, head, reset) = (st.bold, st.dim, st.head, st.reset);
        let _ = writeln!(
            o,
            "{head}A2. Same content, different files: {} groups{reset}",
            self.same_content.len()
        );
        let _ = writeln!(
            o,
            "{dim}their views (the text of a document, a decompressed stream) are equal, their bytes are not: not identical, nothing to reclaim{reset}"
        );
        for g in &self.same_content {
            let _ = writeln!(
                o,
                "  {bold}group {}{reset}  {} files, {} of content each",
                g.id,
                g.files.len(),
                human_bytes(g.size)
            );
            for &f in &g.files {
                let _ = writeln!(o, "    {}  [{}]", self.path(f), self.view_label(f));
            }
        }
    }

    /// The tsv rows of the "same content, different file" groups: the
    /// first file of each group with each other (`cluster` =
    /// `same-content`, `type` = the group's id).
    pub(crate) fn tsv_same_content(&self) -> String {
        let mut o = String::new();
        for g in &self.same_content {
            for &f in &g.files[1..] {
                o.push_str(&format!(
                    "same-content\t{}\t{}\t{}\t100.0\t{}\t100.0\t100.0\t{}\t{}\t{}\t{}\t0\t{}\t{}\n",
                    g.id,
                    g.files.len(),
                    g.size * g.files.len() as u64,
                    g.size,
                    g.size,
                    g.size,
                    self.path(g.files[0]),
                    self.path(f),
                    self.view_field(g.files[0]),
                    self.view_field(f),
                ));
            }
        }
        o
    }

    /// One cluster of the json document with `files` and `links` set to
    /// the values given.
    pub(crate) fn cluster_json(&self, c: &model::Cluster, files: Value, links: Value) -> Value {
        let review = c.review.as_ref().map(|r| {
            json!({
                "note": format!(
                    "more than {} files: sub-clusters by single linkage at each level (each file's sub_clusters gives its own, numbered by their largest file), and each file's {} closest relatives (files[].closest); every link is in links",
                    self.config.review_files,
                    model::CLOSEST
                ),
                "levels": model::REVIEW_LEVELS.iter().zip(&r.levels).map(|(l, (n, big))| json!({
                    "min_percent_symmetric": l,
                    "sub_clusters": n,
                    "largest_files": big,
                })).collect::<Vec<_>>(),
            })
        });
        json!({
            "id": c.id,
            "type": c.kind,
            "file_count": c.files.len(),
            "total_size": c.total_size,
            "reclaimable_bytes": c.reclaimable,
            "link_count": c.link_count,
            "average_similarity": r1(c.avg_similarity),
            "likely_template": c.template.is_some(),
            "template_bytes": c.template.as_ref().map(|t| t.bytes),
            "template_command": c.template.as_ref().map(|t| t.command.clone()),
            "review": review,
            "folder_pair": c.folder_pair,
            "files": files,
            "links": links,
        })
    }

    /// The `i`th file of cluster `c` in the json document (with its
    /// sub-clusters and closest relatives when the cluster is reviewed),
    /// the text serde_json's pretty printer gives its value, indented as
    /// [`Report::write_link_json`] writes a link: the value, its text and
    /// the indented copy cost more than writing all of a report's links.
    pub(crate) fn write_file_json(
        &self,
        c: &model::Cluster,
        i: usize,
        indent: usize,
        out: &mut Vec<u8>,
    ) {
        let f = c.files[i];
        let e = self.files.at(f);
        let review = c.review.as_ref();
        let mut json = JsonObject::new(indent, out);
        if let Some(r) = review {
            json.array("closest", &r.closest[i], |l, out, indent| {
                let o = if l.a == f { l.b } else { l.a };
                let mut json = JsonObject::new(indent, out);
                json.number("bytes_in_common", l.common);
                json.raw("exact", if l.exact { "true" } else { "false" });
                json.number("id", o);
                json.path("path", self.files.path(o));
                let sym = symmetric(l.common, self.size(l.a), self.size(l.b));
                json.float("percent_symmetric", r1(sym));
                json.end();
            });
        }
        match self.collection(f) {
            Some(name) => json.string("collection", name),
            None => json.raw("collection", "null"),
        }
        json.number("file_size", e.size);
        json.number("id", f);
        let (copies, names) = self.copies_apart(f);
        json.array("identical_copies", &copies, |&x, out, _| {
            json_path(self.files.path(x), out)
        });
        if !names.is_empty() {
            json.array("other_names", &names, |&x, out, _| {
                json_path(self.files.path(x), out)
            });
        }
        json.path("path", e.path);
        json.number("size", self.size(f));
        if let Some(r) = review {
            json.array("sub_clusters", &r.sub[i], |&n, out, _| {
                serde_json::to_writer(out, &n).expect("json of a number")
            });
        }
        json.string("type", e.ftype.as_str());
        self.write_view(&mut json, "view", f);
        json.end();
    }

    /// [`Report::view_label`] as key `k` of `json`: nearly every file's is
    /// "raw", written without making a string.
    fn write_view(&self, json: &mut JsonObject, k: &str, id: u32) {
        match self.files.view_kind(id).label() {
            None => json.raw(k, "\"raw\""),
            Some(label) => json.string(k, &label),
        }
    }

    /// The text report up to its first cluster.
    pub(crate) fn text_head(&self, color: bool) -> String {
        use std::fmt::Write;
        let st = Style::new(color);
        let Style {
            bold,
            dim,
            head,
            reset,
            ..
        } = st;
        let s = self.summary();
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{bold}fsim report{reset}: {} clusters, {} files, {}, {} reclaimable; {} identical sets, {} files, {} overhead",
            s["clusters"],
            s["cluster_files"],
            human_bytes(s["cluster_bytes"].as_u64().unwrap_or(0)),
            human_bytes(s["reclaimable_bytes"].as_u64().unwrap_or(0)),
            s["identical_sets"],
            s["identical_files"],
            human_bytes(s["overhead_bytes"].as_u64().unwrap_or(0)),
        );
        if !self.hard_links.is_empty() {
            let _ = writeln!(
                o,
                "{dim}hard links: {} files with {} names in all (one file each: no overhead){reset}",
                s["hard_link_files"], s["hard_link_names"]
            );
        }
        let (basis, bound) = self.figures_basis();
        let _ = writeln!(
            o,
            "{dim}{} files scanned; {basis}; links kept at >= {}% of the {} file and >= {} bytes in common ({bound}){reset}",
            self.files.len(),
            self.config.min_percent,
            self.config.percent_of.as_str(),
            self.config.min_bytes
        );
        if let Some((n, digest)) = self.templates() {
            let _ = writeln!(
                o,
                "{dim}templates: {n} chunks ignored (templates={}); sizes and percentages are of the payload (file less its template chunks){reset}",
                &digest[..digest.len().min(10)]
            );
        }
        if let Some(note) = self.walk_note() {
            let _ = writeln!(o, "{dim}walk: {note}{reset}");
        }
        if let Some(note) = self.pruned_note() {
            let _ = writeln!(o, "{dim}pruned: {note}{reset}");
        }
        if self.config.filters.describe() != "none" || self.filtered_links > 0 {
            let _ = writeln!(
                o,
                "{dim}filters: {}; {} links dropped by them{reset}",
                self.config.filters.describe(),
                self.filtered_links
            );
        }
        self.notes_text(&mut o, &st);
        let _ = writeln!(o);
        folders_text(&self.folders, self.config.min_percent, &mut o, st);
        self.text_identical(&mut o, &st);
        self.text_same_content(&mut o, &st);
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{head}B. Clusters of similar files: {} (most reclaimable bytes first){reset}",
            self.clusters.len()
        );
        let _ = writeln!(
            o,
            "{dim}reclaimable: over a cluster's files, the most bytes each shares with one larger file of the cluster{reset}"
        );
        o
    }

    /// What the figures of the report are (chunks or a feature method) and
    /// how exact: the two parts of the text report's second line.
    fn figures_basis(&self) -> (String, String) {
        let h = self.header();
        let method = h.chunk.method.as_deref().unwrap_or("?");
        let or_unknown = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
        match h.analysis.estimate {
            // Feature methods (docs/formats.md): bytes in common are the
            // method's similarity estimate expressed in bytes.
            Some(e) => (
                format!(
                    "features: {method} window {} bytes",
                    or_unknown(h.chunk.window)
                ),
                format!("the method's {e} estimate in bytes, exact where fsim-verify measured it"),
            ),
            None => (
                format!("chunks: {method} avg {} bytes", or_unknown(h.chunk.avg)),
                if h.verify.is_some() {
                    "exact where fsim-verify measured them, else lower bounds from shared chunks"
                        .to_string()
                } else {
                    "lower bounds from shared chunks".to_string()
                },
            ),
        }
    }

    /// Section A of the text report: the identical sets and their files,
    /// another name of a file shown as such.
    fn text_identical(&self, o: &mut String, st: &Style) {
        use std::fmt::Write;
        let (bold, dim, head, reset) = (st.bold, st.dim, st.head, st.reset);
        let _ = writeln!(
            o,
            "{head}A. Identical files: {} sets{reset}",
            self.identical.len()
        );
        for s in &self.identical {
            let _ = writeln!(
                o,
                "  {bold}set {}{reset}  {} files x {} = {} overhead{}",
                s.id,
                s.files.len(),
                human_bytes(s.size),
                human_bytes(s.overhead()),
                self.disk_note(s)
                    .map_or(String::new(), |n| format!("  {dim}({n}){reset}"))
            );
            if let Some(k) = s.folder_pair {
                let _ = writeln!(o, "    {}", self.inside_folders(k));
            }
            for &f in &s.files {
                let _ = match s.disk.name_of(f) {
                    Some(k) => writeln!(
                        o,
                        "    {}  {dim}(another name of {}: hard link){reset}",
                        self.path(f),
                        self.path(k)
                    ),
                    None => writeln!(o, "    {}", self.path(f)),
                };
            }
        }
        self.text_hard_links(o, st);
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

    /// Section A1 of the text report: names of one file with no other
    /// file of their content (nothing when there are none).
    fn text_hard_links(&self, o: &mut String, st: &Style) {
        use std::fmt::Write;
        if self.hard_links.is_empty() {
            return;
        }
        let (bold, dim, head, reset) = (st.bold, st.dim, st.head, st.reset);
        let _ = writeln!(
            o,
            "{head}A1. Hard links: {} files with several names{reset}",
            self.hard_links.len()
        );
        let _ = writeln!(
            o,
            "{dim}each is one file on disk under several names: not copies, nothing to reclaim{reset}"
        );
        for h in &self.hard_links {
            let _ = writeln!(
                o,
                "  {bold}hard links {}{reset}  one file, {} names, {}",
                h.id,
                h.files.len(),
                human_bytes(h.size)
            );
            for &f in &h.files {
                let _ = writeln!(o, "    {}", self.path(f));
            }
        }
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

    /// The line that says a group lies inside folder pair `k`.
    fn inside_folders(&self, k: u32) -> String {
        let p = &self.folders.pairs[k as usize];
        format!(
            "inside the folders {}  <->  {} (folder pair {}{})",
            escape_path_string(&p.a),
            escape_path_string(&p.b),
            k + 1,
            if folder_listed_in_text(&self.folders, k) {
                ", above"
            } else {
                ", in report.json"
            }
        )
    }

    /// A cluster of the text report: its line, its files.
    /// The text of cluster `c` without its links, handed to `out` in
    /// pieces of ~64 KiB (a reviewed cluster of 100,000 files is ~60 MB of
    /// text).
    pub(crate) fn text_cluster(
        &self,
        color: bool,
        c: &model::Cluster,
        out: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<()> {
        use std::fmt::Write;
        let Style {
            bold,
            kind,
            pct,
            reset,
            ..
        } = Style::new(color);
        let mut o = String::new();
        {
            let _ = writeln!(
                o,
                "  {bold}cluster {}{reset}  {kind}{}{reset}  {} files  {} total  {} reclaimable  {} links  avg {pct}{:.1}%{reset} similar",
                c.id,
                c.kind,
                c.files.len(),
                human_bytes(c.total_size),
                human_bytes(c.reclaimable),
                c.link_count,
                c.avg_similarity
            );
            if let Some(k) = c.folder_pair {
                let _ = writeln!(o, "    {}", self.inside_folders(k));
            }
            if let Some(t) = &c.template {
                let _ = writeln!(
                    o,
                    "    {pct}likely template{reset}: about {} shared by almost all its files; to ignore those chunks from now on, in the work folder:\n      {}",
                    human_bytes(t.bytes),
                    t.command
                );
            }
            if let Some(r) = &c.review {
                let levels: Vec<String> = model::REVIEW_LEVELS
                    .iter()
                    .zip(&r.levels)
                    .map(|(l, (n, big))| format!("{n} at >= {l}% (largest {big} files)"))
                    .collect();
                let _ = writeln!(
                    o,
                    "    sub-clusters (single linkage): {}",
                    levels.join(", ")
                );
                let _ = writeln!(
                    o,
                    "    {} links; the {} closest of each file shown; all in the tsv and json reports (fsim-report --format tsv|json)",
                    c.link_count,
                    model::CLOSEST
                );
            }
            for (i, &f) in c.files.iter().enumerate() {
                let (copies, names) = self.copies_apart(f);
                let mut extra = self.view_suffix(f);
                match (copies.len(), names.len()) {
                    (0, 0) => {}
                    (c, 0) => extra.push_str(&format!("  (+{c} identical copies)")),
                    (c, n) => extra.push_str(&format!(
                        "  (+{c} identical copies, +{n} other names of them: hard links)"
                    )),
                }
                let coll = match self.collection(f) {
                    Some(c) if self.collections.len() > 1 => format!("[{c}] "),
                    _ => String::new(),
                };
                let sub = match &c.review {
                    Some(r) => {
                        let [x, y, z] = r.sub[i];
                        format!("  [sub-cluster {x}/{y}/{z} at 50/70/90%]")
                    }
                    None => String::new(),
                };
                let _ = writeln!(
                    o,
                    "    {:>10}  {coll}{}{}{sub}",
                    human_bytes(self.size(f)),
                    self.path(f),
                    extra
                );
                if let Some(r) = &c.review {
                    for l in &r.closest[i] {
                        o.push_str(&self.text_link(color, l));
                    }
                }
                if o.len() >= 1 << 16 {
                    out(&o)?;
                    o.clear();
                }
            }
        }
        out(&o)
    }

    /// A link of the text report.
    pub(crate) fn text_link(&self, color: bool, l: &Pair) -> String {
        use std::fmt::Write;
        let Style {
            dim, pct, reset, ..
        } = Style::new(color);
        let mut o = String::new();
        {
            {
                let (sa, sb) = (self.size(l.a), self.size(l.b));
                let _ = writeln!(
                    o,
                    "      {dim}link{reset} {pct}{:5.1}%{reset}  {}{} <-> {}{}: {} in common ({:.1}% / {:.1}%), {}",
                    symmetric(l.common, sa, sb),
                    self.path(l.a),
                    self.view_suffix(l.a),
                    self.path(l.b),
                    self.view_suffix(l.b),
                    human_bytes(l.common),
                    percent(l.common, sa),
                    percent(l.common, sb),
                    if l.exact { "exact" } else { "lower bound" }
                );
            }
        }
        o
    }

    /// The end of the text report (the collections, if any).
    pub(crate) fn text_tail(&self, color: bool) -> String {
        let st = Style::new(color);
        let mut o = String::new();
        if !self.collections.is_empty() {
            crate::report::collections::text(self, &mut o, st.head, st.reset);
        }
        o
    }

    /// One row of the tsv report.
    pub(crate) fn tsv_link(&self, c: &model::Cluster, l: &Pair) -> String {
        let (sa, sb) = (self.size(l.a), self.size(l.b));
        format!(
            "{}\t{}\t{}\t{}\t{:.1}\t{}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            c.id,
            c.kind,
            c.files.len(),
            c.total_size,
            symmetric(l.common, sa, sb),
            l.common,
            percent(l.common, sa),
            percent(l.common, sb),
            sa,
            sb,
            self.path(l.a),
            self.path(l.b),
            c.reclaimable,
            self.view_field(l.a),
            self.view_field(l.b)
        )
    }
}

/// Folder pairs listed in the text report (the rest, with fewer bytes, are
/// counted: they are in json and tsv).
const FOLDERS_TEXT_MAX: usize = 100;

/// How many of each family's pairs the text report lists, family by
/// family, until [`FOLDERS_TEXT_MAX`] pairs: (family, pairs listed).
fn folders_text_plan(
    f: &crate::report::folders::FolderReport,
) -> impl Iterator<Item = (&crate::report::folders::Family, usize)> {
    let mut listed = 0;
    f.families.iter().map_while(move |fam| {
        if listed >= FOLDERS_TEXT_MAX {
            return None;
        }
        let n = fam.len as usize;
        let most = if n > crate::report::folders::CROWD {
            CROWD_TEXT_MAX
        } else {
            n
        };
        let show = most.min(FOLDERS_TEXT_MAX - listed);
        listed += show;
        Some((fam, show))
    })
}

/// Whether the text report lists folder pair `k`.
fn folder_listed_in_text(f: &crate::report::folders::FolderReport, k: u32) -> bool {
    folders_text_plan(f).any(|(fam, show)| k >= fam.first && ((k - fam.first) as usize) < show)
}

/// The folders section of the text report, before the identical sets:
/// family by family, each family of several pairs under a line with its
/// pattern, its number of pairs and folders and their range of percents.
fn folders_text(
    f: &crate::report::folders::FolderReport,
    min_percent: f64,
    o: &mut String,
    st: Style,
) {
    use std::fmt::Write;
    let crowd = crate::report::folders::CROWD;
    let _ = writeln!(
        o,
        "{}Folders that are copies or versions of each other: {} pairs (>= {}% of their bytes found in each other; the topmost of each tree){}{}",
        st.head,
        f.pairs.len(),
        min_percent,
        if f.families.len() < f.pairs.len() {
            format!(" in {} families (the same folder of several trees, or sibling folders, named with * where their paths differ, .../ when under several parents; else pairs of the same two parent folders), in the order of their first pair, showing {CROWD_TEXT_MAX} pairs of a family of more than {crowd}", f.families.len())
        } else {
            String::new()
        },
        st.reset
    );
    let mut listed = 0;
    for (fam, show) in folders_text_plan(f) {
        let n = fam.len as usize;
        if n > 1 {
            let _ = writeln!(
                o,
                "  {}family {}{}: {} pairs of {} folders, {:.1}-{:.1}%",
                st.bold,
                escape_path_string(&fam.label),
                st.reset,
                n,
                fam.folders,
                fam.percent_min,
                fam.percent_max
            );
        }
        for k in fam.first..fam.first + show as u32 {
            folder_pair_text(k as usize, &f.pairs[k as usize], o, st);
        }
        listed += show;
        if n > show {
            let _ = writeln!(
                o,
                "    {}... and {} more pairs of the family {}: in report.json and report.tsv{}",
                st.dim,
                n - show,
                escape_path_string(&fam.label),
                st.reset
            );
        }
    }
    if f.pairs.len() > listed {
        let _ = writeln!(
            o,
            "{}... {} folder pairs listed here of {}: all are in report.json and report.tsv{}",
            st.dim,
            listed,
            f.pairs.len(),
            st.reset
        );
    }
    if f.wide_sets > 0 {
        let _ = writeln!(
            o,
            "{}{} identical sets of more than {} files proposed no folder pairs (they count in the pairs other files proposed){}",
            st.dim, f.wide_sets, crate::report::folders::SET_FANOUT, st.reset
        );
    }
    let _ = writeln!(o);
}

/// Pairs listed of a family of more than [`crate::report::folders::CROWD`]
/// (sibling folders alike in their boilerplate).
const CROWD_TEXT_MAX: usize = 3;

/// Folder pair `k` (from 0) as two lines of the text report.
fn folder_pair_text(k: usize, p: &crate::report::folders::FolderPair, o: &mut String, st: Style) {
    use std::fmt::Write;
    {
        let _ = writeln!(
            o,
            "  {}. {}{}{}  <->  {}{}{}  {}{:.1}%{}",
            k + 1,
            st.bold,
            escape_path_string(&p.a),
            st.reset,
            st.bold,
            escape_path_string(&p.b),
            st.reset,
            st.pct,
            p.percent(),
            st.reset
        );
        let _ = writeln!(
            o,
            "    {} of {} ({} files) found in the second, {} of {} ({} files) in the first; {} files the same, {} changed, {} only in the first, {} only in the second",
            human_bytes(p.a_in_b),
            human_bytes(p.bytes_a),
            p.files_a,
            human_bytes(p.b_in_a),
            human_bytes(p.bytes_b),
            p.files_b,
            p.same,
            p.changed,
            p.only_a,
            p.only_b
        );
    }
}

/// The first line of the tsv report. Scripts read it by position, so new
/// columns go at the end (`view_a`, `view_b`: issue 27).
pub(crate) const TSV_HEADER: &str = "cluster\ttype\tcluster_files\tcluster_bytes\tpercent_symmetric\tbytes_in_common\tpercent_of_a\tpercent_of_b\tsize_a\tsize_b\tpath_a\tpath_b\tcluster_reclaimable_bytes\tview_a\tview_b\n";

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

/// A path as the report shows it ([`escape_path`]) as a json string, the
/// bytes serde_json writes for that string: nearly every path is valid
/// UTF-8 with nothing to escape either way, and is copied as it is.
fn json_path(path: &[u8], out: &mut Vec<u8>) {
    // Folded without an early exit, the test runs many bytes at a time.
    let special = path.iter().fold(false, |any, &b| {
        any | (b == b'\\' || b == b'"' || b < 0x20 || b == 0x7f)
    });
    if !special && std::str::from_utf8(path).is_ok() {
        out.push(b'"');
        out.extend_from_slice(path);
        out.push(b'"');
        return;
    }
    let shown = escape_path_string(path);
    serde_json::to_writer(out, &shown).expect("json of a string");
}

/// A json object written key by key as serde_json's pretty printer writes
/// it (keys given in its order: sorted), indented by `indent` spaces.
struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    indent: usize,
    keys: usize,
}

impl<'a> JsonObject<'a> {
    fn new(indent: usize, out: &'a mut Vec<u8>) -> JsonObject<'a> {
        out.push(b'{');
        JsonObject {
            out,
            indent,
            keys: 0,
        }
    }

    fn key(&mut self, k: &str) {
        self.out
            .extend_from_slice(if self.keys == 0 { b"\n" } else { b",\n" });
        self.keys += 1;
        self.out.extend(std::iter::repeat_n(b' ', self.indent + 2));
        // Keys are the report's own names: nothing in them to escape.
        debug_assert!(k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\": ");
    }

    fn value<T: serde::Serialize + ?Sized>(&mut self, v: &T) {
        serde_json::to_writer(&mut *self.out, v).expect("json of a string or number");
    }

    fn string(&mut self, k: &str, v: &str) {
        self.key(k);
        self.value(v);
    }

    /// A path as the report shows it ([`escape_path`]), a json string.
    fn path(&mut self, k: &str, path: &[u8]) {
        self.key(k);
        json_path(path, self.out);
    }

    /// A list, each item written by `item` at the indent it is given; `[]`
    /// when empty, as serde_json's pretty printer writes it.
    fn array<T>(&mut self, k: &str, items: &[T], mut item: impl FnMut(&T, &mut Vec<u8>, usize)) {
        self.key(k);
        if items.is_empty() {
            self.out.extend_from_slice(b"[]");
            return;
        }
        let inner = self.indent + 4;
        for (n, x) in items.iter().enumerate() {
            self.out
                .extend_from_slice(if n == 0 { b"[\n" } else { b",\n" });
            self.out.extend(std::iter::repeat_n(b' ', inner));
            item(x, self.out, inner);
        }
        self.out.push(b'\n');
        self.out.extend(std::iter::repeat_n(b' ', self.indent + 2));
        self.out.push(b']');
    }

    fn number(&mut self, k: &str, v: impl Into<u64>) {
        self.key(k);
        self.value(&v.into());
    }

    /// As a json value holds it: null when not finite.
    fn float(&mut self, k: &str, v: f64) {
        self.key(k);
        self.value(&Value::from(v));
    }

    fn raw(&mut self, k: &str, v: &str) {
        self.key(k);
        self.out.extend_from_slice(v.as_bytes());
    }

    fn end(self) {
        let close = if self.keys == 0 { 0 } else { self.indent };
        if self.keys > 0 {
            self.out.push(b'\n');
        }
        self.out.extend(std::iter::repeat_n(b' ', close));
        self.out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A json object written key by key (a link's, [`Report::write_link_json`])
    /// is the text serde_json's pretty printer gives its value, indented.
    #[test]
    fn json_objects_are_written_as_serde_json_writes_them() {
        let odd = "we\"ird\\\u{1}/\u{e9}\u{2028}\t.txt";
        for (path, pct) in [
            ("a/b.txt", 50.0),
            (odd, 100.0),
            ("", f64::NAN),
            ("x", 33.35),
        ] {
            let v = serde_json::json!({
                "a": path, "a_id": 7, "exact": true, "n": u64::MAX, "p": r1(pct)
            });
            let mut out = Vec::new();
            let mut o = JsonObject::new(8, &mut out);
            o.string("a", path);
            o.number("a_id", 7u32);
            o.raw("exact", "true");
            o.number("n", u64::MAX);
            o.float("p", r1(pct));
            o.end();
            let want = serde_json::to_string_pretty(&v)
                .unwrap()
                .replace('\n', &format!("\n{}", " ".repeat(8)));
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }

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
