//! sif's post-processing filters in fsim-report: each filter on
//! hand-written pairs, applied without re-running anything.

use crate::common;

use common::*;
use fsim::formats::{FileEntry, FileType};
use std::collections::BTreeSet;

fn table(files: &[(u64, FileType, &str)]) -> Vec<u8> {
    let entries: Vec<FileEntry> = files
        .iter()
        .enumerate()
        .map(|(i, &(size, ftype, path))| FileEntry {
            id: i as u32,
            size,
            mtime_s: 1,
            mtime_ns: 0,
            content: 100 + i as u128,
            ftype,
            view: fsim::formats::FileView::raw(size),
            path: path.as_bytes().to_vec(),
        })
        .collect();
    file_table(&entries)
}

struct Fixture {
    _t: tempfile::TempDir,
    files: std::path::PathBuf,
    pairs: std::path::PathBuf,
}

fn fixture() -> Fixture {
    use FileType::*;
    let t = tempfile::tempdir().unwrap();
    let files = t.path().join("files.tsv");
    std::fs::write(
        &files,
        table(&[
            (1000, Text, "a/x.txt"),
            (1000, Text, "a/y.txt"),
            (1000, Text, "b/p.md"),
            (1000, Text, "b/q.txt"),
            (1000, Text, "c/r.txt"),
            (1000, Postscript, "c/s.ps.TXT"),
            (1000, Binary, "d/t.bin"),
            (1000, Text, "d/u.txt"),
            (1000, Text, "e/v.txt"),
            (5000, Text, "e/w.txt"),
        ]),
    )
    .unwrap();
    let p = t.path().join("pairs.tsv");
    std::fs::write(
        &p,
        pairs_file(&[
            (0, 1, 1000, 1000, 900),
            (2, 3, 1000, 1000, 900),
            (4, 5, 1000, 1000, 900),
            (6, 7, 1000, 1000, 900),
            (8, 9, 1000, 5000, 950),
        ]),
    )
    .unwrap();
    Fixture {
        _t: t,
        files,
        pairs: p,
    }
}

/// The links of the json report with these options, as (a id, b id).
fn links(f: &Fixture, args: &[&str]) -> BTreeSet<(u64, u64)> {
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "json", "--files"])
        .arg(&f.files)
        .args(args)
        .arg(&f.pairs);
    let v: serde_json::Value = serde_json::from_slice(&run_ok(c, None).stdout).unwrap();
    let mut out = BTreeSet::new();
    for c in v["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            out.insert((l["a_id"].as_u64().unwrap(), l["b_id"].as_u64().unwrap()));
        }
    }
    out
}

fn set(v: &[(u64, u64)]) -> BTreeSet<(u64, u64)> {
    v.iter().copied().collect()
}

#[test]
fn text_is_not_linked_to_binary_by_default() {
    let f = fixture();
    // (6, 7) is binary-text: dropped; postscript counts as text: (4, 5) kept.
    assert_eq!(links(&f, &[]), set(&[(0, 1), (2, 3), (4, 5), (8, 9)]));
    assert_eq!(
        links(&f, &["--link-types", "any"]),
        set(&[(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)])
    );
}

#[test]
fn max_size_ratio() {
    let f = fixture();
    assert_eq!(
        links(&f, &["--max-size-ratio", "3"]),
        set(&[(0, 1), (2, 3), (4, 5)])
    );
    assert_eq!(
        links(&f, &["--max-size-ratio", "5"]),
        set(&[(0, 1), (2, 3), (4, 5), (8, 9)])
    );
    let mut c = fsim("fsim-report");
    c.args(["--max-size-ratio", "0.5", "--files"])
        .arg(&f.files)
        .arg(&f.pairs);
    assert!(run_fail(c, None).contains("at least 1"));
}

#[test]
fn same_suffix() {
    let f = fixture();
    // b/p.md - b/q.txt differ; c/s.ps.TXT counts as txt (case-insensitive).
    assert_eq!(
        links(&f, &["--same-suffix"]),
        set(&[(0, 1), (4, 5), (8, 9)])
    );
}

#[test]
fn same_type() {
    let f = fixture();
    assert_eq!(
        links(&f, &["--same-type", "--link-types", "any"]),
        set(&[(0, 1), (2, 3), (8, 9)])
    );
}

#[test]
fn path_filters() {
    let f = fixture();
    assert_eq!(links(&f, &["--path-include", "e/*"]), set(&[(8, 9)]));
    assert_eq!(
        links(&f, &["--path-include", "*.txt"]),
        set(&[(0, 1), (8, 9)])
    );
    assert_eq!(
        links(&f, &["--path-include", "c/", "--path-include", "a/"]),
        set(&[(0, 1), (4, 5)])
    );
    assert_eq!(
        links(&f, &["--path-exclude", "a/", "--path-exclude", "*.md"]),
        set(&[(4, 5), (8, 9)])
    );
    // Filters are named in the report.
    let mut c = fsim("fsim-report");
    c.args(["-q", "--path-exclude", "a/", "--files"])
        .arg(&f.files)
        .arg(&f.pairs);
    let text = String::from_utf8(run_ok(c, None).stdout).unwrap();
    assert!(
        text.contains("filters: path-exclude=a/; 2 links dropped by them"),
        "{text}"
    );
}
