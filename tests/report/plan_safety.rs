//! The actions script (`fsim-report --format sh`, report.sh) on generated
//! cases: it must never lose the last copy of anything, whatever happened
//! between the report and the action, and never touch what lies outside
//! the scanned roots.
//!
//! Each case builds a random tree (files drawn from a few contents, hard
//! links, symlinks to files and folders inside and outside the tree,
//! identical sub-trees so that `tree` blocks appear) beside folders that
//! are not scanned; scans it with repeated, nested or linked roots
//! (`d d/`, `d d/sub`, `./d`, `l d` with `l` a link to `d`, sometimes
//! `-L`), in one walk or (a case in three) each root a collection of its
//! own joined by fsim-merge; writes the plan (fsim-chunk, then fsim-report over an empty pairs
//! file: the identical sets need no pairs); mutates the tree (files
//! edited with their size and time kept, truncated, replaced by a link,
//! by a hard link or by a folder, removed; folders swapped for links);
//! then runs `sh report.sh --link` or `--remove`, sometimes twice or one
//! after the other, sometimes with more mutations between the runs. After each run, every content held by a regular file
//! before it still is, and nothing outside the scanned tree changed; a
//! run of an unchanged tree refuses nothing, and a run after a run that
//! refused nothing does nothing and refuses nothing.
//!
//! `FSIM_PLAN_CASES` (default 500, about a minute on two cores) cases from `FSIM_PLAN_SEED` (default
//! 1), on `FSIM_PLAN_JOBS` threads (default 2); `FSIM_PLAN_REPORT` runs
//! another fsim-report binary (one without `--keep`: the rules are then
//! not given). A failure names its case, which runs alone with
//! `FSIM_PLAN_ONLY=N`.

use crate::common;

use common::*;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// xorshift64*: a small seeded generator.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, case: u64) -> Rng {
        let mut r = Rng((seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1);
        for _ in 0..4 {
            r.next();
        }
        r
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One case: its folder (`base` is scanned from and holds the tree `d`,
/// the unscanned `out` and `aside`), and what it did, for the failure
/// message.
struct Case {
    base: PathBuf,
    work: PathBuf,
    rng: Rng,
    log: Vec<String>,
    /// Contents the files are drawn from.
    pool: Vec<Vec<u8>>,
    /// `-L` was given: links to folders outside `d` are scanned too.
    follow: bool,
}

/// Names, some hostile to a shell.
const NAMES: &[&str] = &[
    "a",
    "b",
    "sub",
    "bak",
    "x y",
    "-n",
    "it's",
    "new\nline",
    "c",
];

/// Every entry under `dir`, links not followed: (path relative to `dir`,
/// metadata).
fn entries(dir: &Path) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        let mut names: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.file_name()).collect();
        names.sort();
        for n in names {
            let r = rel.join(n);
            let Ok(m) = std::fs::symlink_metadata(dir.join(&r)) else {
                continue;
            };
            if m.is_dir() {
                todo.push(r.clone());
            }
            out.push((r, m));
        }
    }
    out
}

fn set_mtime(p: &Path, secs: u64) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    if let Ok(f) = std::fs::File::options().write(true).open(p) {
        let _ = f.set_modified(t);
    }
}

impl Case {
    fn new(root: &Path, seed: u64, n: u64) -> Case {
        let base = root.join(format!("case{n}"));
        let work = root.join(format!("work{n}"));
        std::fs::create_dir_all(base.join("d")).unwrap();
        std::fs::create_dir_all(base.join("out/sub")).unwrap();
        std::fs::create_dir_all(base.join("aside")).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let mut rng = Rng::new(seed, n);
        let pool = (0..3 + rng.below(5))
            .map(|i| {
                let len = 1 + rng.below(3) * 40 + i % 2;
                (0..len).map(|k| b'a' + ((i * 7 + k) % 26) as u8).collect()
            })
            .collect();
        Case {
            base,
            work,
            rng,
            log: Vec::new(),
            pool,
            follow: false,
        }
    }

    fn note(&mut self, s: String) {
        self.log.push(s);
    }

    /// The folders under `d` now (`d` itself first), links not followed.
    fn dirs(&self) -> Vec<PathBuf> {
        let mut v = vec![PathBuf::from("d")];
        v.extend(
            entries(&self.base.join("d"))
                .into_iter()
                .filter(|(_, m)| m.is_dir())
                .map(|(r, _)| Path::new("d").join(r)),
        );
        v
    }

