//! The HTML report in a real headless browser: tests/browser/report.mjs
//! drives Debian's /usr/bin/chromium through playwright-core (sort, filter,
//! expand, side-by-side view, hostile name as text, no dialog, no network;
//! then a report made with `--templates`, whose view marks the template
//! chunks apart from the shared ones) and saves screenshots in
//! `target/tmp/html_browser/`.
//!
//! A docx pair through `make report` (tests/browser/documents.mjs): its
//! side-by-side view shows both documents' text (`docx text`), not the
//! package's XML or zip bytes.
//!
//! A second run opens a report whose one cluster has 10,000 files
//! (tests/browser/big.mjs) and measures the page: load to interactive,
//! expanding the cluster, showing more files, filtering and sorting, each
//! under a generous bound (docs/measurements/2026-11-25-after-analysis.md has the
//! figures).
//!
//! Needs node, `tests/browser/node_modules/playwright-core` (`npm ci
//! --prefix tests/browser`) and /usr/bin/chromium; .ci/run installs them.
//! Without them the test prints a skip line and passes, except under CI
//! (`CI` set), where a missing piece is a failure.

use crate::common;
use crate::common::hostile_repo;
use crate::common::numbered_files;
use crate::common::template_repo;

use common::*;
use hostile_repo::{setup, HOSTILE};
use numbered_files::numbered_files;
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

/// The browser folder, or None (with a skip line) when the test cannot
/// run outside CI.
fn browser_dir(test: &str) -> Option<PathBuf> {
    let browser_dir = source_root().join("tests/browser");
    if let Some(why) = missing(&browser_dir) {
        if std::env::var_os("CI").is_some() {
            panic!("browser test cannot run under CI: {why}");
        }
        println!("SKIP {test}: {why}");
        return None;
    }
    Some(browser_dir)
}

/// Run a browser script; its standard output, printed. Fails the test when
/// the script fails.
fn node(script: &Path, args: &[&std::ffi::OsStr]) -> String {
    let mut c = Command::new("node");
    c.arg(script).args(args);
    let o = run_raw(c, None);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    println!("{stdout}");
    assert!(
        o.status.success(),
        "browser checks failed\n--- stdout\n{stdout}\n--- stderr\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

#[test]
fn html_report_in_headless_chromium() {
    let Some(browser_dir) = browser_dir("html_report_in_headless_chromium") else {
        return;
    };
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
    let hostile = std::ffi::OsStr::new(HOSTILE);
    node(
        &browser_dir.join("report.mjs"),
        &[
            html.as_os_str(),
            out.as_os_str(),
            hostile,
            templated_html.as_os_str(),
        ],
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

/// Files of the large cluster.
const BIG: u32 = 10_000;
/// Bound on each measured time (load, expand, more files, filter, sort).
const LIMIT_MS: u64 = 10_000;

#[test]
fn ten_thousand_file_cluster_in_headless_chromium() {
    let Some(browser_dir) = browser_dir("ten_thousand_file_cluster_in_headless_chromium") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let files = numbered_files(BIG, |id| 2000 + (id as u64 * 7919) % 1000);
    // Each file linked to its next 5: one cluster of 10,000 files and
    // about 50,000 links, tight groups of 10 inside looser chains.
    let mut pairs = Vec::new();
    for a in 0..BIG {
        for b in a + 1..(a + 6).min(BIG) {
            let (sa, sb) = (files[a as usize].size, files[b as usize].size);
            let tight = a / 10 == b / 10;
            let c = sa.min(sb) * if tight { 95 } else { 60 } / 100;
            pairs.push((a, b, sa, sb, c));
        }
    }
    std::fs::write(t.path().join("files.tsv"), file_table(&files)).unwrap();
    std::fs::write(t.path().join("pairs.tsv"), pairs_file(&pairs)).unwrap();
    let html = t.path().join("big.html");
    let mut c = fsim("fsim-report");
    c.current_dir(t.path())
        .args(["-q", "--format", "html", "--files", "files.tsv", "-o"])
        .arg(&html)
        .arg("pairs.tsv");
    run_ok(c, None);
    let size = std::fs::metadata(&html).unwrap().len();

    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_browser");
    std::fs::create_dir_all(&out).unwrap();
    let (big, limit) = (BIG.to_string(), LIMIT_MS.to_string());
    let stdout = node(
        &browser_dir.join("big.mjs"),
        &[
            html.as_os_str(),
            out.as_os_str(),
            big.as_ref(),
            limit.as_ref(),
        ],
    );
    let figures = stdout
        .lines()
        .find_map(|l| l.strip_prefix("figures "))
        .expect("figures line");
    let f: serde_json::Value = serde_json::from_str(figures).unwrap();
    for k in [
        "load_ms",
        "expand_ms",
        "more_files_ms",
        "filter_ms",
        "sort_ms",
    ] {
        let ms = f[k].as_u64().unwrap_or(u64::MAX);
        assert!(ms < LIMIT_MS, "{k}: {ms} ms");
    }
    eprintln!(
        "10,000-file cluster, {} links, page {:.1} MB: {figures}",
        pairs.len(),
        size as f64 / 1e6
    );
}

/// Two versions of a .docx through `make report`: the pair's side-by-side
/// view in the browser shows both documents' text (`docx text`, a sentence
/// of the letter), not the XML of the package nor the zip's bytes
/// (tests/browser/documents.mjs).
#[test]
fn docx_pair_side_by_side_shows_text_in_headless_chromium() {
    let Some(browser_dir) = browser_dir("docx_pair_side_by_side_shows_text_in_headless_chromium")
    else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let fixtures = source_root().join("tests/data/documents");
    for f in ["letter-v1.docx", "letter-v2.docx"] {
        std::fs::copy(fixtures.join(f), repo.join(f)).unwrap();
    }
    let work = t.path().join("work");
    run_ok(
        make_report_cmd(&repo, &work, &["QUIET=-q", "FORMATS=html"]),
        None,
    );
    // A sentence of the letter: its longest line of text, with no
    // character the page could show otherwise.
    let text = fsim::content::view(
        &std::fs::read(repo.join("letter-v1.docx")).unwrap(),
        &fsim::content::Limits::default(),
    );
    let text = String::from_utf8(text.bytes).unwrap();
    let sentence = text
        .lines()
        .filter(|l| {
            l.chars()
                .all(|c| c.is_ascii_alphanumeric() || " .,".contains(c))
        })
        .max_by_key(|l| l.len())
        .expect("a line of text");
    assert!(sentence.len() > 20, "{sentence}");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html_browser");
    std::fs::create_dir_all(&out).unwrap();
    node(
        &browser_dir.join("documents.mjs"),
        &[
            work.join("report.html").as_os_str(),
            out.as_os_str(),
            std::ffi::OsStr::new(sentence),
        ],
    );
}
