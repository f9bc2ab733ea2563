//! A small repository made from one template, analysed once, its template
//! marked with fsim-template and analysed again with `--templates`: what
//! the HTML tests (tests/report/report_formats.rs, tests/heavy/html_browser.rs) need to
//! see template chunks beside shared ones in a side-by-side view.
#![allow(dead_code)]

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Deterministic text: `lines` lines of pseudo-random words.
pub fn text(seed: u64, lines: usize) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut s = String::new();
    for _ in 0..lines {
        let words = 6 + (x % 7) as usize;
        for w in 0..words {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 2 + (x % 8) as usize;
            for k in 0..len {
                s.push((b'a' + ((x >> (8 + 5 * k)) % 26) as u8) as char);
            }
            s.push(if w + 1 == words { '\n' } else { ' ' });
        }
    }
    s
}

/// Mark `cluster` of the report in `work` as a template with fsim-template,
/// into `out` (appended to it when `append`); its stderr.
pub fn mark(work: &Path, cluster: &str, out: &Path, append: bool) -> String {
    let mut c = fsim("fsim-template");
    c.args(["--cluster", cluster, "--report"])
        .arg(work.join("report.json"))
        .arg("--files")
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(out);
    if !append {
        c.arg("--replace");
    }
    c.arg(work.join("partition.tsv"));
    String::from_utf8(run_ok(c, None).stderr).unwrap()
}

/// The one cluster that is flagged as a likely template: its id and its
/// number of files.
pub fn flagged(report: &Value) -> (String, usize) {
    let f: Vec<&Value> = report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["likely_template"] == true)
        .collect();
    assert_eq!(f.len(), 1, "one likely template expected: {report:#}");
    let cmd = f[0]["template_command"].as_str().unwrap();
    assert_eq!(
        cmd,
        format!("fsim-template --cluster {}", f[0]["id"].as_str().unwrap())
    );
    (
        f[0]["id"].as_str().unwrap().to_string(),
        f[0]["file_count"].as_u64().unwrap() as usize,
    )
}

/// Files made from the template, `t/docNN.txt`.
pub const TEMPLATED: usize = 12;

/// A templated repository, analysed with its template marked.
pub struct Templated {
    pub repo: PathBuf,
    /// The first run's verified pairs (made without templates).
    pub before: PathBuf,
    /// The work folder of the second run (pairs made with the templates).
    pub work: PathBuf,
    pub templates: PathBuf,
    /// The template's text, at the start of every `t/` file.
    pub preamble: String,
    /// Paths of the one true near-duplicate pair.
    pub pair: (PathBuf, PathBuf),
}

/// [`TEMPLATED`] files `t/docNN.txt` = one preamble (~12 KB) + their own
/// payload (~3 KB), doc01 a near-duplicate of doc00 (one line added), and
/// 30 unrelated files so the preamble's chunks stay under partition's
/// degree limit (half the files). The first run finds one clique of the
/// templated files; its template is marked and the stages from
/// fsim-partition on run again with `--templates`, leaving the true pair.
pub fn setup(dir: &Path) -> Templated {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("t")).unwrap();
    std::fs::create_dir_all(repo.join("other")).unwrap();
    let preamble = text(1, 200);
    for i in 0..TEMPLATED {
        let mut payload = text(1000 + i as u64, 50);
        if i == 1 {
            payload = text(1000, 50);
            let mid = payload.len() / 2;
            let nl = mid + payload[mid..].find('\n').unwrap() + 1;
            payload.insert_str(nl, "an edited line in the copy\n");
        }
        std::fs::write(
            repo.join(format!("t/doc{i:02}.txt")),
            preamble.clone() + &payload,
        )
        .unwrap();
    }
    for i in 0..30u64 {
        std::fs::write(
            repo.join(format!("other/o{i:02}.txt")),
            text(50_000 + i, 15),
        )
        .unwrap();
    }
    let work = dir.join("work");
    let before = pipeline(&repo, &work, &[]);
    let (id, n) = flagged(&before);
    assert_eq!(n, TEMPLATED);
    let before_pairs = dir.join("verified-before.tsv");
    std::fs::copy(work.join("verified.tsv"), &before_pairs).unwrap();
    let templates = work.join("templates.tsv");
    mark(&work, &id, &templates, false);
    let tpl = ["--templates".to_string(), templates.display().to_string()];
    let after = rest_of_pipeline(&work, &tpl);
    let clusters = after["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "only the true pair is left: {after:#}");
    Templated {
        pair: (repo.join("t/doc00.txt"), repo.join("t/doc01.txt")),
        repo,
        before: before_pairs,
        work,
        templates,
        preamble,
    }
}

/// `fsim-report --format html` of the second run, with `extra` arguments
/// (e.g. `--templates FILE`), into `out`.
pub fn html_report(t: &Templated, extra: &[&str], out: &Path) {
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "html", "--files"])
        .arg(t.work.join("files.tsv"))
        .args(extra)
        .arg("-o")
        .arg(out)
        .arg(t.work.join("verified.tsv"));
    run_ok(c, None);
}
