//! What the figures of the reported pairs count beyond the credits: the
//! files by relative path, as `diff -r A B` gives them.
//!
//! **Counts.** For a pair (A, B), each relative path under A or B (a file
//! `A/p` is at path `p`) is one of: `same` (a file at `p` under both, the
//! two identical: same size and content), `changed` (a file at `p` under
//! both, other contents), only in A, only in B. Empty files count as any
//! file. So `same + changed + only_a` is A's files, `same + changed +
//! only_b` is B's, and a pair of identical files counts once. A file moved
//! to another path counts only in A and only in B (its bytes still count
//! in "A in B", which is by content wherever it is).
//!
//! **Work.** Each reported pair's files, as (pair, hash of the relative
//! path, side, file), are sorted within the report's budget (in a buffer
//! when they fit it, which the child pairs of every top reuse, else
//! through the external sorter): O(files of the reported pairs) records,
//! read back path by path.

use super::table::{contains, Dir};
use super::{FolderPair, Folders, PairFiles, DETAILED, LISTED};
use crate::error::Result;
use crate::formats::files::CompactTable;
use crate::io::sorter::{ExternalSorter, FixedRecord};
use xxhash_rust::xxh3::xxh3_64;

/// A file of a reported pair at its relative path: sorted by pair, then
/// path (its hash), the files at one path under both folders come
/// together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct AtPath {
    k: u32,
    rel: u64,
    /// 0 under A, 1 under B.
    side: u8,
    file: u32,
}

impl FixedRecord for AtPath {
    const SIZE: usize = 17;
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.k.to_be_bytes());
        out[4..12].copy_from_slice(&self.rel.to_be_bytes());
        out[12] = self.side;
        out[13..17].copy_from_slice(&self.file.to_be_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        AtPath {
            k: u32_at(0),
            rel: u64::from_be_bytes(b[4..12].try_into().expect("8 bytes")),
            side: b[12],
            file: u32_at(13),
        }
    }
}

/// A buffer of [`AtPath`] records, reused by [`Folders::count_paths_in`].
#[derive(Debug, Default)]
pub(super) struct PathRecords(Vec<AtPath>);

/// The path of `file` under folder `dir`.
fn rel_path<'t>(table: &'t CompactTable, dir: &Dir, file: u32) -> &'t [u8] {
    let p = table.path(file);
    p.get(dir.path_len() + 1..).unwrap_or(p)
}

/// Push `x` to a list kept to its [`LISTED`] least (sorted by [`finish`]).
fn keep<T: Ord>(list: &mut Vec<T>, x: T) {
    list.push(x);
    if list.len() >= 2 * LISTED {
        finish(list);
    }
}

fn finish<T: Ord>(list: &mut Vec<T>) {
    list.sort_unstable();
    list.truncate(LISTED);
}

