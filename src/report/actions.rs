//! Actions for identical files: a shell script a person reviews and runs,
//! never run by fsim (`fsim-report --format sh`, make's `FORMATS=sh`:
//! `report.sh`), as rmlint and fclones offer. It is the one place where
//! fsim can destroy data, so it is built so that it cannot remove the last
//! copy of anything, whatever happened between the report and the action.
//!
//! Each identical set keeps one file, chosen by `--keep` ([`keep`]; by
//! default the shallowest, then the oldest, then the first path), and
//! lists the others as extra copies. Run as it is, the script only says
//! what it would do (`--dry-run`, the default); `--link` replaces each
//! extra copy by a hard link to the kept file, `--remove` removes it.
//!
//! When the plan is written, each file's folder is resolved to its
//! physical path (`canonicalize`) and the file is looked at (`lstat`): a
//! file whose folder cannot be resolved, or that is no longer a regular
//! file, is listed in a comment and not planned. Names of one file (hard
//! links: the same `link` in the file table, or the same device and inode
//! now) are never planned against each other; a set whose files are all
//! names of one file plans nothing and says so.
//!
//! Before acting on a copy the script checks, for the kept file and the
//! copy: that each path's folder still resolves (`cd -P`, `pwd -P`) to the
//! physical folder recorded (a folder on the way swapped for a link, or
//! moved, is refused), that each is a regular file and not a link, with
//! the size on disk and the modification time (seconds) recorded, that
//! the two are equal byte for byte (`cmp`), and that they are not one
//! file (`-ef`). It acts on the physical paths it checked. A hard link is
//! made beside the copy and renamed over it, so a failed link (another
//! file system) leaves the copy in place; a name in the way of the link is
//! refused, never removed.
//!
//! A second run does nothing more and says so: a copy that is gone while
//! the kept file is still as recorded is "already removed", a copy that is
//! now the kept file (`-ef`) is "already linked" (with `--remove`, one file
//! under two names is refused: removing a name frees nothing, and a name
//! reached by two paths would be the last one). The last line counts the
//! copies handled, already done and refused; the exit status is 0 only
//! when nothing was refused.
//!
//! A folder pair that is an identical tree (the same relative paths, each
//! file equal: [`crate::report::folders::TreeCopy`]) is one block, `tree
//! KEPT KDIR COPY CDIR FILES FUNCTION`: the two folders must still resolve
//! to the physical paths recorded, neither be a link, be two folders and
//! neither hold the other; every file of the copy is checked as above
//! against its counterpart, and the copy must still hold exactly the files
//! the run recorded (`find`, anything not a folder); only then is the
//! whole copy replaced by links (`--link`) or removed (`--remove`), file
//! by file, each checked again, and then its folders left empty removed
//! with `rmdir`. Never `rm -r`: a file put into the copy after it was
//! counted would go with it; it stays, with its folder. Anything changed
//! before the count refuses the whole tree. A pair is planned as
//! a tree only when, at planning time, both folders resolve, neither holds
//! the other, and every file resolves inside its folder and is not a name
//! of its counterpart; else it is left to its files' sets, with a comment.
//! Trees are chosen in report order so that no kept folder is inside, or
//! holds, a removed one. The identical sets then skip the files of the
//! trees' copies, and keep one of the kept trees' files when they hold
//! one, acting on none of those; a file that is another name of a tree's
//! file (the same device and inode: a root that is a link into the tree)
//! counts as that file. So no run undoes or redoes another's work.
//!
//! Members of archives (`a.zip!/m.txt`) are never acted on: their paths
//! name no file. A set lists them in a comment and acts only on its files
//! on disk; an identical tree inside an archive is left to the sets.
//!
//! Paths are those of the file table (the root as given): run the script
//! from the folder fsim ran in. They are single-quoted byte for byte, so
//! any name (spaces, quotes, newlines, non-UTF-8 bytes) reaches the
//! commands unchanged.

pub mod keep;

