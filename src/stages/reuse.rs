//! Reusing the records of an earlier run, so that `fsim-chunk` reads only
//! the files it has not chunked before: the basis of incremental re-runs
//! (`--previous`) and of merging shards (`--shard I/N`, then a run whose
//! previous sources are the shards).
//!
//! # How a file is matched
//!
//! A previous source is a file table and its chunk file **in file order**
//! (the unsorted `chunks.tsv` that `fsim-chunk` writes, never `sorted.tsv`).
//! Both are read as streams, side by side with the walk. The walk visits
//! paths in a fixed order (roots in argument order, then names in byte
//! order, depth first); that order is byte order of the path with `/`
//! counted as the lowest byte ([`walk_cmp`]). For each walked file the
//! source's next entries are skipped while they sort before it (deleted
//! files); an entry with the same path, size and mtime (nanoseconds) gives
//! its content hash, type and chunk records, and the file is not opened.
//! Anything else (a new or changed file) is read as usual. A match is
//! further checked: the chunk lengths must add up to the size, so a chunk
//! file that does not belong to its table is refused, not silently used.
//!
//! Reuse can only make a run faster, never change its output: a file that
//! is not matched (roots given in another order, a listing from
//! `--files-from` that is not sorted) is simply read again.
//!
//! # Shards
//!
//! A shard run (`--shard I/N`) reads only the walk positions `p` with
//! `p mod N = I` and writes them with the walk position as file id (ids
//! are then sparse but globally unique). Given the N shard outputs as
//! previous sources, in order, a run looks walk position `p` up in source
//! `p mod N` only: every file is found, nothing is read, and the output is
//! byte-identical to an unsharded run, because it *is* an unsharded run.
//!
//! # Cost
//!
//! Memory: one file entry and one chunk record per source plus 1 MiB of
//! buffer per stream. Time: one `stat` per walked file, and reading the
//! previous chunk file once (about 3% of the repository's size at the
//! default average chunk size). The walker reads the file tables; the
//! writer, which writes the files in the same order, reads the chunk files
//! and copies a found file's records as it writes them.

use crate::chunking::members;
use crate::chunking::stream::Piece;
use crate::error::{Context, Error, Result};
use crate::formats::files::TableDigest;
use crate::formats::headers::FilesHeader;
use crate::formats::{
    classify_line, ChunkRecord, Digest, FileEntry, InputCheck, Kind, Line, LineReader, Params,
    CHUNK_PARAM_KEYS,
};
use crate::formats::{open_input, BUF_SIZE};
use crate::io::consume::{Consumed, Gate};
use crate::io::frames::{FrameMeta, FrameReader};
use std::cmp::Ordering;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Compare two paths in walk order: byte order with `/` below every other
/// byte (so `a/b` comes before `a-c`, as the walk visits `a` first).
pub fn walk_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let key = |c: u8| if c == b'/' { 0u8 } else { c };
    a.iter().map(|&c| key(c)).cmp(b.iter().map(|&c| key(c)))
}

