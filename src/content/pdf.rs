//! PDF: the text of each page in order, from poppler's `pdftotext`, run as
//! a separate process. A PDF parser is a large body of code facing the
//! most hostile format of all (its own compression, object streams,
//! fonts); in a process of its own a crash, a loop or a runaway allocation
//! costs one file its view, never the stage: the process gets an address
//! space limit (`pdf_memory`, `ulimit -v`), a CPU limit and a wall-clock
//! deadline (`time`, then it is killed), and its output is read up to
//! `max_bytes` (then the pipe is closed, which ends it).
//!
//! pdftotext is poppler's (GPL, run as a program, not linked): present on
//! most Unix systems (Debian's poppler-utils) and the extractor that holds
//! on real files best (docs/documents.md). Where it is missing, PDFs keep
//! their raw view with a note saying so; a pure-Rust fallback is a later
//! slice (docs/documents.md, "Left for later").

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use super::{read_input, Budget, Fail, Source};

pub(super) fn extract(
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    let exe =
        pdftotext().ok_or("no PDF text extractor: pdftotext (poppler-utils) is not installed")?;
    // Bytes in memory go through a temporary file: pdftotext seeks.
    let mut tmp = None;
    let input = match path {
        Some(p) => p.to_path_buf(),
        None => {
            let data = read_input(src, budget)?;
            let mut f =
                tempfile::NamedTempFile::new().map_err(|e| format!("temporary file: {e}"))?;
            f.write_all(&data)
                .map_err(|e| format!("temporary file: {e}"))?;
            let p = f.path().to_path_buf();
            tmp = Some(f);
            p
        }
    };
    let text = run(exe, &input, budget);
    drop(tmp);
    Ok(page_lines(&text?))
}

/// True when PDFs have a text extractor here.
pub(super) fn available() -> bool {
    pdftotext().is_some()
}

/// The pdftotext on PATH, looked up once.
fn pdftotext() -> Option<&'static Path> {
    static EXE: OnceLock<Option<PathBuf>> = OnceLock::new();
    EXE.get_or_init(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join("pdftotext"))
            .find(|p| p.is_file())
    })
    .as_deref()
}

/// pdftotext's output for `input`, within the limits.
fn run(exe: &Path, input: &Path, budget: &Budget) -> Result<Vec<u8>, Fail> {
    let limits = budget.limits;
    let cpu = limits.time.as_secs().max(1) + 1;
    // `sh` sets the limits, then becomes pdftotext (exec): no unsafe
    // pre_exec hook, and the pid killed at the deadline is pdftotext's.
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"ulimit -v "$1" && ulimit -t "$2" && shift 2 && exec "$@""#)
        .arg("sh")
        .arg((limits.pdf_memory / 1024).to_string())
        .arg(cpu.to_string())
        .arg(exe)
        .args(["-enc", "UTF-8", "-eol", "unix"])
        .arg(input)
        .arg("-")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run pdftotext: {e}"))?;
    let mut stdout = child.stdout.take().ok_or("no pipe from pdftotext")?;
    let mut stderr = child.stderr.take().ok_or("no pipe from pdftotext")?;
    let cap = limits.max_bytes;
    let out_thread = std::thread::spawn(move || {
        let mut out = Vec::new();
        let r = (&mut stdout).take(cap + 1).read_to_end(&mut out);
        // Dropping the pipe here ends a pdftotext writing past the cap.
        drop(stdout);
        r.map(|_| out)
    });
    let err_thread = std::thread::spawn(move || {
        let mut err = Vec::new();
        let _ = (&mut stderr).take(4096).read_to_end(&mut err);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        err
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if budget.check_time().is_err() => {
                let _ = child.kill();
                let _ = child.wait();
                // The readers are not joined: a descendant the extractor
                // left holding the pipes must not hold this thread too;
                // they end when the pipes close.
                drop((out_thread, err_thread));
                return Err(budget.check_time().unwrap_err());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for pdftotext: {e}")),
        }
    };
    let out = out_thread
        .join()
        .map_err(|_| "the pdftotext reader panicked".to_string())?
        .map_err(|e| format!("reading pdftotext: {e}"))?;
    let err = err_thread.join().unwrap_or_default();
    budget.check_size(out.len() as u64, "the text")?;
    if !status.success() {
        return Err(format!(
            "pdftotext failed ({status}): {}",
            first_error(&err)
        ));
    }
    Ok(out)
}

/// The first line of pdftotext's stderr that says what failed.
fn first_error(err: &[u8]) -> String {
    let text = String::from_utf8_lossy(err);
    let line = text
        .lines()
        .find(|l| l.contains("Error") || l.contains("error"))
        .or_else(|| text.lines().next())
        .unwrap_or("no message");
    line.trim().chars().take(200).collect()
}

/// pdftotext's text as lines: form feeds between pages and trailing white
/// space dropped, empty lines left out (as the other extractors do).
fn page_lines(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split(|&b| b == b'\n' || b == b'\x0c') {
        let line = line.trim_ascii();
        if !line.is_empty() {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Limits;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Instant;

    /// An executable script standing in for pdftotext.
    fn fake(dir: &Path, body: &str) -> PathBuf {
        let p = dir.join("fake-pdftotext");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn a_hanging_extractor_is_killed_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        // Not `exec`: a child of the killed process keeps the pipes open.
        let exe = fake(dir.path(), "sleep 30");
        let limits = Limits {
            time: Duration::from_millis(500),
            ..Limits::default()
        };
        let t = Instant::now();
        let r = run(&exe, Path::new("/dev/null"), &Budget::new(&limits));
        assert_eq!(r, Err("took longer than 0.5 s, the time limit".to_string()));
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }

    #[test]
    fn endless_output_stops_at_the_size_limit() {
        let dir = tempfile::tempdir().unwrap();
        let exe = fake(dir.path(), "exec yes 'one more line of text'");
        let limits = Limits {
            max_bytes: 1 << 20,
            ..Limits::default()
        };
        let r = run(&exe, Path::new("/dev/null"), &Budget::new(&limits));
        assert_eq!(
            r,
            Err("the text larger than 1048576 bytes, the size limit".to_string())
        );
    }

    #[test]
    fn the_memory_limit_reaches_the_process_and_failures_say_why() {
        let dir = tempfile::tempdir().unwrap();
        // The address space limit the process runs under, in KiB.
        let exe = fake(
            dir.path(),
            "ulimit -v; echo 'Syntax Error: broken xref' >&2; exit 3",
        );
        let limits = Limits {
            pdf_memory: 256 << 20,
            ..Limits::default()
        };
        let r = run(&exe, Path::new("/dev/null"), &Budget::new(&limits));
        assert_eq!(
            r,
            Err("pdftotext failed (exit status: 3): Syntax Error: broken xref".to_string())
        );
        let exe = fake(dir.path(), "ulimit -v");
        let out = run(&exe, Path::new("/dev/null"), &Budget::new(&limits)).unwrap();
        assert_eq!(out, b"262144\n");
    }
}
