//! The chunk stage (`fsim-chunk`, paper step 1): walk the repository, cut
//! every file into content-defined chunks, hash each chunk with MD5, and
//! write one chunk record per chunk plus a table of the files.
//!
//! # Threads and determinism
//!
//! The output is byte-identical whatever `--jobs`:
//!
//! * one walker thread numbers the files in walk order (a sequence number,
//!   warnings included) and hands them to the workers through a bounded
//!   channel;
//! * `jobs` workers open, read, chunk and hash files, each with its own
//!   reused read buffer;
//! * the calling thread is the writer: it puts results back in sequence
//!   order (a reorder buffer), gives file ids 0, 1, 2... to the files that
//!   were read completely (a skipped file gets no id), formats the records
//!   and prints warnings, so even stderr is in walk order.
//!
//! The walker never runs more than `window` sequence numbers (256 per
//! worker) ahead of the writer, which bounds the reorder buffer and the
//! channels, and makes a full channel impossible (so shutting down after an
//! error never blocks). The chunk records go to the output through a
//! writer thread of their own ([`crate::bgwrite`]), so the writer formats
//! while the kernel copies and starts the write-back.
//!
//! # Memory
//!
//! Each worker holds a read buffer of 1 MiB (or four maximal chunks if that
//! is more), allocated once. The records of a file are kept until the file
//! is read to its end, because a read error must drop the whole file: 32
//! bytes per chunk, about 3% of the file size at the default average.
//!
//! # Files that change
//!
//! A file that grows or shrinks while it is read is chunked as read, and its
//! size in the table is the number of bytes actually read. A read error in
//! the middle of a file drops the file (warning, counted as skipped).

use crate::bgwrite::BgWriter;
use crate::chunker::{Chunker, Cut};
use crate::error::{Context, Error, Result};
use crate::io::Output;
use crate::progress::Progress;
use crate::records::{self, ChunkLines, ChunkRecord, Digest, FileEntry, FileType, Kind, Params};
use crate::reuse::{Found, Previous, Shard};
use crate::walk::{self, Event, WalkConfig, WalkStats};
use md5::{Digest as _, Md5};
use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Name used in messages.
pub const PROG: &str = "fsim-chunk";

/// Bytes read per `read` call at most (and the minimum buffer size).
pub const BLOCK: usize = 1 << 20;

/// Files handed to a worker at a time: fewer wake-ups per file (each
/// hand-over is a context switch on a small machine), still fine-grained
/// enough to balance the workers.
pub const BATCH: usize = 16;

/// Bytes of the start of a file used to classify it.
pub const HEAD: usize = 8 << 10;

/// Files at least this large are hashed on several threads when `--jobs`
/// is more than 1 ([`crate::parhash`]): one 1 GB file then uses every core.
pub const PAR_MIN: u64 = 8 << 20;

/// Validated configuration of a run.
#[derive(Debug, Clone)]
pub struct Config {
    pub walk: WalkConfig,
    /// Chunk records; `None` or `-` is standard output.
    pub output: Option<PathBuf>,
    /// The file table.
    pub files_out: PathBuf,
    pub chunker: Chunker,
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// No summary line, no progress.
    pub quiet: bool,
    /// Read only the walk positions of this shard; ids are walk positions.
    pub shard: Option<Shard>,
    /// (file table, chunk file) pairs of earlier runs whose records are
    /// reused for unchanged files (see [`crate::reuse`]).
    pub previous: Vec<(PathBuf, PathBuf)>,
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub chunks: u64,
    /// Files and directories that could not be read (warned).
    pub skipped: u64,
    /// Files opened and read in this run.
    pub read: u64,
    /// Files whose records were taken from a previous run (not opened).
    pub reused: u64,
    pub walk: WalkStats,
    pub seconds: f64,
}

impl Summary {
    /// `fsim-chunk: N files, B bytes, R chunks, S skipped, N read, U reused, T s (X MB/s)`.
    pub fn line(&self) -> String {
        let mbs = if self.seconds > 0.0 {
            self.bytes as f64 / 1e6 / self.seconds
        } else {
            0.0
        };
        format!(
            "{PROG}: {} files, {} bytes, {} chunks, {} skipped, {} read, {} reused, {:.2} s ({:.1} MB/s)",
            self.files,
            self.bytes,
            self.chunks,
            self.skipped,
            self.read,
            self.reused,
            self.seconds,
            mbs
        )
    }
}

/// One chunk of a file before it has an id: (MD5 as u128, length).
pub type Piece = (u128, u32);

/// What reading one stream gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamInfo {
    /// Bytes read.
    pub size: u64,
    /// MD5 over the concatenated chunk digests.
    pub content: u128,
    pub ftype: FileType,
}

