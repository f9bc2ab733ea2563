//! The installed command: `make install PREFIX=…` puts every
//! program in PREFIX/bin, and `fsim FOLDER`, run from an empty folder with
//! only those programs and the system tools the makefile uses on PATH,
//! writes the same reports, byte for byte, as `make report` in the
//! checkout with the same settings; killed, it resumes at the stage that
//! was killed; run again it does nothing; a folder it cannot read is
//! refused in one line before anything is written.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::SystemTime;

/// The system tools `make report` needs besides the fsim programs (make
/// itself, and what its recipes and `$(shell ...)` calls run; /bin/sh is
/// make's shell by its absolute path).
const SYSTEM_TOOLS: [&str; 7] = ["make", "mkdir", "cat", "awk", "seq", "nproc", "rm"];

/// The PATH of an installed fsim, the same for every test of this file:
/// `make install` copies every program (1.3 GB of debug binaries), so it
/// runs once, into a folder of the target directory that the next run
/// replaces (a temporary folder would be left behind by the static).
fn installed() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install-test");
        let _ = std::fs::remove_dir_all(&dir);
        install(&dir)
    })
}

/// `make install PREFIX=<dir>/prefix` of the test's own build (BIN), and a
/// folder of links to the system tools; returns the PATH made of the two.
fn install(dir: &Path) -> String {
    let prefix = dir.join("prefix");
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .env_remove("MAKEFLAGS")
        .arg("--no-print-directory")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("PREFIX={}", prefix.display()))
        .arg("install");
    run_ok(c, None);
    let bin = prefix.join("bin");
    for p in [
        "fsim",
        "fsim-chunk",
        "fsim-report",
        "fsim-merge",
        "fsim-pdftext",
    ] {
        assert!(bin.join(p).is_file(), "make install: no {p} in {bin:?}");
    }
    // The generators of test and benchmark trees are not the user's.
    for p in ["fsim-gen", "fsim-eval", "fsim-docs"] {
        assert!(!bin.join(p).exists(), "make install: {p} installed");
    }
    man_pages_and_completions(&prefix);
    let doc = prefix.join("share/doc/fsim");
    assert!(!doc.join("docs/measurements").exists());
    for d in [
        "README.md",
        "docs/usage.md",
        "docs/README.md",
        "docs/images/report-html.png",
    ] {
        assert!(
            prefix.join("share/doc/fsim").join(d).is_file(),
            "make install: no {d}"
        );
    }

    let tools = dir.join("system-tools");
    std::fs::create_dir_all(&tools).unwrap();
    for t in SYSTEM_TOOLS {
        let found = ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join(t))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no {t} on this system"));
        std::os::unix::fs::symlink(found, tools.join(t)).unwrap();
    }
    // catdoc's programs, where the system has them, as the checkout's run
    // finds them: both record the same `office=` (none when all three).
    for t in ["catdoc", "xls2csv", "catppt"] {
        if let Some(found) = ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .map(|d| Path::new(d).join(t))
            .find(|p| p.exists())
        {
            std::os::unix::fs::symlink(found, tools.join(t)).unwrap();
        }
    }
    format!("{}:{}", bin.display(), tools.display())
}

/// `fsim ARGS` as a user runs it: in `cwd`, with PATH = `path` only.
fn fsim_cmd(cwd: &Path, path: &str, args: &[&str]) -> Command {
    let exe = path.split(':').next().unwrap();
    let mut c = Command::new(Path::new(exe).join("fsim"));
    c.current_dir(cwd)
        .env_clear()
        .env("PATH", path)
        .env("HOME", cwd)
        .args(args);
    c
}

fn empty_folder(p: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Every file under `dir` and its modification time.
fn mtimes(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(mtimes(&p));
        } else {
            let t = std::fs::metadata(&p).unwrap().modified().unwrap();
            out.push((p, t));
        }
    }
    out.sort();
    out
}

