//! File discovery for the chunk stage: which files get an id, and in which
//! order.
//!
//! * Roots are walked in argument order; inside each directory the entries
//!   are sorted by the bytes of their names, so file ids do not depend on the
//!   order in which the file system lists directories (or on the order in
//!   which the files were created).
//! * A root is used as given (a file root is just that file; a symlink root
//!   is followed, as `find -H` does). Below the roots symlinks are not
//!   followed unless `follow` is set, and then walkdir's loop detection
//!   reports cycles.
//! * Only regular files are reported. FIFOs, sockets and devices are never
//!   opened (opening a FIFO would block forever): they are counted as
//!   `special`, silently. Symlinks that are not followed are counted as
//!   `symlinks`, silently.
//! * Errors below a root (permission denied, entries vanishing during the
//!   walk, unreadable directories, loops) are reported as
//!   [`Event::Warning`]s and the walk goes on; the caller counts them as
//!   skipped. A command-line root that cannot be examined at all is a hard
//!   error ([`check_roots`]): the user asked for something that is not there.
//! * Paths of `PATH_MAX` (4096) bytes or more, which the kernel refuses in
//!   one call, are walked and read like any other: where walkdir reports
//!   `ENAMETOOLONG` for an entry, that entry is examined and its subtree
//!   walked with [`crate::io::longpath`] (directory-relative calls), in the same
//!   order and with the same rules; the workers open such files with
//!   [`crate::io::longpath::open_file`]. Ordinary paths never take that route.
//! * `--files-from` lists paths as raw bytes (newline- or NUL-separated);
//!   each listed path is treated like a root, except that a missing one is
//!   only a warning (lists go stale).
//! * One file is walked once, however many ways lead to it. A folder is
//!   known by its (device, inode): one reached again (a root given twice,
//!   `a` and `a/sub`, `/x/./r` and `/x/r/`, a followed link to a folder
//!   of the tree, a bind mount) is not walked again, and counted as
//!   `repeated`. A file root inside a folder root, and with `follow` a link
//!   to a file or folder inside the roots (walked by its own name) or a
//!   second link to one file outside them, are passed over the same way
//!   (the folders' identities are kept: ~40 bytes a folder). Hard links
//!   are several names of one file on purpose: each is walked, and the
//!   reader marks them with their identity (the file table's `@DEV:INO`),
//!   so that the reports count them once and never act on them.
//! * A folder holding a `CACHEDIR.TAG` written by fsim (a work folder, see
//!   [`is_fsim_work`]) is never walked: fsim's own files are never input.
//!   Counted as `work_folders`.
//! * The walking program's own outputs (`own_outputs`) and their temporary
//!   files are never input, wherever the roots lead.
//! * `exclude` patterns ([`PathPattern`], matched against the escaped path
//!   as walked) leave out the files and the folders (with everything below)
//!   they match, below the roots, and the files outside `min_size` and
//!   `max_size` (a stat each, only when a limit is set); counted as
//!   `excluded`.

use crate::error::{Context, Error, Result};
use crate::formats::escape_path;
use crate::formats::glob::PathPattern;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::BufRead;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// What to walk.
#[derive(Debug, Clone, Default)]
pub struct WalkConfig {
    /// Roots, walked in this order.
    pub roots: Vec<PathBuf>,
    /// Follow symlinks below the roots.
    pub follow: bool,
    /// A file listing more paths (`-` for standard input), walked after the
    /// roots.
    pub files_from: Option<PathBuf>,
    /// The list is NUL-separated instead of newline-separated.
    pub null: bool,
    /// Files and folders left out (module doc).
    pub exclude: Vec<PathPattern>,
    /// Files smaller than this many bytes are left out (0: none).
    pub min_size: u64,
    /// Files larger than this many bytes are left out.
    pub max_size: Option<u64>,
    /// The files the walking program writes: never input, nor their
    /// temporary files beside them (`.NAME.XXXXXX.tmp`, [`crate::io::Output`]).
    pub own_outputs: Vec<PathBuf>,
}