/// Which shard a run is: `I/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parse `I/N` with `0 <= I < N`.
    pub fn parse(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("invalid shard {s:?}: expected I/N with 0 <= I < N, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u64, u64) =
            (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    pub fn text(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// A file found in a previous source: its entry there (whose id names its
/// records in that source's chunk file, which the writer copies with
/// [`PreviousChunks::take`]).
#[derive(Debug)]
pub struct Found {
    pub entry: FileEntry,
    /// Which previous source (a shard's index, or 0).
    pub source: usize,
    /// The members of an archive, in the previous table's order (they
    /// follow their archive there): reused with it, as they change only
    /// with it.
    pub members: Vec<Found>,
    /// Its path's entry, but of another size or time: the file is read
    /// again, and its records (an archive's, and its members') may come
    /// out the same (only touched).
    pub stale: bool,
}

type Reader = LineReader<Box<dyn BufRead + Send>>;

/// One previous file table, read by the walker.
struct Table {
    /// Its place among the previous sources.
    index: usize,
    files: Reader,
    /// Next entry of the file table.
    head: Option<FileEntry>,
    /// Last id of the file table (ids must increase).
    last_id: Option<u32>,
    /// Trailer of the file table once reached.
    files_trailer: Option<Params>,
    /// Of the file table's records read so far.
    table: TableDigest,
    /// Which path has which id, of the records read so far.
    paths: u128,
    /// The records read so far without their times.
    untimed: TableDigest,
}

/// A previous chunk file's bytes: zstd frames a re-run may copy
/// ([`crate::io::frames`]), or any other stream, decoded.
enum Source {
    Frames(FrameReader<Box<dyn BufRead + Send>>),
    Any(Box<dyn BufRead + Send>),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::Frames(f) => f.read(buf),
            Source::Any(a) => a.read(buf),
        }
    }
}

impl BufRead for Source {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match self {
            Source::Frames(f) => f.fill_buf(),
            Source::Any(a) => a.fill_buf(),
        }
    }
    fn consume(&mut self, amt: usize) {
        match self {
            Source::Frames(f) => f.consume(amt),
            Source::Any(a) => a.consume(amt),
        }
    }
}

/// The frame of an earlier chunk file held while the files it holds come
/// one by one, each found unchanged at its earlier id: then it is copied
/// whole; at the first that is not, given back and read.
struct Held {
    meta: FrameMeta,
    /// Its bytes as written (announcement and frame).
    frame: Vec<u8>,
    /// The next file id it holds, and the sizes of those before it.
    next: u32,
    sizes: Vec<u64>,
}

/// What became of a file offered to [`PreviousChunks::hold`].
pub enum Hold {
    /// Not held: take its records ([`PreviousChunks::take`]).
    No,
    /// Held with its frame: nothing to write yet.
    Held,
    /// The last file of the frame held: write the frame as it is.
    Complete(FrameMeta, Vec<u8>),
}

/// One previous chunk file, read by the writer as it writes the files the
/// table gave: both go in walk order, so the records of each file found
/// are next in the stream (those of files not found are skipped). Parsing
/// the records here rather than on the walker keeps the walk, which on a
/// re-run is the stage's critical path, to its walk and `stat`s.
///
/// A chunk file written as frames is read up to each frame, which is
/// copied whole when every file it holds is unchanged at its earlier id
/// ([`Held`]), else read.
struct Records {
    chunks: LineReader<Source>,
    /// Frames may be copied (one unsharded previous run).
    copyable: bool,
    held: Option<Held>,
    /// The file of the last record read.
    last_file: Option<u32>,
    /// The file table's name, for the error that says they do not match.
    table_name: String,
    /// Next chunk record not yet consumed.
    next_rec: Option<ChunkRecord>,
    chunks_done: bool,
    check: InputCheck,
    seen: Digest,
    /// The hashes of the records skipped (files read again or gone), when
    /// a changed set is asked for.
    skipped: Option<ChangedHashes>,
}

/// Hashes of changed chunks as they are found, bounded: past [`Self::MAX`]
/// distinct hashes the set is given up (`None`): a re-run that changed that
/// much sorts everything, as the restricted problem would save little.
#[derive(Debug, Default)]
pub struct ChangedHashes {
    hashes: Vec<u128>,
    /// Distinct count at the last compaction.
    kept: usize,
    over: bool,
}

impl ChangedHashes {
    /// 4 Mi hashes: 64 MiB, twice that between compactions.
    pub const MAX: usize = 1 << 22;

    #[inline]
    pub fn push(&mut self, h: u128) {
        if self.over {
            return;
        }
        self.hashes.push(h);
        if self.hashes.len() >= 2 * Self::MAX.max(self.kept) {
            self.compact();
        }
    }

    fn compact(&mut self) {
        self.hashes.sort_unstable();
        self.hashes.dedup();
        self.kept = self.hashes.len();
        if self.kept > Self::MAX {
            self.over = true;
            self.hashes = Vec::new();
        }
    }

    /// Add another collector's hashes.
    pub fn absorb(&mut self, other: ChangedHashes) {
        if other.over {
            self.over = true;
            self.hashes = Vec::new();
        }
        for h in other.hashes {
            self.push(h);
        }
    }

    /// The distinct hashes, ascending; `None` when there were too many.
    pub fn finish(mut self) -> Option<Vec<u128>> {
        self.compact();
        (!self.over).then_some(self.hashes)
    }
}

/// The previous run's file table: the files its trailer counts and which
/// path had which id ([`crate::formats::files::path_mix`]; `None` for
/// several sources, whose ids are no one table's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Before {
    pub files: Option<u64>,
    pub paths: Option<u128>,
    /// Its records' identity without their times
    /// ([`TableDigest::add_untimed`]; one source).
    pub untimed: Option<u128>,
}

