//! The report's floor of shared bytes (`MIN_BYTES`, default 32), through
//! `make report` on real files: a blank line or the page numbers of a
//! short text are no link, however large a share of a tiny file they are;
//! a real edit of a small file still is.

use crate::common;

use common::*;
use std::path::Path;

/// Ten unrelated text files with blank lines, a file holding one empty
/// line (a Python package's `dependency_links.txt`), a two-line page
/// number file, and a small script with its edited version.
fn tiny_tree(repo: &Path) {
    std::fs::create_dir_all(repo.join("pkg.egg-info")).unwrap();
    std::fs::write(repo.join("pkg.egg-info/dependency_links.txt"), "\n").unwrap();
    std::fs::write(repo.join("pages.txt"), "1\n2\n").unwrap();
    for i in 0..10 {
        let body: String = (0..30)
            .map(|l| match l % 5 {
                0 => "\n".to_string(),
                _ => format!("note {i} line {l}: {}\n", "x".repeat(10 + (i * 7 + l) % 23)),
            })
            .chain((1..=3).map(|n| format!("{n}\n")))
            .collect();
        std::fs::write(repo.join(format!("note{i}.txt")), body).unwrap();
    }
    let script = "#!/bin/sh\nset -e\n./configure --prefix=/usr\nmake -j4\nmake install\n";
    std::fs::write(repo.join("build.sh"), script).unwrap();
    std::fs::write(repo.join("build-old.sh"), script.replace("-j4", "-j2")).unwrap();
}

/// The links of the json report, as sorted `(path a, path b)` names.
fn links(work: &Path) -> Vec<(String, String)> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("report.json")).unwrap()).unwrap();
    let name = |p: &serde_json::Value| {
        let p = p.as_str().unwrap();
        p.rsplit('/').next().unwrap().to_string()
    };
    let mut out = Vec::new();
    for c in json["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            let (a, b) = (name(&l["a"]), name(&l["b"]));
            out.push(if a < b { (a, b) } else { (b, a) });
        }
    }
    out.sort();
    out
}

#[test]
fn a_blank_line_or_page_numbers_are_no_link_and_a_small_edit_is() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    tiny_tree(&repo);

    let work = t.path().join("work");
    run_ok(make_report_cmd(&repo, &work, &["FORMATS=json"]), None);
    let kept = links(&work);
    assert_eq!(
        kept,
        [("build-old.sh".to_string(), "build.sh".to_string())],
        "only the edited script is a link"
    );

    // The floor is what drops them: without it the blank line and the
    // page numbers are "inside" every note.
    let all = t.path().join("all");
    run_ok(
        make_report_cmd(&repo, &all, &["FORMATS=json", "MIN_BYTES=0"]),
        None,
    );
    let every = links(&all);
    let with = |n: &str| every.iter().filter(|(a, b)| a == n || b == n).count();
    assert_eq!(with("dependency_links.txt"), 10, "{every:?}");
    assert_eq!(with("pages.txt"), 10, "{every:?}");
}
