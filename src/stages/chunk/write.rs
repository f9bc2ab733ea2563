//! The writer of `fsim-chunk`: file ids in walk order, each file's
//! records and entry written, frames of the earlier run's records copied
//! where every file they hold came unchanged at the same id
//! ([`crate::io::frames`]).

use super::changed::ChangedFiles;
use super::{Body, Summary, PROG};
use crate::chunking::reader::FileResult;
use crate::chunking::stream::Piece;
use crate::error::{Error, Result};
use crate::formats::files::TableDigest;
use crate::formats::{ChunkLines, ChunkRecord, Digest, FileEntry};
use crate::io::bgwrite::BgWriter;
use crate::io::frames::{cut_before, FrameMeta};
use crate::io::progress::Progress;
use crate::io::walk;
use crate::io::Output;
use crate::stages::reuse::{Hold, PreviousChunks, Shard};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// What the writer wrote so far: the figures, the digests of the records
/// and of the file table, the changed set's making, the frame begun.
#[derive(Default)]
pub(super) struct Written {
    pub(super) summary: Summary,
    /// File entries not written yet (written after the last records).
    pub(super) files_tail: Vec<u8>,
    pub(super) digest: Digest,
    /// Of the file table's own records.
    pub(super) table: TableDigest,
    /// ... and of them without their times.
    pub(super) untimed: TableDigest,
    /// Walk events written (files, warnings, specials).
    pub(super) events: u64,
    pub(super) special: u64,
    /// With `--changed-out`: what the changed set is made of.
    pub(super) changed: Option<ChangedFiles>,
    pub(super) frame: FrameAcc,
}

/// The frame of records being written ([`crate::io::frames`]): where it
/// began, and what it holds so far.
#[derive(Default)]
pub(super) struct FrameAcc {
    pub(super) first: u32,
    /// The bytes written and the records' digest when it began.
    pub(super) start: u64,
    pub(super) at: Digest,
    /// Its files' sizes, added up.
    pub(super) bytes: u64,
    /// The last file id it holds; `None`: no frame begun.
    pub(super) last: Option<u32>,
}

impl Written {
    /// File `id` comes next: end the frame before it where the rule says
    /// ([`cut_before`]), begin one at it when none is.
    pub(super) fn frame_at(&mut self, id: u32, out: &mut BgWriter) -> Result<()> {
        if !out.is_framed() {
            return Ok(());
        }
        if self.frame.last.is_some() && cut_before(id, out.written() - self.frame.start) {
            self.end_frame(out)?;
        }
        if self.frame.last.is_none() {
            self.frame = FrameAcc {
                first: id,
                start: out.written(),
                at: self.digest,
                bytes: 0,
                last: None,
            };
        }
        self.frame.last = Some(id);
        Ok(())
    }

    /// Whether the frame begins at file `id` with nothing written: the
    /// place where an earlier frame of the same files may be copied.
    pub(super) fn frame_empty_at(&self, id: u32, out: &BgWriter) -> bool {
        self.frame.first == id && self.frame.start == out.written()
    }

    /// End the frame begun, if one is, announced with what it holds.
    pub(super) fn end_frame(&mut self, out: &mut BgWriter) -> Result<()> {
        let Some(last) = self.frame.last.take() else {
            return Ok(());
        };
        let f = &self.frame;
        out.end_frame(FrameMeta {
            first: f.first,
            last,
            records: self.digest.count - f.at.count,
            sum: self.digest.sum.wrapping_sub(f.at.sum),
            bytes: f.bytes,
            ..FrameMeta::default()
        })
    }

    /// Append `entry`'s line to `fbuf`, adding it to both table digests.
    pub(super) fn write_entry(&mut self, entry: &FileEntry, fbuf: &mut Vec<u8>) {
        let start = fbuf.len();
        self.table.write(entry, fbuf);
        self.untimed.add_untimed(&fbuf[start..fbuf.len() - 1]);
    }
}