use crate::error::Result;
use crate::formats::escape_path_string as esc;
use crate::report::model::{IdenticalSet, Report};
use crate::report::stream::Buffered;
use keep::{Candidate, Keep};
use std::collections::{HashMap, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::rc::Rc;

/// The script's fixed part: options, the checks and the actions.
const HEAD: &str = include_str!("actions/head.sh");

/// The script's last lines: what was done.
const TAIL: &str = r#"if [ $mode = dry ]; then w="would be handled"; else w="handled ($mode)"; fi
warn "fsim: $acted copies $w, $already already done, $refused refused"
[ "$refused" -eq 0 ]
"#;

/// `s` single-quoted for the shell, byte for byte.
fn quote(s: &[u8]) -> Vec<u8> {
    let mut q = Vec::with_capacity(s.len() + 2);
    q.push(b'\'');
    for &c in s {
        if c == b'\'' {
            q.extend_from_slice(b"'\\''");
        } else {
            q.push(c);
        }
    }
    q.push(b'\'');
    q
}

/// Whether folder paths `x` and `y` are one, or one holds the other.
fn related(x: &[u8], y: &[u8]) -> bool {
    let (s, l) = if x.len() <= y.len() { (x, y) } else { (y, x) };
    s == b"/" || (l.starts_with(s) && (l.len() == s.len() || l[s.len()] == b'/'))
}

/// The folder of `path` as the script finds it: what precedes the last
/// `/` (`/` for a file at the root), `.` when there is none.
fn parent(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&c| c == b'/') {
        Some(0) => b"/",
        Some(i) => &path[..i],
        None => b".",
    }
}

/// A folder path fit for the script's `find` and `rmdir`: no trailing `/`
/// (through which they would follow a link), and not `.`, `..` or the
/// root.
fn tree_path(path: &[u8]) -> Option<&[u8]> {
    let mut p = path;
    while p.len() > 1 && p.ends_with(b"/") {
        p = &p[..p.len() - 1];
    }
    let last = &p[p.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1)..];
    (!p.is_empty() && p != b"/" && last != b"." && last != b"..").then_some(p)
}

/// The entries under folder `dir` that are not folders (links, special
/// files and files the walk left out count: the copy must hold only the
/// files it plans),
/// as the script's `find DIR ! -type d` counts them; `None` when a folder
/// cannot be read.
fn entries(dir: &[u8]) -> Option<u64> {
    let mut n = 0;
    let mut todo = vec![std::path::PathBuf::from(std::ffi::OsStr::from_bytes(dir))];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).ok()? {
            let e = e.ok()?;
            if e.file_type().ok()?.is_dir() {
                todo.push(e.path());
            } else {
                n += 1;
            }
        }
    }
    Some(n)
}

/// A file as found when the plan is written.
#[derive(Debug, Clone)]
struct Disk {
    /// The physical path of its folder.
    dir: Rc<[u8]>,
    /// (device, inode) now.
    ino: (u64, u64),
}

/// Resolves paths on disk, each folder once.
#[derive(Default)]
struct Resolver {
    dirs: HashMap<Vec<u8>, Option<Rc<[u8]>>>,
}

impl Resolver {
    /// The physical path of folder `dir`, or `None` when it resolves to
    /// no folder.
    fn folder(&mut self, dir: &[u8]) -> Option<Rc<[u8]>> {
        if let Some(d) = self.dirs.get(dir) {
            return d.clone();
        }
        let p = std::path::Path::new(std::ffi::OsStr::from_bytes(dir));
        let r = std::fs::canonicalize(p)
            .ok()
            .filter(|c| c.is_dir())
            .map(|c| Rc::from(c.as_os_str().as_bytes()));
        self.dirs.insert(dir.to_vec(), r.clone());
        r
    }

    /// File `path` now, or why it cannot be planned.
    fn file(&mut self, path: &[u8]) -> std::result::Result<Disk, &'static str> {
        use std::os::unix::fs::MetadataExt;
        let dir = self
            .folder(parent(path))
            .ok_or("its folder cannot be resolved now")?;
        let m = std::fs::symlink_metadata(std::ffi::OsStr::from_bytes(path))
            .map_err(|_| "it cannot be found now")?;
        if !m.file_type().is_file() {
            return Err("it is no regular file now");
        }
        Ok(Disk {
            dir,
            ino: (m.dev(), m.ino()),
        })
    }
}

/// An identical tree acted on as a whole.
struct Tree<'r> {
    /// Kept and removed folders, as recorded, without a trailing `/`.
    kept: &'r [u8],
    gone: &'r [u8],
    /// Their physical paths.
    kdir: Rc<[u8]>,
    gdir: Rc<[u8]>,
    /// Kept's first file, the copy's first file, files.
    fk: u32,
    fg: u32,
    files: u32,
    /// Each file of the kept folder and of the copy, in order.
    disk: Vec<(Disk, Disk)>,
}

/// What writes the plan: the report, the rules and what was found on disk.
struct Planner<'r> {
    report: &'r Report,
    keep: &'r Keep,
    disk: Resolver,
    line: Vec<u8>,
}

/// A reported folder pair that is an identical tree, before its side is
/// chosen: (a, b, first file of a, of b, files).
type Pair<'r> = (&'r [u8], &'r [u8], u32, u32, u32);

