//! Reading one stream or file into chunks: [`chunk_stream`] (a stream cut
//! block by block with a reused buffer, or handed whole to a feature
//! method), [`chunk_file`]
//! (open, chunk, and keep the mtime; large files hashed on several threads
//! by [`crate::chunking::parhash`], their pieces spilled to disk by
//! [`Spill`]) and [`chunk_path`] (one file outside the pipeline).
//!
//! The chunk stage (`crate::stages::chunk`) runs these on its workers.

use crate::chunking::chunker::{Chunker, Cut};
use crate::chunking::stream::{fill, Piece, StreamInfo, BLOCK, HEAD};
use crate::content::{self, Body, Limits, Mode};
use crate::error::{Context, Result};
use crate::formats::templates::TemplateSet;
use crate::formats::{self, FileType, FileView};
use md5::{Digest as _, Md5};
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Files at least this large are hashed on several threads when `--jobs`
/// is more than 1 ([`crate::chunking::parhash`]): one 1 GB file then uses every core.
pub const PAR_MIN: u64 = 8 << 20;

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
        return crate::chunking::features::chunk_stream(r, spec, buf, pieces)
            .map(|info| (info, false));
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
        // a time: crate::chunking::md5batch).
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
    crate::chunking::md5batch::digest_many(msgs, digests);
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
pub(crate) fn content_message(pieces: &[Piece], out: &mut Vec<u8>) {
    out.reserve(16 * pieces.len());
    for &(d, _) in pieces {
        out.extend_from_slice(&d.to_be_bytes());
    }
}

/// The content hash of a file whose pieces are all in `pieces`.
pub fn content_of(pieces: &[Piece]) -> u128 {
    let mut m = Vec::new();
    content_message(pieces, &mut m);
    crate::chunking::md5batch::digest_one(&m)
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

/// Where the records of a file reused from a previous run are: which
/// previous source, and the file's id there (`fsim-chunk --previous`,
/// [`crate::stages::reuse`]). The writer copies them from there as it
/// writes the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReusedFrom {
    pub source: u32,
    pub id: u32,
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
    /// Taken from a previous run, not read: where its records are.
    pub reused: Option<ReusedFrom>,
    /// `info.content` is still to compute from `pieces` (only from
    /// [`chunk_file_deferred`]).
    pub content_pending: bool,
    /// The view chunked (`info.size` is its length) and the file's own size.
    pub view: FileView,
    /// Why a document kept its raw view (fsim-chunk warns with it).
    pub note: Option<String>,
    /// The members of an archive, each an entry of its own written after
    /// it, and why some were left out ([`crate::chunking::members`]).
    pub members: Option<Box<Members>>,
}

/// The members of an archive ([`crate::chunking::members::expand`]),
/// chunked, in the archive's order, and the
/// archive's note.
#[derive(Debug, Default)]
pub struct Members {
    pub files: Vec<FileResult>,
    /// Why members were left out or not read ("an archive nested more
    /// than 3 deep...", "member x declares ... bytes"), or `None`.
    pub note: Option<String>,
    /// The reason of `note`, which the archive's entry records
    /// ([`FileView::left_out`]).
    pub left_out: Option<crate::formats::LeftOut>,
}

/// Open a regular file for its content view in `mode`, chunk the view, and
/// note the file's mtime at open time. `hashers` > 1: a raw file of at
/// least [`PAR_MIN`] bytes is hashed on that many threads (same result).
pub fn chunk_file(
    path: PathBuf,
    chunker: &Chunker,
    buf: &mut [u8],
    pieces: Vec<Piece>,
    hashers: usize,
    mode: Mode,
) -> std::result::Result<FileResult, (PathBuf, Skip)> {
    chunk_file_deferred(path, chunker, buf, pieces, hashers, false, mode)
}

/// [`chunk_file`]; with `defer`, the content hash of a raw file read in one
/// buffer is left to the caller (`content_pending`).
pub(crate) fn chunk_file_deferred(
    path: PathBuf,
    chunker: &Chunker,
    buf: &mut [u8],
    pieces: Vec<Piece>,
    hashers: usize,
    defer: bool,
    mode: Mode,
) -> std::result::Result<FileResult, (PathBuf, Skip)> {
    let how = How {
        chunker,
        hashers,
        defer,
        mode,
        limits: &Limits::default(),
        keep: 0,
    };
    match chunk_open(&path, &how, buf, pieces) {
        Ok(c) => Ok(FileResult {
            path,
            info: c.info,
            mtime_s: c.meta.mtime(),
            mtime_ns: c.meta.mtime_nsec() as u32,
            pieces: c.pieces,
            spilled: c.spilled,
            pos: 0,
            reused: None,
            content_pending: c.pending,
            view: c.view,
            note: c.note,
            members: None,
        }),
        Err(e) => Err((path, e)),
    }
}

