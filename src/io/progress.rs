//! Progress on standard error for long stages, with the
//! `indicatif` crate: bytes of input done, rate and ETA when the input's
//! size is known (a regular file), a spinner with bytes and rate otherwise;
//! optionally a second count beside the bytes (files, bins), or a bar over
//! items (records merged) for a stage's second phase.
//!
//! Shown only when standard error is a terminal and the stage is not
//! `--quiet`; in a file, a pipe or a test nothing is drawn, so the stage's
//! stderr holds only its one-line summary. `FSIM_PROGRESS=0` turns it off
//! on a terminal too.
//!
//! A stage wraps the reader of its main input in [`ProgressReader`]: the
//! bar advances as lines are consumed, so no stage logic changes. Stages
//! without one main input (fsim-chunk) set the position where a batch of
//! work finishes. Cost: one atomic add or store per buffer refill or batch,
//! never per record; the bar redraws at most 20 times a second, and a
//! ticker thread (only while a bar is shown) redraws it 4 times a second so
//! elapsed time and rate stay current while one long item (a 1 GB file, a
//! big bin) is being processed.

use crate::error::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressState, ProgressStyle};
use std::io::{BufRead, IsTerminal, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Is progress wanted for a stage run with `quiet`?
pub fn wanted(quiet: bool) -> bool {
    !quiet
        && std::io::stderr().is_terminal()
        && std::env::var_os("FSIM_PROGRESS").is_none_or(|v| v != "0")
}

/// How often the ticker thread redraws a shown bar.
const TICK: Duration = Duration::from_millis(250);

/// A count shown beside the bytes (`12,345 files`, `3/40 bins`), kept in
/// atomics the bar's style reads at each redraw, so that updating it costs
/// a store and no formatting.
#[derive(Clone)]
struct Count {
    unit: &'static str,
    done: Arc<AtomicU64>,
    /// 0: unknown.
    total: Arc<AtomicU64>,
}

impl Count {
    fn new(unit: &'static str) -> Count {
        Count {
            unit,
            done: Arc::new(AtomicU64::new(0)),
            total: Arc::new(AtomicU64::new(0)),
        }
    }

    fn write(&self, w: &mut dyn std::fmt::Write) {
        let done = indicatif::HumanCount(self.done.load(Ordering::Relaxed));
        let _ = match self.total.load(Ordering::Relaxed) {
            0 => write!(w, "{done} {}", self.unit),
            t => write!(w, "{done}/{} {}", indicatif::HumanCount(t), self.unit),
        };
    }
}

/// A progress bar over bytes of input (or items), or nothing.
#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
    count: Option<Count>,
}

impl Progress {
    /// Nothing drawn (library callers, tests).
    pub fn none() -> Progress {
        Progress {
            bar: None,
            count: None,
        }
    }

    /// A bar named `prog` for inputs totalling `total` bytes (None: unknown),
    /// shown only when [`wanted`].
    pub fn bytes(prog: &str, total: Option<u64>, quiet: bool) -> Progress {
        Progress::build(prog, total, None, quiet)
    }

    /// Like [`Progress::bytes`], with a count of `unit` (files, bins) beside
    /// the bytes, set with [`Progress::set_count`].
    pub fn bytes_and(prog: &str, total: Option<u64>, unit: &'static str, quiet: bool) -> Progress {
        Progress::build(prog, total, Some(Count::new(unit)), quiet)
    }

    /// A bar over `total` items of `unit` (records merged), with rate and
    /// ETA; `prog` may name the phase (`fsim-sort: merging`).
    pub fn items(prog: &str, total: u64, unit: &'static str, quiet: bool) -> Progress {
        if !wanted(quiet) {
            return Progress::none();
        }
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "{prefix}: [{wide_bar}] {human_pos}/{human_len} {unit}, {rate}, ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key(
                "unit",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(unit);
                },
            )
            // Whole items per second ({per_sec} prints four decimals).
            .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}/s", indicatif::HumanCount(s.per_sec() as u64));
            })
            .progress_chars("=> "),
        );
        Progress::show(b, prog, None)
    }

    fn build(prog: &str, total: Option<u64>, count: Option<Count>, quiet: bool) -> Progress {
        if !wanted(quiet) {
            return Progress::none();
        }
        // The count's place in the line, when there is one.
        let c = if count.is_some() { ", {count}" } else { "" };
        let (bar, template) = match total {
            Some(t) => (
                ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
                format!("{{prefix}}: [{{wide_bar}}] {{bytes}}/{{total_bytes}}{c}, {{bytes_per_sec}}, ETA {{eta}}"),
            ),
            None => (
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                format!("{{prefix}}: {{spinner}} {{bytes}}{c}, {{bytes_per_sec}}, {{elapsed}}"),
            ),
        };
        let mut style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_spinner())
            .progress_chars("=> ");
        if let Some(k) = count.clone() {
            style = style.with_key(
                "count",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| k.write(w),
            );
        }
        bar.set_style(style);
        Progress::show(bar, prog, count)
    }

    fn show(bar: ProgressBar, prog: &str, count: Option<Count>) -> Progress {
        bar.set_prefix(prog.to_string());
        // Dropped without finish (an error): the bar is cleared, not left.
        let bar = bar.with_finish(ProgressFinish::AndClear);
        // Drawn at once (a short stage still shows it), then kept current.
        bar.tick();
        bar.enable_steady_tick(TICK);
        Progress {
            bar: Some(bar),
            count,
        }
    }

    /// A bar for the regular files among `paths` (unknown total if any is
    /// standard input or not a regular file).
    pub fn for_inputs(prog: &str, paths: &[&Path], quiet: bool) -> Progress {
        Progress::bytes(prog, inputs_size(paths), quiet)
    }

    /// Is anything drawn?
    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    #[inline]
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Bytes (or items) done so far.
    #[inline]
    pub fn set_position(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.set_position(n);
        }
    }

    /// The count beside the bytes ([`Progress::bytes_and`]).
    #[inline]
    pub fn set_count(&self, n: u64) {
        if let Some(c) = &self.count {
            c.done.store(n, Ordering::Relaxed);
        }
    }

    /// The count's total, when it becomes known (a header announcing it).
    pub fn set_count_total(&self, n: u64) {
        if let Some(c) = &self.count {
            c.total.store(n, Ordering::Relaxed);
        }
    }

    /// Print something (a warning) without tearing the bar: it is cleared,
    /// `f` runs, and it is drawn again below.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Remove the bar (before the summary line is printed).
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    /// Wrap a reader so the bar follows the bytes consumed.
    pub fn reader<R: BufRead>(&self, inner: R) -> ProgressReader<R> {
        ProgressReader {
            inner,
            progress: self.clone(),
        }
    }

    /// The lines of `path` ([`crate::formats::open_input`]), the bar
    /// following the bytes read from the file as they are stored: a
    /// compressed input's bar counts its compressed bytes, against the
    /// file's size that [`Progress::for_inputs`] took as its total, and so
    /// ends where the file does.
    pub fn open(&self, path: &Path) -> Result<(Box<dyn BufRead + Send>, String)> {
        let (raw, name) = crate::formats::open_raw(path)?;
        let text = crate::formats::codec::decode_any(self.reader(raw))
            .ctx(|| format!("reading {name}"))?;
        Ok((text, name))
    }
}

