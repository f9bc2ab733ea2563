//! End-to-end: the real binaries on a generated repository with planted
//! relationships. The report must show every planted relation, with the
//! right order of magnitude of bytes in common, every identical set exactly,
//! and nothing else; and it must not depend on how the stages are run
//! (named files, a shell pipe, `LC_ALL=C sort`, -j, a killed stage resumed
//! by make).

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

/// Relative path of a report path under the repository root.
fn rel<'a>(repo: &Path, p: &'a str) -> &'a str {
    let prefix = format!("{}/", repo.display());
    p.strip_prefix(prefix.as_str())
        .unwrap_or_else(|| panic!("{p} is not under {prefix}"))
}

/// Check the JSON report against the manifest of planted relations.
fn check_planted(report: &Value, repo: &Path, planted: &[Vec<String>]) {
    identical_sets_are_the_planted_ones(report, repo, planted);
    let links = links_within_planted_relations(report, repo, planted);
    // Every planted relation is found, with a plausible amount in common.
    let size = |p: &str| std::fs::metadata(repo.join(p)).unwrap().len();
    let check_link = |a: &str, b: &str| {
        let l = links
            .get(&(a.to_string(), b.to_string()))
            .unwrap_or_else(|| panic!("planted link {a} <-> {b} not found"));
        let common = l["bytes_in_common"].as_u64().unwrap();
        let smaller = size(a).min(size(b));
        assert!(
            common * 2 >= smaller && common <= smaller,
            "{a} <-> {b}: {common} bytes in common, smaller file {smaller}"
        );
    };
    for r in planted {
        match r[0].as_str() {
            "near" | "contains" => check_link(&r[1], &r[2]),
            "group" => {
                for w in r[1..].windows(2) {
                    check_link(&w[0], &w[1]);
                }
            }
            "template" => template_is_one_cluster(report, repo, r),
            "identical" => {}
            other => panic!("unknown planted kind {other}"),
        }
    }
    // The contained file is reported as such.
    let contains = planted.iter().find(|r| r[0] == "contains").unwrap();
    let c = report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["files"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| rel(repo, f["path"].as_str().unwrap()) == contains[1])
        })
        .unwrap();
    assert_eq!(c["type"], "contains");
}

/// Identical sets: exactly the planted ones.
fn identical_sets_are_the_planted_ones(report: &Value, repo: &Path, planted: &[Vec<String>]) {
    let got: BTreeSet<Vec<String>> = report["identical_sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let mut v: Vec<String> = s["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| rel(repo, f.as_str().unwrap()).to_string())
                .collect();
            v.sort();
            v
        })
        .collect();
    let want: BTreeSet<Vec<String>> = planted
        .iter()
        .filter(|r| r[0] == "identical")
        .map(|r| {
            let mut v = r[1..].to_vec();
            v.sort();
            v
        })
        .collect();
    assert_eq!(got, want, "identical sets");
}

/// Every link joins two files of one planted relation: the links, both
/// ways.
fn links_within_planted_relations(
    report: &Value,
    repo: &Path,
    planted: &[Vec<String>],
) -> HashMap<(String, String), Value> {
    // Which planted relation each file belongs to.
    let mut group_of: HashMap<&str, usize> = HashMap::new();
    for (i, r) in planted.iter().enumerate() {
        if r[0] != "identical" {
            for p in &r[1..] {
                group_of.insert(p.as_str(), i);
            }
        }
    }
    let mut links: HashMap<(String, String), Value> = HashMap::new();
    for c in report["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            let a = rel(repo, l["a"].as_str().unwrap()).to_string();
            let b = rel(repo, l["b"].as_str().unwrap()).to_string();
            let (ga, gb) = (group_of.get(a.as_str()), group_of.get(b.as_str()));
            assert!(ga.is_some() && ga == gb, "unplanted link {a} <-> {b}: {l}");
            links.insert((a.clone(), b.clone()), l.clone());
            links.insert((b, a), l.clone());
        }
    }
    links
}