/// Read into `buf` until it is full or the stream ends: (bytes read, end
/// reached). Short reads and EINTR are retried, so a block boundary never
/// depends on how the kernel split the reads.
pub(crate) fn fill(r: &mut impl Read, buf: &mut [u8]) -> io::Result<(usize, bool)> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => return Ok((filled, true)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((filled, false))
}

impl StreamInfo {
    /// The info of a stream read to its end: `size` bytes, the MD5 over its
    /// chunk digests, the type seen in its first block (none: empty).
    pub(crate) fn finish(size: u64, content: Md5, ftype: Option<FileType>) -> StreamInfo {
        let ftype = if size == 0 {
            FileType::Empty
        } else {
            ftype.unwrap_or(FileType::Binary)
        };
        StreamInfo {
            size,
            content: records::digest_to_u128(&content.finalize()),
            ftype,
        }
    }
}

/// A read buffer sized for `chunker`: [`BLOCK`] or four maximal chunks.
pub fn read_buffer(chunker: &Chunker) -> Vec<u8> {
    // Touched once here (zeroed) and reused for every file of a worker.
    vec![0u8; BLOCK.max(4 * chunker.max_len())]
}

/// Chunk a whole stream with a reused buffer (from [`read_buffer`]),
/// appending its chunks to `pieces`. The buffer is refilled block by block
/// and the unfinished chunk is carried over, so streams larger than memory
/// work. On an error, `pieces` holds a partial list: the caller drops it.
pub fn chunk_stream(
    r: &mut impl Read,
    chunker: &Chunker,
    buf: &mut [u8],
    pieces: &mut Vec<Piece>,
) -> io::Result<StreamInfo> {
    chunk_stream_with(r, chunker, buf, pieces, &mut |_| Ok(()))
}

/// [`chunk_stream`], calling `block_done` with the pieces after each
/// buffer's chunks are appended (where [`Spill`] moves them to disk).
pub(crate) fn chunk_stream_with(
    r: &mut impl Read,
    chunker: &Chunker,
    buf: &mut [u8],
    pieces: &mut Vec<Piece>,
    block_done: &mut dyn FnMut(&mut Vec<Piece>) -> io::Result<()>,
) -> io::Result<StreamInfo> {
    chunk_stream_defer(r, chunker, buf, pieces, block_done, false).map(|(info, _)| info)
}

/// [`chunk_stream_with`]; with `defer`, a stream that fits the buffer
/// (read in one fill, its pieces all in `pieces`) gets no content hash:
/// the second value is then true, `info.content` is 0, and the caller
/// computes it from the pieces ([`content_of`], many files at a time:
/// [`finish_contents`]).
pub(crate) fn chunk_stream_defer(
    r: &mut impl Read,
    chunker: &Chunker,
    buf: &mut [u8],
    pieces: &mut Vec<Piece>,
    block_done: &mut dyn FnMut(&mut Vec<Piece>) -> io::Result<()>,
    defer: bool,
) -> io::Result<(StreamInfo, bool)> {
    if let Chunker::Features(spec) = chunker {
        return crate::features::chunk_stream(r, spec, buf, pieces).map(|info| (info, false));
    }
    debug_assert!(buf.len() > chunker.max_len());
    let mut deferred = false;
    let mut filled = 0usize;
    let mut size = 0u64;
    let mut content = Md5::new();
    let mut ftype = None;
    let mut digests = Vec::new();
    loop {
        let (n, eof) = fill(r, &mut buf[filled..])?;
        filled += n;
        size += n as u64;
        if ftype.is_none() {
            // First fill: the buffer starts at offset 0 of the stream.
            ftype = Some(FileType::classify(&buf[..filled.min(HEAD)], size));
        }
        // Cut the whole buffer, then hash its chunks together (several at
        // a time: crate::md5batch).
        let first = pieces.len();
        let mut pos = 0;
        while let Some(len) = chunker.cut(&buf[pos..filled], eof) {
            pieces.push((0, len as u32));
            pos += len;
        }
        let whole = defer && eof && size == filled as u64 && first == 0;
        hash_pieces(&buf[..pos], &mut pieces[first..], &mut digests);
        block_done(pieces)?;
        if whole && pieces.len() == digests.len() {
            deferred = true;
        } else {
            add_to_content(&mut content, &digests);
        }
        if eof {
            break;
        }
        buf.copy_within(pos..filled, 0);
        filled -= pos;
    }
    let mut info = StreamInfo::finish(size, content, ftype);
    if deferred {
        info.content = 0;
    }
    Ok((info, deferred))
}

/// Fill in the digests of `pieces`, whose lengths cut `data` from its
/// start; `digests` gets them too.
pub(crate) fn hash_pieces(data: &[u8], pieces: &mut [Piece], digests: &mut Vec<u128>) {
    digests.clear();
    let mut pos = 0usize;
    let msgs = pieces.iter().map(|&(_, len)| {
        let m = &data[pos..pos + len as usize];
        pos += len as usize;
        m
    });
    crate::md5batch::digest_many(msgs, digests);
    for (p, &d) in pieces.iter_mut().zip(digests.iter()) {
        p.0 = d;
    }
}

