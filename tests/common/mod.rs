//! One harness for the integration tests: run the real binaries in a temp
//! dir, feed stdin from a thread, and on failure show the command, status,
//! stdout and stderr.
#![allow(dead_code)]

pub mod archive_repo;
pub mod folder_projects;
pub mod hostile_repo;
pub mod numbered_files;
pub mod site_repo;
pub mod template_repo;

use fsim::formats::{self, ChunkRecord, Digest, Kind, Params};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Path of one of the crate's binaries (built by cargo for the tests), or
/// of a developer tool of the workspace member tools/ (fsim-gen,
/// fsim-eval), which cargo builds beside them (`cargo test` at the
/// workspace root; its own tests make cargo build its programs).
pub fn bin(name: &str) -> PathBuf {
    if matches!(name, "fsim-gen" | "fsim-eval") {
        let p = bin("fsim-chunk").with_file_name(name);
        assert!(
            p.is_file(),
            "{} is not built: run the tests from the workspace root (cargo test, make test)",
            p.display()
        );
        return p;
    }
    let p = match name {
        "fsim-chunk" => env!("CARGO_BIN_EXE_fsim-chunk"),
        "fsim-sort" => env!("CARGO_BIN_EXE_fsim-sort"),
        "fsim-partition" => env!("CARGO_BIN_EXE_fsim-partition"),
        "fsim-binpack" => env!("CARGO_BIN_EXE_fsim-binpack"),
        "fsim-analyze" => env!("CARGO_BIN_EXE_fsim-analyze"),
        "fsim-report" => env!("CARGO_BIN_EXE_fsim-report"),
        "fsim-verify" => env!("CARGO_BIN_EXE_fsim-verify"),
        "fsim-index" => env!("CARGO_BIN_EXE_fsim-index"),
        "fsim-query" => env!("CARGO_BIN_EXE_fsim-query"),
        "fsim-template" => env!("CARGO_BIN_EXE_fsim-template"),
        "fsim-merge" => env!("CARGO_BIN_EXE_fsim-merge"),
        "fsim-join" => env!("CARGO_BIN_EXE_fsim-join"),
        "fsim" => env!("CARGO_BIN_EXE_fsim"),
        other => panic!("unknown binary {other}"),
    };
    PathBuf::from(p)
}

/// The folder holding the binaries (for `make BIN=...`).
pub fn bin_dir() -> PathBuf {
    bin("fsim-chunk").parent().unwrap().to_path_buf()
}

/// Root of the source tree (for the Makefile).
pub fn source_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn describe(cmd: &Command, out: &Output) -> String {
    format!(
        "command: {cmd:?}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout[..out.stdout.len().min(4000)]),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Run a command with optional stdin; return its output whatever the status.
pub fn run_raw(mut cmd: Command, stdin: Option<&[u8]>) -> Output {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let feeder = stdin.map(|data| {
        let data = data.to_vec();
        let mut si = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = si.write_all(&data);
        })
    });
    let out = child.wait_with_output().unwrap();
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    out
}

/// Run and require success.
pub fn run_ok(cmd: Command, stdin: Option<&[u8]>) -> Output {
    let dbg = format!("{cmd:?}");
    let out = run_raw(cmd, stdin);
    if !out.status.success() {
        let mut c = Command::new("sh");
        c.arg("-c").arg(&dbg);
        panic!("command failed\n{}", describe(&c, &out));
    }
    out
}

/// Run and require failure; return stderr as text.
pub fn run_fail(cmd: Command, stdin: Option<&[u8]>) -> String {
    let dbg = format!("{cmd:?}");
    let out = run_raw(cmd, stdin);
    assert!(
        !out.status.success(),
        "expected failure of {dbg}\nstdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Run `cmd` with its stdout to `out` and stderr discarded; (success, peak
/// RSS in KiB) from wait4's rusage of that child alone (other tests'
/// children do not count, unlike RUSAGE_CHILDREN). The figure is at least
/// the spawning process's own peak: at exec the kernel keeps the high-water
/// mark of the memory the child started with, which under std's vfork-style
/// spawn is this process's (233 MB for a 16 MB fsim-verify while another
/// test of the same binary held 200 MB of files). So a test that bounds a
/// child's peak runs alone in a process of its own (`own_process`).
pub fn run_rss(mut cmd: Command, out: &Path) -> (bool, u64) {
    use std::os::unix::process::ExitStatusExt;
    let f = std::fs::File::create(out).unwrap();
    cmd.stdout(f).stderr(Stdio::null());
    // Reaped by wait4 below, which also gives its rusage.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data (integers), for which all zeros is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 fills `status` and `ru`, which live through the call; the
    // pid is our child's and is waited for once, here (std's Child is never
    // waited on).
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(r, child.id() as i32);
    (
        std::process::ExitStatus::from_raw(status).success(),
        ru.ru_maxrss as u64,
    )
}

/// Whether the calling test goes on in this process. A test that bounds a
/// child's peak RSS (`run_rss`) starts with
/// `if !own_process(module_path!(), "its_name") { return; }`: in the test
/// binary, where other tests run beside it and may hold hundreds of MB,
/// this runs the test again, alone, in a new process of the same binary
/// (`--exact`, checked to have passed) and returns false; in that process
/// (`FSIM_TEST_ALONE` set) it returns true and the test runs.
pub fn own_process(module: &str, test: &str) -> bool {
    if std::env::var_os("FSIM_TEST_ALONE").is_some() {
        return true;
    }
    // module_path!() starts with the crate's name, which test names omit.
    let module = module.split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::{test}");
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        name.as_str(),
        "--exact",
        "--include-ignored",
        "--test-threads=1",
    ])
    .env("FSIM_TEST_ALONE", "1");
    let out = run_ok(cmd, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{name} did not run alone:\n{stdout}"
    );
    false
}