/// All members of a planted template end up in one cluster, of their
/// number of files.
fn template_is_one_cluster(report: &Value, repo: &Path, r: &[String]) {
    let cl: BTreeSet<String> = report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["files"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| rel(repo, f["path"].as_str().unwrap()) == r[1])
        })
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(cl.len(), 1, "template files in one cluster");
    let c = report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| cl.contains(c["id"].as_str().unwrap()))
        .unwrap();
    assert_eq!(
        c["file_count"].as_u64().unwrap() as usize,
        r.len() - 1,
        "template cluster size"
    );
}

#[test]
fn sample_report_lists_planted_relations_and_nothing_else() {
    let t = tempfile::tempdir().unwrap();
    let (repo, planted) = gen_repo(t.path(), &[]);
    let report = pipeline(&repo, &t.path().join("work"), &[]);
    check_planted(&report, &repo, &planted);
    // Every planted non-identical relation is one cluster; nothing else.
    let expected_clusters = planted.iter().filter(|r| r[0] != "identical").count();
    assert_eq!(
        report["clusters"].as_array().unwrap().len(),
        expected_clusters,
        "{report:#}"
    );
}

#[test]
fn small_chunks_find_the_same_relations() {
    let t = tempfile::tempdir().unwrap();
    let (repo, planted) = gen_repo(t.path(), &[]);
    let report = pipeline(&repo, &t.path().join("work"), &["--avg-size", "100"]);
    check_planted(&report, &repo, &planted);
}

#[test]
fn gnu_sort_can_replace_fsim_sort() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let work = t.path().join("work");
    let baseline = pipeline(&repo, &work, &[]);
    let out = run_ok(
        {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("LC_ALL=C sort \"$1\"")
                .arg("sh")
                .arg(work.join("chunks.tsv"));
            c
        },
        None,
    );
    assert_eq!(
        out.stdout,
        read_records(&work.join("sorted.tsv")),
        "fsim-sort and LC_ALL=C sort differ"
    );
    // And the final report from GNU-sorted chunks is the same.
    std::fs::write(work.join("sorted.tsv"), &out.stdout).unwrap();
    let files = work.join("files.tsv");
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("\"$1\" -q --files \"$F\" \"$W/sorted.tsv\" | \"$2\" -q | \"$3\" -q --files \"$F\" | \"$5\" -q --files \"$F\" | \"$4\" -q --format json --files \"$F\"")
        .arg("sh")
        .arg(bin("fsim-partition"))
        .arg(bin("fsim-binpack"))
        .arg(bin("fsim-analyze"))
        .arg(bin("fsim-report"))
        .arg(bin("fsim-verify"))
        .env("F", &files)
        .env("W", &work);
    let out = run_ok(c, None);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report, baseline);
}

#[test]
fn stages_compose_in_a_shell_pipe() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let baseline = std::fs::read(t.path().join("work/report.json")).ok();
    assert!(baseline.is_none());
    pipeline(&repo, &t.path().join("work"), &[]);
    let baseline = std::fs::read(t.path().join("work/report.json")).unwrap();
    // The pipe with the stages' defaults, as `pipeline` runs them (the
    // pipe of docs/usage.md is tests/driver/one_pipeline.rs).
    let pipe_dir = t.path().join("pipe");
    std::fs::create_dir(&pipe_dir).unwrap();
    let mut c = Command::new("sh");
    c.current_dir(&pipe_dir)
        .arg("-c")
        .arg("set -e; B=\"$1\"; $B/fsim-chunk -q \"$2\" | $B/fsim-sort -q | $B/fsim-partition -q | $B/fsim-binpack -q | $B/fsim-analyze -q | $B/fsim-verify -q | $B/fsim-report -q --format json")
        .arg("sh")
        .arg(bin_dir())
        .arg(&repo);
    let out = run_ok(c, None);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&baseline)
    );
}

/// Run `make report` for the sample repository with the test's binaries.
fn make_report(repo: &Path, work: &Path, env: &[(&str, &str)]) -> std::process::Output {
    make_report_with(repo, work, env, &[])
}

