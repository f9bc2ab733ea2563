//! fsim-report's HTML and xlsx formats on a generated repository with a
//! hostile file name: escaping of every path and piece of text (without a
//! browser), side-by-side views rebuilt from the files (shared chunks,
//! changed and unreadable files), and the workbook read back.

mod common;
#[path = "support/hostile_repo.rs"]
mod hostile_repo;

use common::*;
use hostile_repo::{setup, HOSTILE};
use std::path::{Path, PathBuf};

fn report(work: &Path, format: &str, out: &str, extra: &[&str]) -> PathBuf {
    let target = work.join(out);
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", format, "--files"])
        .arg(work.join("files.tsv"))
        .args(extra)
        .arg("-o")
        .arg(&target)
        .arg(work.join("pairs.tsv"));
    run_ok(c, None);
    target
}

/// The JSON data block of the page, parsed.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"fsim-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).expect("data block is JSON")
}

#[test]
fn html_escapes_every_path_and_text() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let html = std::fs::read_to_string(report(&work, "html", "report.html", &[])).unwrap();
    // Neither the name nor the file's text appears as markup anywhere.
    assert!(!html.contains("<img"), "raw <img in the page");
    assert!(!html.contains("alert('text')</script>"));
    assert_eq!(
        html.matches("<script").count(),
        2,
        "only the page's two script tags"
    );
    // No external resource, and every network request is forbidden.
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(html.contains("default-src 'none'"));
    // The data parses back and holds the name as text.
    let d = page_data(&html);
    let c = d["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["files"].to_string().contains(HOSTILE))
        .expect("the hostile file is in a cluster");
    assert_eq!(c["type"], "pair");
    // Its link has a view; both files are shown, chunks shared and not.
    let v = &d["views"][c["links"][0][7].as_u64().expect("a view") as usize];
    let fa = &d["vfiles"][v["a"].as_u64().unwrap() as usize];
    let fb = &d["vfiles"][v["b"].as_u64().unwrap() as usize];
    assert_eq!(fa["status"], "ok");
    assert_eq!(fb["status"], "ok");
    let flags = format!("{}{}", v["flags_a"], v["flags_b"]);
    assert!(flags.contains('1') && flags.contains('0'), "{flags}");
    let text: String = fa["text"]
        .as_array()
        .unwrap()
        .iter()
        .chain(fb["text"].as_array().unwrap())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(text.contains("</script><script>alert('text')</script>"));
    assert!(text.contains("CHANGED LINE"));
}

#[test]
fn html_views_say_when_a_file_changed_or_is_gone() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let repo = t.path().join("repo");
    std::fs::write(repo.join("near-copy.txt"), "now something else\n").unwrap();
    std::fs::remove_file(repo.join(HOSTILE)).unwrap();
    let html = std::fs::read_to_string(report(&work, "html", "report.html", &[])).unwrap();
    let d = page_data(&html);
    let status = |name: &str| {
        d["vfiles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(name))
            .map(|f| (f["status"].clone(), f["note"].clone()))
            .unwrap()
    };
    let (s, note) = status("near-copy.txt");
    assert_eq!(s, "changed", "{note}");
    let (s, note) = status(HOSTILE);
    assert_eq!(s, "unreadable", "{note}");
    assert!(!html.contains("<img"));
}

#[test]
fn html_views_are_capped() {
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let html = report(
        &work,
        "html",
        "report.html",
        &["--html-max-views", "1", "--html-text-cap", "1K"],
    );
    let d = page_data(&std::fs::read_to_string(html).unwrap());
    assert_eq!(d["views"].as_array().unwrap().len(), 1);
    let f = &d["vfiles"][0];
    assert_eq!(f["truncated"], true);
    let shown: usize = f["text"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().len())
        .sum();
    assert!(shown <= 1024 + 4, "{shown}");
    assert!(d["views_note"].as_str().unwrap().contains("first 1 links"));
}

#[test]
fn xlsx_needs_an_output_file() {
    let t = tempfile::tempdir().unwrap();
    let mut c = fsim("fsim-report");
    c.args(["--format", "xlsx", "--files"])
        .arg(t.path().join("files.tsv"))
        .arg(t.path().join("pairs.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("-o FILE"), "{err}");
}
