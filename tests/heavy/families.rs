//! Version families and small folders: a folder where most files
//! are versions of one document must report them as one cluster, whatever
//! the number of files, through `make report` and through docs/usage.md's
//! pipe; the degree limit still drops a header found in every file of a
//! large repository, within its memory budget.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A deterministic line of text, unique for `(seed, i)`.
fn line(seed: u64, i: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let words = [
        "report", "customer", "printer", "driver", "update", "network", "cable", "firmware",
        "replace", "restart", "install", "manual", "error", "status", "toner", "tray",
    ];
    let mut s = format!("{i:04} ");
    for _ in 0..9 {
        x ^= x >> 31;
        x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
        s.push_str(words[(x >> 60) as usize]);
        s.push(' ');
    }
    s.push_str(&format!("{:x}\n", x >> 40));
    s
}

/// A family: `n` versions of one 150-line document, version v replacing 3
/// lines of the base with lines of its own; plus 3 unrelated files. Returns
/// the repository and, per version, its file name and edited positions.
/// Versions of a family: file name and the base lines it replaced.
type Versions = Vec<(String, Vec<usize>)>;

fn family(dir: &Path, n: usize) -> (PathBuf, Versions, Vec<String>) {
    let repo = dir.join("folder");
    std::fs::create_dir_all(&repo).unwrap();
    let base: Vec<String> = (0..150).map(|i| line(1, i)).collect();
    let mut versions = Vec::new();
    for v in 0..n {
        let edited: Vec<usize> = (0..3).map(|k| (v * 37 + k * 53 + 11) % 150).collect();
        let mut text = String::new();
        for (i, l) in base.iter().enumerate() {
            if edited.contains(&i) {
                text.push_str(&line(1000 + v as u64, i as u64));
            } else {
                text.push_str(l);
            }
        }
        let name = format!("draft-{v:02}.txt");
        std::fs::write(repo.join(&name), text).unwrap();
        versions.push((name, edited));
    }
    for u in 0..3u64 {
        let text: String = (0..80).map(|i| line(50 + u, i)).collect();
        std::fs::write(repo.join(format!("other-{u}.txt")), text).unwrap();
    }
    (repo, versions, base)
}

/// Bytes in common of two versions: the base lines neither edited (the
/// replacement lines are unique, so this is the line LCS).
fn expected_common(base: &[String], a: &[usize], b: &[usize]) -> u64 {
    base.iter()
        .enumerate()
        .filter(|(i, _)| !a.contains(i) && !b.contains(i))
        .map(|(_, l)| l.len() as u64)
        .sum()
}

/// The last component of a path in the JSON report.
fn base_name(v: &serde_json::Value) -> String {
    v.as_str().unwrap().rsplit('/').next().unwrap().to_string()
}

