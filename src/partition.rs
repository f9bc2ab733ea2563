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
//! chunk group (8 bytes per record, and no more than `limit + 1` distinct
//! files are kept per group). File sizes and content hashes for the `F`
//! lines are not kept: only the first and last lines of the file table are
//! read up front (its header and trailer: parameters, file count, digest of
//! the records), and the whole table once at the end, which is why
//! `--files` must be a regular file. (If it is a pipe, it is read up front
//! and 24 more bytes per file are kept instead.)
//!
//! Time: the chunk stream is parsed on one thread while another groups,
//! unions and formats, and a third writes (about 10 M records/s on two
//! cores, docs/performance.md).

use crate::bgwrite::BgWriter;
use crate::error::{Error, Result};
use crate::io::{open_input, Output};
use crate::records::{
    classify_line, digest_params, hex128, parse_hex128, parse_id, parse_u64, write_header,
    write_trailer, Digest, InputCheck, Kind, Line, Params, CHUNK_PARAM_KEYS,
};
use crate::sort::{format_chunk_line, parse_chunk_line, ChunkKey, FastLines, LineSink};
use crate::unionfind::UnionFind;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::Instant;

/// How many of the dropped chunks of highest degree are reported.
pub const TOP_DROPPED: usize = 20;

/// The chunk degree limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// At most this many distinct files per chunk.
    Absolute(u64),
    /// floor(files × fraction); the paper uses one half.
    Fraction(f64),
}

impl Limit {
    pub fn resolve(self, files: u64) -> u64 {
        match self {
            Limit::Absolute(n) => n,
            Limit::Fraction(f) => (files as f64 * f).floor() as u64,
        }
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
    /// sizes reduced to their payload (`crate::templates`).
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
            "; dropped {} chunks above degree {} ({} records)",
            self.dropped_chunks, self.limit, self.dropped_records
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
}

/// The fields of a file-table line that this stage needs: id, size, content
/// and the (still escaped) path.
fn parse_file_line(line: &[u8]) -> std::result::Result<(u32, u64, u128, &[u8]), String> {
    // memchr rather than `split_fields`: this runs for every file and the
    // path is the longest field.
    let bad = || format!("expected {}", crate::records::FileEntry::EXPECTED);
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
    let files = t.get_u64("files")?;
    if files > u32::MAX as u64 + 1 {
        return None;
    }
    Some(FileTable {
        name: path.display().to_string(),
        params,
        files,
        chunk_digest: Digest {
            count: t.get_u64("records")?,
            sum: t.get_u128_hex("digest")?,
        },
    })
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
                Line::Trailer(Kind::Files, p) => trailer = Some(p),
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
            return Err(lines.error("no '#fsim files v1' header: expected a file table written by fsim-chunk --files-out"));
        }
        if trailer.is_some() {
            return Err(lines.error("record after the trailer"));
        }
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
            "no '#fsim files v1' header: expected a file table written by fsim-chunk --files-out",
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
    Ok(FileTable {
        name,
        params,
        files,
        chunk_digest: Digest { count, sum },
    })
}

/// Unions in flight in [`Grouper`].
const PENDING: usize = 16;

/// Union `a` and `b` a few unions later: prefetch now, so that the random
/// accesses of consecutive groups overlap instead of stalling one after the
/// other.
#[inline]
fn queue_union(
    uf: &mut UnionFind,
    pending: &mut std::collections::VecDeque<(u32, u32)>,
    a: u32,
    b: u32,
) {
    uf.prefetch(a);
    uf.prefetch(b);
    pending.push_back((a, b));
    if pending.len() > PENDING {
        if let Some((x, y)) = pending.pop_front() {
            uf.union(x, y);
        }
    }
}

/// (degree, reversed hash, length, example): larger is reported first.
type TopKey = (u64, std::cmp::Reverse<u128>, u32, u32);

