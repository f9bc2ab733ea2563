//! The directory table of the folder pairs: every directory of the file
//! table's paths, with its parent, depth, recursive file count and bytes.

use crate::formats::files::CompactTable;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use xxhash_rust::xxh3::xxh3_64;

/// One directory of the file table.
#[derive(Debug, Clone)]
pub(super) struct Dir {
    /// The length of its path, which is the start of the path of every
    /// file under it ([`Dir::path`]): the table keeps no copy of it (at
    /// 10^6 files in 500,000 folders the copies, and a map keyed by them,
    /// were 80 MB of fsim-report's peak).
    len: u32,
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
    /// Its path, read from the path of its first file.
    pub(super) fn path<'t>(&self, table: &'t CompactTable) -> &'t [u8] {
        &table.path(self.first)[..self.len as usize]
    }

    /// The length of its path in bytes.
    pub(super) fn path_len(&self) -> usize {
        self.len as usize
    }

    /// Its files' ids, when they are one run.
    pub(super) fn run(&self) -> Option<std::ops::RangeInclusive<u32>> {
        (self.files > 0 && u64::from(self.last - self.first) + 1 == self.files)
            .then_some(self.first..=self.last)
    }
}

pub(super) const ROOT: u32 = u32::MAX;

/// The bytes of a directory table ([`directories`]).
pub(super) fn table_bytes(dirs: &Vec<Dir>, dir_of: &Vec<u32>) -> u64 {
    (dirs.capacity() * std::mem::size_of::<Dir>() + dir_of.capacity() * 4) as u64
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
    let mut index = DirIndex {
        table,
        dirs: Vec::new(),
        by_hash: HashMap::new(),
        collided: HashMap::new(),
    };
    let mut dir_of = Vec::with_capacity(table.len());
    for id in 0..table.len() as u32 {
        let f = table.at(id);
        let Some(cut) = f.path.iter().rposition(|&c| c == b'/') else {
            dir_of.push(ROOT);
            continue;
        };
        let d = index.intern(id, cut);
        dir_of.push(d);
        let dirs = &mut index.dirs;
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
    let mut dirs = index.dirs;
    dirs.shrink_to_fit();
    (dirs, dir_of)
}

/// The directories found so far, found again by the hash of their path:
/// 12 bytes a directory where a map keyed by the paths held a copy of
/// each. Two paths of one hash (never seen with 64 bits, but possible)
/// are told apart by the second map, keyed by the path.
struct DirIndex<'t> {
    table: &'t CompactTable,
    dirs: Vec<Dir>,
    by_hash: HashMap<u64, u32>,
    collided: HashMap<Vec<u8>, u32>,
}

impl DirIndex<'_> {
    /// The id of the directory of the first `len` bytes of file `file`'s
    /// path, added with its ancestors when new.
    fn intern(&mut self, file: u32, len: usize) -> u32 {
        let table = self.table;
        let path = &table.path(file)[..len];
        let hash = xxh3_64(path);
        let known = self.by_hash.get(&hash).copied();
        if let Some(d) = known {
            if self.dirs[d as usize].path(table) == path {
                return d;
            }
            if let Some(&d) = self.collided.get(path) {
                return d;
            }
        }
        let (parent, depth) = match path.iter().rposition(|&c| c == b'/') {
            Some(0) | None => (ROOT, 0),
            Some(cut) => {
                let p = self.intern(file, cut);
                (p, self.dirs[p as usize].depth + 1)
            }
        };
        let d = self.dirs.len() as u32;
        self.dirs.push(Dir {
            len: len as u32,
            parent,
            depth,
            files: 0,
            bytes: 0,
            first: file,
            last: file,
        });
        // Looked up again: an ancestor just added may have taken the hash.
        match self.by_hash.entry(hash) {
            Entry::Occupied(_) => {
                self.collided.insert(path.to_vec(), d);
            }
            Entry::Vacant(v) => {
                v.insert(d);
            }
        }
        d
    }
}
