//! `fsim-partition`: prune and partition the file-chunk graph into
//! independent sub-problems (paper 2.5 steps 3-4).
//!
//! One pass over the **sorted** chunk stream: consecutive records with the
//! same hash form a chunk group, whose degree is its number of distinct
//! files. Groups of degree 1 cannot link files and are dropped; groups above
//! the degree limit (default: half the files, as in the paper) would glue
//! everything into one component and are dropped and reported; every other
//! group unions its files in a [`UnionFind`] and its records are written out
//! unchanged. Then one `F` line per file of a component of ≥ 2 files.
//!
//! Memory, bounded by files and not by chunks: 5 bytes per file (union-find
//! parent + rank, reused afterwards for component labels) plus the largest
//! chunk group kept (8 bytes per record, plus its text while it is under
//! [`TEXT_GROUP_MAX`] records; a group is let go as soon as its degree
//! passes the limit). File sizes and content hashes for the `F`
//! lines are not kept: only the first and last lines of the file table are
//! read up front (its header and trailer: parameters, file count, digest of
//! the records), and the whole table once at the end, which is why
//! `--files` must be a regular file. (If it is a pipe, it is read up front
//! and 24 more bytes per file are kept instead.)
//!
//! Time: one thread parses, checks and groups the chunk stream and copies
//! the kept records' text; this one runs the union-find on the file pairs
//! it is sent (random memory accesses, the one part that cannot be split);
//! a third writes. Records are never formatted again unless their group is
//! long. Figures in docs/performance.md.

pub mod unionfind;

use crate::error::{Error, Result};
use crate::formats::files::{TableDigest, TABLE_DIGEST_KEY};
use crate::formats::open_input;
use crate::formats::{
    classify_line, digest_params, hex128, parse_hex128, parse_id, parse_u64, write_header,
    write_trailer, Digest, InputCheck, Kind, Line, Params, CHUNK_PARAM_KEYS,
};
use crate::io::bgwrite::BgWriter;
use crate::io::Output;
use crate::stages::partition::unionfind::{QueuedUnions as Unions, UnionFind};
use crate::stages::sort::{format_chunk_line, parse_chunk_line, ChunkKey, FastLines};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::Instant;

/// How many of the dropped chunks of highest degree are reported.
pub const TOP_DROPPED: usize = 20;

/// Default floor of the degree limit: a chunk held by this many files or
/// fewer is never dropped, whatever the fraction. Keeping a chunk of
/// degree d costs the analysis d(d-1)/2 pair updates (16 bytes each when a
/// bin is oversized): 0.5 M for d = 1000, under a second and 8 MB, so no
/// folder of versions smaller than this is ever pruned; the paper's case (a
/// header in all of 100,000 files) is still dropped at half the files.
/// docs/pipeline.md, "Which chunks are dropped".
pub const DEFAULT_DEGREE_FLOOR: u64 = 1000;

/// The chunk degree limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// At most this many distinct files per chunk.
    Absolute(u64),
    /// max(floor(files × fraction), floor); the paper uses one half and no
    /// floor, which drops every shared chunk of a family of versions that
    /// is more than half of a small folder.
    Fraction { fraction: f64, floor: u64 },
}

impl Limit {
    /// The paper's half of the files, with [`DEFAULT_DEGREE_FLOOR`].
    pub const DEFAULT: Limit = Limit::Fraction {
        fraction: 0.5,
        floor: DEFAULT_DEGREE_FLOOR,
    };

    pub fn resolve(self, files: u64) -> u64 {
        match self {
            Limit::Absolute(n) => n,
            Limit::Fraction { fraction, floor } => {
                ((files as f64 * fraction).floor() as u64).max(floor)
            }
        }
    }
}

/// The set of files that hold a dropped chunk: their similarity to others
/// is a lower bound (pairs linked only through dropped chunks are never
/// candidates). One bit per file: 1.9 MB for 15 M files.
#[derive(Debug, Clone, Default)]
pub struct FileBits(Vec<u64>);

impl FileBits {
    pub fn new(files: u64) -> Self {
        FileBits(vec![0; files.div_ceil(64) as usize])
    }

    #[inline]
    pub fn set(&mut self, file: u32) {
        if let Some(w) = self.0.get_mut(file as usize / 64) {
            *w |= 1 << (file % 64);
        }
    }

    pub fn words(&self) -> &[u64] {
        &self.0
    }

    pub fn count(&self) -> u64 {
        self.0.iter().map(|w| w.count_ones() as u64).sum()
    }
}

/// Validated options of `fsim-partition`.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub limit: Limit,
    pub quiet: bool,
    /// Templates files (`--templates`): their chunks are ignored and file
    /// sizes reduced to their payload (`crate::stages::templates`).
    pub templates: Vec<PathBuf>,
}

/// A dropped chunk of high degree, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    pub hash: u128,
    pub degree: u64,
    pub len: u32,
    /// Smallest file id holding the chunk.
    pub example: u32,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files: u64,
    pub limit: u64,
    pub records_in: u64,
    pub kept: Digest,
    pub components: u64,
    pub files_in_components: u64,
    pub singleton_chunks: u64,
    pub dropped_chunks: u64,
    pub dropped_records: u64,
    /// Files holding at least one dropped chunk.
    pub pruned_files: u64,
    /// Highest-degree dropped chunks, highest first.
    pub top: Vec<Dropped>,
    /// Escaped path of the example file of the highest dropped chunk.
    pub top_example_path: Option<String>,
    /// `; templates: ...` phrase, empty without templates.
    pub templates: String,
    pub seconds: f64,
}

impl Summary {
    /// The stderr report, one line: the analyst must see what was dropped.
    pub fn report(&self) -> String {
        let mut s = format!(
            "fsim-partition: {} files, {} components of 2 or more files holding {} files, {} records kept of {} ({} single-file chunks dropped){}",
            self.files,
            self.components,
            self.files_in_components,
            self.kept.count,
            self.records_in,
            self.singleton_chunks,
            self.templates,
        );
        s += &format!(
            "; dropped {} chunks above degree {} ({} records, in {} files whose similarity is now a lower bound)",
            self.dropped_chunks, self.limit, self.dropped_records, self.pruned_files
        );
        if let Some(t) = self.top.first() {
            let ex = match &self.top_example_path {
                Some(p) => p.clone(),
                None => format!("file id {}", t.example),
            };
            s += &format!(
                "; highest: degree {}, {} bytes, e.g. {}",
                t.degree, t.len, ex
            );
        }
        s += &format!("; {:.2} s\n", self.seconds);
        s
    }
}

