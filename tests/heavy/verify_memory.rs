//! fsim-verify within `--memory` on translation catalogs: the
//! pairs of two locales of one catalog are the costly case (every other
//! line differs, thousands of shared runs per pair), and so are long
//! catalogs of short, repeated lines. Peak RSS from wait4's rusage of the
//! process must stay within the budget plus a constant, with and without
//! `--regions` (whose runs were held for a whole batch of 65,536 pairs:
//! 500 MB at `--memory 16M` before).
//!
//! A child's peak RSS counts the peak of the process that spawned it
//! (tests/common's `run_rss`), so each of these tests runs alone in a
//! process of its own (`own_process`), never beside tests that hold much
//! memory.

use crate::common;

use common::*;
use std::path::Path;

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
    pairs_of(&repo, &work, &["MIN_PERCENT=0"]);
    work
}

/// The pairs of `repo` as make finds them (`MIN_PERCENT=0`: every pair
/// the chunks or the lines find, for fsim-verify at `--min-percent 0`).
fn pairs_of(repo: &Path, work: &Path, vars: &[&str]) {
    let m = make_cmd(
        repo,
        work,
        &[&["QUIET=-q"], vars].concat(),
        work.join("pairs.tsv"),
    );
    run_ok(m, None);
}

fn verify(work: &Path, extra: &[&str]) -> (u64, String) {
    verify_with(work, BUDGET, extra)
}

fn verify_with(work: &Path, budget: &str, extra: &[&str]) -> (u64, String) {
    let mut c = fsim("fsim-verify");
    c.current_dir(work)
        .args(["-q", "--memory", budget, "--min-percent", "0", "-j", "2"])
        .args(["--files", "files.tsv", "-o", "verified.tsv"])
        .args(extra)
        .arg("pairs.tsv");
    let (ok, rss_kb) = run_rss(c, &work.join("stdout"));
    assert!(ok, "fsim-verify failed");
    (rss_kb / 1024, read(work, "verified.tsv"))
}