    /// The regular files under `d` now.
    fn files(&self) -> Vec<PathBuf> {
        entries(&self.base.join("d"))
            .into_iter()
            .filter(|(_, m)| m.is_file())
            .map(|(r, _)| Path::new("d").join(r))
            .collect()
    }

    fn write_file(&mut self, rel: &Path) {
        let body = self.rng.pick(&self.pool).clone();
        let p = self.base.join(rel);
        if std::fs::write(&p, body).is_ok() {
            set_mtime(&p, 1_600_000_000 + self.rng.below(4) as u64 * 1000);
        }
    }
}

/// Building the tree.
impl Case {
    fn build(&mut self) {
        for _ in 0..2 + self.rng.below(4) {
            let d = self.rng.pick(&self.dirs()).clone();
            let name = *self.rng.pick(NAMES);
            let _ = std::fs::create_dir(self.base.join(&d).join(name));
        }
        for i in 0..3 + self.rng.below(10) {
            let d = self.rng.pick(&self.dirs()).clone();
            self.write_file(&d.join(format!("f{i}")));
        }
        for i in 0..self.rng.below(3) {
            self.write_file(&PathBuf::from(format!("out/o{i}")));
        }
        self.write_file(Path::new("out/sub/o"));
        self.hard_links();
        if self.rng.chance(60) {
            self.copy_subtree();
        }
        self.symlinks();
    }

    fn hard_links(&mut self) {
        for i in 0..self.rng.below(4) {
            let files = self.files();
            if files.is_empty() {
                return;
            }
            let from = self.rng.pick(&files).clone();
            let d = self.rng.pick(&self.dirs()).clone();
            let to = d.join(format!("h{i}"));
            let _ = std::fs::hard_link(self.base.join(&from), self.base.join(&to));
        }
    }

    /// A folder copied beside itself, file times kept or not.
    fn copy_subtree(&mut self) {
        let dirs = self.dirs();
        let from = self.rng.pick(&dirs[1.min(dirs.len() - 1)..]).clone();
        let to = from.with_file_name(format!("copy{}", self.rng.below(100)));
        let keep_times = self.rng.chance(50);
        if copy_tree(&self.base.join(&from), &self.base.join(&to), keep_times) {
            self.note(format!("copied {from:?} to {to:?}"));
        }
    }

    fn symlinks(&mut self) {
        for i in 0..self.rng.below(4) {
            let mut targets: Vec<PathBuf> = vec!["../out/o0".into(), "../out/sub".into()];
            targets.extend(
                self.files()
                    .into_iter()
                    .chain(self.dirs())
                    .map(|p| self.base.join(p)),
            );
            targets.push("..".into());
            let t = self.rng.pick(&targets).clone();
            let d = self.rng.pick(&self.dirs()).clone();
            let _ = std::os::unix::fs::symlink(&t, self.base.join(&d).join(format!("l{i}")));
        }
    }
}

/// Copy folder `from` to `to` (files, folders and links), unless `to`
/// exists or lies inside `from`.
fn copy_tree(from: &Path, to: &Path, keep_times: bool) -> bool {
    if to.exists() || to.starts_with(from) || std::fs::create_dir(to).is_err() {
        return false;
    }
    for (rel, m) in entries(from) {
        let (src, dst) = (from.join(&rel), to.join(&rel));
        if m.is_dir() {
            let _ = std::fs::create_dir_all(&dst);
        } else if m.is_symlink() {
            let _ = std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst);
        } else if std::fs::copy(&src, &dst).is_ok() && keep_times {
            let _ = std::fs::File::options()
                .write(true)
                .open(&dst)
                .and_then(|f| f.set_modified(m.modified().unwrap()));
        }
    }
    true
}

/// Scanning and planning.
impl Case {
    /// fsim-chunk of `roots` into `out`/files.tsv and chunks.tsv.
    fn chunk(&self, roots: &[String], out: &Path) -> Result<(), String> {
        let mut c = Command::new(bin("fsim-chunk"));
        c.current_dir(&self.base)
            .args(["-q", "-o"])
            .arg(out.join("chunks.tsv"));
        c.arg("--files-out")
            .arg(out.join("files.tsv"))
            .args(if self.follow { &["-L"][..] } else { &[] });
        c.args(roots);
        check(c, "fsim-chunk")
    }