/// What reading the file table gives.
#[derive(Debug, Clone, PartialEq)]
struct FileTable {
    name: String,
    params: Params,
    files: u64,
    chunk_digest: Digest,
    /// The trailer's digest of the table's own records (`table-digest=`).
    table_digest: u128,
}

/// The fields of a file-table line that this stage needs: id, size, content
/// and the (still escaped) path.
fn parse_file_line(line: &[u8]) -> std::result::Result<(u32, u64, u128, &[u8]), String> {
    // memchr rather than `split_fields`: this runs for every file and the
    // path is the longest field.
    let bad = || format!("expected {}", crate::formats::FileEntry::EXPECTED);
    let mut tabs = [0usize; 5];
    let mut it = memchr::memchr_iter(b'\t', line);
    for t in tabs.iter_mut() {
        *t = it.next().ok_or_else(bad)?;
    }
    let path = &line[tabs[4] + 1..];
    if memchr::memchr(b'\t', path).is_some() {
        return Err(bad());
    }
    let id = parse_id(&line[..tabs[0]]).ok_or("expected a 10-digit file id in field 1")?;
    let size =
        parse_u64(&line[tabs[0] + 1..tabs[1]]).ok_or("expected a size in bytes in field 2")?;
    let content = parse_hex128(&line[tabs[2] + 1..tabs[3]])
        .ok_or("expected a 32-digit lowercase hex content hash in field 4")?;
    Ok((id, size, content, path))
}

fn is_regular(path: &Path) -> bool {
    path.as_os_str() != "-"
        && std::fs::metadata(path)
            .map(|m| m.is_file())
            .unwrap_or(false)
}

/// The header and trailer of a regular file table without reading its
/// records: its first line and its last line. `None` when they are not a
/// well-formed files header and trailer (the full read then says why).
fn peek_file_table(path: &Path) -> Option<FileTable> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut head = vec![0u8; 64 << 10];
    let n = f.read(&mut head).ok()?;
    let first = &head[..memchr::memchr(b'\n', &head[..n])?];
    let Ok(Line::Header(Kind::Files, params)) = classify_line(first) else {
        return None;
    };
    let tail_len = len.min(64 << 10);
    f.seek(SeekFrom::Start(len - tail_len)).ok()?;
    let mut tail = vec![0u8; tail_len as usize];
    f.read_exact(&mut tail).ok()?;
    let body = tail.strip_suffix(b"\n")?;
    let last = &body[memchr::memrchr(b'\n', body)? + 1..];
    let Ok(Line::Trailer(Kind::Files, t)) = classify_line(last) else {
        return None;
    };
    FileTable::from_ends(path.display().to_string(), params, &t)
}

impl FileTable {
    /// The table described by its header and trailer; `None` when the
    /// trailer lacks a field or announces more than 2^32 files.
    fn from_ends(name: String, params: Params, t: &Params) -> Option<FileTable> {
        let files = t.get_u64("files")?;
        if files > u32::MAX as u64 + 1 {
            return None;
        }
        Some(FileTable {
            name,
            params,
            files,
            chunk_digest: Digest {
                count: t.get_u64("records")?,
                sum: t.get_u128_hex("digest")?,
            },
            table_digest: t.get_u128_hex(TABLE_DIGEST_KEY)?,
        })
    }
}

/// Read the whole file table: header, ids 0..N in order, trailer; `each`
/// sees every record's (id, size, content, escaped path).
fn read_file_table(
    path: &Path,
    mut each: impl FnMut(u32, u64, u128, &[u8]) -> Result<()>,
) -> Result<FileTable> {
    let (r, name) = open_input(path)?;
    let mut lines = FastLines::new(r, name);
    let mut params = None;
    let mut files = 0u64;
    let mut trailer = None;
    let (mut table, mut trailer_at) = (TableDigest::default(), 0u64);
    while let Some((line, at)) = lines.next_line_at()? {
        if line.first() == Some(&b'#') {
            match classify_line(line).map_err(|m| at.error(m))? {
                Line::Header(Kind::Files, p) if params.is_none() && files == 0 => params = Some(p),
                Line::Header(Kind::Files, _) => {
                    return Err(lines.error("a second file-table header: one file table expected"))
                }
                Line::Header(k, _) => {
                    return Err(lines.error(format!(
                        "this is a {} file (written by {}), expected a files table (written by {})",
                        k.as_str(),
                        k.producer(),
                        Kind::Files.producer()
                    )))
                }
                Line::Trailer(Kind::Files, p) => {
                    trailer = Some(p);
                    trailer_at = lines.line_number();
                }
                Line::Trailer(k, _) => {
                    return Err(
                        lines.error(format!("trailer of a {} file in a files table", k.as_str()))
                    )
                }
                _ => {}
            }
            continue;
        }
        if params.is_none() {
            return Err(lines.error("no '#fsim files v2' header: expected a file table written by fsim-chunk --files-out"));
        }
        if trailer.is_some() {
            return Err(lines.error("record after the trailer"));
        }
        table.add_line(line);
        let (id, size, content, path) = parse_file_line(line).map_err(|m| at.error(m))?;
        if id as u64 != files {
            return Err(lines.error(format!(
                "file id {id} out of order: expected {files} (ids are 0, 1, 2... in order)"
            )));
        }
        each(id, size, content, path)?;
        files += 1;
    }
    let line = lines.line_number();
    let name = lines.name().to_string();
    let params = params.ok_or_else(|| {
        Error::input(
            &name,
            line,
            "no '#fsim files v2' header: expected a file table written by fsim-chunk --files-out",
        )
    })?;
    let t = trailer.ok_or_else(|| {
        Error::input(
            &name,
            line,
            "no '#end files' trailer: the file table is truncated",
        )
    })?;
    if t.get_u64("files") != Some(files) {
        return Err(Error::input(&name, line, format!("{files} files read but the trailer announced {}: the file table is truncated or was edited", t.get("files").unwrap_or("none"))));
    }
    let count = t
        .get_u64("records")
        .ok_or_else(|| Error::input(&name, line, "trailer without records="))?;
    let sum = t
        .get_u128_hex("digest")
        .ok_or_else(|| Error::input(&name, line, "trailer without digest="))?;
    if files > u32::MAX as u64 + 1 {
        return Err(Error::input(&name, line, "more than 2^32 files"));
    }
    table
        .check(&t)
        .map_err(|m| Error::input(&name, trailer_at, m))?;
    Ok(FileTable {
        name,
        params,
        files,
        chunk_digest: Digest { count, sum },
        table_digest: table.0,
    })
}

