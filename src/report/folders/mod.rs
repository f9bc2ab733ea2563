//! Folder pairs: which directories are copies or versions of
//! which, from the file table, the identical sets and the kept links.
//!
//! A person cleaning up a merged share wants to read first that
//! `release-1.4/` is a version of `release-1.5/` (and how much changed),
//! not the thousands of file links that say it file by file.
//!
//! **Which folders are paired.** A match between two files `a` and `b`
//! (identical, or a kept link) pairs their folders at the same height:
//! the folders holding them, their parents, and so on up to the first
//! folder they share (a folder is never paired with itself, nor with a
//! folder inside it). Copies and versions of a tree keep its shape, so
//! aligned heights find them in links × depth steps; a tree whose files
//! were moved to other depths pairs at the heights where they agree.
//!
//! **Figures.** For a pair (A, B): each file of A (at any depth) counts
//! the bytes of its best partner in B (an identical file: its size; a
//! link: the bytes in common), so a byte of A is counted once however many
//! partners it has; "A in B" is their sum over A's files, "B in A" the
//! same the other way. The pair's similarity is (A in B + B in A) / (bytes
//! of A + bytes of B). The file counts are by relative path, as `diff -r A
//! B` would give them ([`counts`]): `same` the paths under both with
//! identical files, `changed` those under both with other contents, only in
//! A (only in B) those under one folder alone; empty files count as any.
//!
//! **Which pairs are reported.** Those at or above the threshold none of
//! whose ancestor pairs (at the same heights) is: the topmost folders that
//! are copies or versions of each other, not every sub-folder of two
//! copied trees.
//!
//! **Pairs inside pairs.** Under a reported pair, a pair at the threshold
//! is listed too, as a child of its nearest listed ancestor pair L
//! (`children::child_of`), when L is not identical (100 %: a pair inside
//! two identical folders repeats them) and the pair is identical, or
//! closer than L (by the tenth of a percent the reports show), or a rename
//! (its folders' names differ and neither name is beside the other folder:
//! not the `de` and `es` locales of two releases that both have both):
//! `backup/alpha-2023 = projects/alpha` under
//! `backup <-> projects`. Below a listed child pair the same rule applies
//! to its own children, identical first, then most bytes explained, then
//! by paths. json and tsv list every child pair; txt and html at most
//! [`CHILDREN`] a pair, the others counted, the pairs under them left out
//! ([`FolderReport::listed`]).

//! **Memory.** Each credit (a folder pair, a file, its partner's bytes)
//! goes through the external sorter ([`crate::io::sorter`]) within the
//! budget the report gives it, so links × depth may be far larger than
//! memory; the sorted credits are read back one at a time, each pair's
//! figures summed as they come. Only a file's best credit in a pair
//! counts, so its credits are combined on the way: in a small table
//! (`Combiner`) before the sort and as the sorter writes and merges its
//! runs (`ExternalSorter::keep_last_of`). What is held is the directory table
//! (O(folders)) and the top pairs: the sub-folder pairs of copied trees,
//! at or above the threshold but under a reported pair, go through the
//! external sorter too, by top, and are read back one top at a time to
//! choose its child pairs, which are written to a file of their own;
//! each report reads a pair's child pairs back from it as it writes the
//! pair. The model holds none of them, however many there are: a top's
//! are held while they are chosen and while one report writes them.
//!
//! **Families.** The reported pairs are listed family by family
//! ([`Family`]): sibling folders alike in their boilerplate (the locale
//! folders of every app of every release) are one family, read once, so
//! that the few pairs a person reads first (releases, copied projects)
//! are not lost among them.
//!
//! **Bounds.** An identical set proposes its pairs folder by folder: its
//! files grouped by the folder holding them, each two groups climb once and
//! credit the files of both, so its work is the square of its folders, not
//! of its files (a thousand empty `__init__.py` in two hundred folders are
//! two hundred groups). A set in more than [`SET_FOLDERS`] folders (a
//! licence in every project) proposes no pairs (they would grow with the
//! square of its folders, and so the work of every set is at most
//! [`SET_FOLDERS`] / 2 climbs a file): it counts by folder in the figures of
//! the pairs other files proposed, before the threshold ([`spread`]: a
//! version that is at the threshold with its licence is reported), and the
//! report says how many such sets there were. A kept link to the
//! representative of a set of more than [`SET_FANOUT`] files credits the
//! representative alone (each file of both sets with each would be the
//! product of the two sets).

