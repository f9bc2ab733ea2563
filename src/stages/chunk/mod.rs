//! The chunk stage (`fsim-chunk`, paper step 1): walk the repository, cut
//! every file into content-defined chunks, hash each chunk with MD5, and
//! write one chunk record per chunk plus a table of the files.
//!
//! # Threads and determinism
//!
//! The output is byte-identical whatever `--jobs`:
//!
//! * one walker thread turns the walk events into jobs, in batches, in walk
//!   order (warnings and files the previous run gives included) and hands
//!   them on through a bounded channel;
//! * `jobs` workers open, read, chunk and hash files, each with its own
//!   reused read buffer;
//! * the calling thread is the writer: the results come back to it in walk
//!   order ([`crate::io::ordered::ordered_map`], the queue fsim-partition
//!   and fsim-verify use too); it gives file ids 0, 1, 2... to the files
//!   that were read completely (a skipped file gets no id), formats the
//!   records and prints warnings, so even stderr is in walk order.
//!
//! At most 256 files per worker are in flight and as many wait in the
//! channel, which bounds the memory whatever the workers' speeds; after an
//! error the writer stops taking results and the walker stops at its next
//! send. The chunk records go to the output through a
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
use crate::chunking::reader::{
    chunk_file_deferred, content_message, FileResult, Members, ReusedFrom, Skip,
};
use crate::chunking::stream::StreamInfo;
use crate::content::Mode;
use crate::error::{Error, Result};
use crate::formats::headers::{ChunkParams, FilesHeader, FilesTrailer};
use crate::formats::{self, Digest, Kind, Params};
use crate::io::bgwrite::BgWriter;
use crate::io::consume::Gate;
use crate::io::progress::Progress;
use crate::io::walk::{self, Event, WalkConfig, WalkStats};
use crate::io::Output;
use crate::stages::reuse::{Found, Previous, PreviousChunks, Shard};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::Instant;

mod changed;
#[cfg(test)]
mod tests;
mod write;