/// Where [`Grouper`] puts what it keeps.
pub trait Keep {
    /// The output block: kept records are appended to it as text lines.
    fn text(&mut self) -> &mut Vec<u8>;
    /// The text before the current group may be written out now (called
    /// between groups, and while a long kept group is formatted).
    fn spill(&mut self) -> Result<()>;
    /// Files `a` and `b` share a kept chunk (`a` is the group's first file).
    fn link(&mut self, a: u32, b: u32) -> Result<()>;
}

/// (degree, reversed hash, length, example): larger is reported first.
type TopKey = (u64, std::cmp::Reverse<u128>, u32, u32);

/// Kept groups of up to this many records are copied to the output as the
/// input text while they are read; longer ones are formatted again from
/// their (file, length) pairs at the end, so that the text held for one
/// group stays small whatever its degree.
pub const TEXT_GROUP_MAX: u64 = 4096;

/// The grouping state machine, separate from I/O so it can be unit tested:
/// feed the records in sorted order with [`Grouper::add`] (a new hash closes
/// the group before it), then [`Grouper::finish`].
///
/// A kept group's records go out unchanged: their input lines are copied
/// into [`Keep::text`] as they come (parse, then format again, would cost
/// twice as much), and taken back out if the group turns out to be a
/// singleton or above the limit.
pub struct Grouper {
    pub limit: u64,
    hash: u128,
    /// (file, len) of the current group's records while it may be kept.
    recs: Vec<(u32, u32)>,
    nrecs: u64,
    degree: u64,
    last_file: u32,
    first_len: u32,
    example: u32,
    /// Sum of the current group's record mixes (its share of the digest).
    mix: u128,
    /// Where the current group's text begins in [`Keep::text`].
    text_at: usize,
    text_max: u64,
    pub kept: Digest,
    pub singleton_chunks: u64,
    pub dropped_chunks: u64,
    pub dropped_records: u64,
    /// Files holding a dropped chunk.
    pub pruned: FileBits,
    /// Min-heap by degree of the highest dropped chunks.
    top: std::collections::BinaryHeap<std::cmp::Reverse<TopKey>>,
}

impl Grouper {
    /// A grouper for file ids below `files`.
    pub fn new(limit: u64, files: u64) -> Self {
        Grouper {
            limit,
            hash: 0,
            recs: Vec::new(),
            nrecs: 0,
            degree: 0,
            last_file: 0,
            first_len: 0,
            example: 0,
            mix: 0,
            text_at: 0,
            text_max: TEXT_GROUP_MAX,
            kept: Digest::default(),
            singleton_chunks: 0,
            dropped_chunks: 0,
            dropped_records: 0,
            pruned: FileBits::new(files),
            top: Default::default(),
        }
    }

    /// Kept groups longer than `n` records are formatted from their keys
    /// (tests use a small `n` to cover that path).
    pub fn with_text_max(mut self, n: u64) -> Self {
        self.text_max = n;
        self
    }

    /// Add a record (sorted order: file ids ascending within a hash);
    /// `mix` is its digest contribution, `line` its canonical text without
    /// newline. A new hash first closes the previous group.
    #[inline]
    pub fn add(
        &mut self,
        k: &ChunkKey,
        mix: u128,
        line: &[u8],
        keep: &mut impl Keep,
    ) -> Result<()> {
        let hash = k.hash();
        if self.nrecs > 0 && hash != self.hash {
            self.end_group(keep)?;
            keep.spill()?;
        }
        if self.nrecs == 0 {
            self.hash = hash;
            self.first_len = k.len;
            self.example = k.file;
            self.degree = 1;
            self.mix = 0;
            self.text_at = keep.text().len();
        } else if k.file != self.last_file {
            self.degree += 1;
            if self.degree == self.limit.saturating_add(1) {
                // Dropped whatever follows: let go of what was held, and
                // remember its files.
                for &(file, _) in &self.recs {
                    self.pruned.set(file);
                }
                self.recs.clear();
                keep.text().truncate(self.text_at);
            }
        }
        self.last_file = k.file;
        self.nrecs += 1;
        self.mix = self.mix.wrapping_add(mix);
        if self.degree <= self.limit {
            self.recs.push((k.file, k.len));
            if self.nrecs <= self.text_max {
                let t = keep.text();
                t.extend_from_slice(line);
                t.push(b'\n');
            }
        } else {
            self.pruned.set(k.file);
        }
        Ok(())
    }

    /// Close the last group.
    pub fn finish(&mut self, keep: &mut impl Keep) -> Result<()> {
        self.end_group(keep)?;
        keep.spill()
    }

    /// Close the current group: keep (text, digest, links) or count it.
    fn end_group(&mut self, keep: &mut impl Keep) -> Result<()> {
        if self.nrecs == 0 {
            return Ok(());
        }
        if self.degree == 1 {
            self.singleton_chunks += 1;
            keep.text().truncate(self.text_at);
        } else if self.degree <= self.limit {
            self.kept.count += self.nrecs;
            self.kept.sum = self.kept.sum.wrapping_add(self.mix);
            if self.nrecs > self.text_max {
                keep.text().truncate(self.text_at);
                let (hi, lo) = ((self.hash >> 64) as u64, self.hash as u64);
                for (i, &(file, len)) in self.recs.iter().enumerate() {
                    let mut line = [0u8; 64];
                    let n = format_chunk_line(&ChunkKey { hi, lo, file, len }, &mut line);
                    keep.text().extend_from_slice(&line[..n]);
                    if i % 4096 == 4095 {
                        keep.spill()?;
                    }
                }
            }
            let first = self.recs[0].0;
            let mut prev = first;
            for &(file, _) in &self.recs {
                if file != prev {
                    keep.link(first, file)?;
                    prev = file;
                }
            }
        } else {
            self.dropped_chunks += 1;
            self.dropped_records += self.nrecs;
            let item = std::cmp::Reverse((
                self.degree,
                std::cmp::Reverse(self.hash),
                self.first_len,
                self.example,
            ));
            if self.top.len() < TOP_DROPPED {
                self.top.push(item);
            } else if self.top.peek().is_some_and(|m| item < *m) {
                self.top.pop();
                self.top.push(item);
            }
        }
        self.recs.clear();
        self.nrecs = 0;
        Ok(())
    }