/// The grouping state machine, separate from I/O so it can be unit tested:
/// feed records in sorted order, call [`Grouper::end_group`] at each new
/// hash and at the end.
pub struct Grouper {
    pub limit: u64,
    uf: UnionFind,
    /// Unions waiting, so their cache misses overlap (see `queue_union`).
    pending: std::collections::VecDeque<(u32, u32)>,
    hash: u128,
    /// (file, len) of the current group's records while it may be kept.
    recs: Vec<(u32, u32)>,
    nrecs: u64,
    degree: u64,
    last_file: u32,
    first_len: u32,
    example: u32,
    pub kept: Digest,
    pub singleton_chunks: u64,
    pub dropped_chunks: u64,
    pub dropped_records: u64,
    /// Min-heap by degree of the highest dropped chunks.
    top: std::collections::BinaryHeap<std::cmp::Reverse<TopKey>>,
}

impl Grouper {
    pub fn new(files: usize, limit: u64) -> Self {
        Grouper {
            limit,
            uf: UnionFind::new(files),
            pending: std::collections::VecDeque::with_capacity(PENDING + 1),
            hash: 0,
            recs: Vec::new(),
            nrecs: 0,
            degree: 0,
            last_file: 0,
            first_len: 0,
            example: 0,
            kept: Digest::default(),
            singleton_chunks: 0,
            dropped_chunks: 0,
            dropped_records: 0,
            top: Default::default(),
        }
    }

    /// Add a record of the current group (same hash as the previous one, or
    /// the first of a group after `end_group`); file ids ascending.
    #[inline]
    pub fn add(&mut self, hash: u128, file: u32, len: u32) {
        if self.nrecs == 0 {
            self.hash = hash;
            self.first_len = len;
            self.example = file;
            self.degree = 1;
        } else if file != self.last_file {
            self.degree += 1;
        }
        self.last_file = file;
        self.nrecs += 1;
        if self.degree <= self.limit {
            self.recs.push((file, len));
        }
    }

