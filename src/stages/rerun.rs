//! Stage outputs reused across runs (`fsim-reuse`): a
//! stage whose command and inputs are those of the same stage of an
//! earlier run is not run again; its output is that run's (a hard link,
//! or a copy where the file system allows no link).
//!
//! A re-run after a few files changed (`make report PREVIOUS=OLD`) reads
//! only those files again, and the analysis and verification already work
//! on their pairs alone. What was left were the stages that see the whole
//! repository's records whatever changed: the sort, the partition, the bin
//! packing and every report. When the changed files kept their contents (a
//! checkout, a copy or a restore gives files new timestamps) or their
//! changes leave a stage's inputs as they were, that stage's output is the
//! earlier run's, and copying it costs a read of the inputs instead of the
//! stage's work.
//!
//! # The key
//!
//! Each run of a stage writes, beside its output, `WORK/reuse/NAME` (NAME
//! is the output's file name): the stage's program (its name and a hash of
//! its bytes, so that a rebuilt fsim never reuses an older one's output),
//! its arguments with the work folder written `@WORK` (the earlier run's
//! folder had another name) and without `-q` (standard error only), and
//! a hash (XXH3-128) of every argument that is a regular file: the
//! stage's inputs. A file table is hashed without
//! its timestamps when the stage reads none (`--mtimes-unused`: every
//! stage but the shell script of actions), and without its table digest,
//! which covers them. Which arguments are inputs is decided before the
//! stage runs; without an earlier run to compare with, their bytes are
//! hashed while it runs. The key is written after the stage succeeded and
//! removed before it runs, so a killed stage leaves no key and is never
//! reused. The key ends with a hash of each output as the stage wrote it:
//! an earlier output changed since (by hand, by another program) is not
//! copied.
//!
//! Copying is exact only because every stage is a deterministic function
//! of its program, arguments and input bytes (byte-identical across runs
//! and thread counts: docs/reliability.md); what a stage reads besides its
//! arguments (the files an html report shows) is in the file table's
//! content hashes.

use crate::error::{Context as _, Error, Result};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::Xxh3;

/// Options of `fsim-reuse`.
#[derive(Debug, Clone)]
pub struct Config {
    /// The stage's output: its folder is the work folder.
    pub output: PathBuf,
    /// More outputs of the stage (in the same folder), copied with it.
    pub also: Vec<PathBuf>,
    /// The earlier run's work folder.
    pub previous: Option<PathBuf>,
    /// The stage reads no timestamp from a file table.
    pub mtimes_unused: bool,
    /// The stage: program and arguments.
    pub command: Vec<OsString>,
}

/// What `run` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The earlier run's outputs were linked (hard links, the file
    /// system allowing).
    Linked,
    /// The earlier run's outputs were copied (no hard link possible).
    Copied,
    /// The stage ran.
    Ran,
    /// The stage, a re-run's, must see every record: it wrote nothing and
    /// said why; make takes the exit code ([`crate::cli::NEEDS_ALL`]) as
    /// its cue to run it on every record.
    NeedsAll,
}

/// Run the stage, or copy its outputs from the earlier run when the keys
/// are the same; either way, leave this run's key behind.
pub fn run(cfg: &Config) -> Result<Outcome> {
    let (program, args) = cfg
        .command
        .split_first()
        .ok_or_else(|| Error::msg("no command given after --"))?;
    let work = work_folder(&cfg.output);
    let key_path = key_path(&work, &cfg.output)?;
    let outputs: Vec<&Path> = std::iter::once(cfg.output.as_path())
        .chain(cfg.also.iter().map(PathBuf::as_path))
        .collect();
    let plan = Key::plan(cfg, &outputs, &work, program, args);
    let mut key = None;
    if let Some(old) = &cfg.previous {
        let k = plan.hash()?;
        if let Some(written) = reusable(old, &work, &outputs, &k)? {
            let mut linked = true;
            for out in &outputs {
                linked &= link_into(&old.join(file_name(out)?), out)?;
            }
            write_key(&key_path, &(k + &written))?;
            return Ok(if linked {
                Outcome::Linked
            } else {
                Outcome::Copied
            });
        }
        key = Some(k);
    }
    match fs::remove_file(&key_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).ctx(|| format!("cannot remove {}", key_path.display()))
        }
        _ => {}
    }
    let mut child = std::process::Command::new(program)
        .args(args)
        .spawn()
        .ctx(|| format!("cannot run {}", program.to_string_lossy()))?;
    // With nothing to compare it with, the key is hashed while the stage
    // runs (its inputs are read-only to it, and which arguments are inputs
    // was decided before): a single-threaded stage leaves a core to it.
    let key = key.map_or_else(|| plan.hash(), Ok);
    let status = child
        .wait()
        .ctx(|| format!("cannot run {}", program.to_string_lossy()))?;
    if status.code() == Some(crate::cli::NEEDS_ALL.into()) {
        return Ok(Outcome::NeedsAll);
    }
    if !status.success() {
        return Err(Error::msg(format!(
            "{} failed ({status}): {} not written",
            program.to_string_lossy(),
            cfg.output.display()
        )));
    }
    let written = output_lines(&outputs)?;
    write_key(&key_path, &(key? + &written))?;
    Ok(Outcome::Ran)
}

