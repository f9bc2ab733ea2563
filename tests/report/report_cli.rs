//! fsim-report on hand-written file tables and pairs: exact clusters,
//! identical sets, thresholds, and refusals of inputs that do not belong
//! together.

use crate::common;

use common::*;
use fsim::formats::{FileEntry, FileType};

fn file(id: u32, size: u64, content: u128, path: &[u8]) -> FileEntry {
    FileEntry {
        id,
        size,
        mtime_s: 1,
        mtime_ns: 0,
        content,
        ftype: FileType::Text,
        view: fsim::formats::FileView::raw(size),
        path: path.to_vec(),
    }
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let files = vec![
        file(0, 1000, 10, b"a/one.txt"),
        file(1, 1000, 11, b"a/two.txt"),
        file(2, 4000, 12, b"b/big.txt"),
        file(3, 1000, 10, b"copy/one.txt"),
        file(4, 500, 13, b"odd\tname\n<img src=x onerror=alert(1)>"),
        file(5, 0, 14, b"empty1"),
        file(6, 0, 14, b"empty2"),
        file(7, 3000, 15, b"x/lone.txt"),
    ];
    let f = t.path().join("files.tsv");
    std::fs::write(&f, file_table(&files)).unwrap();
    // 0-1: 80% pair; 0-2: 0 is 95% inside 2 (contains would need 0-2 alone);
    // 1-4: 30% of the smaller: below the default 50% report threshold.
    let p = t.path().join("pairs.tsv");
    std::fs::write(
        &p,
        pairs_file(&[
            (0, 1, 1000, 1000, 800),
            (0, 2, 1000, 4000, 950),
            (1, 4, 1000, 500, 150),
        ]),
    )
    .unwrap();
    (t, f, p)
}

#[test]
fn text_report_is_exact() {
    let (_t, f, p) = setup();
    let mut c = fsim("fsim-report");
    c.arg("-q").arg("--files").arg(&f).arg(&p);
    let out = run_ok(c, None);
    let text = String::from_utf8(out.stdout).unwrap();
    let expected = "\
fsim report: 1 clusters, 3 files, 5.9 KiB, 1.7 KiB reclaimable; 1 identical sets, 2 files, 1000 B overhead
8 files scanned; chunks: tttd avg 1000 bytes; links kept at >= 50% of the smaller file and >= 32 bytes in common (lower bounds from shared chunks)

Folders that are copies or versions of each other: 1 pairs (>= 50% of their bytes found in each other; the topmost of each tree, with the pairs inside it that are identical, closer or renamed indented under it)
  1. a  <->  copy  93.3%
    1.8 KiB of 2.0 KiB (2 files) found in the second, 1000 B of 1000 B (1 files) in the first; by relative path 1 files the same, 0 changed, 1 only in the first, 0 only in the second

A. Identical files: 1 sets
  set 0000000000  2 files x 1000 B = 1000 B overhead
    inside the folders a  <->  copy (folder pair 1, above)
    a/one.txt
    copy/one.txt

B. Clusters of similar files: 1 (most reclaimable bytes first)
reclaimable: over a cluster's files, the most bytes each shares with one larger file of the cluster
  cluster 000000000  group  3 files  5.9 KiB total  1.7 KiB reclaimable  2 links  avg 59.0% similar
";
    assert!(
        text.starts_with(expected.split("  cluster").next().unwrap()),
        "{text}"
    );
    assert!(
        // a/one.txt: 950 B in b/big.txt; a/two.txt: 800 B in a/one.txt.
        text.contains("group  3 files  5.9 KiB total  1.7 KiB reclaimable  2 links"),
        "{text}"
    );
    assert!(text.contains("   3.9 KiB  b/big.txt\n"), "{text}");
    assert!(
        text.contains("    1000 B  a/one.txt  (+1 identical copies)\n"),
        "{text}"
    );
    assert!(
        text.contains("link  80.0%  a/one.txt <-> a/two.txt: 800 B in common (80.0% / 80.0%)"),
        "{text}"
    );
    assert!(
        !text.contains("odd"),
        "30% link must be filtered at 50%: {text}"
    );
}

#[test]
fn threshold_is_post_processing() {
    let (_t, f, p) = setup();
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "json", "--min-percent", "25", "--files"])
        .arg(&f)
        .arg(&p);
    let out = run_ok(c, None);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cl = &v["clusters"][0];
    assert_eq!(cl["file_count"], 4);
    // The hostile name is escaped, never interpreted.
    let paths: Vec<&str> = cl["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"odd\\tname\\n<img src=x onerror=alert(1)>"),
        "{paths:?}"
    );
    assert_eq!(
        v["identical_sets"][0]["files"],
        serde_json::json!(["a/one.txt", "copy/one.txt"])
    );
    assert_eq!(
        v["summary"]["identical_sets"], 1,
        "empty files are not an identical set"
    );
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "json", "--min-percent", "90", "--files"])
        .arg(&f)
        .arg(&p);
    let v: serde_json::Value = serde_json::from_slice(&run_ok(c, None).stdout).unwrap();
    assert_eq!(v["clusters"][0]["type"], "contains");
    assert_eq!(v["clusters"][0]["links"][0]["percent_of_a"], 95.0);
    assert_eq!(v["clusters"][0]["links"][0]["percent_of_b"], 23.8);
}

#[test]
fn refuses_pairs_of_another_run() {
    let (t, f, _p) = setup();
    let bad = t.path().join("bad.tsv");
    std::fs::write(&bad, pairs_file(&[(0, 1, 1000, 999, 800)])).unwrap();
    let mut c = fsim("fsim-report");
    c.arg("--files")
        .arg(&f)
        .arg(&bad)
        .arg("-o")
        .arg(t.path().join("r.txt"));
    let err = run_fail(c, None);
    assert!(
        err.contains("bad.tsv:2: pair 0-1 does not match the file table"),
        "{err}"
    );
    assert!(!t.path().join("r.txt").exists());
    // Truncated: last line cut.
    let mut data = pairs_file(&[(0, 1, 1000, 1000, 800)]);
    data.truncate(data.len() - 5);
    std::fs::write(&bad, &data).unwrap();
    let mut c = fsim("fsim-report");
    c.arg("--files").arg(&f).arg(&bad);
    let err = run_fail(c, None);
    assert!(err.starts_with("fsim-report: "), "{err}");
    assert!(
        err.contains("bad.tsv:3: last line has no newline: the file is truncated"),
        "{err}"
    );
}
