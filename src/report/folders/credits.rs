//! Crediting the matches: each match (a kept link, two folders' files of
//! an identical set) climbs its two folders' ancestors at aligned heights
//! and credits each file to the folder pairs its [`Pass`] figures, through
//! a worker's [`Combiner`] to its sorter (or, in the file lists' pass, to
//! the listed pairs' details).

use super::children::Names;
use super::records::{Combiner, Credit, Detail};
use super::spread::Spread;
use super::table::{Dir, ROOT};
use super::{Folders, SetRef, SET_FOLDERS};
use crate::error::Result;
use crate::formats::files::CompactTable;
use crate::io::hashing::{Mixed, MixedMap};
use crate::io::sorter::{ExternalSorter, SortOptions};
use std::collections::HashSet;
use std::hash::BuildHasherDefault;

/// Which folder pairs of a match's chain ([`Shape::climb`]) a pass
/// credits.
pub(super) enum Pass {
    /// The top pair only.
    Tops,
    /// The pairs below the top, when the top is not one of these (kept
    /// and identical: no pair inside two identical folders is listed).
    Below(HashSet<(u32, u32), BuildHasherDefault<Mixed>>),
    /// Every pair (the file lists' pass).
    All,
}

/// What every worker reads: the file table, its directories and identical
/// sets, the pass, and the listed pairs of the file lists' pass.
pub(super) struct Shape<'a> {
    pub(super) table: &'a CompactTable,
    pub(super) dirs: Vec<Dir>,
    /// Which folder holds a folder of which name (renames: [`super::children::child_of`]).
    pub(super) named: Names,
    /// Each directory's parent and depth, 8 bytes a folder: what a match's
    /// climb reads at every height, in a table that stays in the cache
    /// (a [`Dir`] is 72 bytes).
    pub(super) up: Vec<Up>,
    /// Directory of each file.
    pub(super) dir_of: Vec<u32>,
    /// Which file each file is another name of ([`aliases`]): read for
    /// every file of every match, an index where the table's links are a
    /// binary search (twice the folder pairs' cost on a tree whose every
    /// file has a hard link elsewhere).
    pub(super) alias: Vec<u32>,
    /// The identical set a representative file stands for, by file id
    /// ([`NO_SET`]: none, or one wider than [`super::SET_FANOUT`]; [`SPREAD`]: a
    /// file of a set in more than [`SET_FOLDERS`] folders, never credited
    /// file by file): read for both files of every link, an index rather
    /// than a hash lookup.
    pub(super) set_index: Vec<u32>,
    pub(super) sets: &'a [SetRef<'a>],
    /// The identical sets' files by folder.
    pub(super) groups: SetGroups,
    /// The files of the sets in more than [`SET_FOLDERS`] folders, by
    /// folder ([`Spread`]).
    pub(super) spread: Spread,
    /// Which folder pairs of a match's chain are credited ([`Pass`]).
    pub(super) pass: Pass,
    /// The file lists' pass ([`Folders::start_details`]): the listed
    /// pairs, by their folders.
    pub(super) wanted: MixedMap<(u32, u32), u32>,
    /// Whether a folder is the lower of a listed pair: most heights of
    /// the file lists' pass are of no listed pair, and skip the hash lookup.
    pub(super) wanted_da: Vec<bool>,
}

/// A folder's parent and depth ([`Shape::up`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Up {
    pub(super) parent: u32,
    pub(super) depth: u32,
}

/// [`Shape::alias`] of a file with no other name in the table.
pub(super) const NO_ALIAS: u32 = u32::MAX;

/// Each file's [`Shape::alias`]: the lowest id of the files of the table
/// that are names of the same file (hard links), [`NO_ALIAS`] for a file
/// that has no other name in the table (a hard link whose other names are
/// outside the repository pairs like any file).
pub(super) fn aliases(table: &CompactTable) -> Vec<u32> {
    let mut alias = vec![NO_ALIAS; table.len()];
    let mut by_inode: Vec<((u64, u64), u32)> =
        table.links().iter().map(|&(f, inode)| (inode, f)).collect();
    by_inode.sort_unstable();
    for names in by_inode.chunk_by(|a, b| a.0 == b.0) {
        if let [(_, first), _, ..] = names {
            for &(_, f) in names {
                alias[f as usize] = *first;
            }
        }
    }
    alias
}