#[test]
fn verify_stays_within_its_memory_on_catalogs_of_many_locales() {
    if !own_process(
        module_path!(),
        "verify_stays_within_its_memory_on_catalogs_of_many_locales",
    ) {
        return;
    }
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

/// Catalog-like files of ~420 KB and 42,000 short lines (~10 bytes: many
/// tokens per byte, two of every three lines one of two repeated lines),
/// every pair of them, at -j2 with a small --memory: the token cache, the
/// workers' working memory (reserved in the same budget: the files, the
/// alignment's per-token arrays and its kept rows) and their kept buffers
/// stay within --memory plus 20 MB (program, file table, batch, I/O
/// buffers). Every pair is exact: Myers' cost guard gave up on them before
/// (the bit-parallel LCS costs ~78 ms a pair here).
#[test]
fn long_catalogs_of_short_lines_stay_within_memory() {
    if !own_process(
        module_path!(),
        "long_catalogs_of_short_lines_stay_within_memory",
    ) {
        return;
    }
    const FIXED_MB: u64 = 20;
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(repo.join("po")).unwrap();
    let mut x = 17u64;
    let mut next = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let base: Vec<String> = (0..14_000)
        .map(|i| format!("msgid \"message {i}\"\nmsgstr \"\"\n\n"))
        .collect();
    for k in 0..24 {
        let mut v = base[next(2000) as usize..].to_vec();
        for e in 0..20 {
            let at = next(v.len() as u64) as usize;
            v[at] = format!("msgid \"changed {k} {e}\"\nmsgstr \"x\"\n\n");
        }
        std::fs::write(repo.join(format!("po/cat{k:02}.po")), v.concat()).unwrap();
    }
    let work = t.path().join("work");
    pairs_of(&repo, &work, &["FLOOR=0", "MIN_PERCENT=0"]);
    let pairs = read(&work, "pairs.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    assert_eq!(pairs, 276, "every two files are candidates");
    let mut first = None;
    for mb in [16u64, 32] {
        let (rss, out) = verify_with(&work, &format!("{mb}M"), &[]);
        let exact = out.lines().filter(|l| l.ends_with("\texact")).count();
        assert_eq!(exact, 276, "every pair exact");
        assert_eq!(
            first.get_or_insert_with(|| out.clone()),
            &out,
            "the same figures"
        );
        assert!(
            rss <= mb + FIXED_MB,
            "--memory {mb}M: peak RSS {rss} MB over the budget + {FIXED_MB} MB"
        );
    }
}

/// fsim-verify holds the file table's entries of the files its pairs
/// name, not the whole table: on 100,000 small files whose pairs name a
/// few thousand, its peak with the pairs in a file (read first for their
/// ids) is under its peak with the same pairs on standard input (which
/// cannot be read twice: the whole table is held) by more than 100 bytes a
/// file of the table, and both write the same bytes: the ids renumbered into
/// the entries held are written back as the table's.
#[test]
fn verify_holds_only_the_files_its_pairs_name() {
    if !own_process(module_path!(), "verify_holds_only_the_files_its_pairs_name") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let mut g = fsim("fsim-gen");
    g.args(["--bulk", "100000", "--bulk-size", "40"]).arg(&repo);
    run_ok(g, None);
    let work = t.path().join("work");
    pairs_of(&repo, &work, &["MIN_PERCENT=0"]);
    let pairs = read(&work, "pairs.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    assert!((500..20_000).contains(&pairs), "{pairs} pairs");
    let run = |from_stdin: bool| {
        let mut c = fsim("fsim-verify");
        c.current_dir(&work)
            .args(["-q", "--min-percent", "0", "-j", "2"])
            .args(["--files", "files.tsv", "-o", "verified.tsv"]);
        if from_stdin {
            c.arg("-")
                .stdin(std::fs::File::open(work.join("pairs.tsv")).unwrap());
        } else {
            c.arg("pairs.tsv");
        }
        let (ok, kib) = run_rss(c, &work.join("stdout"));
        assert!(ok, "fsim-verify failed");
        (kib << 10, read(&work, "verified.tsv"))
    };
    let (named, out) = run(false);
    let (whole, again) = run(true);
    assert_eq!(out, again, "the same pairs and figures");
    let exact = out.lines().filter(|l| l.ends_with("\texact")).count();
    assert!(exact > 100, "{exact} exact pairs");
    // A whole entry is ~230 bytes (the entry, its path, the plan's
    // counters): at least 100 a file must be saved.
    assert!(
        named + 100 * 100_000 < whole,
        "peak {} MB with the pairs' files, {} MB with the whole table",
        named >> 20,
        whole >> 20
    );
}

/// Many small prose files, each in ~40 pairs, at a budget that holds a
/// fraction of them: the cache evicts and the workers read files again
/// all run long, with the output compressed as `make report` writes it.
/// The peak stays within `--memory` plus the file table (~3 MB here) and
/// the program: cached files shrunk in place left a hole each, and each
/// worker's malloc arena grew to the whole cache, so that fsim-verify
/// peaked at 105 MB at `--memory 32M` before (380 MB at 128M on 100,000
/// files), and its batch and compressor were outside the budget. A
/// budget three times larger gives the same figures.
#[test]
fn overlapping_files_read_again_stay_within_memory() {
    if !own_process(
        module_path!(),
        "overlapping_files_read_again_stay_within_memory",
    ) {
        return;
    }
    const FIXED_MB: u64 = 16;
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let mut g = fsim("fsim-gen");
    g.args(["--overlap", "20000"]).arg(&repo);
    run_ok(g, None);
    let work = t.path().join("work");
    pairs_of(&repo, &work, &[]);
    let table_mb = std::fs::metadata(work.join("files.tsv")).unwrap().len() >> 20;
    let mut first = None;
    for mb in [32u64, 96] {
        let mut c = fsim("fsim-verify");
        c.current_dir(&work)
            .args(["-q", "--memory", &format!("{mb}M"), "-j", "2", "--compress"])
            .args(["--files", "files.tsv", "-o", "verified.tsv", "pairs.tsv"]);
        let (ok, kib) = run_rss(c, &work.join("stdout"));
        assert!(ok, "fsim-verify failed");
        let out = std::fs::read(work.join("verified.tsv")).unwrap();
        assert_eq!(
            first.get_or_insert_with(|| out.clone()),
            &out,
            "the same bytes"
        );
        let rss = kib >> 10;
        assert!(
            rss <= mb + table_mb + FIXED_MB,
            "--memory {mb}M: peak RSS {rss} MB over the budget + the table ({table_mb} MB) + {FIXED_MB} MB"
        );
    }
    let out = zstd::decode_all(&first.unwrap()[..]).unwrap();
    let pairs = String::from_utf8(out)
        .unwrap()
        .lines()
        .filter(|l| l.ends_with("\texact"))
        .count();
    assert!(pairs > 100_000, "{pairs} exact pairs: the cache must churn");
}