/// Write a re-run's changed set to `path`, or, without one (too many
/// chunks, ids that cannot be mapped, the earlier records), remove the
/// file there, so that the stages after take every record.
pub fn write_changed_set(
    path: &Path,
    set: Option<&crate::formats::changed::ChangedSet>,
) -> Result<()> {
    match set {
        Some(set) => {
            let mut out = crate::io::Output::create(Some(path))?;
            out.write_all(&set.to_bytes())?;
            out.finish()
        }
        None => match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::msg(format!("cannot remove {}: {e}", path.display())))
            }
            _ => Ok(()),
        },
    }
}

/// The previous sources of a run, as the walker looks files up in them.
pub struct Previous {
    sources: Vec<Table>,
    /// The sources are the N shards of one sharded run.
    sharded: bool,
    /// This run lists archives' members (`content=auto`): an archive found
    /// in a shard is read again, as shard tables hold no members.
    members: bool,
}

/// The chunk records of the previous sources, as the writer takes them.
pub struct PreviousChunks {
    sources: Vec<Records>,
}

fn params_differ(name: &str, line: u64, got: &Params, want: &Params) -> Option<Error> {
    CHUNK_PARAM_KEYS.iter().find_map(|k| {
        let (g, w) = (got.get(k), want.get(k));
        (g != w).then(|| {
            Error::input(
                name,
                line,
                format!(
                    "the previous run was chunked with {k}={} but this run uses {k}={}: its records cannot be reused",
                    g.unwrap_or("(none)"),
                    w.unwrap_or("(none)")
                ),
            )
        })
    })
}

/// A chunk file read as its lines, freed as it is read when `gate` is
/// given (a file it must not free is read as any other:
/// [`Consumed::open`]); a zstd one as frames a re-run may copy.
fn open_chunks(path: &Path, gate: Option<Gate>) -> Result<(Source, String)> {
    if path.as_os_str() == "-" {
        let (r, name) = open_input(path)?;
        return Ok((Source::Any(r), name));
    }
    let name = path.display().to_string();
    let consumed = match gate {
        Some(gate) => Consumed::open(path, gate).ctx(|| format!("cannot open {name}"))?,
        None => None,
    };
    let mut raw: Box<dyn BufRead + Send> = match consumed {
        Some(file) => Box::new(BufReader::with_capacity(BUF_SIZE, file)),
        None => crate::formats::open_raw(path)?.0,
    };
    let head = raw.fill_buf().ctx(|| format!("reading {name}"))?;
    if head.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        return Ok((Source::Frames(FrameReader::new(raw)), name));
    }
    let r = crate::formats::codec::decode_any(raw).ctx(|| format!("reading {name}"))?;
    Ok((Source::Any(r), name))
}