/// How a file is read and chunked.
struct How<'a> {
    chunker: &'a Chunker,
    hashers: usize,
    defer: bool,
    mode: Mode,
    /// Of the extraction: fsim-chunk's are the defaults (one view per
    /// worker, at most 64 MiB).
    limits: &'a Limits,
    /// Bytes of a content view to hand back ([`chunk_path_as`]).
    keep: usize,
}

/// A file chunked by [`chunk_open`].
struct Chunked {
    info: StreamInfo,
    meta: Metadata,
    pieces: Vec<Piece>,
    spilled: Option<Spill>,
    pending: bool,
    view: FileView,
    note: Option<String>,
    /// The first `How::keep` bytes of a content view.
    head: Vec<u8>,
}

fn chunk_open(
    path: &Path,
    how: &How,
    buf: &mut [u8],
    mut pieces: Vec<Piece>,
) -> std::result::Result<Chunked, Skip> {
    pieces.clear();
    // O_NONBLOCK (a FIFO put in the file's place since the walk cannot
    // block), and paths over PATH_MAX opened piecewise. One view at a time
    // per worker.
    let opened = content::open_with(path, how.mode, how.limits).map_err(Skip::Io)?;
    let meta = opened.meta;
    if !meta.is_file() {
        return Err(Skip::Special);
    }
    let mut spilled = None;
    let mut offload = |p: &mut Vec<Piece>| Spill::offload(&mut spilled, p, SPILL_AT);
    let mut head = Vec::new();
    let mut note = opened.note;
    let (info, pending, view) = match opened.body {
        Body::Raw(mut f) => {
            let (info, pending) = chunk_raw(&mut f, &meta, how, buf, &mut pieces, &mut offload)?;
            let mut view = FileView::raw(info.size);
            view.unreadable = opened.unreadable;
            (info, pending, view)
        }
        Body::View(bytes) if bytes.is_empty() && meta.len() > 0 => {
            let source = opened.source.ok_or_else(|| {
                Skip::Io(io::Error::other("internal error: a view without its file"))
            })?;
            let (info, pending, view, why) =
                chunk_textless(source, opened.kind, how, buf, &mut pieces, &mut offload)?;
            note = Some(why);
            (info, pending, view)
        }
        Body::View(bytes) => {
            let (mut info, _) = chunk_stream_defer(
                &mut &bytes[..],
                how.chunker,
                buf,
                &mut pieces,
                &mut offload,
                false,
            )
            .map_err(Skip::Io)?;
            head = bytes[..how.keep.min(bytes.len())].to_vec();
            let stored = content::store::put(opened.kind, info.content, &bytes, meta.len());
            let view_len = bytes.len() as u64;
            drop(bytes);
            let mut source = opened.source.ok_or_else(|| {
                Skip::Io(io::Error::other("internal error: a view without its file"))
            })?;
            // The view's hash is what a raw file of these bytes would
            // get as its content hash ("same content, different file").
            let view_hash = info.content;
            let raw_size;
            (info.content, raw_size) = content::raw_identity(&mut source, buf).map_err(Skip::Io)?;
            if stored {
                // Its copies later in the walk read this view back.
                content::store::remember(info.content, view_hash, view_len);
            }
            let view = FileView {
                kind: opened.kind,
                raw_size,
                unreadable: None,
                hash: Some(view_hash),
                archive: None,
                left_out: None,
                link: None,
                unread: None,
            };
            (info, false, view)
        }
    };
    let mut view = view;
    view.link = (meta.nlink() > 1).then(|| (meta.dev(), meta.ino()));
    Ok(Chunked {
        info,
        meta,
        pieces,
        spilled,
        pending,
        view,
        note,
        head,
    })
}

/// A document with no text (a scanned PDF, an empty docx), chunked by its
/// raw bytes with a note: an empty view would make it an empty file, in no
/// identical set and no cluster.
fn chunk_textless(
    mut source: File,
    kind: content::Kind,
    how: &How,
    buf: &mut [u8],
    pieces: &mut Vec<Piece>,
    offload: &mut dyn FnMut(&mut Vec<Piece>) -> io::Result<()>,
) -> std::result::Result<(StreamInfo, bool, FileView, String), Skip> {
    source.seek(io::SeekFrom::Start(0)).map_err(Skip::Io)?;
    let (info, pending) =
        chunk_stream_defer(&mut source, how.chunker, buf, pieces, offload, how.defer)
            .map_err(Skip::Io)?;
    let mut view = FileView::raw(info.size);
    view.unreadable = Some(kind);
    let why = format!(
        "no text read from it as {} (a scan, or a document without text): raw bytes compared",
        kind.name()
    );
    Ok((info, pending, view, why))
}

