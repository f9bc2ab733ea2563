//! A cluster chained through a few files is marked: ten small files that
//! are mostly one licence header link 120 unrelated sources (each
//! carries the header, and nothing else in common), and the report says
//! which files hold the cluster together and what it is without them. A
//! cluster of genuinely alike files (sixty versions of one text) is not
//! marked, though each of its files is linked to most others.

use crate::common;

use common::site_repo::words;
use common::*;
use std::path::Path;

/// A licence header of ~900 bytes, as every source of a project carries.
fn header() -> String {
    (0..12u64)
        .map(|i| format!("/* {} */\n", words(7, i)))
        .collect()
}

/// 120 sources of ~3 KB (the header, then their own code) and ten
/// stubs (the header and one line): each stub is mostly the header.
fn chained_tree(repo: &Path) {
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let h = header();
    for s in 0..120u64 {
        let body: String = (0..40u64)
            .map(|i| format!("int f{s}_{i}(void) {{ /* {} */ }}\n", words(1000 + s, i)))
            .collect();
        std::fs::write(
            repo.join(format!("src/source{s:03}.c")),
            format!("{h}{body}"),
        )
        .unwrap();
    }
    for s in 0..10u64 {
        let line = format!("int stub{s}(void) {{ return {s}; }}\n");
        std::fs::write(repo.join(format!("src/stub{s}.c")), format!("{h}{line}")).unwrap();
    }
}

/// Sixty versions of one text of 60 lines, each with one line of its own.
fn versions_tree(repo: &Path) {
    std::fs::create_dir_all(repo.join("notes")).unwrap();
    for v in 0..60u64 {
        let text: String = (0..60u64)
            .map(|i| {
                let seed = if i == v { 5000 + v } else { 4000 };
                format!("{}\n", words(seed, i))
            })
            .collect();
        std::fs::write(repo.join(format!("notes/v{v:02}.txt")), text).unwrap();
    }
}

/// The json report's clusters as (file count, its `chained` mark).
fn clusters(work: &Path) -> Vec<(u64, serde_json::Value)> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("report.json")).unwrap()).unwrap();
    json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mark = c["review"]["chained"].clone();
            (c["file_count"].as_u64().unwrap(), mark)
        })
        .collect()
}

#[test]
fn a_cluster_held_together_by_a_header_is_marked_and_alike_files_are_not() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    chained_tree(&repo);
    versions_tree(&repo);
    let work = t.path().join("work");
    run_ok(
        make_report_cmd(&repo, &work, &["FORMATS=json txt html"]),
        None,
    );

    let found = clusters(&work);
    let chained = found.iter().find(|c| c.0 == 130).unwrap_or_else(|| {
        let text = std::fs::read_to_string(work.join("report.txt")).unwrap();
        panic!("no cluster of the 130 sources: {found:?}\n{text}")
    });
    let hubs: Vec<(String, u64)> = chained.1["hubs"]
        .as_array()
        .expect("the sources are marked chained")
        .iter()
        .map(|h| {
            let p = h["path"].as_str().unwrap();
            (
                p.rsplit('/').next().unwrap().to_string(),
                h["links"].as_u64().unwrap(),
            )
        })
        .collect();
    let names: Vec<&str> = hubs.iter().map(|h| h.0.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    let stubs: Vec<String> = (0..10).map(|s| format!("stub{s}.c")).collect();
    assert_eq!(sorted, stubs, "the stubs hold it together");
    assert!(
        hubs.iter().all(|h| h.1 == 129),
        "each stub is linked to all: {hubs:?}"
    );
    assert_eq!(
        chained.1["groups"], 120,
        "without them the sources share nothing"
    );
    assert_eq!(chained.1["largest_files"], 1);

    let versions = found.iter().find(|c| c.0 == 60).expect("the 60 versions");
    assert!(
        versions.1.is_null(),
        "alike files are no chain: {:?}",
        versions.1
    );

    let text = std::fs::read_to_string(work.join("report.txt")).unwrap();
    let marks: Vec<&str> = text.lines().filter(|l| l.contains("chained:")).collect();
    assert_eq!(marks.len(), 1, "{marks:?}");
    assert!(
        marks[0].contains("held together by 10 files") && marks[0].contains("120 groups"),
        "{}",
        marks[0]
    );
    let html = std::fs::read_to_string(work.join("report.html")).unwrap();
    assert!(
        html.contains(r#""chained":{"groups":120,"hubs":10,"largest":1"#),
        "the page marks it"
    );
}