mod children;
mod counts;
mod credits;
mod families;
mod figures;
mod listing;
mod nested;
mod output;
mod records;
mod spread;
mod table;
#[cfg(test)]
mod tests;

pub use families::{Family, CROWD};

/// Pairs the reports open with ([`FolderReport::best`]).
pub const BEST: usize = 20;

use crate::error::Result;
use crate::formats::files::CompactTable;
use crate::io::hashing::MixedMap;
use crate::io::sorter::{ExternalSorter, SortOptions, MIN_MEMORY};
use children::names;
use credits::{aliases, credit_sorter, group_sets, Crediting, Match, Pass, Shape, Up, NO_SET};
use families::by_family;
use figures::{explains, identical_trees};
use records::{Combiner, Credit, COMBINED};
use spread::Spread;
use std::collections::HashMap;
use table::{directories, table_bytes};

/// A kept link to the representative of an identical set of at most this
/// many files credits each file of the set (module doc).
pub const SET_FANOUT: usize = 64;

/// Identical sets in more folders than this propose no folder pairs
/// (module doc).
pub const SET_FOLDERS: usize = 256;

/// The first this many reported pairs get their file lists
/// ([`PairFiles`]): the pairs the html page shows.
pub const DETAILED: usize = 1_000;

/// Files a list of [`PairFiles`] names at most (the others are counted).
pub const LISTED: usize = 20;

/// Child pairs the txt and html reports list under a pair at most
/// ([`FolderReport::listed`]): the identical first, then most bytes
/// explained; the others are counted
/// ([`FolderPair::children_left_out`]). json and tsv list them all.
pub const CHILDREN: usize = 20;

/// The file-level differences of a folder pair by relative path (as
/// [`FolderPair::same`] counts them): the files `same` at the same relative
/// path under both, `changed` there, only in A and only in B. At most
/// [`LISTED`] files a list, in id order of A's file (the walk's); the
/// counts are of all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PairFiles {
    /// (file of A, the file at its path in B).
    pub same: Vec<(u32, u32)>,
    pub same_count: u64,
    /// (file of A, the file at its path in B, bytes in common when a kept
    /// link joins the two: the best partner of A's file is B's).
    pub changed: Vec<(u32, u32, Option<u64>)>,
    pub changed_count: u64,
    pub only_a: Vec<u32>,
    pub only_b: Vec<u32>,
    /// Always true: the only-in lists are made for every pair (the json
    /// keeps the key).
    pub only_listed: bool,
}

/// Two folders that are identical trees: the same relative paths, each
/// file with the same size and content. File `first_a + i` of A is the
/// copy of `first_b + i` of B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeCopy {
    pub first_a: u32,
    pub first_b: u32,
    pub files: u32,
}