/// Total size of `paths` when every one is a regular file (not `-`).
pub fn inputs_size(paths: &[&Path]) -> Option<u64> {
    let mut total = 0u64;
    for p in paths {
        if p.as_os_str() == "-" {
            return None;
        }
        let m = std::fs::metadata(p).ok().filter(|m| m.is_file())?;
        total += m.len();
    }
    Some(total)
}

/// A `BufRead` that advances a [`Progress`] as its bytes are consumed.
pub struct ProgressReader<R> {
    inner: R,
    progress: Progress,
}

impl<R: BufRead> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.inc(n as u64);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for ProgressReader<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.progress.inc(amt as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bar over `total` bytes that counts without drawing.
    fn counting(total: u64) -> Progress {
        Progress {
            bar: Some(ProgressBar::hidden().with_finish(ProgressFinish::AndClear)),
            count: None,
        }
        .with_length(total)
    }

    impl Progress {
        fn with_length(self, total: u64) -> Progress {
            if let Some(b) = &self.bar {
                b.set_length(total);
            }
            self
        }

        fn position(&self) -> u64 {
            self.bar.as_ref().map_or(0, |b| b.position())
        }
    }

    /// The records of a compressed input are 3-6 times its size: the bar
    /// counts the file's bytes, so it ends at the file's size, its total.
    #[test]
    fn a_compressed_input_ends_at_its_size() {
        let d = tempfile::tempdir().unwrap();
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("{:032x}\t{:010}\t{}\n", i % 7, i, 40 + i % 9).into_bytes())
            .collect();
        for (name, bytes) in [
            ("z", zstd::stream::encode_all(&text[..], 1).unwrap()),
            ("t", text.clone()),
        ] {
            let path = d.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let total = inputs_size(&[&path]).unwrap();
            let p = counting(total);
            let (mut r, _) = p.open(&path).unwrap();
            let mut back = Vec::new();
            r.read_to_end(&mut back).unwrap();
            assert_eq!(back, text, "{name}: the lines");
            assert_eq!(p.position(), total, "{name}: the bar's end");
        }
    }

    #[test]
    fn reader_passes_bytes_through() {
        let p = Progress::bytes("t", Some(10), true);
        let mut r = p.reader(&b"ab\ncd\n"[..]);
        let mut lines = Vec::new();
        let mut l = Vec::new();
        while r.read_until(b'\n', &mut l).unwrap() > 0 {
            lines.push(std::mem::take(&mut l));
        }
        assert_eq!(lines, [b"ab\n".to_vec(), b"cd\n".to_vec()]);
        assert!(!wanted(true));
    }

    #[test]
    fn count_reads_done_or_done_of_total() {
        let c = Count::new("files");
        let show = |c: &Count| {
            let mut s = String::new();
            c.write(&mut s);
            s
        };
        assert_eq!(show(&c), "0 files");
        c.done.store(1_234_567, Ordering::Relaxed);
        assert_eq!(show(&c), "1,234,567 files");
        let b = Count::new("bins");
        b.done.store(3, Ordering::Relaxed);
        b.total.store(40, Ordering::Relaxed);
        assert_eq!(show(&b), "3/40 bins");
    }

    #[test]
    fn quiet_draws_nothing_and_ignores_updates() {
        let p = Progress::bytes_and("t", None, "files", true);
        assert!(!p.is_shown());
        p.set_count(5);
        p.set_position(7);
        assert_eq!(p.suspend(|| 42), 42);
        p.finish();
        assert!(!Progress::items("t", 10, "records", true).is_shown());
    }

    #[test]
    fn sizes_of_regular_files_only() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::write(&a, b"12345").unwrap();
        std::fs::write(&b, b"123").unwrap();
        assert_eq!(inputs_size(&[&a, &b]), Some(8));
        assert_eq!(inputs_size(&[&a, Path::new("-")]), None);
        assert_eq!(inputs_size(&[&a, d.path()]), None);
        assert_eq!(inputs_size(&[&a, &d.path().join("missing")]), None);
    }
}
