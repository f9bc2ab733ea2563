//! What a plan could reclaim, through the real binaries: names of one
//! file (hard links) are one file, listed as such and never waste; a set's
//! overhead counts each file on disk once; byte-identical scanned PDFs
//! (no text) are an identical set, compared by their raw bytes; the walk's
//! counts (roots reached twice, work folders, files left out) are named in
//! every format.

use crate::common;

use calamine::Reader;
use common::*;
use fsim::io::walk::CACHEDIR_SIGNATURE;
use serde_json::Value;
use std::path::{Path, PathBuf};

const FORMATS: &str = "FORMATS=txt json tsv html xlsx";

/// `make report` in every format: the json document, and the text of the
/// txt, tsv and html reports.
fn report(repo: &Path, work: &Path, vars: &[&str]) -> (Value, [String; 3]) {
    let all = [&["QUIET=-q", FORMATS], vars].concat();
    run_ok(make_report_cmd(repo, work, &all), None);
    let json = serde_json::from_str(&read(work, "report.json")).unwrap();
    let texts = ["report.txt", "report.tsv", "report.html"].map(|f| read(work, f));
    (json, texts)
}

/// Every row of a sheet of the workbook, cells as strings.
fn sheet(work: &Path, name: &str) -> Vec<Vec<String>> {
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(work.join("report.xlsx")).unwrap();
    let range = wb.worksheet_range(name).unwrap();
    range
        .rows()
        .map(|r| r.iter().map(|c| c.to_string()).collect())
        .collect()
}

/// `n` lines of text of a file of its own (`seed`).
fn text(seed: usize, n: usize) -> String {
    (0..n)
        .map(|i| format!("line {i} of file {seed}: {}\n", i * 7919 % (1000 + seed)))
        .collect()
}

fn write(path: &Path, body: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

#[test]
fn a_file_and_two_hard_links_are_one_file_with_three_names() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    write(&repo.join("one/a.txt"), text(1, 400).as_bytes());
    std::fs::create_dir_all(repo.join("two")).unwrap();
    std::fs::hard_link(repo.join("one/a.txt"), repo.join("one/b.txt")).unwrap();
    std::fs::hard_link(repo.join("one/a.txt"), repo.join("two/c.txt")).unwrap();
    let size = std::fs::metadata(repo.join("one/a.txt")).unwrap().len();
    let work = t.path().join("work");
    let (j, [txt, tsv, html]) = report(&repo, &work, &[]);
    assert_eq!(j["summary"]["identical_sets"], 0, "{txt}");
    assert_eq!(j["summary"]["overhead_bytes"], 0);
    assert_eq!(j["summary"]["hard_link_files"], 1);
    assert_eq!(j["summary"]["hard_link_names"], 3);
    assert_eq!(
        j["summary"]["folder_pairs"], 0,
        "hard links pair no folders"
    );
    let h = &j["hard_links"][0];
    assert_eq!(h["size"], size);
    assert_eq!(h["names"].as_array().unwrap().len(), 3);
    assert!(txt.contains("A1. Hard links: 1 files with several names"));
    assert!(txt.contains("one file, 3 names"), "{txt}");
    assert!(txt.contains(", 0 B overhead"), "{txt}");
    let rows: Vec<&str> = tsv
        .lines()
        .filter(|l| l.starts_with("hard-links\t"))
        .collect();
    assert_eq!(rows.len(), 2, "{tsv}");
    assert!(rows.iter().all(|r| r.split('\t').nth(12) == Some("0")));
    assert!(
        html.contains("\"hard_links\":[{"),
        "the page's data lists them"
    );
    let names = sheet(&work, "A1 Hard links");
    assert_eq!(names.len(), 4, "a header and a row a name: {names:?}");
    assert!(names[1..].iter().all(|r| r[1] == "3"));
}