impl<'r> Planner<'r> {
    /// Whether files `a` and `b` are names of one file.
    fn one_file(&self, a: (u32, &Disk), b: (u32, &Disk)) -> bool {
        let files = &self.report.files;
        let linked = files.link(a.0).is_some() && files.link(a.0) == files.link(b.0);
        linked || a.1.ino == b.1.ino
    }

    /// File `f`'s place in the order of the roots (`keep::Rule::Root`).
    fn root(&self, f: u32) -> u64 {
        if self.report.collections.is_empty() {
            u64::from(f)
        } else {
            self.report.coll[f as usize] as u64
        }
    }

    fn candidate<'a>(&'a self, f: u32, d: &'a Disk) -> Candidate<'a> {
        Candidate {
            path: self.report.files.path(f),
            phys: &d.dir,
            mtime: self.report.files.mtime(f),
            root: self.root(f),
        }
    }

    /// `kind`, then the kept file, its folder, size on disk and mtime, the
    /// copy, its folder and mtime, as a line of the script in `self.line`.
    fn file_line(&mut self, kind: &[u8], kept: (u32, &Disk), copy: (u32, &Disk)) {
        let files = &self.report.files;
        let l = &mut self.line;
        l.clear();
        l.extend_from_slice(kind);
        let path = |l: &mut Vec<u8>, (f, d): (u32, &Disk)| {
            l.extend_from_slice(&quote(files.path(f)));
            l.push(b' ');
            l.extend_from_slice(&quote(&d.dir));
        };
        path(l, kept);
        let (size, mtime) = (files.raw_size(kept.0), files.mtime(kept.0));
        l.extend_from_slice(format!(" {size} {mtime} ").as_bytes());
        path(l, copy);
        l.extend_from_slice(format!(" {}\n", files.mtime(copy.0)).as_bytes());
    }
}

/// The reported folder pairs that are identical trees outside archives.
fn tree_pairs(report: &Report) -> Vec<Pair<'_>> {
    let member = |f: u32| report.files.at(f).archive.is_some();
    report
        .folders
        .pairs
        .iter()
        .filter_map(|p| {
            p.tree
                .map(|t| (&p.a[..], &p.b[..], t.first_a, t.first_b, t.files))
        })
        .filter(|t| !member(t.2) && !member(t.3))
        .collect()
}

impl<'r> Planner<'r> {
    /// Pair `t` resolved on disk as a tree (a, b, physical a, physical b,
    /// files), or why it is left to its files' sets.
    fn resolve_tree(&mut self, t: Pair<'r>) -> std::result::Result<Tree<'r>, &'static str> {
        let bad = "a folder path not fit for the script";
        let (a, b) = (tree_path(t.0).ok_or(bad)?, tree_path(t.1).ok_or(bad)?);
        let link = |p: &[u8]| std::fs::symlink_metadata(std::ffi::OsStr::from_bytes(p));
        if [a, b].iter().any(|p| link(p).is_ok_and(|m| m.is_symlink())) {
            return Err("a folder is a link");
        }
        let unresolved = "a folder cannot be resolved now";
        let ka = self.disk.folder(a).ok_or(unresolved)?;
        let kb = self.disk.folder(b).ok_or(unresolved)?;
        if related(&ka, &kb) {
            return Err("one folder is, or holds, the other on disk");
        }
        if entries(&ka) != Some(u64::from(t.4)) || entries(&kb) != Some(u64::from(t.4)) {
            return Err("a folder holds entries that are not in the file table");
        }
        let mut disk = Vec::with_capacity(t.4 as usize);
        for i in 0..t.4 {
            let (fa, fb) = (t.2 + i, t.3 + i);
            let da = self.disk.file(self.report.files.path(fa))?;
            let db = self.disk.file(self.report.files.path(fb))?;
            if !related(&da.dir, &ka) || !related(&db.dir, &kb) {
                return Err("a file lies outside its folder on disk");
            }
            if self.one_file((fa, &da), (fb, &db)) {
                return Err("a file and its copy are one file");
            }
            disk.push((da, db));
        }
        Ok(Tree {
            kept: a,
            gone: b,
            kdir: ka,
            gdir: kb,
            fk: t.2,
            fg: t.3,
            files: t.4,
            disk,
        })
    }

