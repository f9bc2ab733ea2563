//! Pairs inside pairs: the pairs at the threshold under a top go through
//! the external sorter ([`Candidate`]), by top, and are read back one top
//! at a time to choose which are listed ([`Group::decide`]); each top's
//! listed child pairs are written, depth first, to the child pairs' file
//! (`super::nested`), which the reports read back.

use super::counts::PathRecords;
use super::credits::Shape;
use super::figures::{empty_pair, identical_trees};
use super::nested::NestedWriter;
use super::table::{Dir, ROOT};
use super::{FolderPair, Folders};
use crate::error::Result;
use crate::formats::files::CompactTable;
use crate::io::hashing::Mixed;
use crate::io::sorter::{le_u64, ExternalSorter, FixedRecord};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs::File;
use std::hash::BuildHasherDefault;
use xxhash_rust::xxh3::xxh3_64;

/// Every folder's (parent, hash of its name), sorted: whether a folder
/// holds a folder of a name. 12 bytes a folder, where a hash set took 36.
pub(super) struct Names(Vec<(u32, u64)>);

impl Names {
    pub(super) fn contains(&self, key: &(u32, u64)) -> bool {
        self.0.binary_search(key).is_ok()
    }

    /// Its bytes on the heap.
    pub(super) fn bytes(&self) -> u64 {
        (self.0.capacity() * std::mem::size_of::<(u32, u64)>()) as u64
    }
}

/// The [`Names`] of `dirs`.
pub(super) fn names(table: &CompactTable, dirs: &[Dir]) -> Names {
    let mut named: Vec<(u32, u64)> = dirs
        .iter()
        .map(|d| (d.parent, xxh3_64(name(d.path(table)))))
        .collect();
    named.sort_unstable();
    named.dedup();
    named.shrink_to_fit();
    Names(named)
}

/// The top of `tops` pair `p` is under: its nearest ancestor pair at the
/// same heights among them, if any.
pub(super) fn top_of<'k>(
    dirs: &[Dir],
    tops: &'k HashMap<(u32, u32), FolderPair>,
    p: &FolderPair,
) -> Option<&'k FolderPair> {
    let (mut pa, mut pb) = (dirs[p.da as usize].parent, dirs[p.db as usize].parent);
    while pa != ROOT && pb != ROOT && pa != pb {
        if let Some(l) = tops.get(&(pa.min(pb), pa.max(pb))) {
            return Some(l);
        }
        pa = dirs[pa as usize].parent;
        pb = dirs[pb as usize].parent;
    }
    None
}

/// Whether folders `a` and `b` are a rename: their names differ and
/// neither name is that of a folder beside the other (the `de` and `es`
/// locale folders of two releases are no rename: each release has both).
fn renamed(table: &CompactTable, dirs: &[Dir], named: &Names, a: u32, b: u32) -> bool {
    let (da, db) = (&dirs[a as usize], &dirs[b as usize]);
    let (na, nb) = (name(da.path(table)), name(db.path(table)));
    na != nb
        && !named.contains(&(db.parent, xxh3_64(na)))
        && !named.contains(&(da.parent, xxh3_64(nb)))
}

/// The last component of a path.
fn name(path: &[u8]) -> &[u8] {
    path.rsplit(|&c| c == b'/').next().unwrap_or(path)
}

/// The order of a parent's child pairs: identical first, then most
/// bytes explained, then by paths.
pub(super) fn child_order(x: &FolderPair, y: &FolderPair) -> Ordering {
    y.identical()
        .cmp(&x.identical())
        .then_with(|| (y.a_in_b + y.b_in_a).cmp(&(x.a_in_b + x.b_in_a)))
        .then_with(|| x.a.cmp(&y.a))
        .then_with(|| x.b.cmp(&y.b))
}

/// A pair's folders as one key, `da << 32 | db`.
fn key(p: &FolderPair) -> u64 {
    u64::from(p.da) << 32 | u64::from(p.db)
}

/// A pair at the threshold under a top that is not identical, with its
/// figures: sorted by (top, pair), the pairs of one top come together,
/// each after its ancestor pairs (a folder's id is above its parent's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Candidate {
    top: u64,
    pair: u64,
    /// A in B, B in A, same, changed, only in A, only in B.
    figures: [u64; 6],
}

impl Candidate {
    pub(super) fn new(top: &FolderPair, p: &FolderPair) -> Candidate {
        Candidate {
            top: key(top),
            pair: key(p),
            figures: [p.a_in_b, p.b_in_a, p.same, p.changed, p.only_a, p.only_b],
        }
    }

    /// The pair with its figures (no paths).
    fn pair(&self, dirs: &[Dir]) -> FolderPair {
        let mut p = empty_pair(dirs, (self.pair >> 32) as u32, self.pair as u32);
        [p.a_in_b, p.b_in_a, p.same, p.changed, p.only_a, p.only_b] = self.figures;
        p
    }
}

impl FixedRecord for Candidate {
    const SIZE: usize = 64;
    fn encode(&self, out: &mut [u8]) {
        let words = [self.top, self.pair].into_iter().chain(self.figures);
        for (w, o) in words.zip(out.chunks_exact_mut(8)) {
            o.copy_from_slice(&w.to_le_bytes());
        }
    }
    fn decode(b: &[u8]) -> Self {
        Candidate {
            top: le_u64(b, 0),
            pair: le_u64(b, 8),
            figures: std::array::from_fn(|i| le_u64(b, 16 + 8 * i)),
        }
    }
}

