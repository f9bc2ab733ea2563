//! Faults injected into the real binaries: a full disk while writing,
//! permission denied, and truncated or corrupted intermediate files for
//! every consuming stage.
//! (Kills of every stage at several points, resumed by make, are in
//! tests/driver/pipeline.rs and tests/driver/resume.rs.) Each failure must be one line
//! naming the file (and line), exit code 2, and no output left behind.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A clean pipeline run in `t/work`; returns the work folder.
fn clean_work(t: &Path) -> (PathBuf, PathBuf) {
    let (repo, _) = gen_repo(t, &[]);
    let work = t.join("work");
    pipeline(&repo, &work, &[]);
    (repo, work)
}

/// Every stage, with its arguments, writing `out.tsv` in the work folder.
fn stages(repo: &Path) -> Vec<(&'static str, Vec<String>)> {
    let r = repo.display().to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            "fsim-chunk",
            s(&["-q", "-o", "out.tsv", "--files-out", "out-files.tsv", &r]),
        ),
        ("fsim-sort", s(&["-q", "-o", "out.tsv", "chunks.tsv"])),
        (
            "fsim-partition",
            s(&["-q", "--files", "files.tsv", "-o", "out.tsv", "sorted.tsv"]),
        ),
        ("fsim-binpack", s(&["-q", "-o", "out.tsv", "partition.tsv"])),
        ("fsim-analyze", s(&["-q", "-o", "out.tsv", "bins.tsv"])),
        (
            "fsim-verify",
            s(&["-q", "--files", "files.tsv", "-o", "out.tsv", "pairs.tsv"]),
        ),
        (
            "fsim-report",
            s(&["-q", "--files", "files.tsv", "-o", "out.tsv", "pairs.tsv"]),
        ),
    ]
}

/// Names in `dir` other than the pipeline's own files.
fn extra_files(dir: &Path) -> Vec<String> {
    let known = [
        "files.tsv",
        "chunks.tsv",
        "sorted.tsv",
        "partition.tsv",
        "bins.tsv",
        "pairs.tsv",
        "verified.tsv",
        "report.json",
    ];
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !known.contains(&n.as_str()))
        .collect()
}

#[test]
fn full_disk_is_one_clear_error_and_leaves_nothing() {
    let t = tempfile::tempdir().unwrap();
    let (repo, work) = clean_work(t.path());
    for (prog, args) in stages(&repo) {
        let mut c = fsim(prog);
        c.current_dir(&work)
            .args(&args)
            .env("FSIM_TEST_ENOSPC", format!("{prog}:200"));
        let out = run_raw(c, None);
        assert_eq!(out.status.code(), Some(2), "{prog}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("{prog}: writing out.tsv: No space left on device (os error 28)\n")
        );
        assert_eq!(extra_files(&work), Vec::<String>::new(), "{prog}");
        // Space freed: the same command succeeds.
        let mut c = fsim(prog);
        c.current_dir(&work).args(&args);
        run_ok(c, None);
        for f in ["out.tsv", "out-files.tsv"] {
            let _ = std::fs::remove_file(work.join(f));
        }
    }
}

/// The ways an intermediate file goes bad.
enum Damage {
    /// The last line loses its end (a writer killed mid-line).
    CutLastLine,
    /// The trailer line is missing (cut at a line boundary).
    NoTrailer,
    /// A line of garbage replaces line 3.
    Garbage,
    /// One data record is duplicated (a plausible line, counts wrong).
    DuplicateRecord,
}

fn damage(data: &[u8], how: &Damage) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    match how {
        Damage::CutLastLine => data[..data.len() - 5].to_vec(),
        Damage::NoTrailer => {
            let i = lines.iter().rposition(|l| l.starts_with(b"#end")).unwrap();
            lines.remove(i);
            lines.concat()
        }
        Damage::Garbage => {
            lines[2] = b"this is not a record\n";
            lines.concat()
        }
        Damage::DuplicateRecord => {
            let i = lines.iter().rposition(|l| !l.starts_with(b"#")).unwrap();
            lines.insert(i, lines[i]);
            lines.concat()
        }
    }
}

fn line_count(data: &[u8]) -> usize {
    data.split_inclusive(|&b| b == b'\n').count()
}

