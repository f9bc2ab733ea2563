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
//! # Cost
//!
//! The page embeds the report's data (about 100 bytes per file and link)
//! plus at most `text_cap` bytes of text per viewed file, for the links of
//! at most `max_views` links (the first clusters, largest first). Each
//! viewed file is read once to re-chunk it.

use crate::chunking::chunker::{Chunker, Method};
use crate::chunking::reader::chunk_path;
use crate::error::Result;
use crate::formats::templates::TemplateSet;
use crate::formats::{escape_path_string, FileType, CHUNK_PARAM_KEYS};
use crate::formats::{percent, symmetric};
use crate::report::model::{HtmlOptions, Report};
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
    let p = &report.params;
    let method: Method = p
        .get("method")
        .ok_or("no chunking method recorded")?
        .parse()?;
    let avg = p.get_u64("avg").ok_or("no average chunk size recorded")? as usize;
    let c = Chunker::new(method, avg)?;
    match c
        .params()
        .only(CHUNK_PARAM_KEYS)
        .difference(&p.only(CHUNK_PARAM_KEYS))
    {
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
    let e = &report.files[id as usize];
    let path = Path::new(OsStr::from_bytes(&e.path));
    let mut v = json!({
        "path": escape_path_string(&e.path),
        "size": e.size,
        "type": e.ftype.as_str(),
    });
    let fail = |mut v: Value, status: &str, note: String| {
        v["status"] = json!(status);
        v["note"] = json!(note);
        (Vec::new(), v)
    };
    let (pieces, info) = match chunk_path(path, chunker) {
        Ok(x) => x,
        Err(err) => return fail(v, "unreadable", format!("cannot read the file now: {err}")),
    };
    if info.size != e.size || info.content != e.content {
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
    if e.ftype == FileType::Text {
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

/// The page's data: summary, identical sets, clusters, views. `templates`:
/// the set the analysis ignored, to mark its chunks in the views.
pub fn data(report: &Report, opts: &HtmlOptions, templates: Option<&TemplateSet>) -> Value {
    let path = |id: u32| escape_path_string(&report.files[id as usize].path);
    let size = |id: u32| report.size(id);
    let copies = |id: u32| -> &[u32] {
        match report.set_of.get(&id) {
            Some(&s) => &report.identical[s].files[1..],
            None => &[],
        }
    };
    let identical: Vec<Value> = report
        .identical
        .iter()
        .map(|s| {
            json!({
                "id": s.id,
                "size": s.size,
                "overhead": s.overhead(),
                "files": s.files.iter().map(|&f| path(f)).collect::<Vec<_>>(),
            })
        })
        .collect();

    let chunker = chunker_of(report);
    let mut vfiles: Vec<Value> = Vec::new();
    let mut cache: HashMap<u32, ViewFile> = HashMap::new();
    let mut views: Vec<Value> = Vec::new();
    let mut clusters = Vec::with_capacity(report.clusters.len());
    for c in &report.clusters {
        let index: HashMap<u32, usize> = c.files.iter().enumerate().map(|(i, &f)| (f, i)).collect();
        // Per file: the best percentage of it found in one of its links.
        let mut best = vec![0f64; c.files.len()];
        // A large cluster shows each file's closest relatives, not all its
        // links (as the text report): the page stays O(files).
        let shown = (c.files.len() > report.config.review_files).then(|| closest(report, c));
        let mut links = Vec::new();
        for l in &c.links {
            let (sa, sb) = (size(l.a), size(l.b));
            let (pa, pb) = (percent(l.common, sa), percent(l.common, sb));
            let (ia, ib) = (index[&l.a], index[&l.b]);
            best[ia] = best[ia].max(pa);
            best[ib] = best[ib].max(pb);
            if shown.as_ref().is_some_and(|s| !s.contains(&(l.a, l.b))) {
                continue;
            }
            let mut view = Value::from(-1);
            if let Ok(ch) = &chunker {
                if views.len() < opts.max_views {
                    for id in [l.a, l.b] {
                        cache.entry(id).or_insert_with(|| {
                            let (pieces, v) = view_file(report, id, ch, opts);
                            vfiles.push(v);
                            ViewFile {
                                pieces,
                                index: vfiles.len() - 1,
                            }
                        });
                    }
                    let (fa, fb) = (&cache[&l.a], &cache[&l.b]);
                    let na = vfiles[fa.index]["lens"].as_array().map_or(0, |x| x.len());
                    let nb = vfiles[fb.index]["lens"].as_array().map_or(0, |x| x.len());
                    let ha: HashSet<u128> = fa.pieces.iter().map(|p| p.0).collect();
                    let hb: HashSet<u128> = fb.pieces.iter().map(|p| p.0).collect();
                    let fl_a = chunk_flags(&fa.pieces, &hb, templates, na);
                    let fl_b = chunk_flags(&fb.pieces, &ha, templates, nb);
                    views.push(json!({
                        "a": fa.index,
                        "b": fb.index,
                        "flags_a": fl_a.flags,
                        "flags_b": fl_b.flags,
                        "shared_a": fl_a.shared,
                        "shared_b": fl_b.shared,
                        "template_a": fl_a.template,
                        "template_b": fl_b.template,
                    }));
                    view = Value::from(views.len() - 1);
                }
            }
            links.push(json!([
                ia,
                ib,
                l.common,
                l.shared_chunks,
                r1(pa),
                r1(pb),
                r1(symmetric(l.common, sa, sb)),
                view
            ]));
        }
        let files: Vec<Value> = c
            .files
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                json!([
                    path(f),
                    size(f),
                    report.files[f as usize].ftype.as_str(),
                    r1(best[i]),
                    copies(f).iter().map(|&x| path(x)).collect::<Vec<_>>()
                ])
            })
            .collect();
        clusters.push(json!({
            "id": c.id,
            "type": c.kind,
            "total": c.total_size,
            "avg": r1(c.avg_similarity),
            "files": files,
            "links": links,
            "link_count": c.link_count,
            "links_note": shown.map(|_| format!(
                "{} links; the {} closest of each file shown; all in report.tsv and report.json (fsim-report --format tsv|json).",
                c.link_count,
                crate::report::model::CLOSEST
            )),
            "template": c.template.as_ref().map(|t| t.command.clone()),
            "template_bytes": c.template.as_ref().map(|t| t.bytes),
        }));
    }
    let total_links: usize = report.clusters.iter().map(|c| c.links.len()).sum();
    let mut views_note = match &chunker {
        Err(why) => format!("No side-by-side views: {why}."),
        Ok(_) if views.len() < total_links => format!(
            "Side-by-side views for the first {} links (largest clusters first; --html-max-views), at most {} KiB of text per file.",
            views.len(),
            opts.text_cap >> 10
        ),
        Ok(_) => format!(
            "Side-by-side views for every link, at most {} KiB of text per file.",
            opts.text_cap >> 10
        ),
    };
    let templates_known = templates.is_some_and(|t| !t.is_empty());
    match report.templates() {
        Some((n, _)) if templates_known => views_note.push_str(&format!(
            " The analysis ignored {n} template chunks (--templates): the views mark them apart from the shared chunks."
        )),
        Some((n, _)) if !views.is_empty() => views_note.push_str(&format!(
            " The analysis ignored {n} template chunks, but fsim-report was not given them (--templates FILE): in the views they show as shared chunks."
        )),
        _ => {}
    }
    let template_info = match (report.templates(), templates_known) {
        (Some((n, digest)), true) => json!({"chunks": n, "digest": digest}),
        _ => Value::Null,
    };
    let params: serde_json::Map<String, Value> = report
        .params
        .0
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    json!({
        "fsim_report": 1,
        "params": params,
        "summary": report.summary(),
        "pruned_note": report.pruned_note(),
        "identical": identical,
        "clusters": clusters,
        "views": views,
        "vfiles": vfiles,
        "views_note": views_note,
        "templates": template_info,
    })
}

/// A relative of a file: (u64::MAX less its similarity's bits, so that
/// smaller is closer; the other file; the link).
type Relative = (u64, u32, (u32, u32));

/// The links of a cluster that are among the closest relatives of one of
/// their files (highest symmetric similarity, then smallest other id).
fn closest(report: &Report, c: &crate::report::model::Cluster) -> HashSet<(u32, u32)> {
    let mut top: HashMap<u32, Vec<Relative>> = HashMap::new();
    for l in &c.links {
        let sim = symmetric(l.common, report.size(l.a), report.size(l.b));
        for (me, other) in [(l.a, l.b), (l.b, l.a)] {
            let t = top.entry(me).or_default();
            // Sorted by (similarity descending, other id): similarities
            // are >= 0, their bits order them.
            let key = (u64::MAX - sim.to_bits(), other, (l.a, l.b));
            let at = t.partition_point(|x| (x.0, x.1) < (key.0, key.1));
            if at < crate::report::model::CLOSEST {
                t.insert(at, key);
                t.truncate(crate::report::model::CLOSEST);
            }
        }
    }
    top.into_values().flatten().map(|x| x.2).collect()
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// The whole page.
pub fn render(
    report: &Report,
    opts: &HtmlOptions,
    templates: Option<&TemplateSet>,
) -> Result<String> {
    let data = serde_json::to_string(&data(report, opts, templates))
        .map_err(|e| crate::Error::msg(format!("html: {e}")))?;
    let data = escape_json_for_script(&data);
    let (head, tail) = PAGE
        .split_once(DATA_MARK)
        .expect("the page template has a data mark");
    let mut o = String::with_capacity(PAGE.len() + data.len());
    o.push_str(head);
    o.push_str(&data);
    o.push_str(tail);
    Ok(o)
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