/// One line per output, with the hash of its bytes: an earlier output
/// changed since its key was written (by hand, by another program) is not
/// taken for the stage's.
fn output_lines(outputs: &[&Path]) -> Result<String> {
    let mut lines = String::new();
    for out in outputs {
        let name = file_name(out)?.to_string_lossy();
        lines.push_str(&format!("output\t{name}\t{}\n", hex(hash_file(out)?)));
    }
    Ok(lines)
}

/// The folder of `output` as written (`.` for a bare name).
fn work_folder(output: &Path) -> PathBuf {
    match output.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn file_name(p: &Path) -> Result<&OsStr> {
    p.file_name()
        .ok_or_else(|| Error::msg(format!("{}: not a file name", p.display())))
}

/// `WORK/reuse/NAME`.
fn key_path(work: &Path, output: &Path) -> Result<PathBuf> {
    Ok(work.join("reuse").join(file_name(output)?))
}

/// When the earlier run in `old` wrote the same key for these outputs and
/// still holds them as they were written: their lines of its key.
fn reusable(old: &Path, work: &Path, outputs: &[&Path], key: &str) -> Result<Option<String>> {
    if same_folder(old, work) {
        return Ok(None);
    }
    let Ok(old_key) = fs::read_to_string(key_path(old, outputs[0])?) else {
        return Ok(None);
    };
    let Some(written) = old_key.strip_prefix(key) else {
        return Ok(None);
    };
    let olds: Vec<PathBuf> = outputs
        .iter()
        .map(|o| Ok(old.join(file_name(o)?)))
        .collect::<Result<_>>()?;
    if !olds.iter().all(|o| o.is_file()) {
        return Ok(None);
    }
    let olds: Vec<&Path> = olds.iter().map(PathBuf::as_path).collect();
    Ok((output_lines(&olds)? == written).then(|| written.to_string()))
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The key of this run of the stage (module doc): one line for the
/// program, one per argument, one per input file.
struct Key<'a> {
    /// The program's name and its file.
    name: String,
    exe: PathBuf,
    /// The `arg` lines.
    args: String,
    /// Each input file, as its argument is shown, and its path.
    inputs: Vec<(Vec<u8>, &'a Path)>,
    mtimes_unused: bool,
}

impl<'a> Key<'a> {
    /// What the key names, nothing hashed yet: which arguments are input
    /// files (files that exist and are no output) is decided here, before
    /// the stage runs and can create one.
    fn plan(
        cfg: &Config,
        outputs: &[&Path],
        work: &Path,
        program: &OsStr,
        args: &'a [OsString],
    ) -> Key<'a> {
        let name = Path::new(program)
            .file_name()
            .unwrap_or(program)
            .to_string_lossy()
            .into_owned();
        let mut key = Key {
            name,
            exe: resolve(program),
            args: String::new(),
            inputs: Vec::new(),
            mtimes_unused: cfg.mtimes_unused,
        };
        for a in args {
            // Every fsim program's `-q` silences its standard error only.
            if a == "-q" || a == "--quiet" {
                continue;
            }
            let shown = normalised(a, work);
            key.args.push_str(&format!("arg\t{}\n", escaped(&shown)));
            let p = Path::new(a);
            if !outputs.contains(&p) && fs::metadata(p).is_ok_and(|m| m.is_file()) {
                key.inputs.push((shown, p));
            }
        }
        key
    }

    /// The key's text: the program's and the inputs' bytes hashed.
    fn hash(&self) -> Result<String> {
        let mut key = String::from("#fsim reuse v1\n");
        let program = hex(hash_file(&self.exe)?);
        key.push_str(&format!("program\t{}\t{program}\n", self.name));
        key.push_str(&self.args);
        for (shown, p) in &self.inputs {
            let h = hash_input(p, self.mtimes_unused)?;
            key.push_str(&format!("input\t{}\t{}\n", escaped(shown), hex(h)));
        }
        Ok(key)
    }
}

/// `arg` with the work folder, or a leading `WORK/`, written `@WORK`; in
/// a `NAME=PATH` argument (fsim-report's `--also json=WORK/report.json`),
/// its path.
fn normalised(arg: &OsStr, work: &Path) -> Vec<u8> {
    let bytes = arg.as_bytes();
    let named = bytes.iter().position(|&c| c == b'=').filter(|&at| {
        at > 0
            && bytes[..at]
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || b"-_".contains(c))
    });
    if let Some(at) = named {
        let path = normalised_path(&bytes[at + 1..], work);
        return [&bytes[..=at], path.as_slice()].concat();
    }
    normalised_path(bytes, work)
}