#[test]
fn damaged_intermediate_files_stop_the_next_stage_with_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    let (repo, work) = clean_work(t.path());
    let stages = stages(&repo);
    // (consumer, its input, what a record of that file is).
    let cases: &[(&str, &str, &str)] = &[
        ("fsim-sort", "chunks.tsv", "expected a chunk record: 32 lowercase hex digits, a tab, a 10-digit file id, a tab, a length"),
        ("fsim-partition", "sorted.tsv", "expected a chunk record: 32 lowercase hex digits, a tab, a 10-digit file id, a tab, a length"),
        ("fsim-partition", "files.tsv", "expected a file record: id, size, mtime, content hash, type, view, raw size, view hash and path separated by tabs"),
        ("fsim-binpack", "partition.tsv", "expected a chunk record: 32 lowercase hex digits, a tab, a 10-digit file id, a tab, a length or an F line"),
        ("fsim-analyze", "bins.tsv", "expected a chunk record: 32 lowercase hex digits, a tab, a 10-digit file id, a tab, a length or an F line"),
        ("fsim-report", "pairs.tsv", "expected a pair record: file id a, file id b, size a, size b, bytes in common, shared chunks"),
    ];
    for &(prog, input, expected) in cases {
        let good = std::fs::read(work.join(input)).unwrap();
        let args = &stages.iter().find(|s| s.0 == prog).unwrap().1;
        for how in [
            Damage::CutLastLine,
            Damage::NoTrailer,
            Damage::Garbage,
            Damage::DuplicateRecord,
        ] {
            let bad = damage(&good, &how);
            std::fs::write(work.join("bad.tsv"), &bad).unwrap();
            let args: Vec<&str> = args
                .iter()
                .map(|a| if a == input { "bad.tsv" } else { a.as_str() })
                .collect();
            let mut c = fsim(prog);
            c.current_dir(&work).args(&args);
            let out = run_raw(c, None);
            assert_eq!(out.status.code(), Some(2), "{prog} {input}");
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            let n = line_count(&bad);
            let want: Vec<String> = match how {
                Damage::CutLastLine => vec![format!(
                    "bad.tsv:{n}: last line has no newline: the file is truncated"
                )],
                Damage::Garbage => vec![format!("bad.tsv:3: {expected}")],
                // Which check fires first depends on the stage (a missing
                // trailer, or counts that do not add up): any of these.
                Damage::NoTrailer => vec![
                    format!("bad.tsv:{n}: no '#end "),
                    "the file table is truncated".into(),
                ],
                Damage::DuplicateRecord => vec![
                    "read but the trailer announced".into(),
                    "files read but the trailer announced".into(),
                    "out of order".into(),
                    "not in increasing id order".into(),
                    "the file is truncated or was edited".into(),
                    "not sorted".into(),
                    "twice".into(),
                    "duplicate".into(),
                ],
            };
            assert!(
                err.starts_with(&format!("{prog}: ")) && err.lines().count() == 1,
                "{prog} {input}: {err}"
            );
            assert!(
                want.iter().any(|w| err.contains(w.as_str())),
                "{prog} on {input} damaged: {err}"
            );
            assert!(
                !work.join("out.tsv").exists(),
                "{prog} left an output behind"
            );
        }
    }
}

#[test]
fn records_from_a_run_with_other_parameters_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let (repo, work) = clean_work(t.path());
    let mut c = fsim("fsim-chunk");
    c.current_dir(&work)
        .args(["-q", "--avg-size", "1000", "-o", "c100.tsv"])
        .args(["--files-out", "f100.tsv"])
        .arg(&repo);
    run_ok(c, None);
    let mut mixed = read_records(&work.join("chunks.tsv"));
    let n = line_count(&mixed);
    mixed.extend(std::fs::read(work.join("c100.tsv")).unwrap());
    std::fs::write(work.join("mixed.tsv"), mixed).unwrap();
    let fail = |prog: &str, args: &[&str]| {
        let mut c = fsim(prog);
        c.current_dir(&work).args(args);
        let out = run_raw(c, None);
        assert_eq!(out.status.code(), Some(2));
        assert!(!work.join("out.tsv").exists());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert_eq!(
        fail("fsim-sort", &["-q", "-o", "out.tsv", "mixed.tsv"]),
        format!("fsim-sort: mixed.tsv:{}: records from runs with different parameters are mixed: avg=1000 here but avg=100 before\n", n + 1)
    );
    assert_eq!(
        fail("fsim-partition", &["-q", "--files", "f100.tsv", "-o", "out.tsv", "sorted.tsv"]),
        "fsim-partition: sorted.tsv:2: chunking parameters differ from the file table f100.tsv: avg=100 here but avg=1000 before (in the file table)\n"
    );
    assert_eq!(
        fail("fsim-report", &["-q", "--files", "f100.tsv", "-o", "out.tsv", "pairs.tsv"]),
        "fsim-report: pairs.tsv:1: pairs and file table f100.tsv come from runs with different parameters: avg=100 here but avg=1000 before\n"
    );
}

