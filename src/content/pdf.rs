//! PDF: the text of each page in order, from poppler's `pdftotext` or,
//! where it is missing, from fsim's own `fsim-pdftext` (pure Rust,
//! [`super::pdftext`]), each run as a separate process. A PDF parser is a
//! large body of code facing the most hostile format of all (its own
//! compression, object streams, fonts); in a process of its own a crash, a
//! loop or a runaway allocation costs one file its view, never the stage:
//! the process gets an address space limit (`pdf_memory`, `ulimit -v`), a
//! CPU limit and a wall-clock deadline (`time`, then it is killed), and its
//! output is read up to `max_bytes` (then the pipe is closed, which ends
//! it). Both extractors run through the very same limits.
//!
//! pdftotext is poppler's (GPL, run as a program, not linked): present on
//! most Unix systems (Debian's poppler-utils) and the extractor that holds
//! on real files best (docs/documents.md measures both). `FSIM_PDF` picks
//! one (`pdftotext`, `fsim-pdftext`, default `auto`: pdftotext when on
//! PATH, else fsim-pdftext beside the running program). The two give
//! different texts of one PDF, so the extractor is part of a run's
//! chunking parameters (`pdf=` in the headers, [`extractor_param`]): a
//! previous run's records made by the other are never reused silently.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::{read_input, Budget, Fail, Source};

pub(super) fn extract(
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    let exe = extractor()?;
    extract_with(exe, src, path, budget)
}

/// The file an extractor reads: `path` when the bytes are a file on
/// disk, else a temporary file holding them (kept while the returned
/// handle lives; the extractors seek, so a pipe will not do).
pub(super) fn input_file(
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<(PathBuf, Option<tempfile::NamedTempFile>), Fail> {
    if let Some(p) = path {
        return Ok((p.to_path_buf(), None));
    }
    let data = read_input(src, budget)?;
    let mut f = tempfile::NamedTempFile::new().map_err(|e| format!("temporary file: {e}"))?;
    f.write_all(&data)
        .map_err(|e| format!("temporary file: {e}"))?;
    Ok((f.path().to_path_buf(), Some(f)))
}

/// [`extract`] with the extractor `exe`.
pub(super) fn extract_with(
    exe: &Extractor,
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    // Bytes in memory go through a temporary file: pdftotext seeks.
    let (input, tmp) = input_file(src, path, budget)?;
    let text = run(exe, &input, budget);
    drop(tmp);
    Ok(page_lines(&text?))
}

/// True when PDFs have a text extractor here.
pub(super) fn available() -> bool {
    extractor().is_ok()
}

/// A program that prints the text of a PDF's pages, a form feed after
/// each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extractor {
    /// Poppler's pdftotext.
    Pdftotext(PathBuf),
    /// fsim's own, pure Rust ([`super::pdftext`]).
    FsimPdftext(PathBuf),
}

impl Extractor {
    /// Its name, as `FSIM_PDF` and the `pdf=` header parameter say it.
    pub fn name(&self) -> &'static str {
        match self {
            Extractor::Pdftotext(_) => "pdftotext",
            Extractor::FsimPdftext(_) => "fsim-pdftext",
        }
    }

    fn path(&self) -> &Path {
        match self {
            Extractor::Pdftotext(p) | Extractor::FsimPdftext(p) => p,
        }
    }

    /// The arguments that print `input`'s text on stdout.
    fn args<'a>(&self, input: &'a Path) -> Vec<&'a OsStr> {
        match self {
            Extractor::Pdftotext(_) => {
                let mut a: Vec<&OsStr> = ["-enc", "UTF-8", "-eol", "unix"].map(OsStr::new).to_vec();
                a.extend([input.as_os_str(), OsStr::new("-")]);
                a
            }
            Extractor::FsimPdftext(_) => vec![input.as_os_str()],
        }
    }
}