/// The listed child pairs of one top as its candidates come.
struct Group {
    /// The top's index in the report.
    k: usize,
    top: u64,
    /// The listed pairs so far, the top first: (tenths of a percent as
    /// the reports show them, identical).
    listed: HashMap<(u32, u32), (u64, bool), BuildHasherDefault<Mixed>>,
    /// The listed child pairs (no paths yet), each with its parent.
    nodes: Vec<FolderPair>,
}

/// A pair's percent in tenths, as the reports show it.
fn tenths(p: &FolderPair) -> u64 {
    (p.percent() * 10.0).round() as u64
}

impl Group {
    fn new(k: usize, top: &FolderPair) -> Group {
        let mut listed = HashMap::default();
        listed.insert((top.da, top.db), (tenths(top), top.identical()));
        Group {
            k,
            top: key(top),
            listed,
            nodes: Vec::new(),
        }
    }

    /// Whether pair `p` is listed, as a child of its nearest listed
    /// ancestor `l`: when `l` is not identical (a pair inside two identical
    /// folders repeats them) and `p` is identical, or closer than `l` (by
    /// the tenth of a percent the reports show), or a rename.
    fn decide(&mut self, shape: &Shape, mut p: FolderPair) {
        let (dirs, named) = (&shape.dirs[..], &shape.named);
        let (mut pa, mut pb) = (dirs[p.da as usize].parent, dirs[p.db as usize].parent);
        while pa != ROOT && pb != ROOT && pa != pb {
            let at = (pa.min(pb), pa.max(pb));
            if let Some(&(l_tenths, l_identical)) = self.listed.get(&at) {
                let closer = p.identical() || tenths(&p) > l_tenths;
                if !l_identical && (closer || renamed(shape.table, dirs, named, p.da, p.db)) {
                    self.listed
                        .insert((p.da, p.db), (tenths(&p), p.identical()));
                    p.parent = Some(at);
                    self.nodes.push(p);
                }
                return;
            }
            pa = dirs[pa as usize].parent;
            pb = dirs[pb as usize].parent;
        }
    }
}

impl Folders<'_> {
    /// The listed child pairs of `tops` (in the report's order) from the
    /// `candidates` of the second pass, each top's written depth first to
    /// the child pairs' file, which is returned (none when no pair has
    /// a child pair). Held: one top's listed child pairs at a time.
    pub(super) fn list_children(
        &self,
        tops: &mut [FolderPair],
        candidates: ExternalSorter<Candidate>,
    ) -> Result<Option<File>> {
        if candidates.is_empty() {
            return Ok(None);
        }
        let index: HashMap<u64, usize> =
            tops.iter().enumerate().map(|(k, p)| (key(p), k)).collect();
        let mut out = NestedWriter::create(self.sort.tmpdir.as_deref())?;
        let mut sorted = candidates.finish()?;
        let mut group: Option<Group> = None;
        let mut paths = PathRecords::default();
        let dirs = &self.shape.dirs;
        while let Some(c) = sorted.next_item()? {
            if let Some(g) = group.take_if(|g| g.top != c.top) {
                self.write_group(g, tops, &mut out, &mut paths)?;
            }
            let Some(&k) = index.get(&c.top) else {
                continue;
            };
            let g = group.get_or_insert_with(|| Group::new(k, &tops[k]));
            g.decide(&self.shape, c.pair(dirs));
        }
        if let Some(g) = group {
            self.write_group(g, tops, &mut out, &mut paths)?;
        }
        out.finish().map(Some)
    }

    /// The listed child pairs of group `g` to `out`, depth first, each
    /// pair's children in [`child_order`]; where they are, into its top.
    /// Their files are counted in `paths`, one buffer for every top (an
    /// external sorter only for a top whose child pairs' files pass the
    /// budget).
    fn write_group(
        &self,
        g: Group,
        tops: &mut [FolderPair],
        out: &mut NestedWriter,
        paths: &mut PathRecords,
    ) -> Result<()> {
        let top = &mut tops[g.k];
        let dirs = &self.shape.dirs;
        let mut under: HashMap<(u32, u32), Vec<FolderPair>> = HashMap::new();
        // Child pairs count their files by relative path as top pairs do;
        // their file lists are the top's alone.
        let mut nodes = g.nodes;
        self.count_paths_in(&mut nodes, paths)?;
        for mut p in nodes {
            p.files = None;
            p.a = dirs[p.da as usize].path(self.shape.table).to_vec();
            p.b = dirs[p.db as usize].path(self.shape.table).to_vec();
            p.tree = identical_trees(self.shape.table, dirs, &p);
            p.family = top.family;
            under
                .entry(p.parent.expect("a child pair"))
                .or_default()
                .push(p);
        }
        let from = out.at();
        write_under((top.da, top.db), 1, &mut under, out)?;
        top.nested = (from, out.at() - from);
        Ok(())
    }
}

/// The child pairs of pair `at` from `under`, at `depth`, and theirs
/// below each, to `out`.
fn write_under(
    at: (u32, u32),
    depth: u32,
    under: &mut HashMap<(u32, u32), Vec<FolderPair>>,
    out: &mut NestedWriter,
) -> Result<()> {
    let Some(mut children) = under.remove(&at) else {
        return Ok(());
    };
    children.sort_by(child_order);
    for c in &children {
        out.push(depth, c)?;
        write_under((c.da, c.db), depth + 1, under, out)?;
    }
    Ok(())
}
