//! The collection-by-collection summary of fsim-report (paper section 4:
//! before merging collection X into Y, how much of X is already in Y?).
//!
//! For each ordered pair of collections (X, Y), X ≠ Y: the files of X that
//! have an identical file in Y (same content hash), those that have a
//! similar file in Y (a link of the report, after thresholds and filters,
//! to a file of Y or to an identical copy of one), and the bytes of those
//! files of X (their sizes on disk). A file with both counts once in the
//! union columns.

use crate::report::model::{human_bytes, Report};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashSet};

/// One row: files of `from` with a counterpart in `to`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overlap {
    pub from: usize,
    pub to: usize,
    pub identical_files: u64,
    pub identical_bytes: u64,
    pub similar_files: u64,
    pub similar_bytes: u64,
    /// Identical or similar.
    pub files: u64,
    pub bytes: u64,
}

impl Overlap {
    pub fn to_json(&self, r: &Report) -> Value {
        json!({
            "from": r.collections[self.from].name,
            "to": r.collections[self.to].name,
            "identical_files": self.identical_files,
            "identical_bytes": self.identical_bytes,
            "similar_files": self.similar_files,
            "similar_bytes": self.similar_bytes,
            "files": self.files,
            "bytes": self.bytes,
        })
    }
}

/// Add the (file, other collection) facts of one similar link (with the
/// identical copies of its files) to `similar`; nothing with fewer than two
/// collections.
pub fn add_similar(
    r: &Report,
    similar: &mut BTreeSet<(u32, usize)>,
    l: &crate::report::model::Pair,
) {
    if r.collections.len() < 2 {
        return;
    }
    let group = |id: u32| -> Vec<u32> {
        let mut v = vec![id];
        if let Some(&s) = r.set_of.get(&id) {
            v.extend_from_slice(&r.identical[s].files[1..]);
        }
        v
    };
    let (ga, gb) = (group(l.a), group(l.b));
    for &x in &ga {
        for &y in &gb {
            let (cx, cy) = (r.coll[x as usize], r.coll[y as usize]);
            if cx != cy {
                similar.insert((x, cy));
                similar.insert((y, cx));
            }
        }
    }
}

/// The rows for every ordered pair of collections, (from, to) order.
pub fn overlap(r: &Report) -> Vec<Overlap> {
    let k = r.collections.len();
    if k < 2 {
        return Vec::new();
    }
    // (file, other collection) facts.
    let mut ident: BTreeSet<(u32, usize)> = BTreeSet::new();
    // A file met in two collections (names of one file: fsim-merge) is in
    // both, as a copy would be.
    let groups = r.identical.iter().map(|s| &s.files);
    for files in groups.chain(r.hard_links.iter().map(|h| &h.files)) {
        let cols: HashSet<usize> = files.iter().map(|&f| r.coll[f as usize]).collect();
        for &f in files {
            for &c in &cols {
                if c != r.coll[f as usize] {
                    ident.insert((f, c));
                }
            }
        }
    }
    let similar = &r.similar_facts;
    let mut rows: Vec<Overlap> = Vec::with_capacity(k * (k - 1));
    for from in 0..k {
        for to in 0..k {
            if from != to {
                rows.push(Overlap {
                    from,
                    to,
                    ..Default::default()
                });
            }
        }
    }
    let slot = |from: usize, to: usize| from * (k - 1) + if to > from { to - 1 } else { to };
    let size = |f: u32| r.files.size(f);
    for &(f, to) in &ident {
        let o = &mut rows[slot(r.coll[f as usize], to)];
        o.identical_files += 1;
        o.identical_bytes += size(f);
    }
    for &(f, to) in similar {
        let o = &mut rows[slot(r.coll[f as usize], to)];
        o.similar_files += 1;
        o.similar_bytes += size(f);
    }
    for &(f, to) in ident.union(similar) {
        let o = &mut rows[slot(r.coll[f as usize], to)];
        o.files += 1;
        o.bytes += size(f);
    }
    rows
}

/// Section C of the text report.
pub fn text(r: &Report, o: &mut String, head: &str, reset: &str) {
    use std::fmt::Write;
    let _ = writeln!(o);
    let _ = writeln!(o, "{head}C. Collections: {}{reset}", r.collections.len());
    for c in &r.collections {
        let bytes = r.files.size_sum(c.first, c.files);
        let _ = writeln!(
            o,
            "  {:<16} {:>8} files  {:>10}",
            c.name,
            c.files,
            human_bytes(bytes)
        );
    }
    let rows = overlap(r);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "  files of X with an identical or similar file in Y (bytes of those files of X):"
    );
    let _ = writeln!(
        o,
        "  {:<16} {:<16} {:>9} {:>10}  {:>9} {:>10}  {:>9} {:>10}",
        "X", "Y", "identical", "bytes", "similar", "bytes", "either", "bytes"
    );
    for w in &rows {
        let _ = writeln!(
            o,
            "  {:<16} {:<16} {:>9} {:>10}  {:>9} {:>10}  {:>9} {:>10}",
            r.collections[w.from].name,
            r.collections[w.to].name,
            w.identical_files,
            human_bytes(w.identical_bytes),
            w.similar_files,
            human_bytes(w.similar_bytes),
            w.files,
            human_bytes(w.bytes)
        );
    }
}