/// Add chunk digests to a content hash in order, 64 at a time (one call
/// per 1 KiB, not per 16 bytes).
fn add_to_content(content: &mut Md5, digests: &[u128]) {
    let mut bytes = [0u8; 64 * 16];
    for group in digests.chunks(64) {
        for (slot, &d) in bytes.chunks_exact_mut(16).zip(group) {
            slot.copy_from_slice(&d.to_be_bytes());
        }
        content.update(&bytes[..16 * group.len()]);
    }
}

/// Append the content hash message of `pieces` (their digests, big-endian,
/// in order) to `out`.
fn content_message(pieces: &[Piece], out: &mut Vec<u8>) {
    out.reserve(16 * pieces.len());
    for &(d, _) in pieces {
        out.extend_from_slice(&d.to_be_bytes());
    }
}

/// The content hash of a file whose pieces are all in `pieces`.
pub fn content_of(pieces: &[Piece]) -> u128 {
    let mut m = Vec::new();
    content_message(pieces, &mut m);
    crate::md5batch::digest_one(&m)
}

/// Compute the content hashes left to do in a batch of results
/// ([`chunk_file_deferred`]), several files at a time: the content hash is
/// one serial MD5 per file (over its chunk digests, ~16% more bytes at
/// average chunk 100), so files go through the lanes of
/// [`crate::md5batch`] side by side like the chunks do. `scratch` is
/// reused.
fn finish_contents(results: &mut [(u64, Body)], scratch: &mut Vec<u8>) {
    let mut ends = Vec::new();
    scratch.clear();
    for (_, body) in results.iter() {
        if let Body::File(f) = body {
            if f.content_pending {
                content_message(&f.pieces, scratch);
                ends.push(scratch.len());
            }
        }
    }
    if ends.is_empty() {
        return;
    }
    let mut start = 0;
    let msgs = ends.iter().map(|&end| {
        let m = &scratch[start..end];
        start = end;
        m
    });
    let mut digests = Vec::with_capacity(ends.len());
    crate::md5batch::digest_many(msgs, &mut digests);
    let mut digests = digests.into_iter();
    for (_, body) in results.iter_mut() {
        if let Body::File(f) = body {
            if f.content_pending {
                f.info.content = digests.next().expect("one digest per pending file");
                f.content_pending = false;
            }
        }
    }
}

/// Pieces of one file kept in memory at most; beyond, they go to a
/// temporary file ([`Spill`]): 1 Mi pieces, 32 MiB, a file of ~100 MB at
/// the default average chunk size.
pub const SPILL_AT: usize = 1 << 20;

/// The pieces of a large file moved out of memory while it is read: its
/// records must wait until the file is read to its end (a read error drops
/// the whole file), and at 32 bytes per chunk a file of many GB would
/// otherwise hold a third of its size in memory. 20 bytes per piece
/// (digest big-endian, length little-endian) in an unnamed temporary file
/// (`TMPDIR`), read back in order by the writer, removed when dropped.
#[derive(Debug)]
pub struct Spill {
    file: io::BufWriter<File>,
    /// Pieces written.
    pub count: u64,
}

impl Spill {
    /// Move `pieces` to the spill file (created on first use) once there
    /// are at least `limit` of them.
    pub fn offload(
        spill: &mut Option<Spill>,
        pieces: &mut Vec<Piece>,
        limit: usize,
    ) -> io::Result<()> {
        if pieces.len() < limit {
            return Ok(());
        }
        if spill.is_none() {
            *spill = Some(Spill {
                file: io::BufWriter::with_capacity(1 << 16, tempfile::tempfile()?),
                count: 0,
            });
        }
        let Some(s) = spill.as_mut() else {
            unreachable!()
        };
        for &(d, len) in pieces.iter() {
            s.file.write_all(&d.to_be_bytes())?;
            s.file.write_all(&len.to_le_bytes())?;
        }
        s.count += pieces.len() as u64;
        pieces.clear();
        Ok(())
    }

    /// Call `each` with every spilled piece, in order.
    pub fn replay(self, mut each: impl FnMut(Piece) -> Result<()>) -> Result<()> {
        let ctx = || "fsim-chunk: reading back a large file's records from a temporary file";
        let mut f = self
            .file
            .into_inner()
            .map_err(|e| e.into_error())
            .ctx(ctx)?;
        f.seek(io::SeekFrom::Start(0)).ctx(ctx)?;
        let mut r = io::BufReader::with_capacity(1 << 16, f);
        let mut rec = [0u8; 20];
        for _ in 0..self.count {
            r.read_exact(&mut rec).ctx(ctx)?;
            let mut d = [0u8; 16];
            d.copy_from_slice(&rec[..16]);
            let len = u32::from_le_bytes([rec[16], rec[17], rec[18], rec[19]]);
            each((u128::from_be_bytes(d), len))?;
        }
        Ok(())
    }
}

