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
//! writer thread of their own ([`crate::io::bgwrite`]), so the writer formats
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

use crate::chunking::chunker::Chunker;
use crate::chunking::members;
use crate::chunking::reader::read_buffer;
use crate::chunking::reader::{chunk_file_deferred, content_message, FileResult, Members, Skip};
use crate::chunking::stream::{Piece, StreamInfo};
use crate::content::Mode;
use crate::error::{Error, Result};
use crate::formats::files::TableDigest;
use crate::formats::headers::FilesTrailer;
use crate::formats::{self, ChunkLines, ChunkRecord, Digest, FileEntry, Kind, Params};
use crate::io::bgwrite::BgWriter;
use crate::io::progress::Progress;
use crate::io::walk::{self, Event, WalkConfig, WalkStats};
use crate::io::Output;
use crate::stages::reuse::{Found, Previous, Shard};
use std::collections::BTreeMap;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Name used in messages.
pub const PROG: &str = "fsim-chunk";

/// Files handed to a worker at a time: fewer wake-ups per file (each
/// hand-over is a context switch on a small machine), still fine-grained
/// enough to balance the workers.
pub const BATCH: usize = 16;

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
    /// reused for unchanged files (see [`crate::stages::reuse`]).
    pub previous: Vec<(PathBuf, PathBuf)>,
    /// Which view of each file is chunked (`--content`), recorded in the
    /// headers as `content=`.
    pub content: Mode,
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
    /// Documents read in this run that kept their raw view (each warned
    /// with its note).
    pub notes: u64,
    /// Archives read in this run whose members were not all read (each
    /// warned with its note).
    pub archive_notes: u64,
    pub walk: WalkStats,
    pub seconds: f64,
}