    /// `t` with the side `--keep` prefers kept: folders compared by their
    /// paths, their oldest file and their first file's root.
    fn prefer(&self, t: Tree<'r>) -> Tree<'r> {
        let b_first = {
            let side = |path, phys, first: u32| Candidate {
                path,
                phys,
                mtime: (first..first + t.files)
                    .map(|f| self.report.files.mtime(f))
                    .min()
                    .unwrap_or(0),
                root: self.root(first),
            };
            let a = side(t.kept, &t.kdir, t.fk);
            let b = side(t.gone, &t.gdir, t.fg);
            self.keep.compare(&b, &a).is_lt()
        };
        if b_first {
            swap(t)
        } else {
            t
        }
    }
}

/// `t` with its sides exchanged.
fn swap(t: Tree) -> Tree {
    Tree {
        kept: t.gone,
        gone: t.kept,
        kdir: t.gdir,
        gdir: t.kdir,
        fk: t.fg,
        fg: t.fk,
        files: t.files,
        disk: t.disk.into_iter().map(|(a, b)| (b, a)).collect(),
    }
}

impl<'r> Planner<'r> {
    /// The identical trees acted on as wholes (module doc), in report
    /// order, and a comment for each pair left to its files' sets.
    fn trees(&mut self) -> (Vec<Tree<'r>>, Vec<String>) {
        let (mut chosen, mut left): (Vec<Tree>, Vec<String>) = (Vec::new(), Vec::new());
        for t in tree_pairs(self.report) {
            let note = |why: &str| {
                format!(
                    "# identical trees, left to their files' sets ({why}): {} and {}\n",
                    esc(t.0),
                    esc(t.1)
                )
            };
            let tree = match self.resolve_tree(t) {
                Ok(tree) => self.prefer(tree),
                Err(why) => {
                    left.push(note(why));
                    continue;
                }
            };
            let fits = |k: &[u8], g: &[u8]| {
                chosen
                    .iter()
                    .all(|c| !related(g, &c.kdir) && !related(g, &c.gdir) && !related(k, &c.gdir))
            };
            if fits(&tree.kdir, &tree.gdir) {
                chosen.push(tree);
            } else if fits(&tree.gdir, &tree.kdir) {
                chosen.push(swap(tree));
            } else {
                left.push(note("a folder of another tree"));
            }
        }
        (chosen, left)
    }

    /// Write tree `n`'s block.
    fn write_tree(&mut self, n: usize, t: &Tree, out: &mut Buffered) -> Result<()> {
        out.push(&format!(
            "# identical trees: {} is a copy of {} ({} files), kept: {}\ntree_{n}() {{\n",
            esc(t.gone),
            esc(t.kept),
            t.files,
            esc(t.kept)
        ))?;
        for (i, (dk, dg)) in t.disk.iter().enumerate() {
            let i = i as u32;
            self.file_line(b"  tfile \"$1\" ", (t.fk + i, dk), (t.fg + i, dg));
            out.push_bytes(&self.line)?;
        }
        let l = &mut self.line;
        l.clear();
        l.extend_from_slice(b"}\ntree ");
        for p in [t.kept, &t.kdir, t.gone, &t.gdir] {
            l.extend_from_slice(&quote(p));
            l.push(b' ');
        }
        l.extend_from_slice(format!("{} tree_{n}\n", t.files).as_bytes());
        out.push_bytes(&self.line)
    }
}

/// The files of the trees' kept folders, or of their copies: runs of file
/// ids, sorted, and their (device, inode), which another path to one of
/// them (a root that is a link into a tree) shares.
struct Runs(Vec<(u32, u32)>, std::collections::HashSet<(u64, u64)>);

impl Runs {
    fn of(trees: &[Tree], kept: bool) -> Runs {
        let side = |t: &Tree| if kept { t.fk } else { t.fg };
        let mut r: Vec<(u32, u32)> = trees.iter().map(|t| (side(t), side(t) + t.files)).collect();
        r.sort_unstable();
        let disk = trees.iter().flat_map(|t| t.disk.iter());
        Runs(
            r,
            disk.map(|d| if kept { d.0.ino } else { d.1.ino }).collect(),
        )
    }

    /// Whether file `f` is one of them.
    fn holds(&self, f: u32) -> bool {
        let i = self.0.partition_point(|r| r.0 <= f);
        i > 0 && f < self.0[i - 1].1
    }

