//! `fsim-report --format html`: one self-contained page (inline CSS and JS,
//! no network, no external assets) for the analyst: summary, identical
//! sets, the cluster table (sortable, filterable, expandable) and, for the
//! links of the first clusters, a side-by-side view of the two files with
//! the chunks they share highlighted (the paper's figure 4).
//!
//! The views are rebuilt from the files themselves when they are still
//! readable: each file is re-chunked with the parameters recorded in the
//! pairs header (`Chunker::new(method, avg)`, MD5 per chunk, as fsim-chunk
//! does), checked against the file table (size and content hash: a file
//! that changed since the scan is reported as changed, never shown wrongly),
//! and a chunk of one file is shared when its hash occurs in the other.
//!
//! # Template chunks
//!
//! When the analysis ignored templates (`--templates`, paper section 4),
//! the files still hold the template chunks, and two files made from one
//! template share them all: shown as shared, they would look like the
//! reason for the link, which is exactly what the analyst asked to ignore.
//! Given the same templates files (`fsim-report --templates`, checked
//! against the pairs header), each chunk of a view is flagged `2` when it
//! is a template chunk, and the page draws those in their own colour with
//! a legend and a title, apart from the shared payload chunks (`1`) and
//! the chunks of one file only (`0`). Without them, a note says that the
//! template chunks show as shared.
//!
//! # Escaping
//!
//! All data (paths, file text, notes) goes into one
//! `<script type="application/json">` block, escaped for that context (`<`,
//! `>`, `&`, U+2028 and U+2029 as `\uXXXX`, so no `</script>` can appear),
//! and the page's script builds the DOM with `textContent` only. A
//! Content-Security-Policy forbids every network request.
//!
//! # Cost and caps
//!
//! The page is written as the clusters and their links come (the shared
//! walk of src/report/stream/walk.rs, within `--memory`), in the report's
//! ranking, and holds at most [`MAX_CLUSTERS`] clusters, [`MAX_FILES`]
//! files and [`MAX_LINKS`] links (about 10 MB of data), so that a browser
//! opens it: clusters are taken in order while they fit; the first is
//! always shown, cut to the caps if it must be. A cluster of more than
//! `--review-files` files shows each file's closest relatives, not all its
//! links. What the page leaves out is said in it (how many clusters,
//! files, links, reclaimable bytes) and where the complete list is
//! (report.tsv, report.json). Identical sets: at most [`MAX_SETS`] sets of
//! [`MAX_SET_FILES`] paths; folder pairs: at most [`MAX_FOLDERS`] rows.
//!
//! Memory: the report's model (O(files)) and the links of `--memory`, plus
//! the views: at most `max_views` links, `text_cap` bytes of text per
//! viewed file and its chunk list; each viewed file is read once to
//! re-chunk it.

use crate::chunking::chunker::{Chunker, Method};
use crate::chunking::members::chunk_member_as;
use crate::chunking::reader::chunk_path_as;
use crate::content::{Limits, Mode};
use crate::error::Result;
use crate::formats::templates::TemplateSet;
use crate::formats::{escape_path_string, FileType, ViewKind};
use crate::formats::{percent, symmetric};
use crate::report::model::{r1, Cluster, HtmlOptions, Pair, Report};
use crate::report::stream::{Buffered, Source, Visit};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The page: CSS, markup and script; the data goes between the two halves.
const PAGE: &str = include_str!("page.html");
/// Where the data block goes in [`PAGE`].
const DATA_MARK: &str = "@@FSIM_DATA@@";

/// A viewed file: what was found when re-reading it.
struct ViewFile {
    /// Full chunk list (hash, length); empty unless the file is as scanned.
    pieces: Vec<(u128, u32)>,
    /// Index in the page's `vfiles` array.
    index: usize,
}

/// Escape serialized JSON for a `<script type="application/json">` block.
/// `<`, `>` and `&` occur only inside JSON strings, where `\u003c` etc.
/// mean the same characters, so the data parses back unchanged.
pub fn escape_json_for_script(json: &str) -> String {
    let mut o = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => o.push_str("\\u003c"),
            '>' => o.push_str("\\u003e"),
            '&' => o.push_str("\\u0026"),
            '\u{2028}' => o.push_str("\\u2028"),
            '\u{2029}' => o.push_str("\\u2029"),
            c => o.push(c),
        }
    }
    o
}