/// The extractor of this process, chosen once ([`choose`] with `FSIM_PDF`,
/// PATH and the running program's folder), or why there is none.
pub fn extractor() -> Result<&'static Extractor, String> {
    static EXE: OnceLock<Result<Extractor, String>> = OnceLock::new();
    EXE.get_or_init(|| {
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        choose(
            std::env::var_os("FSIM_PDF").as_deref(),
            std::env::var_os("PATH").as_deref(),
            exe_dir.as_deref(),
        )
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The `pdf=` chunking parameter of a run with content views: `None` for
/// pdftotext (the extractor of the runs before the parameter existed, so
/// that their records stay reusable), else the extractor's name, or `none`
/// where PDFs keep their raw view.
pub fn extractor_param() -> Option<&'static str> {
    match extractor() {
        Ok(Extractor::Pdftotext(_)) => None,
        Ok(e) => Some(e.name()),
        Err(_) => Some("none"),
    }
}

/// The extractor `FSIM_PDF` (`want`) asks for: `pdftotext` on `path`,
/// `fsim-pdftext` in `exe_dir` (or, for cargo's test programs in
/// `target/*/deps`, its parent); `auto` (or unset) the first found.
pub(super) fn choose(
    want: Option<&OsStr>,
    path: Option<&OsStr>,
    exe_dir: Option<&Path>,
) -> Result<Extractor, String> {
    let poppler = || {
        std::env::split_paths(path?)
            .map(|d| d.join("pdftotext"))
            .find(|p| p.is_file())
            .map(Extractor::Pdftotext)
    };
    let own = || {
        let dir = exe_dir?;
        let deps_parent = dir
            .file_name()
            .filter(|n| *n == "deps")
            .and_then(|_| dir.parent());
        [Some(dir), deps_parent]
            .into_iter()
            .flatten()
            .map(|d| d.join("fsim-pdftext"))
            .find(|p| p.is_file())
            .map(Extractor::FsimPdftext)
    };
    let dir = exe_dir.map_or("the running program's folder".into(), |d| {
        d.display().to_string()
    });
    match want.map(|w| w.to_string_lossy()).as_deref().unwrap_or("auto") {
        "auto" => poppler().or_else(own).ok_or_else(|| {
            format!("no PDF text extractor: pdftotext (poppler-utils) is not installed and fsim-pdftext is not in {dir}")
        }),
        "pdftotext" => poppler().ok_or_else(|| {
            "no PDF text extractor: pdftotext (poppler-utils) is not installed (FSIM_PDF=pdftotext)".into()
        }),
        "fsim-pdftext" => own().ok_or_else(|| {
            format!("no PDF text extractor: fsim-pdftext is not in {dir} (FSIM_PDF=fsim-pdftext)")
        }),
        other => Err(format!(
            "no PDF text extractor: FSIM_PDF={other:?}, expected auto, pdftotext or fsim-pdftext"
        )),
    }
}

/// The extractor's output for `input`, within the limits.
fn run(exe: &Extractor, input: &Path, budget: &Budget) -> Result<Vec<u8>, Fail> {
    run_program(exe.name(), exe.path(), &exe.args(input), budget)
}

/// How many times `time` (the limit of one stretch without output) a
/// whole extraction may take: a 900-page manual that pdftotext reads in
/// 13 s at a steady pace gets its text, a loop that writes nothing is
/// killed after `time`, and a file writing a little forever after
/// `WHOLE_FILE_TIMES` × `time` (5 minutes with the default 10 s).
pub const WHOLE_FILE_TIMES: u32 = 30;

/// The standard output of `program` run with `args`, `name` in the
/// errors, under the limits every text extractor runs with: its own
/// process, an address space of `pdf_memory`, a CPU limit and two
/// deadlines (then it is killed): `time` without any new output (pdftotext
/// writes page after page, so this is the limit of a page, give or take
/// its output buffer) and `WHOLE_FILE_TIMES` × `time` in all. Its output is
/// read up to `max_bytes`. A failure is the first line of its stderr that
/// says so.
pub(super) fn run_program(
    name: &str,
    program: &Path,
    args: &[&OsStr],
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    let limits = budget.limits;
    let whole = limits.time * WHOLE_FILE_TIMES;
    let cpu = whole.as_secs().max(1) + 1;
    // `sh` sets the limits, then becomes the extractor (exec): no unsafe
    // pre_exec hook, and the pid killed at the deadline is the extractor's.
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"ulimit -v "$1" && ulimit -t "$2" && shift 2 && exec "$@""#)
        .arg("sh")
        .arg((limits.pdf_memory / 1024).to_string())
        .arg(cpu.to_string())
        .arg(program)
        .args(args)
        // A failure's note is its first line of stderr: the panic or
        // allocation message, never a backtrace.
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no pipe from the extractor")?;
    let mut stderr = child.stderr.take().ok_or("no pipe from the extractor")?;
    let read = Arc::new(AtomicU64::new(0));
    let out_thread = {
        let (read, cap) = (Arc::clone(&read), limits.max_bytes + 1);
        std::thread::spawn(move || read_counted(stdout, cap, &read))
    };
    let err_thread = std::thread::spawn(move || {
        let mut err = Vec::new();
        let _ = (&mut stderr).take(4096).read_to_end(&mut err);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        err
    });
    let start = Instant::now();
    let (mut seen, mut last) = (0, start);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for {name}: {e}")),
        }
        let now = Instant::now();
        let n = read.load(Ordering::Relaxed);
        if n > seen {
            (seen, last) = (n, now);
        }
        let late = if now - last > limits.time {
            Some(format!(
                "wrote nothing for {} s, the time limit of a page",
                limits.time.as_secs_f64()
            ))
        } else if now - start > whole {
            Some(format!(
                "took longer than {} s, the time limit of a whole file",
                whole.as_secs_f64()
            ))
        } else {
            None
        };
        if let Some(why) = late {
            let _ = child.kill();
            let _ = child.wait();
            // The readers are not joined: a descendant the extractor
            // left holding the pipes must not hold this thread too;
            // they end when the pipes close.
            drop((out_thread, err_thread));
            return Err(why);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let out = out_thread
        .join()
        .map_err(|_| format!("the {name} reader panicked"))?
        .map_err(|e| format!("reading {name}: {e}"))?;
    let err = err_thread.join().unwrap_or_default();
    budget.check_size(out.len() as u64, "the text")?;
    if !status.success() {
        return Err(format!("{name} failed ({status}): {}", first_error(&err)));
    }
    Ok(out)
}

/// All of `r` up to `cap` bytes, counting in `read` the bytes read so far
/// (the extractor's progress). Dropping the pipe at the cap ends an
/// extractor writing past it.
fn read_counted(mut r: impl Read, cap: u64, read: &AtomicU64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 16 << 10];
    while (out.len() as u64) < cap {
        let want = buf.len().min((cap - out.len() as u64) as usize);
        let n = match r.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        out.extend_from_slice(&buf[..n]);
        read.store(out.len() as u64, Ordering::Relaxed);
    }
    Ok(out)
}

