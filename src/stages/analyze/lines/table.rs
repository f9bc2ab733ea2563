//! The line source's file table: the files it may read and what reading
//! them needs, in columns, and nothing of the others.
//!
//! The stage holds it beside the pairs found, after the bins, so it is
//! counted in `--capacity` ([`LineFiles::heap_bytes`]): a row is 41 bytes
//! (id, size, mtime, content hash, whether it is compared) and its path,
//! front-coded (each path after the first of a block of [`RESTART`] stored
//! as the length it shares with the one before and the rest: the files of
//! a folder share its path), with the rare views other than a file's raw
//! bytes and the web pages' names apart. A `Vec<FileEntry>` of the whole
//! table cost ~180 bytes a file: 1.8 GB at 10^7 files.

use super::{selected, LineSource};
use crate::error::Result;
use crate::formats::files::scan_file_table;
use crate::formats::{FileEntry, FileType, FileView, Params};
use crate::stages::partition::site::page_key;
use std::path::Path;

/// Paths per block of the front coding: a path is decoded from its
/// block's first, at most this many steps.
const RESTART: usize = 16;

/// The rows: the files the line source compares ([`selected`]) and,
/// when the site rule is on, the text web pages it reads for a site's
/// theme ([`super::exclude`]), in id order.
#[derive(Debug, Default)]
pub struct LineFiles {
    ids: Vec<u32>,
    sizes: Vec<u64>,
    mtime_s: Vec<i64>,
    mtime_ns: Vec<u32>,
    contents: Vec<u128>,
    /// Whether the row is compared (else it is a page read for the theme
    /// alone).
    compared: Vec<bool>,
    /// (row, page key) of the text web pages: sparse.
    pages: Vec<(u32, u32)>,
    /// (row, view) of the rows whose view is not their raw bytes as
    /// [`FileView::raw`] has them: sparse.
    views: Vec<(u32, FileView)>,
    paths: Paths,
}

impl LineFiles {
    /// The rows of the file table at `path` for `src`, and its header.
    pub fn load(path: &Path, src: &LineSource) -> Result<(LineFiles, Params)> {
        let mut t = LineFiles::default();
        let params = scan_file_table(path, &mut |e| t.push(&e, src))?;
        t.shrink_to_fit();
        Ok((t, params))
    }

    /// The rows of `entries` (a whole file table, in id order) for `src`.
    pub fn of(entries: &[FileEntry], src: &LineSource) -> LineFiles {
        let mut t = LineFiles::default();
        for e in entries {
            t.push(e, src);
        }
        t.shrink_to_fit();
        t
    }

    /// Add `e` if the line source may read it.
    fn push(&mut self, e: &FileEntry, src: &LineSource) {
        let compared = selected(e, src);
        let key = if src.site_names >= 2 && e.ftype == FileType::Text && e.size > 0 {
            page_key(&e.path)
        } else {
            0
        };
        if !compared && key == 0 {
            return;
        }
        let row = self.ids.len() as u32;
        if key != 0 {
            self.pages.push((row, key));
        }
        if e.view != FileView::raw(e.size) {
            self.views.push((row, e.view));
        }
        self.ids.push(e.id);
        self.sizes.push(e.size);
        self.mtime_s.push(e.mtime_s);
        self.mtime_ns.push(e.mtime_ns);
        self.contents.push(e.content);
        self.compared.push(compared);
        self.paths.push(&e.path);
    }

