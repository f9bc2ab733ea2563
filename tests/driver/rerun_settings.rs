//! Re-runs are never silently stale: `fsim` (and `make report`) run again
//! with other settings recompute the stages those settings change, and
//! only those; run again on a folder whose files changed, fsim reads what
//! changed; a bad setting is refused before any work; a signal to fsim
//! stops every process of the run, and the same command resumes. Every
//! re-run's reports are the bytes of a fresh run with the same settings.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `fsim ARGS` (the test build's, the stages beside it) run in `cwd`.
fn fsim_in(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin("fsim"));
    c.current_dir(cwd).env_remove("MAKEFLAGS").args(args);
    c
}

/// The stage programs make ran (its commands on stdout), in order.
fn stages_run(o: &Output) -> Vec<String> {
    let mut out = Vec::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        for w in l.split_whitespace() {
            let Some(name) = Path::new(w).file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if name.starts_with("fsim-") && name != "fsim-reuse" && !name.ends_with(".tsv") {
                out.push(name.to_string());
                break;
            }
        }
    }
    out
}

/// Assert the named files of two work folders are the same bytes.
fn assert_same(a: &Path, b: &Path, files: &[&str]) {
    for f in files {
        let (x, y) = (std::fs::read(a.join(f)), std::fs::read(b.join(f)));
        assert!(
            x.as_ref().ok() == y.as_ref().ok() && x.is_ok(),
            "{f}: {a:?} and {b:?} differ"
        );
    }
}

/// The reports of a run whose threshold was raised after it finished
/// against a fresh run's: the same bytes, but for the threshold fsim-verify
/// worked at, which report.json records (the earlier, lower one: every
/// pair above the new threshold was verified).
fn assert_same_raised(raised: &Path, fresh: &Path) {
    assert_same(raised, fresh, &["report.txt"]);
    let json = |w: &Path| {
        let text = std::fs::read_to_string(w.join("report.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap();
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.contains("verify-min-percent"))
            .map(str::to_string)
            .collect();
        lines
    };
    assert_eq!(json(raised), json(fresh));
}

/// A fresh `make report` in the checkout into `work`, with these settings.
fn fresh(repo: &Path, work: &Path, vars: &[&str]) {
    run_ok(make_report_cmd(repo, work, vars), None);
}

const REPORTS: [&str; 2] = ["report.txt", "report.json"];

fn folder(p: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&p).unwrap();
    p
}

#[test]
fn other_settings_rerun_exactly_the_stages_they_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let user = folder(tmp.path().join("user"));
    let r = repo.to_str().unwrap();
    let work = user.join("fsim-work");
    run_ok(fsim_in(&user, &[r]), None);
    let again = run_ok(fsim_in(&user, &[r]), None);
    assert_eq!(stages_run(&again), Vec::<String>::new());

    // A higher threshold: the reports only, with the new threshold.
    let o = run_ok(fsim_in(&user, &["MIN_PERCENT=90", r]), None);
    assert_eq!(stages_run(&o), ["fsim-report"]);
    let txt = std::fs::read_to_string(work.join("report.txt")).unwrap();
    assert!(txt.contains(">= 90%"), "{txt}");
    fresh(&repo, &tmp.path().join("p90"), &["MIN_PERCENT=90"]);
    assert_same_raised(&work, &tmp.path().join("p90"));

    // Other report filters: the reports only.
    let filters = ["MIN_PERCENT=90", "REPORT_FILTERS=--same-type", r];
    let o = run_ok(fsim_in(&user, &filters), None);
    assert_eq!(stages_run(&o), ["fsim-report"]);
    let vars = &filters[..2];
    fresh(&repo, &tmp.path().join("filters"), vars);
    assert_same_raised(&work, &tmp.path().join("filters"));

    // A lower threshold: verified again (analysis bounds the line pairs by it).
    let o = run_ok(fsim_in(&user, &["MIN_PERCENT=30", r]), None);
    assert_eq!(
        stages_run(&o),
        ["fsim-analyze", "fsim-verify", "fsim-report"]
    );
    fresh(&repo, &tmp.path().join("p30"), &["MIN_PERCENT=30"]);
    assert_same(
        &work,
        &tmp.path().join("p30"),
        &["verified.tsv", REPORTS[0], REPORTS[1]],
    );

    // Another chunk size: from the chunking on.
    let o = run_ok(fsim_in(&user, &["MIN_PERCENT=30", "AVG=1000", r]), None);
    assert_eq!(stages_run(&o)[0], "fsim-chunk");
    let txt = std::fs::read_to_string(work.join("report.txt")).unwrap();
    assert!(txt.contains("tttd avg 1000 bytes"), "{txt}");
    let avg = tmp.path().join("avg");
    fresh(&repo, &avg, &["MIN_PERCENT=30", "AVG=1000"]);
    assert_same(
        &work,
        &avg,
        &["files.tsv", "verified.tsv", REPORTS[0], REPORTS[1]],
    );

    // make report in the checkout behaves alike: a setting of its own.
    let o = run_ok(
        make_report_cmd(
            &repo,
            &avg,
            &["MIN_PERCENT=30", "AVG=1000", "FORMATS=txt json tsv"],
        ),
        None,
    );
    assert!(
        stages_run(&o).is_empty() || stages_run(&o) == ["fsim-report"],
        "{:?}",
        stages_run(&o)
    );
    assert!(avg.join("report.tsv").is_file());
    let o = run_ok(
        make_report_cmd(
            &repo,
            &avg,
            &[
                "MIN_PERCENT=30",
                "AVG=1000",
                "FORMATS=txt json tsv",
                "CAPACITY=64M",
            ],
        ),
        None,
    );
    // The partition the bin packing reads was removed once consumed
    // (scratch space): it is made again from the chunk records first.
    assert_eq!(
        stages_run(&o),
        [
            "fsim-sort",
            "fsim-partition",
            "fsim-binpack",
            "fsim-analyze",
            "fsim-verify",
            "fsim-report"
        ]
    );
    assert!(!avg.join("sorted.tsv").exists() && !avg.join("partition.tsv").exists());
}

