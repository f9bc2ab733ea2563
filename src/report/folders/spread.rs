//! The identical sets in more than [`super::SET_FOLDERS`] folders, by folder:
//! what they add to the figures of a pair that other files proposed,
//! before the threshold.
//!
//! Such a set (a licence in every project) proposes no pairs: its pairs
//! would grow with the square of its folders. A pair (A, B) that other
//! files propose counts its files under A in "A in B" and those under B
//! in "B in A" when both folders hold some of them, as it counts a file
//! whose partner is in the other folder; a pair that no other file
//! proposes (two projects that share the licence alone) is not figured.
//!
//! **Work.** For each folder, the sets with files under it (at any depth)
//! and how many, sorted by set: O(the sets' files × depth) to build, one
//! entry (8 bytes) a set and folder holding it, counted in what the folder
//! pairs hold. A pair's bytes are the two folders' lists intersected, the
//! shorter looked up in the longer.

use super::credits::Up;
use super::table::ROOT;
use super::SetRef;
use crate::formats::files::CompactTable;

/// The spread sets' files by folder.
#[derive(Debug, Default)]
pub(super) struct Spread {
    /// Where each folder's entries start in `entries`, and the end last.
    starts: Vec<usize>,
    /// (spread set, its files under the folder), by set within a folder.
    entries: Vec<(u32, u32)>,
    /// Each spread set's files' size.
    sizes: Vec<u64>,
}

impl Spread {
    /// The index of `spread` (sets of `sets` in more than [`super::SET_FOLDERS`]
    /// folders) over the folders of `up`; empty files and files outside
    /// every folder count in none.
    pub(super) fn new(
        table: &CompactTable,
        up: &[Up],
        dir_of: &[u32],
        sets: &[SetRef<'_>],
        spread: &[u32],
    ) -> Spread {
        if spread.is_empty() {
            return Spread::default();
        }
        let files = |k: usize| {
            sets[spread[k] as usize]
                .files
                .iter()
                .filter(|&&f| table.size(f) > 0)
                .map(|&f| dir_of[f as usize])
                .filter(|&d| d != ROOT)
        };
        // Entries a folder: a set counts once under each folder holding
        // some of its files (a climb stops at a folder it marked).
        let mut mark = vec![u32::MAX; up.len()];
        let mut starts = vec![0usize; up.len() + 1];
        for k in 0..spread.len() {
            for mut d in files(k) {
                while d != ROOT && mark[d as usize] != k as u32 {
                    mark[d as usize] = k as u32;
                    starts[d as usize] += 1;
                    d = up[d as usize].parent;
                }
            }
        }
        let mut total = 0;
        for s in &mut starts {
            (*s, total) = (total, total + *s);
        }
        // Each folder's entries in set order: a folder's last entry is the
        // set being filled when it is marked with it.
        let mut next = starts.clone();
        let mut entries = vec![(0u32, 0u32); total];
        mark.fill(u32::MAX);
        for k in 0..spread.len() {
            for mut d in files(k) {
                while d != ROOT {
                    let at = &mut next[d as usize];
                    if mark[d as usize] != k as u32 {
                        mark[d as usize] = k as u32;
                        entries[*at] = (k as u32, 0);
                        *at += 1;
                    }
                    entries[*at - 1].1 += 1;
                    d = up[d as usize].parent;
                }
            }
        }
        Spread {
            starts,
            entries,
            sizes: spread.iter().map(|&s| sets[s as usize].size).collect(),
        }
    }

    /// The bytes it holds.
    pub(super) fn bytes(&self) -> u64 {
        (self.starts.capacity() * 8 + self.entries.capacity() * 8 + self.sizes.capacity() * 8)
            as u64
    }

    /// Folder `d`'s entries.
    fn of(&self, d: u32) -> &[(u32, u32)] {
        match (self.starts.get(d as usize), self.starts.get(d as usize + 1)) {
            (Some(&at), Some(&end)) => &self.entries[at..end],
            _ => &[],
        }
    }

    /// What the spread sets add to pair (`da`, `db`): (bytes of their
    /// files under `da`, under `db`), of the sets under both.
    pub(super) fn pair(&self, da: u32, db: u32) -> (u64, u64) {
        let (x, y) = (self.of(da), self.of(db));
        let swap = x.len() > y.len();
        let (short, long) = if swap { (y, x) } else { (x, y) };
        let (mut here, mut there) = (0u64, 0u64);
        let mut from = 0;
        for &(k, n) in short {
            if from >= long.len() {
                break;
            }
            match long[from..].binary_search_by_key(&k, |e| e.0) {
                Ok(i) => {
                    let size = self.sizes[k as usize];
                    here += u64::from(n) * size;
                    there += u64::from(long[from + i].1) * size;
                    from += i + 1;
                }
                Err(i) => from += i,
            }
        }
        if swap {
            (there, here)
        } else {
            (here, there)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_counts_the_sets_under_both_folders() {
        // Folders 0..4, two sets of 10 and 100 bytes.
        let s = Spread {
            starts: vec![0, 2, 4, 5, 6],
            entries: vec![(0, 3), (1, 2), (0, 2), (1, 2), (0, 1), (1, 2)],
            sizes: vec![10, 100],
        };
        assert_eq!(s.pair(1, 2), (20, 10));
        assert_eq!(s.pair(2, 1), (10, 20));
        assert_eq!(s.pair(2, 3), (0, 0));
        assert_eq!(s.pair(1, 3), (200, 200));
        assert_eq!(s.pair(9, 1), (0, 0));
    }
}