    fn shrink_to_fit(&mut self) {
        self.ids.shrink_to_fit();
        self.sizes.shrink_to_fit();
        self.mtime_s.shrink_to_fit();
        self.mtime_ns.shrink_to_fit();
        self.contents.shrink_to_fit();
        self.compared.shrink_to_fit();
        self.pages.shrink_to_fit();
        self.views.shrink_to_fit();
        self.paths.data.shrink_to_fit();
        self.paths.starts.shrink_to_fit();
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    #[inline]
    pub fn id(&self, row: usize) -> u32 {
        self.ids[row]
    }

    /// The size of row `row`'s view (what was chunked).
    #[inline]
    pub fn size(&self, row: usize) -> u64 {
        self.sizes[row]
    }

    #[inline]
    pub fn content(&self, row: usize) -> u128 {
        self.contents[row]
    }

    /// Whether the line source compares row `row`.
    #[inline]
    pub fn compared(&self, row: usize) -> bool {
        self.compared[row]
    }

    /// Rows compared (not only read for a site's theme).
    pub fn compared_rows(&self) -> u64 {
        self.compared.iter().filter(|&&c| c).count() as u64
    }

    /// (row, page key) of the text web pages, by row.
    pub fn pages(&self) -> &[(u32, u32)] {
        &self.pages
    }

    /// Row `row`'s view.
    pub fn view(&self, row: usize) -> FileView {
        match self.views.binary_search_by_key(&(row as u32), |v| v.0) {
            Ok(k) => self.views[k].1,
            Err(_) => FileView::raw(self.sizes[row]),
        }
    }

    /// Row `row` as the file table has it (a text file).
    pub fn entry(&self, row: usize) -> FileEntry {
        let size = self.sizes[row];
        let view = self.view(row);
        let mut path = Vec::new();
        self.paths.get(row, &mut path);
        FileEntry {
            id: self.ids[row],
            size,
            mtime_s: self.mtime_s[row],
            mtime_ns: self.mtime_ns[row],
            content: self.contents[row],
            ftype: FileType::Text,
            view,
            path,
        }
    }

    /// Bytes held: what the line source's memory gives up to the table.
    pub fn heap_bytes(&self) -> u64 {
        (self.ids.capacity() * 4
            + self.sizes.capacity() * 8
            + self.mtime_s.capacity() * 8
            + self.mtime_ns.capacity() * 4
            + self.contents.capacity() * 16
            + self.compared.capacity()
            + self.pages.capacity() * 8
            + self.views.capacity() * std::mem::size_of::<(u32, FileView)>()
            + self.paths.data.capacity()
            + self.paths.starts.capacity() * 8) as u64
    }
}

/// Paths front-coded in blocks of [`RESTART`]: each is the length it
/// shares with the path before (0 for a block's first) and the length of
/// the rest, as LEB128 numbers, then the rest's bytes.
#[derive(Debug, Default)]
struct Paths {
    data: Vec<u8>,
    /// Where each block starts in `data`.
    starts: Vec<u64>,
    /// The last path pushed (the next one is coded against it).
    last: Vec<u8>,
    count: usize,
}

impl Paths {
    fn push(&mut self, path: &[u8]) {
        let shared = if self.count.is_multiple_of(RESTART) {
            self.starts.push(self.data.len() as u64);
            0
        } else {
            self.last
                .iter()
                .zip(path)
                .take_while(|(a, b)| a == b)
                .count()
        };
        put_varint(shared as u64, &mut self.data);
        put_varint((path.len() - shared) as u64, &mut self.data);
        self.data.extend_from_slice(&path[shared..]);
        self.last.clear();
        self.last.extend_from_slice(path);
        self.count += 1;
    }

    /// Path `i` into `out`.
    fn get(&self, i: usize, out: &mut Vec<u8>) {
        out.clear();
        let mut at = self.starts[i / RESTART] as usize;
        for _ in 0..=i % RESTART {
            let shared = get_varint(&self.data, &mut at) as usize;
            let rest = get_varint(&self.data, &mut at) as usize;
            out.truncate(shared);
            out.extend_from_slice(&self.data[at..at + rest]);
            at += rest;
        }
    }
}

fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(data: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = data[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paths of any lengths and prefixes come back whole, across blocks.
    #[test]
    fn front_coded_paths_come_back_whole() {
        let paths: Vec<Vec<u8>> = (0..100)
            .map(|i| match i % 5 {
                0 => format!("tree/d{:03}/f{i}.txt", i / 7).into_bytes(),
                1 => Vec::new(),
                2 => vec![b'x'; 200 + i],
                _ => format!("tree/d{:03}/g{i}", i / 7).into_bytes(),
            })
            .collect();
        let mut p = Paths::default();
        for path in &paths {
            p.push(path);
        }
        let mut out = Vec::new();
        for (i, want) in paths.iter().enumerate().rev() {
            p.get(i, &mut out);
            assert_eq!(&out, want, "{i}");
        }
    }

    /// A table as fsim-gen's trees have it (folders of 1,000 files): the
    /// rows the line source reads, each as the file table has it, in
    /// about 41 bytes and a dozen of path; the binary files left out.
    #[test]
    fn rows_are_the_compared_files_in_a_few_bytes_each() {
        let src = LineSource {
            max_size: Some(4096),
            catalogs: true,
            thresholds: crate::stages::analyze::Thresholds::default(),
            verify_floor: 50.0,
            site_names: 0,
        };
        let entries: Vec<FileEntry> = (0..20_000u32)
            .map(|id| FileEntry {
                id,
                size: 100 + u64::from(id % 300),
                mtime_s: 1_700_000_000 + i64::from(id),
                mtime_ns: id * 7,
                content: u128::from(id) * 0x9e37_79b9,
                ftype: if id % 10 == 9 {
                    FileType::Binary
                } else {
                    FileType::Text
                },
                view: FileView::raw(100 + u64::from(id % 300)),
                path: format!("/mnt/tm/tree/d{:04}/f{id:07}.txt", id / 1000).into_bytes(),
            })
            .collect();
        let rows = LineFiles::of(&entries, &src);
        let want: Vec<&FileEntry> = entries.iter().filter(|e| e.id % 10 != 9).collect();
        assert_eq!(rows.len(), want.len());
        for (row, e) in want.iter().enumerate() {
            assert_eq!(&rows.entry(row), *e);
        }
        let per_row = rows.heap_bytes() as f64 / rows.len() as f64;
        assert!(per_row < 41.0 + 16.0, "{per_row} bytes a row");
    }
}
