//! Reading and writing chunk record text fast: [`FastLines`] reads whole
//! blocks and hands out lines with their numbers ([`At`] makes the
//! `FILE:LINE` errors), [`LineSink`] gathers formatted lines for an output.

use crate::error::{Error, Result};
use crate::io::Output;
use crate::stages::sort::keys::{format_chunk_line, ChunkKey};
use std::io::Read;

/// Collects formatted lines and hands them to an [`Output`] in large
/// blocks, so the per-line cost is a copy of 55 bytes.
pub struct LineSink {
    buf: Vec<u8>,
}

impl LineSink {
    const FLUSH_AT: usize = 1 << 20;

    pub fn new() -> Self {
        LineSink {
            buf: Vec::with_capacity(Self::FLUSH_AT + 4096),
        }
    }

    #[inline]
    pub fn chunk(&mut self, k: &ChunkKey, out: &mut Output) -> Result<()> {
        let mut line = [0u8; 64];
        let n = format_chunk_line(k, &mut line);
        self.raw(&line[..n], out)
    }

    #[inline]
    pub fn raw(&mut self, bytes: &[u8], out: &mut Output) -> Result<()> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= Self::FLUSH_AT {
            out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    pub fn flush(&mut self, out: &mut Output) -> Result<()> {
        out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl Default for LineSink {
    fn default() -> Self {
        Self::new()
    }
}

/// Reads lines from large blocks with `memchr`, without a copy or an
/// allocation per line, counting line numbers for error messages. A last
/// line without newline is an error (that is what a cut-off file looks like).
pub struct FastLines<R> {
    inner: R,
    name: String,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
    line: u64,
    last: usize,
    /// Input bytes up to the end of the line last returned.
    offset: u64,
}

impl<R: Read> FastLines<R> {
    pub fn new(inner: R, name: impl Into<String>) -> Self {
        FastLines {
            inner,
            name: name.into(),
            buf: vec![0; 1 << 20],
            start: 0,
            end: 0,
            eof: false,
            line: 0,
            last: 0,
            offset: 0,
        }
    }

    /// Continue numbering from a resume point: `inner` was positioned at
    /// byte `offset`, just after line `line`.
    pub fn starting_at(mut self, line: u64, offset: u64) -> Self {
        self.line = line;
        self.offset = offset;
        self
    }

    /// Input bytes up to the end of the line last returned (its newline
    /// included).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of the line last returned (1-based).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// An input error at the current line.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::input(self.name.clone(), self.line, msg)
    }

    /// Next line without its newline.
    #[inline]
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        loop {
            if let Some(p) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let s = self.start;
                self.last = s;
                self.start += p + 1;
                self.line += 1;
                self.offset += p as u64 + 1;
                return Ok(Some(&self.buf[s..s + p]));
            }
            if self.eof {
                if self.start < self.end {
                    self.line += 1;
                    self.start = self.end;
                    return Err(self.error("last line has no newline: the file is truncated"));
                }
                return Ok(None);
            }
            self.fill()?;
        }
    }

    /// Next line with its position, for callers that need to make an error
    /// while still holding the line.
    #[inline]
    pub fn next_line_at(&mut self) -> Result<Option<(&[u8], At<'_>)>> {
        match self.next_line()? {
            None => Ok(None),
            Some(_) => {
                // Re-borrow immutably: the line is `last..start - 1`.
                Ok(Some((
                    &self.buf[self.last..self.start - 1],
                    At {
                        name: &self.name,
                        line: self.line,
                    },
                )))
            }
        }
    }

    #[cold]
    fn fill(&mut self) -> Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let n = self.buf.len();
            self.buf.resize(n * 2, 0); // a line longer than the buffer
        }
        let n = loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::Io {
                        context: format!("reading {} after line {}", self.name, self.line),
                        source: e,
                    })
                }
            }
        };
        if n == 0 {
            self.eof = true;
        }
        self.end += n;
        Ok(())
    }
}

/// A line's position, for error messages.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    pub name: &'a str,
    pub line: u64,
}

impl At<'_> {
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::input(self.name, self.line, msg)
    }
}

// ---------------------------------------------------------------------------
// fsim-sort
// ---------------------------------------------------------------------------
