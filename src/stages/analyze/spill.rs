//! The out-of-core path: bins too large for the capacity are never loaded;
//! every pair of files of a chunk group becomes a record of the external
//! sort, and the sorted records are summed per pair.

use super::groups::{Entry, GroupSink};
use crate::error::Result;
use crate::stages::sort::{ExternalSorter, PairRecord, SortOptions};
use std::path::PathBuf;

/// Emits a (a, b, bytes) record for every pair of files in each chunk group
/// into the shared external sorter ([`crate::stages::sort::ExternalSorter`]), which
/// keeps half the bin capacity in memory and spills sorted runs to disk.
pub(super) struct Spiller {
    sorter: ExternalSorter<PairRecord>,
    pub(super) emitted: u64,
}

impl GroupSink for Spiller {
    fn group(&mut self, len: u32, entries: &[Entry]) -> Result<()> {
        for (i, x) in entries.iter().enumerate() {
            for y in &entries[i + 1..] {
                self.sorter.push(PairRecord {
                    a: x.idx,
                    b: y.idx,
                    bytes: x.occ.min(y.occ) as u64 * len as u64,
                })?;
            }
        }
        self.emitted += (entries.len() * (entries.len() - 1) / 2) as u64;
        Ok(())
    }
}

impl Spiller {
    pub(super) fn new(capacity: u64, tmpdir: Option<PathBuf>) -> Spiller {
        let mut opts = SortOptions::with_memory(capacity / 2);
        opts.tmpdir = tmpdir;
        Spiller {
            sorter: ExternalSorter::new(opts),
            emitted: 0,
        }
    }

    /// Sort everything and call `f(key, bytes, shared)` once per pair, in
    /// key order.
    pub(super) fn finish(self, mut f: impl FnMut(u64, u64, u32)) -> Result<()> {
        let mut agg = Aggregate::default();
        for r in self.sorter.finish()? {
            let r = r?;
            agg.add(((r.a as u64) << 32) | r.b as u64, r.bytes, &mut f);
        }
        agg.end(&mut f);
        Ok(())
    }
}

/// Sums consecutive records of one key.
#[derive(Default)]
struct Aggregate {
    key: u64,
    bytes: u64,
    shared: u32,
}

impl Aggregate {
    #[inline]
    fn add(&mut self, k: u64, v: u64, f: &mut impl FnMut(u64, u64, u32)) {
        if self.shared > 0 && k != self.key {
            f(self.key, self.bytes, self.shared);
            self.shared = 0;
            self.bytes = 0;
        }
        self.key = k;
        self.bytes += v;
        self.shared += 1;
    }

    fn end(&mut self, f: &mut impl FnMut(u64, u64, u32)) {
        if self.shared > 0 {
            f(self.key, self.bytes, self.shared);
            self.shared = 0;
        }
    }
}
