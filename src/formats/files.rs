//! The file table (`files.tsv`, written by `fsim-chunk --files-out` and
//! `fsim-merge`): one line per file read (id, size, mtime, content hash,
//! type, view, raw size, path), its reader and its writer.

use crate::error::{Error, Result};
use crate::formats::escape::{escape_path, unescape_path};
use crate::formats::lines::{open_input, InputCheck, Kind, Line, LineReader, Params};
use crate::formats::numbers::{
    parse_hex128, parse_id, parse_u64, split_fields, write_hex128, write_id, write_u64,
};
use crate::formats::views::{FileType, FileView, LeftOut, Unread, ViewKind};
use std::path::Path;

/// One line of the file table (v4):
/// `<id>\t<size>\t<mtime>\t<content hash>\t<type>\t<view>\t<raw size>\t<view hash>\t<escaped path>`
/// (v3 had no view hash: a content view read from it has none; v2 had no
/// view and raw size either: it reads as view `raw`, raw size = size).
///
/// `size` is the length of the view that was chunked (every percentage
/// downstream divides by it), `raw_size` the file's own length. `mtime` is
/// `seconds.nanoseconds` since the epoch (may be negative). `content` is
/// the file's identity, by its raw bytes: for a raw view (every chunking
/// method) the MD5 over the concatenated MD5 digests of its chunks, as the
/// paper's section 2.4 suggests, so it costs nothing extra; for a content
/// view the MD5 of the raw bytes, so that two files with different bytes
/// are never an identical set because their text is equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub id: u32,
    pub size: u64,
    pub mtime_s: i64,
    pub mtime_ns: u32,
    pub content: u128,
    pub ftype: FileType,
    pub view: FileView,
    pub path: Vec<u8>,
}

impl FileEntry {
    pub const EXPECTED: &'static str =
        "a file record: id, size, mtime, content hash, type, view, raw size, view hash and path separated by tabs";

    pub fn write(&self, out: &mut Vec<u8>) {
        write_id(self.id, out);
        out.push(b'\t');
        write_u64(self.size, out);
        out.push(b'\t');
        if self.mtime_s < 0 {
            out.push(b'-');
        }
        write_u64(self.mtime_s.unsigned_abs(), out);
        out.push(b'.');
        let ns = format!("{:09}", self.mtime_ns);
        out.extend_from_slice(ns.as_bytes());
        out.push(b'\t');
        write_hex128(self.content, out);
        out.push(b'\t');
        out.extend_from_slice(self.ftype.as_str().as_bytes());
        out.push(b'\t');
        self.view.write_kind(out);
        out.push(b'\t');
        write_u64(self.view.raw_size, out);
        out.push(b'\t');
        self.view.write_hash(out);
        out.push(b'\t');
        escape_path(&self.path, out);
        out.push(b'\n');
    }

    pub fn parse(line: &[u8]) -> std::result::Result<FileEntry, String> {
        let (id, size, mtime, content, ftype, view, path) = split_entry(line)?;
        let id = parse_id(id).ok_or("expected a 10-digit file id in field 1")?;
        let size = parse_u64(size).ok_or("expected a size in bytes in field 2")?;
        let (neg, mt) = match mtime.strip_prefix(b"-") {
            Some(m) => (true, m),
            None => (false, mtime),
        };
        let dot = mt
            .iter()
            .position(|&c| c == b'.')
            .ok_or("expected mtime as seconds.nanoseconds in field 3")?;
        let secs =
            parse_u64(&mt[..dot]).ok_or("expected mtime as seconds.nanoseconds in field 3")?;
        let frac = &mt[dot + 1..];
        if frac.len() != 9 {
            return Err("expected mtime as seconds.nanoseconds (9 digits) in field 3".into());
        }
        let ns = parse_u64(frac).ok_or("expected mtime as seconds.nanoseconds in field 3")? as u32;
        let secs = i64::try_from(secs).map_err(|_| "mtime out of range")?;
        let content = parse_hex128(content)
            .ok_or("expected a 32-digit lowercase hex content hash in field 4")?;
        let ftype =
            FileType::parse(ftype).ok_or("expected a file type (text, binary, ...) in field 5")?;
        let view = match view {
            None => FileView::raw(size),
            Some((kind, raw_size, hash)) => {
                let mut view = FileView::parse_kind(kind).ok_or(
                    "expected a view (raw, docx, gzip, raw/docx, docx!5, raw~broken, raw^denied, raw@2049:12, ...) in field 6",
                )?;
                view.hash = match hash {
                    None | Some(b"-") => None,
                    Some(h) => Some(
                        parse_hex128(h)
                            .ok_or("expected a 32-digit lowercase hex view hash or - in field 8")?,
                    ),
                };
                view.raw_size =
                    parse_u64(raw_size).ok_or("expected a raw size in bytes in field 7")?;
                view
            }
        };
        let path = unescape_path(path).map_err(|e| format!("field {}: {e}", path_field(line)))?;
        Ok(FileEntry {
            id,
            size,
            mtime_s: if neg { -secs } else { secs },
            mtime_ns: ns,
            content,
            ftype,
            view,
            path,
        })
    }
}

