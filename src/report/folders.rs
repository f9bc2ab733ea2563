//! Folder pairs (issue 28): which directories are copies or versions of
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
//! same the other way. A file is `same` when its best partner is identical
//! to it, `changed` when its best partner is a link, else only in its
//! folder. The pair's similarity is (A in B + B in A) / (bytes of A +
//! bytes of B).
//!
//! **Which pairs are reported.** Those at or above the threshold none of
//! whose ancestor pairs (at the same heights) is: the topmost folders that
//! are copies or versions of each other, not every sub-folder of two
//! copied trees, even one more alike than the trees (its files are in the
//! trees' figures).
//!
//! **Memory.** Each credit (a folder pair, a file, its partner's bytes)
//! goes through the external sorter ([`crate::io::sorter`]) within the
//! budget the report gives it, so links × depth may be far larger than
//! memory; the sorted credits are read back one at a time, each pair's
//! figures summed as they come. Only a file's best credit in a pair
//! counts, so its credits are combined on the way: in a small table
//! (`Combiner`) before the sort and as the sorter writes and merges its
//! runs (`ExternalSorter::keep_last_of`). What is held is the directory table
//! (O(folders)) and the reported pairs: the sub-folder pairs of copied
//! trees, at or above the threshold but under a reported pair, are
//! dropped as they are figured ([`Folders::figure`]).
//!
//! **Families.** The reported pairs are listed family by family
//! ([`Family`]): sibling folders alike in their boilerplate (the locale
//! folders of every app of every release) are one family, read once, so
//! that the few pairs a person reads first (releases, copied projects)
//! are not lost among them.
//!
//! **Bounds.** Identical sets of more than [`SET_FANOUT`] files (licence
//! texts, empty `__init__.py`, generated boilerplate) propose no folder
//! pairs by themselves (their pairs grow with the square of the set) but
//! still count in the figures of pairs other files proposed; the report
//! says how many such sets there were. Empty files count in no figure.

use crate::error::Result;
use crate::formats::escape_path_string;
use crate::formats::files::CompactTable;
use crate::io::hashing::{Mixed, MixedMap};
use crate::io::sorter::{ExternalSorter, FixedRecord, SortOptions, Sorted, MIN_MEMORY};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// Identical sets larger than this propose no folder pairs (module doc).
pub const SET_FANOUT: usize = 64;

/// Slots of the [`Combiner`] at most (1.5 MiB): enough to hold a file's
/// credit in a pair from one of its partners to the next (a file's links
/// come together in the pairs' order), small next to the sorter's buffer.
const COMBINED: u64 = 64 << 10;

/// One directory of the file table.
#[derive(Debug, Clone)]
struct Dir {
    path: Vec<u8>,
    parent: u32,
    depth: u32,
    files: u64,
    bytes: u64,
    /// The lowest and highest id of a file under it: its files are one run
    /// of ids when `last - first + 1 == files` (the walk's order).
    first: u32,
    last: u32,
}

impl Dir {
    /// Its files' ids, when they are one run.
    fn run(&self) -> Option<std::ops::RangeInclusive<u32>> {
        (self.files > 0 && u64::from(self.last - self.first) + 1 == self.files)
            .then_some(self.first..=self.last)
    }
}

const ROOT: u32 = u32::MAX;

/// A file's partner in the other folder of a pair: sorted by pair, then
/// file, the last credit of a file is its best.
///
/// Packed into three words whose derived order is that of (lower folder,
/// higher folder, file, bytes, identical): the sort, most of the folder
/// pairs' cost, compares three integers instead of five fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Credit {
    /// The pair's folders (lower id first): `da << 32 | db`.
    pair: u64,
    /// `file << 32 | bytes >> 32`.
    file_hi: u64,
    /// `(bytes & 0xffff_ffff) << 1 | identical`.
    lo: u64,
}

impl Credit {
    fn new(da: u32, db: u32, file: u32, bytes: u64, identical: bool) -> Credit {
        Credit {
            pair: u64::from(da) << 32 | u64::from(db),
            file_hi: u64::from(file) << 32 | bytes >> 32,
            lo: (bytes & 0xffff_ffff) << 1 | u64::from(identical),
        }
    }
    fn da(&self) -> u32 {
        (self.pair >> 32) as u32
    }
    fn db(&self) -> u32 {
        self.pair as u32
    }
    fn file(&self) -> u32 {
        (self.file_hi >> 32) as u32
    }
    fn bytes(&self) -> u64 {
        (self.file_hi & 0xffff_ffff) << 32 | self.lo >> 1
    }
    fn identical(&self) -> bool {
        self.lo & 1 == 1
    }
    /// (pair, file): the credits of one file in one pair, of which the
    /// greatest is its best.
    fn group(&self) -> (u64, u32) {
        (self.pair, self.file())
    }
}

impl FixedRecord for Credit {
    const SIZE: usize = 21;
    fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.pair.to_be_bytes());
        out[8..12].copy_from_slice(&self.file().to_be_bytes());
        out[12..20].copy_from_slice(&self.bytes().to_be_bytes());
        out[20] = self.identical() as u8;
    }
    fn decode(b: &[u8]) -> Self {
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Credit::new(
            u32_at(0),
            u32_at(4),
            u32_at(8),
            u64::from_be_bytes(b[12..20].try_into().expect("8 bytes")),
            b[20] != 0,
        )
    }
}

/// A record a [`Combiner`] holds: of the records of one group, the
/// greatest is the one kept (the last of the group once sorted).
trait Grouped: Copy + Ord {
    /// A free slot: no record is this.
    const FREE: Self;
    fn same_group(&self, other: &Self) -> bool;
    /// A hash of the group.
    fn group_hash(&self) -> u64;
}

impl Grouped for Credit {
    /// No pair has the root's id.
    const FREE: Credit = Credit {
        pair: u64::MAX,
        file_hi: 0,
        lo: 0,
    };
    fn same_group(&self, other: &Self) -> bool {
        self.group() == other.group()
    }
    fn group_hash(&self) -> u64 {
        (self.pair.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(self.file()))
            .wrapping_mul(0xD6E8_FEB8_6659_FD93)
    }
}

impl Grouped for Detail {
    /// No listed pair has this index.
    const FREE: Detail = Detail {
        k: u32::MAX,
        file: 0,
        bytes: 0,
        identical: false,
        partner: 0,
    };
    fn same_group(&self, other: &Self) -> bool {
        (self.k, self.file) == (other.k, other.file)
    }
    fn group_hash(&self) -> u64 {
        (u64::from(self.k) << 32 | u64::from(self.file)).wrapping_mul(0xD6E8_FEB8_6659_FD93)
    }
}

/// The latest record of a few groups ((pair, file) for a [`Credit`],
/// (listed pair, file) for a [`Detail`]), direct-mapped by a hash of the
/// group: a file credited again in the same pair (by each of its partners
/// in the other folder, at the upper heights: a locale file linked to
/// every locale of the other release) is combined here, keeping the
/// greatest as [`Folders::figure`] keeps the last of the sorted records,
/// instead of being sorted and spilled once per partner.
struct Combiner<T: Grouped> {
    slots: Vec<T>,
    shift: u32,
}

impl<T: Grouped> Combiner<T> {
    /// At most `bytes` of slots, and [`COMBINED`] (a power of two of
    /// them, 256 at least).
    fn new(bytes: u64) -> Combiner<T> {
        let want = (bytes / std::mem::size_of::<T>() as u64).clamp(256, COMBINED);
        let bits = 63 - want.leading_zeros();
        Combiner {
            slots: vec![T::FREE; 1 << bits],
            shift: 64 - bits,
        }
    }

    fn bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<T>()) as u64
    }

    /// Combine `c` into its slot; the record it displaces, if any.
    #[inline]
    fn put(&mut self, c: T) -> Option<T> {
        let slot = &mut self.slots[(c.group_hash() >> self.shift) as usize];
        if slot.same_group(&c) {
            *slot = (*slot).max(c);
            return None;
        }
        let old = std::mem::replace(slot, c);
        (old != T::FREE).then_some(old)
    }

    /// The records held, the slots freed.
    fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.slots
            .iter_mut()
            .map(|s| std::mem::replace(s, T::FREE))
            .filter(|c| *c != T::FREE)
    }
}