#[test]
fn a_hard_link_and_a_copy_waste_one_file() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    write(&repo.join("x.txt"), text(2, 400).as_bytes());
    std::fs::hard_link(repo.join("x.txt"), repo.join("y.txt")).unwrap();
    std::fs::copy(repo.join("x.txt"), repo.join("z.txt")).unwrap();
    // A version of x: x is in a cluster, its copies and names beside it.
    let version = text(2, 400).replace("line 7 of", "line seven of");
    write(&repo.join("x-v2.txt"), version.as_bytes());
    let size = std::fs::metadata(repo.join("x.txt")).unwrap().len();
    let (j, [txt, _, html]) = report(&repo, &t.path().join("work"), &[]);
    assert_eq!(j["summary"]["overhead_bytes"], size, "{txt}");
    assert_eq!(j["summary"]["hard_link_files"], 0);
    let set = &j["identical_sets"][0];
    assert_eq!(set["files"].as_array().unwrap().len(), 3);
    assert_eq!(set["files_on_disk"], 2);
    assert_eq!(set["overhead_bytes"], size);
    let name = &set["other_names"][0];
    assert!(name["path"].as_str().unwrap().ends_with("/y.txt"));
    assert!(name["name_of"].as_str().unwrap().ends_with("/x.txt"));
    assert!(txt.contains("y.txt  (another name of "), "{txt}");
    assert!(
        txt.contains("1 more name of one of them (hard link)"),
        "{txt}"
    );
    assert!(html.contains("y.txt  (another name of "));
    // In the cluster: z is a copy, y a name.
    let file = &j["clusters"][0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/x.txt"))
        .expect("x in the cluster")
        .clone();
    let ends = |v: &Value, name: &str| v[0].as_str().unwrap().ends_with(name);
    assert!(ends(&file["identical_copies"], "/z.txt"), "{file}");
    assert!(ends(&file["other_names"], "/y.txt"), "{file}");
    assert!(txt.contains("(+1 identical copies, +1 other names of them: hard links)"));
}

fn scan(name: &str) -> PathBuf {
    source_root().join("tests/data/documents").join(name)
}

#[test]
fn byte_identical_scans_are_one_set_compared_by_their_bytes() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    for name in ["scan.pdf", "copy/scan.pdf", "copy/again.pdf"] {
        write(
            &repo.join(name),
            &std::fs::read(scan("scan-a.pdf")).unwrap(),
        );
    }
    write(
        &repo.join("other.pdf"),
        &std::fs::read(scan("scan-b.pdf")).unwrap(),
    );
    let size = std::fs::metadata(scan("scan-a.pdf")).unwrap().len();
    let (j, [txt, _, _]) = report(&repo, &t.path().join("work"), &[]);
    assert_eq!(j["summary"]["identical_sets"], 1, "{txt}");
    let set = &j["identical_sets"][0];
    assert_eq!(set["size"], size);
    assert_eq!(set["overhead_bytes"], 2 * size);
    let files: Vec<&str> = set["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(files.iter().all(|f| !f.ends_with("other.pdf")));
    let notes = &j["unreadable_documents"];
    assert_eq!(notes["count"], 4, "each scan has its note: {notes}");
    for n in notes["listed"].as_array().unwrap() {
        assert_eq!(
            n["note"],
            "no text read as pdf (unreadable, or a scan or a document without text): raw bytes compared"
        );
    }
    assert!(txt.contains("documents compared by their raw bytes"));
}

#[test]
fn the_walk_counts_are_named_in_every_format() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    write(&repo.join("sub/a.txt"), text(3, 100).as_bytes());
    write(&repo.join("b.txt"), text(4, 100).as_bytes());
    write(&repo.join("debug.log"), text(5, 100).as_bytes());
    // A work folder of fsim inside the tree (its tag says so).
    let tag = format!("{CACHEDIR_SIGNATURE}\n# a work folder of fsim\n");
    write(&repo.join("old-work/CACHEDIR.TAG"), tag.as_bytes());
    write(&repo.join("old-work/files.tsv"), text(6, 100).as_bytes());
    // The tree and its sub-folder: sub/ is reached twice.
    let roots = PathBuf::from(format!("{} {}", repo.display(), repo.join("sub").display()));
    let work = t.path().join("work");
    let (j, [txt, tsv, html]) = report(&roots, &work, &["METHOD_OPTS=--exclude debug.log"]);
    let w = &j["walk"];
    assert_eq!(
        (&w["repeated"], &w["work_folders"], &w["excluded"]),
        (&1.into(), &1.into(), &1.into()),
        "{w}"
    );
    assert_eq!(w["excluded_by"], "--exclude=debug.log");
    let line = "1 folder or file reached twice was read once; 1 fsim work folder left out; 1 file or folder left out by --exclude=debug.log";
    assert_eq!(w["note"], line);
    assert!(txt.contains(&format!("walk: {line}\n")), "{txt}");
    assert!(
        tsv.contains(&format!(
            "note\twalk\t0\t0\t0.0\t0\t0.0\t0.0\t0\t0\t\t{line}\t0\t\t\n"
        )),
        "{tsv}"
    );
    assert!(html.contains(line));
    let summary = sheet(&work, "Summary");
    assert!(
        summary.iter().any(|r| r[0] == "walk" && r[1] == line),
        "{summary:?}"
    );
}
