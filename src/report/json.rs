//! The json report: its top-level document, and the clusters, files and
//! links written value by value as serde_json's pretty printer writes them.

use super::model::{self, r1, Pair};
use super::{percent, symmetric, Report};
use crate::formats::escape_path_string;
use serde_json::{json, Value};

impl Report {
    /// [`Report::link_json`] as serde_json pretty-prints it, every line but
    /// the first indented by `indent` more spaces, appended to `out`: the
    /// same bytes, written without building the value and its text twice
    /// (links are most of a json report, and the value, its text and the
    /// indented copy would cost a good part of its time).
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

    /// The json document with marker strings for `clusters`, `folders`,
    /// `folder_families` and `identical_sets`: they are written apart, one
    /// value at a time (a million files may make 300,000 identical sets,
    /// 84 MB of json that held as one value took 600 MB).
    pub(crate) fn json_top(
        &self,
        marker: &str,
        folders: &str,
        families: &str,
        identical: &str,
    ) -> Value {
        let params: serde_json::Map<String, Value> = self
            .params
            .0
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let (documents, archives, unread) = self.notes_json();
        json!({
            "fsim_report": 1,
            "params": params,
            "summary": self.summary(),
            "folders": folders,
            "folder_families": families,
            "folders_best": self.folders.best,
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

    /// One identical set of the json document.
    pub(crate) fn identical_set_json(&self, s: &model::IdenticalSet) -> Value {
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

    /// The hubs a cluster is chained through ([`model::Hubs`]).
    fn hubs_json(&self, h: &model::Hubs) -> Value {
        json!({
            "note": format!(
                "held together by these files, each linked to at least 1/{} of the cluster: without their links, the other files are `groups` groups, the largest `largest_files` files",
                model::HUB_SHARE
            ),
            "hubs": h.files.iter().map(|&(f, links)| json!({
                "path": self.path(f),
                "links": links,
            })).collect::<Vec<_>>(),
            "groups": h.groups,
            "largest_files": h.largest,
        })
    }

    /// One cluster of the json document with `files` and `links` set to
    /// the values given.
    pub(crate) fn cluster_json(&self, c: &model::Cluster, files: Value, links: Value) -> Value {
        let review = c.review.as_ref().map(|r| {
            json!({
                "note": format!(
                    "more than {} files: sub-clusters by single linkage at each level (each file's sub_clusters gives its own, numbered by their largest file), and each file's {} closest relatives (files[].closest); links is empty: every link of the cluster is in the tsv report (fsim-report --format tsv; make: FORMATS=tsv)",
                    self.config.review_files,
                    model::CLOSEST
                ),
                "levels": model::REVIEW_LEVELS.iter().zip(&r.levels).map(|(l, (n, big))| json!({
                    "min_percent_symmetric": l,
                    "sub_clusters": n,
                    "largest_files": big,
                })).collect::<Vec<_>>(),
                "chained": r.hubs.as_ref().map(|h| self.hubs_json(h)),
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
}
