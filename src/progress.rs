//! Progress on standard error for long stages (issue 4), with the
//! `indicatif` crate: bytes of input done, rate and ETA when the input's
//! size is known (a regular file), a spinner with bytes and rate otherwise.
//!
//! Shown only when standard error is a terminal and the stage is not
//! `--quiet`; in a file, a pipe or a test nothing is drawn, so the stage's
//! stderr holds only its one-line summary. `FSIM_PROGRESS=0` turns it off
//! on a terminal too.
//!
//! A stage wraps the reader of its main input in [`ProgressReader`]: the
//! bar advances as lines are consumed, so no stage logic changes. Cost: one
//! add per buffer refill; the bar redraws at most 10 times a second.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use std::io::{BufRead, IsTerminal, Read};
use std::path::Path;

/// Is progress wanted for a stage run with `quiet`?
pub fn wanted(quiet: bool) -> bool {
    !quiet
        && std::io::stderr().is_terminal()
        && std::env::var_os("FSIM_PROGRESS").is_none_or(|v| v != "0")
}

/// A progress bar over bytes of input, or nothing.
#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar named `prog` for inputs totalling `total` bytes (None: unknown),
    /// shown only when [`wanted`].
    pub fn bytes(prog: &str, total: Option<u64>, quiet: bool) -> Progress {
        if !wanted(quiet) {
            return Progress { bar: None };
        }
        let bar = match total {
            Some(t) => {
                let b = ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr());
                b.set_style(
                    ProgressStyle::with_template(
                        "{prefix}: [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}, ETA {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                b
            }
            None => {
                let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                b.set_style(
                    ProgressStyle::with_template("{prefix}: {spinner} {bytes} {bytes_per_sec}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                b
            }
        };
        bar.set_prefix(prog.to_string());
        // Dropped without finish (an error): the bar is cleared, not left.
        let bar = bar.with_finish(ProgressFinish::AndClear);
        Progress { bar: Some(bar) }
    }

    /// A bar for the regular files among `paths` (unknown total if any is
    /// standard input or not a regular file).
    pub fn for_inputs(prog: &str, paths: &[&Path], quiet: bool) -> Progress {
        let mut total = Some(0u64);
        for p in paths {
            let size = (p.as_os_str() != "-")
                .then(|| std::fs::metadata(p).ok())
                .flatten()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            total = match (total, size) {
                (Some(t), Some(s)) => Some(t + s),
                _ => None,
            };
        }
        Progress::bytes(prog, total, quiet)
    }

    #[inline]
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
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
}