/// Count a file read or reused, and warn with its note (a document that
/// kept its raw view).
pub(super) fn count_read(summary: &mut Summary, f: &FileResult, progress: &Progress) {
    if f.reused.is_some() {
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
pub(super) struct Out<'a> {
    pub(super) shard: Option<Shard>,
    pub(super) chunks_out: &'a mut BgWriter,
    pub(super) files_out: &'a mut Output,
    /// File entries not yet written to `files_out`.
    pub(super) fbuf: &'a mut Vec<u8>,
    pub(super) progress: &'a Progress,
    /// The previous run's chunk files, where reused files' records are.
    pub(super) records: Option<&'a mut PreviousChunks>,
}

/// Write one file's chunk records and entry with the next id, then its
/// members' (an archive's), each with an id of its own.
pub(super) fn write_file(w: &mut Written, f: FileResult, out: &mut Out) -> Result<()> {
    debug_assert!(!f.content_pending);
    let id = u32::try_from(if out.shard.is_some() {
        f.pos
    } else {
        w.summary.files
    })
    .map_err(|_| Error::msg("more than 2^32 files: file ids are 32-bit"))?;
    count_read(&mut w.summary, &f, out.progress);
    let hold = begin_file(w, &f, id, out)?;
    // The text goes out a block at a time, also within a
    // file: a large file's records are not all held here.
    let lines = ChunkLines::new(id);
    let chunks_out = &mut *out.chunks_out;
    let digest = &mut w.digest;
    let (mut changed, touched) = match &mut w.changed {
        Some(c) => c.file(&f, id, out.shard.is_some()),
        None => (None, None),
    };
    let mut put = |p: Piece| -> Result<()> {
        if let Some(c) = changed.as_deref_mut() {
            c.push(p.0);
        }
        put_record(&lines, id, p, chunks_out, digest)
    };
    if let Some(s) = f.spilled {
        w.summary.chunks += s.count;
        s.replay(&mut put)?;
    }
    for &p in &f.pieces {
        put(p)?;
    }
    let mut chunks = f.pieces.len() as u64;
    if let (Some(old), Some(records)) = (touched, out.records.as_deref_mut()) {
        let e = &old.entry;
        records.take(old.source, e.id, e.size, &mut |_| Ok(()))?;
    }
    let mut copied = None;
    if let Some(from) = f.reused {
        let Some(records) = out.records.as_deref_mut() else {
            return Err(Error::msg(
                "internal error: a reused file without previous records",
            ));
        };
        let mut count = |p: Piece| {
            chunks += 1;
            put(p)
        };
        match hold {
            Hold::No => records.take(from.source as usize, from.id, f.info.size, &mut count)?,
            Hold::Held => {}
            Hold::Complete(meta, frame) => copied = Some((meta, frame)),
        }
        if let Some(hash) = f.view.hash {
            crate::content::store::carry(from.source as usize, f.view.kind, hash);
        }
    }
    if let Some((meta, frame)) = copied {
        chunks += copy_frame(w, meta, frame, out)?;
    }
    w.summary.files += 1;
    w.summary.bytes += f.info.size;
    w.summary.chunks += chunks;
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
    w.write_entry(&entry, out.fbuf);
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

/// The frame steps before file `f`'s records, written with `id`
/// ([`crate::io::frames`]): a frame held is given back unless `f` is its
/// next file, unchanged; the frame before `f` ends where the rule says;
/// and `f`, unchanged at its earlier id, is offered to the earlier
/// frame that begins with it.
pub(super) fn begin_file(w: &mut Written, f: &FileResult, id: u32, out: &mut Out) -> Result<Hold> {
    let copy = out.may_copy(f, id);
    if out.held_next().is_some_and(|next| !copy || next != id) {
        replay(w, out)?;
    }
    w.frame_at(id, out.chunks_out)?;
    let hold = match out.records.as_deref_mut() {
        Some(records) if copy => {
            let empty = w.frame_empty_at(id, out.chunks_out);
            records.hold(id, f.info.size, empty)?
        }
        _ => Hold::No,
    };
    if matches!(hold, Hold::No) {
        w.frame.bytes += f.info.size;
    }
    Ok(hold)
}

/// Write an earlier frame whose files all came unchanged as it is, in
/// place of the frame begun at its first file (which holds nothing); its
/// records counted.
pub(super) fn copy_frame(
    w: &mut Written,
    meta: FrameMeta,
    frame: Vec<u8>,
    out: &mut Out,
) -> Result<u64> {
    w.digest.merge(&Digest {
        count: meta.records,
        sum: meta.sum,
    });
    w.summary.frames_copied += 1;
    w.frame.last = None;
    out.chunks_out.copy_frame(frame)?;
    Ok(meta.records)
}

/// Write a record of file `id` (whose `lines` they are) and add it to
/// the records' `digest`.
#[inline]
pub(super) fn put_record(
    lines: &ChunkLines,
    id: u32,
    (hash, len): Piece,
    out: &mut BgWriter,
    digest: &mut Digest,
) -> Result<()> {
    lines.write(hash, len, out.buf());
    digest.add(&ChunkRecord {
        hash,
        file: id,
        len,
    });
    out.maybe_flush()
}

/// Give the frame held back ([`Hold`]) and write the records of the files
/// it held, as any reused file's.
pub(super) fn replay(w: &mut Written, out: &mut Out) -> Result<()> {
    let Some(records) = out.records.as_deref_mut() else {
        return Ok(());
    };
    for (id, size) in records.release()? {
        w.frame_at(id, out.chunks_out)?;
        w.frame.bytes += size;
        let lines = ChunkLines::new(id);
        let (chunks_out, digest) = (&mut *out.chunks_out, &mut w.digest);
        let mut n = 0u64;
        records.take(0, id, size, &mut |p: Piece| {
            n += 1;
            put_record(&lines, id, p, chunks_out, digest)
        })?;
        w.summary.chunks += n;
    }
    Ok(())
}

impl Out<'_> {
    /// Whether file `f`, written with `id`, is one whose records a frame
    /// of the earlier run may hold as they are: found unchanged in the one
    /// earlier run at the same id, written into frames.
    pub(super) fn may_copy(&self, f: &FileResult, id: u32) -> bool {
        self.shard.is_none()
            && self.chunks_out.is_framed()
            && f.spilled.is_none()
            && f.pieces.is_empty()
            && f.reused
                .as_ref()
                .is_some_and(|r| r.source == 0 && r.id == id)
    }

    /// The next file of the frame held, if one is.
    pub(super) fn held_next(&self) -> Option<u32> {
        self.records.as_deref()?.held_next()
    }
}

/// The entry of a file or folder the walk found but could not read: no
/// bytes, and why ([`crate::formats::Unread`]), so that every report lists
/// it, with the next id (a shard run's: its walk position).
pub(super) fn write_unread(
    w: &mut Written,
    id: u64,
    path: PathBuf,
    msg: &str,
    fbuf: &mut Vec<u8>,
) -> Result<()> {
    let id =
        u32::try_from(id).map_err(|_| Error::msg("more than 2^32 files: file ids are 32-bit"))?;
    let mut view = crate::formats::FileView::raw(0);
    view.unread = Some(crate::formats::Unread::of_message(msg));
    let entry = FileEntry {
        id,
        size: 0,
        mtime_s: 0,
        mtime_ns: 0,
        content: EMPTY_CONTENT,
        ftype: crate::formats::FileType::Empty,
        view,
        path: path.into_os_string().into_vec(),
    };
    w.write_entry(&entry, fbuf);
    w.summary.files += 1;
    if let Some(c) = &mut w.changed {
        c.ids.push(id);
    }
    Ok(())
}

/// The content hash of a file with no bytes: MD5 of nothing, as an empty
/// raw file gets.
const EMPTY_CONTENT: u128 = 0xd41d8cd98f00b204e9800998ecf8427e;

/// The writer: gives ids to the files in walk order, writes them.
pub(super) struct Writer<'a> {
    pub(super) w: Written,
    pub(super) shard: Option<Shard>,
    pub(super) chunks_out: &'a mut BgWriter,
    pub(super) files_out: &'a mut Output,
    /// File entries not yet written to `files_out`.
    pub(super) fbuf: Vec<u8>,
    pub(super) progress: &'a Progress,
    pub(super) records: Option<&'a mut PreviousChunks>,
}