impl WalkConfig {
    /// The walk of `roots` that `fsim-chunk` does with these options (`-L`,
    /// `--follow`, `--exclude`, `--min-size`, `--max-size`, as `--NAME
    /// VALUE` or `--NAME=VALUE`; other words are the chunker's): how the
    /// driver's stat walk sees the folder as the run's file table did.
    pub fn of_chunk_options(roots: Vec<PathBuf>, words: &[&str]) -> Result<WalkConfig> {
        let mut cfg = WalkConfig {
            roots,
            ..Default::default()
        };
        let mut it = words.iter();
        while let Some(&w) = it.next() {
            let (name, inline) = match w.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v)),
                _ => (w, None),
            };
            if matches!(name, "-L" | "--follow") {
                cfg.follow = true;
                continue;
            }
            if !matches!(name, "--exclude" | "--min-size" | "--max-size") {
                continue;
            }
            let Some(value) = inline.or_else(|| it.next().copied()) else {
                return Err(Error::msg(format!("{name}: expected a value")));
            };
            let size =
                || crate::cli::parse_size(value).map_err(|e| Error::msg(format!("{name}: {e}")));
            match name {
                "--exclude" => cfg.exclude.push(PathPattern::parse(value)),
                "--min-size" => cfg.min_size = size()?,
                _ => cfg.max_size = Some(size()?),
            }
        }
        Ok(cfg)
    }

    /// The rules that leave files out, as fsim-chunk's options
    /// (`--exclude=PATTERN --min-size=N --max-size=N`, each pattern escaped
    /// as paths are: no tab or newline), or `None` without any: the file
    /// table's trailer records them for the report.
    pub fn rules(&self) -> Option<String> {
        let esc = |p: &PathPattern| crate::formats::escape_path_string(p.to_string().as_bytes());
        let mut words: Vec<String> = self
            .exclude
            .iter()
            .map(|p| format!("--exclude={}", esc(p)))
            .collect();
        if self.min_size > 0 {
            words.push(format!("--min-size={}", self.min_size));
        }
        if let Some(n) = self.max_size {
            words.push(format!("--max-size={n}"));
        }
        (!words.is_empty()).then(|| words.join(" "))
    }
}

/// What the walk reports, in walk order.
#[derive(Debug)]
pub enum Event {
    /// A regular file to read.
    File(PathBuf),
    /// Something that could not be examined: its path and why.
    Warning(PathBuf, String),
}

/// Counts of entries passed over silently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalkStats {
    /// FIFOs, sockets, character and block devices.
    pub special: u64,
    /// Symlinks not followed.
    pub symlinks: u64,
    /// Warnings reported.
    pub warnings: u64,
    /// Folders and files reached a second time, walked once.
    pub repeated: u64,
    /// fsim work folders left out.
    pub work_folders: u64,
    /// Files and folders left out by an `exclude` pattern or the size
    /// limits.
    pub excluded: u64,
}

/// The first line of a cache directory tag (<https://bford.info/cachedir/>).
pub const CACHEDIR_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55";

/// Whether `dir` is an fsim work folder: it holds a `CACHEDIR.TAG` with the
/// tag's signature and the word fsim. Other tagged folders (caches of
/// other programs) are walked: they may hold the only copy of a file.
pub fn is_fsim_work(dir: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(dir.join("CACHEDIR.TAG")) else {
        return false;
    };
    let mut head = Vec::with_capacity(512);
    if f.take(512).read_to_end(&mut head).is_err() {
        return false;
    }
    head.starts_with(CACHEDIR_SIGNATURE.as_bytes())
        && memchr::memmem::find(&head, b"fsim").is_some()
}

/// What the walk remembers to walk each file once (module doc).
struct Seen {
    dirs: HashSet<(u64, u64)>,
    /// Identities of the file roots and of the files reached through a
    /// link to outside the roots.
    files: HashSet<(u64, u64)>,
    /// Canonical paths of the folder roots: a file root inside one is
    /// walked with it.
    dir_roots: Vec<PathBuf>,
    /// (folder identity, file name) of each of the program's own outputs.
    outputs: Vec<((u64, u64), std::ffi::OsString)>,
    /// The folders of its outputs as the walk names them, with the names.
    output_dirs: Vec<(PathBuf, std::ffi::OsString)>,
}

