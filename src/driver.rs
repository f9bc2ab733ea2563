//! The installed command, `fsim [VAR=value...] FOLDER`: the whole pipeline
//! on one folder, outside any checkout, as `make report REPO=FOLDER` runs it
//! in the checkout (issue 26).
//!
//! It adds no pipeline of its own. The Makefile of the checkout is compiled
//! into the binary ([`MAKEFILE`]), written to `WORK/fsim.mk`, and run with
//! `make -f WORK/fsim.mk report`, the stage programs taken from the folder
//! of this executable (where `make install` and `cargo install` put them
//! all). So resuming by file, `PREVIOUS`, `SHARDS`, `FORMATS`, `MEMORY` and
//! `JOBS` behave exactly as with `make report`, and the reports are the
//! same bytes (tests/install.rs). What the driver adds is what a user
//! without the checkout needs before make starts: a one-line error for a
//! folder that is missing, not a folder or unreadable, for a setting that
//! `make report` does not have, for a work folder that holds the run of
//! another folder, and for a missing GNU make; the folder's path quoted for
//! make and the shell (spaces, quotes); progress on a terminal (`QUIET=`);
//! and make's `-j`, so `SHARDS` run side by side as `make -j` runs them.

use crate::error::{Context, Error, Result};
use crate::io::Output;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pipeline: the checkout's Makefile itself, so the installed command
/// and `make report` cannot drift apart.
pub const MAKEFILE: &str = include_str!("../Makefile");

/// The work folder when `WORK` is not given, in the current folder. Not
/// the Makefile's `work`: a folder of that name is often the user's own.
pub const DEFAULT_WORK: &str = "fsim-work";

/// The makefile's name in the work folder.
const MAKEFILE_NAME: &str = "fsim.mk";

/// The folder a work folder was made for (its canonical path), so that a
/// run on another folder is refused instead of resumed from its files.
const FOLDER_NAME: &str = "fsim-folder";

/// The programs `make report` runs, checked before make starts.
const STAGES: [&str; 7] = [
    "fsim-chunk",
    "fsim-sort",
    "fsim-partition",
    "fsim-binpack",
    "fsim-analyze",
    "fsim-verify",
    "fsim-report",
];

/// One invocation: the folder and the settings, in the order given.
#[derive(Debug, PartialEq)]
pub struct Invocation {
    pub folder: PathBuf,
    pub vars: Vec<(String, OsString)>,
}

/// What a finished run wrote, for the closing line.
pub struct Summary {
    pub work: String,
    pub reports: Vec<String>,
}

impl Summary {
    /// `fsim: reports in fsim-work: report.txt report.json`.
    pub fn line(&self) -> String {
        format!("reports in {}: {}", self.work, self.reports.join(" "))
    }
}

/// The settings of `make report`: every variable the Makefile assigns with
/// `?=` (a default the command line overrides), except `REPO`, which is the
/// FOLDER argument.
pub fn settings() -> Vec<&'static str> {
    let mut names: Vec<&str> = MAKEFILE
        .lines()
        .filter_map(|l| l.split_once("?=").map(|(name, _)| name.trim_end()))
        .filter(|n| is_var_name(n) && *n != "REPO")
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The Makefile's default value of a variable (`FORMATS ?= txt json`).
fn makefile_default(name: &str) -> Option<&'static str> {
    MAKEFILE.lines().find_map(|l| {
        let (n, v) = l.split_once("?=")?;
        (n.trim_end() == name).then(|| v.trim())
    })
}

fn is_var_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_uppercase())
        && b.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
}

