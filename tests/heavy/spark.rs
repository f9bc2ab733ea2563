//! fsim-spark (scripts/spark, docs/distributed.md): the pipeline on Apache
//! Spark, in local mode and on a standalone cluster (a master and two
//! workers started here), gives the bytes of `make report`, also when tasks
//! fail and Spark retries them. Needs Java 17+ and pyspark (`make
//! spark-venv`); skipped with a SKIP line when they are missing, except
//! under CI (env var CI set), where that is a failure.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python that has pyspark: $FSIM_SPARK_PYTHON, the repository's
/// .venv-spark, or python3 (as scripts/spark/fsim-spark chooses).
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("FSIM_SPARK_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = source_root().join(".venv-spark/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// Why the Spark tests cannot run here, if they cannot.
fn missing() -> Option<String> {
    let java = Command::new("java").arg("-version").output();
    let Ok(java) = java else {
        return Some("java is not installed (Java 17+ needed)".into());
    };
    let text = String::from_utf8_lossy(&java.stderr).into_owned();
    let major: Option<u32> = text
        .split('"')
        .nth(1)
        .and_then(|v| v.split(['.', '-', '+']).next())
        .and_then(|m| m.parse().ok());
    if !java.status.success() || major.is_none_or(|m| m < 17) {
        return Some(format!("Java 17+ needed, found: {}", text.trim()));
    }
    let py = python();
    let ok = Command::new(&py)
        .args(["-c", "import pyspark"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return Some(format!(
            "pyspark is not importable by {} (make spark-venv)",
            py.display()
        ));
    }
    None
}

fn skip(test: &str) -> bool {
    match missing() {
        None => false,
        Some(why) if std::env::var_os("CI").is_some() => {
            panic!("{test} cannot run under CI: {why}")
        }
        Some(why) => {
            println!("SKIP {test}: {why}");
            true
        }
    }
}

/// The demo repository, plus what only the line source finds: two
/// translation catalogs (the same msgid lines, other msgstr lines) and two
/// small files edited every third line; no 100-byte chunk survives in
/// either pair; and two releases of a generated site, whose theme the
/// forests drop (`--site-names`, page names from the file table). Returns
/// the repository.
fn repo_with_scattered_edits(dir: &Path) -> PathBuf {
    let (repo, _) = gen_repo(dir, &[]);
    add_scattered_edits(&repo);
    common::site_repo::write_site(&repo, 2, 12);
    repo
}

/// The catalogs and small files of [`repo_with_scattered_edits`] (not
/// its site: alone, they make no bin).
fn add_scattered_edits(repo: &Path) {
    let po = |word: &str| -> String {
        (0..60)
            .map(|i| format!("msgid \"Select item {i} to edit\"\nmsgstr \"{word} {i}\"\n\n"))
            .collect()
    };
    for (d, w) in [("fr", "Choisir"), ("de", "Wählen")] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
        std::fs::write(repo.join(d).join("app.po"), po(w)).unwrap();
    }
    let small = settings_text;
    std::fs::write(repo.join("settings_a.py"), small(false)).unwrap();
    std::fs::write(repo.join("settings_b.py"), small(true)).unwrap();
}

/// Pairs the line source added: no chunk evidence (common and shared 0).
fn line_only_pairs(pairs: &Path) -> usize {
    String::from_utf8(common::read_records(pairs))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && l.ends_with("\t0\t0"))
        .count()
}

/// Every report format: each is written by a task, from the verified pairs.
const FORMATS: &str = "txt json tsv html xlsx";

fn make_report(repo: &Path, work: &Path) {
    make_report_with(repo, work, &[]);
}

/// `make report` with more variables (`METHOD=sif`).
fn make_report_with(repo: &Path, work: &Path, vars: &[&str]) {
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .arg("--no-print-directory")
        .arg("report")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={}", repo.display()))
        .arg(format!("WORK={}", work.display()))
        .arg("CAPACITY=64K")
        .arg("MEMORY=64K")
        // make's intermediates are compared with fsim-spark's parts.
        .arg("KEEP=1")
        .arg(format!("FORMATS={FORMATS}"))
        .args(vars);
    run_ok(c, None);
}

fn fsim_spark(repo: &Path, work: &Path, env: &[(&str, &str)]) -> String {
    fsim_spark_with(repo, work, env, &[])
}

