//! fsim-verify within `--memory` on translation catalogs (issue 25): the
//! pairs of two locales of one catalog are the costly case (every other
//! line differs, thousands of shared runs per pair). Peak RSS from wait4's
//! rusage of the process must stay within the budget plus
//! [`BASE`], with and without `--regions` (whose runs were held for a
//! whole batch of 65,536 pairs: 500 MB at `--memory 16M` before).

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

/// What fsim-verify takes besides its cache budget on this input: the
/// binary, the file table, two workers' file, token and row buffers, a
/// batch of pairs (docs/formats.md, "verified pairs", says the constant in
/// general). Measured: 13.5 MB with and without regions; 60 MB with
/// regions before batches were cut by them.
const BASE_MB: u64 = 24;
const BUDGET: &str = "16M";
const BUDGET_MB: u64 = 16;

/// 40 locales × 2 releases of ~100 KB catalogs, and their candidate pairs
/// as make report finds them.
fn catalogs(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("repo");
    let mut g = fsim("fsim-gen");
    g.args(["--catalogs", "40", "--catalog-releases", "2"])
        .arg(&repo);
    run_ok(g, None);
    let work = dir.join("work");
    let mut m = Command::new("make");
    m.current_dir(source_root())
        .arg("--no-print-directory")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={}", repo.display()))
        .arg(format!("WORK={}", work.display()))
        .arg("QUIET=-q")
        .arg(work.join("pairs.tsv"));
    run_ok(m, None);
    work
}

fn verify(work: &Path, extra: &[&str]) -> (u64, String) {
    let mut c = fsim("fsim-verify");
    c.current_dir(work)
        .args(["-q", "--memory", BUDGET, "--min-percent", "0", "-j", "2"])
        .args(["--files", "files.tsv", "-o", "verified.tsv"])
        .args(extra)
        .arg("pairs.tsv");
    let (ok, rss_kb) = run_rss(c, &work.join("stdout"));
    assert!(ok, "fsim-verify failed");
    (rss_kb / 1024, read(work, "verified.tsv"))
}

#[test]
fn verify_stays_within_its_memory_on_catalogs_of_many_locales() {
    let t = tempfile::tempdir().unwrap();
    let work = catalogs(t.path());
    let pairs = read(&work, "pairs.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    assert_eq!(pairs, 80 * 79 / 2, "every two catalogs are candidates");
    let (plain, verified) = verify(&work, &[]);
    let exact = verified.lines().filter(|l| l.ends_with("\texact")).count();
    assert_eq!(exact, pairs, "every pair verified exactly");
    let (with_regions, again) = verify(&work, &["--regions", "regions.tsv"]);
    assert_eq!(verified, again, "regions change no figure");
    let regions = std::fs::metadata(work.join("regions.tsv")).unwrap().len();
    assert!(
        regions > 40 << 20,
        "the test needs more regions than the budget ({regions} bytes)"
    );
    for (what, mb) in [("without regions", plain), ("with regions", with_regions)] {
        assert!(
            mb <= BUDGET_MB + BASE_MB,
            "fsim-verify {what}: peak RSS {mb} MB over --memory {BUDGET} + {BASE_MB} MB"
        );
    }
}