    /// Close the current group: union and return its records when kept
    /// (via `keep`), count it otherwise.
    #[inline]
    pub fn end_group(&mut self, mut keep: impl FnMut(&ChunkKey) -> Result<()>) -> Result<()> {
        if self.nrecs == 0 {
            return Ok(());
        }
        if self.degree == 1 {
            self.singleton_chunks += 1;
        } else if self.degree <= self.limit {
            let first = self.recs[0].0;
            let mut prev = first;
            let hi = (self.hash >> 64) as u64;
            let lo = self.hash as u64;
            for &(file, len) in &self.recs {
                if file != prev {
                    queue_union(&mut self.uf, &mut self.pending, first, file);
                    prev = file;
                }
                let k = ChunkKey { hi, lo, file, len };
                self.kept.add(&k.record());
                keep(&k)?;
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

    /// Apply the queued unions and label the components.
    pub fn into_components(mut self) -> crate::unionfind::Components {
        while let Some((x, y)) = self.pending.pop_front() {
            self.uf.union(x, y);
        }
        self.uf.into_components()
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

/// Records per batch handed from the parser thread to the grouping thread.
const BATCH: usize = 1 << 14;

/// What the parser thread found besides the records.
struct Parsed {
    seen: Digest,
    check: InputCheck,
    last_name: String,
    last_line: u64,
    /// Feature methods: distinct features per file (see `parse_chunks`).
    feature_counts: Option<Vec<u32>>,
    /// Template bytes per file (`--templates`).
    tmpl: crate::templates::PayloadCounter,
}

/// The parser thread of [`run`]: read and check the sorted chunk stream,
/// send its records in batches (returned empty through `back` for reuse).
/// `Ok(None)` when the grouping thread stopped listening (it has the error).
fn parse_chunks(
    inputs: &[PathBuf],
    table: &FileTable,
    chunk_params: &Params,
    mut tmpl: crate::templates::PayloadCounter,
    quiet: bool,
    tx: SyncSender<Vec<ChunkKey>>,
    back: Receiver<Vec<ChunkKey>>,
) -> Result<Option<Parsed>> {
    let n = table.files;
    let mut check = InputCheck::new(Kind::Chunks, "records");
    let mut seen = Digest::default();
    let mut prev: Option<(u64, u64, u32)> = None;
    // Feature methods: distinct features per file (all of them, before
    // degree-1 and ubiquitous ones are dropped), for the F lines: the
    // analysis needs each file's set size for resemblance. 4 bytes per file.
    let mut feature_counts: Option<Vec<u32>> = chunk_params
        .get("method")
        .is_some_and(crate::features::is_feature_method)
        .then(|| vec![0u32; n as usize]);
    let (mut last_name, mut last_line) = (String::from("-"), 0);
    let mut batch: Vec<ChunkKey> = Vec::with_capacity(BATCH);
    let paths: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let progress = crate::progress::Progress::for_inputs("fsim-partition", &paths, quiet);
    for path in inputs {
        let (r, name) = open_input(path)?;
        let r = progress.reader(r);
        let mut lines = FastLines::new(r, name);
        while let Some((line, at)) = lines.next_line_at()? {
            if let Some(k) = parse_chunk_line(line) {
                let key = (k.hi, k.lo, k.file);
                if prev.is_some_and(|p| key < p) {
                    return Err(lines.error(
                        "input is not sorted by hash: run fsim-sort or LC_ALL=C sort first",
                    ));
                }
                if k.file as u64 >= n {
                    return Err(lines.error(format!(
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
                seen.add(&k.record());
                if tmpl.take(k.hash(), k.file, k.len) {
                    continue;
                }
                batch.push(k);
                if batch.len() == BATCH {
                    let next = back
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                    if tx.send(std::mem::replace(&mut batch, next)).is_err() {
                        return Ok(None);
                    }
                }
                continue;
            }
            match classify_line(line).map_err(|m| at.error(m))? {
                Line::Header(kind, params) => {
                    if let Some(d) = params.only(CHUNK_PARAM_KEYS).difference(chunk_params) {
                        return Err(lines.error(format!(
                            "chunking parameters differ from the file table {}: {d} (in the file table)",
                            table.name
                        )));
                    }
                    check.header(kind, params).map_err(|m| lines.error(m))?;
                }
                Line::Trailer(kind, params) => {
                    check.trailer(kind, &params).map_err(|m| lines.error(m))?
                }
                Line::Comment(_) => {}
                Line::Data(_) => {
                    return Err(lines.error(format!(
                        "expected {}",
                        crate::records::ChunkRecord::EXPECTED
                    )));
                }
            }
        }
        last_name = lines.name().to_string();
        last_line = lines.line_number();
    }
    if !batch.is_empty() && tx.send(batch).is_err() {
        return Ok(None);
    }
    progress.finish();
    Ok(Some(Parsed {
        seen,
        check,
        last_name,
        last_line,
        feature_counts,
        tmpl,
    }))
}

/// Append a kept record's text line to the writer.
#[inline]
fn write_chunk(k: &ChunkKey, w: &mut BgWriter) -> Result<()> {
    let mut line = [0u8; 64];
    let n = format_chunk_line(k, &mut line);
    w.raw(&line[..n])
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
    let tmpl = crate::templates::PayloadCounter::new(
        crate::templates::TemplateSet::load(&cfg.templates, &chunk_params)?,
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

    let mut g = Grouper::new(n as usize, limit);
    let default_input = [PathBuf::from("-")];
    let inputs: &[PathBuf] = if cfg.inputs.is_empty() {
        &default_input
    } else {
        &cfg.inputs
    };
    let (grouped, parsed) = std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<Vec<ChunkKey>>(4);
        let (back_tx, back_rx) = sync_channel::<Vec<ChunkKey>>(8);
        let (table, chunk_params) = (&table, &chunk_params);
        let quiet = cfg.quiet;
        let parser =
            s.spawn(move || parse_chunks(inputs, table, chunk_params, tmpl, quiet, tx, back_rx));
        let mut group = || -> Result<()> {
            let mut cur: Option<(u64, u64)> = None;
            for batch in rx.iter() {
                for k in &batch {
                    if cur != Some((k.hi, k.lo)) {
                        g.end_group(|k| write_chunk(k, &mut w))?;
                        cur = Some((k.hi, k.lo));
                    }
                    g.add(k.hash(), k.file, k.len);
                }
                let mut batch = batch;
                batch.clear();
                let _ = back_tx.try_send(batch);
            }
            Ok(())
        };
        let grouped = group();
        // Stop the parser if grouping failed (it sees the channel closed).
        drop(rx);
        let parsed = parser
            .join()
            .unwrap_or_else(|_| Err(Error::msg("internal error: the parser thread panicked")));
        (grouped, parsed)
    });
    // The grouping error came first in input order (the parser is ahead).
    grouped?;
    let parsed = parsed?.ok_or_else(|| Error::msg("internal error: the parser thread stopped"))?;
    g.end_group(|k| write_chunk(k, &mut w))?;
    let feature_counts = parsed.feature_counts;
    let tmpl = parsed.tmpl;
    let (seen, last_name) = (parsed.seen, parsed.last_name);
    parsed.check.finish(&seen, &last_name, parsed.last_line)?;
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
    let comps = g.into_components();
    let (components, files_in_components) = comps.multi_counts();
    let want_path = top.first().map(|t| t.example);
    let mut top_example_path = None;

    // F lines, in id order.
    let fline = |id: u32, size: u64, content: u128, w: &mut BgWriter| -> Result<()> {
        let b = w.buf();
        b.extend_from_slice(b"F\t");
        crate::records::write_id(id, b);
        b.push(b'\t');
        crate::records::write_id(comps.label(id), b);
        b.push(b'\t');
        crate::records::write_u64(tmpl.payload(id, size), b);
        b.push(b'\t');
        crate::records::write_hex128(content, b);
        if let Some(c) = &feature_counts {
            b.push(b'\t');
            crate::records::write_u64(c[id as usize] as u64, b);
        }
        b.push(b'\n');
        w.maybe_flush()
    };
    if let Some(kept_files) = &kept_files {
        for (id, &(size, content)) in kept_files.iter().enumerate() {
            if comps.in_multi(id as u32) {
                fline(id as u32, size, content, &mut w)?;
            }
        }
    } else {
        // The one full read of the table: it checks every line, as the
        // read up front of a pipe does.
        let again = read_file_table(&cfg.files, |id, size, content, path| {
            if Some(id) == want_path {
                // Escaped already in the file table: printable, valid UTF-8.
                top_example_path = Some(String::from_utf8_lossy(path).into_owned());
            }
            if comps.in_multi(id) {
                fline(id, size, content, &mut w)?;
            }
            Ok(())
        })?;
        if again != table {
            return Err(Error::msg(format!(
                "{}: the file table changed while fsim-partition was reading it",
                table.name
            )));
        }
    }
    drop(comps);

    let mut tail = Vec::new();
    for t in &top {
        tail.extend_from_slice(b"#dropped\t");
        tail.extend_from_slice(hex128(t.hash).as_bytes());
        tail.extend_from_slice(format!("\t{}\t{}\t", t.degree, t.len).as_bytes());
        crate::records::write_id(t.example, &mut tail);
        tail.push(b'\n');
    }
    let tp = digest_params(&kept, "records")
        .with("files", files_in_components)
        .with("components", components)
        .with("dropped_chunks", dropped_chunks)
        .with("dropped_records", dropped_records);
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
        top,
        top_example_path,
        templates: tmpl.summary(),
        seconds: t0.elapsed().as_secs_f64(),
    })
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
    let mut out = Output::create(cfg.output.as_deref())?;
    let mut g = Grouper::new(n as usize, limit);
    let mut forest = UnionFind::new(n as usize);
    let mut sink = LineSink::new();
    let mut seen = Digest::default();
    let mut edges = 0u64;
    let mut counts: Option<Vec<u32>> = cfg.feature_counts.then(|| vec![0u32; n as usize]);
    let mut group: Vec<u32> = Vec::new();
    // Close the current group: write its kept records, then the forest
    // edges it adds (first file to each other file, when they merge).
    let mut close = |g: &mut Grouper, sink: &mut LineSink, out: &mut Output| -> Result<()> {
        group.clear();
        g.end_group(|k| {
            if group.last() != Some(&k.file) {
                group.push(k.file);
            }
            sink.chunk(k, out)
        })?;
        if let Some((&first, rest)) = group.split_first() {
            for &f in rest {
                if forest.union(first, f) {
                    edges += 1;
                    let mut b = Vec::with_capacity(24);
                    b.extend_from_slice(b"E\t");
                    crate::records::write_id(first, &mut b);
                    b.push(b'\t');
                    crate::records::write_id(f, &mut b);
                    b.push(b'\n');
                    sink.raw(&b, out)?;
                }
            }
        }
        Ok(())
    };
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
        while let Some((line, _)) = lines.next_line_at()? {
            if line.first() == Some(&b'#') {
                continue;
            }
            let k = parse_chunk_line(line).ok_or_else(|| {
                lines.error(format!(
                    "expected {}",
                    crate::records::ChunkRecord::EXPECTED
                ))
            })?;
            let key = (k.hi, k.lo, k.file);
            if let Some(p) = prev {
                if key < p {
                    return Err(lines.error("input is not sorted by hash"));
                }
                if (k.hi, k.lo) != (p.0, p.1) {
                    close(&mut g, &mut sink, &mut out)?;
                }
            }
            if k.file as u64 >= n {
                return Err(
                    lines.error(format!("file id {} is not below --files-count {n}", k.file))
                );
            }
            if let Some(c) = counts.as_mut() {
                if prev != Some(key) {
                    let slot = &mut c[k.file as usize];
                    *slot = slot.saturating_add(1);
                }
            }
            prev = Some(key);
            seen.add(&k.record());
            g.add(k.hash(), k.file, k.len);
        }
    }
    close(&mut g, &mut sink, &mut out)?;
    let mut tail = Vec::new();
    if let Some(c) = &counts {
        for (id, &v) in c.iter().enumerate() {
            if v > 0 {
                tail.extend_from_slice(b"N\t");
                crate::records::write_id(id as u32, &mut tail);
                tail.extend_from_slice(format!("\t{v}\n").as_bytes());
            }
        }
    }
    for t in g.top_dropped() {
        tail.extend_from_slice(b"#dropped\t");
        tail.extend_from_slice(hex128(t.hash).as_bytes());
        tail.extend_from_slice(format!("\t{}\t{}\t", t.degree, t.len).as_bytes());
        crate::records::write_id(t.example, &mut tail);
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
    sink.raw(&tail, &mut out)?;
    sink.flush(&mut out)?;
    out.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(g: &mut Grouper, groups: &[(u128, &[u32])]) -> Vec<(u128, u32)> {
        let mut kept = Vec::new();
        for &(h, files) in groups {
            for &f in files {
                g.add(h, f, 100);
            }
            g.end_group(|k| {
                kept.push((k.hash(), k.file));
                Ok(())
            })
            .unwrap();
        }
        kept
    }

    #[test]
    fn groups_limits_and_unions() {
        let mut g = Grouper::new(6, 3);
        let kept = feed(
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
        let c = g.into_components();
        let labels: Vec<u32> = (0..6).map(|i| c.label(i)).collect();
        assert_eq!(labels, [0, 0, 2, 3, 3, 5]);
        assert_eq!(c.multi_counts(), (2, 4));
    }

    #[test]
    fn degree_at_limit_is_kept() {
        let mut g = Grouper::new(4, 2);
        let kept = feed(&mut g, &[(9, &[1, 2]), (10, &[0, 1, 2])]);
        assert_eq!(kept.len(), 2);
        assert_eq!(g.dropped_chunks, 1);
    }

    #[test]
    fn top_keeps_highest_degrees() {
        let mut g = Grouper::new(100, 1);
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
        assert_eq!(Limit::Fraction(0.5).resolve(7), 3);
        assert_eq!(Limit::Absolute(9).resolve(7), 9);
    }
}
