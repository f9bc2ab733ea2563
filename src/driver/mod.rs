//! The installed command, `fsim [VAR=value...] FOLDER`: the whole pipeline
//! on one folder, outside any checkout, as `make report REPO=FOLDER` runs it
//! in the checkout.
//!
//! It adds no pipeline of its own. The Makefile of the checkout is compiled
//! into the binary ([`MAKEFILE`]), written to `WORK/fsim.mk`, and run with
//! `make -f WORK/fsim.mk report`, the stage programs taken from the folder
//! of this executable (where `make install` and `cargo install` put them
//! all). So resuming by file, `PREVIOUS`, `SHARDS`, `FORMATS`, `MEMORY` and
//! `JOBS` behave exactly as with `make report`, and the reports are the
//! same bytes (tests/driver/install.rs). What the driver adds is what a user
//! without the checkout needs before make starts: a one-line error for a
//! folder that is missing, not a folder or unreadable, for a setting that
//! `make report` does not have or a value no stage takes, for a work folder
//! that holds the run of another folder, and for a missing GNU make; the
//! folder's path quoted for make and the shell (spaces, quotes); progress
//! on a terminal (`QUIET=`); make's `-j`, so `SHARDS` run side by side as
//! `make -j` runs them; a cache directory tag in the work folder; a re-run
//! of a folder that changed since its run, from that run's files
//! (`PREVIOUS`, [`plan_rerun`]); and signals passed on to make's process
//! group, so that stopping fsim stops the whole run. Other settings on a
//! re-run are the Makefile's business (`WORK/settings/`).

use crate::error::{Context, Error, Result};
use crate::io::Output;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

mod settings;
mod signals;

use settings::check_values;
pub use settings::{settings, Expect, Setting, FORMATS, SETTINGS};
use signals::run_make;
use std::process::Command;

/// The pipeline: the checkout's Makefile itself, so the installed command
/// and `make report` cannot drift apart.
pub const MAKEFILE: &str = include_str!("../../Makefile");

/// The work folder when `WORK` is not given, in the current folder. Not
/// the Makefile's `work`: a folder of that name is often the user's own.
pub const DEFAULT_WORK: &str = "fsim-work";

/// The makefile's name in the work folder.
const MAKEFILE_NAME: &str = "fsim.mk";

/// The folder a work folder was made for (its canonical path), so that a
/// run on another folder is refused instead of resumed from its files.
const FOLDER_NAME: &str = "fsim-folder";

/// The cache directory tag (<https://bford.info/cachedir/>) fsim writes
/// in every work folder, as the Makefile's `$(WORK)` rule does (the same
/// text, checked by a test): a scan leaves a folder holding it out, so
/// `fsim .` never reads its own work folder, and backup tools may skip it.
pub const CACHEDIR_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55
# This file is a cache directory tag created by fsim: the work folder of an fsim run, never scanned by fsim.
# For information about cache directory tags, see https://bford.info/cachedir/
";

/// The tag's file name in the work folder.
const CACHEDIR_TAG_NAME: &str = "CACHEDIR.TAG";

/// Where a finished run's files go while the run is redone for a folder
/// that changed since: make's `PREVIOUS`, removed once the redo finished.
const PREVIOUS_NAME: &str = "previous";

/// The stage settings files the Makefile keeps in `WORK/settings`.
const SETTINGS_DIR: &str = "settings";

/// The work folder's own files, which stay when a run's outputs move to
/// `previous`.
const KEPT: [&str; 5] = [
    MAKEFILE_NAME,
    FOLDER_NAME,
    CACHEDIR_TAG_NAME,
    SETTINGS_DIR,
    PREVIOUS_NAME,
];

/// The stages whose settings an earlier run must share to be a
/// `PREVIOUS`: fsim-chunk refuses records of another chunking, fsim-verify
/// figures of other templates or without the regions asked for.
const PREVIOUS_MUST_MATCH: [&str; 3] = ["chunk", "partition", "verify"];

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
        Ok(old) if old == line => return write_tag(work),
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
    write_tag(work)?;
    write_atomically(&record, &line)
}