/// Run `line` (a shell command line, `set -e`) in `cwd`, created if
/// missing, with the test's binaries first on PATH: the README's pipe as a
/// user types it.
pub fn sh(cwd: &Path, line: &str) {
    std::fs::create_dir_all(cwd).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("sh");
    c.current_dir(cwd)
        .env("PATH", path)
        .arg("-c")
        .arg(format!("set -e; {line}"));
    run_ok(c, None);
}

/// The regular files under `dir`, sorted by path: symlinks (to files or to
/// folders) are not followed, so each file is listed once whatever links a
/// test adds beside it.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let t = std::fs::symlink_metadata(&p).unwrap().file_type();
            if t.is_dir() {
                todo.push(p);
            } else if t.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `make report` with the test's binaries on `repo` into `work`, progress
/// shown (`QUIET=`), and extra `VAR=value` arguments; not yet run.
pub fn make_report_cmd(repo: &Path, work: &Path, vars: &[&str]) -> Command {
    make_cmd(repo, work, &[&["QUIET="], vars].concat(), "report")
}

/// `make TARGET` (a target name, or a file of WORK) with the test's
/// binaries on `repo` into `work`, and `VAR=value` arguments; not yet run.
pub fn make_cmd(
    repo: &Path,
    work: &Path,
    vars: &[&str],
    target: impl AsRef<std::ffi::OsStr>,
) -> Command {
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .arg("--no-print-directory")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={}", repo.display()))
        .arg(format!("WORK={}", work.display()))
        .args(vars)
        .arg(target);
    c
}

/// A small settings file of 40 lines; `edit`: every third line changed
/// (a pair that only the line source finds: its chunks all differ).
pub fn settings_text(edit: bool) -> String {
    (0..40)
        .map(|i| match (edit, i % 3) {
            (true, 0) => format!("SETTING_{i} = {}\n", i * 7),
            _ => format!("SETTING_{i} = {i}\n"),
        })
        .collect()
}

/// A command for one of the binaries.
pub fn fsim(name: &str) -> Command {
    Command::new(bin(name))
}

/// Generate the sample repository (with its manifest) in `dir/repo`.
pub fn gen_repo(dir: &Path, extra: &[&str]) -> (PathBuf, Vec<Vec<String>>) {
    let repo = dir.join("repo");
    let manifest = dir.join("planted.tsv");
    let mut c = fsim("fsim-gen");
    c.arg("--manifest").arg(&manifest).args(extra).arg(&repo);
    run_ok(c, None);
    let m = std::fs::read_to_string(&manifest).unwrap();
    let rows = m
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    (repo, rows)
}

/// Run the whole pipeline stage by stage through named files in `work`;
/// returns the JSON report.
pub fn pipeline(repo: &Path, work: &Path, chunk_args: &[&str]) -> serde_json::Value {
    chunk_and_sort(repo, work, chunk_args);
    rest_of_pipeline(work, &[])
}

/// fsim-chunk and fsim-sort into `work` (files.tsv, chunks.tsv, sorted.tsv).
pub fn chunk_and_sort(repo: &Path, work: &Path, chunk_args: &[&str]) {
    std::fs::create_dir_all(work).unwrap();
    let files = work.join("files.tsv");
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "--files-out"])
        .arg(&files)
        .arg("-o")
        .arg(work.join("chunks.tsv"))
        .args(chunk_args)
        .arg(repo);
    run_ok(c, None);
    let mut c = fsim("fsim-sort");
    c.args(["-q", "-o"])
        .arg(work.join("sorted.tsv"))
        .arg(work.join("chunks.tsv"));
    run_ok(c, None);
}