/// Why a file was not chunked.
#[derive(Debug)]
pub enum Skip {
    /// Not a regular file when opened (replaced since the walk): silent.
    Special,
    /// Could not open or read it: warned.
    Io(io::Error),
}

/// A file read completely.
#[derive(Debug)]
pub struct FileResult {
    pub path: PathBuf,
    pub info: StreamInfo,
    pub mtime_s: i64,
    pub mtime_ns: u32,
    pub pieces: Vec<Piece>,
    /// The first pieces of a large file, when they were moved to disk:
    /// they come before `pieces`.
    pub spilled: Option<Spill>,
    /// Walk position (the file id of a shard run).
    pub pos: u64,
    /// Taken from a previous run, not read.
    pub reused: bool,
    /// `info.content` is still to compute from `pieces` (only from
    /// [`chunk_file_deferred`]).
    pub content_pending: bool,
}

/// Open a regular file, chunk it, and note its mtime at open time.
/// `hashers` > 1: a file of at least [`PAR_MIN`] bytes is hashed on that
/// many threads (same result).
pub fn chunk_file(
    path: PathBuf,
    chunker: &Chunker,
    buf: &mut [u8],
    pieces: Vec<Piece>,
    hashers: usize,
) -> std::result::Result<FileResult, (PathBuf, Skip)> {
    chunk_file_deferred(path, chunker, buf, pieces, hashers, false)
}

/// [`chunk_file`]; with `defer`, the content hash of a file read in one
/// buffer is left to the caller (`content_pending`).
fn chunk_file_deferred(
    path: PathBuf,
    chunker: &Chunker,
    buf: &mut [u8],
    pieces: Vec<Piece>,
    hashers: usize,
    defer: bool,
) -> std::result::Result<FileResult, (PathBuf, Skip)> {
    match chunk_open(&path, chunker, buf, pieces, hashers, defer) {
        Ok((info, meta, pieces, spilled, content_pending)) => Ok(FileResult {
            path,
            info,
            mtime_s: meta.mtime(),
            mtime_ns: meta.mtime_nsec() as u32,
            pieces,
            spilled,
            pos: 0,
            reused: false,
            content_pending,
        }),
        Err(e) => Err((path, e)),
    }
}

type Opened = (StreamInfo, Metadata, Vec<Piece>, Option<Spill>, bool);

fn chunk_open(
    path: &Path,
    chunker: &Chunker,
    buf: &mut [u8],
    mut pieces: Vec<Piece>,
    hashers: usize,
    defer: bool,
) -> std::result::Result<Opened, Skip> {
    pieces.clear();
    // O_NONBLOCK (a FIFO put in the file's place since the walk cannot
    // block), and paths over PATH_MAX opened piecewise.
    let mut f = crate::longpath::open_file(path).map_err(Skip::Io)?;
    let meta = f.metadata().map_err(Skip::Io)?;
    if !meta.is_file() {
        return Err(Skip::Special);
    }
    // Feature methods read files whole (crate::features); only the
    // chunking methods cut and hash in parallel.
    let cuts = !matches!(chunker, Chunker::Features(_));
    let mut spilled = None;
    let mut offload = |p: &mut Vec<Piece>| Spill::offload(&mut spilled, p, SPILL_AT);
    let (info, pending) = if hashers > 1 && cuts && meta.len() >= PAR_MIN {
        crate::parhash::chunk_stream_par(&mut f, chunker, hashers, &mut pieces, &mut offload)
            .map(|info| (info, false))
    } else {
        chunk_stream_defer(&mut f, chunker, buf, &mut pieces, &mut offload, defer)
    }
    .map_err(Skip::Io)?;
    Ok((info, meta, pieces, spilled, pending))
}

/// A file to read: (sequence number, walk position, path).
type Job = (u64, u64, PathBuf);

/// Stat a walked file and look it up in the previous run. A file that
/// cannot be examined is not reused (it is read, and warned about then).
fn reuse_lookup(prev: &mut Previous, pos: u64, path: &Path) -> Result<Option<Found>> {
    let Ok(meta) = crate::longpath::metadata(path) else {
        return Ok(None);
    };
    prev.lookup(
        pos,
        path.as_os_str().as_bytes(),
        meta.len(),
        (meta.mtime(), meta.mtime_nsec() as u32),
    )
}

/// A result on its way to the writer, tagged with its sequence number.
enum Body {
    File(FileResult),
    Warning(PathBuf, String),
    /// Not a regular file after all (race with the walk).
    Special,
}

/// Lets the walker wait until the writer has caught up, and everyone stop.
struct Flow {
    /// Sequence numbers written so far (read without locking on the fast path).
    emitted: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
    stop: AtomicBool,
}