    /// Whether file `f`, found as `d`, is one of them or a name of one.
    fn names(&self, f: u32, d: &Disk) -> bool {
        self.holds(f) || self.1.contains(&d.ino)
    }
}

/// One identical set as planned: its files on disk (with what was found),
/// and the comments of those left out.
struct SetPlan {
    on_disk: Vec<(u32, Disk)>,
    notes: Vec<String>,
}

impl<'r> Planner<'r> {
    /// `set`'s files that the plan may act on, those of the trees' copies
    /// left out.
    fn set_files(&mut self, set: &IdenticalSet, copies: &Runs) -> SetPlan {
        let mut plan = SetPlan {
            on_disk: Vec::new(),
            notes: Vec::new(),
        };
        let mut inodes: HashSet<(u64, u64)> = HashSet::new();
        for &f in set.files.iter().filter(|&&f| !copies.holds(f)) {
            let path = self.report.files.path(f);
            if self.report.files.at(f).archive.is_some() {
                // Listed, never linked, removed nor kept: its path names no file.
                plan.notes.push(format!(
                    "# inside an archive, not acted on: {}\n",
                    esc(path)
                ));
                continue;
            }
            match self.disk.file(path) {
                Ok(d) if copies.names(f, &d) => plan.notes.push(format!(
                    "# a name of a file of a tree's copy above, not acted on: {}\n",
                    esc(path)
                )),
                // One path met in two collections is one file: acted on
                // once. Only a file seen before in the set is looked for.
                Ok(d)
                    if !inodes.insert(d.ino)
                        && plan
                            .on_disk
                            .iter()
                            .any(|(g, e)| e.ino == d.ino && self.report.files.path(*g) == path) =>
                {
                    plan.notes.push(format!(
                        "# the same file again, in another collection: {}\n",
                        esc(path)
                    ))
                }
                Ok(d) => plan.on_disk.push((f, d)),
                Err(why) => plan
                    .notes
                    .push(format!("# not planned ({why}): {}\n", esc(path))),
            }
        }
        plan
    }

    /// The kept file of a set (an index in `on_disk`): by `--keep` among
    /// the files of the trees' kept folders when it holds any (they stay
    /// as the trees' checks recorded them), else among all.
    fn set_kept(&self, on_disk: &[(u32, Disk)], kept_trees: &Runs) -> Option<usize> {
        let pinned: Vec<usize> = (0..on_disk.len())
            .filter(|&i| kept_trees.names(on_disk[i].0, &on_disk[i].1))
            .collect();
        let among: Vec<usize> = if pinned.is_empty() {
            (0..on_disk.len()).collect()
        } else {
            pinned
        };
        let c: Vec<Candidate> = among
            .iter()
            .map(|&i| self.candidate(on_disk[i].0, &on_disk[i].1))
            .collect();
        (!c.is_empty()).then(|| among[self.keep.choose(&c)])
    }

    /// Write `set`'s part of the plan.
    fn write_set(
        &mut self,
        set: &IdenticalSet,
        trees: &(Runs, Runs),
        out: &mut Buffered,
    ) -> Result<()> {
        let in_trees = set.files.iter().filter(|&&f| trees.1.holds(f)).count();
        if set.files.len() - in_trees < 2 {
            return Ok(());
        }
        let plan = self.set_files(set, &trees.1);
        let kept = self.set_kept(&plan.on_disk, &trees.0);
        let in_trees = if in_trees > 0 {
            format!(" ({in_trees} in the trees above)")
        } else {
            String::new()
        };
        let named = kept.map_or(String::new(), |k| {
            format!(", kept: {}", esc(self.report.files.path(plan.on_disk[k].0)))
        });
        out.push(&format!(
            "# set {}: {} files of {} bytes{in_trees}{named}\n",
            set.id,
            set.files.len(),
            set.size
        ))?;
        for n in &plan.notes {
            out.push(n)?;
        }
        match kept {
            Some(k) => self.write_copies(&plan.on_disk, k, &trees.0, out),
            None => Ok(()),
        }
    }

