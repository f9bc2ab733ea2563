//! Defaults live in the binaries: the documented pipe, run
//! verbatim (its line is read from docs/usage.md), and `make report` with no variable
//! write byte-identical report.txt and report.json on a folder that needs
//! every recommended setting: translation catalogs of several locales and
//! releases (found by fsim-analyze's line source only), small files edited
//! every few lines, versions, near-duplicates, identical copies. The same
//! pipe with the binaries' defaults of before (no line source, fsim-verify
//! at 0 %) gives another report, so the test sees a default that drifts.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};

/// The pipe of docs/usage.md (*The stages*): the line that starts with
/// `fsim-chunk` and ends with `fsim-report`, its root (`~/docs`) to be
/// replaced.
fn readme_pipe() -> String {
    let readme = std::fs::read_to_string(source_root().join("docs/usage.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("fsim-chunk ") && l.trim_end().ends_with("| fsim-report"))
        .expect("docs/usage.md: the pipe `fsim-chunk ~/docs | ... | fsim-report`");
    assert!(
        line.contains(" ~/docs "),
        "docs/usage.md pipe's root: {line}"
    );
    line.trim_end().to_string()
}

/// The sample repository, catalogs of 5 locales in 2 releases, and two
/// small files edited every third line (no 100-byte chunk in common).
fn repo(dir: &Path) -> PathBuf {
    let (repo, _) = gen_repo(dir, &[]);
    let mut c = fsim("fsim-gen");
    c.args([
        "--catalogs",
        "5",
        "--catalog-releases",
        "2",
        "--catalog-size",
        "6000",
    ])
    .arg(repo.join("catalogs"));
    run_ok(c, None);
    let small = settings_text;
    std::fs::create_dir_all(repo.join("small")).unwrap();
    std::fs::write(repo.join("small/settings_a.py"), small(false)).unwrap();
    std::fs::write(repo.join("small/settings_b.py"), small(true)).unwrap();
    repo
}

/// The pipe of docs/usage.md on `repo` in `cwd`, with `edit` applied to the line;
/// writes report.txt and report.json there.
fn run_pipe(cwd: &Path, repo: &Path, edit: impl Fn(&str) -> String) {
    let line = edit(&readme_pipe()).replace("~/docs", &format!("'{}'", repo.display()));
    sh(cwd, &format!("{line} > report.txt"));
    sh(cwd, &format!("{line} --format json > report.json"));
}

fn read(p: &Path) -> String {
    String::from_utf8(crate::common::read_records(p)).unwrap()
}

/// The report's first line (clusters, files, identical sets).
fn summary(report: &Path) -> String {
    read(report).lines().next().unwrap_or_default().to_string()
}

#[test]
fn readme_pipe_and_make_report_write_the_same_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let pipe = tmp.path().join("pipe");
    run_pipe(&pipe, &repo, |l| l.to_string());
    let work = tmp.path().join("make");
    run_ok(make_report_cmd(&repo, &work, &[]), None);

    for f in ["report.txt", "report.json"] {
        let (a, b) = (read(&pipe.join(f)), read(&work.join(f)));
        assert!(
            a == b,
            "{f}: the docs/usage.md pipe's differs from make report's\n--- pipe ---\n{a}\n--- make ---\n{b}"
        );
    }
    // The file tables too (same walk, same paths).
    assert_eq!(read(&pipe.join("files.tsv")), read(&work.join("files.tsv")));

    // The folder needs the recommended settings: make's pairs hold pairs
    // only the line source found (no chunk evidence), and the report links
    // catalogs of two locales and the two small files.
    let line_only = read(&work.join("pairs.tsv"))
        .lines()
        .filter(|l| !l.starts_with('#') && l.ends_with("\t0\t0"))
        .count();
    assert!(line_only > 0, "no pair of the line source in make's pairs");
    let report = read(&work.join("report.txt"));
    assert!(report.contains("settings_b.py"), "{report}");
    assert!(
        report.matches("LC_MESSAGES/django.po").count() >= 4,
        "{report}"
    );

    // The binaries' defaults of before: no line source, every pair
    // verified: another report.
    let old = tmp.path().join("old-defaults");
    run_pipe(&old, &repo, |l| {
        l.replace("fsim-analyze", "fsim-analyze --no-line-source")
            .replace("fsim-verify", "fsim-verify --min-percent 0")
    });
    assert_ne!(read(&old.join("report.txt")), report);
    assert_ne!(
        read(&old.join("report.json")),
        read(&work.join("report.json"))
    );
    eprintln!(
        "make report:          {}\ndocs/usage.md pipe:   {}\npipe, old defaults:   {}",
        summary(&work.join("report.txt")),
        summary(&pipe.join("report.txt")),
        summary(&old.join("report.txt"))
    );
}
