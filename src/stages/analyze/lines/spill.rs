//! The contents' lines of a line source over its memory, kept on disk.
//!
//! When the contents do not fit, they are joined in groups, and each
//! group is compared with every content after it (the module doc of
//! [`super`]). Reading those contents' files again for each group cost
//! about G/2 reads of the whole selection with G groups: on 300,000
//! generated 10 KB texts with `--capacity 205M`, 14 groups, 42 GB read
//! and 400 CPU-s for a 3 GB tree. The count, which reads every content
//! once before the groups are cut, writes each content's lines here as it
//! goes (16 bytes per distinct line, 12 per content: what the line source
//! holds of them, a fraction of the file), and every group takes its
//! contents and those after it from here, by offset. A file is then read
//! at most twice (the attempt in one set, and the count), and what is
//! compared is what was counted, even if the file changes meanwhile.
//!
//! The file is a temporary one in the analysis's `--tmpdir` (the work
//! folder with make), unlinked from the start, so it goes with the
//! process however it ends.

use super::read::Lines;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes written per content before its lines: its size and line count.
const HEAD: usize = 12;
/// Bytes written per distinct line: hash, length, occurrences.
const LINE: usize = 16;

/// The lines being written, one content after the other.
pub(super) struct SpillWriter {
    out: BufWriter<File>,
    at: u64,
}

/// Where a content's lines are in the spill file.
pub(super) type Offset = u64;

impl SpillWriter {
    /// A new, unlinked file in `dir` (the system's temporary folder
    /// without one).
    pub fn create(dir: Option<&Path>) -> Result<SpillWriter> {
        let file = match dir {
            Some(d) => tempfile::tempfile_in(d),
            None => tempfile::tempfile(),
        }
        .map_err(|e| {
            Error::msg(format!(
                "{}: the line source's spill file: {e}",
                where_(dir)
            ))
        })?;
        Ok(SpillWriter {
            out: BufWriter::with_capacity(1 << 20, file),
            at: 0,
        })
    }

    /// Append one content's lines; where they start.
    pub fn push(&mut self, lines: &Lines) -> Result<Offset> {
        let at = self.at;
        let n = u32::try_from(lines.lines.len())
            .map_err(|_| Error::msg("the line source: a file of over 2^32 distinct lines"))?;
        let mut head = [0u8; HEAD];
        head[..8].copy_from_slice(&lines.size.to_le_bytes());
        head[8..].copy_from_slice(&n.to_le_bytes());
        self.write(&head)?;
        for &(hash, len, count) in &lines.lines {
            let mut rec = [0u8; LINE];
            rec[..8].copy_from_slice(&hash.to_le_bytes());
            rec[8..12].copy_from_slice(&len.to_le_bytes());
            rec[12..].copy_from_slice(&count.to_le_bytes());
            self.write(&rec)?;
        }
        Ok(at)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::msg(format!("writing the line source's spill file: {e}")))?;
        self.at += bytes.len() as u64;
        Ok(())
    }

    /// Everything written, ready to be read back.
    pub fn finish(self) -> Result<Spilled> {
        let file = self
            .out
            .into_inner()
            .map_err(|e| Error::msg(format!("writing the line source's spill file: {e}")))?;
        Ok(Spilled { file, len: self.at })
    }

    /// Bytes written so far.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.at
    }
}

fn where_(dir: Option<&Path>) -> String {
    dir.map_or_else(
        || "the temporary folder".into(),
        |d| d.display().to_string(),
    )
}

/// The spill file once written: each content's lines by their offset,
/// read by any number of threads at once (positioned reads).
pub(super) struct Spilled {
    file: File,
    len: u64,
}

impl Spilled {
    /// The lines written at `at` (by [`SpillWriter::push`]), into `buf`'s
    /// bytes and a new list.
    pub fn read(&self, at: Offset, buf: &mut Vec<u8>) -> Result<Lines> {
        let mut head = [0u8; HEAD];
        self.read_at(&mut head, at)?;
        let size = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let n = u32::from_le_bytes(head[8..].try_into().expect("4 bytes")) as usize;
        buf.resize(n * LINE, 0);
        self.read_at(buf, at + HEAD as u64)?;
        let lines = buf
            .chunks_exact(LINE)
            .map(|r| {
                (
                    u64::from_le_bytes(r[..8].try_into().expect("8 bytes")),
                    u32::from_le_bytes(r[8..12].try_into().expect("4 bytes")),
                    u32::from_le_bytes(r[12..].try_into().expect("4 bytes")),
                )
            })
            .collect();
        Ok(Lines { size, lines })
    }

