//! Resume inside the chunk stage (shards) and incremental re-runs
//! (`--previous`): the output must be byte-identical to a plain run from
//! scratch, and the summary line must show that finished or unchanged
//! files were not read again.

use crate::common;

use common::*;
use std::path::Path;

/// `make report` with the test's binaries; extra `VAR=value` arguments.
fn make(repo: &Path, work: &Path, vars: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = make_report_cmd(
        repo,
        work,
        // KEEP=1: these tests read the intermediates a later stage consumes.
        &[&["CAPACITY=64K", "MEMORY=64K", "KEEP=1"], vars].concat(),
    );
    for (k, v) in env {
        c.env(k, v);
    }
    run_raw(c, None)
}

fn ok(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "make failed:\n{err}");
    err
}

/// The summary lines of fsim-chunk in some stderr output.
fn chunk_summaries(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("fsim-chunk: ") && l.contains(" reused"))
        .collect()
}

/// The sample repository in `t/repo` and an uninterrupted `make report` of
/// it in `t/clean`: (repo, clean work dir).
fn repo_and_clean_run(t: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (repo, _) = gen_repo(t, &[]);
    let clean = t.join("clean");
    ok(&make(&repo, &clean, &[], &[]));
    (repo, clean)
}

fn same_files(a: &Path, b: &Path, names: &[&str]) {
    for n in names {
        assert!(
            std::fs::read(a.join(n)).unwrap() == std::fs::read(b.join(n)).unwrap(),
            "{n} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn shards_merge_to_the_bytes_of_an_unsharded_run() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let d = t.path();
    let chunk = |args: &[&str]| {
        let mut c = fsim("fsim-chunk");
        c.current_dir(d).args(args).arg(&repo);
        run_ok(c, None)
    };
    chunk(&["-q", "-o", "c.tsv", "--files-out", "f.tsv"]);
    let mut merge = vec!["-j", "2", "-o", "cm.tsv", "--files-out", "fm.tsv"];
    let names: Vec<(String, String)> = (0..3)
        .map(|i| (format!("f.{i}.tsv"), format!("c.{i}.tsv")))
        .collect();
    for (i, (f, c)) in names.iter().enumerate() {
        let shard = format!("{i}/3");
        chunk(&["-q", "--shard", &shard, "-o", c, "--files-out", f]);
        merge.extend(["--previous", f.as_str(), "--previous-chunks", c.as_str()]);
    }
    let out = chunk(&merge);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(" 0 read, 68 reused"), "{err}");
    same_files(d, d, &[]);
    assert_eq!(read(d, "c.tsv"), read(d, "cm.tsv"));
    assert_eq!(read(d, "f.tsv"), read(d, "fm.tsv"));
    // Shards in the wrong order are refused, naming the file.
    let mut c = fsim("fsim-chunk");
    c.current_dir(d)
        .args(["-o", "x.tsv", "--files-out", "fx.tsv"])
        .args(["--previous", "f.1.tsv", "--previous-chunks", "c.1.tsv"])
        .args(["--previous", "f.0.tsv", "--previous-chunks", "c.0.tsv"])
        .args(["--previous", "f.2.tsv", "--previous-chunks", "c.2.tsv"])
        .arg(&repo);
    let err = run_fail(c, None);
    assert_eq!(
        err,
        "fsim-chunk: f.1.tsv: expected the file table of shard 0/3 (shards must be given all, in order), found shard 1/3\n"
    );
    assert!(!d.join("x.tsv").exists() && !d.join("fx.tsv").exists());
}

#[test]
fn a_killed_shard_is_the_only_work_redone() {
    let t = tempfile::tempdir().unwrap();
    let (repo, clean) = repo_and_clean_run(t.path());
    let work = t.path().join("work");
    // Shard 1 of 4 dies like kill -9 after 300 bytes; -k lets the others finish.
    let out = make(
        &repo,
        &work,
        &["-k", "SHARDS=4"],
        &[("FSIM_TEST_ABORT", "fsim-chunk:300:1/4")],
    );
    assert!(!out.status.success());
    let shards = work.join("shards-4");
    for i in [0, 2, 3] {
        assert!(shards.join(format!("chunks.{i}.tsv")).exists());
    }
    assert!(!shards.join("chunks.1.tsv").exists());
    assert!(!work.join("chunks.tsv").exists());
    // Re-run: only shard 1 reads files, the merge reads none.
    let err = ok(&make(&repo, &work, &["SHARDS=4"], &[]));
    let files = std::fs::read_to_string(clean.join("files.tsv")).unwrap();
    let total = files.lines().filter(|l| !l.starts_with('#')).count();
    let in_shard_1 = (0..total).filter(|i| i % 4 == 1).count();
    let sums = chunk_summaries(&err);
    assert_eq!(sums.len(), 2, "{err}");
    assert!(
        sums[0].contains(&format!(" {in_shard_1} read, 0 reused")),
        "{}",
        sums[0]
    );
    assert!(
        sums[1].contains(&format!(" 0 read, {total} reused")),
        "{}",
        sums[1]
    );
    same_files(
        &clean,
        &work,
        &["files.tsv", "chunks.tsv", "report.txt", "report.json"],
    );
}

/// fsim-sort killed (like kill -9) right after its second run is
/// journaled: `make` again resumes it from `sorted.tsv.runs`, re-sorting
/// only the records after those runs (2 × 2,730 at MEMORY=64K), and every
/// output is byte-identical to an uninterrupted run.
#[test]
fn make_resumes_a_killed_sort_after_its_finished_runs() {
    let t = tempfile::tempdir().unwrap();
    let (repo, clean) = repo_and_clean_run(t.path());
    assert!(!clean.join("sorted.tsv.runs").exists());
    let work = t.path().join("work");
    let out = make(&repo, &work, &[], &[("FSIM_TEST_ABORT_RUN", "fsim-sort:2")]);
    assert!(!out.status.success());
    assert!(work.join("chunks.tsv").exists() && !work.join("sorted.tsv").exists());
    assert!(work.join("sorted.tsv.runs/journal").exists());
    let err = ok(&make(&repo, &work, &[], &[]));
    let records = String::from_utf8(read_records(&clean.join("chunks.tsv")))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    let kept = 2 * (64 * 1024 / 24);
    let want = format!(
        "fsim-sort: {records} records ({} sorted, {kept} resumed), ",
        records - kept
    );
    assert!(err.lines().any(|l| l.starts_with(&want)), "{want}\n{err}");
    // The chunk stage was not run again.
    assert!(chunk_summaries(&err).is_empty(), "{err}");
    assert!(!work.join("sorted.tsv.runs").exists());
    same_files(
        &clean,
        &work,
        &["sorted.tsv", "pairs.tsv", "report.txt", "report.json"],
    );
}

#[test]
fn incremental_rerun_reads_only_changed_files() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let old = t.path().join("old");
    ok(&make(&repo, &old, &[], &[]));
    // Change one file, add one, delete one.
    let all = files_under(&repo);
    let changed = &all[4];
    let mut data = std::fs::read(changed).unwrap();
    data.extend_from_slice(b"one more line\n");
    std::fs::write(changed, &data).unwrap();
    std::fs::write(repo.join("zz-new.txt"), b"a new file\n").unwrap();
    std::fs::remove_file(&all[8]).unwrap();
    let fresh = t.path().join("fresh");
    ok(&make(&repo, &fresh, &[], &[]));
    let inc = t.path().join("inc");
    let prev = format!("PREVIOUS={}", old.display());
    let err = ok(&make(&repo, &inc, &[&prev], &[]));
    let total = all.len(); // one deleted, one added
    let sums = chunk_summaries(&err);
    assert_eq!(sums.len(), 1, "{err}");
    assert!(
        sums[0].contains(&format!(" 2 read, {} reused", total - 2)),
        "{}",
        sums[0]
    );
    same_files(
        &fresh,
        &inc,
        &["files.tsv", "chunks.tsv", "report.txt", "report.json"],
    );
    // Sharded and incremental at once.
    let both = t.path().join("both");
    let err = ok(&make(&repo, &both, &[&prev, "SHARDS=3", "-j2"], &[]));
    let read: u64 = chunk_summaries(&err)
        .iter()
        .map(|l| {
            let i = l.find(" read,").unwrap();
            l[..i].rsplit(' ').next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(read, 2, "{err}");
    same_files(&fresh, &both, &["files.tsv", "chunks.tsv", "report.json"]);
}

/// `LINE_SETS=1`: the line source keeps each content's lines, and a
/// re-run takes the unchanged contents' lines instead of reading their
/// files: only the edited file and the new one are read, the line sets
/// and reports are a fresh run's bytes. Off (`LINE_SETS=0`), nothing is
/// kept or taken.
/// With too little memory for the sets of one size, some are read. A
/// re-run in which nothing changed links the earlier line sets; one with
/// `DROP_PREVIOUS=1` removes them once the analysis took them.
#[test]
fn line_sets_let_a_rerun_read_only_the_changed_contents() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let on = ["LINE_SETS=1", "CAPACITY=16M"];
    let run = |name: &str, prev: Option<&Path>, more: &[&str]| {
        let w = t.path().join(name);
        let p = prev.map(|p| format!("PREVIOUS={}", p.display()));
        let vars: Vec<&str> = p
            .iter()
            .map(String::as_str)
            .chain(more.iter().copied())
            .collect();
        (ok(&make(&repo, &w, &vars, &[])), w)
    };
    let (_, old) = run("old", None, &on);
    assert!(old.join("lines.tsv").is_file());
    let all = files_under(&repo);
    let mut data = std::fs::read(&all[4]).unwrap();
    data.extend_from_slice(b"one more line\n");
    std::fs::write(&all[4], &data).unwrap();
    std::fs::write(repo.join("zz-new.txt"), b"a new file\n").unwrap();
    let (_, fresh) = run("fresh", None, &on);
    let (err, inc) = run("inc", Some(&old), &on);
    let (compared, taken) = line_source_counts(&err);
    assert!(compared > 10, "{err}");
    assert_eq!(taken, compared - 2, "{err}");
    same_files(&fresh, &inc, &["lines.tsv", "report.txt", "report.json"]);
    // Off: nothing taken, nothing kept.
    let (err, off) = run("off", Some(&old), &["LINE_SETS=0"]);
    assert_eq!(line_source_counts(&err).1, 0, "{err}");
    assert!(!off.join("lines.tsv").exists());
    // 64K of CAPACITY: a few sets of one size do not fit and are read.
    let (err, small) = run("small", Some(&old), &["LINE_SETS=1"]);
    let (compared, taken) = line_source_counts(&err);
    assert!(taken > compared / 2 && taken <= compared - 2, "{err}");
    same_files(&fresh, &small, &["lines.tsv", "report.txt", "report.json"]);
    // A file only touched: nothing changed, the earlier sets are linked.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    let f = std::fs::File::options().write(true).open(&all[4]).unwrap();
    f.set_modified(later).unwrap();
    let drop = [&on[..], &["DROP_PREVIOUS=1"]].concat();
    let (_, touched) = run("touched", Some(&inc), &drop);
    use std::os::unix::fs::MetadataExt;
    let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
    assert_eq!(ino(&inc.join("lines.tsv")), ino(&touched.join("lines.tsv")));
    // Edited again, DROP_PREVIOUS=1: the earlier sets go once taken.
    std::fs::write(repo.join("zz-new.txt"), b"a new file, edited\n").unwrap();
    let (err, _) = run("again", Some(&touched), &drop);
    let (compared, taken) = line_source_counts(&err);
    assert_eq!(taken, compared - 1, "{err}");
    assert!(!touched.join("lines.tsv").exists());
}

/// The contents fsim-analyze's line source compared, and those whose
/// lines it took from the earlier run's line sets, from its stderr.
fn line_source_counts(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("fsim-analyze: line source: "))
        .unwrap_or_else(|| panic!("no line source summary: {stderr}"));
    let number_before = |s: &str, word: &str| -> u64 {
        let i = s.find(word).unwrap_or_else(|| panic!("no '{word}': {s}"));
        s[..i]
            .trim_end()
            .rsplit([' ', '('])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let taken = if line.contains(" taken from") {
        number_before(line, " taken from")
    } else {
        0
    };
    (number_before(line, " contents compared"), taken)
}

/// The outputs `fsim-reuse` said it took from the earlier run.
fn copied(stderr: &str) -> Vec<String> {
    let mut names: Vec<String> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("fsim-reuse: "))
        .filter_map(|l| l.split(": reused from ").next())
        .map(|p| {
            Path::new(p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A re-run after files only got new timestamps (a
/// checkout, a copy, a restore) copies every stage after the chunking from
/// the earlier run, except the actions script, which checks timestamps,
/// and an output changed since it was written; a setting of the reports
/// re-runs the reports only; an edited file
/// re-runs the stages whose inputs it changed. Every output is a fresh
/// run's.
#[test]
fn rerun_copies_the_stages_whose_program_arguments_and_inputs_are_the_same() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let formats = REUSE_FORMATS;
    let old = t.path().join("old");
    // Quiet, unlike the runs below (whose summaries are read): `-q` does
    // not count in a stage's key.
    ok(&make(&repo, &old, &[formats, "QUIET=-q"], &[]));
    let all = files_under(&repo);
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    for f in all.iter().step_by(7) {
        let file = std::fs::File::options().write(true).open(f).unwrap();
        file.set_modified(later).unwrap();
    }
    let outputs = REUSE_OUTPUTS;
    let fresh = t.path().join("fresh");
    ok(&make(&repo, &fresh, &[formats], &[]));
    let touched = t.path().join("touched");
    let prev = format!("PREVIOUS={}", old.display());
    // CHANGED_ONLY=0: every record sorted, partitioned and packed, as a
    // run from scratch does (the re-run of the changed chunks alone makes
    // intermediates of its own: tests/driver/rerun_generated.rs).
    let prev_all = [formats, &prev, "CHANGED_ONLY=0"];
    let err = ok(&make(&repo, &touched, &prev_all, &[]));
    // report.txt's process also wrote report.json (--also): both copied.
    assert_eq!(
        copied(&err),
        ["bins.tsv", "partition.tsv", "report.txt", "sorted.tsv"],
        "{err}"
    );
    assert!(err.contains("fsim-analyze: 0 files changed"), "{err}");
    same_files(&fresh, &touched, &outputs);
    // What is reused is the earlier run's file itself (a hard link, no
    // copy), dated now: make run again has nothing to do.
    use std::os::unix::fs::MetadataExt;
    for name in ["sorted.tsv", "partition.tsv", "bins.tsv", "report.json"] {
        let inode = |dir: &Path| std::fs::metadata(dir.join(name)).unwrap().ino();
        assert_eq!(inode(&old), inode(&touched), "{name}");
    }
    let err = ok(&make(&repo, &touched, &prev_all, &[]));
    assert!(!err.contains("fsim-"), "{err}");
    let prev_all = [prev.as_str(), "CHANGED_ONLY=0"];
    newer_chunks_are_reused_again(&repo, &fresh, &touched, &prev_all);
    changed_outputs_are_not_copied(t.path(), &repo, &old, &fresh, &prev_all);
    // One file edited: its chunks are new, so nothing after them is
    // copied, and the outputs are still a fresh run's.
    let mut data = std::fs::read(&all[3]).unwrap();
    data.extend_from_slice(b"one more line\n");
    std::fs::write(&all[3], &data).unwrap();
    let fresh2 = t.path().join("fresh2");
    ok(&make(&repo, &fresh2, &[formats], &[]));
    let edited = t.path().join("edited");
    let prev = format!("PREVIOUS={}", touched.display());
    let err = ok(&make(&repo, &edited, &[formats, &prev], &[]));
    assert!(copied(&err).is_empty(), "{err}");
    // The changed chunks alone were sorted, partitioned and packed: those
    // intermediates are this re-run's own, every other output a fresh run's.
    assert!(err.contains("(those of the changed chunks)"), "{err}");
    let own = ["sorted.tsv", "partition.tsv", "bins.tsv", "plan.tsv"];
    let rest: Vec<&str> = outputs.into_iter().filter(|o| !own.contains(o)).collect();
    same_files(&fresh2, &edited, &rest);
}

/// The formats of the reuse tests' runs.
const REUSE_FORMATS: &str = "FORMATS=txt json sh";

/// The outputs the reuse tests compare with a fresh run's.
const REUSE_OUTPUTS: [&str; 9] = [
    "files.tsv",
    "sorted.tsv",
    "partition.tsv",
    "bins.tsv",
    "plan.tsv",
    "verified.tsv",
    "report.txt",
    "report.json",
    "report.sh",
];

/// Newer chunks: the stages after them are reused again, onto the
/// links already in place, and leave no temporary name behind.
fn newer_chunks_are_reused_again(repo: &Path, fresh: &Path, touched: &Path, prev: &[&str]) {
    std::thread::sleep(std::time::Duration::from_millis(20));
    let newer = std::time::SystemTime::now();
    let chunks = std::fs::File::options()
        .write(true)
        .open(touched.join("chunks.tsv"))
        .unwrap();
    chunks.set_modified(newer).unwrap();
    let err = ok(&make(
        repo,
        touched,
        &[&[REUSE_FORMATS], prev].concat(),
        &[],
    ));
    assert_eq!(
        copied(&err),
        ["bins.tsv", "partition.tsv", "report.txt", "sorted.tsv"],
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(touched)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".reuse.") || n.starts_with(".link."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    same_files(fresh, touched, &REUSE_OUTPUTS);
}

/// An earlier output changed since its stage wrote it is not copied,
/// nor what its process wrote with it (report.txt); and the reports'
/// threshold is their argument: the stages before them are copied, the
/// reports written again.
fn changed_outputs_are_not_copied(t: &Path, repo: &Path, old: &Path, fresh: &Path, prev: &[&str]) {
    let (formats, outputs) = (REUSE_FORMATS, REUSE_OUTPUTS);
    let mut json = std::fs::read(old.join("report.json")).unwrap();
    json.extend_from_slice(b" ");
    std::fs::write(old.join("report.json"), &json).unwrap();
    let again = t.join("again");
    let err = ok(&make(repo, &again, &[&[formats], prev].concat(), &[]));
    assert_eq!(
        copied(&err),
        ["bins.tsv", "partition.tsv", "sorted.tsv"],
        "{err}"
    );
    same_files(fresh, &again, &outputs);
    // The reports' threshold is their argument: the stages before them
    // are copied, the reports written again.
    let stricter = t.join("stricter");
    let err = ok(&make(
        repo,
        &stricter,
        &[&[formats, "MIN_PERCENT=70"], prev].concat(),
        &[],
    ));
    assert_eq!(
        copied(&err),
        ["bins.tsv", "partition.tsv", "sorted.tsv"],
        "{err}"
    );
    let fresh70 = t.join("fresh70");
    ok(&make(repo, &fresh70, &[formats, "MIN_PERCENT=70"], &[]));
    same_files(&fresh70, &stricter, &outputs);
}

/// A re-run whose files were only touched writes the same chunk records:
/// the earlier chunk file is linked in place (one inode, dated now), not
/// written again. One file edited near the end: the records are written,
/// the earlier file's equal part first, the bytes of a run from scratch.
#[test]
fn the_same_chunk_records_are_linked_not_written() {
    use std::os::unix::fs::MetadataExt;
    let t = tempfile::tempdir().unwrap();
    // Records of several writer blocks (~2.7 MB), so that the edit comes
    // after an equal part of more than one.
    let repo = t.path().join("repo");
    let mut gen = fsim("fsim-gen");
    gen.args(["--bulk", "600"]).arg(&repo);
    run_ok(gen, None);
    let chunk = |dir: &str, prev: Option<&str>| {
        std::fs::create_dir_all(t.path().join(dir)).unwrap();
        let mut c = fsim("fsim-chunk");
        c.current_dir(t.path())
            .args(["-q", "-o", &format!("{dir}/chunks.tsv")]);
        c.args(["--files-out", &format!("{dir}/files.tsv")]);
        if let Some(p) = prev {
            c.args(["--previous", &format!("{p}/files.tsv")]);
            c.args(["--previous-chunks", &format!("{p}/chunks.tsv")]);
        }
        c.arg(&repo);
        run_ok(c, None);
    };
    let meta = |p: &str| std::fs::metadata(t.path().join(p)).unwrap();
    chunk("first", None);
    let all = files_under(&repo);
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    for f in &all {
        let f = std::fs::File::options().write(true).open(f).unwrap();
        f.set_modified(later).unwrap();
    }
    let before = std::time::SystemTime::now();
    chunk("touched", Some("first"));
    assert_eq!(
        meta("touched/chunks.tsv").ino(),
        meta("first/chunks.tsv").ino()
    );
    assert!(
        meta("touched/chunks.tsv").modified().unwrap() >= before,
        "dated now"
    );
    assert_ne!(
        read(t.path(), "touched/files.tsv"),
        read(t.path(), "first/files.tsv")
    );
    let left: Vec<_> = std::fs::read_dir(t.path().join("touched"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let last = all.last().unwrap();
    let mut data = std::fs::read(last).unwrap();
    data.extend_from_slice(b"one more line\n");
    std::fs::write(last, &data).unwrap();
    chunk("edited", Some("touched"));
    chunk("scratch", None);
    assert_ne!(
        meta("edited/chunks.tsv").ino(),
        meta("touched/chunks.tsv").ino()
    );
    assert_eq!(
        std::fs::read(t.path().join("edited/chunks.tsv")).unwrap(),
        std::fs::read(t.path().join("scratch/chunks.tsv")).unwrap()
    );
    assert!(meta("scratch/chunks.tsv").len() > 2 << 20);
}

/// `fsim-chunk --compress` of `repo` into `t/dir`, after the run in
/// `t/prev` when given; its output, whatever its status.
fn chunk_compressed(t: &Path, repo: &Path, dir: &str, prev: Option<&str>) -> std::process::Output {
    std::fs::create_dir_all(t.join(dir)).unwrap();
    let mut c = fsim("fsim-chunk");
    c.current_dir(t)
        .args(["--compress", "-o", &format!("{dir}/chunks.tsv")]);
    c.args(["--files-out", &format!("{dir}/files.tsv")]);
    if let Some(p) = prev {
        c.args(["--previous", &format!("{p}/files.tsv")]);
        c.args(["--previous-chunks", &format!("{p}/chunks.tsv")]);
    }
    c.arg(repo);
    run_raw(c, None)
}

/// The frames a summary line says were copied.
fn frames_copied(summary: &str) -> u64 {
    summary
        .split(", ")
        .find_map(|p| {
            p.trim()
                .strip_suffix(" frames of earlier records copied whole")
        })
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// 600 generated files, chunked compressed into `t/first`.
fn first_compressed(t: &Path) -> std::path::PathBuf {
    let repo = t.join("repo");
    let mut gen = fsim("fsim-gen");
    gen.args(["--bulk", "600"]).arg(&repo);
    run_ok(gen, None);
    ok(&chunk_compressed(t, &repo, "first", None));
    repo
}

/// Compressed chunk records are frames of whole files: a re-run copies
/// those of unchanged files whole, gives back a frame whose files changed
/// and writes it again, and the result is the bytes of a run from scratch,
/// still one zstd stream of the same lines. Edits at the first file, inside
/// a frame and at the last file, and a file gone (the ids after it move:
/// nothing is copied, the same bytes again).
#[test]
fn compressed_records_copy_the_frames_of_unchanged_files() {
    let t = tempfile::tempdir().unwrap();
    let t = t.path();
    let repo = first_compressed(t);
    let chunk = |dir: &str, prev: Option<&str>| ok(&chunk_compressed(t, &repo, dir, prev));
    let read = |dir: &str| std::fs::read(t.join(dir).join("chunks.tsv")).unwrap();
    let mut all = files_under(&repo);
    all.sort();
    for f in [&all[0], &all[all.len() / 2], &all[all.len() - 1]] {
        let mut data = std::fs::read(f).unwrap();
        data.extend_from_slice(b"one more line\n");
        std::fs::write(f, &data).unwrap();
    }
    let edited = chunk("edited", Some("first"));
    let scratch = chunk("scratch", None);
    assert_eq!(frames_copied(&scratch), 0, "{scratch}");
    let n = frames_copied(&edited);
    assert!(n >= 2, "{edited}");
    assert!(
        read("edited") == read("scratch"),
        "not the bytes of a run from scratch"
    );
    let lines = zstd::stream::decode_all(&read("edited")[..]).unwrap();
    let text = String::from_utf8(lines).unwrap();
    assert!(text.starts_with("#fsim chunks"), "{}", &text[..80]);
    assert!(text.lines().last().unwrap().starts_with('#'));
    assert_eq!(
        text.lines().filter(|l| !l.starts_with('#')).count() as u64,
        {
            let s = scratch.split(" chunks,").next().unwrap();
            s.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
        }
    );
    // The earlier run a re-run itself: its copied frames are copied again.
    let again = chunk("again", Some("edited"));
    assert!(frames_copied(&again) > n, "{again}");
    assert!(read("again") == read("scratch"));
    // A file gone: the ids after it move, no frame is copied.
    std::fs::remove_file(&all[1]).unwrap();
    let gone = chunk("gone", Some("again"));
    chunk("scratch2", None);
    assert_eq!(frames_copied(&gone), 0, "{gone}");
    assert!(read("gone") == read("scratch2"));
}

/// Earlier records damaged where a re-run would copy them without reading
/// them: a frame's announcement that gives other sizes, or another digest,
/// or a file cut inside a frame. The re-run stops with one line naming the
/// earlier records, leaves no output, and never writes records it did
/// not check.
#[test]
fn damaged_frames_of_earlier_records_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let t = t.path();
    let repo = first_compressed(t);
    let good = std::fs::read(t.join("first/chunks.tsv")).unwrap();
    let magic = [0x5e, 0x2a, 0x4d, 0x18];
    let meta = good.windows(4).position(|w| w == magic).unwrap();
    // The announcement's fields after the magic, size and tag: first,
    // last, records, sum (at 24 of the payload), bytes (at 40).
    let bump = |at: usize| {
        let mut d = good.clone();
        d[meta + 8 + at] ^= 1;
        d
    };
    let cut = good[..good.len() * 2 / 3].to_vec();
    for (what, data) in [("sizes", bump(40)), ("digest", bump(24)), ("cut", cut)] {
        let prev = format!("prev-{what}");
        std::fs::create_dir_all(t.join(&prev)).unwrap();
        std::fs::copy(t.join("first/files.tsv"), t.join(&prev).join("files.tsv")).unwrap();
        std::fs::write(t.join(&prev).join("chunks.tsv"), data).unwrap();
        let dir = format!("re-{what}");
        let out = chunk_compressed(t, &repo, &dir, Some(&prev));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: {err}");
        assert!(err.contains(&format!("{prev}/chunks.tsv")), "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
        assert!(!t.join(&dir).join("chunks.tsv").exists(), "{what}");
        let left: Vec<_> = std::fs::read_dir(t.join(&dir)).unwrap().collect();
        assert!(left.is_empty(), "{what}: {left:?}");
    }
}

#[test]
fn previous_runs_that_do_not_fit_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let work = t.path().join("w");
    pipeline(&repo, &work, &[]);
    let try_prev = |files: &str, chunks: &str, extra: &[&str]| {
        let mut c = fsim("fsim-chunk");
        c.current_dir(&work)
            .args(["-q", "-o", "new.tsv", "--files-out", "newf.tsv"])
            .args(["--previous", files, "--previous-chunks", chunks])
            .args(extra)
            .arg(&repo);
        let e = run_fail(c, None);
        assert!(!work.join("new.tsv").exists() && !work.join("newf.tsv").exists());
        e
    };
    assert_eq!(
        try_prev("files.tsv", "sorted.tsv", &[]),
        "fsim-chunk: sorted.tsv:1: this chunk file is sorted (its trailer comes first): give the unsorted chunks.tsv of the previous run, not sorted.tsv\n"
    );
    assert_eq!(
        try_prev("files.tsv", "chunks.tsv", &["--avg-size", "1000"]),
        "fsim-chunk: files.tsv:1: the previous run was chunked with avg=100 but this run uses avg=1000: its records cannot be reused\n"
    );
    assert_eq!(
        try_prev("chunks.tsv", "chunks.tsv", &[]),
        "fsim-chunk: chunks.tsv:1: expected a '#fsim files v4' header: a file table written by fsim-chunk --files-out\n"
    );
    // The records of another run (here of the repository's last file
    // alone, as file 0): the first file found does not add up.
    let all = files_under(&repo);
    let last = all.last().unwrap();
    let mut c = fsim("fsim-chunk");
    c.current_dir(&work)
        .args(["-q", "-o", "other.tsv", "--files-out", "otherf.tsv"])
        .arg(last);
    assert!(c.status().unwrap().success());
    // The sizes the records add up to: the files' views (prose as sentences).
    let view_len = |p: &Path| {
        let raw = std::fs::read(p).unwrap();
        fsim::content::view(&raw, &Default::default()).bytes.len() as u64
    };
    let first_size = view_len(&all[0]);
    assert_ne!(first_size, view_len(last));
    let e = try_prev("files.tsv", "other.tsv", &[]);
    assert!(
        e.starts_with("fsim-chunk: other.tsv: the chunk records of file 0 add up to ")
            && e.ends_with(&format!(
                " bytes but the file table files.tsv says {first_size}: the two files are not from the same run\n"
            )),
        "{e}"
    );
}