/// The report shows one cluster holding every version, every link with the
/// exact bytes in common, and no pruning.
fn check_one_cluster(
    report: &serde_json::Value,
    versions: &[(String, Vec<usize>)],
    base: &[String],
) {
    let clusters = report["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "one cluster expected: {report:#}");
    let c = &clusters[0];
    let mut files: Vec<String> = c["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let p = f["path"].as_str().unwrap();
            p.rsplit('/').next().unwrap().to_string()
        })
        .collect();
    files.sort();
    let names: Vec<String> = versions.iter().map(|v| v.0.clone()).collect();
    assert_eq!(files, names);
    let n = versions.len();
    let links = c["links"].as_array().unwrap();
    assert_eq!(links.len(), n * (n - 1) / 2);
    for l in links {
        let name = |k: &str| base_name(&l[k]);
        let va = versions.iter().find(|v| v.0 == name("a")).unwrap();
        let vb = versions.iter().find(|v| v.0 == name("b")).unwrap();
        assert_eq!(
            l["bytes_in_common"].as_u64().unwrap(),
            expected_common(base, &va.1, &vb.1),
            "{l}"
        );
        assert_eq!(l["exact"], true);
    }
    assert_eq!(report["summary"]["pruned_chunks"], 0);
    // A family of versions is not a template.
    assert_eq!(c["likely_template"], false);
}

fn make_report(repo: &Path, work: &Path) -> serde_json::Value {
    let mut c = Command::new("make");
    c.current_dir(source_root())
        // KEEP=1: a test reads the partition's trailer.
        .args([
            "--no-print-directory",
            "-s",
            "report",
            "FORMATS=json",
            "KEEP=1",
        ])
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={}", repo.display()))
        .arg(format!("WORK={}", work.display()));
    run_ok(c, None);
    serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap()
}

/// The pipe of docs/usage.md, run in `dir` (the file table goes to `dir/files.tsv`).
fn readme_pipe(repo: &Path, dir: &Path) -> serde_json::Value {
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("sh");
    c.current_dir(dir).env("PATH", path).arg("-c").arg(format!(
        "fsim-chunk -q '{}' | fsim-sort -q | fsim-partition -q | fsim-binpack -q | fsim-analyze -q | fsim-verify -q | fsim-report -q --format json",
        repo.display()
    ));
    let out = run_ok(c, None);
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn folders_of_versions_are_one_cluster() {
    for n in [2, 3, 10, 40] {
        let t = tempfile::tempdir().unwrap();
        let (repo, versions, base) = family(t.path(), n);
        let r = make_report(&repo, &t.path().join("work"));
        check_one_cluster(&r, &versions, &base);
        let pipe = t.path().join("pipe");
        std::fs::create_dir_all(&pipe).unwrap();
        let r = readme_pipe(&repo, &pipe);
        check_one_cluster(&r, &versions, &base);
    }
}

/// A chain of versions, each edited from the one before in 25 of its 400
/// lines: neighbours share ~94%, versions far apart ~60%, and the links
/// kept (over half of the smaller file) make a clique uniform enough that
/// only each file's closest relative tells it from a template. It must not
/// be flagged: marking its chunks as a template would hide the versions
/// from each other.
#[test]
fn a_chain_of_edited_versions_is_not_a_likely_template() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("chain");
    std::fs::create_dir_all(&repo).unwrap();
    let mut doc: Vec<String> = (0..400).map(|i| line(3, i)).collect();
    let mut x = 12345u64;
    for v in 0..10u64 {
        std::fs::write(repo.join(format!("doc-v{v:02}.txt")), doc.concat()).unwrap();
        for k in 0..25u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (x >> 33) as usize % doc.len();
            doc[i] = line(1000 + v, k);
        }
    }
    let r = make_report(&repo, &t.path().join("work"));
    let clusters = r["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{r:#}");
    let c = &clusters[0];
    assert_eq!(c["file_count"], 10);
    let links = c["links"].as_array().unwrap().len();
    assert!(
        links * 10 >= 45 * 9,
        "{links} links: not dense enough to test"
    );
    assert_eq!(c["likely_template"], false, "{c:#}");
}

#[test]
fn two_copies_through_the_pipe() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("two");
    std::fs::create_dir_all(&repo).unwrap();
    let a: String = (0..100).map(|i| line(7, i)).collect();
    let mut b = a.clone();
    b.push_str(&line(8, 0));
    std::fs::write(repo.join("a.py"), &a).unwrap();
    std::fs::write(repo.join("c.py"), &b).unwrap();
    let r = readme_pipe(&repo, t.path());
    let c = &r["clusters"].as_array().unwrap()[0];
    assert_eq!(c["links"][0]["bytes_in_common"], a.len() as u64);
}

