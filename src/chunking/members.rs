//! The members of an archive as entries of their own (docs/documents.md,
//! "Archives"): after fsim-chunk has chunked a zip, tar
//! or tar.gz file as it is (its raw bytes: two copies of an archive stay an
//! identical set; a mail message by its view, its attachments the
//! members), [`expand`] reads its members through
//! [`crate::content::archive`] and chunks each through its own content
//! view, as if it were a loose file named `ARCHIVE!/MEMBER`: a text inside
//! a zip is compared with its loose versions, a docx inside a zip by its
//! text, a copy inside a tar.gz is identical to the loose file.
//!
//! Bounded by [`Limits`]: the archive is read whole only up to
//! `max_input`, members one at a time under the library's caps, and
//! anything the library leaves out becomes the archive's note.

use crate::chunking::chunker::Chunker;
use crate::chunking::reader::{chunk_stream_defer, FileResult, Members};
use crate::chunking::stream::Piece;
use crate::content::{self, archive, Kind, Limits};
use crate::formats::{self, FileType, FileView, LeftOut};
use md5::{Digest as _, Md5};
use std::io::{self, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Bytes of a file's start read to tell an archive ([`archive::archive_kind`]
/// needs 512 decompressed bytes of a tar.gz).
const HEAD: u64 = 64 << 10;

/// The members of `f` (a file fsim-chunk has just chunked) when it is an
/// archive whose raw bytes (or, for a tar.gz, gzip content) were chunked:
/// a zip that is a document (docx, odt, epub) has a content view and is
/// not expanded, nor is a document that could not be read as one (it
/// keeps its note). I/O errors while
/// reading the archive a second time are its note: the archive itself is
/// already chunked.
pub fn expand(f: &FileResult, chunker: &Chunker, buf: &mut [u8], limits: &Limits) -> Members {
    if !candidate(f.info.ftype, &f.view) {
        return Members::default();
    }
    match read_archive(&f.path, f.view.raw_size, limits) {
        Ok(None) => Members::default(),
        Ok(Some((data, kind))) => chunk_members(f, &data, kind, chunker, buf, limits),
        Err((reason, why)) => Members {
            files: Vec::new(),
            note: Some(format!("members not read: {why}")),
            left_out: Some(reason),
        },
    }
}

/// Why a shard run lists no members of `f` ([`LeftOut::Unlisted`]) when it
/// is an archive whose members an unsharded run would list: its first
/// bytes read again, for the files that may be archives only. A mail
/// message is one only with attachments (or parts left out): it is read
/// and parsed again, as an unsharded run does, so that a Spark run's notes
/// do not list every message of a mail folder.
pub fn unlisted(f: &FileResult, limits: &Limits) -> Option<LeftOut> {
    if !is_archive(&f.path, f.info.ftype, &f.view) {
        return None;
    }
    if f.view.kind != Kind::Mail {
        return Some(LeftOut::Unlisted);
    }
    let Ok(Some((data, kind))) = read_archive(&f.path, f.view.raw_size, limits) else {
        return Some(LeftOut::Unlisted);
    };
    // A reader that panics is the merge's note to give (as `broken`).
    let listed = catch_unwind(AssertUnwindSafe(|| {
        archive::members(&data, kind, limits, &mut |_| {})
    }));
    let some = listed.map_or(true, |e| {
        e.members > 0 || e.left_out > 0 || e.note.is_some()
    });
    some.then_some(LeftOut::Unlisted)
}

/// Whether a file chunked as `view`, of type `ftype`, may be an archive:
/// a tar.gz has the gzip view (the tar stream) and members, a mail
/// message its attachments; another text is never an archive (not opened
/// a second time), nor is a message that could not be read as one.
fn candidate(ftype: FileType, view: &FileView) -> bool {
    view.unreadable.is_none()
        && match view.kind {
            Kind::Raw => matches!(ftype, FileType::Compressed | FileType::Binary),
            Kind::Gzip | Kind::Mail => true,
            _ => false,
        }
}

/// Whether the file at `path`, recorded with `ftype` and `view`, is an
/// archive whose members [`expand`] lists (its first bytes read, nothing
/// else): what a run merging shards reads again, since shard tables hold
/// no members (docs/documents.md).
pub fn is_archive(path: &Path, ftype: FileType, view: &FileView) -> bool {
    if !candidate(ftype, view) {
        return false;
    }
    let Ok(file) = crate::io::longpath::open_file(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(HEAD).read_to_end(&mut head).is_err() {
        return false;
    }
    archive::archive_kind(&head).is_some()
}

/// An archive's bytes and kind.
type ArchiveBytes = (Vec<u8>, archive::ArchiveKind);

/// The bytes of `path` and its archive kind, when its first bytes are an
/// archive's; an error when it is one but cannot be read whole (over
/// `max_input`, changed since it was chunked), with its kind.
fn read_archive(
    path: &Path,
    size: u64,
    limits: &Limits,
) -> Result<Option<ArchiveBytes>, (LeftOut, String)> {
    let unread = |e: io::Error| (LeftOut::Unread, e.to_string());
    let mut file = crate::io::longpath::open_file(path).map_err(unread)?;
    let mut data = Vec::new();
    (&mut file)
        .take(HEAD)
        .read_to_end(&mut data)
        .map_err(unread)?;
    let Some(kind) = archive::archive_kind(&data) else {
        return Ok(None);
    };
    if size > limits.max_input {
        return Err((
            LeftOut::Unread,
            format!(
                "an archive of {size} bytes, more than the limit of {} read whole",
                limits.max_input
            ),
        ));
    }
    file.read_to_end(&mut data).map_err(unread)?;
    if data.len() as u64 != size {
        return Err((
            LeftOut::Unread,
            format!(
                "changed while it was read ({size} bytes, then {})",
                data.len()
            ),
        ));
    }
    Ok(Some((data, kind)))
}

/// Chunk every member of `data` (the archive `f`), in order.
fn chunk_members(
    f: &FileResult,
    data: &[u8],
    kind: archive::ArchiveKind,
    chunker: &Chunker,
    buf: &mut [u8],
    limits: &Limits,
) -> Members {
    let prefix = f.path.as_os_str().as_bytes();
    let Ok(archive_len) = u32::try_from(prefix.len()) else {
        return Members::default();
    };
    let mut files = Vec::new();
    let mut failed = None;
    let run = catch_unwind(AssertUnwindSafe(|| {
        archive::members(data, kind, limits, &mut |m| {
            let mut name = prefix.to_vec();
            name.extend_from_slice(b"!/");
            name.extend_from_slice(&m.name);
            match chunk_member(&m.bytes, chunker, buf, limits) {
                Ok((pieces, info, mut view, note)) => {
                    view.archive = Some(archive_len);
                    files.push(member_result(f, name, pieces, info, view, note));
                }
                Err(e) => {
                    failed.get_or_insert(format!("{}: {e}", String::from_utf8_lossy(&name)));
                }
            }
        })
    }));
    let (note, left_out) = match run {
        Ok(x) if x.note.is_some() => (x.note, x.reason),
        Ok(_) => (failed.clone(), failed.map(|_| LeftOut::Broken)),
        Err(_) => (
            Some("the archive reader panicked: the members read before are kept".into()),
            Some(LeftOut::Broken),
        ),
    };
    Members {
        files,
        note,
        left_out,
    }
}

/// The record of one member: its archive's mtime (a member changes only
/// with it), its own pieces, view and note.
fn member_result(
    f: &FileResult,
    name: Vec<u8>,
    pieces: Vec<Piece>,
    info: crate::chunking::stream::StreamInfo,
    view: FileView,
    note: Option<String>,
) -> FileResult {
    FileResult {
        path: PathBuf::from(std::ffi::OsString::from_vec(name)),
        info,
        mtime_s: f.mtime_s,
        mtime_ns: f.mtime_ns,
        pieces,
        spilled: None,
        pos: f.pos,
        reused: None,
        content_pending: false,
        view,
        note,
        members: None,
    }
}

/// A member chunked as fsim-chunk chunks a file: through its content view
/// chosen by its bytes, identity by its raw bytes (the MD5 of them for a
/// content view, the MD5 over the chunk digests for a raw one, as for a
/// loose file, so a copy inside an archive is identical to the loose one).
pub fn chunk_member(
    bytes: &[u8],
    chunker: &Chunker,
    buf: &mut [u8],
    limits: &Limits,
) -> io::Result<(
    Vec<Piece>,
    crate::chunking::stream::StreamInfo,
    FileView,
    Option<String>,
)> {
    let v = content::view(bytes, limits);
    let mut pieces = Vec::new();
    let (mut info, _) = chunk_stream_defer(
        &mut &v.bytes[..],
        chunker,
        buf,
        &mut pieces,
        &mut |_| Ok(()),
        false,
    )?;
    let mut view = FileView::raw(bytes.len() as u64);
    if v.kind != Kind::Raw {
        view.kind = v.kind;
        view.hash = Some(info.content);
        info.content = formats::digest_to_u128(&Md5::digest(bytes));
    } else if v.note.is_some() {
        view.unreadable = Some(content::detect(&mut io::Cursor::new(bytes)));
    }
    Ok((pieces, info, view, v.note))
}

/// Chunk the archive member `entry` names (its archive's path is the first
/// `archive_len` bytes) the way fsim-chunk did, outside the pipeline (the
/// html report): its pieces, its info (`content` its identity), its view,
/// and the first `keep` bytes of that view, raw or not (a member has no
/// file of its own to read them from).
pub fn chunk_member_as(
    entry: &[u8],
    archive_len: u32,
    chunker: &Chunker,
    limits: &Limits,
    keep: usize,
) -> Result<
    (
        Vec<Piece>,
        crate::chunking::stream::StreamInfo,
        FileView,
        Vec<u8>,
    ),
    String,
> {
    let (bytes, _) = content::member_bytes(entry, archive_len as usize, limits)?;
    let mut buf = crate::chunking::reader::read_buffer(chunker);
    let (pieces, info, mut view, _) =
        chunk_member(&bytes, chunker, &mut buf, limits).map_err(|e| e.to_string())?;
    view.archive = Some(archive_len);
    let head = if view.is_raw() {
        bytes[..keep.min(bytes.len())].to_vec()
    } else {
        content::view(&bytes, limits).bytes[..keep.min(info.size as usize)].to_vec()
    };
    Ok((pieces, info, view, head))
}