/// Scratch space: the sorted records and the partition are removed once
/// the stage after them has written its output, and a finished run run
/// again remakes nothing; KEEP=1 keeps them, with the same reports.
#[test]
fn consumed_intermediates_are_removed_unless_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let work = tmp.path().join("work");
    run_ok(make_report_cmd(&repo, &work, &[]), None);
    for f in ["sorted.tsv", "partition.tsv"] {
        assert!(!work.join(f).exists(), "{f} left in the work folder");
    }
    for f in [
        "files.tsv",
        "chunks.tsv",
        "bins.tsv",
        "pairs.tsv",
        "verified.tsv",
    ] {
        assert!(work.join(f).is_file(), "{f} removed");
    }
    let o = run_ok(make_report_cmd(&repo, &work, &[]), None);
    assert!(stages_run(&o).is_empty(), "{:?}", stages_run(&o));
    let kept = tmp.path().join("kept");
    run_ok(make_report_cmd(&repo, &kept, &["KEEP=1"]), None);
    for f in ["sorted.tsv", "partition.tsv"] {
        assert!(kept.join(f).is_file(), "{f} not kept");
    }
    assert_same(
        &work,
        &kept,
        &[
            "chunks.tsv",
            "bins.tsv",
            "verified.tsv",
            REPORTS[0],
            REPORTS[1],
        ],
    );
}

#[test]
fn a_bad_setting_is_refused_before_work_without_resume_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let user = folder(tmp.path().join("user"));
    let r = repo.to_str().unwrap();
    for (bad, said) in [
        (
            "FORMATS=pdf",
            "FORMATS=pdf: expected one or more of txt json tsv html xlsx sh",
        ),
        ("MEMORY=lots", "MEMORY=lots: expected a size such as 256M"),
        ("AVG=1", "AVG=1: expected an average chunk size from 32"),
        (
            "METHOD=md5",
            "METHOD=md5: unknown method \"md5\": expected tttd, bsw",
        ),
        ("CONTENT=text", "CONTENT=text: expected auto or raw"),
        ("VERIFY=2", "VERIFY=2: expected 0 or 1"),
        ("SHARDS=0", "SHARDS=0: expected a whole number, 1 or more"),
    ] {
        let o = run_raw(fsim_in(&user, &[bad, r]), None);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {e}");
        assert_eq!(e.lines().count(), 1, "{bad}: {e}");
        assert!(e.starts_with(&format!("fsim: {said}")), "{bad}: {e}");
        assert!(!e.contains("resume") && !e.contains("again"), "{e}");
        assert!(
            !user.join("fsim-work").exists(),
            "{bad}: the work folder was made"
        );
    }

    // make report refuses it at once, in one line, before the work folder.
    let work = tmp.path().join("work");
    let o = run_raw(make_report_cmd(&repo, &work, &["FORMATS=txt pdf"]), None);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("FORMATS=txt pdf: expected any of txt json tsv html xlsx sh"),
        "{e}"
    );
    assert!(!work.exists() && o.stdout.is_empty());
}

