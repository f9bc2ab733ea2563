//! Pairs inside pairs: which pairs under a listed pair are listed too
//! ([`child_of`]), and the listed pairs nested under their parents, at
//! most [`CHILDREN`] a parent ([`nest`]).

use super::table::{Dir, ROOT};
use super::{FolderPair, CHILDREN};
use crate::io::hashing::Mixed;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use xxhash_rust::xxh3::xxh3_64;

/// Every folder's (parent, hash of its name): whether a folder holds a
/// folder of a name.
pub(super) type Names = HashSet<(u32, u64), BuildHasherDefault<Mixed>>;

/// The [`Names`] of `dirs`.
pub(super) fn names(dirs: &[Dir]) -> Names {
    dirs.iter()
        .map(|d| (d.parent, xxh3_64(name(&d.path))))
        .collect()
}

/// The listed pair pair `p` (at the threshold, not yet kept) is a child
/// of, `Some(None)` when it is a top (no listed pair among its ancestors
/// at the same heights), `None` when it is not listed: its nearest listed
/// ancestor `l` is identical (a pair inside two identical folders repeats
/// them), or `p` is neither identical, nor closer than `l` (by the tenth
/// of a percent the reports show), nor a rename: its folders' names
/// differ, and neither name is that of a folder beside the other (the
/// `de` and `es` locale folders of two releases are no rename: each
/// release has both).
pub(super) fn child_of(
    dirs: &[Dir],
    named: &Names,
    kept: &HashMap<(u32, u32), FolderPair>,
    p: &FolderPair,
) -> Option<Option<(u32, u32)>> {
    let (mut pa, mut pb) = (dirs[p.da as usize].parent, dirs[p.db as usize].parent);
    while pa != ROOT && pb != ROOT && pa != pb {
        let key = (pa.min(pb), pa.max(pb));
        if let Some(l) = kept.get(&key) {
            let tenths = |x: &FolderPair| (x.percent() * 10.0).round() as u64;
            let renamed = renamed(dirs, named, p.da, p.db);
            let listed = !l.identical() && (p.identical() || tenths(p) > tenths(l) || renamed);
            return listed.then_some(Some(key));
        }
        pa = dirs[pa as usize].parent;
        pb = dirs[pb as usize].parent;
    }
    Some(None)
}

/// Whether folders `a` and `b` are a rename (their names differ and
/// neither is beside the other: [`child_of`]).
fn renamed(dirs: &[Dir], named: &Names, a: u32, b: u32) -> bool {
    let (da, db) = (&dirs[a as usize], &dirs[b as usize]);
    let (na, nb) = (name(&da.path), name(&db.path));
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

/// The kept pairs as trees: the tops, each with its child pairs (at most
/// [`CHILDREN`] a parent, [`child_order`]; the others counted, the pairs
/// under them dropped), the paths of every pair filled in.
pub(super) fn nest(dirs: &[Dir], kept: HashMap<(u32, u32), FolderPair>) -> Vec<FolderPair> {
    let mut tops = Vec::new();
    let mut under: HashMap<(u32, u32), Vec<FolderPair>> = HashMap::new();
    for (_, mut p) in kept {
        p.a.clone_from(&dirs[p.da as usize].path);
        p.b.clone_from(&dirs[p.db as usize].path);
        match p.parent {
            Some(k) => under.entry(k).or_default().push(p),
            None => tops.push(p),
        }
    }
    for p in &mut tops {
        attach(p, &mut under);
    }
    tops
}

/// Pair `p`'s child pairs from `under`, bounded, and theirs below them.
fn attach(p: &mut FolderPair, under: &mut HashMap<(u32, u32), Vec<FolderPair>>) {
    let Some(mut children) = under.remove(&(p.da, p.db)) else {
        return;
    };
    children.sort_by(child_order);
    p.children_left_out = children.len().saturating_sub(CHILDREN) as u64;
    children.truncate(CHILDREN);
    for c in &mut children {
        attach(c, under);
    }
    p.children = children;
}