    /// Each root a collection of its own (`make report REPO="c0=d c1=d/"`):
    /// chunked apart, then joined by fsim-merge, so that one file may be
    /// met in several collections.
    fn chunk_collections(&self, roots: &[String]) -> Result<(), String> {
        let mut merge = Command::new(bin("fsim-merge"));
        merge
            .arg("-q")
            .arg("--files-out")
            .arg(self.work.join("files.tsv"))
            .arg("-o")
            .arg(self.work.join("chunks.tsv"));
        for (i, root) in roots.iter().enumerate() {
            let out = self.work.join(format!("c{i}"));
            std::fs::create_dir_all(&out).unwrap();
            self.chunk(std::slice::from_ref(root), &out)?;
            merge.arg(format!("c{i}={}", out.display()));
        }
        check(merge, "fsim-merge")
    }

    /// The roots to scan, as typed in `base`.
    fn roots(&mut self) -> Vec<String> {
        let dirs = self.dirs();
        let sub = self.rng.pick(&dirs).to_string_lossy().into_owned();
        let v: Vec<String> = match self.rng.below(9) {
            0 => vec!["d".into()],
            1 => vec!["d".into(), "d/".into()],
            2 => vec!["d".into(), sub],
            3 => vec!["./d".into()],
            4 => vec![sub, "d".into()],
            5 => vec!["./d/".into(), "d".into(), "d//".into()],
            6 => vec!["d/.".into(), "d".into()],
            _ => {
                // A root that is a link to the tree or to a folder in it.
                let target = if self.rng.chance(50) { "d".into() } else { sub };
                let _ = std::os::unix::fs::symlink(target, self.base.join("l"));
                vec!["l".into(), "d".into()]
            }
        };
        v
    }

    fn keep_rules(&mut self) -> String {
        let dirs = self.dirs();
        let sub = self.rng.pick(&dirs).to_string_lossy().into_owned();
        let rules = [
            "shallow,oldest,path".to_string(),
            "oldest".into(),
            "newest,deep".into(),
            format!("under:{sub},shallow"),
            "root".into(),
            "short".into(),
            "path".into(),
        ];
        self.rng.pick(&rules).clone()
    }

    /// fsim-chunk and fsim-report: the plan, `work/report.sh`.
    fn plan(&mut self) -> Result<(), String> {
        let roots = self.roots();
        self.follow = self.rng.chance(15);
        let named = self.rng.chance(30);
        let files = self.work.join("files.tsv");
        self.note(format!(
            "roots {roots:?}, -L {}, collections {named}",
            self.follow
        ));
        if named {
            self.chunk_collections(&roots)?;
        } else {
            self.chunk(&roots, &self.work.clone())?;
        }
        let table = std::fs::read_to_string(&files).unwrap_or_default();
        let head =
            table
                .lines()
                .next()
                .unwrap_or("")
                .replacen("#fsim files v4", "#fsim pairs v1", 1);
        let pairs = self.work.join("pairs.tsv");
        let end = format!("#end pairs\tpairs=0\tdigest={}\n", "0".repeat(32));
        std::fs::write(&pairs, format!("{head}\n{end}")).unwrap();
        let report =
            std::env::var_os("FSIM_PLAN_REPORT").map_or_else(|| bin("fsim-report"), PathBuf::from);
        let mut c = Command::new(report);
        c.current_dir(&self.base)
            .args(["-q", "--format", "sh", "--files"])
            .arg(&files);
        if std::env::var_os("FSIM_PLAN_REPORT").is_none() {
            let k = self.keep_rules();
            self.note(format!("--keep {k}"));
            c.args(["--keep", &k]);
        }
        c.arg("-o").arg(self.work.join("report.sh")).arg(&pairs);
        check(c, "fsim-report")?;
        let sh = std::fs::read(self.work.join("report.sh")).unwrap_or_default();
        let lines = |start: &[u8]| {
            sh.split(|&b| b == b'\n')
                .filter(|l| l.starts_with(start))
                .count()
        };
        let (trees, dups) = (lines(b"tree '"), lines(b"dup '"));
        self.note(format!("plan: {trees} trees {dups} copies"));
        Ok(())
    }
}