#[test]
fn a_folder_changed_after_a_finished_run_is_read_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let user = folder(tmp.path().join("user"));
    let r = repo.to_str().unwrap();
    let work = user.join("fsim-work");
    run_ok(fsim_in(&user, &[r]), None);
    let tag = std::fs::read_to_string(work.join("CACHEDIR.TAG")).unwrap();
    assert_eq!(tag, fsim::driver::CACHEDIR_TAG);

    // A file added: in the re-run's report, only it read.
    let some = first_file(&repo);
    let added = repo.join("added-copy.txt");
    std::fs::copy(&some, &added).unwrap();
    let o = run_ok(fsim_in(&user, &[r]), None);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("1 read"), "{e}");
    let txt = std::fs::read_to_string(work.join("report.txt")).unwrap();
    assert!(txt.contains("added-copy.txt"), "{txt}");
    assert!(!work.join("previous").exists());
    let one = tmp.path().join("fresh-1");
    fresh(&repo, &one, &[]);
    assert_same(
        &work,
        &one,
        &["files.tsv", "verified.tsv", REPORTS[0], REPORTS[1]],
    );
    // Run again: nothing changed, nothing run.
    assert!(stages_run(&run_ok(fsim_in(&user, &[r]), None)).is_empty());

    // A file removed and one edited, with another setting too.
    std::fs::remove_file(&added).unwrap();
    let mut text = std::fs::read(&some).unwrap();
    text.extend_from_slice(b"\none more line\n");
    std::fs::write(&some, text).unwrap();
    let o = run_ok(fsim_in(&user, &["MIN_PERCENT=60", r]), None);
    assert_eq!(stages_run(&o)[0], "fsim-chunk");
    // Its own earlier folder's records go once the new ones are written.
    let made = String::from_utf8_lossy(&o.stdout);
    for rm in [
        "rm -f fsim-work/previous/bins.tsv fsim-work/previous/plan.tsv",
        "rm -f fsim-work/previous/chunks.tsv",
    ] {
        assert!(made.contains(rm), "{made}");
    }
    let txt = std::fs::read_to_string(work.join("report.txt")).unwrap();
    assert!(!txt.contains("added-copy.txt"), "{txt}");
    let two = tmp.path().join("fresh-2");
    fresh(&repo, &two, &["MIN_PERCENT=60"]);
    assert_same(
        &work,
        &two,
        &["files.tsv", "verified.tsv", REPORTS[0], REPORTS[1]],
    );

    // Another chunking with a changed folder: everything again, the same bytes.
    std::fs::copy(&some, repo.join("added-again.txt")).unwrap();
    run_ok(fsim_in(&user, &["MIN_PERCENT=60", "AVG=200", r]), None);
    let three = tmp.path().join("fresh-3");
    fresh(&repo, &three, &["MIN_PERCENT=60", "AVG=200"]);
    assert_same(
        &work,
        &three,
        &["files.tsv", "verified.tsv", REPORTS[0], REPORTS[1]],
    );
}

/// A work folder from a fsim that chunked otherwise (an earlier version of
/// the views, another PDF extractor): its headers and its chunk settings
/// without this version's parameters, as such a fsim wrote them.
fn as_if_chunked_by_another_version(work: &Path) {
    for f in ["files.tsv", "chunks.tsv"] {
        let text = String::from_utf8(read_records(&work.join(f))).unwrap();
        let (head, rest) = text.split_once('\n').unwrap();
        assert!(head.contains("\tviews=6"), "{head}");
        let old = head.replace("\tviews=6", "");
        std::fs::write(work.join(f), format!("{old}\n{rest}")).unwrap();
    }
    let s = std::fs::read_to_string(work.join("settings/chunk")).unwrap();
    assert!(s.contains("\nparams=method=tttd\t"), "{s}");
    let old: String = s
        .lines()
        .filter(|l| !l.starts_with("params="))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(work.join("settings/chunk"), old).unwrap();
}