/// The fields of a record with the view's three (v4, 9 fields), two (v3,
/// 8 fields, no view hash) or none (v2, 6 fields).
type EntryFields<'a> = (
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    &'a [u8],
    Option<(&'a [u8], &'a [u8], Option<&'a [u8]>)>,
    &'a [u8],
);

fn split_entry(line: &[u8]) -> std::result::Result<EntryFields<'_>, String> {
    if let Some([id, size, mtime, content, ftype, view, raw, hash, path]) = split_fields::<9>(line)
    {
        return Ok((
            id,
            size,
            mtime,
            content,
            ftype,
            Some((view, raw, Some(hash))),
            path,
        ));
    }
    if let Some([id, size, mtime, content, ftype, view, raw, path]) = split_fields::<8>(line) {
        return Ok((
            id,
            size,
            mtime,
            content,
            ftype,
            Some((view, raw, None)),
            path,
        ));
    }
    let [id, size, mtime, content, ftype, path] =
        split_fields::<6>(line).ok_or_else(|| format!("expected {}", FileEntry::EXPECTED))?;
    Ok((id, size, mtime, content, ftype, None, path))
}

/// The path's field number: 9 in a v4 record, 8 in a v3 one, 6 in a v2 one.
fn path_field(line: &[u8]) -> usize {
    line.iter().filter(|&&c| c == b'\t').count() + 1
}

/// Read a file table (a path, or `-`): entries indexed by id, and its
/// header's parameters.
pub fn read_file_table(path: &Path) -> Result<(Vec<FileEntry>, Params)> {
    let mut files: Vec<FileEntry> = Vec::new();
    let params = scan_file_table(path, &mut |e| files.push(e))?;
    Ok((files, params))
}

/// Read a file table (a path, or `-`) as a [`CompactTable`], for the
/// stages that hold a million files' paths (fsim-report).
/// Also returns its trailer's parameters (the walk's counts are there:
/// [`crate::formats::headers::FilesTrailer`]).
pub fn read_compact_table(path: &Path) -> Result<(CompactTable, Params, Params)> {
    let mut t = CompactTable::default();
    let (params, trailer) = scan_file_table_ends(path, &mut |e| t.push(&e))?;
    t.shrink_to_fit();
    Ok((t, params, trailer))
}

/// Check a file table (header, consecutive ids, trailer count and digest)
/// and hand each entry, in id order, to `each`; returns the header's
/// parameters. Nothing is handed on after an error, but entries before it
/// are: callers drop what they built when this fails.
pub fn scan_file_table(path: &Path, each: &mut dyn FnMut(FileEntry)) -> Result<Params> {
    Ok(scan_file_table_ends(path, each)?.0)
}