/// Split the words after `fsim` into settings (`NAME=value`, NAME in
/// capitals, as on make's command line) and the one folder.
pub fn parse_args(words: &[OsString]) -> Result<Invocation> {
    let known = settings();
    let mut vars = Vec::new();
    let mut folders = Vec::new();
    for w in words {
        match split_setting(w) {
            Some(var) => {
                check_setting(&var.0, &known)?;
                vars.push(var)
            }
            None => folders.push(PathBuf::from(w)),
        }
    }
    match <[PathBuf; 1]>::try_from(folders) {
        Ok([folder]) => Ok(Invocation { folder, vars }),
        Err(f) if f.is_empty() => Err(Error::msg(
            "no folder given: fsim [VAR=value...] FOLDER",
        )),
        Err(f) => Err(Error::msg(format!(
            "one folder at a time, not {} ({}); for several, name them: make report REPO=\"a=DIR b=DIR\"",
            f.len(),
            f.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A setting must be one of make report's (make itself would ignore a
/// misspelt one); REPO is the FOLDER argument.
fn check_setting(name: &str, known: &[&str]) -> Result<()> {
    if name == "REPO" {
        let m = "give the folder as the last argument, not REPO=: fsim [VAR=value...] FOLDER";
        return Err(Error::msg(m));
    }
    if !known.contains(&name) {
        return Err(Error::msg(format!(
            "{name} is not a setting of make report (fsim --help; all in docs/usage.md)"
        )));
    }
    Ok(())
}

/// `NAME=value` with NAME a make variable name in capitals.
fn split_setting(w: &OsStr) -> Option<(String, OsString)> {
    let b = w.as_bytes();
    let eq = b.iter().position(|&c| c == b'=')?;
    let name = std::str::from_utf8(&b[..eq]).ok()?;
    is_var_name(name).then(|| (name.to_string(), OsString::from_vec(b[eq + 1..].to_vec())))
}

/// Refuse a folder that cannot be read, before anything is written.
pub fn check_folder(folder: &Path) -> Result<()> {
    let name = folder.display();
    let meta = match std::fs::metadata(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::msg(format!("{name}: no such folder")))
        }
        other => other.ctx(|| format!("{name}: cannot read"))?,
    };
    if !meta.is_dir() {
        return Err(Error::msg(format!("{name}: not a folder")));
    }
    std::fs::read_dir(folder).ctx(|| format!("{name}: cannot read the folder"))?;
    Ok(())
}

/// A path as one word of a make variable that the Makefile's recipes pass
/// to the shell: as it is when it has only plain characters, else in
/// single quotes (`'` as `'\''`) with make's `$` doubled. `=` cannot be
/// carried (the Makefile reads `NAME=DIR` as a named root), nor a newline.
pub fn make_word(what: &str, path: &Path) -> Result<OsString> {
    let b = path.as_os_str().as_bytes();
    if let Some(&c) = b.iter().find(|&&c| c == b'=' || c == b'\n') {
        return Err(Error::msg(format!(
            "{}: make cannot take a {what} path with {:?} in it; give a symbolic link to it instead",
            path.display(),
            c as char
        )));
    }
    let plain = |c: &u8| c.is_ascii_alphanumeric() || b"/._-+,:@%".contains(c);
    if !b.is_empty() && b.iter().all(plain) {
        return Ok(path.as_os_str().to_owned());
    }
    let mut w = vec![b'\''];
    for &c in b {
        match c {
            b'\'' => w.extend_from_slice(b"'\\''"),
            b'$' => w.extend_from_slice(b"$$"),
            _ => w.push(c),
        }
    }
    w.push(b'\'');
    Ok(OsString::from_vec(w))
}

/// The work folder names make targets, where quoting is impossible: only
/// plain characters.
fn check_work(work: &OsStr) -> Result<&str> {
    let plain = |c: u8| c.is_ascii_alphanumeric() || b"/._-+,@".contains(&c);
    match work.to_str() {
        Some(w) if !w.is_empty() && w.bytes().all(plain) => Ok(w),
        _ => Err(Error::msg(format!(
            "WORK={}: make needs a work folder named with letters, digits and / . _ - + , @ only",
            work.to_string_lossy()
        ))),
    }
}

/// The folder of the stage programs: this executable's own, where `make
/// install` and `cargo install` put every program.
fn stage_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().ctx(|| "cannot find the fsim executable")?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    for s in STAGES {
        if !dir.join(s).is_file() {
            return Err(Error::msg(format!(
                "{}: {s} is missing beside fsim (install every program: make install, or cargo install --path .)",
                dir.display()
            )));
        }
    }
    Ok(dir)
}

/// GNU make on PATH, or a one-line error saying so.
fn check_make() -> Result<()> {
    let out = Command::new("make").arg("--version").output();
    match out {
        Ok(o) if o.status.success() && o.stdout.starts_with(b"GNU Make") => Ok(()),
        Ok(_) => Err(Error::msg(
            "the make on PATH is not GNU make, which fsim needs",
        )),
        Err(e) => Err(Error::msg(format!(
            "GNU make is needed and none was found on PATH ({e})"
        ))),
    }
}

/// Create the work folder and record the folder it is for; refuse one that
/// holds the run of another folder (make would take its files as done).
fn claim_work(work: &Path, folder: &Path) -> Result<()> {
    let wname = work.display();
    let canonical = std::fs::canonicalize(folder)
        .ctx(|| format!("{}: cannot resolve the folder", folder.display()))?;
    let mut line = canonical.as_os_str().as_bytes().to_vec();
    line.push(b'\n');
    let record = work.join(FOLDER_NAME);
    match std::fs::read(&record) {
        Ok(old) if old == line => return Ok(()),
        Ok(old) => {
            return Err(Error::msg(format!(
                "{wname} holds the run of {}, not of {}: give another WORK=DIR, or remove {wname}",
                String::from_utf8_lossy(old.strip_suffix(b"\n").unwrap_or(&old)),
                canonical.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).ctx(|| format!("reading {}", record.display())),
    }
    std::fs::create_dir_all(work).ctx(|| format!("cannot create the work folder {wname}"))?;
    write_atomically(&record, &line)
}

/// Write the makefile into the work folder unless it is there already with
/// the same bytes.
fn write_makefile(work: &Path) -> Result<()> {
    let path = work.join(MAKEFILE_NAME);
    if std::fs::read(&path).ok().as_deref() != Some(MAKEFILE.as_bytes()) {
        write_atomically(&path, MAKEFILE.as_bytes())?;
    }
    Ok(())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = Output::create(Some(path))?;
    out.write_all(bytes)?;
    out.finish()
}

/// The variable of an invocation, if given.
fn var<'a>(inv: &'a Invocation, name: &str) -> Option<&'a OsStr> {
    inv.vars
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_os_str())
}

/// make's job slots: `JOBS`, else the processors available (the Makefile's
/// default, `nproc`). In the checkout `make -j N report SHARDS=8` runs the
/// shards side by side; fsim gives the `-j` a user has no way to pass. The
/// rest of the pipeline is one chain, each stage using `JOBS` threads.
fn job_slots(inv: &Invocation) -> Result<usize> {
    match var(inv, "JOBS") {
        None => Ok(std::thread::available_parallelism().map_or(2, usize::from)),
        Some(j) => j
            .to_str()
            .and_then(|j| j.parse().ok())
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                Error::msg(format!(
                    "JOBS={}: expected a number of processes, 1 or more",
                    j.to_string_lossy()
                ))
            }),
    }
}

