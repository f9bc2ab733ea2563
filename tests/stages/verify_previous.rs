//! Incremental re-runs of fsim-verify (`make report PREVIOUS=<old work>`,
//! `fsim-verify --previous`): the pairs whose two files are unchanged take
//! their figures and regions from the earlier run, the others are verified;
//! the output is byte-identical to a run from scratch.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};

/// `make report` with the test's binaries and the regions (REGIONS=1: their
/// reuse is tested too); extra `VAR=value` arguments.
fn make(repo: &Path, work: &Path, vars: &[&str]) -> String {
    let c = make_report_cmd(
        repo,
        work,
        &[
            &["AVG=200", "FLOOR=10", "FORMATS=txt json", "REGIONS=1"],
            vars,
        ]
        .concat(),
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

/// The first line of a work folder's pairs.tsv.
fn head(w: &Path) -> String {
    let t = String::from_utf8(crate::common::read_records(&w.join("pairs.tsv"))).unwrap();
    t.lines().next().unwrap().to_string()
}

/// The number before `suffix` in a summary line.
fn field(s: &str, suffix: &str) -> u64 {
    s.split(", ")
        .find_map(|f| f.strip_suffix(suffix))
        .unwrap_or_else(|| panic!("{s}"))
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The pairs read, from a summary line.
fn pairs_read(s: &str) -> u64 {
    s.split(' ').nth(1).unwrap().parse().unwrap()
}

/// The runs compared: the earlier one (`old`), then on the repository with
/// 1 % changed, one from scratch (`fresh`) and one with PREVIOUS=old
/// (`inc`), with their fsim-verify summaries.
struct Runs {
    t: PathBuf,
    repo: PathBuf,
    old: PathBuf,
    fresh: PathBuf,
    inc: PathBuf,
    before: String,
    scratch: String,
    again: String,
}

/// The overlap tree of these tests: 300 files of 60 KB bodies in 4
/// folders, extracts of 2 KB, one edit; `seed` picks the texts.
fn overlap(seed: u64) -> fsim_tools::corpus::Overlap {
    fsim_tools::corpus::Overlap {
        files: 300,
        body: 60_000,
        extract: 2_000,
        edits: 1,
        dirs: 4,
        seed,
    }
}

impl Runs {
    fn new(t: &Path) -> Runs {
        let repo = t.join("repo");
        let spec = overlap(5);
        fsim_tools::corpus::generate_overlap(&repo, &spec).unwrap();
        let old = t.join("old");
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
        let fresh = t.join("fresh");
        let err = make(&repo, &fresh, &[]);
        let scratch = verify_summary(&err).to_string();
        let inc = t.join("inc");
        let err = make(&repo, &inc, &[&format!("PREVIOUS={}", old.display())]);
        let again = verify_summary(&err).to_string();
        Runs {
            t: t.to_path_buf(),
            repo,
            old,
            fresh,
            inc,
            before,
            scratch,
            again,
        }
    }
}

#[test]
fn rerun_after_one_percent_changed_is_byte_identical() {
    let t = tempfile::tempdir().unwrap();
    let r = Runs::new(t.path());
    incremental_outputs_are_those_from_scratch(&r);
    delta_pairs_are_the_same_out_of_core(&r);
    summaries_count_the_delta_and_the_reused(&r);
    full_pairs_with_previous_are_the_same(&r);
    lower_threshold_analyses_every_file(&r);
    outputs_that_do_not_fit_are_refused(&r);
}

fn incremental_outputs_are_those_from_scratch(r: &Runs) {
    let (t, repo, old, fresh, inc) = (r.t.as_path(), &r.repo, &r.old, &r.fresh, &r.inc);
    for n in ["verified.tsv", "regions.tsv", "report.txt", "report.json"] {
        assert!(
            std::fs::read(fresh.join(n)).unwrap() == std::fs::read(inc.join(n)).unwrap(),
            "{n} differs from a run from scratch"
        );
    }
    // The default (REGIONS=0): no regions read or written, same figures.
    let plain = t.join("plain");
    make(
        repo,
        &plain,
        &[&format!("PREVIOUS={}", old.display()), "REGIONS=0"],
    );
    assert!(!plain.join("regions.tsv").exists());
    for n in ["verified.tsv", "report.txt", "report.json"] {
        assert!(
            std::fs::read(fresh.join(n)).unwrap() == std::fs::read(plain.join(n)).unwrap(),
            "{n} differs from a run from scratch (REGIONS=0)"
        );
    }
    // The analysis wrote only the pairs with a changed file: the two
    // edited, the added copy and the file it copies (copies are analysed
    // through one of them); the deleted file is in no pair.
    assert!(
        head(inc).ends_with("\tdelta=1\tchanged-files=4"),
        "{}",
        head(inc)
    );
    assert!(!head(fresh).contains("delta"), "{}", head(fresh));
}

/// The out-of-core path writes the same delta, on any thread count.
fn delta_pairs_are_the_same_out_of_core(r: &Runs) {
    let (old, inc) = (&r.old, &r.inc);
    for j in ["1", "2"] {
        let mut c = fsim("fsim-analyze");
        c.args([
            "-q",
            "--force-spill",
            "-j",
            j,
            "--min-percent",
            "10",
            "--files",
        ])
        .arg(inc.join("files.tsv"))
        .args(["--line-catalogs", "--previous-files"])
        .arg(old.join("files.tsv"))
        .arg("--previous-verified")
        .arg(old.join("verified.tsv"))
        .args(["--verify-min-percent", "50", "--tmpdir"])
        .arg(&r.t)
        .arg(inc.join("bins.tsv"));
        let out = run_ok(c, None);
        assert!(
            out.stdout == crate::common::read_records(&inc.join("pairs.tsv")),
            "-j {j}"
        );
    }
}

fn summaries_count_the_delta_and_the_reused(r: &Runs) {
    let (before, scratch, again) = (&r.before, &r.scratch, &r.again);
    let (all_pairs, delta_pairs) = (pairs_read(scratch), pairs_read(again));
    assert!(all_pairs > 300, "{before}\n{scratch}");
    assert!(
        delta_pairs > 0 && delta_pairs * 5 < all_pairs,
        "{again}\n{scratch}"
    );
    let kept = String::from_utf8(crate::common::read_records(&r.fresh.join("verified.tsv")))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count() as u64;
    let reused = field(again, " reused from the earlier run");
    assert!(reused > 0 && reused <= kept, "{again}: {kept} kept");
}

/// fsim-verify --previous on the full pairs (not a delta): pairs whose
/// two files are unchanged keep their earlier figures, the candidates
/// below the threshold are bounded again; same bytes again.
fn full_pairs_with_previous_are_the_same(r: &Runs) {
    let (t, old, fresh) = (r.t.as_path(), &r.old, &r.fresh);
    let mut c = fsim("fsim-verify");
    c.arg("--files")
        .arg(fresh.join("files.tsv"))
        .args(["--min-percent", "50", "--previous"])
        .arg(old.join("verified.tsv"))
        .arg("--previous-files")
        .arg(old.join("files.tsv"))
        .arg("--previous-regions")
        .arg(old.join("regions.tsv"))
        .arg("--regions")
        .arg(t.join("full-regions.tsv"))
        .arg("-o")
        .arg(t.join("full.tsv"))
        .arg(fresh.join("pairs.tsv"));
    let full = String::from_utf8_lossy(&run_ok(c, None).stderr).into_owned();
    let full = verify_summary(&full);
    assert!(
        std::fs::read(t.join("full.tsv")).unwrap()
            == crate::common::read_records(&fresh.join("verified.tsv"))
    );
    let below: u64 = full
        .split('(')
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    let pairs = pairs_read(full);
    assert!(below > 0 && below < pairs, "{full}");
    assert!(
        field(full, " reused from the earlier run") * 10 > (pairs - below) * 9,
        "{full}"
    );
    let stopped = |s: &str| field(s, " stopped early (an upper bound below the threshold)");
    assert_eq!(stopped(full), stopped(&r.scratch), "{full}\n{}", r.scratch);
}

/// A lower threshold than the earlier run's: its verified pairs lack
/// the links in between, so every pair is analysed (and said so).
fn lower_threshold_analyses_every_file(r: &Runs) {
    let (t, repo, old) = (r.t.as_path(), &r.repo, &r.old);
    let low = t.join("low");
    let err = make(
        repo,
        &low,
        &["MIN_PERCENT=40", &format!("PREVIOUS={}", old.display())],
    );
    assert!(
        err.contains("fsim-analyze: every file analysed, not only the changed ones: the earlier run kept verified pairs from 50%, this one needs them from 40%"),
        "{err}"
    );
    assert!(!head(&low).contains("delta"));
    let low_fresh = t.join("low-fresh");
    make(repo, &low_fresh, &["MIN_PERCENT=40"]);
    for n in ["verified.tsv", "report.txt"] {
        assert!(
            std::fs::read(low.join(n)).unwrap() == std::fs::read(low_fresh.join(n)).unwrap(),
            "{n}"
        );
    }
}

fn outputs_that_do_not_fit_are_refused(r: &Runs) {
    let (t, old, fresh, inc) = (r.t.as_path(), &r.old, &r.fresh, &r.inc);
    // A delta pairs file is refused by fsim-report (it lacks the others).
    let mut c = fsim("fsim-report");
    c.arg("--files")
        .arg(inc.join("files.tsv"))
        .arg("-o")
        .arg(inc.join("delta.txt"))
        .arg(inc.join("pairs.tsv"));
    let e = run_fail(c, None);
    assert!(e.contains("pairs.tsv:1: these pairs are only those of the files changed since an earlier run (delta=1"), "{e}");
    assert!(!inc.join("delta.txt").exists());
    // fsim-verify merging a delta at a lower threshold than the earlier
    // run's would miss the rows in between: refused, nothing written.
    let mut c = fsim("fsim-verify");
    c.arg("--files")
        .arg(inc.join("files.tsv"))
        .args(["--min-percent", "40", "--previous"])
        .arg(old.join("verified.tsv"))
        .arg("--previous-files")
        .arg(old.join("files.tsv"))
        .arg("-o")
        .arg(t.join("low-delta.tsv"))
        .arg(inc.join("pairs.tsv"));
    let e = run_fail(c, None);
    assert!(e.contains("verified.tsv: verified from 50% of the smaller file, so it lacks pairs this run keeps (from 40% of the smaller file)"), "{e}");
    assert!(!t.join("low-delta.tsv").exists());
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
            .arg(t.join("x.tsv"))
            .arg(inc.join("pairs.tsv"));
        let e = run_fail(c, None);
        assert!(!t.join("x.tsv").exists());
        e
    };
    let e = refused(&old.join("verified.tsv"), &inc.join("files.tsv"));
    assert!(e.contains("is this run's file table"), "{e}");
    let e = refused(&old.join("pairs.tsv"), &old.join("files.tsv"));
    assert!(e.contains("--previous takes the verified pairs"), "{e}");
}

/// Identical copies are analysed through the first of them: editing that
/// one moves the set's pairs to the next copy, and the re-run's analysis
/// lists them again. fsim-verify takes their figures from the earlier
/// run's pairs of the same two contents instead of reading the files; with
/// files also added and removed, the outputs are those of a run from
/// scratch.
#[test]
fn moved_copies_take_the_earlier_figures_of_their_contents() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let spec = overlap(7);
    fsim_tools::corpus::generate_overlap(&repo, &spec).unwrap();
    let all = files_under(&repo);
    // Every 10th file has a copy, next to it in the walk.
    let copied: Vec<&PathBuf> = all.iter().step_by(10).collect();
    for f in &copied {
        std::fs::copy(f, format!("{}.copy", f.display())).unwrap();
    }
    let plain = ["REGIONS=0", "FORMATS=txt json tsv"];
    let old = t.path().join("old");
    make(&repo, &old, &plain);
    // The first copies of three sets edited, a file removed, one added.
    for f in &copied[..3] {
        let mut d = std::fs::read(f).unwrap();
        d.extend_from_slice(b"a new last line\n");
        std::fs::write(f, d).unwrap();
    }
    std::fs::remove_file(&all[205]).unwrap();
    std::fs::write(repo.join("d001/new.txt"), b"a file of its own\n").unwrap();
    let fresh = t.path().join("fresh");
    make(&repo, &fresh, &plain);
    let inc = t.path().join("inc");
    let prev = format!("PREVIOUS={}", old.display());
    let err = make(&repo, &inc, &[&plain[..], &[prev.as_str()]].concat());
    for n in ["verified.tsv", "report.txt", "report.json", "report.tsv"] {
        assert!(
            std::fs::read(fresh.join(n)).unwrap() == std::fs::read(inc.join(n)).unwrap(),
            "{n} differs from a run from scratch"
        );
    }
    let summary = verify_summary(&err);
    let by_content = field(summary, " by their contents' earlier figures");
    assert!(
        by_content > 0 && by_content < pairs_read(summary),
        "{summary}"
    );
}