use changed::{settle_changed, ChangedFiles, Earlier};
use write::{Writer, Written};

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
    /// The output file kept zstd-compressed ([`crate::io::Output::compress`]).
    pub compress: bool,
    /// Read only the walk positions of this shard; ids are walk positions.
    pub shard: Option<Shard>,
    /// (file table, chunk file) pairs of earlier runs whose records are
    /// reused for unchanged files (see [`crate::stages::reuse`]).
    pub previous: Vec<(PathBuf, PathBuf)>,
    /// With one previous run: where to write the chunks of the files
    /// changed since ([`crate::formats::changed::ChangedSet`]); the file is
    /// removed instead when they are too many to be worth it.
    pub changed_out: Option<PathBuf>,
    /// Free the one previous run's chunk file as it is read
    /// ([`crate::io::consume`]).
    pub consume_previous: bool,
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
    /// Frames of the previous run's records copied whole, not
    /// decompressed ([`crate::io::frames`]).
    pub frames_copied: u64,
    /// Documents read in this run that kept their raw view (each warned
    /// with its note).
    pub notes: u64,
    /// Archives read in this run whose members were not all read (each
    /// warned with its note).
    pub archive_notes: u64,
    /// The earlier run's chunk file was consumed: freed as it was read
    /// (`--consume-previous`).
    pub consumed: bool,
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
        let walk = &self.walk;
        let mut notes = notes;
        if self.frames_copied > 0 {
            notes.push_str(&format!(
                ", {} frames of earlier records copied whole",
                self.frames_copied
            ));
        }
        if self.consumed {
            notes.push_str(", the earlier records freed as they were read");
        }
        for (n, what) in [
            (walk.repeated, "reached twice and walked once"),
            (walk.work_folders, "fsim work folders left out"),
            (walk.excluded, "left out by --exclude or the size limits"),
        ] {
            if n > 0 {
                notes.push_str(&format!(", {n} {what}"));
            }
        }
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
fn finish_contents(results: &mut [Body], scratch: &mut Vec<u8>) {
    let mut ends = Vec::new();
    scratch.clear();
    for body in results.iter() {
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
    for body in results.iter_mut() {
        if let Body::File(f) = body {
            if f.content_pending {
                f.info.content = digests.next().expect("one digest per pending file");
                f.content_pending = false;
            }
        }
    }
}

/// One walk event on its way through the workers to the writer, in walk
/// order.
enum Job {
    /// A file to read, at its walk position.
    Read(u64, PathBuf),
    /// Ready already: a file the previous run gives, or a warning (boxed:
    /// a file's result is large, and most jobs are files to read).
    Ready(Box<Body>),
}

/// Stat a walked file and look it up in the previous run. A file that
/// cannot be examined is not reused (it is read, and warned about then).
fn reuse_lookup(prev: &mut Previous, pos: u64, path: &Path) -> Result<Option<Found>> {
    let Ok(meta) = crate::io::longpath::metadata(path) else {
        return Ok(None);
    };
    let found = prev.lookup(
        pos,
        path.as_os_str().as_bytes(),
        meta.len(),
        (meta.mtime(), meta.mtime_nsec() as u32),
    )?;
    // A link made or removed since changes no mtime: its names now.
    Ok(found.map(|mut f| {
        if !f.stale {
            f.entry.view.link = (meta.nlink() > 1).then(|| (meta.dev(), meta.ino()));
        }
        f
    }))
}

/// A walk event's result on its way to the writer. Files are nearly every
/// event, so boxing the large variant would cost an allocation per file to
/// save space on the rare warnings.
#[allow(clippy::large_enum_variant)]
enum Body {
    File(FileResult),
    /// Its walk position (a shard run's id), path and message.
    Warning(u64, PathBuf, String),
    /// Not a regular file after all (race with the walk).
    Special,
}

/// The walker's side: turns the walk events of this run (this shard's)
/// into jobs, in batches, looking unchanged files up in the previous run.
/// The channel's bound holds it back when the workers are behind.
struct Feeder<'a> {
    cfg: &'a Config,
    previous: &'a mut Option<Previous>,
    tx: SyncSender<Vec<Job>>,
    /// Events sent (the writer's count to check).
    sent: u64,
    /// Numbers every walk event (shard assignment, shard ids).
    pos: u64,
    failed: Option<Error>,
    batch: Vec<Job>,
    /// The files to read, asked of the disk as they are walked.
    ahead: crate::io::prefetch::ReadAhead,
    /// With a changed set: the earlier entries of the files read again,
    /// to the writer, which compares them with what it writes.
    stale: Option<Sender<Stale>>,
}

/// The earlier entry of a file read again, at its walk position.
struct Stale {
    pos: u64,
    found: Found,
}

impl Feeder<'_> {
    /// Walk, then send what is left; the walk's statistics and the number
    /// of events sent. Dropping the sender ends the workers' input.
    fn walk(mut self) -> Result<(WalkStats, u64)> {
        let cfg = self.cfg;
        let stats = walk::walk(&cfg.walk, |ev| self.event(ev));
        if !self.batch.is_empty() {
            let _ = self.tx.send(std::mem::take(&mut self.batch));
        }
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.pos > u32::MAX as u64 + 1 && cfg.shard.is_some() {
            return Err(Error::msg(
                "more than 2^32 walk positions: shard file ids are 32-bit",
            ));
        }
        Ok((stats?, self.sent))
    }

    /// One walk event; false stops the walk (an error, or the writer gone).
    fn event(&mut self, ev: Event) -> bool {
        let pos = self.pos;
        self.pos += 1;
        if self.cfg.shard.is_some_and(|sh| pos % sh.count != sh.index) {
            return true;
        }
        let job = match ev {
            Event::File(p) => match self
                .previous
                .as_mut()
                .map(|prev| reuse_lookup(prev, pos, &p))
            {
                Some(Err(e)) => {
                    self.failed = Some(e);
                    return false;
                }
                Some(Ok(Some(f))) if !f.stale => {
                    Job::Ready(Box::new(Body::File(reused(p, f, pos))))
                }
                found => {
                    if let (Some(Ok(Some(found))), Some(tx)) = (found, &self.stale) {
                        // Sent before the file's job: there when it is written.
                        let _ = tx.send(Stale { pos, found });
                    }
                    // The walk is at most the queue's window of files ahead
                    // of the workers: their reads start now.
                    self.ahead.file(&p);
                    Job::Read(pos, p)
                }
            },
            Event::Warning(p, m) => Job::Ready(Box::new(Body::Warning(pos, p, m))),
        };
        self.sent += 1;
        let slow = matches!(&job, Job::Read(_, p) if slow_to_read(p));
        self.batch.push(job);
        (self.batch.len() < BATCH && !slow)
            || self
                .tx
                .send(std::mem::replace(
                    &mut self.batch,
                    Vec::with_capacity(BATCH),
                ))
                .is_ok()
    }
}