impl Flow {
    /// True when `seq` may be handed out now (within the window, not stopping).
    fn ready(&self, seq: u64, window: u64) -> bool {
        seq < self.emitted.load(Ordering::Acquire) + window && !self.stop.load(Ordering::Relaxed)
    }

    /// Wait until `seq` is within the window; false when stopping.
    fn admit(&self, seq: u64, window: u64) -> bool {
        let mut g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        while seq >= self.emitted.load(Ordering::Acquire) + window {
            if self.stop.load(Ordering::Relaxed) {
                return false;
            }
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        !self.stop.load(Ordering::Relaxed)
    }

    fn advance(&self, emitted: u64) {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.emitted.store(emitted, Ordering::Release);
        self.cv.notify_all();
    }

    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.cv.notify_all();
    }
}

/// Run the chunk stage: walk, chunk, write both outputs atomically.
pub fn run(cfg: &Config) -> Result<Summary> {
    let start = Instant::now();
    walk::check_roots(&cfg.walk.roots)?;
    let to_stdout = cfg.output.as_deref().is_none_or(|p| p.as_os_str() == "-");
    if to_stdout && cfg.files_out.as_os_str() == "-" {
        return Err(Error::msg(
            "--files-out - and chunk records on standard output would mix: give -o FILE",
        ));
    }
    if !to_stdout && cfg.output.as_deref() == Some(cfg.files_out.as_path()) {
        return Err(Error::msg("-o and --files-out name the same file"));
    }
    let mut params = cfg.chunker.params();
    let mut previous = if cfg.previous.is_empty() {
        None
    } else {
        Some(Previous::open(&cfg.previous, &params)?)
    };
    if let Some(sh) = cfg.shard {
        params.set("shard", sh.text());
    }
    let mut chunks_out = Output::create(cfg.output.as_deref())?;
    let mut files_out = Output::create(Some(&cfg.files_out))?;
    let mut head = Vec::new();
    records::write_header(Kind::Chunks, &params, &mut head);
    chunks_out.write_all(&head)?;
    head.clear();
    records::write_header(Kind::Files, &params, &mut head);
    files_out.write_all(&head)?;

    // The records are written by a thread of their own (crate::bgwrite):
    // the write system calls copy ~0.5 byte per byte read at avg 100 and
    // start the write-back (crate::io), and while the writer waits there,
    // the workers run out of work once the window below is full.
    let mut bg = BgWriter::new(chunks_out);

    let progress = progress_for(cfg);
    let jobs = cfg.jobs.max(1);
    let window = (256 * jobs) as u64;
    let flow = Flow {
        emitted: AtomicU64::new(0),
        lock: Mutex::new(()),
        cv: Condvar::new(),
        stop: AtomicBool::new(false),
    };
    let (job_tx, job_rx) = sync_channel::<Vec<Job>>(window as usize);
    let job_rx = Mutex::new(job_rx);
    let (res_tx, res_rx) = sync_channel::<Vec<(u64, Body)>>(window as usize);
    let chunker = cfg.chunker;

    let (written, walked) = std::thread::scope(|s| {
        let flow = &flow;
        let walk_res_tx = res_tx.clone();
        let previous = &mut previous;
        let walker = s.spawn(move || -> Result<(WalkStats, u64)> {
            // `seq` numbers the events this run handles (the writer's
            // order), `pos` every walk event (shard assignment, shard ids).
            let mut seq = 0u64;
            let mut pos = 0u64;
            let mut failed = None;
            let mut batch: Vec<Job> = Vec::with_capacity(BATCH);
            let mut reused: Vec<(u64, Body)> = Vec::new();
            let stats = walk::walk(&cfg.walk, |ev| {
                let p_here = pos;
                pos += 1;
                if cfg.shard.is_some_and(|sh| p_here % sh.count != sh.index) {
                    return true;
                }
                if !flow.ready(seq, window) {
                    // The writer may be waiting for a file of these batches.
                    if !batch.is_empty() && job_tx.send(std::mem::take(&mut batch)).is_err() {
                        return false;
                    }
                    if !reused.is_empty() && walk_res_tx.send(std::mem::take(&mut reused)).is_err()
                    {
                        return false;
                    }
                    if !flow.admit(seq, window) {
                        return false;
                    }
                }
                let sent = match ev {
                    Event::File(p) => {
                        let found = match previous.as_mut() {
                            Some(prev) => match reuse_lookup(prev, p_here, &p) {
                                Ok(f) => f,
                                Err(e) => {
                                    failed = Some(e);
                                    return false;
                                }
                            },
                            None => None,
                        };
                        match found {
                            Some(f) => {
                                reused.push((
                                    seq,
                                    Body::File(FileResult {
                                        path: p,
                                        info: StreamInfo {
                                            size: f.entry.size,
                                            content: f.entry.content,
                                            ftype: f.entry.ftype,
                                        },
                                        mtime_s: f.entry.mtime_s,
                                        mtime_ns: f.entry.mtime_ns,
                                        pieces: f.pieces,
                                        spilled: None,
                                        pos: p_here,
                                        reused: true,
                                        content_pending: false,
                                    }),
                                ));
                                reused.len() < BATCH
                                    || walk_res_tx.send(std::mem::take(&mut reused)).is_ok()
                            }
                            None => {
                                batch.push((seq, p_here, p));
                                batch.len() < BATCH
                                    || job_tx
                                        .send(std::mem::replace(
                                            &mut batch,
                                            Vec::with_capacity(BATCH),
                                        ))
                                        .is_ok()
                            }
                        }
                    }
                    Event::Warning(p, m) => {
                        (reused.is_empty() || walk_res_tx.send(std::mem::take(&mut reused)).is_ok())
                            && walk_res_tx.send(vec![(seq, Body::Warning(p, m))]).is_ok()
                    }
                };
                seq += 1;
                sent
            });
            if !batch.is_empty() {
                let _ = job_tx.send(batch);
            }
            if !reused.is_empty() {
                let _ = walk_res_tx.send(reused);
            }
            if let Some(e) = failed {
                flow.halt();
                return Err(e);
            }
            if pos > u32::MAX as u64 + 1 && cfg.shard.is_some() {
                return Err(Error::msg(
                    "more than 2^32 walk positions: shard file ids are 32-bit",
                ));
            }
            Ok((stats?, seq))
        });
        let job_rx = &job_rx;
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                let res_tx = res_tx.clone();
                s.spawn(move || worker(&chunker, jobs, job_rx, res_tx))
            })
            .collect();
        drop(res_tx);
        let written = write_results(res_rx, flow, cfg.shard, &mut bg, &mut files_out, &progress);
        if written.is_err() {
            flow.halt();
        }
        let walked = walker
            .join()
            .unwrap_or_else(|_| Err(Error::msg("internal error: the walker thread panicked")));
        for w in workers {
            if w.join().is_err() {
                return (
                    Err(Error::msg("internal error: a worker thread panicked")),
                    walked,
                );
            }
        }
        (written, walked)
    });
    let mut w = written?;
    let (wstats, total) = walked?;
    // The last records before the last file entries, as when the writer
    // wrote both itself (the first output to fail is the one reported).
    let mut chunks_out = bg.finish()?;
    files_out.write_all(&std::mem::take(&mut w.files_tail))?;
    if let Some(prev) = previous {
        prev.finish()?;
    }
    if w.next_seq != total {
        return Err(Error::msg(format!(
            "internal error: {} of {total} walk events were written",
            w.next_seq
        )));
    }
    w.summary.walk = wstats;
    w.summary.walk.special += w.special;

    // Trailers, then make the outputs appear. Records in a file: the file
    // table first, so that the records' presence means both are complete.
    // Records on stdout: finish them first, so that a closed pipe leaves no
    // file table behind.
    let mut tail = Vec::new();
    records::write_trailer(
        Kind::Chunks,
        &records::digest_params(&w.digest, "records"),
        &mut tail,
    );
    chunks_out.write_all(&tail)?;
    tail.clear();
    let mut fp = Params::new().with("files", w.summary.files);
    for (k, v) in records::digest_params(&w.digest, "records").0 {
        fp.set(&k, v);
    }
    fp.set("skipped", w.summary.skipped);
    records::write_trailer(Kind::Files, &fp, &mut tail);
    files_out.write_all(&tail)?;
    if to_stdout {
        chunks_out.finish()?;
        files_out.finish()?;
    } else {
        files_out.finish()?;
        chunks_out.finish()?;
    }
    w.summary.seconds = start.elapsed().as_secs_f64();
    progress.finish();
    if !cfg.quiet {
        crate::cli::stderr_line(w.summary.line());
    }
    Ok(w.summary)
}

