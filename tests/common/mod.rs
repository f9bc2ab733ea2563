//! One harness for the integration tests: run the real binaries in a temp
//! dir, feed stdin from a thread, and on failure show the command, status,
//! stdout and stderr.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Path of one of the crate's binaries (built by cargo for the tests).
pub fn bin(name: &str) -> PathBuf {
    let p = match name {
        "fsim-chunk" => env!("CARGO_BIN_EXE_fsim-chunk"),
        "fsim-sort" => env!("CARGO_BIN_EXE_fsim-sort"),
        "fsim-partition" => env!("CARGO_BIN_EXE_fsim-partition"),
        "fsim-binpack" => env!("CARGO_BIN_EXE_fsim-binpack"),
        "fsim-analyze" => env!("CARGO_BIN_EXE_fsim-analyze"),
        "fsim-report" => env!("CARGO_BIN_EXE_fsim-report"),
        "fsim-gen" => env!("CARGO_BIN_EXE_fsim-gen"),
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
    let mut c = fsim("fsim-partition");
    c.args(["-q", "--files"])
        .arg(&files)
        .arg("-o")
        .arg(work.join("partition.tsv"))
        .arg(work.join("sorted.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-binpack");
    c.args(["-q", "-o"])
        .arg(work.join("bins.tsv"))
        .arg(work.join("partition.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-analyze");
    c.args(["-q", "-o"])
        .arg(work.join("pairs.tsv"))
        .arg(work.join("bins.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "json", "--files"])
        .arg(&files)
        .arg("-o")
        .arg(work.join("report.json"))
        .arg(work.join("pairs.tsv"));
    run_ok(c, None);
    serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap()
}