/// The chunker that made the records, when it can be rebuilt from the
/// header parameters; otherwise why not.
fn chunker_of(report: &Report) -> std::result::Result<Chunker, String> {
    let p = report.header().chunk;
    let method: Method = p
        .method
        .as_deref()
        .ok_or("no chunking method recorded")?
        .parse()?;
    let avg = p.avg.ok_or("no average chunk size recorded")? as usize;
    let c = Chunker::new(method, avg)?;
    // Which view was chunked is recorded beside the chunker's parameters.
    let mine = crate::formats::headers::ChunkParams {
        content: p.content.clone(),
        pdf: p.pdf.clone(),
        ..c.chunk_params()
    };
    match mine.difference(&p) {
        None => Ok(c),
        Some(d) => Err(format!(
            "the chunking parameters of the run cannot be reproduced ({d})"
        )),
    }
}

/// Split `bytes` (the shown start of a file) at the chunk lengths `lens`
/// into one string per chunk. Valid UTF-8 is split at the next character
/// boundary after each cut (a multi-byte character is never broken); other
/// bytes are decoded per chunk, invalid sequences as U+FFFD.
fn split_text(bytes: &[u8], lens: &[u32]) -> Vec<String> {
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => Some(s),
        // A cut at the size cap may split the last character.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&bytes[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    let mut out = Vec::with_capacity(lens.len());
    let mut pos = 0usize;
    let mut text_pos = 0usize;
    for &l in lens {
        let end = (pos + l as usize).min(bytes.len());
        match valid {
            Some(s) => {
                let mut e = end.min(s.len()).max(text_pos);
                while !s.is_char_boundary(e) {
                    e += 1;
                }
                out.push(s[text_pos..e].to_string());
                text_pos = e;
            }
            None => out.push(String::from_utf8_lossy(&bytes[pos..end]).into_owned()),
        }
        pos = end;
    }
    out
}

/// Re-read one file for a view: its chunk list when it is as scanned, and
/// the page's description of it.
fn view_file(
    report: &Report,
    id: u32,
    chunker: &Chunker,
    opts: &HtmlOptions,
) -> (Vec<(u128, u32)>, Value) {
    let e = report.files.at(id);
    let path = Path::new(OsStr::from_bytes(e.path));
    let mut v = json!({
        "path": escape_path_string(e.path),
        "size": e.size,
        "type": e.ftype.as_str(),
    });
    let fail = |mut v: Value, status: &str, note: String| {
        v["status"] = json!(status);
        v["note"] = json!(note);
        (Vec::new(), v)
    };
    // Read as it was chunked: through its content view, or raw.
    let mode = if e.view == ViewKind::Raw {
        Mode::Raw
    } else {
        v["view"] = json!(report.view_field(id));
        Mode::Auto
    };
    let limits = Limits::within_memory(report.config.memory);
    let read = match e.archive {
        // A member of an archive: read through its archive, never opened.
        Some(len) => chunk_member_as(e.path, len, chunker, &limits, opts.text_cap),
        None => chunk_path_as(path, chunker, mode, &limits, opts.text_cap)
            .map_err(|err| err.to_string()),
    };
    let (pieces, info, view, head) = match read {
        Ok(x) => x,
        Err(err) => return fail(v, "unreadable", format!("cannot read the file now: {err}")),
    };
    if info.size != e.size || info.content != e.content || view.kind != e.view {
        let how = if info.size != e.size {
            format!("{} bytes now, {} when scanned", info.size, e.size)
        } else {
            "same size, other content".to_string()
        };
        return fail(
            v,
            "changed",
            format!("the file changed since the scan ({how}): no view"),
        );
    }
    let cap = opts.text_cap.min(e.size as usize);
    // Chunks that start within the cap.
    let mut lens = Vec::new();
    let mut start = 0usize;
    for &(_, l) in &pieces {
        if start >= cap && cap > 0 {
            break;
        }
        lens.push(l);
        start += l as usize;
    }
    v["lens"] = json!(lens);
    v["truncated"] = json!(cap < e.size as usize);
    v["shown"] = json!(cap);
    if e.ftype == FileType::Text && (e.view != ViewKind::Raw || e.archive.is_some()) {
        // The view's first bytes, kept while it was chunked.
        v["text"] = json!(split_text(&head[..cap.min(head.len())], &lens));
        v["status"] = json!("ok");
    } else if e.ftype == FileType::Text {
        let mut head = Vec::with_capacity(cap);
        let read = crate::io::longpath::open_file(path)
            .and_then(|f| f.take(cap as u64).read_to_end(&mut head));
        if let Err(err) = read {
            return fail(v, "unreadable", format!("cannot read the file now: {err}"));
        }
        if head.len() != cap {
            return fail(
                v,
                "changed",
                "the file changed while it was read: no view".into(),
            );
        }
        v["text"] = json!(split_text(&head, &lens));
        v["status"] = json!("ok");
    } else {
        v["status"] = json!("binary");
        v["note"] = json!(format!(
            "{} file: content not shown; the chunk map shows the shared chunks",
            e.ftype.as_str()
        ));
    }
    (pieces, v)
}