/// Open the previous source `index`: its file table for the walker, its
/// chunk file for the writer, and which shard it is.
fn open_source(
    index: usize,
    files: &Path,
    chunks: &Path,
    params: &Params,
    consume: Option<Gate>,
) -> Result<(Table, Records, Option<Shard>)> {
    let (r, name) = open_input(files)?;
    let mut files = LineReader::new(r, name);
    let head = match files.next_line()? {
        Some(Line::Header(Kind::Files, p)) => p,
        _ => return Err(files.error(
            "expected a '#fsim files v4' header: a file table written by fsim-chunk --files-out",
        )),
    };
    if let Some(e) = params_differ(files.name(), 1, &head, params) {
        return Err(e);
    }
    let head_shard = FilesHeader::parse(&head)
        .map_err(|m| Error::input(files.name(), 1, m))?
        .shard;
    let shard = match head_shard.as_deref() {
        None => None,
        Some(s) => Some(
            Shard::parse(s).map_err(|m| Error::input(files.name(), 1, format!("header: {m}")))?,
        ),
    };
    let (r, name) = open_chunks(chunks, consume)?;
    let mut chunks = LineReader::new(r, name);
    let mut check = InputCheck::new(Kind::Chunks, "records");
    match chunks.next_line()? {
        Some(Line::Header(Kind::Chunks, p)) => {
            if let Some(e) = params_differ(chunks.name(), 1, &p, params) {
                return Err(e);
            }
            let p_shard = FilesHeader::parse(&p).map_err(|m| chunks.error(m))?.shard;
            if p_shard != head_shard {
                return Err(chunks.error(format!(
                    "this chunk file is from shard {} but its file table {} is from shard {}",
                    p_shard.as_deref().unwrap_or("none"),
                    files.name(),
                    head_shard.as_deref().unwrap_or("none")
                )));
            }
            check.header(Kind::Chunks, p).map_err(|m| chunks.error(m))?;
        }
        Some(Line::Trailer(Kind::Chunks, _)) => {
            return Err(chunks.error(
                "this chunk file is sorted (its trailer comes first): give the unsorted chunks.tsv of the previous run, not sorted.tsv",
            ))
        }
        _ => {
            return Err(chunks.error(
                "expected a '#fsim chunks v1' header: the unsorted chunks.tsv written by fsim-chunk",
            ))
        }
    }
    let mut records = Records {
        table_name: files.name().to_string(),
        chunks,
        copyable: shard.is_none(),
        held: None,
        last_file: None,
        next_rec: None,
        chunks_done: false,
        check,
        seen: Digest::default(),
        skipped: None,
    };
    let mut table = Table {
        index,
        files,
        head: None,
        last_id: None,
        files_trailer: None,
        table: TableDigest::default(),
        untimed: TableDigest::default(),
        paths: 0,
    };
    table.advance_file()?;
    records.advance_rec()?;
    Ok((table, records, shard))
}

impl Table {
    /// Read the next file entry into `head` (None at the trailer).
    fn advance_file(&mut self) -> Result<()> {
        self.head = None;
        if self.files_trailer.is_some() {
            return Ok(());
        }
        let line_no = self.files.line_number() + 1;
        let name = self.files.name().to_string();
        match self.files.next_line()? {
            None => Err(Error::input(
                name,
                line_no,
                "no '#end files' trailer: the previous file table is truncated",
            )),
            Some(Line::Trailer(Kind::Files, p)) => {
                self.table
                    .check(&p)
                    .map_err(|m| Error::input(&name, line_no, m))?;
                self.files_trailer = Some(p);
                Ok(())
            }
            Some(Line::Data(raw)) => {
                self.table.add_line(raw);
                self.untimed.add_untimed(raw);
                let e = FileEntry::parse(raw).map_err(|m| Error::input(&name, line_no, m))?;
                let mix =
                    crate::formats::files::path_mix(e.id, crate::formats::files::escaped_path(raw));
                self.paths = self.paths.wrapping_add(mix);
                if self.last_id.is_some_and(|l| e.id <= l) {
                    return Err(Error::input(
                        name,
                        line_no,
                        format!(
                            "file id {} not after the previous one: ids must increase",
                            e.id
                        ),
                    ));
                }
                self.last_id = Some(e.id);
                self.head = Some(e);
                Ok(())
            }
            Some(_) => Err(Error::input(
                name,
                line_no,
                format!("expected {}", FileEntry::EXPECTED),
            )),
        }
    }