    /// The `dup` lines of a set's files on disk against `on_disk[k]`.
    fn write_copies(
        &mut self,
        on_disk: &[(u32, Disk)],
        k: usize,
        kept_trees: &Runs,
        out: &mut Buffered,
    ) -> Result<()> {
        let (kf, kd) = (on_disk[k].0, &on_disk[k].1);
        let mut planned = 0;
        for (f, d) in on_disk.iter().filter(|(f, _)| *f != kf) {
            let path = esc(self.report.files.path(*f));
            let why = if self.one_file((kf, kd), (*f, d)) {
                "a name of the kept file (a hard link), nothing to do"
            } else if kept_trees.names(*f, d) {
                "a file of a kept tree above, not acted on"
            } else if self.report.files.raw_size(*f) != self.report.files.raw_size(kf) {
                "not planned (its size on disk differs)"
            } else {
                self.file_line(b"dup ", (kf, kd), (*f, d));
                out.push_bytes(&self.line)?;
                planned += 1;
                continue;
            };
            out.push(&format!("# {why}: {path}\n"))?;
        }
        if planned == 0
            && on_disk.len() > 1
            && on_disk
                .iter()
                .all(|(f, d)| self.one_file((kf, kd), (*f, d)))
        {
            out.push("# nothing to do: its files on disk are names of one file\n")?;
        }
        Ok(())
    }
}

/// The plan's header after the fixed part: the rule that chose each kept
/// file.
fn rule_comment(report: &Report) -> String {
    let keep = &report.config.keep;
    let mut s = format!(
        "# The kept file of each set, and the kept folder of each tree, is the first by\n\
         # --keep {}\n",
        esc(keep.text.as_bytes())
    );
    if keep.uses_root() && report.collections.is_empty() {
        s.push_str(
            "# (root: the file table records no roots: its order is used, the roots as\n\
             # given, each walked in path order)\n",
        );
    }
    s
}

/// Write the script of `report`'s identical trees and sets to `out`.
pub(crate) fn write(report: &Report, out: &mut Buffered) -> Result<()> {
    out.push(HEAD)?;
    out.push(&rule_comment(report))?;
    let mut p = Planner {
        report,
        keep: &report.config.keep,
        disk: Resolver::default(),
        line: Vec::new(),
    };
    let (trees, left) = p.trees();
    for (n, t) in trees.iter().enumerate() {
        p.write_tree(n + 1, t, out)?;
    }
    for l in &left {
        out.push(l)?;
    }
    let runs = (Runs::of(&trees, true), Runs::of(&trees, false));
    for set in &report.identical {
        p.write_set(set, &runs, out)?;
    }
    out.push(TAIL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn quoting_keeps_every_byte() {
        assert_eq!(quote(b"a b"), b"'a b'");
        assert_eq!(quote(b"it's"), b"'it'\\''s'");
        assert_eq!(quote(b"x\ny\xff"), b"'x\ny\xff'");
    }

    #[test]
    fn a_file_s_folder_is_found_as_the_script_finds_it() {
        assert_eq!(parent(b"a/b/c"), b"a/b");
        assert_eq!(parent(b"c"), b".");
        assert_eq!(parent(b"/c"), b"/");
        assert_eq!(parent(b"./c"), b".");
    }

    #[test]
    fn a_tree_path_never_ends_in_a_slash() {
        assert_eq!(tree_path(b"d/"), Some(&b"d"[..]));
        assert_eq!(tree_path(b"d//"), Some(&b"d"[..]));
        assert_eq!(tree_path(b"/x/d"), Some(&b"/x/d"[..]));
        for bad in [&b"/"[..], b"//", b".", b"./", b"..", b"a/..", b"a/./", b""] {
            assert_eq!(tree_path(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn related_folders_are_one_or_nested() {
        assert!(related(b"/a", b"/a") && related(b"/a", b"/a/b") && related(b"/a/b", b"/a"));
        assert!(!related(b"/a", b"/ab") && !related(b"/a/b", b"/a/c"));
        assert!(related(b"/", b"/x"));
    }

    /// A folder with `files` (path, bytes) and the physical path of `d`.
    fn folder(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
        let t = tempfile::tempdir().unwrap();
        for (p, body) in files {
            let p = t.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        let phys = std::fs::canonicalize(t.path()).unwrap();
        (t, phys.to_str().unwrap().to_string())
    }

    /// `line` of the plan for the files `kept` and `copy` of `dir`, as
    /// `write` makes it.
    fn dup(dir: &Path, kept: &str, copy: &str) -> String {
        use std::os::unix::fs::MetadataExt;
        let m = |p: &str| std::fs::metadata(dir.join(p)).unwrap();
        let phys = |p: &str| {
            let c = std::fs::canonicalize(dir.join(p).parent().unwrap()).unwrap();
            String::from_utf8(quote(c.as_os_str().as_bytes())).unwrap()
        };
        let (k, c) = (m(kept), m(copy));
        format!(
            "dup '{kept}' {} {} {} '{copy}' {} {}\n",
            phys(kept),
            k.len(),
            k.mtime(),
            phys(copy),
            c.mtime()
        )
    }

    /// `sh` on the script of `lines` in `dir` with `mode`: (exit code,
    /// stdout and stderr together).
    fn run(dir: &Path, lines: &str, mode: &str) -> (i32, String) {
        run_with_path(dir, lines, mode, None)
    }

    /// [`run`] with `path` as the script's PATH when given.
    fn run_with_path(dir: &Path, lines: &str, mode: &str, path: Option<&str>) -> (i32, String) {
        let script = dir.join("plan.sh");
        std::fs::write(&script, format!("{HEAD}{lines}{TAIL}")).unwrap();
        let mut cmd = std::process::Command::new("sh");
        if let Some(p) = path {
            cmd.env("PATH", p);
        }
        let out = cmd
            .current_dir(dir)
            .arg(&script)
            .arg(mode)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        (out.status.code().unwrap_or(-1), text.into_owned())
    }

    #[test]
    fn a_second_run_does_nothing_and_says_so() {
        let (t, _) = folder(&[("k", "same"), ("c", "same"), ("e", "same")]);
        let lines = dup(t.path(), "k", "c") + &dup(t.path(), "k", "e");
        let (code, out) = run(t.path(), &lines, "--link");
        assert!(
            code == 0 && out.contains("2 copies handled (link), 0 already done, 0 refused"),
            "{out}"
        );
        let (code, out) = run(t.path(), &lines, "--link");
        assert!(
            code == 0 && out.contains("0 copies handled (link), 2 already done, 0 refused"),
            "{out}"
        );
        assert!(out.contains("already linked: c"), "{out}");
        // After --link, --remove refuses: each copy is the kept file.
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 1 && out.contains("refused (the kept file and the copy are one file): c"),
            "{out}"
        );
        std::fs::remove_file(t.path().join("c")).unwrap();
        std::fs::remove_file(t.path().join("e")).unwrap();
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 0 && out.contains("0 copies handled (remove), 2 already done, 0 refused"),
            "{out}"
        );
        assert!(out.contains("already removed: e"), "{out}");
    }

    #[test]
    fn one_file_reached_by_two_paths_is_never_removed() {
        let (t, _) = folder(&[("d/only", "unique")]);
        std::os::unix::fs::symlink("d", t.path().join("l")).unwrap();
        let lines = dup(t.path(), "d/only", "l/only");
        let (code, out) = run(t.path(), &lines, "--remove");
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("refused (the kept file and the copy are one file): l/only"),
            "{out}"
        );
        assert!(t.path().join("d/only").exists());
        // For --link, the work is done already.
        let (code, out) = run(t.path(), &lines, "--link");
        assert!(code == 0 && out.contains("already linked: l/only"), "{out}");
    }

    #[test]
    fn a_folder_swapped_for_a_link_is_refused() {
        let (t, _) = folder(&[("k", "x"), ("s/c", "x"), ("s2/c", "x")]);
        let lines = dup(t.path(), "k", "s/c");
        // s/ moved aside and replaced by a link to s2/, which holds an
        // equal file of the same time: only the folder check tells.
        std::fs::rename(t.path().join("s"), t.path().join("aside")).unwrap();
        std::os::unix::fs::symlink("s2", t.path().join("s")).unwrap();
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 1 && out.contains("refused (its folder moved or is a link now): s/c"),
            "{out}"
        );
        assert!(t.path().join("s2/c").exists() && t.path().join("aside/c").exists());
    }

    #[test]
    fn changed_files_and_names_in_the_way_are_refused_and_kept() {
        let (t, _) = folder(&[("k", "abc"), ("c", "abc"), ("c.fsim-link", "mine")]);
        let lines = dup(t.path(), "k", "c");
        let (code, out) = run(t.path(), &lines, "--link");
        assert!(
            code == 1 && out.contains("refused (link failed): c"),
            "{out}"
        );
        assert_eq!(
            std::fs::read(t.path().join("c.fsim-link")).unwrap(),
            b"mine"
        );
        // The same size and time, other bytes: cmp tells.
        std::fs::remove_file(t.path().join("c.fsim-link")).unwrap();
        let m = std::fs::metadata(t.path().join("c"))
            .unwrap()
            .modified()
            .unwrap();
        std::fs::write(t.path().join("c"), "abd").unwrap();
        let f = std::fs::File::options()
            .write(true)
            .open(t.path().join("c"))
            .unwrap();
        f.set_modified(m).unwrap();
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 1 && out.contains("refused (changed since the run): c"),
            "{out}"
        );
        assert!(t.path().join("c").exists());
    }

    /// The tree block of folders `kept` and `copy` of `dir` holding `files`.
    fn tree(dir: &Path, kept: &str, copy: &str, files: &[&str]) -> String {
        let mut s = "tree_1() {\n".to_string();
        for f in files {
            let line = dup(dir, &format!("{kept}/{f}"), &format!("{copy}/{f}"));
            s.push_str(&format!(
                "  tfile \"$1\" {}",
                line.strip_prefix("dup ").unwrap()
            ));
        }
        let phys = |p: &str| {
            std::fs::canonicalize(dir.join(p))
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        };
        let n = files.len();
        s + &format!(
            "}}\ntree '{kept}' '{}' '{copy}' '{}' {n} tree_1\n",
            phys(kept),
            phys(copy)
        )
    }

    #[test]
    fn trees_refuse_nesting_links_and_are_done_once() {
        let (t, _) = folder(&[("a/x", "1"), ("a/s/y", "2"), ("b/x", "1"), ("b/s/y", "2")]);
        let lines = tree(t.path(), "a", "b", &["x", "s/y"]);
        // The copy folder is a link now (to the kept one): refused.
        std::fs::rename(t.path().join("b"), t.path().join("aside")).unwrap();
        std::os::unix::fs::symlink("a", t.path().join("b")).unwrap();
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 1 && out.contains("refused (a folder is a link now): b"),
            "{out}"
        );
        std::fs::remove_file(t.path().join("b")).unwrap();
        std::fs::rename(t.path().join("aside"), t.path().join("b")).unwrap();
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 0 && out.contains("2 copies handled (remove), 0 already done"),
            "{out}"
        );
        assert!(!t.path().join("b").exists() && t.path().join("a/s/y").exists());
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(code == 0 && out.contains("already removed: b"), "{out}");
        // A plan of a folder against its own sub-folder is refused.
        let (u, _) = folder(&[("a/x", "1"), ("a/a/x", "1")]);
        let nested = tree(u.path(), "a", "a/a", &["x"]);
        let (code, out) = run(u.path(), &nested, "--remove");
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("refused (one folder holds the other): a/a"),
            "{out}"
        );
        assert!(u.path().join("a/a/x").exists() && u.path().join("a/x").exists());
    }

    /// A PATH whose `name` runs `body` (the real tool is `$REAL`), in
    /// `dir`/bin: a tool that races the script or misleads it.
    fn fake_tool(dir: &Path, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let real = ["/usr/bin", "/bin"]
            .into_iter()
            .map(|d| Path::new(d).join(name))
            .find(|p| p.exists())
            .unwrap();
        let tool = bin.join(name);
        let text = format!("#!/bin/sh\nREAL='{}'\n{body}\n", real.display());
        std::fs::write(&tool, text).unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
    }

    /// A copy is removed only when it is known to be another file than the
    /// kept one: one device and inode (a bind mount shows one file in two
    /// folders, with equal bytes, size and time) is refused, and so is a
    /// copy whose identity cannot be read. Both names stay.
    #[test]
    fn a_copy_that_may_be_the_kept_file_itself_is_never_removed() {
        for (identity, said) in [
            (
                "echo 1 1; exit 0",
                "the kept file and the copy are one file",
            ),
            ("exit 1", "cannot tell whether the two are one file"),
        ] {
            let (t, _) = folder(&[("k", "same"), ("c", "same")]);
            let lines = dup(t.path(), "k", "c");
            let body =
                format!("case \"$*\" in *'%d %i'*) {identity} ;; esac\nexec \"$REAL\" \"$@\"");
            let path = fake_tool(t.path(), "stat", &body);
            let (code, text) = run_with_path(t.path(), &lines, "--remove", Some(&path));
            assert!(
                code == 1 && text.contains(&format!("refused ({said}): c")),
                "{text}"
            );
            assert!(t.path().join("k").exists() && t.path().join("c").exists());
        }
    }

    /// A file put into the copy after the script counted its entries (a
    /// `wc` that writes one as it counts: the race of a writer beside the
    /// script) is not in the plan: it stays, and so does its folder, while
    /// the planned copies go. `rm -r` of the copy lost it.
    #[test]
    fn a_file_added_to_a_tree_while_it_is_removed_stays() {
        let (t, _) = folder(&[("a/x", "1"), ("a/s/y", "2"), ("b/x", "1"), ("b/s/y", "2")]);
        let lines = tree(t.path(), "a", "b", &["x", "s/y"]);
        let path = fake_tool(t.path(), "wc", "\"$REAL\" \"$@\"\necho late > b/s/late");
        let (_, text) = run_with_path(t.path(), &lines, "--remove", Some(&path));
        assert_eq!(
            std::fs::read_to_string(t.path().join("b/s/late")).unwrap(),
            "late\n",
            "{text}"
        );
        assert!(
            !t.path().join("b/x").exists() && !t.path().join("b/s/y").exists(),
            "{text}"
        );
        assert!(t.path().join("a/x").exists() && t.path().join("a/s/y").exists());
        assert!(
            text.contains("2 copies handled (remove), 0 already done, 0 refused")
                && text.contains("left (not empty once its copies were removed): b"),
            "{text}"
        );
        // Run again: the copies are gone, the late file is not the run's.
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 0
                && out.contains("already removed: b")
                && out.contains("0 copies handled (remove), 2 already done, 0 refused"),
            "{out}"
        );
        assert!(t.path().join("b/s/late").exists());
        // One copy back, the other still gone: the tree is not as recorded.
        std::fs::write(t.path().join("b/x"), "1").unwrap();
        std::fs::remove_file(t.path().join("b/s/late")).unwrap();
        let (code, out) = run(t.path(), &lines, "--remove");
        assert!(
            code == 1 && out.contains("refused (files added or removed since the run): b"),
            "{out}"
        );
        assert!(t.path().join("b/x").exists() && t.path().join("a/x").exists());
    }
}