fn check(mut c: Command, what: &str) -> Result<(), String> {
    let out = c.output().map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The mutations between the report and the action.
impl Case {
    fn mutate(&mut self) -> usize {
        let n = if self.rng.chance(30) {
            0
        } else {
            1 + self.rng.below(4)
        };
        for i in 0..n {
            self.mutation(i);
        }
        n
    }

    fn mutation(&mut self, i: usize) {
        let files = self.files();
        let dirs = self.dirs();
        if files.is_empty() {
            return;
        }
        let f = self.rng.pick(&files).clone();
        let p = self.base.join(&f);
        let kind = self.rng.below(9);
        self.note(format!("mutation {kind} on {f:?}"));
        match kind {
            0 => edit_in_place(&p),
            1 => {
                let len = std::fs::metadata(&p).map(|m| m.len() / 2).unwrap_or(0);
                let _ = std::fs::File::options()
                    .write(true)
                    .open(&p)
                    .and_then(|x| x.set_len(len));
            }
            2 => {
                let other = self.base.join(self.rng.pick(&files));
                let _ = std::fs::remove_file(&p);
                let _ = std::os::unix::fs::symlink(other, &p);
            }
            3 => {
                let _ = std::fs::remove_file(&p);
                let _ = std::fs::create_dir(&p);
            }
            4 => {
                let _ = std::fs::remove_file(&p);
            }
            5 => {
                let other = self.base.join(self.rng.pick(&files));
                let _ = std::fs::remove_file(&p);
                let _ = std::fs::hard_link(other, &p);
            }
            6 => set_mtime(&p, 1_700_000_000),
            _ => {
                let d = self.rng.pick(&dirs).clone();
                self.swap_dir(&d, i, &dirs);
            }
        }
    }

    /// Folder `d` moved aside and a link put in its place: to where it
    /// went, to another folder of the tree, or outside.
    fn swap_dir(&mut self, d: &Path, i: usize, dirs: &[PathBuf]) {
        let aside = self.base.join(format!("aside/{i}-{}", self.log.len()));
        if std::fs::rename(self.base.join(d), &aside).is_err() {
            return;
        }
        let target = match self.rng.below(3) {
            0 => aside,
            1 => self.base.join(self.rng.pick(dirs)),
            _ => self.base.join("out/sub"),
        };
        self.note(format!("  folder {d:?} now a link to {target:?}"));
        let _ = std::os::unix::fs::symlink(target, self.base.join(d));
    }
}

/// Another content of the same length, the file's time kept: only `cmp`
/// tells it changed.
fn edit_in_place(p: &Path) {
    let Ok(m) = std::fs::metadata(p) else { return };
    let Ok(mut body) = std::fs::read(p) else {
        return;
    };
    if let Some(b) = body.first_mut() {
        *b = if *b == b'#' { b'%' } else { b'#' };
    }
    if std::fs::write(p, body).is_ok() {
        let t = m.modified().unwrap();
        let _ = std::fs::File::options()
            .write(true)
            .open(p)
            .and_then(|f| f.set_modified(t));
    }
}

/// What the checks compare: the contents of the regular files under
/// `base`, and every entry outside `d` (kind, bytes or link target).
struct Snapshot {
    contents: HashSet<Vec<u8>>,
    outside: BTreeMap<PathBuf, (u8, Vec<u8>)>,
}

fn snapshot(base: &Path) -> Snapshot {
    let mut s = Snapshot {
        contents: HashSet::new(),
        outside: BTreeMap::new(),
    };
    for (rel, m) in entries(base) {
        let p = base.join(&rel);
        let what = if m.is_symlink() {
            (
                b'l',
                std::fs::read_link(&p)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else if m.is_file() {
            let body = std::fs::read(&p).unwrap_or_default();
            s.contents.insert(body.clone());
            (b'f', body)
        } else {
            (b'd', Vec::new())
        };
        if !rel.starts_with("d") {
            s.outside.insert(rel, what);
        }
    }
    s
}

/// Running the plan and checking.
impl Case {
    /// `sh report.sh MODE` in `base`: (exit code, stderr).
    fn act(&self, mode: &str) -> (i32, String) {
        let out = Command::new("sh")
            .current_dir(&self.base)
            .arg(self.work.join("report.sh"))
            .arg(mode)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), err)
    }

    fn run(&mut self) -> Result<(), String> {
        self.build();
        self.plan()?;
        let mut changed = self.mutate();
        const MODES: &[&[&str]] = &[
            &["--link"],
            &["--remove"],
            &["--link", "--link"],
            &["--remove", "--remove"],
            &["--dry-run", "--remove"],
            &["--link", "--remove"],
            &["--remove", "--link"],
        ];
        let modes = *self.rng.pick(MODES);
        let mut last: Option<(&str, i32)> = None;
        for (i, &mode) in modes.iter().enumerate() {
            if i > 0 && self.rng.chance(20) {
                let more = self.mutate();
                if more > 0 {
                    changed += more;
                    last = None;
                }
            }
            let before = snapshot(&self.base);
            let (code, err) = self.act(mode);
            self.note(format!("sh report.sh {mode}: exit {code}\n{err}"));
            let after = snapshot(&self.base);
            self.compare(&before, &after)?;
            self.expect_exit(mode, code, &err, changed, last)?;
            last = Some((mode, code));
        }
        Ok(())
    }

    fn compare(&self, before: &Snapshot, after: &Snapshot) -> Result<(), String> {
        if let Some(lost) = before.contents.difference(&after.contents).next() {
            return Err(format!("content lost: {:?}", String::from_utf8_lossy(lost)));
        }
        if !self.follow && before.outside != after.outside {
            let diff: Vec<_> = before
                .outside
                .iter()
                .filter(|(k, v)| after.outside.get(*k) != Some(v))
                .map(|(k, _)| k)
                .chain(
                    after
                        .outside
                        .keys()
                        .filter(|k| !before.outside.contains_key(*k)),
                )
                .collect();
            return Err(format!("changed outside the scanned tree: {diff:?}"));
        }
        Ok(())
    }

    /// An unchanged tree refuses nothing; a second run of the same mode
    /// after one that refused nothing does nothing and refuses nothing.
    fn expect_exit(
        &self,
        mode: &str,
        code: i32,
        err: &str,
        changed: usize,
        last: Option<(&str, i32)>,
    ) -> Result<(), String> {
        if code != 0 && code != 1 {
            return Err(format!("exit {code}"));
        }
        if changed == 0 && last.is_none() && code != 0 {
            return Err("refused on a tree unchanged since the report".into());
        }
        if last == Some((mode, 0)) && (code != 0 || !err.contains("fsim: 0 copies handled")) {
            return Err("a second run did something or refused".into());
        }
        Ok(())
    }
}

/// The cases `FSIM_PLAN_CASES` asks for, on `FSIM_PLAN_JOBS` threads.
#[test]
fn the_plan_never_loses_the_last_copy() {
    let (cases, seed) = (
        env_num("FSIM_PLAN_CASES", 500),
        env_num("FSIM_PLAN_SEED", 1),
    );
    let jobs = env_num("FSIM_PLAN_JOBS", 2).max(1);
    let only = std::env::var("FSIM_PLAN_ONLY")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    let next = std::sync::atomic::AtomicU64::new(only.unwrap_or(0));
    let end = only.map_or(cases, |o| o + 1);
    let max_failures = env_num("FSIM_PLAN_MAX_FAILURES", 5);
    let failures = std::sync::Mutex::new(Vec::new());
    let totals = std::sync::Mutex::new(Totals::default());
    // A case run alone (FSIM_PLAN_ONLY) is left on disk to look at.
    let tmp = tempfile::tempdir().unwrap();
    let tmp = if only.is_some() {
        tmp.keep()
    } else {
        tmp.path().to_path_buf()
    };
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= end || failures.lock().unwrap().len() as u64 >= max_failures {
                    break;
                }
                let mut case = Case::new(&tmp, seed, n);
                let result = case.run();
                totals.lock().unwrap().add(&case.log);
                if let Err(e) = result {
                    let log = case.log.join("\n");
                    let case = format!("case {n} (seed {seed}):\n{log}");
                    failures.lock().unwrap().push((e, case));
                }
                if only.is_none() {
                    let _ = std::fs::remove_dir_all(&case.base);
                    let _ = std::fs::remove_dir_all(&case.work);
                }
            });
        }
    });
    let t = totals.into_inner().unwrap();
    eprintln!("{} cases from seed {seed}: {t:?}", end - only.unwrap_or(0));
    let f = failures.into_inner().unwrap();
    // Each kind of failure: how many cases, and the first few.
    let mut kinds: BTreeMap<&str, (usize, Vec<&str>)> = BTreeMap::new();
    for (e, case) in &f {
        let (n, cases) = kinds.entry(e.split(':').next().unwrap()).or_default();
        *n += 1;
        if cases.len() < 10 {
            cases.push(case.split(' ').nth(1).unwrap());
        }
    }
    assert!(
        f.is_empty(),
        "{} failing cases (kind: (cases, the first ones) {kinds:?}); the first: {}\n{}",
        f.len(),
        f[0].0,
        f[0].1
    );
}