impl Folders<'_> {
    /// The counts of `pairs` by relative path (module doc), and the file
    /// lists of the first [`DETAILED`].
    pub(super) fn count_paths(&self, pairs: &mut [FolderPair]) -> Result<()> {
        self.count_paths_in(pairs, &mut PathRecords::default())
    }

    /// [`Folders::count_paths`] with `buf`, which a caller counting many
    /// small sets of pairs (each top's child pairs) reuses: the records
    /// are sorted there when they fit the sorter's budget, else through the
    /// external sorter.
    pub(super) fn count_paths_in(
        &self,
        pairs: &mut [FolderPair],
        buf: &mut PathRecords,
    ) -> Result<()> {
        let dirs = &self.shape.dirs;
        let records: u64 = pairs
            .iter()
            .map(|p| dirs[p.da as usize].files + dirs[p.db as usize].files)
            .sum();
        for (k, p) in pairs.iter_mut().enumerate() {
            (p.same, p.changed, p.only_a, p.only_b) = (0, 0, 0, 0);
            p.files = (k < DETAILED).then(|| {
                Box::new(PairFiles {
                    only_listed: true,
                    ..PairFiles::default()
                })
            });
        }
        if records * std::mem::size_of::<AtPath>() as u64 <= self.sort.memory {
            let v = &mut buf.0;
            v.clear();
            self.path_records(pairs, |r| {
                v.push(r);
                Ok(())
            })?;
            v.sort_unstable();
            self.count_sorted(v.iter().map(|&r| Ok(Some(r))), pairs)?;
        } else {
            let mut sorter = ExternalSorter::new(self.sort.clone());
            self.path_records(pairs, |r| sorter.push(r))?;
            let mut sorted = sorter.finish()?;
            self.count_sorted(std::iter::repeat_with(|| sorted.next_item()), pairs)?;
        }
        for p in pairs.iter_mut() {
            if let Some(f) = p.files.as_deref_mut() {
                (f.same_count, f.changed_count) = (p.same, p.changed);
                finish(&mut f.same);
                finish(&mut f.changed);
                finish(&mut f.only_a);
                finish(&mut f.only_b);
            }
        }
        Ok(())
    }

    /// Each file of each of `pairs` at its relative path, to `out`.
    fn path_records(
        &self,
        pairs: &[FolderPair],
        mut out: impl FnMut(AtPath) -> Result<()>,
    ) -> Result<()> {
        let (table, dirs, dir_of) = (self.shape.table, &self.shape.dirs, &self.shape.dir_of);
        for (k, p) in pairs.iter().enumerate() {
            for (side, d) in [p.da, p.db].into_iter().enumerate() {
                let dir = &dirs[d as usize];
                if dir.files == 0 {
                    continue;
                }
                for file in dir.first..=dir.last {
                    if contains(dirs, d, dir_of[file as usize]) {
                        out(AtPath {
                            k: k as u32,
                            rel: xxh3_64(rel_path(table, dir, file)),
                            side: side as u8,
                            file,
                        })?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Count `pairs` from their records in order (`Ok(None)` ends them).
    fn count_sorted(
        &self,
        sorted: impl Iterator<Item = Result<Option<AtPath>>>,
        pairs: &mut [FolderPair],
    ) -> Result<()> {
        let mut group: Vec<AtPath> = Vec::new();
        for r in sorted {
            let Some(r) = r? else { break };
            if group.last().is_some_and(|l| (l.k, l.rel) != (r.k, r.rel)) {
                self.at_path(&group, pairs);
                group.clear();
            }
            group.push(r);
        }
        self.at_path(&group, pairs);
        Ok(())
    }

    /// Count the files of one pair at one relative path (its hash: files
    /// whose paths differ are told apart here).
    fn at_path(&self, group: &[AtPath], pairs: &mut [FolderPair]) {
        let Some(first) = group.first() else { return };
        let table = self.shape.table;
        let p = &mut pairs[first.k as usize];
        let (da, db) = (
            &self.shape.dirs[p.da as usize],
            &self.shape.dirs[p.db as usize],
        );
        let (a_side, b_side) = group.split_at(group.partition_point(|r| r.side == 0));
        let mut matched = vec![false; b_side.len()];
        for a in a_side {
            let at = b_side.iter().enumerate().position(|(i, b)| {
                !matched[i] && rel_path(table, da, a.file) == rel_path(table, db, b.file)
            });
            let Some(i) = at else {
                p.only_a += 1;
                if let Some(f) = p.files.as_deref_mut() {
                    keep(&mut f.only_a, a.file);
                }
                continue;
            };
            matched[i] = true;
            let (x, y) = (a.file, b_side[i].file);
            let identical = table.size(x) == table.size(y) && table.content(x) == table.content(y);
            if identical {
                p.same += 1;
            } else {
                p.changed += 1;
            }
            if let Some(f) = p.files.as_deref_mut() {
                if identical {
                    keep(&mut f.same, (x, y));
                } else {
                    keep(&mut f.changed, (x, y, None));
                }
            }
        }
        for (b, _) in b_side.iter().zip(matched).filter(|(_, m)| !m) {
            p.only_b += 1;
            if let Some(f) = p.files.as_deref_mut() {
                keep(&mut f.only_b, b.file);
            }
        }
    }
}