    /// Dropped chunks of highest degree, highest first (ties: smaller hash).
    pub fn top_dropped(&self) -> Vec<Dropped> {
        let mut v: Vec<Dropped> = self
            .top
            .iter()
            .map(
                |std::cmp::Reverse((degree, std::cmp::Reverse(hash), len, example))| Dropped {
                    hash: *hash,
                    degree: *degree,
                    len: *len,
                    example: *example,
                },
            )
            .collect();
        v.sort_by(|a, b| b.degree.cmp(&a.degree).then(a.hash.cmp(&b.hash)));
        v
    }
}

/// File pairs per batch handed from the grouping thread to the union-find.
const LINKS: usize = 1 << 15;

/// What the grouping thread found besides the kept records.
struct Grouped {
    grouper: Grouper,
    /// The output, the kept records written (or queued) into it.
    out: BgWriter,
    seen: Digest,
    check: InputCheck,
    last_name: String,
    last_line: u64,
    /// Feature methods: distinct features per file (see `group_chunks`).
    feature_counts: Option<Vec<u32>>,
    /// Template bytes per file (`--templates`).
    tmpl: crate::stages::templates::PayloadCounter,
}

/// [`Keep`] of [`run`]: kept text into the output's current block, file
/// pairs in batches to the union-find thread (returned empty for reuse).
struct RunKeep {
    out: BgWriter,
    links: Vec<(u32, u32)>,
    tx: SyncSender<Vec<(u32, u32)>>,
    back: Receiver<Vec<(u32, u32)>>,
    /// The union-find thread is gone (it only stops early on a panic).
    closed: bool,
}

impl RunKeep {
    fn send_links(&mut self) {
        let next = self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(LINKS));
        let full = std::mem::replace(&mut self.links, next);
        self.closed |= self.tx.send(full).is_err();
    }
}

impl Keep for RunKeep {
    #[inline]
    fn text(&mut self) -> &mut Vec<u8> {
        self.out.buf()
    }

    #[inline]
    fn spill(&mut self) -> Result<()> {
        self.out.maybe_flush()
    }

    #[inline]
    fn link(&mut self, a: u32, b: u32) -> Result<()> {
        self.links.push((a, b));
        if self.links.len() == LINKS {
            self.send_links();
        }
        Ok(())
    }
}

/// The grouping thread of [`run`]: read and check the sorted chunk stream,
/// group it, write the kept records to `out` and send the file pairs to
/// link to the union-find thread.
#[allow(clippy::too_many_arguments)]
fn group_chunks(
    inputs: &[PathBuf],
    table: &FileTable,
    chunk_params: &Params,
    mut tmpl: crate::stages::templates::PayloadCounter,
    limit: u64,
    quiet: bool,
    out: BgWriter,
    tx: SyncSender<Vec<(u32, u32)>>,
    back: Receiver<Vec<(u32, u32)>>,
) -> Result<Grouped> {
    let n = table.files;
    let mut check = InputCheck::new(Kind::Chunks, "records");
    let mut seen = Digest::default();
    let mut prev: Option<(u64, u64, u32)> = None;
    // Feature methods: distinct features per file (all of them, before
    // degree-1 and ubiquitous ones are dropped), for the F lines: the
    // analysis needs each file's set size for resemblance. 4 bytes per file.
    let mut feature_counts: Option<Vec<u32>> = chunk_params
        .get("method")
        .is_some_and(crate::chunking::features::is_feature_method)
        .then(|| vec![0u32; n as usize]);
    let (mut last_name, mut last_line) = (String::from("-"), 0);
    let mut grouper = Grouper::new(limit, n);
    let mut keep = RunKeep {
        out,
        links: Vec::with_capacity(LINKS),
        tx,
        back,
        closed: false,
    };
    let paths: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let progress = crate::io::progress::Progress::for_inputs("fsim-partition", &paths, quiet);
    for path in inputs {
        let (r, name) = open_input(path)?;
        let r = progress.reader(r);
        let mut lines = FastLines::new(r, name);
        while let Some((line, at)) = lines.next_line_at()? {
            if let Some(k) = parse_chunk_line(line) {
                let key = (k.hi, k.lo, k.file);
                if prev.is_some_and(|p| key < p) {
                    return Err(at.error(
                        "input is not sorted by hash: run fsim-sort or LC_ALL=C sort first",
                    ));
                }
                if k.file as u64 >= n {
                    return Err(at.error(format!(
                        "file id {} is not in the file table {} ({n} files): wrong or stale file table",
                        k.file, table.name
                    )));
                }
                if let Some(c) = feature_counts.as_mut() {
                    if prev != Some(key) {
                        let slot = &mut c[k.file as usize];
                        *slot = slot.saturating_add(1);
                    }
                }
                prev = Some(key);
                let mix = k.record().mix();
                seen.add_mix(mix);
                if tmpl.take(k.hash(), k.file, k.len) {
                    continue;
                }
                grouper.add(&k, mix, line, &mut keep)?;
                continue;
            }
            match classify_line(line).map_err(|m| at.error(m))? {
                Line::Header(kind, params) => {
                    if let Some(d) = params.only(CHUNK_PARAM_KEYS).difference(chunk_params) {
                        return Err(at.error(format!(
                            "chunking parameters differ from the file table {}: {d} (in the file table)",
                            table.name
                        )));
                    }
                    check.header(kind, params).map_err(|m| at.error(m))?;
                }
                Line::Trailer(kind, params) => {
                    check.trailer(kind, &params).map_err(|m| at.error(m))?
                }
                Line::Comment(_) => {}
                Line::Data(_) => {
                    return Err(at.error(format!(
                        "expected {}",
                        crate::formats::ChunkRecord::EXPECTED
                    )));
                }
            }
        }
        last_name = lines.name().to_string();
        last_line = lines.line_number();
    }
    grouper.finish(&mut keep)?;
    if !keep.links.is_empty() {
        keep.send_links();
    }
    if keep.closed {
        return Err(Error::msg("internal error: the union-find thread stopped"));
    }
    progress.finish();
    Ok(Grouped {
        grouper,
        out: keep.out,
        seen,
        check,
        last_name,
        last_line,
        feature_counts,
        tmpl,
    })
}