/// What the cases planned and their runs did (the plans' lines, the
/// scripts' last lines).
#[derive(Debug, Default)]
struct Totals {
    trees: u64,
    dups: u64,
    runs: u64,
    handled: u64,
    already: u64,
    refused: u64,
}

impl Totals {
    fn add(&mut self, log: &[String]) {
        let num = |s: &str| s.split(' ').next().and_then(|n| n.parse::<u64>().ok());
        for l in log.iter().flat_map(|l| l.lines()) {
            if let Some(plan) = l.strip_prefix("plan: ") {
                let n: Vec<u64> = plan.split(' ').filter_map(|w| w.parse().ok()).collect();
                self.trees += n[0];
                self.dups += n[1];
            }
            let Some(rest) = l.strip_prefix("fsim: ") else {
                continue;
            };
            self.runs += 1;
            for part in rest.split(", ") {
                let n = num(part).unwrap_or(0);
                if part.contains("refused") {
                    self.refused += n;
                } else if part.contains("already") {
                    self.already += n;
                } else if !part.contains("would") {
                    self.handled += n;
                }
            }
        }
    }
}

/// `fsim-chunk ROOTS` and `fsim-report --format sh ARGS` in `base`, the
/// work files in `work`: the plan's text.
fn plan_of(base: &Path, work: &Path, roots: &[&str], args: &[&str]) -> String {
    let files = work.join("files.tsv");
    let mut c = fsim("fsim-chunk");
    c.current_dir(base)
        .args(["-q", "-o"])
        .arg(work.join("chunks.tsv"));
    c.arg("--files-out").arg(&files).args(roots);
    run_ok(c, None);
    let table = std::fs::read_to_string(&files).unwrap();
    let head = table
        .lines()
        .next()
        .unwrap()
        .replacen("#fsim files v4", "#fsim pairs v1", 1);
    let end = format!("#end pairs\tpairs=0\tdigest={}\n", "0".repeat(32));
    std::fs::write(work.join("pairs.tsv"), format!("{head}\n{end}")).unwrap();
    let mut c = fsim("fsim-report");
    c.current_dir(base)
        .args(["-q", "--format", "sh", "--files"])
        .arg(&files);
    c.args(args)
        .arg("-o")
        .arg(work.join("report.sh"))
        .arg(work.join("pairs.tsv"));
    run_ok(c, None);
    std::fs::read_to_string(work.join("report.sh")).unwrap()
}