/// A file's partner in the other folder of a listed pair ([`DETAILED`]):
/// sorted by pair, then file, the last of a file is its best (as
/// [`Credit`]'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Detail {
    /// The pair's index in the report.
    k: u32,
    file: u32,
    bytes: u64,
    identical: bool,
    partner: u32,
}

impl FixedRecord for Detail {
    const SIZE: usize = 21;
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.k.to_be_bytes());
        out[4..8].copy_from_slice(&self.file.to_be_bytes());
        out[8..16].copy_from_slice(&self.bytes.to_be_bytes());
        out[16] = self.identical as u8;
        out[17..21].copy_from_slice(&self.partner.to_be_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        Detail {
            k: u32_at(0),
            file: u32_at(4),
            bytes: u64::from_be_bytes(b[8..16].try_into().expect("8 bytes")),
            identical: b[16] != 0,
            partner: u32_at(17),
        }
    }
}

/// The first this many reported pairs get their file lists
/// ([`PairFiles`]): the pairs the html page shows.
pub const DETAILED: usize = 1_000;

/// Files a list of [`PairFiles`] names at most (the others are counted).
pub const LISTED: usize = 20;

/// The file-level differences of a folder pair, from A's side: each of
/// A's files is `same` (its best partner in B is identical), `changed`
/// (its best partner is a link) or only in A; B's files with no partner
/// in A are only in B. At most [`LISTED`] files a list, in id order (the
/// walk's); the counts are of all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PairFiles {
    /// (file of A, its partner in B).
    pub same: Vec<(u32, u32)>,
    pub same_count: u64,
    /// (file of A, its partner in B, bytes in common).
    pub changed: Vec<(u32, u32, u64)>,
    pub changed_count: u64,
    pub only_a: Vec<u32>,
    pub only_b: Vec<u32>,
    /// Whether the only-in lists could be made: each folder's files are
    /// one run of ids (the walk's order), else they are left empty.
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
    /// Files (of A and B together) whose best partner is identical to them.
    pub same: u64,
    /// Files whose best partner is a link (similar, not identical).
    pub changed: u64,
    pub only_a: u64,
    pub only_b: u64,
    /// When A and B are identical trees.
    pub tree: Option<TreeCopy>,
    /// Its family's index in [`FolderReport::families`].
    pub family: u32,
    /// Its file lists, for the first [`DETAILED`] pairs.
    pub files: Option<Box<PairFiles>>,
    /// The folders' ids.
    da: u32,
    db: u32,
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
}

impl FolderPair {
    /// The pair in the json report's `folders` list, with its file lists
    /// (paths relative to its folders) when it has them.
    pub fn to_json(&self, table: &CompactTable) -> serde_json::Value {
        let mut j = serde_json::json!({
            "a": escape_path_string(&self.a),
            "b": escape_path_string(&self.b),
            "percent": (self.percent() * 10.0).round() / 10.0,
            "files_a": self.files_a,
            "bytes_a": self.bytes_a,
            "files_b": self.files_b,
            "bytes_b": self.bytes_b,
            "a_in_b": self.a_in_b,
            "b_in_a": self.b_in_a,
            "same": self.same,
            "changed": self.changed,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "identical_trees": self.tree.is_some(),
            "family": self.family,
        });
        if let Some(f) = &self.files {
            j["files"] = self.files_json(f, table);
        }
        j
    }

    /// The json of its file lists (see [`PairFiles`]).
    fn files_json(&self, f: &PairFiles, table: &CompactTable) -> serde_json::Value {
        let rel = |id: u32, dir: &[u8]| {
            let p = table.at(id).path;
            escape_path_string(p.strip_prefix(dir).map_or(p, |r| &r[1..]))
        };
        let (a, b) = (&self.a[..], &self.b[..]);
        let more = |n: u64, listed: usize| n.saturating_sub(listed as u64);
        let only =
            |ids: &[u32], dir: &[u8]| -> Vec<String> { ids.iter().map(|&x| rel(x, dir)).collect() };
        serde_json::json!({
            "same": f.same.iter().map(|&(x, y)| [rel(x, a), rel(y, b)]).collect::<Vec<_>>(),
            "same_more": more(f.same_count, f.same.len()),
            "changed": f.changed.iter().map(|&(x, y, c)| serde_json::json!([
                rel(x, a),
                rel(y, b),
                (crate::formats::percent(c.min(table.at(x).size), table.at(x).size) * 10.0).round() / 10.0,
            ])).collect::<Vec<_>>(),
            "changed_more": more(f.changed_count, f.changed.len()),
            "only_a": only(&f.only_a, a),
            "only_a_more": more(self.only_a, f.only_a.len()),
            "only_b": only(&f.only_b, b),
            "only_b_more": more(self.only_b, f.only_b.len()),
            "only_listed": f.only_listed,
        })
    }

    /// The pair as a row of the tsv report: its columns read as a link's
    /// (type `folders`, the bytes of A in B and of B in A as the percent
    /// of a and of b).
    pub fn tsv(&self) -> String {
        format!(
            "folders\tfolder-pair\t{}\t{}\t{:.1}\t{}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}\t{}\t\t\n",
            self.files_a + self.files_b,
            self.bytes_a + self.bytes_b,
            self.percent(),
            self.a_in_b + self.b_in_a,
            crate::formats::percent(self.a_in_b, self.bytes_a),
            crate::formats::percent(self.b_in_a, self.bytes_b),
            self.bytes_a,
            self.bytes_b,
            escape_path_string(&self.a),
            escape_path_string(&self.b),
            self.bytes_a.min(self.bytes_b),
        )
    }
}

/// Which folder pairs of a match's chain ([`Folders::climb`]) a pass
/// credits.
enum Pass {
    /// The top pair only.
    Tops,
    /// The pairs below the top, when the top is not one of these (kept).
    Below(HashSet<(u32, u32), BuildHasherDefault<Mixed>>),
    /// Every pair (the file lists' pass).
    All,
}

/// What [`Folders::figure`] found.
#[derive(Debug, Default)]
pub struct FolderReport {
    /// Reported pairs, family by family ([`Family`]), most bytes explained
    /// first within each.
    pub pairs: Vec<FolderPair>,
    /// The families of `pairs`, in their order.
    pub families: Vec<Family>,
    /// Identical sets over [`SET_FANOUT`] files, which proposed no pairs.
    pub wide_sets: u64,
    /// Per group given to [`Folders::figure`] (the clusters, then the
    /// identical sets): the index in `pairs` of the folder pair that holds
    /// every file of it (all under one folder or the other), if any: a
    /// reviewer who handles that pair has handled the group.
    pub explains: Vec<Option<u32>>,
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
    /// Matches not credited yet: [`BATCH`] a worker at most.
    batch: Vec<Match>,
    /// A worker's sorter options (its share of the budget).
    sort: SortOptions,
    wide_sets: u64,
    /// The pairs kept so far ([`Folders::figure`]).
    kept: HashMap<(u32, u32), FolderPair>,
}

/// What every worker reads: the file table, its directories and identical
/// sets, the pass, and the listed pairs of the file lists' pass.
struct Shape<'a> {
    table: &'a CompactTable,
    dirs: Vec<Dir>,
    /// Each directory's parent and depth, 8 bytes a folder: what a match's
    /// climb reads at every height, in a table that stays in the cache
    /// (a [`Dir`] is 72 bytes).
    up: Vec<Up>,
    /// Directory of each file.
    dir_of: Vec<u32>,
    /// The identical set a representative file stands for, by file id
    /// ([`NO_SET`]: none, or one wider than [`SET_FANOUT`]): read for both
    /// files of every link, an index rather than a hash lookup.
    set_index: Vec<u32>,
    sets: &'a [SetRef<'a>],
    /// Which folder pairs of a match's chain are credited ([`Pass`]).
    pass: Pass,
    /// The file lists' pass ([`Folders::start_details`]): the listed
    /// pairs, by their folders.
    wanted: MixedMap<(u32, u32), u32>,
    /// Whether a folder is the lower of a listed pair: most heights of
    /// the file lists' pass are of no listed pair, and skip the hash lookup.
    wanted_da: Vec<bool>,
}