/// fsim-spark with more options (`--method sif`).
fn fsim_spark_with(repo: &Path, work: &Path, env: &[(&str, &str)], opts: &[&str]) -> String {
    let mut c = Command::new(source_root().join("scripts/spark/fsim-spark"));
    c.env("FSIM_SPARK_PYTHON", python())
        .arg("--master")
        .arg("local[2]")
        .arg("--bin")
        .arg(bin_dir())
        .arg("--repo")
        .arg(repo)
        .arg("--work")
        .arg(work)
        .args(["--capacity", "64K", "--memory", "64K", "--jobs", "2"])
        .args(["--formats", FORMATS])
        .args(opts);
    for (k, v) in env {
        c.env(k, v);
    }
    String::from_utf8_lossy(&run_ok(c, None).stderr).into_owned()
}

/// The `part-*` files of a folder of parts, in name order.
fn parts(dir: &Path) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("part-")
        })
        .collect();
    parts.sort();
    parts
}

/// Every file both runs write: fsim-spark leaves the large ones as parts
/// (NAME.parts/part-*, concatenated in name order: make's NAME.tsv), and
/// writes no NAME.tsv of them (nothing copied through the driver).
fn assert_same(local: &Path, spark: &Path) {
    let reports = FORMATS.split(' ').map(|f| format!("report.{f}"));
    for f in ["files.tsv".to_string(), "plan.tsv".into()]
        .into_iter()
        .chain(reports)
    {
        let a = std::fs::read(local.join(&f)).unwrap_or_else(|e| panic!("make {f}: {e}"));
        let b = std::fs::read(spark.join(&f)).unwrap_or_else(|e| panic!("spark {f}: {e}"));
        assert!(a == b, "{f} differs between make report and fsim-spark");
    }
    for f in [
        "sorted",
        "partition",
        "bins",
        "pairs",
        "verified",
        "regions",
    ] {
        // regions.tsv only where the run asked for it (REGIONS=1).
        if f == "regions" && !local.join("regions.tsv").exists() {
            assert!(
                !spark.join("regions.parts").exists(),
                "regions written unasked"
            );
            continue;
        }
        let parts = parts(&spark.join(format!("{f}.parts")));
        if f == "sorted" {
            assert!(parts.len() >= 2, "expected several hash ranges: {parts:?}");
        }
        let mut all = Vec::new();
        for p in &parts {
            all.extend(std::fs::read(p).unwrap());
        }
        assert!(
            // make keeps its records zstd-compressed (COMPRESS=1), Spark's
            // parts are text: the lines are compared.
            all == common::read_records(&local.join(format!("{f}.tsv"))),
            "{f}.parts/part-* concatenated differ from make report's {f}.tsv"
        );
        assert!(
            f == "sorted" || !spark.join(format!("{f}.tsv")).exists(),
            "{f}.tsv written by the driver"
        );
    }
}

#[test]
fn spark_local_mode_report_is_byte_identical_to_make_report() {
    if skip("spark_local_mode_report_is_byte_identical_to_make_report") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = repo_with_scattered_edits(t.path());
    make_report(&repo, &t.path().join("local"));
    let lines = line_only_pairs(&t.path().join("local/pairs.tsv"));
    assert!(
        lines >= 2,
        "the line source found {lines} pairs: the test does not exercise it"
    );
    let partition = String::from_utf8(read_records(&t.path().join("local/partition.tsv"))).unwrap();
    assert!(
        partition.lines().last().unwrap().contains("\tsite_chunks="),
        "no site template dropped: the test does not exercise it"
    );
    fsim_spark(&repo, &t.path().join("spark"), &[]);
    assert_same(&t.path().join("local"), &t.path().join("spark"));
}

#[test]
fn failed_tasks_are_retried_and_the_report_is_unchanged() {
    if skip("failed_tasks_are_retried_and_the_report_is_unchanged") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = repo_with_scattered_edits(t.path());
    make_report(&repo, &t.path().join("local"));
    // One task of each distributed stage fails once, after part of its
    // output; Spark runs it again (local[2,4]: 4 attempts per task).
    let marks = t.path().join("failed");
    let spec = format!("chunk,forest,analyze,report:{}", marks.display());
    let err = fsim_spark(
        &repo,
        &t.path().join("spark"),
        &[("FSIM_SPARK_FAIL_ONCE", &spec)],
    );
    for stage in ["chunk", "forest", "analyze", "report"] {
        assert!(
            marks.join(stage).is_dir(),
            "no {stage} task failed: the injection did not run"
        );
        assert!(
            err.contains(&format!("injected failure in a {stage} task")),
            "{err}"
        );
    }
    assert_same(&t.path().join("local"), &t.path().join("spark"));
}