    /// Look a walked file up; advances past entries that sort before it.
    /// Members of archives are never walked: they are skipped, or taken
    /// with their archive.
    fn lookup(&mut self, path: &[u8], size: u64, mtime: (i64, u32)) -> Result<Option<Found>> {
        loop {
            let Some(head) = &self.head else {
                return Ok(None);
            };
            if head.view.is_member() {
                self.advance_file()?;
                continue;
            }
            match walk_cmp(&head.path, path) {
                Ordering::Greater => return Ok(None),
                Ordering::Less => self.advance_file()?,
                Ordering::Equal => {
                    // The file's own size: `size` is its view's.
                    // A content view from a v3 table has no view hash:
                    // read again, so that the new table has it.
                    let hit = head.view.raw_size == size
                        && (head.mtime_s, head.mtime_ns) == mtime
                        && (head.view.is_raw() || head.view.hash.is_some());
                    let entry = self.head.take().expect("head checked above");
                    self.advance_file()?;
                    let mut found = self.found(entry);
                    while let Some(m) = self.head.take_if(|h| is_member_of(h, &found.entry.path)) {
                        self.advance_file()?;
                        found.members.push(self.found(m));
                    }
                    found.stale = !hit;
                    return Ok(Some(found));
                }
            }
        }
    }

    fn found(&self, entry: FileEntry) -> Found {
        Found {
            entry,
            source: self.index,
            members: Vec::new(),
            stale: false,
        }
    }

    /// Read what is left, checking the trailer (its records' digest); the
    /// trailer, the identity of the paths and the records' without times.
    fn finish(mut self) -> Result<(Params, u128, u128)> {
        while self.files_trailer.is_none() {
            self.advance_file()?;
        }
        Ok((
            self.files_trailer.unwrap_or_default(),
            self.paths,
            self.untimed.0,
        ))
    }
}

/// A line of a previous chunk file, as [`Records::advance_rec`] takes it.
enum Step {
    End,
    /// A record, or `None` for a line that is not one.
    Record(Option<ChunkRecord>),
    Trailer(Kind, Params),
    Header(Kind),
    /// A `#` line that does not parse: why.
    Bad(String),
}

impl Records {
    /// Read the next chunk record into `next_rec` (None at the end).
    /// Stops before a frame that may be copied ([`Self::at_frame`]).
    fn advance_rec(&mut self) -> Result<()> {
        self.next_rec = None;
        if self.chunks_done {
            return Ok(());
        }
        loop {
            let line_no = self.chunks.line_number() + 1;
            // What the line is, owned, so that errors can borrow the
            // reader's name (not cloned for each of millions of records).
            // A record is parsed straight from the raw line; only `#` lines
            // are classified.
            let step = match self.chunks.next_raw()? {
                None => Step::End,
                Some(raw) if raw.first() != Some(&b'#') => Step::Record(ChunkRecord::parse(raw)),
                Some(raw) => match classify_line(raw) {
                    Ok(Line::Trailer(k, p)) => Step::Trailer(k, p),
                    Ok(Line::Header(k, _)) => Step::Header(k),
                    Ok(Line::Comment(_)) => continue,
                    Ok(Line::Data(d)) => Step::Record(ChunkRecord::parse(d)),
                    Err(m) => Step::Bad(m),
                },
            };
            let name = self.chunks.name();
            match step {
                Step::End if self.at_frame().is_some() => return Ok(()),
                Step::End => {
                    self.chunks_done = true;
                    return self.check.finish(&self.seen, name, line_no);
                }
                Step::Record(None) => {
                    return Err(Error::input(
                        name,
                        line_no,
                        format!("expected {}", ChunkRecord::EXPECTED),
                    ))
                }
                Step::Record(Some(r)) => {
                    if self.last_file.is_some_and(|p| r.file < p) {
                        return Err(Error::input(
                            name,
                            line_no,
                            "chunk records not in file order: give the unsorted chunks.tsv of the previous run, not sorted.tsv",
                        ));
                    }
                    self.seen.add(&r);
                    self.last_file = Some(r.file);
                    self.next_rec = Some(r);
                    return Ok(());
                }
                Step::Trailer(k, p) => {
                    self.check
                        .trailer(k, &p)
                        .map_err(|m| Error::input(name, line_no, m))?;
                }
                Step::Bad(m) => return Err(Error::input(name, line_no, m)),
                Step::Header(k) => {
                    return Err(Error::input(
                        name,
                        line_no,
                        format!(
                            "unexpected {} header inside a previous chunk file",
                            k.as_str()
                        ),
                    ))
                }
            }
        }
    }