/// A folder's parent and depth ([`Shape::up`]).
#[derive(Debug, Clone, Copy)]
struct Up {
    parent: u32,
    depth: u32,
}

/// [`Shape::set_index`] of a file that stands for no set.
const NO_SET: u32 = u32::MAX;

/// One worker's credits. Aligned to two cache lines: each worker writes
/// its sorter's and combiner's fields at every credit, and two workers'
/// fields on one line made the line travel between the cores (a seventh of
/// the report's time on translation catalogs).
#[repr(align(128))]
struct Crediting {
    /// Every file's partners per folder pair, sorted on disk when they do
    /// not fit; taken by [`Folders::sweep`].
    credits: Option<ExternalSorter<Credit>>,
    /// Combines a file's credits in a pair before they are sorted.
    combiner: Combiner<Credit>,
    /// The file lists' pass: the files' partners in the listed pairs.
    details: Option<ExternalSorter<Detail>>,
    /// Combines a file's partners in a listed pair before they are sorted
    /// (the file lists' pass, which takes the credits' slots).
    detail_combiner: Combiner<Detail>,
    /// A match's chain of folder pairs, bottom up (reused).
    chain: Vec<(u32, u32)>,
}

/// A match to credit: a kept link between two representatives (`link`:
/// each file of one's identical set with each of the other's) or two
/// files of one identical set.
#[derive(Debug, Clone, Copy)]
struct Match {
    x: u32,
    y: u32,
    bytes: u64,
    link: bool,
}

/// Matches a worker credits a batch (24 bytes each): large enough that a
/// thread's start is nothing next to its work.
const BATCH: usize = 1 << 14;

/// A batch smaller than this is credited on the calling thread.
const ALONE: usize = 1 << 10;

/// The sorted streams of the workers as one, in order: a group's records
/// are together, its greatest last.
struct Merged<T: FixedRecord> {
    streams: Vec<Sorted<T>>,
    heads: Vec<Option<T>>,
}

impl<T: FixedRecord> Merged<T> {
    fn new(mut streams: Vec<Sorted<T>>) -> Result<Merged<T>> {
        let heads = streams
            .iter_mut()
            .map(|s| s.next_item())
            .collect::<Result<_>>()?;
        Ok(Merged { streams, heads })
    }

    fn next_item(&mut self) -> Result<Option<T>> {
        let mut at: Option<usize> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some(h) = h {
                if at.is_none_or(|k| self.heads[k].is_some_and(|m| *h < m)) {
                    at = Some(i);
                }
            }
        }
        let Some(i) = at else { return Ok(None) };
        let next = self.streams[i].next_item()?;
        Ok(std::mem::replace(&mut self.heads[i], next))
    }
}