/// The path of a work folder the tasks do not share (`hdfs://`, `s3a://`:
/// the records come back through the script transformations and stay in
/// Spark, the bins' slices are written by Spark), taken with a local one.
#[test]
fn spark_unshared_work_path_is_byte_identical() {
    if skip("spark_unshared_work_path_is_byte_identical") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = repo_with_scattered_edits(t.path());
    make_report(&repo, &t.path().join("local"));
    let err = fsim_spark(
        &repo,
        &t.path().join("spark"),
        &[("FSIM_SPARK_UNSHARED", "1")],
    );
    assert!(
        err.contains("the path of a non-shared work folder"),
        "{err}"
    );
    assert_same(&t.path().join("local"), &t.path().join("spark"));
}

/// A feature method (sif): its parameters and per-file feature counts go
/// through the forests and the partition file as make's do; with the
/// regions asked for (REGIONS=1), they are the same bytes too.
#[test]
fn spark_feature_method_is_byte_identical() {
    if skip("spark_feature_method_is_byte_identical") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = repo_with_scattered_edits(t.path());
    make_report_with(&repo, &t.path().join("local"), &["METHOD=sif", "REGIONS=1"]);
    assert!(t.path().join("local/regions.tsv").exists());
    fsim_spark_with(
        &repo,
        &t.path().join("spark"),
        &[],
        &["--method", "sif", "--regions", "1"],
    );
    assert_same(&t.path().join("local"), &t.path().join("spark"));
}

/// A file that cannot be read (a link to /proc/self/mem, followed with
/// -L: an I/O error even for root) comes first in the walk and keeps its
/// entry (`^error`) at its walk position in every shard's table, so no
/// later file moves and no record is renumbered, on the shared and the
/// non-shared path, and every output is make's.
#[test]
fn spark_unreadable_file_keeps_its_id_byte_identical() {
    if skip("spark_unreadable_file_keeps_its_id_byte_identical") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = repo_with_scattered_edits(t.path());
    std::os::unix::fs::symlink("/proc/self/mem", repo.join("0-unreadable")).unwrap();
    make_report_with(&repo, &t.path().join("local"), &["METHOD_OPTS=-L"]);
    let table = std::fs::read_to_string(t.path().join("local/files.tsv")).unwrap();
    assert!(
        table.lines().last().unwrap().contains("\tskipped=1\t"),
        "the link was not skipped: {table}"
    );
    assert!(
        table.lines().nth(1).unwrap().contains("^error"),
        "the unread file has no entry first: {table}"
    );
    for (name, env) in [
        ("spark", vec![]),
        ("unshared", vec![("FSIM_SPARK_UNSHARED", "1")]),
    ] {
        let work = t.path().join(name);
        let err = fsim_spark_with(&repo, &work, &env, &["--chunk-opts=-L"]);
        assert!(!err.contains("renumbering"), "{err}");
        assert_same(&t.path().join("local"), &work);
    }
}

/// The ids of the file table's entries at these paths (below `repo`).
fn ids_of(table: &str, repo: &Path, paths: &[&str]) -> Vec<u32> {
    paths
        .iter()
        .map(|p| {
            let want = format!("\t{}", repo.join(p).display());
            let line = table
                .lines()
                .find(|l| l.ends_with(&want))
                .unwrap_or_else(|| panic!("{p} not in the file table:\n{table}"));
            line[..10].parse().unwrap()
        })
        .collect()
}

/// Archives: a shard lists no members (its ids are walk
/// positions) and marks the archive `~unlisted`; tasks list them
/// (`fsim-chunk --members-of`), the join puts them after their archive
/// and every later file's records are renumbered, as make's merging run
/// lists them. On a tree of zips with text members, a tar.gz, a zip
/// nested five deep, a zip cut in half, a mail message with attachments
/// and a docx (a document, not an archive): on the shared and the
/// non-shared path every output is make's, no archive is left
/// `~unlisted`, and the note edited inside the zip is a verified pair
/// with its loose version.
#[test]
fn spark_archive_members_are_byte_identical_to_make() {
    if skip("spark_archive_members_are_byte_identical_to_make") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = common::archive_repo::repo(t.path());
    let local = t.path().join("local");
    make_report(&repo, &local);
    let table = std::fs::read_to_string(local.join("files.tsv")).unwrap();
    let ids = ids_of(&table, &repo, &["bundle.zip!/notes/a.txt", "notes/a.txt"]);
    let pair = format!("{:010}\t{:010}\t", ids[0].min(ids[1]), ids[0].max(ids[1]));
    let verified =
        String::from_utf8(crate::common::read_records(&local.join("verified.tsv"))).unwrap();
    assert!(
        verified.lines().any(|l| l.starts_with(&pair)),
        "no {pair}in\n{verified}"
    );
    for (name, env) in [
        ("spark", vec![]),
        ("unshared", vec![("FSIM_SPARK_UNSHARED", "1")]),
    ] {
        let work = t.path().join(name);
        let err = fsim_spark(&repo, &work, &env);
        assert!(
            err.contains("members of 5 archives listed by")
                && err.contains("archives' members listed: renumbering the records"),
            "{err}"
        );
        assert_same(&local, &work);
        let spark_table = std::fs::read_to_string(work.join("files.tsv")).unwrap();
        assert!(!spark_table.contains("~unlisted"), "{spark_table}");
        let txt = std::fs::read_to_string(work.join("report.txt")).unwrap();
        assert!(!txt.contains("lists no members"), "{txt}");
    }
}