impl<'a> Writer<'a> {
    pub(super) fn new(
        shard: Option<Shard>,
        chunks_out: &'a mut BgWriter,
        files_out: &'a mut Output,
        progress: &'a Progress,
        records: Option<&'a mut PreviousChunks>,
    ) -> Writer<'a> {
        Writer {
            w: Written::default(),
            shard,
            chunks_out,
            files_out,
            fbuf: Vec::with_capacity(64 << 10),
            progress,
            records,
        }
    }

    /// Run `f` with what was written and where it goes.
    pub(super) fn with_out<T>(
        &mut self,
        f: impl FnOnce(&mut Written, &mut Out) -> Result<T>,
    ) -> Result<T> {
        let mut out = Out {
            shard: self.shard,
            chunks_out: &mut *self.chunks_out,
            files_out: &mut *self.files_out,
            fbuf: &mut self.fbuf,
            progress: self.progress,
            records: self.records.as_deref_mut(),
        };
        f(&mut self.w, &mut out)
    }

    /// The results of one batch, in walk order.
    pub(super) fn write(&mut self, bodies: Vec<Body>) -> Result<()> {
        for body in bodies {
            self.w.events += 1;
            match body {
                Body::File(f) => self.with_out(|w, out| write_file(w, f, out))?,
                Body::Warning(pos, path, msg) => {
                    self.w.summary.skipped += 1;
                    self.progress
                        .suspend(|| crate::cli::stderr_line(walk::warning_line(PROG, &path, &msg)));
                    let id = if self.shard.is_some() {
                        pos
                    } else {
                        self.w.summary.files
                    };
                    self.with_out(|w, out| {
                        replay(w, out)?;
                        if let Ok(id) = u32::try_from(id) {
                            w.frame_at(id, out.chunks_out)?;
                        }
                        write_unread(w, id, path, &msg, out.fbuf)
                    })?;
                }
                Body::Special => self.w.special += 1,
            }
        }
        self.progress.set_position(self.w.summary.bytes);
        self.progress.set_count(self.w.summary.files);
        Ok(())
    }

    /// What was written; the file entries not written yet in `files_tail`.
    /// A frame held is written as any records, the last frame ended.
    pub(super) fn finish(mut self) -> Result<Written> {
        self.with_out(|w, out| {
            replay(w, out)?;
            w.end_frame(out.chunks_out)
        })?;
        self.w.files_tail = std::mem::take(&mut self.fbuf);
        Ok(self.w)
    }
}