    /// Hand the records of file `id` to `put` (skipping those of lower
    /// ids: files not found, or read again) and check that they add up to
    /// its `size`: a chunk file that does not belong to its table is
    /// refused, not silently used.
    fn take(
        &mut self,
        id: u32,
        size: u64,
        put: &mut impl FnMut(Piece) -> Result<()>,
    ) -> Result<()> {
        let mut total = 0u64;
        loop {
            if self.next_rec.is_none() {
                // Before a frame: its files are this one or later.
                match self.at_frame() {
                    Some(m) if m.first <= id => self.read_frame()?,
                    _ => break,
                }
                continue;
            }
            let Some(r) = self.next_rec else { break };
            if r.file > id {
                break;
            }
            if r.file == id {
                total += r.len as u64;
                put((r.hash, r.len))?;
            } else if let Some(s) = &mut self.skipped {
                s.push(r.hash);
            }
            self.advance_rec()?;
        }
        if total != size {
            return Err(Error::msg(format!(
                "{}: the chunk records of file {id} add up to {total} bytes but the file table {} says {size}: the two files are not from the same run",
                self.chunks.name(),
                self.table_name,
            )));
        }
        Ok(())
    }

    /// Read what is left, checking the trailer (count and digest); the
    /// hashes of the records skipped, when they were collected.
    fn finish(mut self) -> Result<(Option<ChangedHashes>, Digest)> {
        if self.held.is_some() {
            return Err(Error::msg(
                "internal error: a frame of earlier records held at the end",
            ));
        }
        loop {
            if self.next_rec.is_none() {
                if self.at_frame().is_none() {
                    break;
                }
                self.read_frame()?;
                continue;
            }
            if let (Some(s), Some(r)) = (&mut self.skipped, self.next_rec) {
                s.push(r.hash);
            }
            self.advance_rec()?;
        }
        Ok((self.skipped, self.seen))
    }

    /// The frame the reading stopped before, if it did.
    fn at_frame(&self) -> Option<FrameMeta> {
        match self.chunks.get_ref() {
            Source::Frames(f) => f.head().copied(),
            Source::Any(_) => None,
        }
    }

    /// Read on into the frame the reading stopped before.
    fn read_frame(&mut self) -> Result<()> {
        if let Source::Frames(f) = self.chunks.get_mut() {
            f.decode_next();
        }
        self.advance_rec()
    }

    /// Offer file `id` (of `size` bytes), found unchanged at its earlier
    /// id, to be copied with its frame: `empty_here` when the writer's own
    /// frame begins at it. See [`Hold`].
    fn hold(&mut self, id: u32, size: u64, empty_here: bool) -> Result<Hold> {
        if self.held.is_none() {
            let m = match self.at_frame() {
                Some(m) if self.copyable && empty_here && m.copyable_at(id) => m,
                _ => return Ok(Hold::No),
            };
            let mut frame = Vec::new();
            if let Source::Frames(f) = self.chunks.get_mut() {
                f.take_frame(&mut frame)
                    .ctx(|| format!("reading {}", self.chunks.name()))?;
            }
            self.held = Some(Held {
                meta: m,
                frame,
                next: id,
                sizes: Vec::new(),
            });
        }
        let Some(h) = self.held.as_mut() else {
            return Ok(Hold::No);
        };
        if h.next != id {
            return Err(Error::msg(format!(
                "internal error: file {id} offered to the frame held at file {}",
                h.next
            )));
        }
        h.sizes.push(size);
        if id < h.meta.last {
            h.next = id + 1;
            return Ok(Hold::Held);
        }
        let Some(h) = self.held.take() else {
            return Ok(Hold::No);
        };
        let total: u64 = h.sizes.iter().sum();
        if total != h.meta.bytes {
            return Err(Error::msg(format!(
                "{}: the chunk records of files {} to {} add up to {} bytes but the file table {} says {total}: the two files are not from the same run",
                self.chunks.name(),
                h.meta.first,
                h.meta.last,
                h.meta.bytes,
                self.table_name,
            )));
        }
        self.seen.merge(&Digest {
            count: h.meta.records,
            sum: h.meta.sum,
        });
        self.chunks.count_lines(h.meta.records);
        self.last_file = Some(h.meta.last);
        // On to what follows the frame, as after any file's records.
        self.advance_rec()?;
        Ok(Hold::Complete(h.meta, h.frame))
    }

