//! Incremental re-runs of fsim-verify (`make report PREVIOUS=<old work>`,
//! `fsim-verify --previous`): the pairs whose two files are unchanged take
//! their figures and regions from the earlier run, the others are verified;
//! the output is byte-identical to a run from scratch.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// `make report` with the test's binaries; extra `VAR=value` arguments.
fn make(repo: &Path, work: &Path, vars: &[&str]) -> String {
    let c = make_report_cmd(
        repo,
        work,
        &[&["AVG=200", "FLOOR=10", "FORMATS=txt json"], vars].concat(),
    );
    let out = run_raw(c, None);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "make failed:\n{err}");
    err
}

/// The fsim-verify summary line of some stderr output.
fn verify_summary(err: &str) -> &str {
    err.lines()
        .find(|l| l.starts_with("fsim-verify: ") && l.contains(" pairs read"))
        .unwrap_or_else(|| panic!("no fsim-verify summary in:\n{err}"))
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in std::fs::read_dir(dir).unwrap() {
        let p = d.unwrap().path();
        if p.is_dir() {
            v.extend(files_under(&p));
        } else {
            v.push(p);
        }
    }
    v.sort();
    v
}

#[test]
fn rerun_after_one_percent_changed_is_byte_identical() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let spec = fsim::corpus::Overlap {
        files: 300,
        body: 60_000,
        extract: 2_000,
        edits: 1,
        dirs: 4,
        seed: 5,
    };
    fsim::corpus::generate_overlap(&repo, &spec).unwrap();
    let old = t.path().join("old");
    let err = make(&repo, &old, &[]);
    let before = verify_summary(&err).to_string();
    // 1 %: two files edited, one deleted, one added.
    let all = files_under(&repo);
    for f in [&all[10], &all[150]] {
        let mut d = std::fs::read(f).unwrap();
        d.splice(0..0, b"a new first line\n".iter().copied());
        std::fs::write(f, d).unwrap();
    }
    std::fs::remove_file(&all[200]).unwrap();
    std::fs::copy(&all[20], repo.join("d000/a-copy.txt")).unwrap();
    let fresh = t.path().join("fresh");
    let err = make(&repo, &fresh, &[]);
    let scratch = verify_summary(&err).to_string();
    let inc = t.path().join("inc");
    let err = make(&repo, &inc, &[&format!("PREVIOUS={}", old.display())]);
    let again = verify_summary(&err).to_string();
    for n in ["verified.tsv", "regions.tsv", "report.txt", "report.json"] {
        assert!(
            std::fs::read(fresh.join(n)).unwrap() == std::fs::read(inc.join(n)).unwrap(),
            "{n} differs from a run from scratch"
        );
    }
    // The make run verifies at MIN_PERCENT, so the earlier verified.tsv
    // holds the pairs above it: nearly all of those are reused (no diff);
    // the candidates below it are bounded again (which reads their files).
    let field = |s: &str, suffix: &str| -> u64 {
        s.split(", ")
            .find_map(|f| f.strip_suffix(suffix))
            .unwrap_or_else(|| panic!("{s}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let reused = field(&again, " reused from the earlier run");
    let pairs: u64 = again.split(' ').nth(1).unwrap().parse().unwrap();
    let below: u64 = again
        .split('(')
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(pairs > 300, "{before}\n{scratch}");
    assert!(below > 0 && below < pairs, "{again}");
    assert!(reused * 10 > (pairs - below) * 9, "{again}");
    let stopped = |s: &str| field(s, " stopped early (an upper bound below the threshold)");
    assert_eq!(stopped(&again), stopped(&scratch), "{again}\n{scratch}");
    // verified.tsv holds only the pairs at >= MIN_PERCENT (50): a report
    // at 30 % would miss links, so it is refused and writes nothing.
    let mut c = fsim("fsim-report");
    c.arg("--files")
        .arg(fresh.join("files.tsv"))
        .args(["--min-percent", "30", "-o"])
        .arg(fresh.join("low.txt"))
        .arg(fresh.join("verified.tsv"));
    let e = run_fail(c, None);
    assert!(
        e.ends_with("verified.tsv:1: verified with --min-percent 50 of the smaller file, so the links under it are not here: --min-percent 30 of the smaller file needs fsim-verify --min-percent 30 --percent-of smaller (make MIN_PERCENT=30 verifies again)\n"),
        "{e}"
    );
    assert!(!fresh.join("low.txt").exists());
    // Earlier outputs that do not fit are refused, nothing written.
    let refused = |prev: &Path, prev_files: &Path| -> String {
        let mut c = fsim("fsim-verify");
        c.arg("--files")
            .arg(inc.join("files.tsv"))
            .arg("--previous")
            .arg(prev)
            .arg("--previous-files")
            .arg(prev_files)
            .arg("-o")
            .arg(t.path().join("x.tsv"))
            .arg(inc.join("pairs.tsv"));
        let e = run_fail(c, None);
        assert!(!t.path().join("x.tsv").exists());
        e
    };
    let e = refused(&old.join("verified.tsv"), &inc.join("files.tsv"));
    assert!(e.contains("is this run's file table"), "{e}");
    let e = refused(&old.join("pairs.tsv"), &old.join("files.tsv"));
    assert!(e.contains("--previous takes the verified pairs"), "{e}");
}
