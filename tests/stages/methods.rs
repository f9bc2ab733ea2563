//! Every feature method through the whole pipeline (chunk, sort, partition,
//! binpack, analyze, verify, report) on the generated repository. Each pair
//! the analysis writes is checked against the exact similarity of the two
//! files' w-byte shingle sets, computed here from the files:
//!
//! * the resemblance estimate `R = c / (sa + sb - c)` recovered from the
//!   bytes-in-common field `c` (docs/formats.md) is within the method's
//!   tolerance of the exact Jaccard of the shingle sets;
//! * for the set methods (sif, mod, bsw-min), `c / min(sa, sb)` is within
//!   tolerance of the exact containment of the smaller file's shingles;
//! * recall: every pair of distinct files whose exact Jaccard is at least
//!   0.6 (megashingles: 0.97) is found.
//!
//! Tolerances (absolute, on 0..1) are about three standard deviations of
//! each estimator for this repository (files of 5-110 KB): 0.15 for the
//! fixed 100-value signatures (min, sketch, oneperm, bbit: sd <= 0.05),
//! 0.08 for mod and bsw-min at n=50 and 0.1 for sif at bits=6 (hundreds of
//! features per file), 0.1 for supershingles. Measured maximum errors
//! (printed by `cargo test --test tests stages::methods:: -- --nocapture`): mod 0.026,
//! bsw-min 0.031, sif 0.045 (anchors 0.026), min 0.073, sketch 0.078,
//! oneperm 0.066, bbit 0.076, supershingle 0.017. The data are deterministic,
//! so these tests do not flake.

use crate::common;

use common::*;
use fsim::formats::FileEntry;
use std::collections::{HashMap, HashSet};
use std::path::Path;

struct Files {
    paths: Vec<Vec<u8>>,
    content: Vec<u128>,
}

fn read_files(path: &Path) -> Files {
    let text = std::fs::read(path).unwrap();
    let mut f = Files {
        paths: Vec::new(),
        content: Vec::new(),
    };
    for line in text.split(|&c| c == b'\n') {
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let e = FileEntry::parse(line).unwrap();
        assert_eq!(e.id as usize, f.paths.len());
        f.paths.push(e.path);
        f.content.push(e.content);
    }
    f
}

/// (a, b, size a, size b, c, shared) of a pair line.
type PairLine = (usize, usize, u64, u64, u64, u64);

/// Every pair line, and the header line.
fn read_pairs(path: &Path) -> (Vec<PairLine>, String) {
    let text = String::from_utf8(crate::common::read_records(path)).unwrap();
    let header = text.lines().next().unwrap().to_string();
    let pairs = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let v: Vec<u64> = l.split('\t').map(|x| x.parse().unwrap()).collect();
            (v[0] as usize, v[1] as usize, v[2], v[3], v[4], v[5])
        })
        .collect();
    (pairs, header)
}

fn shingles(data: &[u8], w: usize) -> HashSet<&[u8]> {
    if data.len() <= w {
        return [data].into_iter().collect();
    }
    data.windows(w).collect()
}

struct Errors {
    max_r: f64,
    sum_r: f64,
    max_c: f64,
    n: usize,
}

/// Run one method and check it; returns the measured errors.
fn check_method(
    method: &str,
    window: usize,
    args: &[&str],
    tol_r: f64,
    tol_c: Option<f64>,
) -> Errors {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(dir.path(), &[]);
    let work = dir.path().join("work");
    let mut chunk_args = vec!["--method", method];
    chunk_args.extend_from_slice(args);
    let report = pipeline(&repo, &work, &chunk_args);
    assert_eq!(report["params"]["method"], method);
    let files = read_files(&work.join("files.tsv"));
    let (pairs, header) = read_pairs(&work.join("pairs.tsv"));
    assert!(header.contains(&format!("method={method}")), "{header}");
    assert!(header.contains("estimate="), "{header}");
    let data: Vec<Vec<u8>> = files
        .paths
        .iter()
        .map(|p| std::fs::read(std::str::from_utf8(p).unwrap()).unwrap())
        .collect();
    let sets: Vec<HashSet<&[u8]>> = data.iter().map(|d| shingles(d, window)).collect();
    let exact = |a: usize, b: usize| {
        let i = sets[a].intersection(&sets[b]).count() as f64;
        let jac = i / (sets[a].len() as f64 + sets[b].len() as f64 - i);
        let cont = i / sets[a].len().min(sets[b].len()) as f64;
        (jac, cont)
    };
    let mut e = Errors {
        max_r: 0.0,
        sum_r: 0.0,
        max_c: 0.0,
        n: 0,
    };
    let mut found = HashSet::new();
    // The method's pairs: the line source's (no chunk, no estimate) aside.
    for &(a, b, sa, sb, c, _) in pairs.iter().filter(|p| p.5 > 0) {
        found.insert((a, b));
        let est_r = c as f64 / (sa + sb - c) as f64;
        let (jac, cont) = exact(a, b);
        let err = (est_r - jac).abs();
        assert!(
            err <= tol_r,
            "{method}: pair {a} {b}: estimated resemblance {est_r:.3}, exact Jaccard {jac:.3}"
        );
        e.max_r = e.max_r.max(err);
        e.sum_r += err;
        e.n += 1;
        if let Some(tc) = tol_c {
            let est_c = c as f64 / sa.min(sb) as f64;
            let err = (est_c - cont).abs();
            assert!(
                err <= tc,
                "{method}: pair {a} {b}: estimated containment {est_c:.3}, exact {cont:.3}"
            );
            e.max_c = e.max_c.max(err);
        }
    }
    // Recall over the representatives of identical sets (smallest id).
    let mut rep: HashMap<u128, usize> = HashMap::new();
    for (i, &c) in files.content.iter().enumerate() {
        rep.entry(c).or_insert(i);
    }
    let recall_at = if method == "supershingle" { 0.97 } else { 0.6 };
    let mut strong = 0;
    for a in 0..data.len() {
        for b in a + 1..data.len() {
            if rep[&files.content[a]] != a
                || rep[&files.content[b]] != b
                || data[a].is_empty()
                || data[b].is_empty()
            {
                continue;
            }
            let (jac, _) = exact(a, b);
            if jac >= recall_at {
                strong += 1;
                assert!(
                    found.contains(&(a, b)),
                    "{method}: pair {a} {b} with Jaccard {jac:.3} was not found"
                );
            }
        }
    }
    assert!(strong > 0, "{method}: the repository has no strong pair");
    assert!(!pairs.is_empty());
    eprintln!(
        "{method}: {} pairs, resemblance error max {:.3} mean {:.3}, containment error max {:.3}, {strong} strong pairs found",
        e.n,
        e.max_r,
        e.sum_r / e.n as f64,
        e.max_c
    );
    e
}

