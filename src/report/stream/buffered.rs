//! The reports' output: a file written through a 1 MiB buffer, so that
//! every format writes large pieces, whatever the size of what it pushes.

use crate::error::Result;
use crate::io::Output;

/// An output written through a 1 MiB buffer.
pub(crate) struct Buffered {
    out: Output,
    buf: String,
}

impl Buffered {
    pub(crate) fn create(path: Option<&std::path::Path>) -> Result<Buffered> {
        Ok(Buffered {
            out: Output::create(path)?,
            buf: String::new(),
        })
    }

    pub(crate) fn push(&mut self, s: &str) -> Result<()> {
        if s.len() >= 1 << 20 {
            // Written as it is: a large piece never doubles the buffer.
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
            return self.out.write_all(s.as_bytes());
        }
        self.buf.push_str(s);
        if self.buf.len() >= 1 << 20 {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Bytes that need not be UTF-8 (a path as it is on disk).
    pub(crate) fn push_bytes(&mut self, b: &[u8]) -> Result<()> {
        self.out.write_all(self.buf.as_bytes())?;
        self.buf.clear();
        self.out.write_all(b)
    }

    pub(crate) fn finish(mut self) -> Result<()> {
        self.out.write_all(self.buf.as_bytes())?;
        self.out.finish()
    }
}