/// Partition; see the module doc. Nothing is written when an input is
/// invalid, unsorted, truncated or does not belong to the file table.
///
/// Threads: one reads and parses the chunk stream (and checks its order),
/// this one groups and unions, a third writes the output
/// ([`BgWriter`]). A regular file table is read once, at the end, for the
/// `F` lines; only its first and last lines are read up front.
pub fn run(cfg: &Config) -> Result<Summary> {
    let t0 = Instant::now();
    crate::io::wait_for_input(cfg.inputs.first().map_or(Path::new("-"), |p| p.as_path()))?;
    // Size and content per file, when the table cannot be read again (a
    // pipe) or its ends do not look right (the full read says why).
    let mut kept_files: Option<Vec<(u64, u128)>> = None;
    let peeked = if is_regular(&cfg.files) {
        peek_file_table(&cfg.files)
    } else {
        None
    };
    let table = match peeked {
        Some(t) => t,
        None => {
            let mut k = Vec::new();
            let t = read_file_table(&cfg.files, |_, size, content, _| {
                k.push((size, content));
                Ok(())
            })?;
            kept_files = Some(k);
            t
        }
    };
    let n = table.files;
    let limit = cfg.limit.resolve(n);
    let chunk_params = table.params.only(CHUNK_PARAM_KEYS);
    let tmpl = crate::stages::templates::PayloadCounter::new(
        crate::formats::templates::TemplateSet::load(&cfg.templates, &chunk_params)?,
        n as usize,
    );
    let mut w = BgWriter::new(Output::create(cfg.output.as_deref())?);
    let mut head = Vec::new();
    let mut hp = chunk_params.clone().with("files", n).with("limit", limit);
    for (k, v) in tmpl.set.header_params().0 {
        hp.set(&k, v);
    }
    write_header(Kind::Partition, &hp, &mut head);
    w.raw(&head)?;

    let default_input = [PathBuf::from("-")];
    let inputs: &[PathBuf] = if cfg.inputs.is_empty() {
        &default_input
    } else {
        &cfg.inputs
    };
    let (grouped, unions) = std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<Vec<(u32, u32)>>(4);
        let (back_tx, back_rx) = sync_channel::<Vec<(u32, u32)>>(8);
        let (table, chunk_params) = (&table, &chunk_params);
        let quiet = cfg.quiet;
        let grouping = s.spawn(move || {
            group_chunks(
                inputs,
                table,
                chunk_params,
                tmpl,
                limit,
                quiet,
                w,
                tx,
                back_rx,
            )
        });
        // This thread: the union-find, fed in input order.
        let mut unions = Unions::new(n as usize);
        for mut links in rx.iter() {
            for &(a, b) in &links {
                unions.queue(a, b);
            }
            links.clear();
            let _ = back_tx.try_send(links);
        }
        let grouped = grouping
            .join()
            .unwrap_or_else(|_| Err(Error::msg("internal error: the grouping thread panicked")));
        (grouped, unions)
    });
    let gr = grouped?;
    let (g, mut w, seen, tmpl, feature_counts) =
        (gr.grouper, gr.out, gr.seen, gr.tmpl, gr.feature_counts);
    let last_name = gr.last_name;
    gr.check.finish(&seen, &last_name, gr.last_line)?;
    if seen != table.chunk_digest {
        return Err(Error::msg(format!(
            "{last_name} does not belong to the file table {}: it holds {} records (digest {}) but the file table was written with {} records (digest {}); a stale or foreign file table",
            table.name,
            seen.count,
            hex128(seen.sum),
            table.chunk_digest.count,
            hex128(table.chunk_digest.sum)
        )));
    }

    let top = g.top_dropped();
    let kept = g.kept;
    let (singleton_chunks, dropped_chunks, dropped_records) =
        (g.singleton_chunks, g.dropped_chunks, g.dropped_records);
    let pruned_files = g.pruned.count();
    drop(g);
    let comps = unions.into_components();
    let (components, files_in_components) = comps.multi_counts();
    let want_path = top.first().map(|t| t.example);
    let mut top_example_path = None;

    // F lines, in id order.
    let fl = FLines {
        comps: &comps,
        tmpl: &tmpl,
        feature_counts: feature_counts.as_deref(),
        want_path,
    };
    if let Some(kept_files) = &kept_files {
        for (id, &(size, content)) in kept_files.iter().enumerate() {
            fl.line(id as u32, size, content, w.buf());
            w.maybe_flush()?;
        }
    } else {
        // The one full read of the table: it checks every line, as the
        // read up front of a pipe does.
        top_example_path = f_lines_parallel(&cfg.files, &table, &fl, &mut w)?;
    }
    drop(comps);

    let mut tail = Vec::new();
    for t in &top {
        tail.extend_from_slice(b"#dropped\t");
        tail.extend_from_slice(hex128(t.hash).as_bytes());
        tail.extend_from_slice(format!("\t{}\t{}\t", t.degree, t.len).as_bytes());
        crate::formats::write_id(t.example, &mut tail);
        tail.push(b'\n');
    }
    let mut tp = digest_params(&kept, "records")
        .with("files", files_in_components)
        .with("components", components)
        .with("dropped_chunks", dropped_chunks)
        .with("dropped_records", dropped_records);
    if dropped_chunks > 0 {
        tp.set("pruned_files", pruned_files);
    }
    write_trailer(Kind::Partition, &tp, &mut tail);
    w.raw(&tail)?;
    w.finish()?.finish()?;
    Ok(Summary {
        files: n,
        limit,
        records_in: seen.count,
        kept,
        components,
        files_in_components,
        singleton_chunks,
        dropped_chunks,
        dropped_records,
        pruned_files,
        top,
        top_example_path,
        templates: tmpl.summary(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// What the `F` lines need besides the file table.
struct FLines<'a> {
    comps: &'a crate::stages::partition::unionfind::Components,
    tmpl: &'a crate::stages::templates::PayloadCounter,
    feature_counts: Option<&'a [u32]>,
    /// The file whose path the summary shows (highest dropped chunk).
    want_path: Option<u32>,
}

impl FLines<'_> {
    /// Append file `id`'s `F` line when it is in a component.
    #[inline]
    fn line(&self, id: u32, size: u64, content: u128, b: &mut Vec<u8>) {
        if !self.comps.in_multi(id) {
            return;
        }
        b.extend_from_slice(b"F\t");
        crate::formats::write_id(id, b);
        b.push(b'\t');
        crate::formats::write_id(self.comps.label(id), b);
        b.push(b'\t');
        crate::formats::write_u64(self.tmpl.payload(id, size), b);
        b.push(b'\t');
        crate::formats::write_hex128(content, b);
        if let Some(c) = self.feature_counts {
            b.push(b'\t');
            crate::formats::write_u64(c[id as usize] as u64, b);
        }
        b.push(b'\n');
    }
}

/// Bytes of file table per block of [`f_lines_parallel`] (a few are in
/// flight: the union-find's labels already take most of the memory).
const TABLE_BLOCK: usize = 1 << 20;

/// One block of the file table turned into `F` lines.
#[derive(Default)]
struct FBlock {
    out: Vec<u8>,
    /// Id of the block's first record and number of records (consecutive
    /// ids, else `odd`).
    first: Option<u32>,
    files: u64,
    /// The table's header or trailer line, when in this block.
    header: Option<Params>,
    trailer: Option<Params>,
    /// Of the block's records.
    table: TableDigest,
    example: Option<String>,
    /// A line only the serial reader can explain (it makes the error).
    odd: bool,
}

/// The `F` lines of one block (whole lines); `first_block`/`last_block`:
/// its first/last line is the table's header/trailer.
fn f_block(block: &[u8], first_block: bool, last_block: bool, fl: &FLines) -> FBlock {
    let mut r = FBlock {
        out: Vec::with_capacity(block.len()),
        ..Default::default()
    };
    let mut at = 0;
    let mut next_id = 0u32;
    while at < block.len() {
        let Some(nl) = memchr::memchr(b'\n', &block[at..]) else {
            r.odd = true;
            return r;
        };
        let line = &block[at..at + nl];
        let (is_first, is_last) = (
            first_block && at == 0,
            last_block && at + nl + 1 == block.len(),
        );
        at += nl + 1;
        if line.first() == Some(&b'#') {
            match classify_line(line) {
                Ok(Line::Header(Kind::Files, p)) if is_first => r.header = Some(p),
                Ok(Line::Trailer(Kind::Files, p)) if is_last => r.trailer = Some(p),
                Ok(Line::Comment(_)) => {}
                _ => r.odd = true,
            }
            continue;
        }
        r.table.add_line(line);
        match parse_file_line(line) {
            Ok((id, size, content, path)) => {
                match r.first {
                    None => r.first = Some(id),
                    Some(_) if id == next_id => {}
                    Some(_) => r.odd = true,
                }
                next_id = id.wrapping_add(1);
                r.files += 1;
                if Some(id) == fl.want_path {
                    // Escaped already in the file table: printable, valid UTF-8.
                    r.example = Some(String::from_utf8_lossy(path).into_owned());
                }
                fl.line(id, size, content, &mut r.out);
            }
            Err(_) => r.odd = true,
        }
        if r.odd {
            return r;
        }
    }
    r
}

/// Read the whole (regular) file table once more and write the `F` lines of
/// the files in components: blocks parsed and formatted on two threads,
/// written in order by this one. Returns the path of `fl.want_path`.
///
/// Anything but the expected shape (header first, trailer last, records
/// with ids 0, 1, 2...) is handed to the serial [`read_file_table`], which
/// names the line and what was expected; the output is then not finished.
fn f_lines_parallel(
    path: &Path,
    table: &FileTable,
    fl: &FLines,
    w: &mut BgWriter,
) -> Result<Option<String>> {
    use std::io::Read;
    let name = path.display().to_string();
    let mut file = std::fs::File::open(path).map_err(|e| Error::msg(format!("{name}: {e}")))?;
    /// (sequence number, whole lines, first block, last block)
    type Work = (u64, Vec<u8>, bool, bool);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(u64, FBlock)>();
    let mut ends = (None, None);
    let (mut files, mut example, mut odd) = (0u64, None, false);
    let mut digest = TableDigest::default();
    std::thread::scope(|s| -> Result<()> {
        let mut workers: Vec<SyncSender<Work>> = Vec::new();
        for _ in 0..2 {
            let (tx, rx) = sync_channel::<Work>(1);
            let done = done_tx.clone();
            s.spawn(move || {
                for (seq, block, first, last) in rx.iter() {
                    if done.send((seq, f_block(&block, first, last, fl))).is_err() {
                        return;
                    }
                }
            });
            workers.push(tx);
        }
        drop(done_tx);
        let mut waiting = std::collections::BTreeMap::new();
        let mut next = 0u64;
        // Write the finished blocks that come next, in order.
        let mut take = |got: (u64, FBlock), w: &mut BgWriter| -> Result<()> {
            waiting.insert(got.0, got.1);
            while let Some(b) = waiting.remove(&next) {
                next += 1;
                odd |= b.odd || b.first.is_some_and(|f| f as u64 != files);
                if odd {
                    continue;
                }
                files += b.files;
                digest.merge(b.table);
                ends.0 = ends.0.take().or(b.header);
                ends.1 = ends.1.take().or(b.trailer);
                example = example.take().or(b.example);
                w.raw(&b.out)?;
            }
            Ok(())
        };
        let (mut seq, mut carry) = (0u64, Vec::new());
        loop {
            let mut block = std::mem::take(&mut carry);
            let want = block.len() + TABLE_BLOCK;
            let mut eof = false;
            while block.len() < want {
                let old = block.len();
                block.resize(want, 0);
                let n = match file.read(&mut block[old..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
                    Err(e) => return Err(Error::msg(format!("{name}: {e}"))),
                };
                block.truncate(old + n);
                if n == 0 {
                    eof = true;
                    break;
                }
            }
            if !eof {
                match memchr::memrchr(b'\n', &block) {
                    Some(p) => carry.extend_from_slice(&block[p + 1..]),
                    None => {
                        // One line longer than a block: read on.
                        carry = block;
                        continue;
                    }
                }
                block.truncate(block.len() - carry.len());
            }
            if !block.is_empty() {
                let to = &workers[(seq % 2) as usize];
                if to.send((seq, block, seq == 0, eof)).is_err() {
                    return Err(Error::msg("internal error: an F-line worker stopped"));
                }
                seq += 1;
            }
            while let Ok(got) = done_rx.try_recv() {
                take(got, w)?;
            }
            if eof {
                break;
            }
        }
        drop(workers);
        for got in done_rx.iter() {
            take(got, w)?;
        }
        Ok(())
    })?;
    let again = match ends {
        (Some(h), Some(t)) if !odd => FileTable::from_ends(name, h, &t),
        _ => None,
    };
    let whole = again
        .as_ref()
        .is_some_and(|t| t.files == files && t.table_digest == digest.0);
    if whole && again.as_ref() == Some(table) {
        return Ok(example);
    }
    if !whole {
        // The serial reader says what is wrong, with the line.
        read_file_table(path, |_, _, _, _| Ok(()))?;
    }
    Err(Error::msg(format!(
        "{}: the file table changed while fsim-partition was reading it",
        table.name
    )))
}

/// Options of the forest mode (`fsim-partition --emit-forest`), the map side
/// of a distributed partition (scripts/spark, docs/distributed.md).
#[derive(Debug, Clone)]
pub struct ForestConfig {
    /// Files in the whole run's file table (ids are below it; the degree
    /// limit is resolved against it).
    pub files: u64,
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub limit: Limit,
    /// Also write `N\t<file>\t<distinct features>` per file seen (feature
    /// methods: partition's sixth `F` field, summed over the hash ranges).
    pub feature_counts: bool,
}

/// Forest mode: one hash range of the sorted chunk records (no file table,
/// `#` lines ignored) reduced to what the final union-find needs. Writes
///
/// * the kept records, unchanged (the range's share of the partition file);
/// * `E\t<a>\t<b>` for the edges of a spanning forest of the file graph of
///   the range's kept chunk groups (at most files − 1 edges): the union of
///   the forests of all ranges has the components of the whole graph;
/// * `N\t<file>\t<count>` distinct features per file (with `feature_counts`);
/// * `P\t<file>` for each file holding a chunk this range dropped (the
///   driver counts the union: `pruned_files`);
/// * the range's highest dropped chunks as `#dropped` lines (the global top
///   is the top of the union of the ranges' tops);
/// * `#forest\tfiles=N\tlimit=L\trecords=R\tdigest=D\tkept=K\tkept_digest=KD\tdropped_chunks=X\tdropped_records=Y\tsingleton_chunks=S\tedges=E`
///   (R, D over the records read; K, KD over the kept ones: digests add up
///   over the ranges).
///
/// Memory: 5 bytes per file for the range's forest (plus the grouping's 5).
pub fn run_forest(cfg: &ForestConfig) -> Result<()> {
    let n = cfg.files;
    if n > u32::MAX as u64 + 1 {
        return Err(Error::msg("more than 2^32 files"));
    }
    let limit = cfg.limit.resolve(n);
    let mut g = Grouper::new(limit, n);
    let mut keep = ForestKeep {
        out: BgWriter::new(Output::create(cfg.output.as_deref())?),
        forest: UnionFind::new(n as usize),
        edges: 0,
    };
    let mut seen = Digest::default();
    let mut counts: Option<Vec<u32>> = cfg.feature_counts.then(|| vec![0u32; n as usize]);
    let default_input = [PathBuf::from("-")];
    let inputs: &[PathBuf] = if cfg.inputs.is_empty() {
        &default_input
    } else {
        &cfg.inputs
    };
    let mut prev: Option<(u64, u64, u32)> = None;
    for path in inputs {
        let (r, name) = open_input(path)?;
        let mut lines = FastLines::new(r, name);
        while let Some((line, at)) = lines.next_line_at()? {
            if line.first() == Some(&b'#') {
                continue;
            }
            let k = parse_chunk_line(line).ok_or_else(|| {
                at.error(format!(
                    "expected {}",
                    crate::formats::ChunkRecord::EXPECTED
                ))
            })?;
            let key = (k.hi, k.lo, k.file);
            if prev.is_some_and(|p| key < p) {
                return Err(at.error("input is not sorted by hash"));
            }
            if k.file as u64 >= n {
                return Err(at.error(format!("file id {} is not below --files-count {n}", k.file)));
            }
            if let Some(c) = counts.as_mut() {
                if prev != Some(key) {
                    let slot = &mut c[k.file as usize];
                    *slot = slot.saturating_add(1);
                }
            }
            prev = Some(key);
            let mix = k.record().mix();
            seen.add_mix(mix);
            g.add(&k, mix, line, &mut keep)?;
        }
    }
    g.finish(&mut keep)?;
    let (mut w, edges) = (keep.out, keep.edges);
    let mut tail = Vec::new();
    if let Some(c) = &counts {
        for (id, &v) in c.iter().enumerate() {
            if v > 0 {
                tail.extend_from_slice(b"N\t");
                crate::formats::write_id(id as u32, &mut tail);
                tail.extend_from_slice(format!("\t{v}\n").as_bytes());
            }
        }
    }
    // Files holding a dropped chunk in this range (the driver counts the
    // union over the ranges).
    for (w, &bits) in g.pruned.words().iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            let id = w as u32 * 64 + b.trailing_zeros();
            tail.extend_from_slice(b"P\t");
            crate::formats::write_id(id, &mut tail);
            tail.push(b'\n');
            b &= b - 1;
        }
    }
    for t in g.top_dropped() {
        tail.extend_from_slice(b"#dropped\t");
        tail.extend_from_slice(hex128(t.hash).as_bytes());
        tail.extend_from_slice(format!("\t{}\t{}\t", t.degree, t.len).as_bytes());
        crate::formats::write_id(t.example, &mut tail);
        tail.push(b'\n');
    }
    tail.extend_from_slice(
        format!(
            "#forest\tfiles={n}\tlimit={limit}\trecords={}\tdigest={}\tkept={}\tkept_digest={}\tdropped_chunks={}\tdropped_records={}\tsingleton_chunks={}\tedges={edges}\n",
            seen.count,
            hex128(seen.sum),
            g.kept.count,
            hex128(g.kept.sum),
            g.dropped_chunks,
            g.dropped_records,
            g.singleton_chunks
        )
        .as_bytes(),
    );
    w.raw(&tail)?;
    w.finish()?.finish()?;
    Ok(())
}