/// A reported folder pair with its figures (module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderPair {
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub files_a: u64,
    pub bytes_a: u64,
    pub files_b: u64,
    pub bytes_b: u64,
    /// Bytes of A found in B, and of B in A.
    pub a_in_b: u64,
    pub b_in_a: u64,
    /// Relative paths under both folders with identical files there (a
    /// pair of files counts once): see [`counts`].
    pub same: u64,
    /// Relative paths under both folders with other contents there.
    pub changed: u64,
    /// Relative paths under A alone, and under B alone.
    pub only_a: u64,
    pub only_b: u64,
    /// When A and B are identical trees.
    pub tree: Option<TreeCopy>,
    /// Its family's index in [`FolderReport::families`].
    pub family: u32,
    /// Its file lists, for the first [`DETAILED`] pairs (a child pair has
    /// none).
    pub files: Option<Box<PairFiles>>,
    /// The pairs inside it listed under it (module doc, *Pairs inside
    /// pairs*), identical first, then most bytes explained, then by
    /// paths: empty in [`FolderReport::pairs`], filled by
    /// [`FolderReport::listed`].
    pub children: Vec<FolderPair>,
    /// Child pairs past [`CHILDREN`], left out (with the pairs under them).
    pub children_left_out: u64,
    /// The folders' ids.
    da: u32,
    db: u32,
    /// While figuring: the listed pair it is a child of.
    parent: Option<(u32, u32)>,
    /// A top's child pairs in the child pairs' file: (offset, bytes).
    nested: (u64, u64),
}

impl FolderPair {
    /// (A in B + B in A) / (bytes of A + bytes of B), in percent.
    pub fn percent(&self) -> f64 {
        let total = self.bytes_a + self.bytes_b;
        if total == 0 {
            return 0.0;
        }
        100.0 * (self.a_in_b + self.b_in_a) as f64 / total as f64
    }

    /// Whether every byte of each folder is found in the other (100 %).
    pub fn identical(&self) -> bool {
        self.bytes_a + self.bytes_b > 0 && self.a_in_b + self.b_in_a == self.bytes_a + self.bytes_b
    }

    /// The pair and its child pairs, depth first, each with its depth
    /// (0: this pair).
    pub fn with_children(&self) -> Vec<(usize, &FolderPair)> {
        let mut out = vec![(0, self)];
        for c in &self.children {
            out.extend(c.with_children().into_iter().map(|(d, p)| (d + 1, p)));
        }
        out
    }
}

/// What [`Folders::figure`] found.
#[derive(Debug, Default)]
pub struct FolderReport {
    /// Reported pairs, family by family ([`Family`]), most bytes explained
    /// first within each.
    pub pairs: Vec<FolderPair>,
    /// The families of `pairs`, in their order.
    pub families: Vec<Family>,
    /// The pairs a reader is shown first, whatever their family: at most
    /// [`BEST`], most bytes explained first ([`families::best`]).
    pub best: Vec<u32>,
    /// Identical sets in more than [`SET_FOLDERS`] folders, which proposed
    /// no pairs (they count in the figures of the others).
    pub wide_sets: u64,
    /// What the folder step held at most beside the report's model (its
    /// directory table and sorters), freed before the links are read:
    /// counted when fsim-report says `--memory` is too small.
    pub held: u64,
    /// Per group given to [`Folders::figure`] (the clusters, then the
    /// identical sets): the index in `pairs` of the folder pair that holds
    /// every file of it (all under one folder or the other), if any: a
    /// reviewer who handles that pair has handled the group.
    pub explains: Vec<Option<u32>>,
    /// The child pairs' file ([`FolderReport::listed`]), when some pair
    /// has child pairs.
    nested: Option<std::fs::File>,
    /// The pairs the text report lists, sorted: made once by it
    /// ([`FolderReport::text_listed`]), read for every group inside a pair.
    text_listed: std::sync::OnceLock<Vec<u32>>,
}

/// An identical set: its files' size and the files (the representative
/// first).
#[derive(Debug, Clone, Copy)]
pub struct SetRef<'a> {
    pub size: u64,
    pub files: &'a [u32],
}