    /// Give the frame held back to be read: the files held so far, with
    /// their sizes, whose records the writer then takes.
    fn release(&mut self) -> Result<Vec<(u32, u64)>> {
        let Some(h) = self.held.take() else {
            return Ok(Vec::new());
        };
        if let Source::Frames(f) = self.chunks.get_mut() {
            f.give_back(&h.frame);
        }
        self.advance_rec()?;
        Ok((h.meta.first..).zip(h.sizes).collect())
    }
}

/// Whether `e` is a member of the archive at `archive`.
fn is_member_of(e: &FileEntry, archive: &[u8]) -> bool {
    e.view.archive == Some(archive.len() as u32)
        && e.path.starts_with(archive)
        && e.path[archive.len()..].starts_with(b"!/")
}

impl Previous {
    /// Open (file table, chunk file) pairs. Either one ordinary previous run,
    /// or the N shards of a sharded run in shard order. The tables are the
    /// walker's, the chunk files the writer's.
    /// `consume`: the one chunk file is freed as it is read once `consume`
    /// opens ([`crate::io::consume`]; not the shards').
    pub fn open(
        pairs: &[(PathBuf, PathBuf)],
        params: &Params,
        consume: Option<Gate>,
    ) -> Result<(Previous, PreviousChunks)> {
        let mut sources = Vec::with_capacity(pairs.len());
        let mut records = Vec::with_capacity(pairs.len());
        let mut shards = Vec::new();
        let consume = consume.filter(|_| pairs.len() == 1);
        for (i, (f, c)) in pairs.iter().enumerate() {
            let (t, r, shard) = open_source(i, f, c, params, consume.clone())?;
            shards.push((shard, t.files.name().to_string()));
            sources.push(t);
            records.push(r);
        }
        let sharded = shards.iter().any(|(s, _)| s.is_some());
        if sharded {
            let n = sources.len() as u64;
            for (i, (s, name)) in shards.iter().enumerate() {
                let want = Shard {
                    index: i as u64,
                    count: n,
                };
                if *s != Some(want) {
                    return Err(Error::msg(format!(
                        "{name}: expected the file table of shard {} (shards must be given all, in order), found {}",
                        want.text(),
                        s.map_or("an unsharded table".to_string(), |s| format!("shard {}", s.text()))
                    )));
                }
            }
        } else if sources.len() > 1 {
            return Err(Error::msg(
                "several --previous tables are only allowed for the shards of one run",
            ));
        }
        let members = params.get("content") != Some("raw");
        let previous = Previous {
            sources,
            sharded,
            members,
        };
        Ok((previous, PreviousChunks { sources: records }))
    }