impl Seen {
    fn new(cfg: &WalkConfig) -> Seen {
        use std::os::unix::fs::MetadataExt;
        let dir_roots = cfg
            .roots
            .iter()
            .filter(|r| r.is_dir())
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        let outputs = cfg
            .own_outputs
            .iter()
            .filter_map(|o| {
                let dir = match o.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                let m = std::fs::metadata(dir).ok()?;
                Some(((m.dev(), m.ino()), o.file_name()?.to_owned()))
            })
            .collect();
        Seen {
            dirs: HashSet::new(),
            files: HashSet::new(),
            dir_roots,
            outputs,
            output_dirs: Vec::new(),
        }
    }

    /// False when the folder at `path` (`meta` its own, links followed)
    /// was walked already.
    fn first_dir(&mut self, path: &Path, meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        let id = (meta.dev(), meta.ino());
        for (d, name) in &self.outputs {
            if *d == id {
                self.output_dirs.push((path.to_path_buf(), name.clone()));
            }
        }
        self.dirs.insert(id)
    }

    /// Whether `path` is one of the program's own outputs, or the
    /// temporary file of one.
    fn own_output(&self, path: &Path) -> bool {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return false;
        };
        let name = name.as_bytes();
        self.output_dirs.iter().any(|(d, out)| {
            let out = out.as_bytes();
            d == dir
                && (name == out
                    || name.len() > out.len() + 2
                        && name[0] == b'.'
                        && name[1..].starts_with(out)
                        && name.ends_with(b".tmp"))
        })
    }

    /// Whether `path`, reached through a link or given as a root, leads
    /// into a folder root: it is walked there, by its own name.
    fn inside_roots(&self, path: &Path) -> bool {
        std::fs::canonicalize(path).is_ok_and(|c| self.dir_roots.iter().any(|d| c.starts_with(d)))
    }

    /// False when the file `path` is walked by another way: a file root
    /// inside a folder root, a followed link to a file of the roots, or a
    /// second link to one file outside them. Hard links (no link on the
    /// way) are names of their own.
    fn first_file(&mut self, path: &Path, root: bool, via_link: bool) -> bool {
        use std::os::unix::fs::MetadataExt;
        if !(root || via_link) {
            return true;
        }
        if self.inside_roots(path) {
            return false;
        }
        match std::fs::metadata(path) {
            Ok(m) => self.files.insert((m.dev(), m.ino())),
            Err(_) => true,
        }
    }
}

/// Format a warning line as every stage prints it:
/// `<prog>: warning: <escaped path>: <message>`.
pub fn warning_line(prog: &str, path: &Path, msg: &str) -> String {
    let mut esc = Vec::with_capacity(path.as_os_str().len());
    escape_path(path.as_os_str().as_bytes(), &mut esc);
    format!("{prog}: warning: {}: {msg}", String::from_utf8_lossy(&esc))
}

/// Fail when a command-line root cannot be examined at all (it does not
/// exist, or its parent cannot be searched): an error, exit code 2, before
/// anything is written.
pub fn check_roots(roots: &[PathBuf]) -> Result<()> {
    for r in roots {
        crate::io::longpath::symlink_metadata(r).ctx(|| {
            let mut esc = Vec::new();
            escape_path(r.as_os_str().as_bytes(), &mut esc);
            String::from_utf8_lossy(&esc).into_owned()
        })?;
    }
    Ok(())
}

