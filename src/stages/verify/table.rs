//! The file table as fsim-verify holds it: only the entries of the files
//! its pairs name, when the pairs can be read twice.
//!
//! Why: the table has an entry for every file of the repository, ~245
//! bytes each as a `FileEntry` with its path and the plan's per-file
//! counters (2.3 GiB at 10^7 files, where `--memory` bounds the cache at
//! 256M), but the pairs name a small share of them (the files that have
//! something in common with another). A first reading of the pairs marks
//! their ids in a paged bitmap ([`IdSet`]), the table is then
//! read keeping only those, and each pair's ids are renumbered into that
//! list as it is read: the workers, the plan and the cache index the list,
//! and the outputs write the ids back, so they are byte-identical to a run
//! that holds every entry.
//!
//! The whole table is held when the pairs come from standard input or a
//! pipe (they cannot be read twice) and with `--previous`, whose mapping
//! of the earlier run's files to this run's compares every path.

use super::{parse_pair, PairIn};
use crate::error::Result;
use crate::formats::files::scan_file_table;
use crate::formats::{open_input, FileEntry, LineReader, Params};
use std::path::Path;

/// The entries held and the ids they stand for.
pub(super) struct Table {
    /// The entries held, in id order. A pair's `a` and `b`, once
    /// renumbered by [`Table::local`], index it.
    pub(super) entries: Vec<FileEntry>,
    /// The file id of each entry when only some are held (ascending);
    /// `None`: every entry, entry `i` being file `i`.
    ids: Option<Vec<u32>>,
}

impl Table {
    /// Read the file table at `path`: the entries of the ids in `wanted`,
    /// or all of them when it is `None`.
    pub(super) fn read(path: &Path, wanted: Option<IdSet>) -> Result<(Table, Params)> {
        let mut entries = Vec::new();
        let params = match &wanted {
            None => scan_file_table(path, &mut |e| entries.push(e))?,
            Some(set) => scan_file_table(path, &mut |e| {
                if set.contains(e.id) {
                    entries.push(e)
                }
            })?,
        };
        entries.shrink_to_fit();
        let ids = wanted.map(|_| entries.iter().map(|e| e.id).collect());
        Ok((Table { entries, ids }, params))
    }

    /// The entry of file `id`, if the table has it.
    pub(super) fn get(&self, id: u32) -> Option<&FileEntry> {
        self.local(id).map(|i| &self.entries[i as usize])
    }

    /// The index among the entries held of file `id`.
    pub(super) fn local(&self, id: u32) -> Option<u32> {
        match &self.ids {
            None => ((id as usize) < self.entries.len()).then_some(id),
            Some(ids) => ids.binary_search(&id).ok().map(|i| i as u32),
        }
    }

    /// The file id of entry `local`.
    pub(super) fn id(&self, local: u32) -> u32 {
        match &self.ids {
            None => local,
            Some(ids) => ids[local as usize],
        }
    }

    /// Pair `p` with its files' indexes among the entries held (both are
    /// held: the caller checked them).
    pub(super) fn to_local(&self, p: PairIn) -> PairIn {
        match &self.ids {
            None => p,
            Some(_) => PairIn {
                a: self.local(p.a).expect("a checked pair"),
                b: self.local(p.b).expect("a checked pair"),
                ..p
            },
        }
    }
}

/// Ids of files, one bit each, in pages of [`PAGE_IDS`] ids allocated as
/// an id in them is first met: a table's ids are dense (~1.2 MiB at 10^7
/// files), and a hostile pairs file naming an id near 2^32 costs one page
/// and the page list (512 KiB), not a 512 MiB bitmap up to it.
#[derive(Default)]
pub(super) struct IdSet {
    pages: Vec<Option<Box<[u64]>>>,
}

/// Ids a page holds (8 KiB of bits).
const PAGE_IDS: usize = 1 << 16;

impl IdSet {
    pub(super) fn insert(&mut self, id: u32) {
        let (page, bit) = (id as usize / PAGE_IDS, id as usize % PAGE_IDS);
        if page >= self.pages.len() {
            self.pages.resize(page + 1, None);
        }
        let words = self.pages[page].get_or_insert_with(|| vec![0; PAGE_IDS / 64].into());
        words[bit / 64] |= 1 << (bit % 64);
    }

    pub(super) fn contains(&self, id: u32) -> bool {
        let (page, bit) = (id as usize / PAGE_IDS, id as usize % PAGE_IDS);
        match self.pages.get(page) {
            Some(Some(words)) => words[bit / 64] & (1 << (bit % 64)) != 0,
            _ => false,
        }
    }

    /// Bytes held: the page list and the pages.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        let held = self.pages.iter().flatten().count();
        self.pages.capacity() * 8 + held * PAGE_IDS / 8
    }
}

/// The ids the pairs at `path` name, from a first reading of them; `None`
/// when they cannot be read twice (standard input, a pipe) or do not
/// parse: the whole table is then held, and the real reading says what is
/// wrong with them.
pub(super) fn ids_of_pairs(path: &Path) -> Option<IdSet> {
    if path.as_os_str() == "-" || !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let (input, name) = open_input(path).ok()?;
    let mut r = LineReader::new(input, name);
    let mut set = IdSet::default();
    while let Some(raw) = r.next_raw().ok()? {
        if raw.first() == Some(&b'#') {
            continue;
        }
        let p = parse_pair(raw)?;
        set.insert(p.a);
        set.insert(p.b);
    }
    Some(set)
}
