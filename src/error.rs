//! One error type for every stage, so each binary prints one line with its
//! context and picks its exit code in one place (`cli::run`).

use std::fmt;
use std::io;

/// An error with enough context to act on: what was being done, to which
/// file, and at which line when it was an input record.
#[derive(Debug)]
pub enum Error {
    /// An I/O failure, with what fsim was doing at the time.
    Io { context: String, source: io::Error },
    /// Bad input: file name (or `-`), 1-based line number, what was expected.
    Input {
        file: String,
        line: u64,
        msg: String,
    },
    /// Anything else (bad option, inconsistent inputs...).
    Msg(String),
    /// A re-run's stage given the changed chunks' records alone that must
    /// see every record (why): exit code 3, on which `make` runs the
    /// stages again from all records.
    NeedsAll(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn msg(m: impl Into<String>) -> Self {
        Error::Msg(m.into())
    }

    pub fn input(file: impl Into<String>, line: u64, msg: impl Into<String>) -> Self {
        Error::Input {
            file: file.into(),
            line,
            msg: msg.into(),
        }
    }

    /// True when the root cause is a closed pipe (`fsim-chunk DIR | head`):
    /// that is normal use, not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::Input { file, line, msg } => write!(f, "{file}:{line}: {msg}"),
            Error::Msg(m) | Error::NeedsAll(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// Attach context to an `io::Result`.
pub trait Context<T> {
    fn ctx<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T>;
}

impl<T> Context<T> for io::Result<T> {
    fn ctx<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|source| Error::Io {
            context: context().into(),
            source,
        })
    }
}