/// A `make report` that dies on a full disk resumes once space is back.
#[test]
fn make_resumes_after_a_full_disk() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let make = |work: &Path, env: Option<&str>| {
        let mut c = make_report_cmd(&repo, work, &[]);
        if let Some(e) = env {
            c.env("FSIM_TEST_ENOSPC", e);
        }
        run_raw(c, None)
    };
    let clean = t.path().join("clean");
    assert!(make(&clean, None).status.success());
    let work = t.path().join("full");
    let out = make(&work, Some("fsim-analyze:100"));
    assert!(!out.status.success());
    assert!(!work.join("pairs.tsv").exists() && work.join("bins.tsv").exists());
    assert!(make(&work, None).status.success());
    for f in ["report.txt", "report.json"] {
        assert_eq!(
            std::fs::read(work.join(f)).unwrap(),
            std::fs::read(clean.join(f)).unwrap()
        );
    }
}

/// Restores the modes of the denied entries, so that the temp dir can be
/// removed (by a non-root owner) even when an assertion failed.
struct Modes(Vec<PathBuf>);

impl Drop for Modes {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        for p in &self.0 {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755));
        }
    }
}

/// Permission denied on a file and on a directory: each is warned about by
/// name, counted as skipped, the other files are chunked, exit status 0.
///
/// Root bypasses permissions, so as root fsim-chunk runs as `nobody`
/// (uid/gid 65534, no supplementary groups) through `setpriv` (util-linux);
/// the test fails, rather than pass without testing, when setpriv is
/// missing. The binary is copied into the test dir and run from there with
/// relative paths, so that nobody needs no access to the build or temp
/// directories above it. As another user, chmod alone denies.
#[test]
fn permission_denied_on_files_and_directories_is_warned_and_skipped() {
    use std::fs;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    const NOBODY: u32 = 65534;
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let mode = |p: &Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    let t = dir.join("t");
    fs::create_dir_all(t.join("locked")).unwrap();
    for (name, data) in [
        ("a", &b"aaa"[..]),
        ("locked/inside", b"never read"),
        ("secret", b"hidden"),
        ("z", b"zzz"),
    ] {
        fs::write(t.join(name), data).unwrap();
        mode(&t.join(name), 0o644);
    }
    mode(&t, 0o755);
    let _restore = Modes(vec![t.join("locked"), t.join("secret")]);
    mode(&t.join("locked"), 0o000);
    mode(&t.join("secret"), 0o000);
    let is_root = fs::metadata(dir).unwrap().uid() == 0;
    let mut cmd = if is_root {
        let setpriv = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect(
                "running as root, where chmod 000 denies nothing: this test needs \
                 setpriv (util-linux) to run fsim-chunk as an unprivileged user",
            );
        fs::copy(bin("fsim-chunk"), dir.join("fsim-chunk")).unwrap();
        mode(&dir.join("fsim-chunk"), 0o755);
        std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY)).unwrap();
        let mut c = Command::new(setpriv);
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            "./fsim-chunk",
        ]);
        c
    } else {
        fsim("fsim-chunk")
    };
    cmd.current_dir(dir).args(["-o", "c.tsv", "t"]);
    let out = run_ok(cmd, None);
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert_eq!(
        lines[..2],
        [
            "fsim-chunk: warning: t/locked: Permission denied (os error 13)",
            "fsim-chunk: warning: t/secret: Permission denied (os error 13)",
        ],
        "{err}"
    );
    assert!(
        lines[2]
            .starts_with("fsim-chunk: 4 files, 6 bytes, 2 chunks, 2 skipped, 2 read, 0 reused, "),
        "{err}"
    );
    let table = fs::read_to_string(dir.join("files.tsv")).unwrap();
    let rows: Vec<(&str, &str)> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| (&l[..10], l.rsplit('\t').next().unwrap()))
        .collect();
    // What could not be read has an entry with no bytes, for the reports.
    assert_eq!(
        rows,
        [
            ("0000000000", "t/a"),
            ("0000000001", "t/locked"),
            ("0000000002", "t/secret"),
            ("0000000003", "t/z")
        ]
    );
    assert_eq!(table.matches("\traw^denied\t").count(), 2, "{table}");
    assert!(
        table.lines().last().unwrap().contains("\tskipped=2\t"),
        "{table}"
    );
    let chunks = fs::read_to_string(dir.join("c.tsv")).unwrap();
    let files: Vec<&str> = chunks
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(files, ["0000000000", "0000000003"]);
    if is_root {
        // Written by the unprivileged run, not by root.
        assert_eq!(fs::metadata(dir.join("c.tsv")).unwrap().uid(), NOBODY);
    }
}