/// `sh report.sh MODE` in `base`: (exit code, stdout and stderr).
fn act_in(base: &Path, work: &Path, mode: &str) -> (i32, String) {
    let out = Command::new("sh")
        .current_dir(base)
        .arg(work.join("report.sh"))
        .arg(mode)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text.into_owned())
}

fn put(p: &Path, body: &[u8], mtime: u64) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
    set_mtime(p, mtime);
}

/// One folder given twice, or through a link, or as `./`: every file is
/// one file, the plan has nothing to do and removes nothing.
#[test]
fn a_folder_scanned_twice_plans_nothing() {
    let t = tempfile::tempdir().unwrap();
    let (base, work) = (t.path().join("base"), t.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    put(&base.join("d/only1.txt"), b"one", 1_600_000_000);
    put(&base.join("d/sub/only2.txt"), b"two", 1_600_000_000);
    std::os::unix::fs::symlink("d", base.join("l")).unwrap();
    for roots in [
        &["d", "d/"][..],
        &["./d", "d/sub"],
        &["l", "d"],
        &["d/.", "./d/"],
    ] {
        let sh = plan_of(&base, &work, roots, &[]);
        assert!(
            !sh.contains("\ndup ") && !sh.contains("\ntree "),
            "{roots:?}\n{sh}"
        );
        let (code, out) = act_in(&base, &work, "--remove");
        assert!(
            code == 0 && out.contains("fsim: 0 copies handled (remove)"),
            "{out}"
        );
        assert!(base.join("d/only1.txt").exists() && base.join("d/sub/only2.txt").exists());
    }
}

/// Hard links are one file: never planned; a set of names of one file
/// says there is nothing to do.
#[test]
fn hard_links_are_never_planned() {
    let t = tempfile::tempdir().unwrap();
    let (base, work) = (t.path().join("base"), t.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    put(&base.join("d/a.txt"), b"the same bytes", 1_600_000_000);
    std::fs::hard_link(base.join("d/a.txt"), base.join("d/b.txt")).unwrap();
    std::fs::hard_link(base.join("d/a.txt"), base.join("d/c.txt")).unwrap();
    let sh = plan_of(&base, &work, &["d"], &[]);
    // Names of one file are no identical set: nothing is planned.
    assert!(!sh.contains("\ndup "), "{sh}");
    // A real copy beside them is planned once against the kept name.
    put(&base.join("d/e.txt"), b"the same bytes", 1_600_000_000);
    let sh = plan_of(&base, &work, &["d"], &[]);
    assert_eq!(sh.matches("\ndup 'd/a.txt' ").count(), 1, "{sh}");
    assert!(sh.contains(" 'd/e.txt' "), "{sh}");
    let (code, out) = act_in(&base, &work, "--link");
    assert!(
        code == 0 && out.contains("1 copies handled (link), 0 already done, 0 refused"),
        "{out}"
    );
    let (code, out) = act_in(&base, &work, "--link");
    assert!(
        code == 0 && out.contains("0 copies handled (link), 1 already done, 0 refused"),
        "{out}"
    );
}

/// Compressed copies: the plan records their size on disk, not the size of
/// their decompressed view, so they are not refused as changed.
#[test]
fn compressed_copies_are_checked_by_their_bytes_on_disk() {
    use std::io::Write;
    let t = tempfile::tempdir().unwrap();
    let (base, work) = (t.path().join("base"), t.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    let text: String = (0..200).map(|i| format!("changelog line {i}\n")).collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    put(&base.join("d/changelog.gz"), &gz, 1_600_000_000);
    put(&base.join("d/old/changelog.gz"), &gz, 1_600_000_000);
    let sh = plan_of(&base, &work, &["d"], &[]);
    let line = sh
        .lines()
        .find(|l| l.starts_with("dup "))
        .expect("a dup line");
    assert!(
        line.contains(&format!(" {} 1600000000 ", gz.len())),
        "{line}"
    );
    let (code, out) = act_in(&base, &work, "--dry-run");
    assert!(
        code == 0 && out.contains("1 copies would be handled, 0 already done, 0 refused"),
        "{out}"
    );
    assert!(
        out.contains("would replace by a link or remove: d/old/changelog.gz"),
        "{out}"
    );
}

/// The kept copy is the one `--keep` names; the plan says which rule and
/// which file.
#[test]
fn the_kept_copy_follows_the_rules() {
    let t = tempfile::tempdir().unwrap();
    let (base, work) = (t.path().join("base"), t.path().join("work"));
    std::fs::create_dir_all(&work).unwrap();
    put(&base.join("d/report.txt"), b"quarterly", 1_600_002_000);
    put(
        &base.join("d/backup/old/report.txt"),
        b"quarterly",
        1_600_001_000,
    );
    put(
        &base.join("d/z/copy of report.txt"),
        b"quarterly",
        1_600_003_000,
    );
    let kept = |args: &[&str]| {
        let sh = plan_of(&base, &work, &["d"], args);
        let set = sh
            .lines()
            .find(|l| l.starts_with("# set "))
            .unwrap()
            .to_string();
        let rule = sh
            .lines()
            .find(|l| l.starts_with("# --keep "))
            .unwrap()
            .to_string();
        (set.split(", kept: ").nth(1).unwrap().to_string(), rule)
    };
    assert_eq!(
        kept(&[]),
        ("d/report.txt".into(), "# --keep shallow,oldest,path".into())
    );
    assert_eq!(kept(&["--keep", "oldest"]).0, "d/backup/old/report.txt");
    assert_eq!(kept(&["--keep", "newest"]).0, "d/z/copy of report.txt");
    assert_eq!(
        kept(&["--keep", "under:d/z,oldest"]).0,
        "d/z/copy of report.txt"
    );
    assert_eq!(kept(&["--keep", "deep,path"]).0, "d/backup/old/report.txt");
    let mut c = fsim("fsim-report");
    c.args(["--keep", "biggest", "--format", "sh"]);
    assert!(run_fail(c, None).contains("unknown rule"));
}