/// [`scan_file_table`], returning the header's parameters and the
/// trailer's.
pub fn scan_file_table_ends(
    path: &Path,
    each: &mut dyn FnMut(FileEntry),
) -> Result<(Params, Params)> {
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let mut check = InputCheck::new(Kind::Files, "files");
    let mut count: u64 = 0;
    let mut announced: Option<(u64, Params, u64)> = None;
    let mut digest = TableDigest::default();
    while let Some((line, line_no)) = r.next_numbered()? {
        match line {
            Line::Header(k, p) => check
                .header(k, p)
                .map_err(|m| Error::input(&name, line_no, m))?,
            Line::Trailer(k, p) => {
                if k != Kind::Files {
                    return Err(Error::input(
                        &name,
                        line_no,
                        "expected '#end files' trailer",
                    ));
                }
                let n = p
                    .get_u64("files")
                    .ok_or_else(|| Error::input(&name, line_no, "trailer without files="))?;
                announced = Some((n, p, line_no));
            }
            Line::Comment(_) => {}
            Line::Data(d) => {
                if check.params.is_none() {
                    return Err(Error::input(
                        &name,
                        line_no,
                        "expected a '#fsim files v4' header (written by fsim-chunk --files-out)",
                    ));
                }
                digest.add_line(d);
                let e = FileEntry::parse(d).map_err(|m| Error::input(&name, line_no, m))?;
                if e.id as u64 != count {
                    return Err(Error::input(
                        &name,
                        line_no,
                        format!(
                            "expected file id {count} (ids are consecutive), found {}",
                            e.id
                        ),
                    ));
                }
                count += 1;
                each(e);
            }
        }
    }
    let line = r.line_number();
    let trailer = match announced {
        None => return Err(Error::input(&name, line, "no '#end files' trailer: the file table is truncated")),
        Some((n, _, _)) if n != count => {
            return Err(Error::input(&name, line, format!("{count} files read but the trailer announced {n}: the file table is truncated or was edited")))
        }
        Some((_, t, at)) => {
            digest.check(&t).map_err(|m| Error::input(&name, at, m))?;
            t
        }
    };
    Ok((check.params.clone().unwrap_or_default(), trailer))
}

/// A file table held in columns, with every path in one buffer: about 33
/// bytes per file plus its path's bytes, where a `Vec<FileEntry>` costs
/// ~110 (an 80-byte entry and a path allocation of its own). fsim-report
/// holds one for the whole run, so at a million files this is the
/// difference between ~60 and ~110 MB of its `--memory`.
/// The mtimes are kept to the second, for the checks of the actions
/// script (src/report/actions.rs).
#[derive(Debug, Default)]
pub struct CompactTable {
    /// End of each path in `paths`.
    ends: Vec<u64>,
    paths: Vec<u8>,
    sizes: Vec<u64>,
    mtimes: Vec<i64>,
    contents: Vec<u128>,
    types: Vec<FileType>,
    /// The view chunked and, for a raw one, the kind it could not be read
    /// as (2 bytes a file; the raw sizes are not kept: the html report
    /// checks a file by its identity).
    views: Vec<(ViewKind, Option<ViewKind>)>,
    /// (id, view hash) of the content views that have one, in id order:
    /// sparse, as most files are raw.
    view_hashes: Vec<(u32, u128)>,
    /// (id, archive path length) of the members of archives, in id order:
    /// sparse.
    members: Vec<(u32, u32)>,
    /// (id, why) of the archives whose members were not all listed, in id
    /// order: sparse.
    left_out: Vec<(u32, LeftOut)>,
    /// (id, length on disk) of the files whose view is not their raw
    /// bytes, in id order: sparse.
    raw_sizes: Vec<(u32, u64)>,
    /// (id, (device, inode)) of the files with more than one name, in id
    /// order: sparse.
    links: Vec<(u32, (u64, u64))>,
    /// (id, why) of the files and folders not read, in id order: sparse.
    unread: Vec<(u32, Unread)>,
}

