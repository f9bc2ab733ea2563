//! The directory table of the folder pairs: every directory of the file
//! table's paths, with its parent, depth, recursive file count and bytes.

use crate::formats::files::CompactTable;
use std::collections::HashMap;

/// One directory of the file table.
#[derive(Debug, Clone)]
pub(super) struct Dir {
    pub(super) path: Vec<u8>,
    pub(super) parent: u32,
    pub(super) depth: u32,
    pub(super) files: u64,
    pub(super) bytes: u64,
    /// The lowest and highest id of a file under it: its files are one run
    /// of ids when `last - first + 1 == files` (the walk's order).
    pub(super) first: u32,
    pub(super) last: u32,
}

impl Dir {
    /// Its files' ids, when they are one run.
    pub(super) fn run(&self) -> Option<std::ops::RangeInclusive<u32>> {
        (self.files > 0 && u64::from(self.last - self.first) + 1 == self.files)
            .then_some(self.first..=self.last)
    }
}

pub(super) const ROOT: u32 = u32::MAX;

/// The bytes of a directory table ([`directories`]).
pub(super) fn table_bytes(dirs: &Vec<Dir>, dir_of: &Vec<u32>) -> u64 {
    let paths: usize = dirs.iter().map(|d| d.path.capacity() + 16).sum();
    (dirs.capacity() * std::mem::size_of::<Dir>() + paths + dir_of.capacity() * 4) as u64
}

/// Whether folder `outer` holds folder `inner` (at any depth).
pub(super) fn contains(dirs: &[Dir], outer: u32, mut inner: u32) -> bool {
    let depth = dirs[outer as usize].depth;
    while inner != ROOT && dirs[inner as usize].depth > depth {
        inner = dirs[inner as usize].parent;
    }
    inner == outer
}

/// Every directory of the table's paths (interned, with recursive file
/// counts and bytes) and the directory of each file.
pub(super) fn directories(table: &CompactTable) -> (Vec<Dir>, Vec<u32>) {
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
pub(super) fn intern(dirs: &mut Vec<Dir>, id_of: &mut HashMap<Vec<u8>, u32>, path: &[u8]) -> u32 {
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