/// Chunk a raw file as it is: large files hashed on several threads.
fn chunk_raw(
    f: &mut content::RawBody,
    meta: &Metadata,
    how: &How,
    buf: &mut [u8],
    pieces: &mut Vec<Piece>,
    offload: &mut dyn FnMut(&mut Vec<Piece>) -> io::Result<()>,
) -> std::result::Result<(StreamInfo, bool), Skip> {
    // Feature methods read files whole (crate::chunking::features); only the
    // chunking methods cut and hash in parallel.
    let cuts = !matches!(how.chunker, Chunker::Features(_));
    if how.hashers > 1 && cuts && meta.len() >= PAR_MIN {
        crate::chunking::parhash::chunk_stream_par(f, how.chunker, how.hashers, pieces, offload)
            .map(|info| (info, false))
    } else {
        chunk_stream_defer(f, how.chunker, buf, pieces, offload, how.defer)
    }
    .map_err(Skip::Io)
}

/// Chunk one file outside the pipeline the way fsim-chunk does in `mode`
/// (fsim-query, the html report): its pieces, its info (`content` the
/// file's identity, as in the file table), the view chunked, and the first
/// `keep` bytes of a content view (empty for a raw view: read the file).
/// A view beyond `limits` keeps its raw bytes (and then differs from the
/// file table's, when fsim-chunk's default limits let it through).
pub fn chunk_path_as(
    path: &Path,
    chunker: &Chunker,
    mode: Mode,
    limits: &Limits,
    keep: usize,
) -> Result<(Vec<Piece>, StreamInfo, FileView, Vec<u8>)> {
    let mut buf = read_buffer(chunker);
    let how = How {
        chunker,
        hashers: 1,
        defer: false,
        mode,
        limits,
        keep,
    };
    match chunk_open(path, &how, &mut buf, Vec::new()) {
        Ok(c) => {
            let mut pieces = c.pieces;
            if let Some(s) = c.spilled {
                let mut all = Vec::with_capacity(s.count as usize + pieces.len());
                s.replay(|p| {
                    all.push(p);
                    Ok(())
                })?;
                all.append(&mut pieces);
                pieces = all;
            }
            Ok((pieces, c.info, c.view, c.head))
        }
        Err(Skip::Special) => Err(crate::error::Error::msg(format!(
            "{}: not a regular file",
            path.display()
        ))),
        Err(Skip::Io(e)) => Err(e).ctx(|| format!("reading {}", path.display())),
    }
}

/// Chunk one file outside the pipeline (tests, tools): its pieces and info.
pub fn chunk_path(path: &Path, chunker: &Chunker) -> Result<(Vec<Piece>, StreamInfo)> {
    let mut buf = read_buffer(chunker);
    let mut pieces = Vec::new();
    let mut f =
        crate::io::longpath::open_file(path).ctx(|| format!("cannot open {}", path.display()))?;
    let info = chunk_stream(&mut f, chunker, &mut buf, &mut pieces)
        .ctx(|| format!("reading {}", path.display()))?;
    Ok((pieces, info))
}

/// Cut the template chunks out of `data` (a whole file, cut with the run's
/// chunker): `out` gets the payload, the remaining chunks in order.
pub fn payload(chunker: &Chunker, templates: &TemplateSet, data: &[u8], out: &mut Vec<u8>) {
    out.clear();
    for c in chunker.chunks(data) {
        let bytes = &data[c.offset..c.offset + c.len];
        let h = formats::digest_to_u128(&Md5::digest(bytes));
        if !templates.contains(h) {
            out.extend_from_slice(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_cuts_template_chunks() {
        let c = Chunker::new(crate::chunking::chunker::Method::Tttd, 256).unwrap();
        let data = crate::chunking::chunker::pseudo_text(20_000, 3);
        let cuts: Vec<_> = c.chunks(&data).collect();
        assert!(cuts.len() > 4);
        let mut set = TemplateSet::default();
        let first = &data[..cuts[0].len];
        set.chunks.insert(
            formats::digest_to_u128(&Md5::digest(first)),
            cuts[0].len as u32,
        );
        let mut out = Vec::new();
        payload(&c, &set, &data, &mut out);
        assert_eq!(out, &data[cuts[0].len..]);
    }
}