    /// Look up the walked file at walk position `pos`: its entry, to reuse
    /// or, when [`Found::stale`], to compare with what it reads now.
    pub fn lookup(
        &mut self,
        pos: u64,
        path: &[u8],
        size: u64,
        mtime: (i64, u32),
    ) -> Result<Option<Found>> {
        let i = if self.sharded {
            (pos % self.sources.len() as u64) as usize
        } else {
            0
        };
        let found = match self.sources.get_mut(i) {
            Some(s) => s.lookup(path, size, mtime)?,
            None => None,
        };
        // A shard run lists no members (its ids are walk positions): an
        // archive is read again here, with them, as an unsharded run reads
        // it.
        let again = |f: &Found| {
            self.sharded
                && self.members
                && members::is_archive(
                    Path::new(OsStr::from_bytes(path)),
                    f.entry.ftype,
                    &f.entry.view,
                )
        };
        Ok(found.filter(|f| !again(f)))
    }

    /// Read the rest of every file table, checking its digest; the files
    /// they count, and which path had which id (one source).
    pub fn finish(self) -> Result<Before> {
        let one = self.sources.len() == 1;
        let mut before = Before {
            files: Some(0),
            paths: None,
            untimed: None,
        };
        for s in self.sources {
            let (t, paths, untimed) = s.finish()?;
            before.files = before.files.zip(t.get_u64("files")).map(|(a, b)| a + b);
            before.paths = Some(paths).filter(|_| one);
            before.untimed = Some(untimed).filter(|_| one);
        }
        Ok(before)
    }
}

impl PreviousChunks {
    /// Hand the records of a file found ([`Found`]: its source and its id
    /// there) to `put`, checked against the file's `size`. Files must be
    /// taken in the order they were found.
    pub fn take(
        &mut self,
        source: usize,
        id: u32,
        size: u64,
        put: &mut impl FnMut(Piece) -> Result<()>,
    ) -> Result<()> {
        match self.sources.get_mut(source) {
            Some(r) => r.take(id, size, put),
            None => Err(Error::msg(format!(
                "internal error: no previous source {source}"
            ))),
        }
    }

    /// Offer a file found unchanged at its earlier id in the one previous
    /// run to be copied with its frame ([`Hold`]).
    pub fn hold(&mut self, id: u32, size: u64, empty_here: bool) -> Result<Hold> {
        match self.sources.as_mut_slice() {
            [r] => r.hold(id, size, empty_here),
            _ => Ok(Hold::No),
        }
    }

    /// The next file id of the frame held, if one is.
    pub fn held_next(&self) -> Option<u32> {
        self.sources.first()?.held.as_ref().map(|h| h.next)
    }

    /// Give the frame held back: the files held (ids and sizes), whose
    /// records are then taken as any others'.
    pub fn release(&mut self) -> Result<Vec<(u32, u64)>> {
        match self.sources.first_mut() {
            Some(r) => r.release(),
            None => Ok(Vec::new()),
        }
    }

    /// Collect the hashes of the records not taken (the files read again,
    /// and those gone since): the chunks they held before.
    pub fn collect_skipped(&mut self) {
        for r in &mut self.sources {
            r.skipped = Some(ChangedHashes::default());
        }
    }

    /// Read the rest of every chunk file, checking counts and digests; the
    /// hashes of the records not taken, when [`Self::collect_skipped`]
    /// asked for them, and the count and digest of every record read.
    pub fn finish(self) -> Result<(Option<ChangedHashes>, Digest)> {
        let mut all: Option<ChangedHashes> = None;
        let mut read = Digest::default();
        for r in self.sources {
            let (skipped, seen) = r.finish()?;
            read.merge(&seen);
            if let Some(s) = skipped {
                all.get_or_insert_with(ChangedHashes::default).absorb(s);
            }
        }
        Ok((all, read))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_order_puts_slash_first() {
        assert_eq!(walk_cmp(b"a/b", b"a-c"), Ordering::Less);
        assert_eq!(walk_cmp(b"a/b", b"a"), Ordering::Greater);
        assert_eq!(walk_cmp(b"r/a/z", b"r/ab"), Ordering::Less);
        assert_eq!(walk_cmp(b"x", b"x"), Ordering::Equal);
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
        assert!(Shard::parse("4/4").is_err());
        assert!(Shard::parse("0/0").is_err());
        assert!(Shard::parse("x").is_err());
    }
}
