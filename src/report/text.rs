//! The text report: its head (summary, notes, folder pairs, identical
//! sets), its clusters and links, and its tail (the collections).

use super::model::{self, Pair};
use super::{human_bytes, percent, symmetric, Report, Style};
use crate::error::Result;
use crate::formats::escape_path_string;

impl Report {
    /// `  [docx text]` after a file's path in the text report when it was
    /// compared by a content view, nothing for raw bytes.
    pub(crate) fn view_suffix(&self, id: u32) -> String {
        match self.files.view_kind(id).label() {
            Some(l) => format!("  [{l}]"),
            None => String::new(),
        }
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

    /// The text report up to its first cluster.
    pub(crate) fn text_head(&self, color: bool) -> Result<String> {
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
        folders_text(&self.folders, self.config.min_percent, &mut o, st)?;
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
        Ok(o)
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
                        "    {}  {dim}({}){reset}",
                        self.path(f),
                        self.other_name_note(f, k)
                    ),
                    None => writeln!(o, "    {}", self.path(f)),
                };
            }
        }
        self.text_hard_links(o, st);
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
            "{dim}each is one file on disk under several names, or met in several collections: not copies, nothing to reclaim{reset}"
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

    /// The line that marks a cluster chained through a few files.
    fn hubs_line(&self, h: &model::Hubs) -> String {
        let most: Vec<String> = h
            .files
            .iter()
            .take(3)
            .map(|&(f, links)| format!("{} ({links} links)", self.path(f)))
            .collect();
        format!(
            "chained: held together by {} file{}, each linked to at least 1/{} of it (a header or page frame they all carry, or a bundle of them); without them the others are {} groups, the largest {} files; most linked: {}",
            h.files.len(),
            if h.files.len() == 1 { "" } else { "s" },
            model::HUB_SHARE,
            h.groups,
            h.largest,
            most.join(", ")
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
                if let Some(h) = &r.hubs {
                    let _ = writeln!(o, "    {}", self.hubs_line(h));
                }
                let _ = writeln!(
                    o,
                    "    {} links; the {} closest of each file shown; all in the tsv report (fsim-report --format tsv; make: FORMATS=tsv)",
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
}

/// Folder pairs listed in the text report (the rest, with fewer bytes, are
/// counted: they are in json and tsv).
const FOLDERS_TEXT_MAX: usize = 100;

/// The pairs of each family the text report lists after the best ones
/// ([`FolderReport::best`](crate::report::folders::FolderReport)), family
/// by family: none of a family of more than
/// [`CROWD`](crate::report::folders::CROWD) pairs (sibling folders alike
/// in their boilerplate: one line says it), else those not among the best,
/// until [`FOLDERS_TEXT_MAX`] lines: (family, pairs listed).
fn folders_text_plan(
    f: &crate::report::folders::FolderReport,
) -> impl Iterator<Item = (&crate::report::folders::Family, Vec<u32>)> {
    let mut budget = FOLDERS_TEXT_MAX;
    f.families.iter().map_while(move |fam| {
        if budget == 0 {
            return None;
        }
        let shown: Vec<u32> = if fam.len as usize > crate::report::folders::CROWD {
            Vec::new()
        } else {
            (fam.first..fam.first + fam.len)
                .filter(|k| !f.best.contains(k))
                .take(budget)
                .collect()
        };
        budget = budget.saturating_sub(shown.len().max(1));
        Some((fam, shown))
    })
}

/// Whether the text report lists folder pair `k` (its plan made once).
fn folder_listed_in_text(f: &crate::report::folders::FolderReport, k: u32) -> bool {
    f.text_listed(k, || {
        let shown = folders_text_plan(f).flat_map(|(_, shown)| shown);
        f.best.iter().copied().chain(shown).collect()
    })
}

/// The folders section of the text report, before the identical sets: the
/// best pairs across all families, then family by family, each family of
/// several pairs under a line with its pattern, its number of pairs and
/// folders and their range of percents, a crowd of sibling folders in
/// that line alone.
fn folders_text(
    f: &crate::report::folders::FolderReport,
    min_percent: f64,
    o: &mut String,
    st: Style,
) -> Result<()> {
    use std::fmt::Write;
    let _ = writeln!(
        o,
        "{}Folders that are copies or versions of each other: {} pairs (>= {}% of their bytes found in each other; the topmost of each tree, with the pairs inside it that are identical, closer or renamed indented under it){}{}",
        st.head,
        f.pairs.len(),
        min_percent,
        if f.families.len() < f.pairs.len() {
            format!(" in {} families (the same folder of several trees, or sibling folders, named with * where their paths differ, .../ when under several parents; else pairs of the same two parent folders)", f.families.len())
        } else {
            String::new()
        },
        st.reset
    );
    let mut listed = f.best.len();
    if f.pairs.len() > 1 {
        let _ = writeln!(
            o,
            "  {}the best {} (most bytes found in each other first, an identical tree before a version):{}",
            st.bold,
            f.best.len(),
            st.reset
        );
    }
    for &k in &f.best {
        let p = f.listed(k as usize, Some(crate::report::folders::CHILDREN))?;
        folder_pair_text(k as usize, &p, o, st);
    }
    listed += folder_families_text(f, o, st)?;
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
            "{}{} identical sets in more than {} folders proposed no folder pairs (they count in the figures of the pairs other files proposed){}",
            st.dim, f.wide_sets, crate::report::folders::SET_FOLDERS, st.reset
        );
    }
    let _ = writeln!(o);
    Ok(())
}