/// A worker: chunk files until the job channel closes or the writer is gone.
fn worker(
    chunker: &Chunker,
    hashers: usize,
    jobs: &Mutex<Receiver<Vec<Job>>>,
    results: SyncSender<Vec<(u64, Body)>>,
) {
    let mut buf = read_buffer(chunker);
    let mut scratch = Vec::new();
    loop {
        let job = jobs.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(batch) = job else { return };
        let mut out = Vec::with_capacity(batch.len());
        for (seq, pos, path) in batch {
            let body = match chunk_file_deferred(path, chunker, &mut buf, Vec::new(), hashers, true)
            {
                Ok(mut r) => {
                    r.pos = pos;
                    Body::File(r)
                }
                Err((_, Skip::Special)) => Body::Special,
                Err((path, Skip::Io(e))) => Body::Warning(path, e.to_string()),
            };
            out.push((seq, body));
        }
        finish_contents(&mut out, &mut scratch);
        if results.send(out).is_err() {
            return;
        }
    }
}

struct Written {
    summary: Summary,
    /// File entries not written yet (written after the last records).
    files_tail: Vec<u8>,
    digest: Digest,
    next_seq: u64,
    special: u64,
}

/// The writer: reorder by sequence number, assign ids, write.
fn write_results(
    rx: Receiver<Vec<(u64, Body)>>,
    flow: &Flow,
    shard: Option<Shard>,
    chunks_out: &mut BgWriter,
    files_out: &mut Output,
    progress: &Progress,
) -> Result<Written> {
    let mut w = Written {
        summary: Summary::default(),
        files_tail: Vec::new(),
        digest: Digest::default(),
        next_seq: 0,
        special: 0,
    };
    let mut pending: BTreeMap<u64, Body> = BTreeMap::new();
    let mut fbuf: Vec<u8> = Vec::with_capacity(64 << 10);
    for msg in rx.iter() {
        pending.extend(msg);
        let before = w.next_seq;
        while let Some(body) = pending.remove(&w.next_seq) {
            w.next_seq += 1;
            match body {
                Body::File(f) => {
                    debug_assert!(!f.content_pending);
                    let id = u32::try_from(if shard.is_some() {
                        f.pos
                    } else {
                        w.summary.files
                    })
                    .map_err(|_| Error::msg("more than 2^32 files: file ids are 32-bit"))?;
                    if f.reused {
                        w.summary.reused += 1;
                    } else {
                        w.summary.read += 1;
                    }
                    // The text goes out a block at a time, also within a
                    // file: a large file's records are not all held here.
                    let lines = ChunkLines::new(id);
                    let mut put = |(hash, len): Piece| -> Result<()> {
                        lines.write(hash, len, chunks_out.buf());
                        w.digest.add(&ChunkRecord {
                            hash,
                            file: id,
                            len,
                        });
                        chunks_out.maybe_flush()
                    };
                    if let Some(s) = f.spilled {
                        w.summary.chunks += s.count;
                        s.replay(&mut put)?;
                    }
                    for &p in &f.pieces {
                        put(p)?;
                    }
                    w.summary.files += 1;
                    w.summary.bytes += f.info.size;
                    w.summary.chunks += f.pieces.len() as u64;
                    let entry = FileEntry {
                        id,
                        size: f.info.size,
                        mtime_s: f.mtime_s,
                        mtime_ns: f.mtime_ns,
                        content: f.info.content,
                        ftype: f.info.ftype,
                        path: f.path.into_os_string().into_vec(),
                    };
                    entry.write(&mut fbuf);
                    if fbuf.len() >= 60 << 10 {
                        files_out.write_all(&fbuf)?;
                        fbuf.clear();
                    }
                }
                Body::Warning(path, msg) => {
                    w.summary.skipped += 1;
                    progress
                        .suspend(|| crate::cli::stderr_line(walk::warning_line(PROG, &path, &msg)));
                }
                Body::Special => w.special += 1,
            }
        }
        if w.next_seq != before {
            flow.advance(w.next_seq);
            progress.set_position(w.summary.bytes);
            progress.set_count(w.summary.files);
        }
    }
    w.files_tail = fbuf;
    if !pending.is_empty() {
        return Err(Error::msg(
            "internal error: results missing from the workers",
        ));
    }
    Ok(w)
}