/// [`Keep`] of [`run_forest`]: each kept group's records, then the edges it
/// adds to the spanning forest (first file to each other file, when they
/// merge).
struct ForestKeep {
    out: BgWriter,
    forest: UnionFind,
    edges: u64,
}

impl Keep for ForestKeep {
    fn text(&mut self) -> &mut Vec<u8> {
        self.out.buf()
    }

    fn spill(&mut self) -> Result<()> {
        self.out.maybe_flush()
    }

    fn link(&mut self, a: u32, b: u32) -> Result<()> {
        if self.forest.union(a, b) {
            self.edges += 1;
            let t = self.out.buf();
            t.extend_from_slice(b"E\t");
            crate::formats::write_id(a, t);
            t.push(b'\t');
            crate::formats::write_id(b, t);
            t.push(b'\n');
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects what a [`Grouper`] keeps: text, links, and how often the
    /// text was allowed out.
    #[derive(Default)]
    struct Collect {
        text: Vec<u8>,
        links: Vec<(u32, u32)>,
    }

    impl Keep for Collect {
        fn text(&mut self) -> &mut Vec<u8> {
            &mut self.text
        }
        fn spill(&mut self) -> Result<()> {
            Ok(())
        }
        fn link(&mut self, a: u32, b: u32) -> Result<()> {
            self.links.push((a, b));
            Ok(())
        }
    }

    /// Kept records as (hash, file), and links.
    type Kept = (Vec<(u128, u32)>, Vec<(u32, u32)>);

    /// Feed groups of (hash, files) with length 100; the kept records
    /// parsed back from the text, and the links.
    fn feed(g: &mut Grouper, groups: &[(u128, &[u32])]) -> Kept {
        let mut c = Collect::default();
        for &(h, files) in groups {
            for &f in files {
                let k = ChunkKey {
                    hi: (h >> 64) as u64,
                    lo: h as u64,
                    file: f,
                    len: 100,
                };
                let mut line = [0u8; 64];
                let n = format_chunk_line(&k, &mut line);
                g.add(&k, k.record().mix(), &line[..n - 1], &mut c).unwrap();
            }
        }
        g.finish(&mut c).unwrap();
        let kept = c
            .text
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let k = parse_chunk_line(l).unwrap();
                (k.hash(), k.file)
            })
            .collect();
        (kept, c.links)
    }