/// What the chunks of one file of a view are.
#[derive(Debug, PartialEq, Eq)]
struct Flags {
    /// One character per chunk shown: '2' a template chunk (ignored by the
    /// analysis, shared or not), '1' shared with the other file, '0' not.
    flags: String,
    /// Bytes of the whole file in shared chunks that are not template.
    shared: u64,
    /// Bytes of the whole file in template chunks.
    template: u64,
}

/// [`Flags`] for the first `n` chunks of `of`: shared when the chunk's
/// hash occurs in `other`, template when it is in `templates`.
fn chunk_flags(
    of: &[(u128, u32)],
    other: &HashSet<u128>,
    templates: Option<&TemplateSet>,
    n: usize,
) -> Flags {
    let mut f = Flags {
        flags: String::with_capacity(n.min(of.len())),
        shared: 0,
        template: 0,
    };
    for (i, &(h, l)) in of.iter().enumerate() {
        let c = if templates.is_some_and(|t| t.contains(h)) {
            f.template += l as u64;
            '2'
        } else if other.contains(&h) {
            f.shared += l as u64;
            '1'
        } else {
            '0'
        };
        if i < n {
            f.flags.push(c);
        }
    }
    f
}

/// Clusters in the page at most (the first in the ranking).
pub const MAX_CLUSTERS: usize = 5_000;
/// Files of clusters in the page at most.
pub const MAX_FILES: usize = 60_000;
/// Links in the page at most.
pub const MAX_LINKS: usize = 100_000;
/// Identical sets in the page at most, and paths of one set.
pub const MAX_SETS: usize = 5_000;
/// Folder pairs on the page (the first, with the most bytes): they are
/// held as one value while the page's head is written.
pub const MAX_FOLDERS: usize = 1_000;
pub const MAX_SET_FILES: usize = 1_000;

/// Links of a cluster the page would show: each file's closest relatives
/// (counted once per file, an upper bound) for a reviewed cluster, else
/// all of them.
fn page_links(c: &Cluster) -> usize {
    match &c.review {
        Some(r) => r.closest.iter().map(|x| x.len()).sum(),
        None => c.link_count,
    }
}

/// How many of the first clusters the page shows: clusters in ranked order
/// while all of them fit in the caps; the first is always shown (cut to
/// the caps if it must be).
fn clusters_shown(clusters: &[Cluster]) -> usize {
    let (mut files, mut links) = (MAX_FILES, MAX_LINKS);
    let mut shown = 0;
    for (i, c) in clusters.iter().enumerate().take(MAX_CLUSTERS) {
        let (f, l) = (c.files.len(), page_links(c));
        if i > 0 && (f > files || l > links) {
            break;
        }
        files -= f.min(files);
        links -= l.min(links);
        shown = i + 1;
    }
    shown
}

/// Writes the page as the clusters and their links come (stream::walk).
struct Page<'a> {
    out: Buffered,
    opts: HtmlOptions,
    templates: Option<&'a TemplateSet>,
    chunker: std::result::Result<Chunker, String>,
    cache: HashMap<u32, ViewFile>,
    vfiles: Vec<Value>,
    views: Vec<Value>,
    /// Clusters shown.
    shown: usize,
    /// Links that had a view (or could have had one) in the page.
    page_links: usize,
    /// Current cluster: index of each shown file, links written.
    index: HashMap<u32, usize>,
    links: usize,
    /// Links of the current cluster left out by the page's cap.
    links_cut: usize,
}