/// fsim-partition (with extra arguments) and fsim-binpack in `work`
/// (sorted.tsv + files.tsv -> partition.tsv -> bins.tsv).
pub fn partition_and_binpack(work: &Path, partition_extra: &[String]) {
    let mut c = fsim("fsim-partition");
    c.args(["-q", "--files"])
        .arg(work.join("files.tsv"))
        .args(partition_extra)
        .arg("-o")
        .arg(work.join("partition.tsv"))
        .arg(work.join("sorted.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-binpack");
    c.args(["-q", "-o"])
        .arg(work.join("bins.tsv"))
        .arg(work.join("partition.tsv"));
    run_ok(c, None);
}

/// The stages after the sort (partition .. report) in `work`, each with
/// its defaults (the recommended settings, those of `make report`) but
/// the extra arguments for fsim-partition, fsim-analyze and fsim-verify
/// (e.g. `--templates F`, which all three take, as make passes them);
/// returns the JSON report.
pub fn rest_of_pipeline(work: &Path, extra: &[String]) -> serde_json::Value {
    rest_of_pipeline_with(work, extra, extra, extra)
}

/// [`rest_of_pipeline`] with arguments for fsim-partition, fsim-analyze and
/// fsim-verify apart: a test of what the defaults leave out passes what it
/// needs here (e.g. `--no-line-source`, fsim-verify's `--min-percent 0`).
pub fn rest_of_pipeline_with(
    work: &Path,
    partition_extra: &[String],
    analyze_extra: &[String],
    verify_extra: &[String],
) -> serde_json::Value {
    let files = work.join("files.tsv");
    partition_and_binpack(work, partition_extra);
    let mut c = fsim("fsim-analyze");
    c.args(["-q", "--files"])
        .arg(&files)
        .args(analyze_extra)
        .arg("-o")
        .arg(work.join("pairs.tsv"))
        .arg(work.join("bins.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-verify");
    c.args(["-q", "--files"])
        .arg(&files)
        .args(verify_extra)
        .arg("-o")
        .arg(work.join("verified.tsv"))
        .arg(work.join("pairs.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "json", "--files"])
        .arg(&files)
        .arg("-o")
        .arg(work.join("report.json"))
        .arg(work.join("verified.tsv"));
    run_ok(c, None);
    serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap()
}

// --- Hand-written file tables and pairs (fsim-report tests) ---

/// The chunking parameters of the hand-written report inputs.
pub fn report_params() -> Params {
    Params::new().with("method", "tttd").with("avg", 1000)
}

/// A file table holding these entries (no chunk records behind it).
pub fn file_table(files: &[formats::FileEntry]) -> Vec<u8> {
    let mut v = Vec::new();
    formats::write_header(Kind::Files, &report_params(), &mut v);
    let mut table = formats::files::TableDigest::default();
    for f in files {
        table.write(f, &mut v);
    }
    formats::write_trailer(
        Kind::Files,
        &Params::new()
            .with("files", files.len())
            .with("records", 0)
            .with("digest", "0")
            .with(formats::files::TABLE_DIGEST_KEY, table.hex()),
        &mut v,
    );
    v
}

/// A pairs file (min-percent 10) of (a, b, size a, size b, common bytes),
/// with its trailer's count and digest.
pub fn pairs_file(pairs: &[(u32, u32, u64, u64, u64)]) -> Vec<u8> {
    let mut v = Vec::new();
    formats::write_header(
        Kind::Pairs,
        &report_params().with("min-percent", 10),
        &mut v,
    );
    let mut d = Digest::default();
    for &(a, b, sa, sb, c) in pairs {
        v.extend_from_slice(format!("{a:010}\t{b:010}\t{sa}\t{sb}\t{c}\t1\n").as_bytes());
        d.add_mix(formats::mix128(
            ((a as u128) << 96) | ((b as u128) << 64) | c as u128,
        ));
    }
    formats::write_trailer(Kind::Pairs, &formats::digest_params(&d, "pairs"), &mut v);
    v
}

// --- Hand-written partition files (binpack and analyze tests) ---

/// A file of a hand-written partition: id, component, size, content hash.
pub struct PFile {
    pub id: u32,
    pub comp: u32,
    pub size: u64,
    pub content: u128,
}

/// A partition file with these files and records (records are sorted here).
pub fn partition_text(files: &[PFile], recs: &[(u128, u32, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    let p = Params::new()
        .with("method", "tttd")
        .with("avg", 1000)
        .with("files", 20)
        .with("limit", 10);
    formats::write_header(Kind::Partition, &p, &mut out);
    let mut recs: Vec<ChunkRecord> = recs
        .iter()
        .map(|&(hash, file, len)| ChunkRecord { hash, file, len })
        .collect();
    recs.sort_by_key(|r| (r.hash, r.file, r.len));
    let mut d = Digest::default();
    for r in &recs {
        r.write(&mut out);
        d.add(r);
    }
    for f in files {
        out.extend_from_slice(
            format!(
                "F\t{}\t{}\t{}\t{}\n",
                formats::id_string(f.id),
                formats::id_string(f.comp),
                f.size,
                formats::hex128(f.content)
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(b"#dropped\t0000000000000000000000000000ffff\t15\t80\t0000000001\n");
    let comps = files.iter().filter(|f| f.id == f.comp).count();
    let t = formats::digest_params(&d, "records")
        .with("files", files.len())
        .with("components", comps)
        .with("dropped_chunks", 1)
        .with("dropped_records", 15);
    formats::write_trailer(Kind::Partition, &t, &mut out);
    out
}

/// The example used by both test files: three components.
///
/// * component 1: files 1, 2, 5 (5 is a copy of 1); chunks A (100 bytes,
///   in 1, 2, 5), B (200, in 1, 2, 5), C (50, twice in 1, once in 2):
///   9 records, 3 chunks, estimate 3×96 + 9×16 + 3×8 = 456 bytes.
/// * component 3: files 3, 4; chunks D (300), E (100): 4 records, 2
///   chunks, estimate 2×96 + 4×16 + 2×8 = 272.
/// * component 6: files 6-9; F (500, in all four), G (400, 6 7), H (300,
///   8 9), I (250, 7 8): 10 records, 4 chunks, estimate 4×96 + 10×16 +
///   4×8 = 576.
pub fn example() -> Vec<u8> {
    let files = [
        PFile {
            id: 1,
            comp: 1,
            size: 1000,
            content: 0x111,
        },
        PFile {
            id: 2,
            comp: 1,
            size: 800,
            content: 0x222,
        },
        PFile {
            id: 3,
            comp: 3,
            size: 500,
            content: 0x333,
        },
        PFile {
            id: 4,
            comp: 3,
            size: 600,
            content: 0x444,
        },
        PFile {
            id: 5,
            comp: 1,
            size: 1000,
            content: 0x111,
        },
        PFile {
            id: 6,
            comp: 6,
            size: 2000,
            content: 0x666,
        },
        PFile {
            id: 7,
            comp: 6,
            size: 2000,
            content: 0x777,
        },
        PFile {
            id: 8,
            comp: 6,
            size: 2000,
            content: 0x888,
        },
        PFile {
            id: 9,
            comp: 6,
            size: 2000,
            content: 0x999,
        },
    ];
    let (a, b, c, d, e, f, g, h, i) = (0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0xf1, 0xf2, 0xf3);
    let recs = [
        (a, 1, 100),
        (a, 2, 100),
        (a, 5, 100),
        (b, 1, 200),
        (b, 2, 200),
        (b, 5, 200),
        (c, 1, 50),
        (c, 1, 50),
        (c, 2, 50),
        (d, 3, 300),
        (d, 4, 300),
        (e, 3, 100),
        (e, 4, 100),
        (f, 6, 500),
        (f, 7, 500),
        (f, 8, 500),
        (f, 9, 500),
        (g, 6, 400),
        (g, 7, 400),
        (h, 8, 300),
        (h, 9, 300),
        (i, 7, 250),
        (i, 8, 250),
    ];
    partition_text(&files, &recs)
}

/// Run a binary in `dir`; panic with the command, status and output unless
/// its success matches `ok`.
pub fn run(bin: &str, args: &[&str], dir: &Path, ok: bool) -> Output {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("cannot run the binary");
    if out.status.success() != ok {
        panic!(
            "{bin} {args:?}: status {:?}\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// A stage's output file as text, decompressed when `make report` kept it
/// zstd-compressed ([`read_records`]).
pub fn read(dir: &Path, name: &str) -> String {
    String::from_utf8(read_records(&dir.join(name))).expect("output is UTF-8")
}

/// Every `.rs` file under `dir` (tests/rules/layers.rs and
/// tests/rules/function_length.rs scan src/ with it).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (path, id) of each file of a file table, in its order.
pub fn file_ids(files: &Path) -> Vec<(String, u32)> {
    std::fs::read_to_string(files)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[f.len() - 1].to_string(), f[0].parse().unwrap())
        })
        .collect()
}

/// (a, b) -> the fields after the ids, of each pair of a pairs file.
pub fn pair_fields(path: &Path) -> std::collections::HashMap<(u32, u32), Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                (f[0].parse().unwrap(), f[1].parse().unwrap()),
                f[2..].iter().map(|x| x.to_string()).collect(),
            )
        })
        .collect()
}

/// A record file's text: `make report` keeps the chunk records, sorted
/// records, partition and bins zstd-compressed (gzip from earlier runs),
/// which the stages, and this, read as their lines; a text file is
/// returned as is.
pub fn read_records(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = Vec::new();
    fsim::formats::codec::decode_any(&raw[..])
        .and_then(|mut r| r.read_to_end(&mut text))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text
}