impl Summary {
    /// `fsim-chunk: N files, B bytes, R chunks, S skipped, N read, U reused, T s (X MB/s)`,
    /// with `, D documents unreadable (raw bytes compared)` when there were
    /// any.
    pub fn line(&self) -> String {
        let mbs = if self.seconds > 0.0 {
            self.bytes as f64 / 1e6 / self.seconds
        } else {
            0.0
        };
        let notes = if self.notes > 0 {
            format!(", {} documents unreadable (raw bytes compared)", self.notes)
        } else {
            String::new()
        };
        let notes = if self.archive_notes > 0 {
            format!(
                "{notes}, {} archives with members left out",
                self.archive_notes
            )
        } else {
            notes
        };
        format!(
            "{PROG}: {} files, {} bytes, {} chunks, {} skipped, {} read, {} reused, {:.2} s ({:.1} MB/s){notes}",
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

/// Compute the content hashes left to do in a batch of results
/// ([`chunk_file_deferred`]), several files at a time: the content hash is
/// one serial MD5 per file (over its chunk digests, ~16% more bytes at
/// average chunk 100), so files go through the lanes of
/// [`crate::chunking::md5batch`] side by side like the chunks do. `scratch` is
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
    crate::chunking::md5batch::digest_many(msgs, &mut digests);
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

/// A file to read: (sequence number, walk position, path).
type Job = (u64, u64, PathBuf);

/// Stat a walked file and look it up in the previous run. A file that
/// cannot be examined is not reused (it is read, and warned about then).
fn reuse_lookup(prev: &mut Previous, pos: u64, path: &Path) -> Result<Option<Found>> {
    let Ok(meta) = crate::io::longpath::metadata(path) else {
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

/// The walker's side: numbers the walk events (the writer's order), sends
/// the files to read in batches to the workers, and reused files and
/// warnings straight to the writer, never more than `window` sequence
/// numbers ahead of it.
struct Feeder<'a> {
    cfg: &'a Config,
    flow: &'a Flow,
    window: u64,
    previous: &'a mut Option<Previous>,
    job_tx: SyncSender<Vec<Job>>,
    res_tx: SyncSender<Vec<(u64, Body)>>,
    /// Numbers the events this run handles (the writer's order).
    seq: u64,
    /// Numbers every walk event (shard assignment, shard ids).
    pos: u64,
    failed: Option<Error>,
    batch: Vec<Job>,
    reused: Vec<(u64, Body)>,
}

impl Feeder<'_> {
    /// Walk, then send what is left; the walk's statistics and the number
    /// of events sent.
    fn walk(mut self) -> Result<(WalkStats, u64)> {
        let cfg = self.cfg;
        let stats = walk::walk(&cfg.walk, |ev| self.event(ev));
        if !self.batch.is_empty() {
            let _ = self.job_tx.send(self.batch);
        }
        if !self.reused.is_empty() {
            let _ = self.res_tx.send(self.reused);
        }
        if let Some(e) = self.failed {
            self.flow.halt();
            return Err(e);
        }
        if self.pos > u32::MAX as u64 + 1 && cfg.shard.is_some() {
            return Err(Error::msg(
                "more than 2^32 walk positions: shard file ids are 32-bit",
            ));
        }
        Ok((stats?, self.seq))
    }

    /// One walk event; false stops the walk.
    fn event(&mut self, ev: Event) -> bool {
        let p_here = self.pos;
        self.pos += 1;
        if self
            .cfg
            .shard
            .is_some_and(|sh| p_here % sh.count != sh.index)
        {
            return true;
        }
        if !self.flow.ready(self.seq, self.window) && !self.wait() {
            return false;
        }
        let sent = match ev {
            Event::File(p) => self.file(p, p_here),
            Event::Warning(p, m) => {
                self.send_reused()
                    && self
                        .res_tx
                        .send(vec![(self.seq, Body::Warning(p, m))])
                        .is_ok()
            }
        };
        self.seq += 1;
        sent
    }

    /// Send what is batched (the writer may be waiting for a file of these
    /// batches) and wait until the writer is within the window; false when
    /// stopping.
    fn wait(&mut self) -> bool {
        if !self.batch.is_empty() && self.job_tx.send(std::mem::take(&mut self.batch)).is_err() {
            return false;
        }
        self.send_reused() && self.flow.admit(self.seq, self.window)
    }

    /// Send the reused files batched so far; false when the writer is gone.
    fn send_reused(&mut self) -> bool {
        self.reused.is_empty() || self.res_tx.send(std::mem::take(&mut self.reused)).is_ok()
    }

    /// A file at walk position `pos`: its records taken from the previous
    /// run when it is unchanged, else batched for the workers.
    fn file(&mut self, p: PathBuf, pos: u64) -> bool {
        let found = match self.previous.as_mut() {
            Some(prev) => match reuse_lookup(prev, pos, &p) {
                Ok(f) => f,
                Err(e) => {
                    self.failed = Some(e);
                    return false;
                }
            },
            None => None,
        };
        match found {
            Some(f) => {
                self.reused.push((self.seq, reused_body(p, f, pos)));
                self.reused.len() < BATCH || self.send_reused()
            }
            None => {
                self.batch.push((self.seq, pos, p));
                self.batch.len() < BATCH
                    || self
                        .job_tx
                        .send(std::mem::replace(
                            &mut self.batch,
                            Vec::with_capacity(BATCH),
                        ))
                        .is_ok()
            }
        }
    }
}

/// The result of a file whose records the previous run gives.
fn reused_body(path: PathBuf, f: Found, pos: u64) -> Body {
    Body::File(reused(path, f, pos))
}

/// A file (or a member of an archive, with the archive's `pos`) reused
/// from the previous run, its members with it.
fn reused(path: PathBuf, f: Found, pos: u64) -> FileResult {
    let members = (!f.members.is_empty()).then(|| {
        let files = f
            .members
            .into_iter()
            .map(|m| {
                let p = PathBuf::from(std::ffi::OsString::from_vec(m.entry.path.clone()));
                reused(p, m, pos)
            })
            .collect();
        Box::new(Members {
            files,
            ..Members::default()
        })
    });
    FileResult {
        path,
        info: StreamInfo {
            size: f.entry.size,
            content: f.entry.content,
            ftype: f.entry.ftype,
        },
        mtime_s: f.entry.mtime_s,
        mtime_ns: f.entry.mtime_ns,
        pieces: f.pieces,
        spilled: None,
        pos,
        reused: true,
        content_pending: false,
        view: f.entry.view,
        note: None,
        members,
    }
}

/// Refuse outputs that would mix or overwrite each other; true when the
/// chunk records go to standard output.
fn check_outputs(cfg: &Config) -> Result<bool> {
    let to_stdout = cfg.output.as_deref().is_none_or(|p| p.as_os_str() == "-");
    if to_stdout && cfg.files_out.as_os_str() == "-" {
        return Err(Error::msg(
            "--files-out - and chunk records on standard output would mix: give -o FILE",
        ));
    }
    if !to_stdout && cfg.output.as_deref() == Some(cfg.files_out.as_path()) {
        return Err(Error::msg("-o and --files-out name the same file"));
    }
    Ok(to_stdout)
}

/// The two outputs, their headers written.
fn open_outputs(cfg: &Config, params: &Params) -> Result<(Output, Output)> {
    let mut chunks_out = Output::create(cfg.output.as_deref())?;
    let mut files_out = Output::create(Some(&cfg.files_out))?;
    let mut head = Vec::new();
    formats::write_header(Kind::Chunks, params, &mut head);
    chunks_out.write_all(&head)?;
    head.clear();
    formats::write_header(Kind::Files, params, &mut head);
    files_out.write_all(&head)?;
    Ok((chunks_out, files_out))
}

/// The walker, the workers and the writer (this thread), until the walk
/// is written: what the writer wrote, and the walk's statistics and
/// number of events.
fn chunk_all(
    cfg: &Config,
    previous: &mut Option<Previous>,
    bg: &mut BgWriter,
    files_out: &mut Output,
    progress: &Progress,
) -> (Result<Written>, Result<(WalkStats, u64)>) {
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
    std::thread::scope(|s| {
        let flow = &flow;
        let feeder = Feeder {
            cfg,
            flow,
            window,
            previous,
            job_tx,
            res_tx: res_tx.clone(),
            seq: 0,
            pos: 0,
            failed: None,
            batch: Vec::with_capacity(BATCH),
            reused: Vec::new(),
        };
        let walker = s.spawn(move || feeder.walk());
        let job_rx = &job_rx;
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                let res_tx = res_tx.clone();
                s.spawn(move || worker(&chunker, cfg, jobs, job_rx, res_tx))
            })
            .collect();
        drop(res_tx);
        let written = write_results(res_rx, flow, cfg.shard, bg, files_out, progress);
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
    })
}

/// Run the chunk stage: walk, chunk, write both outputs atomically.
pub fn run(cfg: &Config) -> Result<Summary> {
    let start = Instant::now();
    walk::check_roots(&cfg.walk.roots)?;
    let to_stdout = check_outputs(cfg)?;
    let mut params = cfg.chunker.params();
    params.set("content", cfg.content.name());
    let mut previous = if cfg.previous.is_empty() {
        None
    } else {
        Some(Previous::open(&cfg.previous, &params)?)
    };
    if let Some(sh) = cfg.shard {
        params.set("shard", sh.text());
    }
    let (chunks_out, mut files_out) = open_outputs(cfg, &params)?;

    // The records are written by a thread of their own (crate::io::bgwrite):
    // the write system calls copy ~0.5 byte per byte read at avg 100 and
    // start the write-back (crate::io), and while the writer waits there,
    // the workers run out of work once the window is full.
    let mut bg = BgWriter::new(chunks_out);
    let progress = progress_for(cfg);
    let (written, walked) = chunk_all(cfg, &mut previous, &mut bg, &mut files_out, &progress);
    let mut w = written?;
    let (wstats, total) = walked?;
    // The last records before the last file entries, as when the writer
    // wrote both itself (the first output to fail is the one reported).
    let chunks_out = bg.finish()?;
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
    finish_outputs(&w, chunks_out, files_out, to_stdout)?;
    w.summary.seconds = start.elapsed().as_secs_f64();
    progress.finish();
    if !cfg.quiet {
        crate::cli::stderr_line(w.summary.line());
    }
    Ok(w.summary)
}

/// Trailers, then make the outputs appear. Records in a file: the file
/// table first, so that the records' presence means both are complete.
/// Records on stdout: finish them first, so that a closed pipe leaves no
/// file table behind.
fn finish_outputs(
    w: &Written,
    mut chunks_out: Output,
    mut files_out: Output,
    to_stdout: bool,
) -> Result<()> {
    let mut tail = Vec::new();
    formats::write_trailer(
        Kind::Chunks,
        &formats::digest_params(&w.digest, "records"),
        &mut tail,
    );
    chunks_out.write_all(&tail)?;
    tail.clear();
    let fp = FilesTrailer {
        files: Some(w.summary.files),
        records: Some(w.digest.count),
        digest: Some(w.digest.sum),
        skipped: Some(w.summary.skipped),
        table_digest: Some(w.table.0),
    };
    formats::write_trailer(Kind::Files, &fp.to_params(), &mut tail);
    files_out.write_all(&tail)?;
    if to_stdout {
        chunks_out.finish()?;
        files_out.finish()
    } else {
        files_out.finish()?;
        chunks_out.finish()
    }
}

/// A worker: chunk files until the job channel closes or the writer is gone.
/// With content views on, an archive's members are chunked after it, by
/// the same worker (one archive in memory at a time); not in a shard run,
/// whose file ids are walk positions (docs/documents.md).
fn worker(
    chunker: &Chunker,
    cfg: &Config,
    hashers: usize,
    jobs: &Mutex<Receiver<Vec<Job>>>,
    results: SyncSender<Vec<(u64, Body)>>,
) {
    let mut buf = read_buffer(chunker);
    let mut scratch = Vec::new();
    let mode = cfg.content;
    let expand = mode == Mode::Auto && cfg.shard.is_none();
    let limits = crate::content::Limits::default();
    loop {
        let job = jobs.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(batch) = job else { return };
        let mut out = Vec::with_capacity(batch.len());
        for (seq, pos, path) in batch {
            let read =
                chunk_file_deferred(path, chunker, &mut buf, Vec::new(), hashers, true, mode);
            let body = match read {
                Ok(mut r) => {
                    r.pos = pos;
                    if expand {
                        let m = members::expand(&r, chunker, &mut buf, &limits);
                        r.view.left_out = m.left_out;
                        r.members = (!m.files.is_empty() || m.note.is_some()).then(|| Box::new(m));
                    }
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
    /// Of the file table's own records.
    table: TableDigest,
    next_seq: u64,
    special: u64,
}

/// Count a file read or reused, and warn with its note (a document that
/// kept its raw view).
fn count_read(summary: &mut Summary, f: &FileResult, progress: &Progress) {
    if f.reused {
        summary.reused += 1;
    } else {
        summary.read += 1;
    }
    if let Some(note) = &f.note {
        summary.notes += 1;
        progress.suspend(|| crate::cli::stderr_line(walk::warning_line(PROG, &f.path, note)));
    }
}

/// Where the writer puts a file's records.
struct Out<'a> {
    shard: Option<Shard>,
    chunks_out: &'a mut BgWriter,
    files_out: &'a mut Output,
    /// File entries not yet written to `files_out`.
    fbuf: &'a mut Vec<u8>,
    progress: &'a Progress,
}

/// Write one file's chunk records and entry with the next id, then its
/// members' (an archive's), each with an id of its own.
fn write_file(w: &mut Written, f: FileResult, out: &mut Out) -> Result<()> {
    debug_assert!(!f.content_pending);
    let id = u32::try_from(if out.shard.is_some() {
        f.pos
    } else {
        w.summary.files
    })
    .map_err(|_| Error::msg("more than 2^32 files: file ids are 32-bit"))?;
    count_read(&mut w.summary, &f, out.progress);
    // The text goes out a block at a time, also within a
    // file: a large file's records are not all held here.
    let lines = ChunkLines::new(id);
    let chunks_out = &mut *out.chunks_out;
    let digest = &mut w.digest;
    let mut put = |(hash, len): Piece| -> Result<()> {
        lines.write(hash, len, chunks_out.buf());
        digest.add(&ChunkRecord {
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
        view: f.view,
        path: f.path.into_os_string().into_vec(),
    };
    w.table.write(&entry, out.fbuf);
    if out.fbuf.len() >= 60 << 10 {
        out.files_out.write_all(out.fbuf)?;
        out.fbuf.clear();
    }
    // A shard's ids are walk positions: no room for members (a merging
    // run reads archives again), also none reused from a previous run.
    let Some(members) = f.members.filter(|_| out.shard.is_none()) else {
        return Ok(());
    };
    if let Some(note) = &members.note {
        w.summary.archive_notes += 1;
        let path = Path::new(std::ffi::OsStr::from_bytes(&entry.path));
        out.progress
            .suspend(|| crate::cli::stderr_line(walk::warning_line(PROG, path, note)));
    }
    for m in members.files {
        write_file(w, m, out)?;
    }
    Ok(())
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
        table: TableDigest::default(),
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
                    let mut out = Out {
                        shard,
                        chunks_out: &mut *chunks_out,
                        files_out: &mut *files_out,
                        fbuf: &mut fbuf,
                        progress,
                    };
                    write_file(&mut w, f, &mut out)?;
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
            crate::io::progress::inputs_size(&roots)
        })
        .flatten();
    Progress::bytes_and(PROG, total, "files", cfg.quiet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunking::chunker::Cut;
    use crate::chunking::chunker::Method;
    use crate::chunking::reader::{
        chunk_stream, chunk_stream_defer, chunk_stream_with, content_of, Spill,
    };
    use crate::formats::FileType;
    use md5::{Digest as _, Md5};
    use std::io::{self, Read};

    #[test]
    fn spilled_pieces_come_back_in_order_one_or_many_threads() {
        let data = crate::chunking::chunker::pseudo_text(3 << 20, 23);
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
                crate::chunking::parhash::chunk_stream_par(
                    &mut &data[..],
                    &c,
                    2,
                    &mut rest,
                    &mut offload,
                )
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
        let data = crate::chunking::chunker::pseudo_text(3 << 20, 17);
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
                    formats::digest_to_u128(&Md5::digest(&data[ch.offset..ch.offset + ch.len])),
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
        assert_eq!(info.content, formats::digest_to_u128(&all.finalize()));
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
            let data = crate::chunking::chunker::pseudo_text(len, i as u64);
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
                    view: crate::formats::FileView::raw(dinfo.size),
                    note: None,
                    members: None,
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
            formats::hex128(info.content),
            "d41d8cd98f00b204e9800998ecf8427e"
        );
    }
}