/// A fsim that chunks otherwise than the one that made the work folder
/// (upgraded, or pdftotext installed since) chunks every file again, on
/// a changed folder as on an unchanged one, rather than refusing the
/// earlier records or mixing them with its own: the same bytes as a
/// fresh run.
#[test]
fn a_work_folder_chunked_otherwise_is_chunked_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let user = folder(tmp.path().join("user"));
    let r = repo.to_str().unwrap();
    let work = user.join("fsim-work");
    run_ok(fsim_in(&user, &[r]), None);
    let fresh_work = tmp.path().join("fresh");
    fresh(&repo, &fresh_work, &[]);

    // Unchanged folder: chunked again.
    as_if_chunked_by_another_version(&work);
    let o = run_ok(fsim_in(&user, &[r]), None);
    assert_eq!(
        stages_run(&o).first().map(String::as_str),
        Some("fsim-chunk")
    );
    assert_same(&work, &fresh_work, &["files.tsv", "chunks.tsv", REPORTS[0]]);

    // A changed folder: its earlier records are not offered to fsim-chunk
    // (which would refuse them), every file is read.
    as_if_chunked_by_another_version(&work);
    std::fs::copy(first_file(&repo), repo.join("added-copy.txt")).unwrap();
    let o = run_ok(fsim_in(&user, &[r]), None);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!e.contains("cannot be reused"), "{e}");
    let again = tmp.path().join("fresh-2");
    fresh(&repo, &again, &[]);
    assert_same(&work, &again, &["files.tsv", "chunks.tsv", REPORTS[0]]);
}

/// The first file under `dir`, in name order.
fn first_file(dir: &Path) -> PathBuf {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let file = entries.iter().find(|p| p.is_file()).cloned();
    file.unwrap_or_else(|| first_file(entries.iter().find(|p| p.is_dir()).unwrap()))
}

/// `fsim .` in the folder: its own work folder inside is no change.
#[test]
fn the_work_folder_inside_the_folder_is_no_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    run_ok(fsim_in(&repo, &["."]), None);
    let o = run_ok(fsim_in(&repo, &["."]), None);
    assert!(stages_run(&o).is_empty(), "{:?}", stages_run(&o));
}

/// The walk options of METHOD_OPTS (exclusions, sizes) are the stat
/// walk's too: a file they leave out is no change, so a finished run is
/// not read again; a new file they admit is.
#[test]
fn walk_options_are_the_stat_walks() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    std::fs::write(repo.join("left-out.log"), "a log line\n").unwrap();
    std::fs::write(repo.join("tiny.txt"), "x").unwrap();
    let user = folder(tmp.path().join("user"));
    let run = || {
        let o = run_ok(
            fsim_in(
                &user,
                &[
                    "METHOD_OPTS=--exclude '*.log' --min-size=2",
                    repo.to_str().unwrap(),
                ],
            ),
            None,
        );
        stages_run(&o)
    };
    assert_eq!(run()[0], "fsim-chunk");
    let table = std::fs::read_to_string(user.join("fsim-work/files.tsv")).unwrap();
    assert!(!table.contains("left-out.log") && !table.contains("tiny.txt"));
    let trailer = table.lines().last().unwrap();
    assert!(
        trailer.ends_with("\tleft-out-by=--exclude=*.log --min-size=2"),
        "{trailer}"
    );
    let txt = std::fs::read_to_string(user.join("fsim-work/report.txt")).unwrap();
    assert!(
        txt.contains(" files or folders left out by --exclude=*.log --min-size=2"),
        "{txt}"
    );
    assert!(
        run().is_empty(),
        "the left-out files were taken for a change"
    );
    std::fs::write(repo.join("new.txt"), "a new file\n").unwrap();
    assert_eq!(run()[0], "fsim-chunk");
}

/// The processes whose command line or current folder names `dir`.
fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_str().unwrap();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = e.path();
        if !e
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        let cmd = std::fs::read(p.join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let cwd = std::fs::read_link(p.join("cwd")).unwrap_or_default();
        if cmd.contains(needle) || cwd.starts_with(dir) {
            found.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
        }
    }
    found
}

/// Each process under `dir`: (its description, its state letter, its
/// pid, its parent's pid), from `/proc/PID/stat`.
fn states_under(dir: &Path) -> Vec<(String, char, u32, u32)> {
    processes_under(dir)
        .into_iter()
        .filter_map(|p| {
            let pid = p.split(':').next()?.to_string();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let mut f = stat.rsplit_once(") ")?.1.split(' ');
            let state = f.next()?.chars().next()?;
            let ppid = f.next()?.parse().ok()?;
            Some((p, state, pid.parse().ok()?, ppid))
        })
        .collect()
}