/// [`Shape::set_index`] of a file that stands for no set.
pub(super) const NO_SET: u32 = u32::MAX;

/// [`Shape::set_index`] of a file of a set in more than [`SET_FOLDERS`]
/// folders.
pub(super) const SPREAD: u32 = u32::MAX - 1;

/// The identical sets' files grouped by the folder holding them (empty
/// files and files outside every folder left out): a set proposes its
/// pairs group by group.
#[derive(Debug, Default)]
pub(super) struct SetGroups {
    /// The files, group after group (a group's files are in one folder).
    pub(super) files: Vec<u32>,
    /// Where each group starts in `files`, and the end last.
    pub(super) starts: Vec<u32>,
    /// Each set of two groups or more in at most [`SET_FOLDERS`] folders:
    /// its groups `g0..g1` and its files' size.
    pub(super) sets: Vec<(u32, u32, u64)>,
    /// The sets in more than [`SET_FOLDERS`] folders (indices in the sets).
    pub(super) spread: Vec<u32>,
}

impl SetGroups {
    /// The files of group `g`.
    pub(super) fn group(&self, g: u32) -> &[u32] {
        let (at, end) = (self.starts[g as usize], self.starts[g as usize + 1]);
        &self.files[at as usize..end as usize]
    }

    /// The bytes it holds.
    pub(super) fn bytes(&self) -> u64 {
        (self.files.capacity() * 4 + self.starts.capacity() * 4 + self.sets.capacity() * 16) as u64
            + self.spread.capacity() as u64 * 4
    }
}

/// The files of `sets` grouped by folder; the files of a set in more than
/// [`SET_FOLDERS`] folders marked [`SPREAD`] in `set_index`.
pub(super) fn group_sets(
    table: &CompactTable,
    dir_of: &[u32],
    sets: &[SetRef<'_>],
    set_index: &mut [u32],
) -> SetGroups {
    let mut g = SetGroups {
        starts: vec![0],
        ..SetGroups::default()
    };
    let mut by_dir: Vec<(u32, u32)> = Vec::new();
    for (s, set) in sets.iter().enumerate() {
        by_dir.clear();
        by_dir.extend(
            set.files
                .iter()
                .map(|&f| (dir_of[f as usize], f))
                .filter(|&(d, f)| d != ROOT && table.size(f) > 0),
        );
        by_dir.sort_unstable();
        let folders = by_dir.chunk_by(|x, y| x.0 == y.0).count();
        if folders > SET_FOLDERS {
            for &f in set.files {
                set_index[f as usize] = SPREAD;
            }
            g.spread.push(s as u32);
            continue;
        }
        if folders < 2 {
            continue;
        }
        let g0 = g.starts.len() as u32 - 1;
        for group in by_dir.chunk_by(|x, y| x.0 == y.0) {
            g.files.extend(group.iter().map(|&(_, f)| f));
            g.starts.push(g.files.len() as u32);
        }
        g.sets.push((g0, g.starts.len() as u32 - 1, set.size));
    }
    g
}

/// One worker's credits. Aligned to two cache lines: each worker writes
/// its sorter's and combiner's fields at every credit, and two workers'
/// fields on one line would make the line travel between the cores.
#[repr(align(128))]
pub(super) struct Crediting {
    /// Every file's partners per folder pair, sorted on disk when they do
    /// not fit; taken by [`Folders::sweep`].
    pub(super) credits: Option<ExternalSorter<Credit>>,
    /// Combines a file's credits in a pair before they are sorted.
    pub(super) combiner: Combiner<Credit>,
    /// The file lists' pass: the files' partners in the listed pairs.
    pub(super) details: Option<ExternalSorter<Detail>>,
    /// Combines a file's partners in a listed pair before they are sorted
    /// (the file lists' pass, which takes the credits' slots).
    pub(super) detail_combiner: Combiner<Detail>,
    /// A match's chain of folder pairs, bottom up (reused).
    pub(super) chain: Vec<(u32, u32)>,
    /// A match's files with their partners, credited at every height of
    /// its chain (reused).
    pub(super) partners: Vec<(u32, u32)>,
}

/// A match to credit: a kept link between two representatives (`link`:
/// each file of one's identical set with each of the other's) or two
/// groups of one identical set (`x`, `y`: [`SetGroups`] groups).
#[derive(Debug, Clone, Copy)]
pub(super) struct Match {
    pub(super) x: u32,
    pub(super) y: u32,
    pub(super) bytes: u64,
    pub(super) link: bool,
}

/// Matches a worker credits a batch (24 bytes each): large enough that a
/// thread's start is nothing next to its work.
pub(super) const BATCH: usize = 1 << 14;

/// A batch smaller than this is credited on the calling thread.
pub(super) const ALONE: usize = 1 << 10;

impl Folders<'_> {
    /// Propose the pairs of the identical sets, each two of a set's groups
    /// once; the number of sets in too many folders to. Two names of one
    /// file (hard links) are no copy: they pair no folders.
    pub(super) fn propose_sets(&mut self) -> Result<u64> {
        for k in 0..self.shape.groups.sets.len() {
            let (g0, g1, size) = self.shape.groups.sets[k];
            for x in g0..g1 {
                for y in x + 1..g1 {
                    self.add(Match {
                        x,
                        y,
                        bytes: size,
                        link: false,
                    })?;
                }
            }
        }
        Ok(self.shape.groups.spread.len() as u64)
    }

    /// Add a match to the batch, which is credited when full.
    #[inline]
    pub(super) fn add(&mut self, m: Match) -> Result<()> {
        self.batch.push(m);
        if self.batch.len() >= BATCH * self.workers.len() {
            self.flush()?;
        }
        Ok(())
    }

    /// Credit the batch, a contiguous share a worker (a file's links stay
    /// together for its combiner), each worker on a thread of its own.
    pub(super) fn flush(&mut self) -> Result<()> {
        let (shape, batch) = (&self.shape, &self.batch);
        if batch.len() < ALONE {
            let w = &mut self.workers[0];
            batch.iter().try_for_each(|m| shape.credit(w, m))?;
        } else {
            let share = batch.len().div_ceil(self.workers.len());
            std::thread::scope(|s| {
                let running: Vec<_> = self
                    .workers
                    .iter_mut()
                    .zip(batch.chunks(share))
                    .map(|(w, part)| {
                        s.spawn(move || part.iter().try_for_each(|m| shape.credit(w, m)))
                    })
                    .collect();
                running
                    .into_iter()
                    .try_for_each(|r| r.join().expect("a folder pairs worker panicked"))
            })?;
        }
        self.batch.clear();
        Ok(())
    }
}