impl Page<'_> {
    fn push(&mut self, s: &str) -> Result<()> {
        self.out.push(s)
    }

    fn value(&mut self, v: &Value) -> Result<()> {
        let t = serde_json::to_string(v).map_err(|e| crate::Error::msg(format!("html: {e}")))?;
        self.push(&escape_json_for_script(&t))
    }

    /// The view of a link, if one is still allowed: its index in `views`.
    fn view(&mut self, report: &Report, a: u32, b: u32) -> Value {
        let ch = match &self.chunker {
            Ok(ch) if self.views.len() < self.opts.max_views => ch,
            _ => return Value::from(-1),
        };
        for id in [a, b] {
            if !self.cache.contains_key(&id) {
                let (pieces, v) = view_file(report, id, ch, &self.opts);
                self.vfiles.push(v);
                let index = self.vfiles.len() - 1;
                self.cache.insert(id, ViewFile { pieces, index });
            }
        }
        let (fa, fb) = (&self.cache[&a], &self.cache[&b]);
        let na = self.vfiles[fa.index]["lens"]
            .as_array()
            .map_or(0, |x| x.len());
        let nb = self.vfiles[fb.index]["lens"]
            .as_array()
            .map_or(0, |x| x.len());
        let ha: HashSet<u128> = fa.pieces.iter().map(|p| p.0).collect();
        let hb: HashSet<u128> = fb.pieces.iter().map(|p| p.0).collect();
        let fl_a = chunk_flags(&fa.pieces, &hb, self.templates, na);
        let fl_b = chunk_flags(&fb.pieces, &ha, self.templates, nb);
        let (ia, ib) = (fa.index, fb.index);
        self.views.push(json!({
            "a": ia,
            "b": ib,
            "flags_a": fl_a.flags,
            "flags_b": fl_b.flags,
            "shared_a": fl_a.shared,
            "shared_b": fl_b.shared,
            "template_a": fl_a.template,
            "template_b": fl_b.template,
        }));
        Value::from(self.views.len() - 1)
    }

    /// One link of the current cluster, if both its files are shown and
    /// the page has room.
    fn write_link(&mut self, report: &Report, l: &Pair) -> Result<()> {
        let (Some(&ia), Some(&ib)) = (self.index.get(&l.a), self.index.get(&l.b)) else {
            self.links_cut += 1;
            return Ok(());
        };
        if self.links >= MAX_LINKS {
            self.links_cut += 1;
            return Ok(());
        }
        let (sa, sb) = (report.size(l.a), report.size(l.b));
        let view = self.view(report, l.a, l.b);
        self.page_links += 1;
        let v = json!([
            ia,
            ib,
            l.common,
            l.shared_chunks,
            r1(percent(l.common, sa)),
            r1(percent(l.common, sb)),
            r1(symmetric(l.common, sa, sb)),
            view,
            report.view_field(l.a),
            report.view_field(l.b)
        ]);
        self.push(if self.links == 0 { "" } else { "," })?;
        self.links += 1;
        self.value(&v)
    }
}