/// Walk everything `cfg` names and hand each event to `sink`, which returns
/// false to stop early (e.g. the output was closed). Errors are only those
/// of reading the `--files-from` list; everything else is an event.
pub fn walk(cfg: &WalkConfig, mut sink: impl FnMut(Event) -> bool) -> Result<WalkStats> {
    let mut stats = WalkStats::default();
    let mut seen = Seen::new(cfg);
    for root in &cfg.roots {
        if !walk_root(root, cfg, &mut seen, &mut stats, &mut sink) {
            return Ok(stats);
        }
    }
    if let Some(list) = &cfg.files_from {
        let (mut input, name) = crate::formats::open_input(list)?;
        let sep = if cfg.null { 0 } else { b'\n' };
        let mut buf = Vec::with_capacity(256);
        loop {
            buf.clear();
            let n = input
                .read_until(sep, &mut buf)
                .ctx(|| format!("reading the list of files {name}"))?;
            if n == 0 {
                break;
            }
            if buf.last() == Some(&sep) {
                buf.pop();
            }
            if buf.is_empty() {
                continue;
            }
            if buf.contains(&0) {
                return Err(Error::msg(format!(
                    "{name}: a path contains a NUL byte (use -0 for NUL-separated lists)"
                )));
            }
            let path = PathBuf::from(OsStr::from_bytes(&buf));
            if !walk_root(&path, cfg, &mut seen, &mut stats, &mut sink) {
                break;
            }
        }
    }
    Ok(stats)
}

/// Walk one root; false when the sink asked to stop.
fn walk_root(
    root: &Path,
    cfg: &WalkConfig,
    seen: &mut Seen,
    stats: &mut WalkStats,
    sink: &mut impl FnMut(Event) -> bool,
) -> bool {
    let follow = cfg.follow;
    let mut it = WalkDir::new(root)
        .follow_links(follow)
        .follow_root_links(true)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = it.next() {
        let ev = match entry {
            Ok(e) => {
                let ft = e.file_type();
                // A root given as a link is its target (walkdir walks it but
                // types the entry as the link).
                let (is_dir, is_file) = match e.depth() == 0 && ft.is_symlink() {
                    true => std::fs::metadata(e.path())
                        .map_or((false, false), |m| (m.is_dir(), m.is_file())),
                    false => (ft.is_dir(), ft.is_file()),
                };
                if is_dir {
                    if !enter_dir(&e, cfg, seen, stats) {
                        it.skip_current_dir();
                    }
                    continue;
                } else if is_file {
                    if e.depth() > 0 && excluded(e.path(), &cfg.exclude) || !size_ok(&e, cfg) {
                        stats.excluded += 1;
                        continue;
                    }
                    if !seen.output_dirs.is_empty() && seen.own_output(e.path()) {
                        continue;
                    }
                    if !seen.first_file(e.path(), e.depth() == 0, e.path_is_symlink()) {
                        stats.repeated += 1;
                        continue;
                    }
                    Event::File(e.into_path())
                } else if ft.is_symlink() {
                    stats.symlinks += 1;
                    continue;
                } else {
                    stats.special += 1;
                    continue;
                }
            }
            Err(err) => {
                if let (Some(path), Some(io), None) =
                    (err.path(), err.io_error(), err.loop_ancestor())
                {
                    if crate::io::longpath::too_long(io) {
                        if !walk_long(path, root, follow, stats, sink) {
                            return false;
                        }
                        continue;
                    }
                }
                stats.warnings += 1;
                let path = err.path().unwrap_or(root).to_path_buf();
                let msg = match (err.loop_ancestor(), err.io_error()) {
                    (Some(anc), _) => {
                        let mut esc = Vec::new();
                        escape_path(anc.as_os_str().as_bytes(), &mut esc);
                        format!("file system loop back to {}", String::from_utf8_lossy(&esc))
                    }
                    (None, Some(io)) => io.to_string(),
                    (None, None) => err.to_string(),
                };
                Event::Warning(path, msg)
            }
        };
        if !sink(ev) {
            return false;
        }
    }
    true
}