    #[test]
    fn groups_limits_and_unions() {
        let mut g = Grouper::new(3, 64);
        let (kept, links) = feed(
            &mut g,
            &[
                (1, &[0, 1]),          // kept: 0-1
                (2, &[2]),             // degree 1: dropped silently
                (3, &[3, 3, 4]),       // kept, degree 2 with a repeated chunk
                (4, &[0, 1, 2, 3, 5]), // degree 5 > 3: dropped and reported
                (5, &[2, 2, 2]),       // degree 1 although 3 records
            ],
        );
        assert_eq!(kept, [(1, 0), (1, 1), (3, 3), (3, 3), (3, 4)]);
        assert_eq!(g.singleton_chunks, 2);
        assert_eq!((g.dropped_chunks, g.dropped_records), (1, 5));
        assert_eq!(
            g.top_dropped(),
            [Dropped {
                hash: 4,
                degree: 5,
                len: 100,
                example: 0
            }]
        );
        assert_eq!(g.kept.count, 5);
        assert_eq!(links, [(0, 1), (3, 4)]);
        let mut u = Unions::new(6);
        for (a, b) in links {
            u.queue(a, b);
        }
        let c = u.into_components();
        let labels: Vec<u32> = (0..6).map(|i| c.label(i)).collect();
        assert_eq!(labels, [0, 0, 2, 3, 3, 5]);
        assert_eq!(c.multi_counts(), (2, 4));
    }