/// The first line of the extractor's stderr that says what failed.
fn first_error(err: &[u8]) -> String {
    let text = String::from_utf8_lossy(err);
    let line = text
        .lines()
        .find(|l| l.contains("Error") || l.contains("error"))
        .or_else(|| text.lines().next())
        .unwrap_or("no message");
    line.trim().chars().take(200).collect()
}

/// The extractor's text as lines: form feeds between pages and trailing white
/// space dropped, empty lines left out (as the other extractors do).
pub(super) fn page_lines(text: &[u8]) -> Vec<u8> {
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
    fn fake(dir: &Path, body: &str) -> Extractor {
        let p = dir.join("fake-pdftotext");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        Extractor::Pdftotext(p)
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
        assert_eq!(
            r,
            Err("wrote nothing for 0.5 s, the time limit of a page".to_string())
        );
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }

    /// A long document read at a steady pace (a page every 0.2 s, each
    /// under the limit of 0.5 s) gets its whole text, though it takes
    /// longer than that limit; one writing a little forever is stopped at
    /// `WHOLE_FILE_TIMES` limits.
    #[test]
    fn the_limit_is_of_a_page_and_a_whole_file_has_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let exe = fake(
            dir.path(),
            "for p in 1 2 3 4 5 6 7 8; do echo \"page $p\"; sleep 0.2; done",
        );
        let limits = Limits {
            time: Duration::from_millis(500),
            ..Limits::default()
        };
        let t = Instant::now();
        let r = run(&exe, Path::new("/dev/null"), &Budget::new(&limits));
        assert!(t.elapsed() > limits.time, "{:?}", t.elapsed());
        let text = String::from_utf8(r.unwrap()).unwrap();
        assert_eq!(text.lines().count(), 8, "{text}");

        // A line every 20 ms against a page's 300 ms: a machine busy
        // enough to hold the writer back 100 ms (a test run beside a
        // build) does not make it look stalled.
        let exe = fake(dir.path(), "while :; do echo more; sleep 0.02; done");
        let limits = Limits {
            time: Duration::from_millis(300),
            ..Limits::default()
        };
        let t = Instant::now();
        let r = run(&exe, Path::new("/dev/null"), &Budget::new(&limits));
        assert_eq!(
            r,
            Err("took longer than 9 s, the time limit of a whole file".to_string())
        );
        assert!(t.elapsed() < Duration::from_secs(14), "{:?}", t.elapsed());
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

    #[test]
    fn fsim_pdf_chooses_the_extractor_and_says_why_there_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let (bin, deps) = (dir.path().join("bin"), dir.path().join("release/deps"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::write(bin.join("pdftotext"), "").unwrap();
        std::fs::write(dir.path().join("release/fsim-pdftext"), "").unwrap();
        let path = bin.as_os_str();
        let own = Extractor::FsimPdftext(dir.path().join("release/fsim-pdftext"));
        let poppler = Extractor::Pdftotext(bin.join("pdftotext"));
        let release = dir.path().join("release");
        // auto: pdftotext first, then fsim-pdftext beside the program (or
        // beside cargo's deps folder, where test programs run).
        assert_eq!(
            choose(None, Some(path), Some(&release)),
            Ok(poppler.clone())
        );
        assert_eq!(choose(None, None, Some(&release)), Ok(own.clone()));
        assert_eq!(choose(None, None, Some(&deps)), Ok(own.clone()));
        let want = |w: &'static str| Some(OsStr::new(w));
        let fsim = want("fsim-pdftext");
        assert_eq!(choose(fsim, Some(path), Some(&deps)), Ok(own));
        assert_eq!(choose(want("pdftotext"), Some(path), None), Ok(poppler));
        assert_eq!(
            choose(None, None, Some(&bin)),
            Err(format!("no PDF text extractor: pdftotext (poppler-utils) is not installed and fsim-pdftext is not in {}", bin.display()))
        );
        assert_eq!(
            choose(fsim, Some(path), Some(&bin)),
            Err(format!(
                "no PDF text extractor: fsim-pdftext is not in {} (FSIM_PDF=fsim-pdftext)",
                bin.display()
            ))
        );
        assert_eq!(
            choose(want("rust"), Some(path), None),
            Err("no PDF text extractor: FSIM_PDF=\"rust\", expected auto, pdftotext or fsim-pdftext".into())
        );
    }
}