/// Whether every process is stopped: in state 'T', or in 'D' with a
/// stopped child. make starts a program with vfork: a child stopped
/// before its exec holds its parent in uninterruptible sleep until it is
/// continued, so the parent cannot run either.
fn all_stopped(ps: &[(String, char, u32, u32)]) -> bool {
    !ps.is_empty()
        && ps.iter().all(|&(_, state, pid, _)| {
            state == 'T'
                || (state == 'D'
                    && ps
                        .iter()
                        .any(|&(_, s, _, parent)| parent == pid && s == 'T'))
        })
}

/// A generated repository of 6,000 files and `fsim JOBS=2` on it, run
/// from the folder `user`, once make runs a stage: (the temporary folder,
/// the repository, `user`, fsim's process).
fn fsim_running_a_stage() -> (tempfile::TempDir, PathBuf, PathBuf, std::process::Child) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let mut gen = fsim("fsim-gen");
    gen.args(["--bulk", "6000"]).arg(&repo);
    run_ok(gen, None);
    let user = folder(tmp.path().join("user"));
    let mut c = fsim_in(&user, &["JOBS=2", repo.to_str().unwrap()]);
    c.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let start = Instant::now();
    while !processes_under(&user)
        .iter()
        .chain(processes_under(&repo).iter())
        .any(|p| p.contains("fsim-chunk") || p.contains("fsim-sort"))
    {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no stage started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "fsim ended before a stage ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (tmp, repo, user, child)
}

/// Ctrl-Z (SIGTSTP to fsim) stops every process of the run; SIGCONT to
/// fsim lets them all go on, and the run ends as an uninterrupted one.
#[test]
fn sigtstp_suspends_every_process_and_sigcont_resumes_them() {
    let (tmp, repo, user, mut child) = fsim_running_a_stage();
    // SAFETY: kill with a child's pid and a valid signal.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTSTP) }, 0);
    let start = Instant::now();
    loop {
        let states = states_under(tmp.path());
        if all_stopped(&states) {
            break;
        }
        // A process in uninterruptible sleep ('D') takes the stop only
        // when its I/O ends, which under CI's disk load (a 4 GiB sparse
        // file written by another test) took more than 10 s once.
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "not all stopped: {states:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Stopped: nothing runs for a while.
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none());
    assert!(all_stopped(&states_under(tmp.path())));
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGCONT) }, 0);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let whole = tmp.path().join("whole");
    fresh(&repo, &whole, &["JOBS=2"]);
    assert_same(&user.join("fsim-work"), &whole, &REPORTS);
}

#[test]
fn sigterm_stops_every_process_of_the_run_and_the_rerun_resumes() {
    let (tmp, repo, user, mut child) = fsim_running_a_stage();
    let r = repo.to_str().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill with a child's pid and a valid signal.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status}");
    let start = Instant::now();
    loop {
        let left = processes_under(tmp.path());
        if left.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still running: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let work = user.join("fsim-work");
    assert!(
        !work.join("report.txt").exists(),
        "the run finished before the signal"
    );

    // The same command resumes; the reports are an uninterrupted run's.
    run_ok(fsim_in(&user, &["JOBS=2", r]), None);
    let whole = tmp.path().join("whole");
    fresh(&repo, &whole, &["JOBS=2"]);
    assert_same(
        &work,
        &whole,
        &["files.tsv", "verified.tsv", REPORTS[0], REPORTS[1]],
    );
}

/// Settings files only name the settings that are set: a fsim that adds a
/// setting, empty by default, keeps the work folders of the fsim before it
/// (which wrote every setting, `AGAINST=` and `NEW_SETTING=` included)
/// instead of chunking them again, on an unchanged folder and on a changed
/// one, where the earlier run's records are reused.
#[test]
fn an_empty_setting_added_since_keeps_the_work_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let user = folder(tmp.path().join("user"));
    let r = repo.to_str().unwrap();
    let work = user.join("fsim-work");
    run_ok(fsim_in(&user, &["MIN_PERCENT=60", r]), None);
    let chunk = std::fs::read_to_string(work.join("settings/chunk")).unwrap();
    assert!(
        !chunk.contains("AGAINST="),
        "an empty setting written: {chunk}"
    );
    assert!(chunk.contains("\nparams="), "{chunk}");
    let report = std::fs::read_to_string(work.join("settings/report")).unwrap();
    assert_eq!(report, "MIN_PERCENT=60\n");
    let as_before = || {
        for e in std::fs::read_dir(work.join("settings")).unwrap() {
            let p = e.unwrap().path();
            let s = std::fs::read_to_string(&p).unwrap();
            // Written as then: the file's time is the earlier run's.
            let then = std::fs::metadata(&p).unwrap().modified().unwrap();
            std::fs::write(&p, format!("AGAINST=\nNEW_SETTING=\n{s}")).unwrap();
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(then).unwrap();
        }
    };
    as_before();
    assert!(stages_run(&run_ok(fsim_in(&user, &["MIN_PERCENT=60", r]), None)).is_empty());

    as_before();
    std::fs::copy(first_file(&repo), repo.join("added-copy.txt")).unwrap();
    let o = run_ok(fsim_in(&user, &["MIN_PERCENT=60", r]), None);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("1 read"), "the earlier records not reused: {e}");
    let fresh_work = tmp.path().join("fresh");
    fresh(&repo, &fresh_work, &["MIN_PERCENT=60"]);
    assert_same(
        &work,
        &fresh_work,
        &["files.tsv", "verified.tsv", REPORTS[0], REPORTS[1]],
    );
}

