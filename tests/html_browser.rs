//! The HTML report in a real headless browser: tests/browser/report.mjs
//! drives Debian's /usr/bin/chromium through playwright-core (sort, filter,
//! expand, side-by-side view, hostile name as text, no dialog, no network;
//! then a report made with `--templates`, whose view marks the template
//! chunks apart from the shared ones) and saves screenshots in
//! `target/tmp/html_browser/`.
//!
//! Needs node, `tests/browser/node_modules/playwright-core` (`npm ci
//! --prefix tests/browser`) and /usr/bin/chromium; .ci/run installs them.
//! Without them the test prints a skip line and passes, except under CI
//! (`CI` set), where a missing piece is a failure.

mod common;
#[path = "support/hostile_repo.rs"]
mod hostile_repo;
#[path = "support/template_repo.rs"]
mod template_repo;

use common::*;
use hostile_repo::{setup, HOSTILE};
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

/// What is missing to run the browser test, if anything.
fn missing(browser_dir: &Path) -> Option<String> {
    let node = Command::new("node").arg("--version").output();
    if !matches!(node, Ok(ref o) if o.status.success()) {
        return Some("node is not installed".into());
    }
    if !browser_dir.join("node_modules/playwright-core").is_dir() {
        return Some(format!(
            "playwright-core is not installed (npm ci --prefix {})",
            browser_dir.display()
        ));
    }
    if !Path::new(CHROMIUM).exists() {
        return Some(format!("{CHROMIUM} is missing (apt-get install chromium)"));
    }
    None
}

#[test]
fn html_report_in_headless_chromium() {
    let browser_dir = source_root().join("tests/browser");
    if let Some(why) = missing(&browser_dir) {
        if std::env::var_os("CI").is_some() {
            panic!("browser test cannot run under CI: {why}");
        }
        println!("SKIP html_report_in_headless_chromium: {why}");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let work = setup(t.path());
    let html = work.join("report.html");
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "html", "--files"])
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(&html)
        .arg(work.join("verified.tsv"));
    run_ok(c, None);
    let tt = tempfile::tempdir().unwrap();
    let templated = template_repo::setup(tt.path());
    let templated_html = tt.path().join("templated.html");
    let tpl = templated.templates.to_str().unwrap();
    template_repo::html_report(&templated, &["--templates", tpl], &templated_html);

    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_browser");
    std::fs::create_dir_all(&out).unwrap();
    let mut c = Command::new("node");
    c.arg(browser_dir.join("report.mjs"))
        .arg(&html)
        .arg(&out)
        .arg(HOSTILE)
        .arg(&templated_html);
    let o = run_raw(c, None);
    let stdout = String::from_utf8_lossy(&o.stdout);
    println!("{stdout}");
    assert!(
        o.status.success(),
        "browser checks failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for shot in [
        "report-clusters.png",
        "report-view.png",
        "report-template-view.png",
    ] {
        let p = out.join(shot);
        let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        assert!(len > 10_000, "screenshot {} missing or empty", p.display());
    }
    println!("screenshots in {}", out.display());
}
