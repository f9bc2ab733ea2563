//! Shared plumbing of the binaries: the error-to-exit-code policy and
//! argument parsing helpers, so every `main` stays a few lines long.

use crate::error::{Error, Result};
use std::io::Write;
use std::process::ExitCode;

/// Write `text` (a line, or several ending in a newline) to standard error
/// in one `write`, adding the final newline if missing. `eprintln!` writes
/// the text and the newline separately, so the summaries of stages run side
/// by side (`make -j`) could be cut by another stage's line; one write of
/// less than 4 KiB to a pipe is never split. A failed write is ignored, as
/// there is nowhere left to report it.
pub fn stderr_line(text: impl std::fmt::Display) {
    let mut s = text.to_string();
    if !s.ends_with('\n') {
        s.push('\n');
    }
    let _ = std::io::stderr().write_all(s.as_bytes());
}

/// The exit code of [`Error::NeedsAll`].
pub const NEEDS_ALL: u8 = 3;

/// Run a stage body and turn its outcome into an exit code: 0 on success or
/// on a broken pipe anywhere in the chain, 3 when a re-run's stage must
/// see every record ([`Error::NeedsAll`]), 2 with one line on stderr
/// (`fsim-sort: <error>`) otherwise.
pub fn run(name: &str, body: impl FnOnce() -> Result<()>) -> ExitCode {
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e @ Error::NeedsAll(_)) => {
            stderr_line(format_args!("{name}: {e}"));
            ExitCode::from(NEEDS_ALL)
        }
        Err(e) => {
            stderr_line(format_args!("{name}: {e}"));
            ExitCode::from(2)
        }
    }
}

/// Parse a byte size such as `128M`, `1G`, `64k` or `4096` (powers of 1024).
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (t, 1u64),
        Some((i, _)) => {
            let unit = t[i..].trim_end_matches(['b', 'B', 'i']);
            let m = match unit.to_ascii_lowercase().as_str() {
                "" => 1,
                "k" => 1 << 10,
                "m" => 1 << 20,
                "g" => 1 << 30,
                "t" => 1 << 40,
                _ => {
                    return Err(format!(
                    "invalid size {s:?}: expected a number with an optional K, M, G or T suffix"
                ))
                }
            };
            (&t[..i], m)
        }
    };
    let n: u64 = num.parse().map_err(|_| {
        format!("invalid size {s:?}: expected a number with an optional K, M, G or T suffix")
    })?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} is too large"))
}

/// A size limit: a byte size as [`parse_size`] reads it, or `any` (no
/// limit, `None`).
pub fn parse_size_limit(s: &str) -> std::result::Result<SizeLimit, String> {
    if s.trim() == "any" {
        return Ok(SizeLimit(None));
    }
    parse_size(s)
        .map(|n| SizeLimit(Some(n)))
        .map_err(|e| format!("{e}, or any"))
}

/// What [`parse_size_limit`] reads: `None` for `any`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimit(pub Option<u64>);

impl std::fmt::Display for SizeLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n}"),
            None => f.write_str("any"),
        }
    }
}

/// Check that a `--min-percent` style option is within 0..=100.
/// `n` bytes in binary units for people: the value and its unit (`B`,
/// `KiB` ... `TiB`); `B` only below 1024. The report and fsim-binpack's plan
/// print it with their own precision.
pub fn byte_units(n: u64) -> (f64, &'static str) {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    (v, UNITS[u])
}

pub fn parse_percent(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("invalid percentage {s:?}"))?;
    if (0.0..=100.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("percentage {s:?} is outside 0..100"))
    }
}

/// Reject impossible combinations early with one clear message.
pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<()> {
    if cond {
        Ok(())
    } else {
        Err(Error::Msg(msg()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("128M"), Ok(128 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("").is_err());
    }
}
