//! Every stage ends with a one-line summary on stderr, and draws no
//! progress when stderr is not a terminal: run the whole
//! pipeline, fsim-template, fsim-merge, fsim-index and fsim-query on the
//! sample repository without -q, stderr piped. (tests/heavy/progress.rs runs
//! stages on a terminal.)

use crate::common;

use common::*;
use std::path::Path;

/// The stage's stderr: no progress drawing, last line its summary with a time.
fn check(stage: &str, stderr: &[u8]) {
    let s = String::from_utf8_lossy(stderr);
    assert!(
        !s.contains('\r') && !s.contains('\x1b'),
        "{stage}: progress drawn on a pipe: {s:?}"
    );
    let last = s.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("{stage}: ")),
        "{stage}: last line is not its summary: {s}"
    );
    // "... 0.12 s" somewhere: the time.
    let timed = last.split(' ').collect::<Vec<_>>().windows(2).any(|w| {
        w[1].starts_with('s')
            && w[0].contains('.')
            && w[0].trim_start_matches('(').parse::<f64>().is_ok()
    });
    assert!(timed, "{stage}: no time in its summary: {last}");
}

fn stage(name: &str, args: &[&str], dir: &Path) {
    let out = run(bin(name).to_str().unwrap(), args, dir, true);
    check(name, &out.stderr);
}

#[test]
fn every_stage_ends_with_a_summary_line() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let d = t.path();
    let repo = repo.to_str().unwrap();
    stage(
        "fsim-chunk",
        &["--files-out", "files.tsv", "-o", "chunks.tsv", repo],
        d,
    );
    stage("fsim-sort", &["-o", "sorted.tsv", "chunks.tsv"], d);
    stage("fsim-partition", &["-o", "partition.tsv", "sorted.tsv"], d);
    stage("fsim-binpack", &["-o", "bins.tsv", "partition.tsv"], d);
    stage("fsim-analyze", &["-o", "pairs.tsv", "bins.tsv"], d);
    stage("fsim-verify", &["-o", "verified.tsv", "pairs.tsv"], d);
    stage(
        "fsim-report",
        &["--format", "json", "-o", "report.json", "verified.tsv"],
        d,
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("report.json")).unwrap()).unwrap();
    let id = v["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["likely_template"] == true)
        .expect("the sample's web pages are a likely template")["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The report's command, run in the work folder as it says.
    stage("fsim-template", &["--cluster", &id], d);
    assert!(d.join("templates.tsv").exists());
    std::fs::create_dir_all(d.join("site")).unwrap();
    std::fs::copy(d.join("files.tsv"), d.join("site/files.tsv")).unwrap();
    std::fs::copy(d.join("chunks.tsv"), d.join("site/chunks.tsv")).unwrap();
    stage(
        "fsim-merge",
        &["--files-out", "m-files.tsv", "-o", "m-chunks.tsv", "a=site"],
        d,
    );
    // sif's query mode: build an index, then query it with a file.
    stage(
        "fsim-index",
        &["--index", "idx", "--files", "files.tsv", "sorted.tsv"],
        d,
    );
    let files = std::fs::read_to_string(d.join("files.tsv")).unwrap();
    let query = files
        .lines()
        .find(|l| !l.starts_with('#'))
        .and_then(|l| l.rsplit('\t').next())
        .unwrap();
    stage("fsim-query", &["--index", "idx", query], d);
}