/// No two files share a kept chunk (no bin): the line source's pairs are
/// analysed and verified by one task, as make report does without bins.
#[test]
fn spark_line_pairs_without_any_bin_are_byte_identical() {
    if skip("spark_line_pairs_without_any_bin_are_byte_identical") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    add_scattered_edits(&repo);
    make_report(&repo, &t.path().join("local"));
    let plan = std::fs::read_to_string(t.path().join("local/plan.tsv")).unwrap();
    assert_eq!(plan.lines().count(), 1, "expected no bin: {plan}");
    assert_eq!(line_only_pairs(&t.path().join("local/pairs.tsv")), 2);
    fsim_spark(&repo, &t.path().join("spark"), &[]);
    assert_same(&t.path().join("local"), &t.path().join("spark"));
}

/// Stops the standalone cluster of `scripts/spark/standalone start` (its
/// daemons by their pid files), also when the test fails.
struct Cluster(PathBuf);

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(source_root().join("scripts/spark/standalone"))
            .arg("stop")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn spark_standalone_cluster_runs_make_spark_demo_byte_identical() {
    if skip("spark_standalone_cluster_runs_make_spark_demo_byte_identical") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    // A master and two workers (one core each) on this machine.
    let dir = t.path().join("cluster");
    let mut c = Command::new(source_root().join("scripts/spark/standalone"));
    c.env("FSIM_SPARK_PYTHON", python())
        .arg("start")
        .arg(&dir)
        .arg("2");
    let started = run_ok(c, None);
    let cluster = Cluster(dir.clone());
    let url = String::from_utf8(started.stdout)
        .unwrap()
        .trim()
        .to_string();
    assert!(url.starts_with("spark://127.0.0.1:"), "{url}");
    // `make spark-demo` against it, one task of each stage failing once.
    let demo = t.path().join("sdemo");
    let marks = t.path().join("failed");
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .env(
            "FSIM_SPARK_FAIL_ONCE",
            format!("chunk,forest,analyze,report:{}", marks.display()),
        )
        .arg("--no-print-directory")
        .arg("spark-demo")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("SPARK_PY={}", python().display()))
        .arg(format!("SPARK_MASTER={url}"))
        .arg(format!("SDEMO={}", demo.display()))
        // The binaries shipped with the job (SparkContext.addFile), not
        // taken from BIN: what a cluster without fsim installed needs.
        .arg("SPARK_OPTS=--ship");
    let out = run_ok(c, None);
    let err = String::from_utf8_lossy(&out.stderr);
    for stage in ["chunk", "forest", "analyze", "report"] {
        assert!(
            marks.join(stage).is_dir(),
            "no {stage} task failed: the injection did not run\n{err}"
        );
    }
    assert_same(&demo.join("local"), &demo.join("spark"));
    // The tasks ran in the workers' executors, on both workers.
    for w in ["work-1", "work-2"] {
        let apps: Vec<_> = std::fs::read_dir(dir.join(w))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("app-"))
            .collect();
        assert_eq!(apps.len(), 1, "{w}: {apps:?}");
        // The executor's working folder got the shipped binaries.
        let app = dir.join(w).join(&apps[0]);
        let shipped = std::fs::read_dir(&app)
            .unwrap()
            .map(|e| e.unwrap().path())
            .any(|p| p.join("fsim-analyze").is_file() && p.join("fsim-report").is_file());
        assert!(
            shipped,
            "{}: no executor folder with the shipped binaries",
            app.display()
        );
    }
    drop(cluster);
    for f in ["master.pid", "worker-1.pid", "worker-2.pid"] {
        assert!(
            !dir.join(f).exists(),
            "{f} left: the daemon was not stopped"
        );
    }
}