/// The chunk stage's progress: files and bytes written so far, set by the
/// writer once per batch of results. The total is known only when every
/// root is a regular file and there is no list or shard (a stat per root,
/// as `check_roots` does anyway): the size of a directory would cost a
/// second walk of every entry before the first byte is read, so for
/// directories the display is a spinner with files, bytes and rate.
fn progress_for(cfg: &Config) -> Progress {
    let plain = cfg.walk.files_from.is_none() && cfg.shard.is_none() && !cfg.walk.roots.is_empty();
    let total = plain
        .then(|| {
            let roots: Vec<&Path> = cfg.walk.roots.iter().map(PathBuf::as_path).collect();
            crate::progress::inputs_size(&roots)
        })
        .flatten();
    Progress::bytes_and(PROG, total, "files", cfg.quiet)
}

/// Chunk one file outside the pipeline (tests, tools): its pieces and info.
pub fn chunk_path(path: &Path, chunker: &Chunker) -> Result<(Vec<Piece>, StreamInfo)> {
    let mut buf = read_buffer(chunker);
    let mut pieces = Vec::new();
    let mut f =
        crate::longpath::open_file(path).ctx(|| format!("cannot open {}", path.display()))?;
    let info = chunk_stream(&mut f, chunker, &mut buf, &mut pieces)
        .ctx(|| format!("reading {}", path.display()))?;
    Ok((pieces, info))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunker::Method;

    #[test]
    fn spilled_pieces_come_back_in_order_one_or_many_threads() {
        let data = crate::chunker::pseudo_text(3 << 20, 23);
        let c = Chunker::new(Method::Tttd, 100).unwrap();
        let mut buf = read_buffer(&c);
        let mut want = Vec::new();
        let wi = chunk_stream(&mut &data[..], &c, &mut buf, &mut want).unwrap();
        for hashers in [1, 2] {
            let mut spilled = None;
            let mut offload = |p: &mut Vec<Piece>| Spill::offload(&mut spilled, p, 1000);
            let mut rest = Vec::new();
            let gi = if hashers == 1 {
                chunk_stream_with(&mut &data[..], &c, &mut buf, &mut rest, &mut offload)
            } else {
                crate::parhash::chunk_stream_par(&mut &data[..], &c, 2, &mut rest, &mut offload)
            }
            .unwrap();
            assert_eq!(gi, wi);
            let spill = spilled.expect("spilled");
            assert!(rest.len() < 1000 + 20_000, "{}", rest.len());
            assert!(spill.count > 20_000);
            let mut got = Vec::new();
            spill
                .replay(|p| {
                    got.push(p);
                    Ok(())
                })
                .unwrap();
            got.extend(rest);
            assert_eq!(got, want, "{hashers} hashers");
        }
    }

    #[test]
    fn stream_matches_slice_chunking() {
        let data = crate::chunker::pseudo_text(3 << 20, 17);
        let c = Chunker::new(Method::Tttd, 1000).unwrap();
        let mut buf = read_buffer(&c);
        let mut pieces = Vec::new();
        // A reader that returns odd-sized pieces.
        struct Odd<'a>(&'a [u8], usize);
        impl Read for Odd<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                self.1 = (self.1 * 7 + 3) % 5000 + 1;
                let n = self.1.min(out.len()).min(self.0.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let info = chunk_stream(&mut Odd(&data, 1), &c, &mut buf, &mut pieces).unwrap();
        let expect: Vec<Piece> = c
            .chunks(&data)
            .map(|ch| {
                (
                    records::digest_to_u128(&Md5::digest(&data[ch.offset..ch.offset + ch.len])),
                    ch.len as u32,
                )
            })
            .collect();
        assert_eq!(pieces, expect);
        assert_eq!(info.size, data.len() as u64);
        assert_eq!(info.ftype, FileType::Text);
        let mut all = Md5::new();
        for (h, _) in &expect {
            all.update(h.to_be_bytes());
        }
        assert_eq!(info.content, records::digest_to_u128(&all.finalize()));
    }

    #[test]
    fn deferred_content_hashes_are_the_streamed_ones() {
        let c = Chunker::new(Method::Tttd, 100).unwrap();
        let mut buf = read_buffer(&c);
        let mut results = Vec::new();
        let mut want = Vec::new();
        // Empty, one chunk, a few, many; the last is larger than the
        // buffer, so it is hashed while read, not deferred.
        for (i, len) in [0usize, 10, 300, 5000, 20_000, 3 << 20]
            .into_iter()
            .enumerate()
        {
            let data = crate::chunker::pseudo_text(len, i as u64);
            let mut pieces = Vec::new();
            let info = chunk_stream(&mut &data[..], &c, &mut buf, &mut pieces).unwrap();
            want.push(info);
            let mut dpieces = Vec::new();
            let (dinfo, pending) = chunk_stream_defer(
                &mut &data[..],
                &c,
                &mut buf,
                &mut dpieces,
                &mut |_| Ok(()),
                true,
            )
            .unwrap();
            assert_eq!(pending, len <= buf.len(), "{len}");
            assert_eq!(dpieces, pieces);
            if pending {
                assert_eq!(content_of(&pieces), info.content);
            }
            results.push((
                i as u64,
                Body::File(FileResult {
                    path: PathBuf::from(format!("f{i}")),
                    info: dinfo,
                    mtime_s: 0,
                    mtime_ns: 0,
                    pieces: dpieces,
                    spilled: None,
                    pos: 0,
                    reused: false,
                    content_pending: pending,
                }),
            ));
            results.push((100 + i as u64, Body::Special));
        }
        finish_contents(&mut results, &mut Vec::new());
        let got: Vec<StreamInfo> = results
            .iter()
            .filter_map(|(_, b)| match b {
                Body::File(f) => {
                    assert!(!f.content_pending);
                    Some(f.info)
                }
                _ => None,
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn empty_stream() {
        let c = Chunker::new(Method::Tttd, 1000).unwrap();
        let mut buf = read_buffer(&c);
        let mut pieces = Vec::new();
        let info = chunk_stream(&mut io::empty(), &c, &mut buf, &mut pieces).unwrap();
        assert!(pieces.is_empty());
        assert_eq!(info.ftype, FileType::Empty);
        assert_eq!(
            records::hex128(info.content),
            "d41d8cd98f00b204e9800998ecf8427e"
        );
    }
}
