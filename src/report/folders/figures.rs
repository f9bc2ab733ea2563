//! A pass's figures: the sorted credits summed pair by pair, the pairs
//! at the threshold kept when no ancestor pair is, the others under a top
//! sorted as candidate child pairs; then which kept pairs are identical
//! trees and which explains each group.

use super::children::{top_of, Candidate};
use super::records::{Credit, Merged};
use super::table::{contains, Dir, ROOT};
use super::{FolderPair, Folders, TreeCopy};
use crate::error::Result;
use crate::formats::files::CompactTable;
use crate::io::sorter::ExternalSorter;
use std::collections::HashMap;

impl Folders<'_> {
    /// Sort the credits of a pass and figure their pairs into `kept` (the
    /// tops) and `candidates` (the pairs under them: the second pass).
    ///
    /// Held: the tops only. A folder's id is above its parent's (interned
    /// parent first), so the credits, sorted by (lower id, higher id),
    /// bring every ancestor pair of a pair before it: a pair at the
    /// threshold is kept when it is a top (no kept pair among its
    /// ancestors), else goes to `candidates` when its top is not identical
    /// ([`top_of`]; `Folders::list_children` chooses among them). The
    /// other sub-folder pairs of copied trees, which may be links × depth,
    /// are figured one at a time and dropped.
    pub(super) fn sweep(
        &mut self,
        min_percent: f64,
        kept: &mut HashMap<(u32, u32), FolderPair>,
        mut candidates: Option<&mut ExternalSorter<Candidate>>,
    ) -> Result<()> {
        self.flush()?;
        let mut streams = Vec::with_capacity(self.workers.len());
        for w in &mut self.workers {
            let mut credits = w.credits.take().expect("one sweep a pass");
            for c in w.combiner.drain() {
                credits.push(c)?;
            }
            streams.push(credits.finish()?);
        }
        let mut sorted = Merged::new(streams)?;
        let mut acc: Option<FolderPair> = None;
        let mut last: Option<Credit> = None;
        while let Some(c) = sorted.next_item()? {
            if let Some(l) = last.filter(|l| l.group() != c.group()) {
                self.credit(&mut acc, l);
            }
            if last.is_some_and(|l| l.pair != c.pair) {
                self.close(acc.take(), min_percent, kept, &mut candidates)?;
            }
            last = Some(c);
        }
        if let Some(l) = last {
            self.credit(&mut acc, l);
        }
        self.close(acc, min_percent, kept, &mut candidates)
    }

    /// Add credit `c`, the best of its file, to the figures of its pair.
    fn credit(&self, acc: &mut Option<FolderPair>, c: Credit) {
        let p = acc.get_or_insert_with(|| empty_pair(&self.shape.dirs, c.da(), c.db()));
        let bytes = c.bytes().min(self.shape.table.size(c.file()));
        if contains(
            &self.shape.dirs,
            c.da(),
            self.shape.dir_of[c.file() as usize],
        ) {
            p.a_in_b += bytes;
        } else {
            p.b_in_a += bytes;
        }
    }

    /// Keep pair `p` (its credits summed) when it is at `min_percent`,
    /// with the bytes of the sets in too many folders to propose pairs
    /// ([`super::spread`]), and a top; a pair under a top that is not
    /// identical is a candidate.
    fn close(
        &self,
        p: Option<FolderPair>,
        min_percent: f64,
        kept: &mut HashMap<(u32, u32), FolderPair>,
        candidates: &mut Option<&mut ExternalSorter<Candidate>>,
    ) -> Result<()> {
        let Some(mut p) = p else {
            return Ok(());
        };
        let (a, b) = self.shape.spread.pair(p.da, p.db);
        (p.a_in_b, p.b_in_a) = (p.a_in_b + a, p.b_in_a + b);
        if p.percent() < min_percent {
            return Ok(());
        }
        match top_of(&self.shape.dirs, kept, &p) {
            None => {
                kept.insert((p.da, p.db), p);
            }
            Some(top) if top.identical() => {}
            Some(top) => {
                if let Some(c) = candidates {
                    c.push(Candidate::new(top, &p))?;
                }
            }
        }
        Ok(())
    }
}

/// Whether the folders of `p` are identical trees: each one run of ids
/// (the walk's order) of as many files, file by file the same relative
/// path, size and content.
pub(super) fn identical_trees(
    table: &CompactTable,
    dirs: &[Dir],
    p: &FolderPair,
) -> Option<TreeCopy> {
    if p.same != p.files_a || p.files_a != p.files_b || p.bytes_a != p.bytes_b {
        return None;
    }
    let (a, b) = (&dirs[p.da as usize], &dirs[p.db as usize]);
    let (ra, rb) = (a.run()?, b.run()?);
    let same = ra.clone().zip(rb).all(|(x, y)| {
        table.size(x) == table.size(y)
            && table.content(x) == table.content(y)
            && table.path(x).get(a.path_len()..) == table.path(y).get(b.path_len()..)
    });
    same.then(|| TreeCopy {
        first_a: *ra.start(),
        first_b: b.first,
        files: a.files as u32,
    })
}

/// For each group, the first of `pairs` (in the report's order) whose two
/// folders hold all its files; a group of files all in one folder of no
/// pair is left unmarked. One folder of such a pair holds the group's
/// first file, the other the first file outside it: O(files × depth²) a
/// group, whatever the number of pairs.
pub(super) fn explains(
    dirs: &[Dir],
    dir_of: &[u32],
    pairs: &[FolderPair],
    groups: &[&[u32]],
) -> Vec<Option<u32>> {
    let index: HashMap<(u32, u32), u32> = pairs
        .iter()
        .enumerate()
        .map(|(k, p)| ((p.da, p.db), k as u32))
        .collect();
    let under = |f: u32, d: u32| contains(dirs, d, dir_of[f as usize]);
    let ancestors = |mut d: u32| {
        std::iter::from_fn(move || {
            let here = d;
            (here != ROOT).then(|| {
                d = dirs[here as usize].parent;
                here
            })
        })
    };
    groups
        .iter()
        .map(|files| {
            let first = *files.first()?;
            let mut best: Option<u32> = None;
            for x in ancestors(dir_of[first as usize]) {
                let Some(&out) = files.iter().find(|&&f| !under(f, x)) else {
                    continue;
                };
                for y in ancestors(dir_of[out as usize]) {
                    let Some(&k) = index.get(&(x.min(y), x.max(y))) else {
                        continue;
                    };
                    if best.is_none_or(|b| k < b)
                        && files.iter().all(|&f| under(f, x) || under(f, y))
                    {
                        best = Some(k);
                    }
                }
            }
            best
        })
        .collect()
}

/// Pair (`da`, `db`) before its credits (its file counts are by path,
/// [`Folders::count_paths`]).
pub(super) fn empty_pair(dirs: &[Dir], da: u32, db: u32) -> FolderPair {
    let (a, b) = (&dirs[da as usize], &dirs[db as usize]);
    FolderPair {
        // The paths only for a pair that is listed.
        a: Vec::new(),
        b: Vec::new(),
        files_a: a.files,
        bytes_a: a.bytes,
        files_b: b.files,
        bytes_b: b.bytes,
        a_in_b: 0,
        b_in_a: 0,
        same: 0,
        changed: 0,
        only_a: 0,
        only_b: 0,
        tree: None,
        files: None,
        children: Vec::new(),
        children_left_out: 0,
        family: 0,
        da,
        db,
        parent: None,
        nested: (0, 0),
    }
}