/// A sorter of credits that keeps the best of each file in each pair.
pub(super) fn credit_sorter(sort: &SortOptions) -> ExternalSorter<Credit> {
    ExternalSorter::new(sort.clone()).keep_last_of(|a, b| a.group() == b.group())
}

impl Shape<'_> {
    /// Credit match `m` with worker `w`'s combiners and sorters.
    fn credit(&self, w: &mut Crediting, m: &Match) -> Result<()> {
        if !m.link {
            let (xs, ys) = (self.groups.group(m.x), self.groups.group(m.y));
            return self.propose(w, xs, ys, m.bytes, true);
        }
        for x in self.members(&m.x) {
            for y in self.members(&m.y) {
                self.propose(
                    w,
                    std::slice::from_ref(x),
                    std::slice::from_ref(y),
                    m.bytes,
                    false,
                )?;
            }
        }
        Ok(())
    }

    /// The files a representative stands for (itself when its set is
    /// wider than [`super::SET_FANOUT`]).
    fn members<'s>(&'s self, f: &'s u32) -> &'s [u32] {
        match self.set_index[*f as usize] {
            NO_SET | SPREAD => std::slice::from_ref(f),
            s => self.sets[s as usize].files,
        }
    }

    /// Credit the files `xs` (of one folder) and `ys` (of another) to each
    /// other in their folders at the aligned heights below the first folder
    /// they share that this [`Pass`] figures.
    fn propose(
        &self,
        w: &mut Crediting,
        xs: &[u32],
        ys: &[u32],
        bytes: u64,
        identical: bool,
    ) -> Result<()> {
        let (x, y) = (xs[0], ys[0]);
        if self.table.size(x) == 0 || self.table.size(y) == 0 {
            return Ok(());
        }
        let (dx, dy) = (self.dir_of[x as usize], self.dir_of[y as usize]);
        if dx == ROOT || dy == ROOT {
            return Ok(());
        }
        let mut chain = std::mem::take(&mut w.chain);
        self.climb(dx, dy, &mut chain);
        let n = chain.len();
        let credited = match &self.pass {
            Pass::Tops => n.saturating_sub(1)..n,
            Pass::Below(tops) if chain.last().is_some_and(|t| tops.contains(t)) => 0..0,
            Pass::Below(_) => 0..n.saturating_sub(1),
            Pass::All => 0..n,
        };
        // A file's partner is the same at every height: found once.
        let mut partners = std::mem::take(&mut w.partners);
        partners.clear();
        if !credited.is_empty() {
            for (fs, os) in [(xs, ys), (ys, xs)] {
                partners.extend(fs.iter().filter_map(|&f| Some((f, self.partner(f, os)?))));
            }
        }
        let mut done = Ok(());
        for &p in &chain[credited] {
            done = self.pair_at(w, p, &partners, bytes, identical);
            if done.is_err() {
                break;
            }
        }
        w.chain = chain;
        w.partners = partners;
        done
    }

    /// File `f`'s partner among `others`: the first that is not another
    /// name of it; none for a file of a set in too many folders (counted
    /// by folder, [`Spread`]).
    #[inline]
    fn partner(&self, f: u32, others: &[u32]) -> Option<u32> {
        if self.set_index[f as usize] == SPREAD {
            return None;
        }
        match self.alias[f as usize] {
            NO_ALIAS => others.first().copied(),
            alias => others
                .iter()
                .copied()
                .find(|&o| self.alias[o as usize] != alias),
        }
    }

    /// The folder pairs (lower id first) of a match between folders `dx`
    /// and `dy` into `chain`, bottom up: the pair, its parents, and so on
    /// below the first folder they share. The pairs above one depend on it
    /// alone, so each pair has one top: the last of its chain.
    fn climb(&self, mut dx: u32, mut dy: u32, chain: &mut Vec<(u32, u32)>) {
        chain.clear();
        // `up`, the deeper folder's ancestor at the depth of the other,
        // `at`: one folder holds the other (or is it) when they are the
        // same, and then so do their parents. Both climb with the pair:
        // one step a height, not a walk to the other's depth.
        let dirs = &self.up;
        let (deep, mut at) = if dirs[dx as usize].depth >= dirs[dy as usize].depth {
            (dx, dy)
        } else {
            (dy, dx)
        };
        let mut up = deep;
        while dirs[up as usize].depth > dirs[at as usize].depth {
            up = dirs[up as usize].parent;
        }
        while up != at && dx != ROOT && dy != ROOT {
            chain.push((dx.min(dy), dx.max(dy)));
            (dx, dy) = (dirs[dx as usize].parent, dirs[dy as usize].parent);
            (up, at) = (dirs[up as usize].parent, dirs[at as usize].parent);
        }
    }

    /// Credit the files of `partners` (a match's files of both sides,
    /// each with its partner on the other) in folder pair `(da, db)`: in
    /// the first passes through the [`Combiner`] to the sorter, in the
    /// file lists' pass for their lists when it is a listed pair.
    #[inline]
    fn pair_at(
        &self,
        w: &mut Crediting,
        (da, db): (u32, u32),
        partners: &[(u32, u32)],
        bytes: u64,
        identical: bool,
    ) -> Result<()> {
        if let Some(credits) = &mut w.credits {
            for &(file, _) in partners {
                let c = Credit::new(da, db, file, bytes, identical);
                if let Some(out) = w.combiner.put(c) {
                    credits.push(out)?;
                }
            }
            return Ok(());
        }
        if self.wanted_da.get(da as usize) != Some(&true) {
            return Ok(());
        }
        if let (Some(&k), Some(details)) = (self.wanted.get(&(da, db)), &mut w.details) {
            for &(file, partner) in partners {
                let d = Detail {
                    k,
                    file,
                    bytes,
                    identical,
                    partner,
                };
                if let Some(out) = w.detail_combiner.put(d) {
                    details.push(out)?;
                }
            }
        }
        Ok(())
    }
}