/// Whether to walk into the folder `e`: not when it was walked already, is
/// excluded, or is an fsim work folder (each counted).
fn enter_dir(
    e: &walkdir::DirEntry,
    cfg: &WalkConfig,
    seen: &mut Seen,
    stats: &mut WalkStats,
) -> bool {
    if e.depth() > 0 && excluded(e.path(), &cfg.exclude) {
        stats.excluded += 1;
        return false;
    }
    // A followed link into the roots: walked there, by its own name.
    if e.depth() > 0 && e.path_is_symlink() && seen.inside_roots(e.path()) {
        stats.repeated += 1;
        return false;
    }
    // A folder that cannot be examined is walked: walkdir reports why. A
    // root given as a link is its target (walkdir's entry is the link's).
    let meta = match e.depth() {
        0 => std::fs::metadata(e.path()),
        _ => e.metadata().map_err(std::io::Error::from),
    };
    if let Ok(meta) = meta {
        if !seen.first_dir(e.path(), &meta) {
            stats.repeated += 1;
            return false;
        }
    }
    if is_fsim_work(e.path()) {
        stats.work_folders += 1;
        return false;
    }
    true
}

/// Whether the file `e` is within the size limits: a stat, only when there
/// are limits (a file that cannot be examined is walked: its read warns).
fn size_ok(e: &walkdir::DirEntry, cfg: &WalkConfig) -> bool {
    if cfg.min_size == 0 && cfg.max_size.is_none() {
        return true;
    }
    let meta = match e.depth() {
        0 => std::fs::metadata(e.path()),
        _ => e.metadata().map_err(std::io::Error::from),
    };
    match meta {
        Ok(m) => m.len() >= cfg.min_size && cfg.max_size.is_none_or(|x| m.len() <= x),
        Err(_) => true,
    }
}

/// Whether an `exclude` pattern matches `path` (escaped, as the file table
/// and the reports write it).
fn excluded(path: &Path, exclude: &[PathPattern]) -> bool {
    if exclude.is_empty() {
        return false;
    }
    let s = crate::formats::escape_path_string(path.as_os_str().as_bytes());
    exclude.iter().any(|p| p.matches(&s))
}

/// Walk what walkdir could not reach because its path is `PATH_MAX` or
/// longer: `path` itself (`root`, or an entry met below it), then, if it is
/// a directory, its subtree, with the same order (names in byte order,
/// depth first) and the same rules as [`walk_root`]: symlinks followed only
/// when `follow` (a root always), loops warned about, special files
/// counted. An explicit stack, not recursion: a deep tree is the very case
/// here. False when the sink asked to stop.
fn walk_long(
    path: &Path,
    root: &Path,
    follow: bool,
    stats: &mut WalkStats,
    sink: &mut impl FnMut(Event) -> bool,
) -> bool {
    use crate::io::longpath::{self, Entry, Kind};
    use std::os::unix::fs::MetadataExt;
    fn warn(
        stats: &mut WalkStats,
        sink: &mut impl FnMut(Event) -> bool,
        path: PathBuf,
        msg: String,
    ) -> bool {
        stats.warnings += 1;
        sink(Event::Warning(path, msg))
    }
    let meta = if follow || path == root {
        longpath::metadata(path)
    } else {
        longpath::symlink_metadata(path)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) => return warn(stats, sink, path.to_path_buf(), e.to_string()),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        return sink(Event::File(path.to_path_buf()));
    } else if ft.is_symlink() {
        stats.symlinks += 1;
        return true;
    } else if !ft.is_dir() {
        stats.special += 1;
        return true;
    }
    let mut ancestors = ancestors_of(path, root, follow);
    let mut stack: Vec<(PathBuf, std::vec::IntoIter<Entry>)> = Vec::new();
    match longpath::read_dir(path, follow) {
        Ok(entries) => {
            ancestors.push((meta.dev(), meta.ino(), path.to_path_buf()));
            stack.push((path.to_path_buf(), entries.into_iter()));
        }
        Err(e) => return warn(stats, sink, path.to_path_buf(), e.to_string()),
    }
    while let Some((dir, entries)) = stack.last_mut() {
        let Some(entry) = entries.next() else {
            stack.pop();
            ancestors.pop();
            continue;
        };
        let child = dir.join(&entry.name);
        let go_on = match entry.kind {
            Err(e) => warn(stats, sink, child, e.to_string()),
            Ok(Kind::File) => sink(Event::File(child)),
            Ok(Kind::Symlink) => {
                stats.symlinks += 1;
                true
            }
            Ok(Kind::Special) => {
                stats.special += 1;
                true
            }
            Ok(Kind::Dir { dev, ino }) => {
                let looped = ancestors
                    .iter()
                    .find(|a| follow && (a.0, a.1) == (dev, ino));
                if let Some((_, _, anc)) = looped {
                    let mut esc = Vec::new();
                    escape_path(anc.as_os_str().as_bytes(), &mut esc);
                    let msg = format!("file system loop back to {}", String::from_utf8_lossy(&esc));
                    warn(stats, sink, child, msg)
                } else {
                    match longpath::read_dir(&child, follow) {
                        Ok(entries) => {
                            ancestors.push((dev, ino, child.clone()));
                            stack.push((child, entries.into_iter()));
                            true
                        }
                        Err(e) => warn(stats, sink, child, e.to_string()),
                    }
                }
            }
        };
        if !go_on {
            return false;
        }
    }
    true
}