/// The cache directory tag, written when missing or different.
fn write_tag(work: &Path) -> Result<()> {
    let path = work.join(CACHEDIR_TAG_NAME);
    if std::fs::read(&path).ok().as_deref() != Some(CACHEDIR_TAG.as_bytes()) {
        write_atomically(&path, CACHEDIR_TAG.as_bytes())?;
    }
    Ok(())
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

/// The `make` command of an invocation for `goal`: the user's settings
/// after fsim's own (BIN, WORK, QUIET=: progress and summaries, NO_BUILD),
/// so theirs win.
fn make_command(inv: &Invocation, paths: &RunPaths, goal: &str) -> Result<Command> {
    let mut c = Command::new("make");
    c.arg("-f")
        .arg(paths.work_path().join(MAKEFILE_NAME))
        .arg(format!("-j{}", job_slots(inv)?))
        .arg("--no-print-directory")
        .arg(setting("REPO", &make_word("folder", &inv.folder)?))
        .arg(format!("WORK={}", paths.work));
    if var(inv, "BIN").is_none() {
        c.arg(setting("BIN", &make_word("program folder", &paths.bin)?));
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
    c.arg(goal);
    Ok(c)
}

fn setting(name: &str, value: &OsStr) -> OsString {
    let mut s = OsString::from(format!("{name}="));
    s.push(value);
    s
}

/// Where a run reads and writes: the work folder (a plain name, checked)
/// and the folder of the stage programs.
pub struct RunPaths {
    pub work: String,
    pub bin: PathBuf,
}

impl RunPaths {
    fn work_path(&self) -> &Path {
        Path::new(&self.work)
    }
}

/// How a run ended.
pub enum Outcome {
    /// make report finished: the reports are in the work folder.
    Finished(Summary),
    /// A signal (SIGINT, SIGTERM, SIGHUP) stopped fsim, make and the
    /// running stage; the finished stages are kept.
    Stopped { signal: i32, work: String },
}

impl Outcome {
    /// The closing line of a stopped run, and its exit status (128 + the
    /// signal, as a shell reports a command a signal ended).
    pub fn stopped_line(signal: i32, work: &str) -> (String, u8) {
        let name = match signal {
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            libc::SIGHUP => "SIGHUP",
            _ => "a signal",
        };
        let line = format!(
            "stopped by {name}; the finished stages are kept in {work}: run the same command again to resume"
        );
        (line, 128u8.wrapping_add(signal as u8))
    }
}

/// Run the pipeline of `inv` to its reports: check everything a run needs,
/// write the makefile, run make in the current folder (so relative paths
/// mean what they mean to the user) and wait for it. A finished run whose
/// folder changed since is redone from its files (see [`plan_rerun`]).
pub fn run(inv: &Invocation, stages: &StageKnowledge) -> Result<Outcome> {
    check_folder(&inv.folder)?;
    let work = check_work(var(inv, "WORK").unwrap_or(OsStr::new(DEFAULT_WORK)))?.to_string();
    let bin = match var(inv, "BIN") {
        Some(b) => PathBuf::from(b),
        None => stage_dir()?,
    };
    let paths = RunPaths { work, bin };
    // Every check that can refuse the run (the settings' values, the paths
    // quoted for make, make itself) before the work folder is touched.
    check_values(inv, stages)?;
    let mut make = make_command(inv, &paths, "report")?;
    check_make()?;
    claim_work(paths.work_path(), &inv.folder)?;
    write_makefile(paths.work_path())?;
    let previous = match plan_rerun(inv, &paths, stages)? {
        Rerun::Stopped(signal) => return Ok(stopped(signal, paths)),
        Rerun::Previous(p) => p,
    };
    if let Some(p) = &previous {
        // WORK/previous is fsim's own and goes when the run ends: its chunk
        // records and bins go as soon as this run's records are written,
        // so the two runs' records are never on disk together.
        make.arg(setting("PREVIOUS", p.as_os_str()))
            .arg("DROP_PREVIOUS=1");
    }
    let (status, signal) = run_make(make)?;
    if let Some(signal) = signal {
        return Ok(stopped(signal, paths));
    }
    if !status.success() {
        return Err(Error::msg(format!(
            "make report stopped ({status}); the finished stages are kept in {}: run the same command again to resume",
            paths.work
        )));
    }
    if let Some(p) = previous {
        std::fs::remove_dir_all(&p).ctx(|| format!("removing {}", p.display()))?;
    }
    Ok(Outcome::Finished(summary(inv, paths.work)))
}

fn stopped(signal: i32, paths: RunPaths) -> Outcome {
    Outcome::Stopped {
        signal,
        work: paths.work,
    }
}

fn summary(inv: &Invocation, work: String) -> Summary {
    let formats = var(inv, "FORMATS")
        .map(|f| f.to_string_lossy().into_owned())
        .or_else(|| makefile_default("FORMATS").map(str::to_string))
        .unwrap_or_default();
    let reports = formats
        .split_whitespace()
        .map(|f| format!("report.{f}"))
        .collect();
    Summary { work, reports }
}

/// What the driver needs to know from the layers above it, which the
/// `fsim` program gives: the stage programs' own parsers and the file
/// table's reader.
pub struct StageKnowledge {
    /// The check of a setting whose values only a stage knows (`METHOD`,
    /// `CONTENT`, `AVG`): `None` for another setting, else the stage's
    /// verdict on a value (its message for a bad one).
    pub check_value: fn(&str, &str) -> Option<std::result::Result<(), String>>,
    /// The files a file table lists, in its order (the walk's), without the
    /// members of archives (no file on disk).
    pub table_files: fn(&Path) -> Result<Vec<ListedFile>>,
}

/// A file a file table lists, as a stat walk compares it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedFile {
    pub path: PathBuf,
    /// The file's length on disk (not its content view's).
    pub size: u64,
    /// Modification time: seconds and nanoseconds since the epoch.
    pub mtime: (i64, u32),
}

/// What a re-run starts from.
enum Rerun {
    /// `PREVIOUS` for make: an earlier run's files (or none).
    Previous(Option<PathBuf>),
    /// A signal stopped the run before make report started.
    Stopped(i32),
}

/// A re-run on a folder whose files changed since the work folder's file
/// table (a file added, removed or edited) must not give the old reports:
/// the run's outputs move to `WORK/previous`, and make runs with
/// `PREVIOUS=WORK/previous`, which reads only the changed files again (and
/// verifies only their pairs) when the earlier run's chunking, partition
/// and verification settings are this run's; with others, the outputs are
/// dropped and everything runs again. A redo that was stopped resumes with
/// the same `previous`.
fn plan_rerun(inv: &Invocation, paths: &RunPaths, stages: &StageKnowledge) -> Result<Rerun> {
    let work = paths.work_path();
    let prev = work.join(PREVIOUS_NAME);
    if folder_changed(inv, work, stages)? {
        if prev.is_dir() {
            // A redo stopped after its chunking: its outputs are stale too.
            move_outputs(work, None)?;
        } else {
            move_outputs(work, Some(&prev))?;
        }
    }
    if !prev.is_dir() {
        return Ok(Rerun::Previous(None));
    }
    // Also one a stopped redo of an earlier fsim left untagged: it lies in
    // this run's work folder, so it is fsim's (make drops from it).
    write_tag(&prev)?;
    let (status, signal) = run_make(make_command(inv, paths, "settings")?)?;
    if let Some(signal) = signal {
        return Ok(Rerun::Stopped(signal));
    }
    if !status.success() {
        return Err(Error::msg(format!("make settings failed ({status})")));
    }
    if same_settings(&prev, work) {
        return Ok(Rerun::Previous(Some(prev)));
    }
    std::fs::remove_dir_all(&prev).ctx(|| format!("removing {}", prev.display()))?;
    Ok(Rerun::Previous(None))
}

/// Whether the earlier run in `prev` had this run's settings for the stages
/// whose earlier files must fit ([`PREVIOUS_MUST_MATCH`]).
fn same_settings(prev: &Path, work: &Path) -> bool {
    PREVIOUS_MUST_MATCH.iter().all(|s| {
        let read = |w: &Path| std::fs::read(w.join(SETTINGS_DIR).join(s)).ok();
        read(prev).is_some_and(|p| Some(set_lines(&p)) == read(work).as_deref().map(set_lines))
    })
}

/// The lines of a settings file but those of a setting left empty
/// (`NAME=`): a fsim before the Makefile wrote only the settings that are
/// set wrote them too, and a setting added since, empty, changes nothing.
fn set_lines(text: &[u8]) -> Vec<&[u8]> {
    let empty = |l: &[u8]| {
        l.strip_suffix(b"=").is_some_and(|n| {
            !n.is_empty() && n.iter().all(|&c| c.is_ascii_uppercase() || c == b'_')
        })
    };
    text.split(|&c| c == b'\n')
        .filter(|l| !l.is_empty() && !empty(l))
        .collect()
}

/// Move a run's outputs (everything but the work folder's own files) into
/// `to`, with a copy of the settings they were made with; with no `to`,
/// remove them.
fn move_outputs(work: &Path, to: Option<&Path>) -> Result<()> {
    if let Some(to) = to {
        // The tag marks `previous` as fsim's: only then does make remove
        // the earlier records from it (DROP_PREVIOUS).
        std::fs::create_dir_all(to).ctx(|| format!("creating {}", to.display()))?;
        write_tag(to)?;
        let settings = to.join(SETTINGS_DIR);
        std::fs::create_dir_all(&settings).ctx(|| format!("creating {}", settings.display()))?;
        for e in read_dir(&work.join(SETTINGS_DIR)).unwrap_or_default() {
            let from = e.path();
            std::fs::copy(&from, settings.join(e.file_name()))
                .ctx(|| format!("copying {}", from.display()))?;
        }
    }
    for e in read_dir(work)? {
        let (from, name) = (e.path(), e.file_name());
        if KEPT.iter().any(|k| OsStr::new(k) == name) {
            continue;
        }
        let done = match to {
            Some(to) => std::fs::rename(&from, to.join(&name)),
            None if from.is_dir() => std::fs::remove_dir_all(&from),
            None => std::fs::remove_file(&from),
        };
        done.ctx(|| format!("moving {} aside", from.display()))?;
    }
    Ok(())
}

fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>> {
    let entries = std::fs::read_dir(dir).ctx(|| format!("reading {}", dir.display()))?;
    entries
        .collect::<std::io::Result<Vec<_>>>()
        .ctx(|| format!("reading {}", dir.display()))
}

/// Whether the folder's files differ from those of the work folder's file
/// table: a stat walk in fsim-chunk's order (the same walk), comparing
/// path, size and mtime, stopped at the first difference. No table (or no
/// chunk records yet): nothing to compare. The work folder, when it lies
/// in the folder, is left out on both sides; a file the walk lists that
/// cannot be opened was not chunked either, so it is no difference.
fn folder_changed(inv: &Invocation, work: &Path, stages: &StageKnowledge) -> Result<bool> {
    let table = work.join("files.tsv");
    if !table.is_file() || !work.join("chunks.tsv").is_file() {
        return Ok(false);
    }
    let skip = work_inside(&inv.folder, work);
    let outside = |p: &Path| !skip.as_deref().is_some_and(|s| p.starts_with(s));
    let mut listed = (stages.table_files)(&table)?
        .into_iter()
        .filter(|f| outside(&f.path))
        .peekable();
    let opts = var(inv, "METHOD_OPTS").map(|o| shell_words(&o.to_string_lossy()));
    let words: Vec<&str> = opts.iter().flatten().map(String::as_str).collect();
    let cfg = crate::io::walk::WalkConfig::of_chunk_options(vec![inv.folder.clone()], &words)?;
    let mut changed = false;
    crate::io::walk::walk(&cfg, |e| {
        let crate::io::walk::Event::File(p) = e else {
            return true;
        };
        if !outside(&p) {
            return true;
        }
        changed = match listed.next_if(|f| f.path == p) {
            Some(f) => !stat_matches(&f),
            None => crate::io::longpath::open_file(&p).is_ok(),
        };
        !changed
    })?;
    Ok(changed || listed.next().is_some())
}

/// The words a POSIX shell makes of `s` (make runs the recipes with
/// one): blanks separate, single quotes keep everything, double quotes and
/// backslashes as the shell has them; no expansion.
fn shell_words(s: &str) -> Vec<String> {
    let (mut words, mut cur, mut in_word) = (Vec::new(), String::new(), false);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
                continue;
            }
            '\'' => cur.extend(chars.by_ref().take_while(|&c| c != '\'')),
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => cur.push(n),
                            Some(n) => cur.extend(['\\', n]),
                            None => cur.push('\\'),
                        },
                        c => cur.push(c),
                    }
                }
            }
            '\\' => cur.extend(chars.next()),
            c => cur.push(c),
        }
        in_word = true;
    }
    if in_word {
        words.push(cur);
    }
    words
}