/// One file of a [`CompactTable`], with the fields of a [`FileEntry`] that
/// the reports use.
#[derive(Debug, Clone, Copy)]
pub struct FileRef<'a> {
    pub id: u32,
    pub size: u64,
    pub content: u128,
    pub ftype: FileType,
    /// The view chunked (`size` is its length).
    pub view: ViewKind,
    /// The kind a document could not be read as (`view` is then `Raw`).
    pub unreadable: Option<ViewKind>,
    /// For a member of an archive, the length of the archive's path at the
    /// start of `path` ([`FileView::archive`]).
    pub archive: Option<u32>,
    /// For an archive whose members were not all listed, why
    /// ([`FileView::left_out`]).
    pub left_out: Option<LeftOut>,
    /// The file's own length on disk (`size` is its view's).
    pub raw_size: u64,
    /// (device, inode) of a file with more than one name ([`FileView::link`]).
    pub link: Option<(u64, u64)>,
    /// Why the walk's file or folder was not read ([`FileView::unread`]).
    pub unread: Option<Unread>,
    pub path: &'a [u8],
}

impl CompactTable {
    pub fn push(&mut self, e: &FileEntry) {
        self.paths.extend_from_slice(&e.path);
        self.ends.push(self.paths.len() as u64);
        self.sizes.push(e.size);
        self.mtimes.push(e.mtime_s);
        self.contents.push(e.content);
        self.types.push(e.ftype);
        self.views.push((e.view.kind, e.view.unreadable));
        if let Some(h) = e.view.hash {
            self.view_hashes.push((e.id, h));
        }
        if let Some(n) = e.view.archive {
            self.members.push((e.id, n));
        }
        if let Some(l) = e.view.left_out {
            self.left_out.push((e.id, l));
        }
        if e.view.raw_size != e.size {
            self.raw_sizes.push((e.id, e.view.raw_size));
        }
        if let Some(l) = e.view.link {
            self.links.push((e.id, l));
        }
        if let Some(u) = e.view.unread {
            self.unread.push((e.id, u));
        }
    }

    fn shrink_to_fit(&mut self) {
        self.ends.shrink_to_fit();
        self.paths.shrink_to_fit();
        self.sizes.shrink_to_fit();
        self.mtimes.shrink_to_fit();
        self.contents.shrink_to_fit();
        self.types.shrink_to_fit();
        self.views.shrink_to_fit();
        self.view_hashes.shrink_to_fit();
        self.members.shrink_to_fit();
        self.left_out.shrink_to_fit();
        self.raw_sizes.shrink_to_fit();
        self.links.shrink_to_fit();
        self.unread.shrink_to_fit();
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// File `id`; panics when there is none (ids come from a checked
    /// input).
    pub fn at(&self, id: u32) -> FileRef<'_> {
        self.get(id).expect("a file id of this table")
    }