impl Visit for Page<'_> {
    fn wants(&self, r: &Report, i: usize) -> bool {
        i < self.shown && r.clusters[i].review.is_none()
    }

    fn start(&mut self, r: &Report, i: usize) -> Result<()> {
        let c = &r.clusters[i];
        let path = |id: u32| escape_path_string(r.files.path(id));
        let n = c.files.len().min(MAX_FILES);
        self.index = c.files[..n]
            .iter()
            .enumerate()
            .map(|(i, &f)| (f, i))
            .collect();
        self.links = 0;
        self.links_cut = 0;
        let head = json!({
            "id": c.id,
            "type": c.kind,
            "total": c.total_size,
            "reclaim": c.reclaimable,
            "avg": r1(c.avg_similarity),
            "file_count": c.files.len(),
            "link_count": c.link_count,
            "levels": c.review.as_ref().map(|rv| crate::report::model::REVIEW_LEVELS.iter().zip(&rv.levels).map(|(l, (k, big))| json!([l, k, big])).collect::<Vec<_>>()),
            "chained": c.review.as_ref().and_then(|rv| rv.hubs.as_ref()).map(|h| json!({
                "hubs": h.files.len(),
                "share": crate::report::model::HUB_SHARE,
                "groups": h.groups,
                "largest": h.largest,
                "most": h.files.iter().take(3).map(|&(f, l)| format!("{} ({l} links)", path(f))).collect::<Vec<_>>(),
            })),
            "template": c.template.as_ref().map(|t| t.command.clone()),
            "template_bytes": c.template.as_ref().map(|t| t.bytes),
            "folder_pair": c.folder_pair,
        });
        let t =
            serde_json::to_string(&head).map_err(|e| crate::Error::msg(format!("html: {e}")))?;
        // Reopen the object for the files, written one by one (60,000 of
        // them held as json values took ~70 MB), then for the links.
        self.push(if i == 0 { "" } else { "," })?;
        self.push(&escape_json_for_script(&t[..t.len() - 1]))?;
        self.push(",\"files\":[")?;
        for (k, &f) in c.files[..n].iter().enumerate() {
            let (copies, names) = r.copies_apart(f);
            let copies: Vec<String> = copies
                .iter()
                .map(|&x| path(x))
                .chain(names.iter().map(|&x| format!("{}  (hard link)", path(x))))
                .collect();
            let mut v = json!([
                path(f),
                r.size(f),
                r.files.at(f).ftype.as_str(),
                r1(r.best[f as usize]),
                copies
            ]);
            if let Some(rv) = &c.review {
                v.as_array_mut().unwrap().push(json!(rv.sub[k]));
            }
            self.push(if k == 0 { "" } else { "," })?;
            self.value(&v)?;
        }
        self.push("],\"links\":[")?;
        if let Some(rv) = &c.review {
            // Each file's closest relatives, each link once, in (a, b) order.
            let mut links: Vec<Pair> = rv.closest[..n].iter().flatten().copied().collect();
            links.sort_by_key(|p| (p.a, p.b));
            links.dedup_by_key(|p| (p.a, p.b));
            for l in &links {
                self.write_link(r, l)?;
            }
        }
        Ok(())
    }

    fn link(&mut self, r: &Report, _: usize, l: &Pair) -> Result<()> {
        self.write_link(r, l)
    }

    fn end(&mut self, r: &Report, i: usize) -> Result<()> {
        let c = &r.clusters[i];
        let mut notes = Vec::new();
        if c.files.len() > MAX_FILES {
            notes.push(format!(
                "The page shows the {} largest of its {} files and their links (page limit); every file is in report.tsv and report.json, every link in report.tsv (fsim-report --format tsv).",
                MAX_FILES,
                c.files.len()
            ));
        }
        if c.review.is_some() {
            notes.push(format!(
                "{} links; the {} closest of each file shown ({} here); all in report.tsv (fsim-report --format tsv).",
                c.link_count,
                crate::report::model::CLOSEST,
                self.links
            ));
        } else if self.links < c.link_count {
            notes.push(format!(
                "{} links; the page shows the first {} (page limit of {} links); all in report.tsv and report.json (fsim-report --format tsv|json).",
                c.link_count, self.links, MAX_LINKS
            ));
        }
        let note = (!notes.is_empty()).then(|| notes.join(" "));
        self.push("],\"links_shown\":")?;
        self.push(&self.links.to_string())?;
        self.push(",\"links_note\":")?;
        self.value(&json!(note))?;
        self.push("}")
    }
}