/// The names of the temporary files (`*.tmp`) under `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    mtimes(dir)
        .into_iter()
        .filter_map(|(p, _)| p.file_name()?.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a run showed: make's commands (stdout), then the stages' lines.
fn shown(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// One line on stderr, `fsim: ...` with `needle` in it, a non-zero exit.
fn assert_one_line_error(o: &Output, needle: &str) {
    let e = stderr(o);
    assert!(!o.status.success(), "exit 0 with stderr {e}");
    assert_eq!(e.lines().count(), 1, "not one line: {e}");
    assert!(e.starts_with("fsim: ") && e.contains(needle), "{e}");
}

#[test]
fn installed_fsim_writes_make_reports_bytes_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let path = installed();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let user = empty_folder(tmp.path().join("user"));
    // Settings that change how make runs (shards, several report
    // processes) and what it writes (formats), as make report takes them.
    let settings = ["SHARDS=2", "JOBS=2", "MEMORY=64M", "FORMATS=txt json tsv"];
    let mut args: Vec<&str> = settings.to_vec();
    let repo_arg = repo.to_str().unwrap();
    args.push(repo_arg);

    // Killed in fsim-verify (like kill -9, once it has written 100 bytes):
    // one closing line, the finished stages kept, nothing half-written.
    let mut killed = fsim_cmd(&user, path, &args);
    killed.env("FSIM_TEST_ABORT", "fsim-verify:100");
    let o = run_raw(killed, None);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.trim_end()
            .lines()
            .last()
            .unwrap_or_default()
            .starts_with("fsim: make report stopped")
            && e.contains("run the same command again to resume"),
        "{e}"
    );
    let work = user.join("fsim-work");
    assert!(work.join("pairs.tsv").is_file() && !work.join("verified.tsv").exists());
    assert!(shown(&o).contains("--shard"), "{}", shown(&o));
    let killed_left = temporaries(&work);
    assert!(
        killed_left.iter().all(|n| n.starts_with(".verified.tsv.")),
        "{killed_left:?}"
    );

    // Run again: it resumes at fsim-verify.
    let first = run_ok(fsim_cmd(&user, path, &args), None);
    let checkout = tmp.path().join("make-report");
    // The installed fsim's PATH has no pdftotext: it reads PDFs with the
    // fsim-pdftext installed beside it, which its headers record
    // (`pdf=fsim-pdftext`); the checkout's run is told to do the same.
    let mut make = make_report_cmd(&repo, &checkout, &settings);
    make.env("FSIM_PDF", "fsim-pdftext");
    run_ok(make, None);
    for f in ["report.txt", "report.json", "report.tsv"] {
        let (a, b) = (
            std::fs::read(work.join(f)).unwrap(),
            std::fs::read(checkout.join(f)).unwrap(),
        );
        assert!(a == b, "{f}: fsim's differs from make report's");
    }
    let e = shown(&first);
    assert!(
        e.contains("fsim-verify") && !e.contains("fsim-chunk"),
        "{e}"
    );
    assert!(
        e.trim_end()
            .ends_with("fsim: reports in fsim-work: report.txt report.json report.tsv"),
        "{e}"
    );
    // Only finished files besides the hidden temporary of the killed
    // fsim-verify (kill -9 leaves it; make never takes it for done).
    let before = mtimes(&work);
    assert_eq!(temporaries(&work), killed_left, "{before:?}");

    // Run again: every file is there, so nothing is run or rewritten.
    let second = run_ok(fsim_cmd(&user, path, &args), None);
    let e = shown(&second);
    assert!(
        !e.contains("fsim-chunk") && !e.contains("fsim-report "),
        "{e}"
    );
    assert_eq!(mtimes(&work), before, "the second run rewrote files");

    // A lost report is written again, by the one fsim-report process of
    // txt, json and tsv (the others' bytes unchanged), nothing before it.
    std::fs::remove_file(work.join("report.tsv")).unwrap();
    let third = shown(&run_ok(fsim_cmd(&user, path, &args), None));
    assert!(third.contains("--also tsv="), "{third}");
    assert!(!third.contains("fsim-verify") && !third.contains("fsim-partition"));
    for f in ["report.txt", "report.json", "report.tsv"] {
        assert_eq!(
            std::fs::read(work.join(f)).unwrap(),
            std::fs::read(checkout.join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn a_folder_fsim_cannot_read_is_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let path = installed();
    let user = empty_folder(tmp.path().join("user"));
    let missing = tmp.path().join("no-such-folder");
    let o = run_raw(fsim_cmd(&user, path, &[missing.to_str().unwrap()]), None);
    assert_one_line_error(&o, &format!("{}: no such folder", missing.display()));

    let file = tmp.path().join("a-file.txt");
    std::fs::write(&file, "text\n").unwrap();
    let o = run_raw(fsim_cmd(&user, path, &[file.to_str().unwrap()]), None);
    assert_one_line_error(&o, &format!("{}: not a folder", file.display()));

    // A folder without read permission (root reads it anyway).
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        let closed = empty_folder(tmp.path().join("closed"));
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
        let o = run_raw(fsim_cmd(&user, path, &[closed.to_str().unwrap()]), None);
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_one_line_error(&o, &format!("{}: cannot read the folder", closed.display()));
    }

    // A typo in a setting is not silently ignored, as make would.
    let o = run_raw(fsim_cmd(&user, path, &["MEMROY=1G", "."]), None);
    assert_one_line_error(&o, "MEMROY is not a setting of make report");

    // Without make on PATH.
    let bin = path.split(':').next().unwrap().to_string();
    let o = run_raw(fsim_cmd(&user, &bin, &["."]), None);
    assert_one_line_error(&o, "GNU make is needed");

    // A folder make cannot be given (`NAME=DIR` is a named root to it).
    let named = empty_folder(tmp.path().join("a=b"));
    let o = run_raw(fsim_cmd(&user, path, &[named.to_str().unwrap()]), None);
    assert_one_line_error(&o, "make cannot take a folder path with '='");

    // Nothing was written in the user's folder.
    let left: Vec<_> = std::fs::read_dir(&user).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");

    // A work folder keeps to its folder: another one is refused, and the
    // run's files are untouched.
    let (repo, _) = gen_repo(&tmp.path().join("a"), &[]);
    run_ok(fsim_cmd(&user, path, &[repo.to_str().unwrap()]), None);
    let before = mtimes(&user);
    let other = empty_folder(tmp.path().join("b"));
    let o = run_raw(fsim_cmd(&user, path, &[other.to_str().unwrap()]), None);
    assert_one_line_error(&o, "fsim-work holds the run of");
    assert_eq!(mtimes(&user), before);
}

/// A folder named as people name them (a space, a quote, a dollar) reaches
/// the stages as one path through make and the shell.
#[test]
fn a_folder_with_spaces_and_quotes_is_one_path() {
    let tmp = tempfile::tempdir().unwrap();
    let path = installed();
    let parent = empty_folder(tmp.path().join("it's my $HOME docs"));
    let (repo, _) = gen_repo(&parent, &[]);
    let user = empty_folder(tmp.path().join("user"));
    run_ok(fsim_cmd(&user, path, &[repo.to_str().unwrap()]), None);
    let report = std::fs::read_to_string(user.join("fsim-work/report.txt")).unwrap();
    assert!(
        report.contains(&format!("{}/", repo.display())),
        "no path under {repo:?} in\n{report}"
    );
}

/// Every installed program has a man page and a bash completion; fsim's
/// page lists every setting of the table with the default the program that
/// takes it reports, and its completion offers the settings and their words.
fn man_pages_and_completions(prefix: &Path) {
    let man = prefix.join("share/man/man1");
    let comp = prefix.join("share/bash-completion/completions");
    for p in ["fsim", "fsim-chunk", "fsim-sort", "fsim-report"] {
        assert!(man.join(format!("{p}.1")).is_file(), "no man page of {p}");
        assert!(comp.join(p).is_file(), "no completion of {p}");
    }
    let page = std::fs::read_to_string(man.join("fsim.1")).unwrap();
    for s in fsim::driver::SETTINGS.iter().filter(|s| s.var != "REPO") {
        let name = format!(".B {}=", s.var.replace('-', "\\-"));
        assert!(page.contains(&name), "fsim.1 has no {}", s.var);
    }
    // Defaults come from the programs: fsim-report's --min-percent.
    assert!(
        page.contains("Default: 50 (fsim\\-report \\-\\-min\\-percent)"),
        "{page}"
    );
    let sort = std::fs::read_to_string(man.join("fsim-sort.1")).unwrap();
    assert!(sort.starts_with(".TH FSIM\\-SORT 1"), "{sort}");
    assert!(sort.contains(".B \\-\\-memory <SIZE>"), "{sort}");
    let complete = |program: &str, line: &str| -> Vec<String> {
        let script = format!(
            "source '{}'; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; \
             read -ra COMP_WORDS <<< \"$COMP_LINE\"; COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); \
             _{}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            comp.join(program).display(),
            program.replace('-', "_")
        );
        let out = Command::new("bash").arg("-c").arg(script).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    assert_eq!(
        complete("fsim", "fsim MIN_"),
        ["MIN_PERCENT=", "MIN_BYTES="]
    );
    assert_eq!(complete("fsim", "fsim FORMATS=ht"), ["html"]);
    assert_eq!(complete("fsim", "fsim VERIFY="), ["0", "1"]);
    assert_eq!(complete("fsim-sort", "fsim-sort --mem"), ["--memory"]);
    // groff reads the pages as man(1) would; .ci/run installs it, and with
    // CI set its absence is a failure, not a skip.
    let groff = Command::new("groff").arg("-v").output().is_ok();
    assert!(
        groff || std::env::var_os("CI").is_none(),
        "CI: groff is missing"
    );
    if groff {
        for p in ["fsim", "fsim-sort", "fsim-report"] {
            let out = Command::new("groff")
                .args(["-man", "-ww", "-z", "-Tutf8"])
                .arg(man.join(format!("{p}.1")))
                .output()
                .unwrap();
            assert!(
                out.stderr.is_empty(),
                "{p}.1: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