    /// Long kept groups are formatted again from their keys: the same text,
    /// links and digest as when copied, and a dropped group leaves no text.
    #[test]
    fn long_groups_are_formatted_the_same() {
        let files: Vec<u32> = (0..40).flat_map(|f| [f, f]).collect();
        let groups: &[(u128, &[u32])] = &[(7, &files), (8, &[1, 2, 3]), (9, &[5])];
        let mut copied = Grouper::new(50, 64);
        let mut formatted = Grouper::new(50, 64).with_text_max(5);
        let a = feed(&mut copied, groups);
        let b = feed(&mut formatted, groups);
        assert_eq!(a, b);
        assert_eq!(a.0.len(), 83);
        assert_eq!(copied.kept, formatted.kept);
        let mut low = Grouper::new(39, 64).with_text_max(5);
        let (kept, links) = feed(&mut low, groups);
        assert_eq!(kept, [(8, 1), (8, 2), (8, 3)]);
        assert_eq!(links, [(1, 2), (1, 3)]);
        assert_eq!((low.dropped_chunks, low.dropped_records), (1, 80));
    }

    #[test]
    fn degree_at_limit_is_kept() {
        let mut g = Grouper::new(2, 64);
        let (kept, _) = feed(&mut g, &[(9, &[1, 2]), (10, &[0, 1, 2])]);
        assert_eq!(kept.len(), 2);
        assert_eq!(g.dropped_chunks, 1);
    }

    #[test]
    fn top_keeps_highest_degrees() {
        let mut g = Grouper::new(1, 64);
        for h in 0..30u128 {
            let files: Vec<u32> = (0..(h as u32 % 25) + 2).collect();
            feed(&mut g, &[(h, &files)]);
        }
        let top = g.top_dropped();
        assert_eq!(top.len(), TOP_DROPPED);
        assert_eq!(top[0].degree, 26);
        assert!(top.windows(2).all(|w| w[0].degree >= w[1].degree));
    }

    #[test]
    fn limit_resolution() {
        let half = |floor| Limit::Fraction {
            fraction: 0.5,
            floor,
        };
        assert_eq!(half(0).resolve(7), 3);
        // The floor: no folder of fewer than 2 × floor files is pruned.
        assert_eq!(Limit::DEFAULT.resolve(2), DEFAULT_DEGREE_FLOOR);
        assert_eq!(Limit::DEFAULT.resolve(1999), DEFAULT_DEGREE_FLOOR);
        assert_eq!(Limit::DEFAULT.resolve(100_000), 50_000);
        assert_eq!(Limit::Absolute(9).resolve(7), 9);
    }
}