/// Write the page: the report's data in one JSON block, the clusters as
/// they come, within the page's caps (stated in the page).
pub(crate) fn write(
    report: &Report,
    source: &mut Source,
    rank: &[u32],
    templates: Option<&TemplateSet>,
    output: Option<&std::path::Path>,
) -> Result<()> {
    let opts = report.config.html;
    let mut page = Page {
        out: Buffered::create(output)?,
        opts,
        templates,
        chunker: chunker_of(report),
        cache: HashMap::new(),
        vfiles: Vec::new(),
        views: Vec::new(),
        shown: clusters_shown(&report.clusters),
        page_links: 0,
        index: HashMap::new(),
        links: 0,
        links_cut: 0,
    };
    let (head, tail) = PAGE
        .split_once(DATA_MARK)
        .expect("the page template has a data mark");
    page.push(head)?;
    let mut head = head_json(report);
    head["folders_best"] = Value::Array(folders_best(report)?);
    let t = serde_json::to_string(&head).map_err(|e| crate::Error::msg(format!("html: {e}")))?;
    page.push(&escape_json_for_script(&t[..t.len() - 1]))?;
    write_folders(&mut page, report)?;
    page.push(",\"clusters\":[")?;
    let shown = page.shown;
    let budget = report.link_budget();
    crate::report::stream::walk(report, source, rank, shown, budget, &mut page)?;
    page.push("]")?;
    let templates_known = templates.is_some_and(|t| !t.is_empty());
    let template_info = match (report.templates(), templates_known) {
        (Some((n, digest)), true) => json!({"chunks": n, "digest": digest}),
        _ => Value::Null,
    };
    let views_note = views_note(&page, report, templates_known);
    let rest = json!({
        "clusters_note": clusters_note(report, shown),
        "views": std::mem::take(&mut page.views),
        "vfiles": std::mem::take(&mut page.vfiles),
        "views_note": views_note,
        "templates": template_info,
    });
    let t = serde_json::to_string(&rest).map_err(|e| crate::Error::msg(format!("html: {e}")))?;
    page.push(",")?;
    page.push(&escape_json_for_script(&t[1..]))?;
    page.push(tail)?;
    page.out.finish()
}

