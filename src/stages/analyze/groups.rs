//! Chunk groups: the records of one hash in a bin, with the distinct
//! representative files that hold it. Shared by both paths (in memory and
//! out of core) so they see exactly the same data.

use crate::error::Result;
use crate::formats::{self, ChunkRecord};

/// One (file or chunk index, occurrences) adjacency entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub idx: u32,
    pub occ: u32,
}

/// Receives each chunk group of a bin: its length and its distinct
/// representative files (local indices, ascending) with occurrence counts.
pub(super) trait GroupSink {
    fn group(&mut self, len: u32, entries: &[Entry]) -> Result<()>;
}

/// Collects the records of the current hash into a group.
pub(super) struct Grouper {
    hash: u128,
    len: u32,
    active: bool,
    entries: Vec<Entry>,
}

impl Grouper {
    pub(super) fn new() -> Self {
        Grouper {
            hash: 0,
            len: 0,
            active: false,
            entries: Vec::new(),
        }
    }

    /// Feed one record; `local` is None for the copy of another file (its
    /// records are skipped but still close the previous group).
    #[inline]
    pub(super) fn feed(
        &mut self,
        r: &ChunkRecord,
        local: Option<u32>,
        sink: &mut impl GroupSink,
    ) -> Result<std::result::Result<(), String>> {
        if !self.active || r.hash != self.hash {
            self.flush(sink)?;
            self.active = true;
            self.hash = r.hash;
            self.len = r.len;
        } else if r.len != self.len {
            return Ok(Err(format!(
                "chunk {} has two lengths, {} and {}: records of different chunkings are mixed",
                formats::hex128(r.hash),
                self.len,
                r.len
            )));
        }
        if let Some(l) = local {
            match self.entries.last_mut() {
                Some(e) if e.idx == l => e.occ += 1,
                _ => self.entries.push(Entry { idx: l, occ: 1 }),
            }
        }
        Ok(Ok(()))
    }

    pub(super) fn flush(&mut self, sink: &mut impl GroupSink) -> Result<()> {
        // A chunk in one file (after collapsing copies) links nothing.
        if self.entries.len() >= 2 {
            sink.group(self.len, &self.entries)?;
        }
        self.entries.clear();
        self.active = false;
        Ok(())
    }
}
