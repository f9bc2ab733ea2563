//! The folder pairs and families as the json and tsv reports write them.

use super::families::Family;
use super::{FolderPair, PairFiles};
use crate::formats::escape_path_string;
use crate::formats::files::CompactTable;

impl FolderPair {
    /// The pair in the json report's `folders` list, with its file lists
    /// (paths relative to its folders) when it has them.
    pub fn to_json(&self, table: &CompactTable) -> serde_json::Value {
        let mut j = self.json_without_children(table);
        j["children"] = self.children.iter().map(|c| c.to_json(table)).collect();
        j
    }

    /// [`FolderPair::to_json`] with `"children": []`: the json report
    /// writes the children one at a time in its place.
    pub fn json_without_children(&self, table: &CompactTable) -> serde_json::Value {
        let mut j = serde_json::json!({
            "a": escape_path_string(&self.a),
            "b": escape_path_string(&self.b),
            "percent": (self.percent() * 10.0).round() / 10.0,
            "files_a": self.files_a,
            "bytes_a": self.bytes_a,
            "files_b": self.files_b,
            "bytes_b": self.bytes_b,
            "a_in_b": self.a_in_b,
            "b_in_a": self.b_in_a,
            "same": self.same,
            "changed": self.changed,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "identical_trees": self.tree.is_some(),
            "family": self.family,
            "children": [],
            "children_left_out": self.children_left_out,
        });
        if let Some(f) = &self.files {
            j["files"] = self.files_json(f, table);
        }
        j
    }

    /// The json of its file lists (see [`PairFiles`]).
    fn files_json(&self, f: &PairFiles, table: &CompactTable) -> serde_json::Value {
        let rel = |id: u32, dir: &[u8]| {
            let p = table.path(id);
            escape_path_string(p.strip_prefix(dir).map_or(p, |r| &r[1..]))
        };
        let (a, b) = (&self.a[..], &self.b[..]);
        let more = |n: u64, listed: usize| n.saturating_sub(listed as u64);
        let only =
            |ids: &[u32], dir: &[u8]| -> Vec<String> { ids.iter().map(|&x| rel(x, dir)).collect() };
        serde_json::json!({
            "same": f.same.iter().map(|&(x, y)| [rel(x, a), rel(y, b)]).collect::<Vec<_>>(),
            "same_more": more(f.same_count, f.same.len()),
            "changed": f.changed.iter().map(|&(x, y, c)| serde_json::json!([
                rel(x, a),
                rel(y, b),
                c.map(|c| (crate::formats::percent(c.min(table.size(x)), table.size(x)) * 10.0).round() / 10.0),
            ])).collect::<Vec<_>>(),
            "changed_more": more(f.changed_count, f.changed.len()),
            "only_a": only(&f.only_a, a),
            "only_a_more": more(self.only_a, f.only_a.len()),
            "only_b": only(&f.only_b, b),
            "only_b_more": more(self.only_b, f.only_b.len()),
            "only_listed": f.only_listed,
        })
    }

    /// The pair as rows of the tsv report: its own, then its child pairs'
    /// depth first, each row's columns read as a link's (type `folders`,
    /// the bytes of A in B and of B in A as the percent of a and of b); a
    /// child pair's type is `folder-child-N` (N: its depth under the
    /// top pair, from 1), under the nearest row above it of depth N - 1.
    pub fn tsv(&self) -> String {
        self.with_children()
            .into_iter()
            .map(|(depth, p)| p.tsv_row(depth))
            .collect()
    }

    fn tsv_row(&self, depth: usize) -> String {
        let kind = match depth {
            0 => "folder-pair".to_string(),
            d => format!("folder-child-{d}"),
        };
        format!(
            "folders\t{kind}\t{}\t{}\t{:.1}\t{}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}\t{}\t\t\n",
            self.files_a + self.files_b,
            self.bytes_a + self.bytes_b,
            self.percent(),
            self.a_in_b + self.b_in_a,
            crate::formats::percent(self.a_in_b, self.bytes_a),
            crate::formats::percent(self.b_in_a, self.bytes_b),
            self.bytes_a,
            self.bytes_b,
            escape_path_string(&self.a),
            escape_path_string(&self.b),
            self.bytes_a.min(self.bytes_b),
        )
    }
}

impl Family {
    /// The family in the json report's `folder_families` list.
    pub fn to_json(&self) -> serde_json::Value {
        let round = |x: f64| (x * 10.0).round() / 10.0;
        serde_json::json!({
            "pattern": escape_path_string(&self.label),
            "first": self.first,
            "pairs": self.len,
            "folders": self.folders,
            "percent_min": round(self.percent_min),
            "percent_max": round(self.percent_max),
        })
    }
}