fn stat_matches(f: &ListedFile) -> bool {
    use std::os::unix::fs::MetadataExt;
    crate::io::longpath::metadata(&f.path)
        .is_ok_and(|m| m.len() == f.size && (m.mtime(), m.mtime_nsec() as u32) == f.mtime)
}

/// The work folder as the walk of the folder names it, when it lies inside
/// (`./fsim-work` for `fsim .`).
fn work_inside(folder: &Path, work: &Path) -> Option<PathBuf> {
    let f = std::fs::canonicalize(folder).ok()?;
    let w = std::fs::canonicalize(work).ok()?;
    let rel = w.strip_prefix(&f).ok()?;
    (!rel.as_os_str().is_empty()).then(|| folder.join(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(OsString::from).collect()
    }

    #[test]
    fn shell_words_are_the_shells() {
        let got = shell_words(r#" -L  --exclude '*.iso' --exclude="a b\"c" x\ y '' "#);
        assert_eq!(
            got,
            ["-L", "--exclude", "*.iso", "--exclude=a b\"c", "x y", ""]
        );
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

    /// The Makefile's `$(WORK)` rule writes the tag fsim writes.
    #[test]
    fn the_makefiles_cachedir_tag_is_fsims() {
        let line = MAKEFILE
            .lines()
            .find(|l| l.contains("printf") && l.contains("> $@/CACHEDIR.TAG"))
            .expect("the $(WORK) rule's printf of CACHEDIR.TAG");
        let args = line.split_once("'%s\\n' ").unwrap().1;
        let args = args.rsplit_once(" > ").unwrap().0;
        let mut text = String::new();
        for quoted in args.split("' '") {
            text.push_str(quoted.trim_matches('\''));
            text.push('\n');
        }
        assert_eq!(text, CACHEDIR_TAG);
        assert!(CACHEDIR_TAG.contains("fsim"));
        // DROP_PREVIOUS removes only from a folder whose tag says fsim made it.
        assert!(MAKEFILE.contains("grep -qs 'created by fsim'"));
        assert!(CACHEDIR_TAG.contains("created by fsim"));
    }

    /// `WORK/previous` carries fsim's tag, so make may drop the earlier
    /// records from it; the work folder's own files stay where they are.
    #[test]
    fn outputs_moved_aside_go_to_a_tagged_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path();
        std::fs::write(work.join(CACHEDIR_TAG_NAME), CACHEDIR_TAG).unwrap();
        std::fs::create_dir(work.join(SETTINGS_DIR)).unwrap();
        std::fs::write(work.join(SETTINGS_DIR).join("chunk"), "x").unwrap();
        std::fs::write(work.join("chunks.tsv"), "records").unwrap();
        let prev = work.join(PREVIOUS_NAME);
        move_outputs(work, Some(&prev)).unwrap();
        let tag = std::fs::read_to_string(prev.join(CACHEDIR_TAG_NAME)).unwrap();
        assert_eq!(tag, CACHEDIR_TAG);
        assert_eq!(std::fs::read(prev.join("chunks.tsv")).unwrap(), b"records");
        assert!(prev.join(SETTINGS_DIR).join("chunk").is_file());
        assert!(!work.join("chunks.tsv").exists() && work.join(CACHEDIR_TAG_NAME).is_file());
    }

    fn no_stage_values(_: &str, _: &str) -> Option<std::result::Result<(), String>> {
        None
    }

    fn no_table(_: &Path) -> Result<Vec<ListedFile>> {
        Ok(Vec::new())
    }

    #[test]
    fn settings_values_are_checked_before_work() {
        let stages = StageKnowledge {
            check_value: no_stage_values,
            table_files: no_table,
        };
        let check = |w: &[&str]| check_values(&parse_args(&words(w)).unwrap(), &stages);
        for ok in [
            "FORMATS=txt html sh",
            "MEMORY=1G",
            "CAPACITY=512k",
            "MIN_PERCENT=72.5",
            "FLOOR=",
            "JOBS=1024",
            "SHARDS=8",
            "VERIFY=0",
            "CATALOGS=",
            "SORT=gnu",
        ] {
            assert!(check(&[ok, "d"]).is_ok(), "{ok}");
        }
        for (bad, said) in [
            (
                "FORMATS=pdf",
                "FORMATS=pdf: expected one or more of txt json tsv html xlsx sh",
            ),
            ("FORMATS=", "FORMATS=: expected one or more of"),
            ("MEMORY=lots", "MEMORY=lots: expected a size such as 256M"),
            ("CAPACITY=1Q", "CAPACITY=1Q: expected a size"),
            (
                "MIN_PERCENT=120",
                "MIN_PERCENT=120: expected a percentage from 0 to 100",
            ),
            ("JOBS=0", "JOBS=0: expected a whole number from 1 to 1024"),
            (
                "SHARDS=two",
                "SHARDS=two: expected a whole number, 1 or more",
            ),
            ("VERIFY=yes", "VERIFY=yes: expected 0 or 1"),
            ("REGIONS=", "REGIONS=: expected 0 or 1"),
            ("SORT=busybox", "SORT=busybox: expected fsim or gnu"),
            (
                "MIN_BYTES=-1",
                "MIN_BYTES=-1: expected a whole number, 0 or more",
            ),
            (
                "PREVIOUS=/no/such/run",
                "PREVIOUS=/no/such/run: expected an earlier work folder",
            ),
            (
                "TEMPLATES=/no/such.tsv",
                "TEMPLATES=/no/such.tsv: expected templates files",
            ),
        ] {
            let e = check(&[bad, "d"]).unwrap_err().to_string();
            assert!(e.starts_with(said) && !e.contains('\n'), "{bad}: {e}");
            assert!(!e.contains("resume"), "{e}");
        }
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