/// fsim's own re-run drops its earlier bins before the chunking, as its
/// `WORK/previous` carries fsim's tag: a `fsim-chunk` in `BIN` that looks
/// before it chunks finds the earlier file table there (read for the
/// unchanged files) and the earlier bins gone. The reports are a fresh
/// run's.
#[test]
fn fsims_own_rerun_drops_its_earlier_bins_before_the_chunking() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let user = folder(tmp.path().join("user"));
    let prev = user.join("fsim-work/previous");
    let (stages, log) = (folder(tmp.path().join("bin")), tmp.path().join("seen"));
    for e in std::fs::read_dir(bin_dir()).unwrap() {
        let name = e.unwrap().file_name();
        if name
            .to_str()
            .is_some_and(|n| n.starts_with("fsim-") && n != "fsim-chunk")
        {
            symlink(bin_dir().join(&name), stages.join(&name)).unwrap();
        }
    }
    let look = format!(
        "#!/bin/sh\ncase \"$*\" in *--files-out*)\n  for f in files.tsv bins.tsv; do [ -e '{p}'/$f ] && echo $f; done >> '{log}'\n  echo chunked >> '{log}' ;;\nesac\nexec '{real}' \"$@\"\n",
        p = prev.display(),
        log = log.display(),
        real = bin("fsim-chunk").display()
    );
    std::fs::write(stages.join("fsim-chunk"), look).unwrap();
    std::fs::set_permissions(
        stages.join("fsim-chunk"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let (b, r) = (format!("BIN={}", stages.display()), repo.to_str().unwrap());
    run_ok(fsim_in(&user, &[&b, r]), None);
    let mut text = std::fs::read(first_file(&repo)).unwrap();
    text.extend_from_slice(b"\none more line\n");
    std::fs::write(first_file(&repo), text).unwrap();
    run_ok(fsim_in(&user, &[&b, r]), None);
    // A redo stopped by an earlier fsim, whose previous has no tag: the
    // same command tags it and drops its bins.
    let work = user.join("fsim-work");
    std::fs::create_dir(&prev).unwrap();
    std::fs::create_dir(prev.join("settings")).unwrap();
    for e in std::fs::read_dir(work.join("settings")).unwrap() {
        let name = e.unwrap().file_name();
        let to = prev.join("settings").join(&name);
        std::fs::copy(work.join("settings").join(&name), to).unwrap();
    }
    for f in ["files.tsv", "chunks.tsv", "bins.tsv", "verified.tsv"] {
        std::fs::copy(work.join(f), prev.join(f)).unwrap();
    }
    std::fs::remove_file(work.join("chunks.tsv")).unwrap();
    run_ok(fsim_in(&user, &[&b, r]), None);
    let seen = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        seen, "chunked\nfiles.tsv\nchunked\nfiles.tsv\nchunked\n",
        "what fsim-chunk found in previous before it chunked"
    );
    assert!(!prev.exists());
    let fresh_run = tmp.path().join("fresh");
    fresh(&repo, &fresh_run, &[]);
    assert_same(
        &user.join("fsim-work"),
        &fresh_run,
        &["files.tsv", "verified.tsv", REPORTS[0], REPORTS[1]],
    );
}