impl<'a> Folders<'a> {
    /// The directories of `table`; the identical sets propose their pairs.
    /// `sort.memory` is what the folder pairs may hold: their directory
    /// table, the sorters' buffers (an eighth of what the table leaves, at
    /// most 64 MiB, shared by the workers: more only saves a merge pass;
    /// the sorted runs' merge and the allocator's slack take the rest)
    /// with their `Combiner`s (an eighth of a buffer, at most 1.5 MiB
    /// each), a batch of matches ([`BATCH`] a worker) and the pairs kept.
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
        let held = table_bytes(&dirs, &dir_of) + (up.len() * 8 + set_index.len() * 4) as u64;
        let threads = sort.threads.max(1);
        let share = (sort.memory.saturating_sub(held) / 8).clamp(MIN_MEMORY, 64 << 20);
        let share = share / threads as u64;
        let combined = (share / 8).min(COMBINED * std::mem::size_of::<Credit>() as u64);
        sort.memory = share.saturating_sub(combined).max(MIN_MEMORY);
        let workers = (0..threads)
            .map(|_| Crediting {
                credits: Some(credit_sorter(&sort)),
                combiner: Combiner::new(combined),
                details: None,
                detail_combiner: Combiner::new(0),
                chain: Vec::new(),
            })
            .collect();
        let mut f = Folders {
            shape: Shape {
                table,
                dirs,
                up,
                dir_of,
                set_index,
                sets,
                pass: Pass::Tops,
                wanted: MixedMap::default(),
                wanted_da: Vec::new(),
            },
            workers,
            batch: Vec::new(),
            sort,
            wide_sets: 0,
            kept: HashMap::new(),
        };
        f.wide_sets = f.propose_sets()?;
        Ok(f)
    }

    /// Propose the pairs of the identical sets; the number of sets too
    /// wide to. Two names of one file (hard links) are no copy: they pair
    /// no folders.
    fn propose_sets(&mut self) -> Result<u64> {
        let mut wide = 0;
        let sets = self.shape.sets;
        let table = self.shape.table;
        let one_file = |x: u32, y: u32| table.link(x).is_some() && table.link(x) == table.link(y);
        for s in sets {
            if s.files.len() > SET_FANOUT {
                wide += 1;
                continue;
            }
            for (i, &x) in s.files.iter().enumerate() {
                for &y in s.files[i + 1..].iter().filter(|&&y| !one_file(x, y)) {
                    self.add(Match {
                        x,
                        y,
                        bytes: s.size,
                        link: false,
                    })?;
                }
            }
        }
        Ok(wide)
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

    /// Add a match to the batch, which is credited when full.
    #[inline]
    fn add(&mut self, m: Match) -> Result<()> {
        self.batch.push(m);
        if self.batch.len() >= BATCH * self.workers.len() {
            self.flush()?;
        }
        Ok(())
    }

    /// Credit the batch, a contiguous share a worker (a file's links stay
    /// together for its combiner), each worker on a thread of its own.
    fn flush(&mut self) -> Result<()> {
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
fn credit_sorter(sort: &SortOptions) -> ExternalSorter<Credit> {
    ExternalSorter::new(sort.clone()).keep_last_of(|a, b| a.group() == b.group())
}

impl Shape<'_> {
    /// Credit match `m` with worker `w`'s combiners and sorters.
    fn credit(&self, w: &mut Crediting, m: &Match) -> Result<()> {
        if !m.link {
            return self.propose(w, m.x, m.y, m.bytes, true);
        }
        for &x in self.members(&m.x) {
            for &y in self.members(&m.y) {
                self.propose(w, x, y, m.bytes, false)?;
            }
        }
        Ok(())
    }

    /// The files a representative stands for (itself when its set is
    /// wider than [`SET_FANOUT`]).
    fn members<'s>(&'s self, f: &'s u32) -> &'s [u32] {
        match self.set_index[*f as usize] {
            NO_SET => std::slice::from_ref(f),
            s => self.sets[s as usize].files,
        }
    }

    /// Credit `x` and `y` to each other in their folders at the aligned
    /// heights below the first folder they share that this [`Pass`] figures.
    fn propose(
        &self,
        w: &mut Crediting,
        x: u32,
        y: u32,
        bytes: u64,
        identical: bool,
    ) -> Result<()> {
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
        let mut done = Ok(());
        for &p in &chain[credited] {
            done = self.pair_at(w, p, x, y, bytes, identical);
            if done.is_err() {
                break;
            }
        }
        w.chain = chain;
        done
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

    /// Credit `x` and `y` to each other in folder pair `(da, db)`: in the
    /// first passes through the [`Combiner`] to the sorter, in the file
    /// lists' pass for their lists when it is a listed pair.
    #[inline]
    fn pair_at(
        &self,
        w: &mut Crediting,
        (da, db): (u32, u32),
        x: u32,
        y: u32,
        bytes: u64,
        identical: bool,
    ) -> Result<()> {
        if let Some(credits) = &mut w.credits {
            for file in [x, y] {
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
            for (file, partner) in [(x, y), (y, x)] {
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

impl<'a> Folders<'a> {
    /// The pairs at or above `min_percent` none of whose ancestor pairs is, and
    /// which of them explains each of `groups` (sets of file ids), from the
    /// kept links that `links` gives ([`Folders::link`]), twice.
    ///
    /// Two passes, the top pair of each match's chain first: a pair under a
    /// kept top is never reported, and in a tree of releases nearly every
    /// match is between two releases whose top pair is kept, so the second
    /// pass credits the pairs below the tops that are not kept only (on
    /// Django + moment, a fifth of the credits of one pass over every
    /// height). Same pairs, same figures: every match through a pair has
    /// that pair's top, so a top's figures are whole after the first pass,
    /// and a pair below a top that is not kept after the second.
    pub fn figure(
        &mut self,
        min_percent: f64,
        groups: &[&[u32]],
        mut links: impl FnMut(&mut Folders<'a>) -> Result<()>,
    ) -> Result<FolderReport> {
        links(self)?;
        let mut kept = std::mem::take(&mut self.kept);
        self.sweep(min_percent, &mut kept)?;
        self.shape.pass = Pass::Below(kept.keys().copied().collect());
        for w in &mut self.workers {
            w.credits = Some(credit_sorter(&self.sort));
        }
        self.propose_sets()?;
        links(self)?;
        self.sweep(min_percent, &mut kept)?;
        self.shape.pass = Pass::All;
        // The file lists' pass combines its records in the credits' slots.
        for w in &mut self.workers {
            let slots = w.combiner.bytes();
            w.combiner = Combiner::new(0);
            w.detail_combiner = Combiner::new(slots);
        }
        let mut pairs: Vec<FolderPair> = kept.into_values().collect();
        pairs.sort_by(|x, y| {
            (y.a_in_b + y.b_in_a)
                .cmp(&(x.a_in_b + x.b_in_a))
                .then_with(|| x.a.cmp(&y.a))
                .then_with(|| x.b.cmp(&y.b))
        });
        let (mut pairs, families) = by_family(pairs);
        for p in &mut pairs {
            p.tree = identical_trees(self.shape.table, &self.shape.dirs, p);
        }
        let explains = explains(&self.shape.dirs, &self.shape.dir_of, &pairs, groups);
        Ok(FolderReport {
            pairs,
            families,
            wide_sets: self.wide_sets,
            explains,
        })
    }

    /// Sort the credits of a pass and figure their pairs into `kept`.
    ///
    /// Held: the kept pairs only. A folder's id is above its parent's
    /// (interned parent first), so the credits, sorted by (lower id, higher
    /// id), bring every ancestor pair of a pair before it: a pair is kept
    /// when it is at the threshold and no kept pair is among its ancestors
    /// (an ancestor at the threshold has a kept pair above it or is one).
    /// The sub-folder pairs of copied trees, which may be links × depth,
    /// are figured one at a time and dropped.
    fn sweep(
        &mut self,
        min_percent: f64,
        kept: &mut HashMap<(u32, u32), FolderPair>,
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
                self.close(acc.take(), min_percent, kept);
            }
            last = Some(c);
        }
        if let Some(l) = last {
            self.credit(&mut acc, l);
        }
        self.close(acc, min_percent, kept);
        Ok(())
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
            p.only_a -= 1;
        } else {
            p.b_in_a += bytes;
            p.only_b -= 1;
        }
        if c.identical() {
            p.same += 1;
        } else {
            p.changed += 1;
        }
    }

    /// Keep pair `p` (its figures complete) when it is at `min_percent` and
    /// no pair of its ancestors at the same heights is kept.
    fn close(
        &self,
        p: Option<FolderPair>,
        min_percent: f64,
        kept: &mut HashMap<(u32, u32), FolderPair>,
    ) {
        let Some(mut p) = p.filter(|p| p.percent() >= min_percent) else {
            return;
        };
        let dirs = &self.shape.dirs;
        let (mut pa, mut pb) = (dirs[p.da as usize].parent, dirs[p.db as usize].parent);
        while pa != ROOT && pb != ROOT && pa != pb {
            if kept.contains_key(&(pa.min(pb), pa.max(pb))) {
                return;
            }
            pa = dirs[pa as usize].parent;
            pb = dirs[pb as usize].parent;
        }
        p.a.clone_from(&dirs[p.da as usize].path);
        p.b.clone_from(&dirs[p.db as usize].path);
        kept.insert((p.da, p.db), p);
    }

    /// Start the second pass, which lists the files of the first
    /// [`DETAILED`] pairs of `r`: the identical sets propose again; the
    /// caller gives the kept links again ([`Folders::link`]) and calls
    /// [`Folders::finish_details`].
    pub fn start_details(&mut self, r: &FolderReport) -> Result<()> {
        let shape = &mut self.shape;
        shape.wanted = r
            .pairs
            .iter()
            .take(DETAILED)
            .enumerate()
            .map(|(k, p)| ((p.da, p.db), k as u32))
            .collect();
        shape.wanted_da = vec![false; shape.dirs.len()];
        for &(da, _) in shape.wanted.keys() {
            shape.wanted_da[da as usize] = true;
        }
        let same = |a: &Detail, b: &Detail| (a.k, a.file) == (b.k, b.file);
        for w in &mut self.workers {
            w.details = Some(ExternalSorter::new(self.sort.clone()).keep_last_of(same));
        }
        self.propose_sets()?;
        Ok(())
    }

    /// The file lists of the pairs [`Folders::start_details`] chose, into
    /// `r`.
    pub fn finish_details(&mut self, r: &mut FolderReport) -> Result<()> {
        if self.workers[0].details.is_none() {
            return Ok(());
        }
        self.flush()?;
        let mut streams = Vec::with_capacity(self.workers.len());
        for w in &mut self.workers {
            let mut details = w.details.take().expect("details started");
            for d in w.detail_combiner.drain() {
                details.push(d)?;
            }
            w.detail_combiner = Combiner::new(0);
            streams.push(details.finish()?);
        }
        let n = self.shape.wanted.len();
        let mut lists: Vec<Lister> = r.pairs[..n]
            .iter()
            .map(|p| Lister::new(&self.shape.dirs, p))
            .collect();
        let mut sorted = Merged::new(streams)?;
        let mut last: Option<Detail> = None;
        while let Some(d) = sorted.next_item()? {
            if let Some(l) = last.filter(|l| (l.k, l.file) != (d.k, d.file)) {
                lists[l.k as usize].best(&self.shape.dirs, &self.shape.dir_of, l);
            }
            last = Some(d);
        }
        if let Some(l) = last {
            lists[l.k as usize].best(&self.shape.dirs, &self.shape.dir_of, l);
        }
        for (p, l) in r.pairs.iter_mut().zip(lists) {
            p.files = Some(Box::new(l.end()));
        }
        self.shape.wanted.clear();
        Ok(())
    }
}

/// The file lists of one pair as its files' best partners come, in file
/// id order.
struct Lister {
    da: u32,
    /// The folders' runs of ids (none when their files are not one run)
    /// and the next id of each not yet seen.
    runs: Option<[std::ops::RangeInclusive<u32>; 2]>,
    next: [u32; 2],
    files: PairFiles,
}

impl Lister {
    fn new(dirs: &[Dir], p: &FolderPair) -> Lister {
        let (a, b) = (&dirs[p.da as usize], &dirs[p.db as usize]);
        let runs = a.run().zip(b.run()).map(|(x, y)| [x, y]);
        Lister {
            da: p.da,
            next: [a.first, b.first],
            files: PairFiles {
                only_listed: runs.is_some(),
                ..PairFiles::default()
            },
            runs,
        }
    }

    /// The files from `next` up to `to` (excluded) on `side` have no
    /// partner: listed while the list has room.
    fn skip_to(&mut self, side: usize, to: u32) {
        let Some(runs) = &self.runs else { return };
        let list = if side == 0 {
            &mut self.files.only_a
        } else {
            &mut self.files.only_b
        };
        let end = to.min(runs[side].end().saturating_add(1));
        let room = LISTED.saturating_sub(list.len()) as u32;
        let from = self.next[side];
        list.extend(from..end.min(from.saturating_add(room)).max(from));
        self.next[side] = self.next[side].max(to);
    }

    /// File `d.file`'s best partner `d`.
    fn best(&mut self, dirs: &[Dir], dir_of: &[u32], d: Detail) {
        let side = usize::from(!contains(dirs, self.da, dir_of[d.file as usize]));
        self.skip_to(side, d.file);
        self.next[side] = self.next[side].max(d.file + 1);
        if side == 1 {
            return;
        }
        let f = &mut self.files;
        if d.identical {
            f.same_count += 1;
            if f.same.len() < LISTED {
                f.same.push((d.file, d.partner));
            }
        } else {
            f.changed_count += 1;
            if f.changed.len() < LISTED {
                f.changed.push((d.file, d.partner, d.bytes));
            }
        }
    }

    fn end(mut self) -> PairFiles {
        if let Some([a, b]) = self.runs.clone() {
            self.skip_to(0, a.end() + 1);
            self.skip_to(1, b.end() + 1);
        }
        self.files
    }
}

/// Whether the folders of `p` are identical trees: each one run of ids
/// (the walk's order) of as many files, file by file the same relative
/// path, size and content.
fn identical_trees(table: &CompactTable, dirs: &[Dir], p: &FolderPair) -> Option<TreeCopy> {
    if p.changed > 0 || p.files_a != p.files_b || p.bytes_a != p.bytes_b {
        return None;
    }
    let (a, b) = (&dirs[p.da as usize], &dirs[p.db as usize]);
    let (ra, rb) = (a.run()?, b.run()?);
    let same = ra.clone().zip(rb).all(|(x, y)| {
        let (fx, fy) = (table.at(x), table.at(y));
        fx.size == fy.size
            && fx.content == fy.content
            && fx.path.get(a.path.len()..) == fy.path.get(b.path.len()..)
    });
    same.then(|| TreeCopy {
        first_a: *ra.start(),
        first_b: b.first,
        files: a.files as u32,
    })
}

/// Families of more than this many pairs are listed in part by the text
/// report (and the html page folds them): sibling folders alike in their
/// boilerplate, such as the locale folders of every app of a release.
pub const CROWD: usize = 10;

/// A family of folder pairs: the same relation between the same kind of
/// folders, read as one fact (every app's `locale/*/LC_MESSAGES` alike,
/// each release of `corpus/*` a version of the next).
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// The pairs' paths with the one component their folders differ in
    /// written `*` (`django-5.1.4/django/conf/locale/*/LC_MESSAGES`, two
    /// releases `corpus/*`); `.../locale/*/LC_MESSAGES` when its pairs are
    /// under several such parents; else `PARENT_A | PARENT_B`, or
    /// `.../x/a | .../y/b` ([`family_key`]).
    pub label: Vec<u8>,
    /// Its pairs: `first..first + len` of the report's pairs.
    pub first: u32,
    pub len: u32,
    /// The folders its pairs pair, each counted once.
    pub folders: u32,
    pub percent_min: f64,
    pub percent_max: f64,
}

impl Family {
    /// The family in the json report's `folder_families` list.
    pub fn to_json(&self) -> serde_json::Value {
        let round = |x: f64| (x * 10.0).round() / 10.0;
        serde_json::json!({
            "pattern": escape_path_string(&self.label),
            "first": self.first,
            "pairs": self.len,
            "folders": self.folders,
            "percent_min": round(self.percent_min),
            "percent_max": round(self.percent_max),
        })
    }
}

/// The family key and label of two folders. Of the same depth and
/// differing in one component: the key is that component's parent's name,
/// `*` and the components after it (`locale/*/LC_MESSAGES`: the locale
/// folders of every app and release are one family, however many parents
/// they are under), the label the whole path with `*`. Else the key is the
/// last two components of each (`i18n/loading | loading_app/locale`: the
/// same two test folders paired in every release and across releases are
/// one family), the label the folders' two parents.
fn family_key(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (ca, cb): (Vec<&[u8]>, Vec<&[u8]>) = (
        a.split(|&c| c == b'/').collect(),
        b.split(|&c| c == b'/').collect(),
    );
    let differ: Vec<usize> = (0..ca.len().min(cb.len()))
        .filter(|&i| ca[i] != cb[i])
        .collect();
    if ca.len() == cb.len() && differ.len() == 1 {
        let mut parts = ca.clone();
        parts[differ[0]] = b"*";
        let key = parts[differ[0].saturating_sub(1)..].join(&b'/');
        return (key, parts.join(&b'/'));
    }
    let parent = |x: &[u8]| x[..x.iter().rposition(|&c| c == b'/').unwrap_or(0)].to_vec();
    let label = [parent(a), b" | ".to_vec(), parent(b)].concat();
    let tail = |c: &[&[u8]]| c[c.len().saturating_sub(2)..].join(&b'/');
    let (ta, tb) = (tail(&ca), tail(&cb));
    let key = [ta.clone().min(tb.clone()), b" | ".to_vec(), ta.max(tb)].concat();
    (key, label)
}

/// The label of a family whose pairs are under several parents: its key,
/// each side after `.../`.
fn mixed_label(key: &[u8]) -> Vec<u8> {
    let sides: Vec<Vec<u8>> = key
        .split(|&c| c == b'|')
        .map(|x| [&b".../"[..], x.trim_ascii()].concat())
        .collect();
    sides.join(&b" | "[..])
}

/// `pairs` (most bytes explained first) regrouped family by family
/// ([`family_key`]), in the order of each family's first pair (the one
/// explaining most bytes: a sum over a family would count a folder of many
/// pairs many times), each family's pairs in their order; and the
/// families. Every format lists the pairs in this order.
fn by_family(pairs: Vec<FolderPair>) -> (Vec<FolderPair>, Vec<Family>) {
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut labels: Vec<Vec<u8>> = Vec::new();
    for (k, p) in pairs.iter().enumerate() {
        let (key, label) = family_key(&p.a, &p.b);
        if let Some(&i) = index.get(&key) {
            members[i].push(k as u32);
            if labels[i] != label {
                labels[i] = mixed_label(&key);
            }
        } else {
            index.insert(key, members.len());
            members.push(vec![k as u32]);
            labels.push(label);
        }
    }
    drop(index);
    let mut slots: Vec<Option<FolderPair>> = pairs.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    let mut fams = Vec::with_capacity(members.len());
    for (f, (ks, label)) in members.into_iter().zip(labels).enumerate() {
        let first = out.len() as u32;
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        let mut folders: Vec<u32> = Vec::with_capacity(2 * ks.len());
        for &k in &ks {
            let mut p = slots[k as usize].take().expect("a pair is in one family");
            p.family = f as u32;
            lo = lo.min(p.percent());
            hi = hi.max(p.percent());
            folders.extend([p.da, p.db]);
            out.push(p);
        }
        folders.sort_unstable();
        folders.dedup();
        fams.push(Family {
            label,
            first,
            len: ks.len() as u32,
            folders: folders.len() as u32,
            percent_min: lo,
            percent_max: hi,
        });
    }
    (out, fams)
}

/// For each group, the first of `pairs` (in the report's order) whose two
/// folders hold all its files; a group of files all in one folder of no
/// pair is left unmarked. One folder of such a pair holds the group's
/// first file, the other the first file outside it: O(files × depth²) a
/// group, whatever the number of pairs.
fn explains(
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

/// Pair (`da`, `db`) before its credits: every file only in its folder.
fn empty_pair(dirs: &[Dir], da: u32, db: u32) -> FolderPair {
    let (a, b) = (&dirs[da as usize], &dirs[db as usize]);
    FolderPair {
        // The paths only for a pair that is kept (see `Folders::close`).
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
        only_a: a.files,
        only_b: b.files,
        tree: None,
        files: None,
        family: 0,
        da,
        db,
    }
}

/// The bytes of a directory table ([`directories`]).
fn table_bytes(dirs: &Vec<Dir>, dir_of: &Vec<u32>) -> u64 {
    let paths: usize = dirs.iter().map(|d| d.path.capacity() + 16).sum();
    (dirs.capacity() * std::mem::size_of::<Dir>() + paths + dir_of.capacity() * 4) as u64
}

impl FolderReport {
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

/// Whether folder `outer` holds folder `inner` (at any depth).
fn contains(dirs: &[Dir], outer: u32, mut inner: u32) -> bool {
    let depth = dirs[outer as usize].depth;
    while inner != ROOT && dirs[inner as usize].depth > depth {
        inner = dirs[inner as usize].parent;
    }
    inner == outer
}

/// Every directory of the table's paths (interned, with recursive file
/// counts and bytes) and the directory of each file.
fn directories(table: &CompactTable) -> (Vec<Dir>, Vec<u32>) {
    let mut dirs: Vec<Dir> = Vec::new();
    let mut id_of: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut dir_of = Vec::with_capacity(table.len());
    for id in 0..table.len() as u32 {
        let f = table.at(id);
        let Some(cut) = f.path.iter().rposition(|&c| c == b'/') else {
            dir_of.push(ROOT);
            continue;
        };
        let d = intern(&mut dirs, &mut id_of, &f.path[..cut]);
        dir_of.push(d);
        let mut up = d;
        while up != ROOT {
            let dir = &mut dirs[up as usize];
            dir.files += 1;
            dir.bytes += f.size;
            dir.first = dir.first.min(id);
            dir.last = dir.last.max(id);
            up = dir.parent;
        }
    }
    (dirs, dir_of)
}

/// The id of directory `path`, added with its ancestors when new.
fn intern(dirs: &mut Vec<Dir>, id_of: &mut HashMap<Vec<u8>, u32>, path: &[u8]) -> u32 {
    if let Some(&d) = id_of.get(path) {
        return d;
    }
    let (parent, depth) = match path.iter().rposition(|&c| c == b'/') {
        Some(0) | None => (ROOT, 0),
        Some(cut) => {
            let p = intern(dirs, id_of, &path[..cut]);
            (p, dirs[p as usize].depth + 1)
        }
    };
    let d = dirs.len() as u32;
    dirs.push(Dir {
        path: path.to_vec(),
        parent,
        depth,
        files: 0,
        bytes: 0,
        first: u32::MAX,
        last: 0,
    });
    id_of.insert(path.to_vec(), d);
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::files::{FileEntry, FileType};
    use std::collections::BTreeMap;

    /// A table of (path, size, content) and its identical sets.
    fn table(files: &[(&str, u64, u128)]) -> (CompactTable, Vec<Set>, HashMap<u32, usize>) {
        let mut t = CompactTable::default();
        for (i, &(p, size, content)) in files.iter().enumerate() {
            t.push(&FileEntry {
                id: i as u32,
                size,
                content,
                ftype: FileType::Text,
                view: crate::formats::FileView::raw(size),
                path: p.as_bytes().to_vec(),
                mtime_s: 0,
                mtime_ns: 0,
            });
        }
        let mut by: BTreeMap<u128, Vec<u32>> = BTreeMap::new();
        for (i, f) in files.iter().enumerate() {
            by.entry(f.2).or_default().push(i as u32);
        }
        let mut sets = Vec::new();
        let mut set_of = HashMap::new();
        for v in by.into_values() {
            if v.len() > 1 {
                set_of.insert(v[0], sets.len());
                sets.push(Set {
                    size: files[v[0] as usize].1,
                    files: v,
                });
            }
        }
        (t, sets, set_of)
    }

    struct Set {
        size: u64,
        files: Vec<u32>,
    }

    fn set_refs(sets: &[Set]) -> Vec<SetRef<'_>> {
        sets.iter()
            .map(|s| SetRef {
                size: s.size,
                files: &s.files,
            })
            .collect()
    }

    /// A budget small enough that a few credits spill to disk.
    fn sort() -> SortOptions {
        SortOptions::with_memory(crate::io::sorter::MIN_MEMORY)
    }

    fn paths(r: &FolderReport) -> Vec<(String, String)> {
        r.pairs
            .iter()
            .map(|p| {
                (
                    String::from_utf8_lossy(&p.a).into_owned(),
                    String::from_utf8_lossy(&p.b).into_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn two_folders_of_two_files() {
        // r/A/x = r/B/x; r/A/y and r/B/y share 600 of 1,000 bytes.
        let (t, sets, set_of) = table(&[
            ("r/A/x", 400, 1),
            ("r/A/y", 1000, 2),
            ("r/B/x", 400, 1),
            ("r/B/y", 1000, 3),
        ]);
        let sr = set_refs(&sets);
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        let r = f.figure(50.0, &[], |f| f.link(1, 3, 600)).unwrap();
        assert_eq!(paths(&r), [("r/A".into(), "r/B".into())]);
        let p = &r.pairs[0];
        assert_eq!((p.a_in_b, p.b_in_a), (1000, 1000));
        assert_eq!((p.same, p.changed, p.only_a, p.only_b), (2, 2, 0, 0));
        assert_eq!((p.files_a, p.bytes_a), (2, 1400));
        assert!((p.percent() - 1000.0 / 14.0).abs() < 1e-9);
    }

    #[test]
    fn a_sub_folder_pair_under_a_reported_pair_is_not_listed() {
        // (p1, p2) at 75 %; (p1/x, p2/x) at 9 %; (p1/x/sub, p2/x/sub) at
        // 100 %, yet inside the reported (p1, p2).
        let (t, sets, set_of) = table(&[
            ("w/p1/x/sub/a", 100, 1),
            ("w/p1/x/big", 1000, 2),
            ("w/p1/y/c", 3000, 3),
            ("w/p2/x/sub/a", 100, 1),
            ("w/p2/x/big", 1000, 4),
            ("w/p2/y/c", 3000, 3),
        ]);
        let sr = set_refs(&sets);
        let r = Folders::new(&t, &sr, &set_of, sort())
            .unwrap()
            .figure(50.0, &[], |_| Ok(()))
            .unwrap();
        assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
    }

    #[test]
    fn a_pair_under_a_top_that_is_not_kept_is_found_in_the_second_pass() {
        // (p1, p2) at 18 %: their x/ folders are copies (100 %), and x/sub
        // too, inside the reported x/ pair.
        let (t, sets, set_of) = table(&[
            ("w/p1/x/a", 1000, 1),
            ("w/p1/x/sub/s", 100, 4),
            ("w/p1/y/big", 5000, 2),
            ("w/p2/x/a", 1000, 1),
            ("w/p2/x/sub/s", 100, 4),
            ("w/p2/y/big", 5000, 3),
        ]);
        let sr = set_refs(&sets);
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        let r = f.figure(50.0, &[], |f| f.link(2, 5, 100)).unwrap();
        assert_eq!(paths(&r), [("w/p1/x".into(), "w/p2/x".into())]);
        let p = &r.pairs[0];
        assert_eq!((p.a_in_b, p.b_in_a, p.same), (1100, 1100, 4));
        let r = Folders::new(&t, &sr, &set_of, sort())
            .unwrap()
            .figure(10.0, &[], |f| f.link(2, 5, 100))
            .unwrap();
        assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
        assert_eq!((r.pairs[0].a_in_b, r.pairs[0].changed), (1200, 2));
    }

    #[test]
    fn groups_inside_a_pair_are_explained_by_it() {
        let (t, sets, set_of) = table(&[
            ("w/p1/src/a", 500, 1),
            ("w/p1/src/b", 500, 2),
            ("w/p2/src/a", 500, 1),
            ("w/p2/src/b", 500, 4),
            ("w/x/c", 500, 5),
            ("w/y/c", 500, 6),
        ]);
        let sr = set_refs(&sets);
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        // The set {0, 2} and the link {1, 3} are inside p1/p2's pair; the
        // link {4, 5} is between folders of no pair; {0, 4} spans both.
        let groups: [&[u32]; 4] = [&[0, 2], &[1, 3], &[4, 5], &[0, 4]];
        let r = f
            .figure(50.0, &groups, |f| {
                f.link(1, 3, 450)?;
                f.link(4, 5, 100)
            })
            .unwrap();
        assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
        assert_eq!(r.explains, [Some(0), Some(0), None, None]);
    }

    #[test]
    fn copied_trees_report_their_top_folders_only() {
        // Two copies of a project with two sub-folders, one file edited,
        // one file only in the copy.
        let (t, sets, set_of) = table(&[
            ("w/p1/src/a", 500, 1),
            ("w/p1/src/b", 500, 2),
            ("w/p1/doc/c", 500, 3),
            ("w/p2/src/a", 500, 1),
            ("w/p2/src/b", 500, 4),
            ("w/p2/doc/c", 500, 3),
            ("w/p2/doc/new", 300, 5),
        ]);
        let sr = set_refs(&sets);
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        let r = f.figure(50.0, &[], |f| f.link(1, 4, 450)).unwrap();
        assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
        let p = &r.pairs[0];
        assert_eq!((p.a_in_b, p.b_in_a), (1450, 1450));
        assert_eq!((p.same, p.changed, p.only_a, p.only_b), (4, 2, 0, 1));
    }

    #[test]
    fn the_second_pass_lists_a_pairs_files_and_finds_identical_trees() {
        let (t, sets, set_of) = table(&[
            ("w/p1/src/a", 500, 1),
            ("w/p1/src/b", 500, 2),
            ("w/p1/doc/c", 500, 3),
            ("w/p2/src/a", 500, 1),
            ("w/p2/src/b", 500, 4),
            ("w/p2/doc/c", 500, 3),
            ("w/p2/doc/new", 300, 5),
            ("v/q1/x", 200, 6),
            ("v/q1/s/y", 0, 0),
            ("v/q2/x", 200, 6),
            ("v/q2/s/y", 0, 0),
        ]);
        let sr = set_refs(&sets);
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        let mut r = f.figure(50.0, &[], |f| f.link(1, 4, 450)).unwrap();
        f.start_details(&r).unwrap();
        f.link(1, 4, 450).unwrap();
        f.finish_details(&mut r).unwrap();
        assert_eq!(
            paths(&r),
            [
                ("w/p1".into(), "w/p2".into()),
                ("v/q1".into(), "v/q2".into())
            ]
        );
        let l = r.pairs[0].files.as_deref().unwrap();
        assert_eq!((&l.same[..], l.same_count), (&[(0, 3), (2, 5)][..], 2));
        assert_eq!((&l.changed[..], l.changed_count), (&[(1, 4, 450)][..], 1));
        assert_eq!((&l.only_a[..], &l.only_b[..]), (&[][..], &[6][..]));
        assert!(l.only_listed && r.pairs[0].tree.is_none());
        // q1 and q2: the same paths and contents, an empty file included.
        let want = TreeCopy {
            first_a: 7,
            first_b: 9,
            files: 2,
        };
        assert_eq!(r.pairs[1].tree, Some(want));
        let l = r.pairs[1].files.as_deref().unwrap();
        assert_eq!((&l.only_a[..], &l.only_b[..]), (&[8][..], &[10][..]));
    }

    #[test]
    fn unrelated_folders_and_nested_copies_are_not_paired() {
        // A folder and a copy of it inside itself: not a pair; unrelated
        // folders sharing one small file of many: under the threshold.
        let (t, sets, set_of) = table(&[
            ("r/A/x", 400, 1),
            ("r/A/old/x", 400, 1),
            ("r/C/lic", 100, 7),
            ("r/C/big", 9000, 8),
            ("r/D/lic", 100, 7),
            ("r/D/other", 9000, 9),
        ]);
        let sr = set_refs(&sets);
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        let r = f.figure(50.0, &[], |_| Ok(())).unwrap();
        assert!(r.pairs.is_empty(), "{:?}", paths(&r));
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        let r = f.figure(0.0, &[], |_| Ok(())).unwrap();
        assert_eq!(paths(&r), [("r/C".into(), "r/D".into())]);
    }

    #[test]
    fn a_file_with_many_partners_counts_once() {
        // A/x matches three files of B: A's figure is x's size at most.
        let (t, sets, set_of) = table(&[
            ("r/A/x", 1000, 1),
            ("r/B/y1", 1000, 2),
            ("r/B/y2", 1000, 3),
            ("r/B/y3", 1000, 4),
        ]);
        let sr = set_refs(&sets);
        let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
        let r = f
            .figure(0.0, &[], |f| {
                (1..4).try_for_each(|y| f.link(0, y, 900 + y as u64))
            })
            .unwrap();
        let p = &r.pairs[0];
        assert_eq!(p.a_in_b, 903);
        assert_eq!(p.b_in_a, 901 + 902 + 903);
    }

    #[test]
    fn wide_identical_sets_propose_nothing_and_are_counted() {
        let mut files: Vec<(String, u64, u128)> = Vec::new();
        for k in 0..=SET_FANOUT {
            files.push((format!("r/d{k}/LICENSE"), 1000, 1));
            files.push((format!("r/d{k}/main"), 1000, 100 + k as u128));
        }
        let refs: Vec<(&str, u64, u128)> =
            files.iter().map(|(p, s, c)| (p.as_str(), *s, *c)).collect();
        let (t, sets, set_of) = table(&refs);
        let sr = set_refs(&sets);
        let r = Folders::new(&t, &sr, &set_of, sort())
            .unwrap()
            .figure(0.0, &[], |_| Ok(()))
            .unwrap();
        assert!(r.pairs.is_empty());
        assert_eq!(r.wide_sets, 1);
    }

    /// `copies` copies of a project of 3 folders × 10 files (path, size,
    /// content); in copy k, file k of each folder `edited` names has a new
    /// content of its own (1000 + k, the same in its folders).
    fn copied_projects(copies: u128, edited: impl Fn(&str) -> bool) -> Vec<(String, u64, u128)> {
        let mut files = Vec::new();
        for k in 0..copies {
            for (s, sub) in ["src", "doc", "test"].into_iter().enumerate() {
                for i in 0..10u128 {
                    let content = if edited(sub) && i == k % 10 {
                        1000 + k
                    } else {
                        i * 10 + s as u128
                    };
                    files.push((format!("w/p{k:02}/{sub}/f{i}"), 100 + i as u64, content));
                }
            }
        }
        files
    }

    #[test]
    fn twenty_copied_projects_spill_and_pair_at_their_tops() {
        // 20 copies of a project of 3 folders × 10 files; in copy k, file
        // k of src/ is edited (a new content, linked to the others).
        let files = copied_projects(20, |sub| sub == "src");
        let refs: Vec<(&str, u64, u128)> =
            files.iter().map(|(p, s, c)| (p.as_str(), *s, *c)).collect();
        let (t, sets, set_of) = table(&refs);
        let sr = set_refs(&sets);
        let run = |sort: SortOptions| {
            let mut f = Folders::new(&t, &sr, &set_of, sort).unwrap();
            f.figure(50.0, &[], |f| {
                for (x, fx) in files.iter().enumerate() {
                    for (y, fy) in files.iter().enumerate().skip(x + 1) {
                        if fx.2 >= 1000 && fy.2 >= 1000 && fx.0.ends_with(&fy.0[7..]) {
                            f.link(x as u32, y as u32, 90)?;
                        }
                    }
                }
                Ok(())
            })
            .unwrap()
        };
        let small = run(sort());
        assert_eq!(small.pairs, run(SortOptions::with_memory(64 << 20)).pairs);
        assert_eq!(small.pairs.len(), 20 * 19 / 2);
        assert!(small.pairs.iter().all(|p| p.a.len() == 5 && p.b.len() == 5));
        let p = &small.pairs[0];
        assert_eq!((p.files_a, p.files_b, p.only_a, p.only_b), (30, 30, 0, 0));
    }

    /// Credited by one, two or three workers, in memory or spilled, the
    /// pairs, their figures and their file lists are the same: enough
    /// matches (the identical sets of 40 copies of a project) that the
    /// batches are shared between threads.
    #[test]
    fn the_figures_do_not_depend_on_the_number_of_workers() {
        let files = copied_projects(40, |sub| sub != "doc");
        let refs: Vec<(&str, u64, u128)> =
            files.iter().map(|(p, s, c)| (p.as_str(), *s, *c)).collect();
        let (t, sets, set_of) = table(&refs);
        let sr = set_refs(&sets);
        let links = |f: &mut Folders| -> Result<()> {
            for (x, fx) in files.iter().enumerate() {
                for (y, fy) in files.iter().enumerate().skip(x + 1) {
                    if fx.2 >= 1000 && fy.2 >= 1000 && fx.0.ends_with(&fy.0[7..]) {
                        f.link(x as u32, y as u32, 60 + (x * y % 40) as u64)?;
                    }
                }
            }
            Ok(())
        };
        let run = |threads: usize, memory: u64| {
            let mut opts = SortOptions::with_memory(memory);
            opts.threads = threads;
            let mut f = Folders::new(&t, &sr, &set_of, opts).unwrap();
            assert_eq!(f.workers.len(), threads);
            let mut r = f.figure(50.0, &[], links).unwrap();
            f.start_details(&r).unwrap();
            links(&mut f).unwrap();
            f.finish_details(&mut r).unwrap();
            r
        };
        let one = run(1, 64 << 20);
        assert_eq!(one.pairs.len(), 40 * 39 / 2);
        assert!(one.pairs[0]
            .files
            .as_ref()
            .is_some_and(|l| l.same_count > 0));
        for (threads, memory) in [
            (2, 64 << 20),
            (3, 64 << 20),
            (2, MIN_MEMORY),
            (3, MIN_MEMORY),
        ] {
            let r = run(threads, memory);
            assert_eq!(r.pairs, one.pairs, "{threads} workers, {memory} bytes");
            assert_eq!(r.families, one.families);
        }
    }

    #[test]
    fn packed_credits_sort_as_their_fields_and_round_trip() {
        let fields = [
            (1, 2, 3, 5_000_000_000, false),
            (1, 2, 3, 4_999_999_999, true),
            (1, 2, 3, 1 << 32, false),
            (1, 2, 3, (1 << 32) - 1, true),
            (1, 2, 4, 0, false),
            (1, 3, 0, 7, true),
            (2, 0, 0, 0, false),
            (0, u32::MAX - 1, u32::MAX, u64::MAX, true),
        ];
        let mut packed: Vec<Credit> = fields
            .iter()
            .map(|&(a, b, f, n, i)| Credit::new(a, b, f, n, i))
            .collect();
        for c in &packed {
            let mut buf = [0; Credit::SIZE];
            c.encode(&mut buf);
            assert_eq!(Credit::decode(&buf), *c);
        }
        packed.sort_unstable();
        let mut want = fields.to_vec();
        want.sort_unstable();
        let got: Vec<_> = packed
            .iter()
            .map(|c| (c.da(), c.db(), c.file(), c.bytes(), c.identical()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_combiner_keeps_the_best_credit_of_each_file_in_a_pair() {
        // 256 slots for 1,000 groups: most are displaced and come back.
        let mut c = Combiner::new(0);
        let credits = || {
            (0..3u64).flat_map(|round| {
                (0..2000u32).map(move |i| {
                    // Each group twice in a row, then again in later rounds.
                    let g = i / 2;
                    let bytes = (u64::from(g) * 7 + round * 13 + u64::from(i % 2) * 29) % 50;
                    Credit::new(g % 10, 10 + g % 7, g, bytes, round == 1)
                })
            })
        };
        let mut out = Vec::new();
        for credit in credits() {
            out.extend(c.put(credit));
        }
        out.extend(c.drain());
        assert!(c.drain().next().is_none());
        // The best of each group, as the sorted credits' last.
        let best = |v: &mut Vec<Credit>| {
            v.sort_unstable();
            let mut b: Vec<Credit> = Vec::new();
            for &x in v.iter() {
                match b.last_mut() {
                    Some(l) if l.group() == x.group() => *l = x,
                    _ => b.push(x),
                }
            }
            b
        };
        let mut all: Vec<Credit> = credits().collect();
        assert!(out.len() <= all.len() / 2, "{} of {}", out.len(), all.len());
        assert_eq!(best(&mut out), best(&mut all));
    }

    #[test]
    fn the_combiner_keeps_the_best_partner_of_each_file_in_a_listed_pair() {
        let mut c = Combiner::new(0);
        let d = |k, file, bytes, partner| Detail {
            k,
            file,
            bytes,
            identical: false,
            partner,
        };
        // 3,000 groups in 256 slots, each met three times in turn.
        let all: Vec<Detail> = (0..3u64)
            .flat_map(|round| {
                (0..3000u32).map(move |g| {
                    d(
                        g % 40,
                        g,
                        (u64::from(g) * 31 + round * 17) % 23,
                        round as u32,
                    )
                })
            })
            .collect();
        let mut out: Vec<Detail> = all.iter().filter_map(|&x| c.put(x)).collect();
        out.extend(c.drain());
        let last_of_groups = |mut v: Vec<Detail>| {
            v.sort_unstable();
            let mut b: Vec<Detail> = Vec::new();
            for x in v {
                match b.last_mut() {
                    Some(l) if l.same_group(&x) => *l = x,
                    _ => b.push(x),
                }
            }
            b
        };
        assert_eq!(last_of_groups(out), last_of_groups(all));
    }

    fn key(a: &str, b: &str) -> (String, String) {
        let (k, l) = family_key(a.as_bytes(), b.as_bytes());
        (String::from_utf8(k).unwrap(), String::from_utf8(l).unwrap())
    }

    #[test]
    fn family_keys_name_the_differing_component_or_the_folders_names() {
        let sib = key("c/d-1/conf/locale/de/LC", "c/d-1/conf/locale/fr/LC");
        assert_eq!(sib, ("locale/*/LC".into(), "c/d-1/conf/locale/*/LC".into()));
        assert_eq!(key("c/d-1", "c/d-2"), ("c/*".into(), "c/*".into()));
        // Two test folders, in one release or across two: one key.
        let (k1, l1) = key("c/d-1/t/loading", "c/d-1/t/x/loading_app/locale");
        let (k2, _) = key("c/d-1/t/x/loading_app/locale", "c/d-2/t/loading");
        assert_eq!(k1, "loading_app/locale | t/loading");
        assert_eq!(k1, k2);
        assert_eq!(l1, "c/d-1/t | c/d-1/t/x/loading_app");
        assert_eq!(
            String::from_utf8(mixed_label(k1.as_bytes())).unwrap(),
            ".../loading_app/locale | .../t/loading"
        );
    }

    fn pair(a: &str, b: &str, bytes: u64, ids: (u32, u32)) -> FolderPair {
        FolderPair {
            a: a.into(),
            b: b.into(),
            files_a: 1,
            bytes_a: 1000,
            files_b: 1,
            bytes_b: 1000,
            a_in_b: bytes,
            b_in_a: bytes,
            same: 0,
            changed: 2,
            only_a: 0,
            only_b: 0,
            tree: None,
            files: None,
            family: 0,
            da: ids.0,
            db: ids.1,
        }
    }

    #[test]
    fn pairs_are_regrouped_by_family_in_the_order_of_its_first_pair() {
        // Most bytes first: two releases, a locale pair of release 1, two
        // test folders, a locale pair of release 2.
        let pairs = vec![
            pair("c/r1", "c/r2", 900, (0, 1)),
            pair("c/r1/l/de/M", "c/r1/l/fr/M", 600, (2, 3)),
            pair("c/r1/x", "c/r1/y", 550, (4, 5)),
            pair("c/r2/l/de/M", "c/r2/l/it/M", 500, (6, 7)),
        ];
        let (out, fams) = by_family(pairs);
        let order: Vec<(&[u8], u32)> = out.iter().map(|p| (&p.a[..], p.family)).collect();
        assert_eq!(
            order,
            [
                (&b"c/r1"[..], 0),
                (b"c/r1/l/de/M", 1),
                (b"c/r2/l/de/M", 1),
                (b"c/r1/x", 2)
            ]
        );
        let f = &fams[1];
        assert_eq!(
            (&f.label[..], f.first, f.len, f.folders),
            (&b".../l/*/M"[..], 1, 2, 4)
        );
        assert_eq!((f.percent_min, f.percent_max), (50.0, 60.0));
        assert_eq!(fams[0].label, b"c/*");
        assert_eq!(fams[2].label, b"c/r1/*");
    }
}