/// The families of the folders section after the best pairs: each
/// family's line and the pairs [`folders_text_plan`] lists of it; the
/// number of pairs listed.
fn folder_families_text(
    f: &crate::report::folders::FolderReport,
    o: &mut String,
    st: Style,
) -> Result<usize> {
    use std::fmt::Write;
    let crowd = crate::report::folders::CROWD;
    let mut listed = 0;
    let mut heading = f.pairs.len() > f.best.len();
    for (fam, shown) in folders_text_plan(f) {
        let n = fam.len as usize;
        let best = (fam.first..fam.first + fam.len)
            .filter(|k| f.best.contains(k))
            .count();
        if shown.is_empty() && n <= crowd && best == n {
            continue;
        }
        if std::mem::take(&mut heading) {
            let _ = writeln!(
                o,
                "  {}the others, family by family (in the order of their first pair; a family of more than {crowd} pairs, sibling folders alike in their boilerplate, in one line):{}",
                st.bold, st.reset
            );
        }
        if n > 1 {
            let _ = writeln!(
                o,
                "  {}family {}{}: {} pairs of {} folders, {:.1}-{:.1}%{}",
                st.bold,
                escape_path_string(&fam.label),
                st.reset,
                n,
                fam.folders,
                fam.percent_min,
                fam.percent_max,
                match (best, n > crowd) {
                    (0, false) => String::new(),
                    (b, false) => format!(", {b} of them among the best above"),
                    (0, true) => ": in report.json and report.tsv".to_string(),
                    (b, true) => format!(
                        ", {b} of them among the best above, all in report.json and report.tsv"
                    ),
                }
            );
        }
        for &k in &shown {
            let p = f.listed(k as usize, Some(crate::report::folders::CHILDREN))?;
            folder_pair_text(k as usize, &p, o, st);
        }
        listed += shown.len();
        let rest = n - shown.len() - best;
        if rest > 0 && n <= crowd {
            let _ = writeln!(
                o,
                "    {}... and {} more pairs of the family {}: in report.json and report.tsv{}",
                st.dim,
                rest,
                escape_path_string(&fam.label),
                st.reset
            );
        }
    }
    Ok(listed)
}

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
            "    {} of {} ({} files) found in the second, {} of {} ({} files) in the first; by relative path {} files the same, {} changed, {} only in the first, {} only in the second",
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
    folder_children_text(p, 1, o, st);
}

/// The child pairs of `p`, indented by their `depth` under the top pair:
/// one line each (`=` identical, `~` similar), then a line for those left
/// out.
fn folder_children_text(
    p: &crate::report::folders::FolderPair,
    depth: usize,
    o: &mut String,
    st: Style,
) {
    use std::fmt::Write;
    let pad = "  ".repeat(depth + 1);
    for c in &p.children {
        let _ = writeln!(
            o,
            "{pad}{} {}{}{}  {}  {}{}{}  {}{:.1}%{}  ({} files the same, {} changed, {} only in the first, {} only in the second)",
            if c.identical() { "=" } else { "~" },
            st.bold,
            escape_path_string(&c.a),
            st.reset,
            if c.identical() { "=" } else { "<->" },
            st.bold,
            escape_path_string(&c.b),
            st.reset,
            st.pct,
            c.percent(),
            st.reset,
            c.same,
            c.changed,
            c.only_a,
            c.only_b
        );
        folder_children_text(c, depth + 1, o, st);
    }
    if p.children_left_out > 0 {
        let _ = writeln!(
            o,
            "{pad}{}... and {} more pairs inside (at most {} a pair here): in report.json and report.tsv{}",
            st.dim,
            p.children_left_out,
            crate::report::folders::CHILDREN,
            st.reset
        );
    }
}