/// Whether a walked file is likely to take far longer than its reading:
/// a PDF, whose text comes from a separate pdftotext process at 1-2 MB/s
/// (docs/documents.md). It ends its batch, so that the PDFs of one folder
/// go to different workers: in one batch of [`BATCH`] they ran one after
/// the other (bash's releases: 2.3 s of the stage's 2.6 s on 2 cores).
/// The name alone is looked at: a hint for the schedule, never a result.
fn slow_to_read(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf"))
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
        pieces: Vec::new(),
        spilled: None,
        pos,
        reused: Some(ReusedFrom {
            source: f.source as u32,
            id: f.entry.id,
        }),
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
fn open_outputs(cfg: &Config, params: &Params, gate: Gate) -> Result<(Output, Output)> {
    let mut chunks_out = Output::create_framed_records(cfg.output.as_deref(), cfg.compress)?;
    match cfg.previous.as_slice() {
        // Files only touched since: the same records, linked, not written
        // (and the earlier ones not freed while they may be).
        [(_, chunks)] => chunks_out.same_as(chunks, gate),
        _ => gate.release(),
    }
    let mut files_out = Output::create(Some(&cfg.files_out))?;
    let mut head = Vec::new();
    formats::write_header(Kind::Chunks, params, &mut head);
    chunks_out.write_all(&head)?;
    chunks_out.end_frame(None)?;
    head.clear();
    formats::write_header(Kind::Files, params, &mut head);
    files_out.write_all(&head)?;
    Ok((chunks_out, files_out))
}

/// The walker, the workers and the writer (this thread), until the walk
/// is written: the files read by the workers on
/// [`crate::io::ordered::ordered_map`], whose results come back in walk
/// order whatever the workers' speeds. What the writer wrote, and the
/// walk's statistics and number of events.
fn chunk_all(
    cfg: &Config,
    previous: &mut Option<Previous>,
    records: Option<&mut PreviousChunks>,
    bg: &mut BgWriter,
    files_out: &mut Output,
    progress: &Progress,
) -> (Result<Written>, Result<(WalkStats, u64)>) {
    let jobs = cfg.jobs.max(1);
    // 256 files per worker in flight, in batches; as many wait in the
    // channel, so the walk keeps ahead of the workers.
    let window = (256 * jobs).div_ceil(BATCH);
    let (tx, rx) = sync_channel::<Vec<Job>>(window);
    std::thread::scope(|s| {
        let mut feeder = Feeder {
            cfg,
            previous,
            tx,
            sent: 0,
            pos: 0,
            failed: None,
            batch: Vec::with_capacity(BATCH),
            ahead: crate::io::prefetch::ReadAhead::new(),
            stale: None,
        };
        let mut writer = Writer::new(cfg.shard, bg, files_out, progress, records);
        if cfg.changed_out.is_some() {
            let mut changed = ChangedFiles::default();
            if cfg.shard.is_none() {
                let (tx, rx) = std::sync::mpsc::channel();
                feeder.stale = Some(tx);
                changed.stale = Some(rx);
            }
            writer.w.changed = Some(changed);
        }
        let walker = s.spawn(move || feeder.walk());
        let mut workers: Vec<Worker> = (0..jobs).map(|_| Worker::new(cfg, jobs)).collect();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::io::ordered::ordered_map::<_, _, _, Error>(
                &mut workers,
                window,
                |worker, batch| worker.work(batch),
                || Ok(next_batch(&rx)),
                |bodies| writer.write(bodies),
            )
        }));
        // The walker stops at its next send once nobody receives.
        drop(rx);
        let walked = walker
            .join()
            .unwrap_or_else(|_| Err(Error::msg("internal error: the walker thread panicked")));
        let written = match run {
            Ok(r) => r.and_then(|()| writer.finish()),
            Err(_) => Err(Error::msg("internal error: a chunking thread panicked")),
        };
        (written, walked)
    })
}

