//! The child pairs' file: each top's listed child pairs, depth first,
//! written once as the pairs are figured ([`NestedWriter`]) and read back,
//! one top at a time, by each report that lists them
//! ([`FolderReport::listed`]): the model holds none of them.

use super::{FolderPair, FolderReport, TreeCopy};
use crate::error::{Context, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Writes child pairs, each with its depth under its top (1: a child of
/// the top), to an unnamed temporary file.
pub(super) struct NestedWriter {
    out: BufWriter<File>,
    at: u64,
    buf: Vec<u8>,
}

/// The fixed part of a record: depth, ten figures, the tree copy (a flag
/// and three ids), the paths' lengths.
const FIXED: usize = 4 + 10 * 8 + 1 + 3 * 4 + 2 * 4;

impl NestedWriter {
    /// In `tmpdir` (`None`: `$TMPDIR` or /tmp).
    pub(super) fn create(tmpdir: Option<&Path>) -> Result<NestedWriter> {
        let dir = tmpdir.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let file = tempfile::tempfile_in(&dir)
            .ctx(|| format!("cannot create a temporary file in {}", dir.display()))?;
        Ok(NestedWriter {
            out: BufWriter::new(file),
            at: 0,
            buf: Vec::new(),
        })
    }

    /// The bytes written so far: where the next pair goes.
    pub(super) fn at(&self) -> u64 {
        self.at
    }

    /// Child pair `p` at `depth`.
    pub(super) fn push(&mut self, depth: u32, p: &FolderPair) -> Result<()> {
        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(&depth.to_le_bytes());
        let figures = [
            p.files_a, p.bytes_a, p.files_b, p.bytes_b, p.a_in_b, p.b_in_a, p.same, p.changed,
            p.only_a, p.only_b,
        ];
        for x in figures {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b.push(u8::from(p.tree.is_some()));
        let t = p.tree.map_or([0; 3], |t| [t.first_a, t.first_b, t.files]);
        for x in t.into_iter().chain([p.a.len() as u32, p.b.len() as u32]) {
            b.extend_from_slice(&x.to_le_bytes());
        }
        b.extend_from_slice(&p.a);
        b.extend_from_slice(&p.b);
        self.out.write_all(b).ctx(|| "writing the child pairs")?;
        self.at += b.len() as u64;
        Ok(())
    }

    pub(super) fn finish(self) -> Result<File> {
        self.out
            .into_inner()
            .map_err(|e| e.into_error())
            .ctx(|| "writing the child pairs")
    }
}

/// The next record of `b` (at least one): its depth and pair, of `family`.
fn read_one(b: &mut &[u8], family: u32) -> (u32, FolderPair) {
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
    let f = |i: usize| u64::from_le_bytes(b[4 + 8 * i..12 + 8 * i].try_into().expect("8 bytes"));
    let depth = u32_at(0);
    let t = 4 + 10 * 8;
    let tree = (b[t] != 0).then(|| TreeCopy {
        first_a: u32_at(t + 1),
        first_b: u32_at(t + 5),
        files: u32_at(t + 9),
    });
    let (la, lb) = (u32_at(t + 13) as usize, u32_at(t + 17) as usize);
    let [files_a, bytes_a, files_b, bytes_b, a_in_b, b_in_a, same, changed, only_a, only_b] =
        std::array::from_fn(f);
    let p = FolderPair {
        a: b[FIXED..FIXED + la].to_vec(),
        b: b[FIXED + la..FIXED + la + lb].to_vec(),
        files_a,
        bytes_a,
        files_b,
        bytes_b,
        a_in_b,
        b_in_a,
        same,
        changed,
        only_a,
        only_b,
        tree,
        family,
        files: None,
        children: Vec::new(),
        children_left_out: 0,
        da: 0,
        db: 0,
        parent: None,
        nested: (0, 0),
    };
    *b = &b[FIXED + la + lb..];
    (depth, p)
}

impl FolderReport {
    /// Pair `k` of [`FolderReport::pairs`] with its child pairs (module
    /// doc of `folders`, *Pairs inside pairs*): all of them, or at most
    /// `bound` a pair (the others counted in
    /// [`FolderPair::children_left_out`], the pairs under them left out).
    /// Read from the child pairs' file: what it holds is this pair's.
    pub fn listed(&self, k: usize, bound: Option<usize>) -> Result<FolderPair> {
        let top = &self.pairs[k];
        let mut p = top.clone();
        let (from, len) = top.nested;
        let Some(file) = self.nested.as_ref().filter(|_| len > 0) else {
            return Ok(p);
        };
        let mut buf = vec![0; len as usize];
        file.read_exact_at(&mut buf, from)
            .ctx(|| "reading the child pairs")?;
        let mut rest = &buf[..];
        let mut next =
            std::iter::from_fn(|| (!rest.is_empty()).then(|| read_one(&mut rest, top.family)))
                .peekable();
        fill(&mut p, 1, &mut next, bound.unwrap_or(usize::MAX));
        Ok(p)
    }
}

/// The children of `p`, at `depth`, from the depth-first `next`: at most
/// `bound`, the others counted and the pairs under them skipped.
fn fill(
    p: &mut FolderPair,
    depth: u32,
    next: &mut std::iter::Peekable<impl Iterator<Item = (u32, FolderPair)>>,
    bound: usize,
) {
    while let Some((_, mut c)) = next.next_if(|(d, _)| *d == depth) {
        if p.children.len() < bound {
            fill(&mut c, depth + 1, next, bound);
            p.children.push(c);
        } else {
            p.children_left_out += 1;
            while next.next_if(|(d, _)| *d > depth).is_some() {}
        }
    }
}