/// Folder pairs built link by link.
///
/// **Threads.** The matches (kept links, pairs of identical files) are
/// gathered in batches and credited by one worker per thread
/// (`sort.threads`), each its own share of a batch with its own
/// [`Combiner`] and sorter (the budget split between them); a sweep reads
/// the workers' sorted credits merged into one order. A file's best credit
/// in a pair is the greatest wherever it was combined, so the figures do
/// not depend on the number of threads.
pub struct Folders<'a> {
    shape: Shape<'a>,
    /// One a thread, each crediting its share of a batch.
    workers: Vec<Crediting>,
    /// Matches not credited yet: [`credits::BATCH`] a worker at most.
    batch: Vec<Match>,
    /// A worker's sorter options (its share of the budget).
    sort: SortOptions,
    wide_sets: u64,
    /// What it holds at most: the directory table and the sorters'.
    held: u64,
    /// The pairs kept so far ([`Folders::figure`]).
    kept: HashMap<(u32, u32), FolderPair>,
}

impl<'a> Folders<'a> {
    /// The directories of `table`; the identical sets propose their pairs.
    /// `sort.memory` is what the folder pairs may hold: their directory
    /// table, the sorters' buffers (an eighth of what the table leaves, at
    /// most 64 MiB, shared by the workers: more only saves a merge pass;
    /// the sorted runs' merge and the allocator's slack take the rest)
    /// with their `Combiner`s (an eighth of a buffer, at most 1.5 MiB
    /// each), a batch of matches ([`credits::BATCH`] a worker) and the pairs kept.
    pub fn new(
        table: &'a CompactTable,
        sets: &'a [SetRef<'a>],
        set_of: &'a HashMap<u32, usize>,
        mut sort: SortOptions,
    ) -> Result<Folders<'a>> {
        let (dirs, dir_of) = directories(table);
        let up: Vec<Up> = dirs
            .iter()
            .map(|d| Up {
                parent: d.parent,
                depth: d.depth,
            })
            .collect();
        let mut set_index = vec![NO_SET; table.len()];
        for (&f, &s) in set_of {
            if sets[s].files.len() <= SET_FANOUT {
                set_index[f as usize] = s as u32;
            }
        }
        let groups = group_sets(table, &dir_of, sets, &mut set_index);
        let spread = Spread::new(table, &up, &dir_of, sets, &groups.spread);
        let named = names(table, &dirs);
        let alias = aliases(table);
        let held = table_bytes(&dirs, &dir_of)
            + (up.len() * 8 + set_index.len() * 4 + alias.len() * 4) as u64
            + named.bytes()
            + groups.bytes()
            + spread.bytes();
        let threads = sort.threads.max(1);
        let share = (sort.memory.saturating_sub(held) / 8).clamp(MIN_MEMORY, 64 << 20);
        let share = share / threads as u64;
        let combined = (share / 8).min(COMBINED * std::mem::size_of::<Credit>() as u64);
        sort.memory = share.saturating_sub(combined).max(MIN_MEMORY);
        let held = held + threads as u64 * share;
        let workers = (0..threads)
            .map(|_| Crediting {
                credits: Some(credit_sorter(&sort)),
                combiner: Combiner::new(combined),
                details: None,
                detail_combiner: Combiner::new(0),
                chain: Vec::new(),
                partners: Vec::new(),
            })
            .collect();
        let mut f = Folders {
            shape: Shape {
                table,
                dirs,
                named,
                up,
                dir_of,
                alias,
                set_index,
                sets,
                groups,
                spread,
                pass: Pass::Tops,
                wanted: MixedMap::default(),
                wanted_da: Vec::new(),
            },
            workers,
            batch: Vec::new(),
            sort,
            wide_sets: 0,
            kept: HashMap::new(),
            held,
        };
        f.wide_sets = f.propose_sets()?;
        Ok(f)
    }

    /// A kept link between `a` and `b` (representatives of their
    /// identical sets, as the pairs give them) with `common` bytes.
    pub fn link(&mut self, a: u32, b: u32, common: u64) -> Result<()> {
        self.add(Match {
            x: a,
            y: b,
            bytes: common,
            link: true,
        })
    }
    /// The pairs at or above `min_percent` none of whose ancestor pairs is,
    /// each with its child pairs (module doc), and which of them explains
    /// each of `groups` (sets of file ids), from the kept links that
    /// `links` gives ([`Folders::link`]), twice.
    ///
    /// Two passes, the top pair of each match's chain first: no pair under
    /// an identical kept top is reported (two copies of a tree: every match
    /// between them), so the second pass credits the pairs below the other
    /// tops only. Same pairs, same figures: every match through a pair has
    /// that pair's top, so a top's figures are whole after the first pass,
    /// and a pair below a top after the second.
    pub fn figure(
        &mut self,
        min_percent: f64,
        groups: &[&[u32]],
        mut links: impl FnMut(&mut Folders<'a>) -> Result<()>,
    ) -> Result<FolderReport> {
        links(self)?;
        let mut kept = std::mem::take(&mut self.kept);
        self.sweep(min_percent, &mut kept, None)?;
        let identical = kept.iter().filter(|(_, p)| p.identical());
        self.shape.pass = Pass::Below(identical.map(|(&k, _)| k).collect());
        for w in &mut self.workers {
            w.credits = Some(credit_sorter(&self.sort));
        }
        self.propose_sets()?;
        links(self)?;
        let mut candidates = ExternalSorter::new(self.sort.clone());
        self.sweep(min_percent, &mut kept, Some(&mut candidates))?;
        self.shape.pass = Pass::All;
        // The file lists' pass combines its records in the credits' slots.
        for w in &mut self.workers {
            let slots = w.combiner.bytes();
            w.combiner = Combiner::new(0);
            w.detail_combiner = Combiner::new(slots);
        }
        let dirs = &self.shape.dirs;
        let mut pairs: Vec<FolderPair> = kept
            .into_values()
            .map(|mut p| {
                p.a = dirs[p.da as usize].path(self.shape.table).to_vec();
                p.b = dirs[p.db as usize].path(self.shape.table).to_vec();
                p
            })
            .collect();
        pairs.sort_by(|x, y| {
            (y.a_in_b + y.b_in_a)
                .cmp(&(x.a_in_b + x.b_in_a))
                .then_with(|| x.a.cmp(&y.a))
                .then_with(|| x.b.cmp(&y.b))
        });
        let (mut pairs, families) = by_family(pairs);
        self.count_paths(&mut pairs)?;
        for p in &mut pairs {
            p.tree = identical_trees(self.shape.table, &self.shape.dirs, p);
        }
        let nested = self.list_children(&mut pairs, candidates)?;
        let explains = explains(&self.shape.dirs, &self.shape.dir_of, &pairs, groups);
        Ok(FolderReport {
            best: families::best(&pairs, BEST),
            pairs,
            families,
            wide_sets: self.wide_sets,
            held: self.held,
            explains,
            nested,
            text_listed: std::sync::OnceLock::new(),
        })
    }
}

impl FolderReport {
    /// Whether the text report lists pair `k`: `plan` gives the pairs it
    /// lists, called once.
    pub fn text_listed(&self, k: u32, plan: impl FnOnce() -> Vec<u32>) -> bool {
        let listed = self.text_listed.get_or_init(|| {
            let mut v = plan();
            v.sort_unstable();
            v
        });
        listed.binary_search(&k).is_ok()
    }

    /// The bytes it holds, counted in the report's model: the links of
    /// the formats get what is left of `--memory`.
    pub fn heap_bytes(&self) -> u64 {
        let lists = std::mem::size_of::<PairFiles>() + 16 + 4 * LISTED * 16;
        let pairs: usize = self
            .pairs
            .iter()
            .map(|p| {
                std::mem::size_of::<FolderPair>()
                    + p.a.capacity()
                    + p.b.capacity()
                    + 32
                    + p.files.as_ref().map_or(0, |_| lists)
            })
            .sum();
        let families: usize = self
            .families
            .iter()
            .map(|f| std::mem::size_of::<Family>() + f.label.capacity() + 16)
            .sum();
        (pairs + families + self.explains.capacity() * 8) as u64
    }
}