fn make_report_with(
    repo: &Path,
    work: &Path,
    env: &[(&str, &str)],
    vars: &[&str],
) -> std::process::Output {
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .arg("--no-print-directory")
        .arg("report")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={}", repo.display()))
        .arg(format!("WORK={}", work.display()))
        .arg("CAPACITY=64K")
        .arg("MEMORY=64K")
        // These tests read and kill every stage's output, the
        // intermediates a later stage consumes included.
        .arg("KEEP=1")
        .args(vars);
    for (k, v) in env {
        c.env(k, v);
    }
    run_raw(c, None)
}

#[test]
fn make_resumes_after_any_stage_is_killed() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let clean = t.path().join("clean");
    let out = make_report(&repo, &clean, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want_txt = std::fs::read(clean.join("report.txt")).unwrap();
    let want_json = std::fs::read(clean.join("report.json")).unwrap();
    for (stage, output) in [
        ("fsim-chunk", "chunks.tsv"),
        ("fsim-sort", "sorted.tsv"),
        ("fsim-partition", "partition.tsv"),
        ("fsim-binpack", "bins.tsv"),
        ("fsim-analyze", "pairs.tsv"),
        ("fsim-report", "report.txt"),
    ] {
        // Kill points: in the header, in the first records, mid-output.
        let half = (std::fs::metadata(clean.join(output)).unwrap().len() / 2).to_string();
        for at in ["1", "300", half.as_str()] {
            let work = t.path().join(format!("killed-{stage}-{at}"));
            let out = make_report(
                &repo,
                &work,
                &[("FSIM_TEST_ABORT", &format!("{stage}:{at}"))],
            );
            assert!(!out.status.success(), "{stage} was not killed at {at}");
            // Nothing that looks finished is left by the killed stage.
            let leftovers: Vec<String> = std::fs::read_dir(&work)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect();
            assert!(
                !leftovers.iter().any(|n| n == "report.json"),
                "{stage}: {leftovers:?}"
            );
            let out = make_report(&repo, &work, &[]);
            assert!(
                out.status.success(),
                "resume after {stage}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                std::fs::read(work.join("report.txt")).unwrap(),
                want_txt,
                "text report after killing {stage} at {at}"
            );
            assert_eq!(
                std::fs::read(work.join("report.json")).unwrap(),
                want_json,
                "json report after killing {stage} at {at}"
            );
        }
    }
}

/// The same repository, files created in reverse order (another directory
/// listing order), every stage at -j1 then -j2 (and GNU sort): identical
/// report bytes.
#[test]
fn reports_do_not_depend_on_jobs_listing_order_or_sort_tool() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let one = t.path().join("one");
    let out = make_report_with(&repo, &one, &[], &["JOBS=1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Recreate every file in reverse order, keeping contents and mtimes.
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    let mut stack = vec![repo.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let saved: Vec<(std::path::PathBuf, Vec<u8>, std::fs::Metadata)> = files
        .iter()
        .map(|p| {
            (
                p.clone(),
                std::fs::read(p).unwrap(),
                std::fs::metadata(p).unwrap(),
            )
        })
        .collect();
    std::fs::remove_dir_all(&repo).unwrap();
    for (p, data, meta) in saved.iter().rev() {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
        let f = std::fs::File::options().write(true).open(p).unwrap();
        f.set_modified(meta.modified().unwrap()).unwrap();
    }
    for (name, vars) in [("two", vec!["JOBS=2"]), ("gnu", vec!["JOBS=2", "SORT=gnu"])] {
        let w = t.path().join(name);
        let out = make_report_with(&repo, &w, &[], &vars);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for f in [
            "files.tsv",
            "sorted.tsv",
            "pairs.tsv",
            "verified.tsv",
            "report.txt",
            "report.json",
        ] {
            assert_eq!(
                read_records(&one.join(f)),
                read_records(&w.join(f)),
                "{f} differs between JOBS=1 and {vars:?} with another listing order"
            );
        }
    }
}