    pub fn get(&self, id: u32) -> Option<FileRef<'_>> {
        let i = id as usize;
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(FileRef {
            id,
            size: self.sizes[i],
            content: self.contents[i],
            ftype: self.types[i],
            view: self.views[i].0,
            unreadable: self.views[i].1,
            archive: self
                .members
                .binary_search_by_key(&id, |&(i, _)| i)
                .ok()
                .map(|k| self.members[k].1),
            left_out: self
                .left_out
                .binary_search_by_key(&id, |&(i, _)| i)
                .ok()
                .map(|k| self.left_out[k].1),
            raw_size: self.raw_size(id),
            link: self.link(id),
            unread: self
                .unread
                .binary_search_by_key(&id, |&(i, _)| i)
                .ok()
                .map(|k| self.unread[k].1),
            path: &self.paths[start..end],
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = FileRef<'_>> + '_ {
        (0..self.len() as u32).map(|i| self.at(i))
    }

    pub fn content(&self, id: u32) -> u128 {
        self.contents[id as usize]
    }

    /// Size of file `id`: read from its column, for loops that need no
    /// more of the file than that ([`CompactTable::at`] also finds its
    /// path and archive).
    pub fn size(&self, id: u32) -> u64 {
        self.sizes[id as usize]
    }

    /// Type of file `id`, from its column (see [`CompactTable::size`]).
    pub fn ftype(&self, id: u32) -> FileType {
        self.types[id as usize]
    }

    /// Kind of file `id`'s view (see [`CompactTable::size`]).
    pub fn view_kind(&self, id: u32) -> ViewKind {
        self.views[id as usize].0
    }

    /// Path of file `id` (see [`CompactTable::size`]).
    pub fn path(&self, id: u32) -> &[u8] {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.paths[start..self.ends[i] as usize]
    }

    /// The hash of what file `id`'s view holds, comparable across files
    /// whatever their views: a raw view's content hash, a content view's
    /// view hash (`None` when its table did not record one, v3).
    pub fn view_hash(&self, id: u32) -> Option<u128> {
        if self.views[id as usize].0 == ViewKind::Raw {
            return Some(self.contents[id as usize]);
        }
        self.view_hashes
            .binary_search_by_key(&id, |&(i, _)| i)
            .ok()
            .map(|k| self.view_hashes[k].1)
    }

    /// The view hashes of the content views, in id order.
    pub fn view_hashes(&self) -> &[(u32, u128)] {
        &self.view_hashes
    }

    /// Length on disk of file `id`: what removing one of its copies frees
    /// (its `size` is its view's).
    pub fn raw_size(&self, id: u32) -> u64 {
        match self.raw_sizes.binary_search_by_key(&id, |&(i, _)| i) {
            Ok(k) => self.raw_sizes[k].1,
            Err(_) => self.sizes[id as usize],
        }
    }

    /// (id, (device, inode)) of every file with more than one name, in id
    /// order (the other names may be outside the table).
    pub fn links(&self) -> &[(u32, (u64, u64))] {
        &self.links
    }

    /// (device, inode) of file `id` when it has more than one name.
    pub fn link(&self, id: u32) -> Option<(u64, u64)> {
        self.links
            .binary_search_by_key(&id, |&(i, _)| i)
            .ok()
            .map(|k| self.links[k].1)
    }

    /// Modification time of file `id`, in whole seconds since the epoch.
    pub fn mtime(&self, id: u32) -> i64 {
        self.mtimes[id as usize]
    }

    /// Total size of the files `first..first + n` (a collection's).
    pub fn size_sum(&self, first: u32, n: u32) -> u64 {
        self.sizes[first as usize..(first + n) as usize]
            .iter()
            .sum()
    }

    /// Bytes held (the report's memory budget subtracts them).
    pub fn heap_bytes(&self) -> u64 {
        (self.ends.capacity() * 8
            + self.paths.capacity()
            + self.sizes.capacity() * 8
            + self.mtimes.capacity() * 8
            + self.contents.capacity() * 16
            + self.types.capacity()
            + self.views.capacity() * 2
            + self.view_hashes.capacity() * std::mem::size_of::<(u32, u128)>()
            + self.members.capacity() * 8
            + self.left_out.capacity() * 8
            + self.raw_sizes.capacity() * 16
            + self.links.capacity() * 24
            + self.unread.capacity() * 8) as u64
    }
}

/// What changed between an earlier file table `old` and `new`, for
/// re-runs that reuse the earlier pairs: `new_of_old` maps each earlier id
/// whose file is unchanged (same path, size, content hash and type) to its
/// new id (`u32::MAX` otherwise), and `changed[new id]` is true for the
/// files whose pairs must be found again: the changed and added ones, and
/// every file with the same content as a file added, removed or changed
/// (identical copies are analysed through one of them, so a change in a
/// set of copies can change which one carries the pairs). fsim-analyze and
/// fsim-verify both call this, so they agree on which pairs are reused.
/// The unchanged files keep their earlier order (an earlier pair read
/// later maps to a later pair): one whose new id is not after the last
/// kept one's (the members of an archive zipped again in another order)
/// is changed.
pub fn changed_since(new: &[FileEntry], old: &[FileEntry]) -> (Vec<bool>, Vec<u32>) {
    use std::collections::{HashMap, HashSet};
    // Most files keep their id (ids are walk positions, and few files come
    // or go): look there first, and hash the paths only for the others.
    let mut by_path: Option<HashMap<&[u8], &FileEntry>> = None;
    let mut same_path = |o: &FileEntry| -> Option<&FileEntry> {
        let at = new.get(o.id as usize).filter(|f| f.path == o.path);
        at.or_else(|| {
            by_path
                .get_or_insert_with(|| new.iter().map(|f| (&f.path[..], f)).collect())
                .get(&o.path[..])
                .copied()
        })
    };
    let max_old = old.iter().map(|f| f.id as usize + 1).max().unwrap_or(0);
    let max_new = new.iter().map(|f| f.id as usize + 1).max().unwrap_or(0);
    let mut new_of_old = vec![u32::MAX; max_old];
    let mut changed = vec![true; max_new];
    for o in old {
        if let Some(f) = same_path(o) {
            if f.size == o.size && f.content == o.content && f.ftype == o.ftype {
                new_of_old[o.id as usize] = f.id;
                changed[f.id as usize] = false;
            }
        }
    }
    // The earlier pairs are read in their order, mapped to the new ids,
    // and must stay in it: an unchanged file whose new id is not after
    // the one before it (the members of an archive zipped again in
    // another order) has its pairs found again, as if changed.
    let mut last = None;
    for n in new_of_old.iter_mut().filter(|n| **n != u32::MAX) {
        if last.is_some_and(|l| *n <= l) {
            changed[*n as usize] = true;
            *n = u32::MAX;
        } else {
            last = Some(*n);
        }
    }
    // Contents of the files added, removed or changed, before and after.
    let touched: HashSet<u128> = new
        .iter()
        .filter(|f| changed[f.id as usize])
        .chain(old.iter().filter(|o| new_of_old[o.id as usize] == u32::MAX))
        .map(|f| f.content)
        .collect();
    for f in new {
        if touched.contains(&f.content) {
            changed[f.id as usize] = true;
        }
    }
    for n in new_of_old.iter_mut() {
        if *n != u32::MAX && changed[*n as usize] {
            *n = u32::MAX;
        }
    }
    (changed, new_of_old)
}

/// A file's share of a table's paths' identity (a sum, so blocks add up
/// in any order): which path (as the table writes it, escaped) has which
/// id, whatever the other fields. A re-run's changed set and the earlier
/// dropped list name their table by it, not by its `table-digest`: a
/// table whose files were only touched has other timestamps, and the
/// stages after it are copied from the earlier run with their lists.
#[inline]
pub fn path_mix(id: u32, escaped_path: &[u8]) -> u128 {
    crate::formats::mix128(xxhash_rust::xxh3::xxh3_128(escaped_path) ^ id as u128)
}

/// The path of a file table's record line, as written (its last field).
pub fn escaped_path(line: &[u8]) -> &[u8] {
    memchr::memrchr(b'\t', line).map_or(line, |t| &line[t + 1..])
}

/// Trailer key of the digest of the file table's own records.
pub const TABLE_DIGEST_KEY: &str = "table-digest";

/// Digest of a file table's own records (each line without its newline;
/// header, trailer and `#` lines are not records): the wrapping sum of
/// their MD5s, so a changed byte in any field of any record (a path, a
/// content hash) changes it. The trailer carries it as `table-digest=`,
/// next to the chunk stream's count and digest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableDigest(pub u128);

impl TableDigest {
    /// Add one record line (without its newline).
    #[inline]
    pub fn add_line(&mut self, line: &[u8]) {
        // xxh3-128, not MD5: an MD5 per line cost fsim-partition 12 of its
        // 15 CPU-seconds on a 15 M-file table; xxh3 is ~20x cheaper and as
        // good at catching damage (it is not a defence against forgery,
        // and none of the trailers are).
        self.0 = self.0.wrapping_add(xxhash_rust::xxh3::xxh3_128(line));
    }

    /// Append `entry`'s line to `out` and add it.
    pub fn write(&mut self, entry: &FileEntry, out: &mut Vec<u8>) {
        let start = out.len();
        entry.write(out);
        self.add_line(&out[start..out.len() - 1]);
    }

    /// Add one record line's identity without its modification time (its
    /// third field), so that two tables whose files were only touched add
    /// up the same: a re-run with the earlier records and such a table has
    /// no file to analyse again ([`crate::stages::chunk`]).
    #[inline]
    pub fn add_untimed(&mut self, line: &[u8]) {
        let mut tabs = memchr::memchr_iter(b'\t', line);
        let v = match (tabs.next(), tabs.next(), tabs.next()) {
            (Some(_), Some(t2), Some(t3)) => {
                let (head, tail) = (&line[..t2], &line[t3..]);
                xxhash_rust::xxh3::xxh3_128(head)
                    ^ xxhash_rust::xxh3::xxh3_128(tail).rotate_left(64)
            }
            _ => xxhash_rust::xxh3::xxh3_128(line),
        };
        self.0 = self.0.wrapping_add(crate::formats::mix128(v));
    }

    pub fn merge(&mut self, o: TableDigest) {
        self.0 = self.0.wrapping_add(o.0);
    }

    /// The trailer's `table-digest=` value.
    pub fn hex(&self) -> String {
        crate::formats::numbers::hex128(self.0)
    }

    /// Check the records read against the trailer (a message for the
    /// trailer's line when it lacks the digest or differs).
    pub fn check(&self, trailer: &Params) -> std::result::Result<(), String> {
        match trailer.get_u128_hex(TABLE_DIGEST_KEY) {
            None => Err(format!(
                "expected {TABLE_DIGEST_KEY}= in the file table's trailer (a digest of its records, written by fsim-chunk and fsim-merge)"
            )),
            Some(d) if d != self.0 => Err(format!(
                "expected the file records to match the trailer's {TABLE_DIGEST_KEY}=: a path, content hash or other field was changed, or records were lost or mixed with another file table's"
            )),
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A v2 table (six fields, no `content=`) still reads: its files are
    /// raw views whose raw size is their size, and it was chunked raw.
    #[test]
    fn a_v2_table_reads_as_raw_views() {
        let rec = b"0000000000\t5\t1.000000000\td41d8cd98f00b204e9800998ecf8427e\ttext\ta.txt";
        let mut d = TableDigest::default();
        d.add_line(rec);
        let text = format!(
            "#fsim files v2\tmethod=tttd\tavg=100\n{}\n#end files\tfiles=1\ttable-digest={}\n",
            std::str::from_utf8(rec).unwrap(),
            d.hex()
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("files.tsv");
        std::fs::write(&path, text).unwrap();
        let (files, params) = read_file_table(&path).unwrap();
        assert_eq!(files[0].view, FileView::raw(5));
        assert_eq!(files[0].path, b"a.txt");
        // No `content=`: `content::Mode::of_table` reads it as raw.
        assert_eq!(params.get("content"), None);
    }

    /// The members of an archive zipped again in another order keep their
    /// contents but swap their ids: the earlier pairs, mapped, would come
    /// out of order, so the second is found again, as if changed (with
    /// its copy), and the others keep their earlier ids' pairs.
    #[test]
    fn a_file_whose_new_id_breaks_the_earlier_order_is_changed() {
        let entry = |id: u32, path: &str, content: u128| FileEntry {
            id,
            size: 10,
            mtime_s: 1,
            mtime_ns: 0,
            content,
            ftype: FileType::Text,
            view: FileView::raw(10),
            path: path.as_bytes().to_vec(),
        };
        let old = [
            entry(0, "a.txt", 1),
            entry(1, "m.zip!/p.txt", 2),
            entry(2, "m.zip!/q.txt", 3),
            entry(3, "z.txt", 3),
        ];
        let new = [
            entry(0, "a.txt", 1),
            entry(1, "m.zip!/q.txt", 3),
            entry(2, "m.zip!/p.txt", 2),
            entry(3, "z.txt", 3),
        ];
        let (changed, new_of_old) = changed_since(&new, &old);
        assert_eq!(new_of_old, [0, 2, u32::MAX, u32::MAX]);
        assert_eq!(changed, [false, true, false, true]);
    }

    /// The table digest's hash is the reference xxh3-128 (seed 0), the one
    /// Python's `xxhash.xxh3_128_intdigest` computes, so tools outside fsim
    /// can check a table: a known answer from it.
    #[test]
    fn table_digest_is_reference_xxh3_128() {
        let mut d = TableDigest::default();
        d.add_line(b"hello world");
        assert_eq!(d.hex(), "df8d09e93f874900a99b8775cc15b6c7");
        d.add_line(b"hello world");
        assert_eq!(d.0, 0xdf8d09e93f874900a99b8775cc15b6c7u128.wrapping_mul(2));
    }
}