/// The `make` command of an invocation: the user's settings after fsim's
/// own (BIN, WORK, QUIET=: progress and summaries, NO_BUILD), so theirs win.
fn make_command(inv: &Invocation, makefile: &Path, bin: &Path, work: &str) -> Result<Command> {
    let mut c = Command::new("make");
    c.arg("-f")
        .arg(makefile)
        .arg(format!("-j{}", job_slots(inv)?))
        .arg("--no-print-directory")
        .arg(setting("REPO", &make_word("folder", &inv.folder)?))
        .arg(format!("WORK={work}"));
    if var(inv, "BIN").is_none() {
        c.arg(setting("BIN", &make_word("program folder", bin)?));
    }
    if var(inv, "QUIET").is_none() {
        c.arg("QUIET=");
    }
    // The programs next to fsim are the ones to run, never to build: a
    // user whose CARGO_TARGET_DIR names their folder has no checkout here.
    c.arg("NO_BUILD=1");
    for (n, v) in &inv.vars {
        c.arg(setting(n, v));
    }
    c.arg("report");
    Ok(c)
}

fn setting(name: &str, value: &OsStr) -> OsString {
    let mut s = OsString::from(format!("{name}="));
    s.push(value);
    s
}

/// Run the pipeline of `inv` to its reports: check everything a run needs,
/// write the makefile, run make in the current folder (so relative paths
/// mean what they mean to the user) and wait for it.
pub fn run(inv: &Invocation) -> Result<Summary> {
    check_folder(&inv.folder)?;
    let work = check_work(var(inv, "WORK").unwrap_or(OsStr::new(DEFAULT_WORK)))?.to_string();
    let bin = match var(inv, "BIN") {
        Some(b) => PathBuf::from(b),
        None => stage_dir()?,
    };
    // Every check that can refuse the run (the paths quoted for make, JOBS,
    // make itself) before the work folder is touched.
    let mut make = make_command(inv, &Path::new(&work).join(MAKEFILE_NAME), &bin, &work)?;
    check_make()?;
    claim_work(Path::new(&work), &inv.folder)?;
    write_makefile(Path::new(&work))?;
    let status = make.status().ctx(|| "cannot run make")?;
    if !status.success() {
        return Err(Error::msg(format!(
            "make report stopped ({status}); the finished stages are kept in {work}: run the same command again to resume"
        )));
    }
    let formats = var(inv, "FORMATS")
        .map(|f| f.to_string_lossy().into_owned())
        .or_else(|| makefile_default("FORMATS").map(str::to_string))
        .unwrap_or_default();
    let reports = formats
        .split_whitespace()
        .map(|f| format!("report.{f}"))
        .collect();
    Ok(Summary { work, reports })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    #[test]
    fn settings_are_the_makefiles() {
        let s = settings();
        for n in ["WORK", "MEMORY", "JOBS", "PREVIOUS", "SHARDS", "FORMATS"] {
            assert!(s.contains(&n), "{n} missing from {s:?}");
        }
        assert!(!s.contains(&"REPO"));
        assert_eq!(makefile_default("FORMATS"), Some("txt json"));
    }

    #[test]
    fn args_split_into_settings_and_one_folder() {
        let inv = parse_args(&words(&["MEMORY=1G", "docs", "FORMATS=txt html"])).unwrap();
        assert_eq!(inv.folder, PathBuf::from("docs"));
        assert_eq!(
            inv.vars,
            vec![
                ("MEMORY".to_string(), OsString::from("1G")),
                ("FORMATS".to_string(), OsString::from("txt html")),
            ]
        );
        // A lower-case name is a path, as make would not take it either.
        let inv = parse_args(&words(&["./a=b"])).unwrap();
        assert_eq!(inv.folder, PathBuf::from("./a=b"));
        let e = |w: &[&str]| parse_args(&words(w)).unwrap_err().to_string();
        assert!(e(&["MEMROY=1G", "docs"]).contains("MEMROY is not a setting"));
        assert!(e(&["REPO=docs"]).contains("not REPO="));
        assert!(e(&["WORK=w"]).contains("no folder given"));
        assert!(e(&["a", "b"]).contains("one folder at a time, not 2 (a, b)"));
    }

    #[test]
    fn jobs_give_makes_slots() {
        let slots = |w: &[&str]| job_slots(&parse_args(&words(w)).unwrap());
        assert_eq!(slots(&["JOBS=3", "d"]).unwrap(), 3);
        assert!(slots(&["d"]).unwrap() >= 1);
        let e = slots(&["JOBS=x", "d"]).unwrap_err().to_string();
        assert!(e.contains("JOBS=x: expected a number"), "{e}");
    }

    #[test]
    fn paths_are_quoted_for_make_and_the_shell() {
        let w = |p: &str| make_word("folder", Path::new(p)).map(|w| w.into_string().unwrap());
        assert_eq!(w("/data/docs-2.0").unwrap(), "/data/docs-2.0");
        assert_eq!(w("/home/u/My Docs").unwrap(), "'/home/u/My Docs'");
        assert_eq!(w("it's $HOME").unwrap(), "'it'\\''s $$HOME'");
        assert!(w("/a=b").unwrap_err().to_string().contains("'='"));
        assert!(check_work(OsStr::new("my work")).is_err());
        assert!(check_work(OsStr::new("runs/fsim-work")).is_ok());
    }
}