/// The head of the page's data: parameters, summary, notes, the folder
/// families shown, the identical sets and the same-content groups (each
/// list within its page limit, which its note states).
fn head_json(report: &Report) -> Value {
    let params: serde_json::Map<String, Value> = report
        .params
        .0
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let path = |id: u32| escape_path_string(report.files.path(id));
    let identical: Vec<Value> = report
        .identical
        .iter()
        .take(MAX_SETS)
        .map(|s| {
            json!({
                "id": s.id,
                "size": s.size,
                "overhead": s.overhead(),
                "count": s.files.len(),
                "note": report.disk_note(s),
                "files": s.files.iter().take(MAX_SET_FILES).map(|&f| match s.disk.name_of(f) {
                    Some(k) => format!("{}  ({})", path(f), report.other_name_note(f, k)),
                    None => path(f),
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let sets_left = report.identical.len().saturating_sub(MAX_SETS);
    let identical_note = (sets_left > 0).then(|| {
        format!(
            "The page shows the first {MAX_SETS} of {} identical sets (page limit); all are in report.json and report.txt.",
            report.identical.len()
        )
    });
    let same_content: Vec<Value> = report
        .same_content
        .iter()
        .take(MAX_SETS)
        .map(|g| {
            json!({
                "id": g.id,
                "size": g.size,
                "count": g.files.len(),
                "files": g.files.iter().take(MAX_SET_FILES).map(|&f| format!("{}  [{}]", path(f), report.view_label(f))).collect::<Vec<_>>(),
            })
        })
        .collect();
    let same_note = (report.same_content.len() > MAX_SETS).then(|| {
        format!(
            "The page shows the first {MAX_SETS} of {} groups (page limit); all are in report.json and report.txt.",
            report.same_content.len()
        )
    });
    let hard_links: Vec<Value> = report
        .hard_links
        .iter()
        .take(MAX_SETS)
        .map(|h| {
            json!({
                "id": h.id,
                "size": h.size,
                "count": h.files.len(),
                "files": h.files.iter().take(MAX_SET_FILES).map(|&f| path(f)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let pairs = &report.folders.pairs;
    let folders_note = (pairs.len() > MAX_FOLDERS).then(|| {
        format!(
            "The page shows the first {MAX_FOLDERS} of {} folder pairs, family by family (page limit); all are in report.json and report.tsv.",
            pairs.len()
        )
    });
    json!({
        "fsim_report": 1,
        "params": params,
        "summary": report.summary(),
        "pruned_note": report.pruned_note(),
        "folders_note": folders_note,
        // The families of the pairs shown (each pair names its own).
        "folder_families": report
            .folders
            .families
            .iter()
            .take_while(|f| (f.first as usize) < MAX_FOLDERS)
            .map(|f| f.to_json())
            .collect::<Vec<_>>(),
        "identical": identical,
        "identical_note": identical_note,
        "same_content": same_content,
        "same_note": same_note,
        "hard_links": hard_links,
        "hard_links_count": report.hard_links.len(),
        "walk_note": report.walk_note(),
        "notes": report.notes_html(),
    })
}

/// The pairs the folders section opens with, whatever their family
/// ([`FolderReport::best`](crate::report::folders::FolderReport)): each
/// with its child pairs and `index`, its place in the report's pairs (it
/// may be past the page's [`MAX_FOLDERS`]).
fn folders_best(report: &Report) -> Result<Vec<Value>> {
    let f = &report.folders;
    f.best
        .iter()
        .map(|&k| {
            let p = f.listed(k as usize, Some(crate::report::folders::CHILDREN))?;
            let mut j = p.to_json(&report.files);
            j["index"] = json!(k);
            Ok(j)
        })
        .collect()
}

/// The folder pairs one by one: with their file lists, they are too large
/// to hold as values within --memory.
fn write_folders(page: &mut Page, report: &Report) -> Result<()> {
    let pairs = &report.folders.pairs;
    page.push(",\"folders\":[")?;
    for k in 0..pairs.len().min(MAX_FOLDERS) {
        let p = report
            .folders
            .listed(k, Some(crate::report::folders::CHILDREN))?;
        let j = serde_json::to_string(&p.to_json(&report.files))
            .map_err(|e| crate::Error::msg(format!("html: {e}")))?;
        page.push(if k == 0 { "" } else { "," })?;
        page.push(&escape_json_for_script(&j))?;
    }
    page.push("]")?;
    Ok(())
}

/// What the page leaves out of the clusters, and where it is.
fn clusters_note(report: &Report, shown: usize) -> Option<String> {
    let left = &report.clusters[shown..];
    (!left.is_empty()).then(|| {
        format!(
            "The page shows the first {} of {} clusters (page limits: {} clusters, {} files, {} links); the other {} clusters ({} files, {} links, {} reclaimable) are in report.tsv and report.json (fsim-report --format tsv|json).",
            shown,
            report.clusters.len(),
            MAX_CLUSTERS,
            MAX_FILES,
            MAX_LINKS,
            left.len(),
            left.iter().map(|c| c.files.len()).sum::<usize>(),
            left.iter().map(|c| c.link_count).sum::<usize>(),
            crate::report::model::human_bytes(left.iter().map(|c| c.reclaimable).sum()),
        )
    })
}

/// Which links have side-by-side views, and how the template chunks show
/// in them.
fn views_note(page: &Page, report: &Report, templates_known: bool) -> String {
    let opts = &page.opts;
    let mut views_note = match &page.chunker {
        Err(why) => format!("No side-by-side views: {why}."),
        Ok(_) if page.views.len() < page.page_links => format!(
            "Side-by-side views for the first {} links (first clusters first; --html-max-views), at most {} KiB of text per file.",
            page.views.len(),
            opts.text_cap >> 10
        ),
        Ok(_) => format!(
            "Side-by-side views for every link, at most {} KiB of text per file.",
            opts.text_cap >> 10
        ),
    };
    match report.templates() {
        Some((n, _)) if templates_known => views_note.push_str(&format!(
            " The analysis ignored {n} template chunks (--templates): the views mark them apart from the shared chunks."
        )),
        Some((n, _)) if !page.views.is_empty() => views_note.push_str(&format!(
            " The analysis ignored {n} template chunks, but fsim-report was not given them (--templates FILE): in the views they show as shared chunks."
        )),
        _ => {}
    }
    views_note
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_escaping_round_trips() {
        let v = json!({"p": "</script><img src=x onerror=alert(1)>&\u{2028}"});
        let s = escape_json_for_script(&serde_json::to_string(&v).unwrap());
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}'));
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn text_split_keeps_characters_whole() {
        let t = "héllo wörld".as_bytes();
        // Cut inside the two-byte 'é' (bytes 1..3).
        let parts = split_text(t, &[2, 5, 100]);
        assert_eq!(parts.concat(), "héllo wörld");
        assert_eq!(parts[0], "hé");
        // Invalid UTF-8: decoded per chunk, nothing lost but the bad byte.
        let parts = split_text(b"ab\xffcd", &[2, 3]);
        assert_eq!(parts, vec!["ab".to_string(), "\u{fffd}cd".to_string()]);
        // A cap that splits the last character.
        let parts = split_text(&"aé".as_bytes()[..2], &[2]);
        assert_eq!(parts, vec!["a".to_string()]);
    }
}