    fn read_at(&self, buf: &mut [u8], at: u64) -> Result<()> {
        if at + buf.len() as u64 > self.len {
            return Err(Error::msg(format!(
                "internal error: the line source's spill file read at {at} past its {} bytes",
                self.len
            )));
        }
        self.file
            .read_exact_at(buf, at)
            .map_err(|e| Error::msg(format!("reading the line source's spill file: {e}")))
    }
}

/// Which lines are held by two contents or more, as the count adds each
/// content's distinct lines: a line seen before sets its bit in `twice`.
/// A line held by one content only adds nothing to any pair's overlap, so
/// leaving it out changes no pair (a content keeps its whole size, as a
/// re-run's [`super::Filter`] does); on generated or prose texts most
/// lines are such, and most of what the groups would hold and read.
///
/// Exact one way: a line of two contents found its bit in `once` the
/// second time, so [`Twice::shared`] says yes for it. A line of one
/// content may find another line's bit there and be kept (a false
/// positive, about `lines / bits` of them): kept for nothing, never lost.
pub(super) struct Twice {
    once: Vec<u64>,
    twice: Vec<u64>,
    mask: u64,
}

impl Twice {
    /// Two bit sets in at most `bytes` (at least 16 KiB), a power of two
    /// bits each.
    pub fn new(bytes: u64) -> Twice {
        let most = bytes.max(16 << 10) * 4;
        let bits = 1u64 << (63 - most.leading_zeros());
        let words = (bits / 64) as usize;
        Twice {
            once: vec![0; words],
            twice: vec![0; words],
            mask: bits - 1,
        }
    }

    /// What it holds.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        (self.once.len() + self.twice.len()) as u64 * 8
    }

    #[inline]
    fn at(&self, h: u64) -> (usize, u64) {
        let bit = h & self.mask;
        ((bit / 64) as usize, 1 << (bit % 64))
    }

    /// One content's distinct lines.
    pub fn add(&mut self, lines: &[(u64, u32, u32)]) {
        for &(h, ..) in lines {
            let (w, b) = self.at(h);
            if self.once[w] & b != 0 {
                self.twice[w] |= b;
            } else {
                self.once[w] |= b;
            }
        }
    }

    /// Whether the line of hash `h` may be held by two contents or more
    /// (all those added: only after the last).
    #[inline]
    pub fn shared(&self, h: u64) -> bool {
        let (w, b) = self.at(h);
        self.twice[w] & b != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_of_two_contents_is_shared_and_most_single_ones_are_not() {
        let mut t = Twice::new(1 << 20);
        assert!(
            t.bytes() <= 1 << 20 && t.bytes() >= 1 << 19,
            "{}",
            t.bytes()
        );
        let line = |h: u64| (h.wrapping_mul(0x9e37_79b9_7f4a_7c15), 10, 1);
        // 1,000 contents of 20 lines of their own and 2 shared by all.
        for c in 0..1000u64 {
            let mut lines: Vec<_> = (0..20).map(|i| line(1_000_000 + c * 20 + i)).collect();
            lines.push(line(1));
            lines.push(line(2));
            t.add(&lines);
        }
        assert!(t.shared(line(1).0) && t.shared(line(2).0));
        let kept = (0..20_000u64)
            .filter(|&i| t.shared(line(1_000_000 + i).0))
            .count();
        // 20,002 lines in 4 Mi bits: a few hundred false positives at most.
        assert!(kept < 500, "{kept}");
        // A line added once more, by a last content, is shared from then.
        let late = line(1_000_000 + 7);
        t.add(&[late]);
        assert!(t.shared(late.0));
    }

    #[test]
    fn lines_come_back_as_written_by_offset_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SpillWriter::create(Some(dir.path())).unwrap();
        let a = Lines {
            size: 40,
            lines: vec![(1, 10, 2), (u64::MAX, 20, 1)],
        };
        let empty = Lines {
            size: 0,
            lines: vec![],
        };
        let b = Lines {
            size: 7,
            lines: vec![(42, 7, u32::MAX)],
        };
        let offsets: Vec<Offset> = [&a, &empty, &b]
            .iter()
            .map(|l| w.push(l).unwrap())
            .collect();
        assert_eq!(w.bytes(), (3 * HEAD + 3 * LINE) as u64);
        let s = w.finish().unwrap();
        let mut buf = Vec::new();
        assert_eq!(s.read(offsets[2], &mut buf).unwrap(), b);
        assert_eq!(s.read(offsets[0], &mut buf).unwrap(), a);
        assert_eq!(s.read(offsets[1], &mut buf).unwrap(), empty);
        // Unlinked from the start: nothing left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let past = s.read(s.len, &mut buf).unwrap_err().to_string();
        assert!(past.contains("past its"), "{past}");
    }
}