#[test]
fn method_sif() {
    check_method("sif", 50, &["--bits", "6"], 0.1, Some(0.12));
}

#[test]
fn method_sif_anchors() {
    check_method(
        "sif",
        50,
        &["--bits", "6", "--anchors", "4"],
        0.1,
        Some(0.12),
    );
}

#[test]
fn method_mod() {
    check_method("mod", 20, &["-n", "50"], 0.08, Some(0.08));
}

#[test]
fn method_min() {
    check_method("min", 20, &[], 0.15, None);
}

#[test]
fn method_sketch() {
    check_method("sketch", 20, &[], 0.15, None);
}

#[test]
fn method_bsw_min() {
    check_method("bsw-min", 20, &["-n", "50"], 0.08, Some(0.08));
}

#[test]
fn method_oneperm() {
    check_method("oneperm", 20, &[], 0.15, None);
}

#[test]
fn method_bbit() {
    check_method("bbit", 20, &["--b-bits", "8"], 0.15, None);
}

#[test]
fn method_supershingle() {
    // Megashingle rule: a pair is a candidate only with >= 2 of the 6
    // supershingles in common, i.e. an estimate of at least 0.92.
    let e = check_method("supershingle", 20, &[], 0.1, None);
    assert!(e.n > 0);
}

#[test]
fn mixed_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(dir.path(), &[]);
    let d = dir.path();
    for (n, out) in [("100", "a.tsv"), ("50", "b.tsv")] {
        let mut c = fsim("fsim-chunk");
        c.args(["-q", "--method", "mod", "-n", n, "--files-out"])
            .arg(d.join(format!("files-{out}")))
            .arg("-o")
            .arg(d.join(out))
            .arg(&repo);
        run_ok(c, None);
    }
    let mut c = fsim("fsim-sort");
    c.args(["-q"]).arg(d.join("a.tsv")).arg(d.join("b.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("n=50 here but n=100 before"), "{err}");
    // Feature options make no sense for a chunk method.
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "--method", "tttd", "--window", "20"])
        .arg(&repo);
    let err = run_fail(c, None);
    assert!(err.contains("apply to feature methods"), "{err}");
}

#[test]
fn normalisation_makes_variants_identical() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let base: String = (0..400)
        .map(|i| format!("Line {i} of the shared document, with words. "))
        .collect();
    std::fs::write(repo.join("a.txt"), &base).unwrap();
    let shouted = format!(
        "<html><body><p>{}</p></body></html>",
        base.to_uppercase().replace(' ', "  \n")
    );
    std::fs::write(repo.join("b.html"), shouted).unwrap();
    // Unrelated files, so that the degree limit (half the files) keeps
    // features shared by two files.
    for i in 0..4 {
        let other: String = (0..300).map(|j| format!("filler {i} {j} ")).collect();
        std::fs::write(repo.join(format!("z{i}.txt")), other).unwrap();
    }
    let work = dir.path().join("work");
    let report = pipeline(
        &repo,
        &work,
        &[
            "--method",
            "sketch",
            "--fold-case",
            "--collapse-whitespace",
            "--strip-html",
        ],
    );
    let (pairs, header) = read_pairs(&work.join("pairs.tsv"));
    assert!(
        header.contains("fold-case=1\tcollapse-whitespace=1\tstrip-html=1"),
        "{header}"
    );
    assert_eq!(pairs.len(), 1, "{pairs:?}");
    assert_eq!(pairs[0].5, 100, "all 100 sketch positions match");
    assert_eq!(report["params"]["fold-case"], "1");
    // Without normalisation the two share nothing.
    let work2 = dir.path().join("work2");
    pipeline(&repo, &work2, &["--method", "sketch"]);
    assert!(read_pairs(&work2.join("pairs.tsv")).0.is_empty());
}