/// The directories from `root` down to the one above `path`, for loop
/// detection when following symlinks (as walkdir keeps them): those above
/// `path` too, since a link below may point back above it. Empty when not
/// following.
fn ancestors_of(path: &Path, root: &Path, follow: bool) -> Vec<(u64, u64, PathBuf)> {
    use std::os::unix::fs::MetadataExt;
    let mut ancestors = Vec::new();
    if follow {
        for a in path.ancestors().skip(1) {
            if !a.starts_with(root) {
                break;
            }
            if let Ok(m) = crate::io::longpath::metadata(a) {
                ancestors.push((m.dev(), m.ino(), a.to_path_buf()));
            }
        }
        ancestors.reverse();
    }
    ancestors
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn collect(cfg: &WalkConfig) -> (Vec<String>, Vec<String>, WalkStats) {
        let (mut files, mut warns) = (Vec::new(), Vec::new());
        let stats = walk(cfg, |ev| {
            match ev {
                Event::File(p) => files.push(p.display().to_string()),
                Event::Warning(p, m) => warns.push(format!("{}: {m}", p.display())),
            }
            true
        })
        .unwrap();
        (files, warns, stats)
    }

    #[test]
    fn sorted_walk_in_root_order() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for p in ["b/z", "b/a", "a", "c/d/e"] {
            let p = root.join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, b"x").unwrap();
        }
        std::os::unix::fs::symlink(root.join("a"), root.join("b/link")).unwrap();
        let cfg = WalkConfig {
            roots: vec![root.join("c"), root.to_path_buf(), root.join("a")],
            ..Default::default()
        };
        let (files, warns, stats) = collect(&cfg);
        let rel: Vec<String> = files
            .iter()
            .map(|f| f.replace(&root.display().to_string(), ""))
            .collect();
        // `c` again inside the root, and the file root `a` inside it: once.
        assert_eq!(rel, ["/c/d/e", "/a", "/b/a", "/b/z"]);
        assert!(warns.is_empty());
        assert_eq!((stats.symlinks, stats.repeated), (1, 2));
        let cfg = WalkConfig {
            roots: vec![root.join("b")],
            follow: true,
            ..Default::default()
        };
        assert_eq!(collect(&cfg).0.len(), 3);
    }

    /// Every way of reaching one file twice gives it once; hard links are
    /// names of their own; work folders, excluded paths and files outside
    /// the size limits are left out.
    #[test]
    fn chunk_options_give_the_chunk_walk() {
        let words = [
            "-q",
            "-L",
            "--exclude",
            "*.log",
            "--exclude=tmp",
            "--min-size=1K",
            "--max-size",
            "2M",
            "--avg",
            "300",
        ];
        let cfg = WalkConfig::of_chunk_options(vec![PathBuf::from("r")], &words).unwrap();
        assert!(cfg.follow);
        assert_eq!(
            cfg.exclude,
            [PathPattern::parse("*.log"), PathPattern::parse("tmp")]
        );
        assert_eq!((cfg.min_size, cfg.max_size), (1024, Some(2 << 20)));
        assert_eq!(
            cfg.rules().unwrap(),
            "--exclude=*.log --exclude=tmp --min-size=1024 --max-size=2097152"
        );
        assert_eq!(WalkConfig::default().rules(), None);
        let err = WalkConfig::of_chunk_options(vec![], &["--min-size", "lots"]).unwrap_err();
        assert!(err.to_string().starts_with("--min-size: "), "{err}");
    }

    #[test]
    fn one_file_is_walked_once() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().join("r");
        fs::create_dir_all(r.join("sub")).unwrap();
        fs::create_dir_all(r.join("work")).unwrap();
        fs::write(r.join("a.txt"), b"aaaa").unwrap();
        fs::write(r.join("sub/b.txt"), b"bb").unwrap();
        fs::hard_link(r.join("a.txt"), r.join("sub/a-link.txt")).unwrap();
        fs::write(
            r.join("work/CACHEDIR.TAG"),
            format!("{CACHEDIR_SIGNATURE}\n# fsim\n"),
        )
        .unwrap();
        fs::write(r.join("work/chunks.tsv"), b"x").unwrap();
        std::os::unix::fs::symlink(r.join("sub"), r.join("zlink")).unwrap();
        std::os::unix::fs::symlink(r.join("a.txt"), r.join("sub/zfile")).unwrap();
        let s = |p: &str| r.join(p).display().to_string();
        let want = vec![s("a.txt"), s("sub/a-link.txt"), s("sub/b.txt")];
        let r_str = r.display().to_string();
        let forms = [
            vec![r.clone(), r.clone()],
            vec![PathBuf::from(format!("{r_str}/")), r.join("sub")],
            vec![r.join("sub"), r.join("./sub/.."), r.join("sub/b.txt")],
        ];
        for (i, roots) in forms.into_iter().enumerate() {
            for follow in [false, true] {
                let cfg = WalkConfig {
                    roots: roots.clone(),
                    follow,
                    ..Default::default()
                };
                let (files, warns, stats) = collect(&cfg);
                assert!(warns.is_empty(), "{warns:?}");
                assert_eq!(stats.work_folders, 1);
                if i == 2 {
                    // The sub-folder first: its files keep its paths.
                    let up = r.join("./sub/../a.txt").display().to_string();
                    assert_eq!(files, [s("sub/a-link.txt"), s("sub/b.txt"), up]);
                } else {
                    assert_eq!(files, want, "roots {:?} follow {follow}", cfg.roots);
                }
            }
        }
        // A root that is a link to another root: the first named walks it.
        let l = d.path().join("l");
        std::os::unix::fs::symlink(&r, &l).unwrap();
        for roots in [vec![l.clone(), r.clone()], vec![r.clone(), l.clone()]] {
            let (files, _, stats) = collect(&WalkConfig {
                roots: roots.clone(),
                ..Default::default()
            });
            let first = roots[0].display().to_string();
            let want: Vec<String> = ["a.txt", "sub/a-link.txt", "sub/b.txt"]
                .iter()
                .map(|p| format!("{first}/{p}"))
                .collect();
            assert_eq!((files, stats.repeated), (want, 1), "roots {roots:?}");
        }
        let cfg = WalkConfig {
            roots: vec![r.clone()],
            exclude: vec![PathPattern::parse("*/sub"), PathPattern::parse("zz")],
            min_size: 3,
            ..Default::default()
        };
        let (files, _, stats) = collect(&cfg);
        assert_eq!(files, vec![s("a.txt")]);
        assert_eq!(stats.excluded, 1);
        let cfg = WalkConfig {
            roots: vec![r.clone()],
            max_size: Some(3),
            ..Default::default()
        };
        assert_eq!(collect(&cfg).0, vec![s("sub/b.txt")]);
    }

    #[test]
    fn missing_root_is_an_error_and_listed_missing_is_a_warning() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_roots(&[d.path().join("nope")]).is_err());
        assert!(check_roots(&[d.path().to_path_buf()]).is_ok());
        let list = d.path().join("list");
        fs::write(d.path().join("f"), b"x").unwrap();
        fs::write(
            &list,
            format!(
                "{}\0{}\0",
                d.path().join("nope").display(),
                d.path().join("f").display()
            ),
        )
        .unwrap();
        let cfg = WalkConfig {
            files_from: Some(list),
            null: true,
            ..Default::default()
        };
        let (files, warns, stats) = collect(&cfg);
        assert_eq!(files.len(), 1);
        assert_eq!(warns.len(), 1);
        assert_eq!(stats.warnings, 1);
    }

    /// A tree whose lower part is beyond PATH_MAX is walked as if there
    /// were no limit: same order, same rules, the loop found when following.
    #[test]
    fn paths_over_path_max_are_walked_in_order() {
        use crate::io::longpath;
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("r");
        let mut deep = root.join("deep");
        // The deepest directory whose path is under the limit with room for
        // no 250-byte name more: a file named there crosses the limit while
        // its directory does not (walkdir lists it; only opening it is long).
        let mut crossing = None;
        for _ in 0..18 {
            deep.push("L".repeat(250));
            let len = deep.as_os_str().len();
            if len < longpath::PATH_MAX && len + 251 >= longpath::PATH_MAX {
                crossing = Some(deep.join("F".repeat(250)));
            }
        }
        let crossing = crossing.expect("a level crosses the limit");
        assert!(deep.as_os_str().len() > longpath::PATH_MAX + 200);
        longpath::create_dir_all(&deep.join("sub")).unwrap();
        for f in [
            &deep.join("b"),
            &deep.join("a"),
            &deep.join("sub/c"),
            &crossing,
        ] {
            longpath::write(f, b"x").unwrap();
        }
        fs::write(root.join("a.txt"), b"x").unwrap();
        fs::write(root.join("z.txt"), b"x").unwrap();
        // Points back to an ancestor: a loop when following links.
        let link = deep.join("up");
        assert!(crate::io::longpath::too_long(
            &fs::symlink_metadata(&deep).unwrap_err()
        ));
        longpath::symlink(&root.join("deep"), &link).unwrap();
        let cfg = WalkConfig {
            roots: vec![root.clone()],
            ..Default::default()
        };
        // Long names shortened in what is compared, so a failure is legible.
        let short = |v: Vec<String>| -> Vec<String> {
            v.iter()
                .map(|s| {
                    s.replace(&"L".repeat(250), "L")
                        .replace(&"F".repeat(250), "F")
                })
                .collect()
        };
        let (files, warns, stats) = collect(&cfg);
        let (files, warns) = (short(files), short(warns));
        let show = |p: &Path| short(vec![p.display().to_string()]).remove(0);
        let want = [
            show(&root.join("a.txt")),
            show(&crossing),
            show(&deep.join("a")),
            show(&deep.join("b")),
            show(&deep.join("sub/c")),
            show(&root.join("z.txt")),
        ];
        assert_eq!(files, want);
        assert!(warns.is_empty(), "{warns:?}");
        assert_eq!((stats.symlinks, stats.warnings), (1, 0));

        let cfg = WalkConfig {
            follow: true,
            ..cfg
        };
        let (files, warns, stats) = collect(&cfg);
        assert_eq!(short(files), want);
        assert_eq!(
            short(warns),
            short(vec![format!(
                "{}: file system loop back to {}",
                link.display(),
                root.join("deep").display()
            )])
        );
        assert_eq!((stats.symlinks, stats.warnings), (0, 1));

        // A root beyond the limit: walked from there.
        let cfg = WalkConfig {
            roots: vec![deep.join("sub")],
            ..Default::default()
        };
        assert_eq!(short(collect(&cfg).0), [show(&deep.join("sub/c"))]);
        assert!(check_roots(&cfg.roots).is_ok());
    }

    #[test]
    fn warning_lines_escape_paths() {
        let l = warning_line(
            "fsim-chunk",
            Path::new(OsStr::from_bytes(b"a\nb\xff")),
            "Permission denied",
        );
        assert_eq!(l, "fsim-chunk: warning: a\\nb\\xff: Permission denied");
    }
}