fn normalised_path(bytes: &[u8], work: &Path) -> Vec<u8> {
    let folder = work.as_os_str().as_bytes();
    if work == Path::new(".") {
        return bytes.to_vec();
    }
    if bytes == folder {
        return b"@WORK".to_vec();
    }
    match bytes
        .strip_prefix(folder)
        .and_then(|r| r.strip_prefix(b"/"))
    {
        Some(rest) => [b"@WORK/".as_slice(), rest].concat(),
        None => bytes.to_vec(),
    }
}

fn escaped(b: &[u8]) -> String {
    let mut out = Vec::new();
    crate::formats::escape_path(b, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(h: u128) -> String {
    let mut out = Vec::new();
    crate::formats::write_hex128(h, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The program's file: a name without `/` is looked up on PATH.
fn resolve(program: &OsStr) -> PathBuf {
    let p = Path::new(program);
    if program.as_bytes().contains(&b'/') {
        return p.to_path_buf();
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|d| d.join(p))
        .find(|c| c.is_file())
        .unwrap_or_else(|| p.to_path_buf())
}

fn hash_file(p: &Path) -> Result<u128> {
    let mut f = fs::File::open(p).ctx(|| format!("cannot open {}", p.display()))?;
    let mut h = Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .ctx(|| format!("reading {}", p.display()))?;
        if n == 0 {
            return Ok(h.digest128());
        }
        h.update(&buf[..n]);
    }
}

/// An input's hash: its bytes, or for a file table read by a stage that
/// reads no timestamps, its lines with the timestamps left out.
fn hash_input(p: &Path, mtimes_unused: bool) -> Result<u128> {
    if !mtimes_unused || !is_file_table(p)? {
        return hash_file(p);
    }
    let f = fs::File::open(p).ctx(|| format!("cannot open {}", p.display()))?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut h = Xxh3::new();
    let mut line = Vec::new();
    let mut out = Vec::new();
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .ctx(|| format!("reading {}", p.display()))?;
        if n == 0 {
            return Ok(h.digest128());
        }
        out.clear();
        without_mtime(&line, &mut out);
        h.update(&out);
    }
}

fn is_file_table(p: &Path) -> Result<bool> {
    let mut head = [0u8; 12];
    let mut f = fs::File::open(p).ctx(|| format!("cannot open {}", p.display()))?;
    let n = f
        .read(&mut head)
        .ctx(|| format!("reading {}", p.display()))?;
    Ok(head[..n] == *b"#fsim files ")
}

/// A file table's line as hashed when timestamps do not count: an entry
/// with its mtime zeroed, the trailer without its table digest (which
/// covers the timestamps), other lines as they are. A line that does not
/// parse is kept whole: the stage will say what is wrong with it.
fn without_mtime(line: &[u8], out: &mut Vec<u8>) {
    if line.starts_with(b"#end ") {
        for (i, field) in line.split(|&c| c == b'\t' || c == b'\n').enumerate() {
            if !field.starts_with(b"table-digest=") && !field.is_empty() {
                if i > 0 {
                    out.push(b'\t');
                }
                out.extend_from_slice(field);
            }
        }
        out.push(b'\n');
        return;
    }
    if line.starts_with(b"#") {
        out.extend_from_slice(line);
        return;
    }
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    match crate::formats::files::FileEntry::parse(body) {
        Ok(mut e) => {
            e.mtime_s = 0;
            e.mtime_ns = 0;
            e.write(out);
        }
        Err(_) => out.extend_from_slice(line),
    }
}

/// Put the earlier run's output `from` at `to`, atomically (a temporary
/// name in `to`'s folder, renamed into place).
///
/// A hard link where the file system allows one: reusing a stage then
/// costs no read, write or sync of its output (on Django and moment the
/// sort's, partition's and bin packing's copies were 0.1 s each, most of
/// it the sync), and no disk. Sharing the file is safe because no fsim
/// program writes into an existing file: every output is a new file
/// renamed over the old name ([`crate::io::Output::finish`]), so a later
/// run in either folder replaces its own name only. The link's
/// modification time is set to now: make compares it with the inputs this
/// run wrote, and an earlier time would have the next `make` run the stage
/// again. That time is the earlier run's file's too (one inode), so a
/// `make` in the earlier folder re-runs the stages after it (the same
/// bytes). Elsewhere (another file system, links not allowed, a file
/// whose time this user may not set), a copy. True when linked.
fn link_into(from: &Path, to: &Path) -> Result<bool> {
    if crate::io::link_dated_now(from, to).is_ok() {
        return Ok(true);
    }
    copy_into(from, to).map(|()| false)
}

/// Copy `from` to `to` atomically (a temporary file in `to`'s folder,
/// synced, renamed into place).
fn copy_into(from: &Path, to: &Path) -> Result<()> {
    let dir = work_folder(to);
    let tmp = tempfile::Builder::new()
        .prefix(".reuse.")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .ctx(|| format!("cannot create a temporary file in {}", dir.display()))?;
    fs::copy(from, tmp.path())
        .ctx(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    // As every stage's output ([`crate::io::Output::finish`]): on disk
    // before it is renamed into place.
    tmp.as_file()
        .sync_all()
        .ctx(|| format!("writing {}", to.display()))?;
    tmp.persist(to)
        .map_err(|e| e.error)
        .ctx(|| format!("cannot rename a temporary file to {}", to.display()))?;
    Ok(())
}

/// Write the key atomically, its folder created.
fn write_key(path: &Path, key: &str) -> Result<()> {
    let dir = work_folder(path);
    fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
    let mut out = crate::io::Output::create(Some(path))?;
    out.write_all(key.as_bytes())?;
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_in_the_work_folder_are_named_by_it() {
        let w = Path::new("/tmp/run2");
        assert_eq!(
            normalised(OsStr::new("/tmp/run2/files.tsv"), w),
            b"@WORK/files.tsv"
        );
        assert_eq!(
            normalised(OsStr::new("/tmp/run20/files.tsv"), w),
            b"/tmp/run20/files.tsv"
        );
        assert_eq!(normalised(OsStr::new("/tmp/run2"), w), b"@WORK");
        assert_eq!(
            normalised(OsStr::new("json=/tmp/run2/report.json"), w),
            b"json=@WORK/report.json"
        );
        assert_eq!(
            normalised(OsStr::new("json=/tmp/run20/r.json"), w),
            b"json=/tmp/run20/r.json"
        );
        assert_eq!(
            normalised(OsStr::new("--min-percent=50"), w),
            b"--min-percent=50"
        );
        assert_eq!(normalised(OsStr::new("-q"), w), b"-q");
    }

    #[test]
    fn a_file_table_without_timestamps_keeps_everything_else() {
        let line = b"0000000001\t1115\t1607634615.000000000\tc72d6ccd3f799e95b057cda363b7b6fb\ttext\traw\t1115\t-\t/r/a.txt\n";
        let mut out = Vec::new();
        without_mtime(line, &mut out);
        assert_eq!(
            out,
            b"0000000001\t1115\t0.000000000\tc72d6ccd3f799e95b057cda363b7b6fb\ttext\traw\t1115\t-\t/r/a.txt\n"
        );
        out.clear();
        without_mtime(
            b"#end files\tfiles=2\tskipped=1\ttable-digest=e3aa\n",
            &mut out,
        );
        assert_eq!(out, b"#end files\tfiles=2\tskipped=1\n");
    }
}