/// One line of licence text in every file of a small repository: the chunk
/// is kept (the repository is under twice the degree floor), everything
/// partitions into one component, and the report still shows exactly the
/// planted pairs, not the licence.
#[test]
fn licence_line_in_every_file_still_finds_true_pairs() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("lic");
    std::fs::create_dir_all(&repo).unwrap();
    // Five lines (~450 bytes): several content-defined chunks of their own.
    let licence = "# SPDX-License-Identifier: MIT OR Apache-2.0\n# Copyright (c) 2026 The Example Authors. All rights reserved.\n# Licensed under the Apache License, Version 2.0 or the MIT license,\n# at your option. This file may not be copied, modified, or distributed\n# except according to those terms. See the LICENSE files for details.\n";
    let body = |seed: u64| -> String { (0..80).map(|i| line(seed, i)).collect() };
    for f in 0..30u64 {
        let mut text = String::from(licence);
        text.push_str(&body(100 + f));
        std::fs::write(repo.join(format!("f{f:02}.txt")), text).unwrap();
    }
    // Three true pairs: a copy of f00, f01, f02 with one line appended.
    for f in 0..3u64 {
        let mut text = String::from(licence);
        text.push_str(&body(100 + f));
        text.push_str(&line(9, f));
        std::fs::write(repo.join(format!("g{f:02}.txt")), text).unwrap();
    }
    let work = t.path().join("work");
    let r = make_report(&repo, &work);
    let mut pairs: Vec<(String, String)> = r["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let l = &c["links"][0];
            let n = |k: &str| base_name(&l[k]);
            assert_eq!(c["links"].as_array().unwrap().len(), 1);
            (n("a"), n("b"))
        })
        .collect();
    pairs.sort();
    let want: Vec<(String, String)> = (0..3)
        .map(|f| (format!("f{f:02}.txt"), format!("g{f:02}.txt")))
        .collect();
    assert_eq!(pairs, want);
    // The licence chunk was kept: one component holds every file.
    let part = String::from_utf8(read_records(&work.join("partition.tsv"))).unwrap();
    assert!(
        part.contains("\tfiles=33\tcomponents=1\tdropped_chunks=0"),
        "{}",
        part.lines().last().unwrap()
    );
}

/// The paper's case: a header in every one of 100,000 files. It is still
/// dropped (100,000 > half the files), fsim-partition stays within its
/// memory (5 bytes per file, well under 64 MB here), and the report says
/// what was ignored.
#[test]
fn header_in_all_of_100000_files_is_dropped_within_budget() {
    if !own_process(
        module_path!(),
        "header_in_all_of_100000_files_is_dropped_within_budget",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("big");
    let header = "Copyright (c) 2026 Example Corp. Confidential: do not distribute outside\nthe support organisation. This document is provided as is, without any\nwarranty of any kind, express or implied, including but not limited to\nthe warranties of merchantability and fitness for a particular purpose.\n";
    for d in 0..100 {
        let sub = repo.join(format!("d{d:02}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..1000u64 {
            let id = d * 1000 + f;
            let mut text = String::from(header);
            text.push_str(&line(id, 0));
            std::fs::write(sub.join(format!("{f:03}.txt")), text).unwrap();
        }
    }
    let work = t.path().join("work");
    chunk_and_sort(&repo, &work, &[]);
    let files = work.join("files.tsv");
    let mut c = fsim("fsim-partition");
    c.arg("--files").arg(&files).arg(work.join("sorted.tsv"));
    let (ok, rss_kib) = run_rss(c, &work.join("partition.tsv"));
    assert!(ok);
    assert!(rss_kib < 64 * 1024, "fsim-partition peak RSS {rss_kib} KiB");
    let part = String::from_utf8(read_records(&work.join("partition.tsv"))).unwrap();
    let last = part.lines().last().unwrap();
    assert!(part.lines().next().unwrap().ends_with("\tlimit=50000"));
    assert!(last.contains("\tpruned_files=100000"), "{last}");
    let dropped = part.lines().find(|l| l.starts_with("#dropped\t")).unwrap();
    assert!(dropped.contains("\t100000\t"), "{dropped}");
}