/// The next batch of the walk; an empty one when the walk is slow (a
/// pausing `--files-from -`, a network file system), so that the writer,
/// which takes the batches, still writes the results and the progress of
/// those in flight at least every [`STALL`]; `None` at the walk's end.
fn next_batch(rx: &Receiver<Vec<Job>>) -> Option<Vec<Job>> {
    match rx.recv_timeout(STALL) {
        Ok(batch) => Some(batch),
        Err(RecvTimeoutError::Timeout) => Some(Vec::new()),
        Err(RecvTimeoutError::Disconnected) => None,
    }
}

/// How long the writer waits for the walk before writing what is done.
const STALL: std::time::Duration = std::time::Duration::from_millis(50);

/// The chunking parameters a run with `chunker` and `content` writes.
fn chunk_params(chunker: &Chunker, content: Mode) -> ChunkParams {
    ChunkParams {
        content: Some(content.name().into()),
        ..chunker.chunk_params()
    }
}

/// `fsim-chunk --print-params`: the chunking parameters, one line of
/// tab-separated `key=value` on standard output.
pub fn print_params(chunker: &Chunker, content: Mode) -> Result<()> {
    use std::io::Write;
    let line: Vec<String> = chunk_params(chunker, content)
        .to_params()
        .0
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", line.join("\t"))
        .and_then(|_| out.flush())
        .map_err(|e| Error::msg(format!("standard output: {e}")))
}

/// Run the chunk stage: walk, chunk, write both outputs atomically.
pub fn run(cfg: &Config) -> Result<Summary> {
    let start = Instant::now();
    walk::check_roots(&cfg.walk.roots)?;
    let to_stdout = check_outputs(cfg)?;
    let header = FilesHeader {
        chunk: chunk_params(&cfg.chunker, cfg.content),
        shard: cfg.shard.map(|sh| sh.text()),
        ..FilesHeader::default()
    };
    // Shut until this run's records stop being the earlier ones' bytes.
    let gate = Gate::default();
    let (mut previous, mut records) = if cfg.previous.is_empty() {
        (None, None)
    } else {
        let consume = cfg.consume_previous.then(|| gate.clone());
        let (p, mut r) = Previous::open(&cfg.previous, &header.chunk.to_params(), consume)?;
        if cfg.changed_out.is_some() {
            r.collect_skipped();
        }
        (Some(p), Some(r))
    };
    if cfg.content == Mode::Auto {
        let tables: Vec<PathBuf> = cfg.previous.iter().map(|(t, _)| t.clone()).collect();
        crate::content::store::create_beside(&cfg.files_out, &tables);
    }
    let (chunks_out, mut files_out) = open_outputs(cfg, &header.to_params(), gate.clone())?;

    // The records are written by a thread of their own (crate::io::bgwrite):
    // the write system calls copy ~0.5 byte per byte read at avg 100 and
    // start the write-back (crate::io), and while the writer waits there,
    // the workers run out of work once the window is full.
    let mut bg = BgWriter::new(chunks_out);
    let progress = progress_for(cfg);
    let (written, walked) = chunk_all(
        cfg,
        &mut previous,
        records.as_mut(),
        &mut bg,
        &mut files_out,
        &progress,
    );
    let mut w = written?;
    let (wstats, total) = walked?;
    // The last records before the last file entries, as when the writer
    // wrote both itself (the first output to fail is the one reported).
    let chunks_out = bg.finish()?;
    files_out.write_all(&std::mem::take(&mut w.files_tail))?;
    let files_before = match previous {
        Some(prev) => Some(prev.finish()?),
        None => None,
    };
    let (skipped, before) = match records {
        Some(records) => records.finish()?,
        None => (None, Digest::default()),
    };
    if w.events != total {
        return Err(Error::msg(format!(
            "internal error: {} of {total} walk events were written",
            w.events
        )));
    }
    w.summary.walk = wstats;
    w.summary.walk.special += w.special;
    if let Some(path) = &cfg.changed_out {
        let earlier = Earlier {
            files: files_before,
            records: before,
            skipped,
        };
        settle_changed(path, header.chunk.to_params(), &mut w, earlier)?;
    }
    finish_outputs(&w, cfg.walk.rules(), chunks_out, files_out, to_stdout)?;
    w.summary.seconds = start.elapsed().as_secs_f64();
    w.summary.consumed = gate.consumed();
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
    left_out_by: Option<String>,
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
        repeated: Some(w.summary.walk.repeated),
        work_folders: Some(w.summary.walk.work_folders),
        excluded: Some(w.summary.walk.excluded),
        left_out_by,
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

/// A worker: its read buffer and scratch space, reused from file to file.
/// With content views on, an archive's members are chunked after it, by
/// the same worker (one archive in memory at a time); not in a shard run,
/// whose file ids are walk positions (docs/documents.md).
struct Worker<'a> {
    cfg: &'a Config,
    /// Threads the content hashes of a large file may use.
    hashers: usize,
    buf: Vec<u8>,
    scratch: Vec<u8>,
    expand: bool,
    /// A shard run with content views: archives are marked as listing no
    /// members ([`crate::formats::LeftOut::Unlisted`]).
    mark_unlisted: bool,
    limits: crate::content::Limits,
}

impl<'a> Worker<'a> {
    fn new(cfg: &'a Config, hashers: usize) -> Worker<'a> {
        Worker {
            cfg,
            hashers,
            buf: read_buffer(&cfg.chunker),
            scratch: Vec::new(),
            expand: cfg.content == Mode::Auto && cfg.shard.is_none(),
            mark_unlisted: cfg.content == Mode::Auto && cfg.shard.is_some(),
            limits: crate::content::Limits::default(),
        }
    }

    /// Read and chunk the files of a batch; the other events pass through.
    fn work(&mut self, batch: Vec<Job>) -> Vec<Body> {
        let chunker = &self.cfg.chunker;
        let mut out = Vec::with_capacity(batch.len());
        for job in batch {
            let (pos, path) = match job {
                Job::Read(pos, path) => (pos, path),
                Job::Ready(body) => {
                    out.push(*body);
                    continue;
                }
            };
            let read = chunk_file_deferred(
                path,
                chunker,
                &mut self.buf,
                Vec::new(),
                self.hashers,
                true,
                self.cfg.content,
            );
            out.push(match read {
                Ok(mut r) => {
                    r.pos = pos;
                    if self.expand {
                        let m = members::expand(&r, chunker, &mut self.buf, &self.limits);
                        r.view.left_out = m.left_out;
                        r.members = (!m.files.is_empty() || m.note.is_some()).then(|| Box::new(m));
                    } else if self.mark_unlisted {
                        r.view.left_out = members::unlisted(&r, &self.limits);
                    }
                    Body::File(r)
                }
                Err((_, Skip::Special)) => Body::Special,
                Err((path, Skip::Io(e))) => Body::Warning(pos, path, e.to_string()),
            });
        }
        finish_contents(&mut out, &mut self.scratch);
        out
    }
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
