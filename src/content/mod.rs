//! The content view of a file (docs/documents.md): what the
//! chunker, the line source, fsim-verify and the html report should compare
//! instead of the raw bytes when the bytes are a container of the content.
//! Two .docx from one Word template share their styles and settings XML
//! (86 % of their raw bytes) and two versions of a compressed text share
//! almost no compressed byte; their views are the paragraphs and the
//! decompressed text.
//!
//! The kind is chosen by the bytes ([`detect`]: magic numbers, and for a zip
//! the names of its members), never by the file name. Every extractor works
//! under [`Limits`] counted while bytes are produced, and runs inside
//! `catch_unwind`; the PDF parser, the one large parser, runs as a separate
//! process with a deadline and a memory limit ([`pdf`]: poppler's
//! pdftotext, or fsim's own fsim-pdftext, [`pdftext`]). A file that cannot
//! be read as its kind keeps its raw view with a note saying why, so
//! extraction never fails a run: only reading the file itself can.
//!
//! Deterministic: the view depends on the bytes and the limits only (and,
//! for PDF, on the extractor found: `pdf=` in the headers), never on the
//! thread or the run; a deadline that expires is the one exception, and it
//! says so in the note.

pub mod archive;
mod compressed;
mod detect;
mod flat;
mod gettext;
mod html;
mod legacy;
mod mail;
mod member_cache;
mod package;
mod pdf;
pub mod pdftext;
mod plaintext;
mod prose;
pub mod store;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod variant_tests;
mod xml;

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

pub use detect::detect;

/// What a file's bytes are, as far as its content view is concerned (its
/// name is the file table's `view` column, so the type lives in formats).
pub use crate::formats::views::ViewKind as Kind;

/// Which view the stages read (`--content auto|raw`): `Auto` the content
/// view chosen by the bytes, `Raw` the bytes as they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Auto,
    Raw,
}

impl Mode {
    /// `auto` or `raw`, for the command lines' `--content` (a clap
    /// `value_parser`).
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "auto" => Ok(Mode::Auto),
            "raw" => Ok(Mode::Raw),
            _ => Err(format!("expected auto or raw, not {s:?}")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Raw => "raw",
        }
    }

    /// The mode a file table's header records (`content=`, written by
    /// fsim-chunk), so that the later stages read files the way they were
    /// chunked: a table without it was written before content views, of
    /// raw bytes.
    pub fn of_table(params: &crate::formats::Params) -> Result<Mode, String> {
        match crate::formats::headers::ChunkParams::parse(params)?.content {
            None => Ok(Mode::Raw),
            Some(v) => {
                Mode::parse(&v).map_err(|e| format!("content= in the file table's header: {e}"))
            }
        }
    }
}

/// Bounds every extractor enforces while it produces bytes, so that a
/// hostile file (a decompression bomb, a zip of 10^6 members, XML nested
/// 10^5 deep, a PDF that loops) costs at most these, and then keeps its raw
/// view with a note.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest view (decompressed stream, extracted text), and largest zip
    /// member or mail part read to produce it. Also bounds the memory of
    /// one extraction: about twice this.
    pub max_bytes: u64,
    /// Largest container read into memory to be extracted (a PDF, a mail
    /// message); larger ones keep their raw view.
    pub max_input: u64,
    /// Largest ratio of decompressed to compressed bytes, applied once the
    /// output passes `ratio_floor` (a small file of zeros compresses 1000:1
    /// legitimately; a bomb does so for gigabytes).
    pub max_ratio: u64,
    /// Output below which the ratio is not checked.
    pub ratio_floor: u64,
    /// Most members a zip may list, most parts a mail may have.
    pub max_members: usize,
    /// Deepest XML element nesting, deepest MIME nesting.
    pub max_depth: usize,
    /// Wall-clock time one file's extraction may take.
    pub time: Duration,
    /// Address space of the PDF text extractor's process.
    pub pdf_memory: u64,
}

impl Default for Limits {
    /// 64 MiB views, 1:200 ratios beyond 1 MiB, 10,000 members, depth 256,
    /// 10 s, and 1 GiB for pdftotext (docs/documents.md says why).
    fn default() -> Self {
        Limits {
            max_bytes: 64 << 20,
            max_input: 256 << 20,
            max_ratio: 200,
            ratio_floor: 1 << 20,
            max_members: 10_000,
            max_depth: 256,
            time: Duration::from_secs(10),
            pdf_memory: 1 << 30,
        }
    }
}

impl Limits {
    /// The defaults, with a view no larger than a quarter of a stage's
    /// `--memory` (at least 1 MiB): an extraction holds about twice its
    /// view, and the stage's own buffers need the rest. A 10 MB gzip that
    /// expands to 1 GB under `--memory 256M` stops at 64 MiB with a note.
    pub fn within_memory(memory: u64) -> Limits {
        let d = Limits::default();
        Limits {
            max_bytes: (memory / 4).clamp(1 << 20, d.max_bytes),
            ..d
        }
    }
}

/// A file's content view held in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The kind whose view `bytes` is: `Raw` when the file was not
    /// recognised, or was recognised and could not be read as its kind.
    pub kind: Kind,
    pub bytes: Vec<u8>,
    /// Why the view is raw although the bytes looked like a document
    /// ("unreadable as docx: ..."), or `None`.
    pub note: Option<String>,
}

/// The content view of `data`, whatever it holds: never fails.
pub fn view(data: &[u8], limits: &Limits) -> View {
    let kind = detect(&mut io::Cursor::new(data));
    if kind == Kind::Raw {
        let (kind, bytes) = if plaintext::reads_as_prose(data) {
            (Kind::Prose, prose::sentences(data))
        } else {
            (Kind::Raw, data.to_vec())
        };
        return View {
            kind,
            bytes,
            note: None,
        };
    }
    match extract_guarded(kind, &mut io::Cursor::new(data), None, limits) {
        Ok(bytes) => View {
            kind,
            bytes,
            note: None,
        },
        Err(why) => View {
            kind: Kind::Raw,
            bytes: data.to_vec(),
            note: Some(unreadable(kind, &why)),
        },
    }
}

/// A file opened for its content view: the raw file itself, to be streamed
/// as before (any size), or the extracted view.
#[derive(Debug)]
pub enum Body {
    Raw(RawBody),
    View(Vec<u8>),
}

/// A file read as it is, from its start: the bytes [`open`] read to learn
/// its kind, then the rest of the file. The head is not read again: the
/// file is not rewound over it, and a file that ended within it is not
/// read again at all. A small file is opened, read to its end once and
/// closed (half the system calls of a rewind and a second read: on trees
/// of many small files, fsim-chunk's system time is mostly these).
#[derive(Debug)]
pub struct RawBody(io::Chain<io::Cursor<Vec<u8>>, io::Take<File>>);

impl RawBody {
    /// The file at its start, nothing of it read yet.
    fn at_start(file: File) -> RawBody {
        RawBody::after_head(file, Vec::new(), false)
    }

    /// The file positioned just after `head`, its first bytes; `ended`:
    /// the file ended within them, nothing is left to read from it.
    fn after_head(file: File, head: Vec<u8>, ended: bool) -> RawBody {
        let rest = file.take(if ended { 0 } else { u64::MAX });
        RawBody(io::Cursor::new(head).chain(rest))
    }
}

impl Read for RawBody {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

/// [`open`]'s answer: the view's kind (`Raw` for a raw body), its body,
/// the note when a recognised file fell back to its raw bytes, and the
/// metadata of the file opened (not of a path that may have been replaced
/// since: the stages compare its size and mtime with the file table).
#[derive(Debug)]
pub struct Opened {
    pub kind: Kind,
    pub body: Body,
    pub note: Option<String>,
    pub meta: Metadata,
    /// The kind the bytes looked like when they fell back to their raw
    /// view (with `note`).
    pub unreadable: Option<Kind>,
    /// For a `View` body, the file itself (at no particular position):
    /// fsim-chunk hashes its raw bytes, the file's identity.
    pub source: Option<File>,
}

/// Open `path` for its content view. Fails only when the file itself cannot
/// be opened or read; a raw body is positioned at the start of the file.
/// Anything but a regular file (a FIFO put in a file's place) is returned
/// raw and unread, for the caller's own check.
pub fn open(path: &Path, limits: &Limits) -> io::Result<Opened> {
    let mut file = crate::io::longpath::open_file(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(raw(RawBody::at_start(file), meta));
    }
    // Just opened, the file is at its start: its head is read from there,
    // once, for its kind and then as the first bytes of a raw body.
    let mut head = Vec::with_capacity(detect::HEAD);
    detect::read_head(&mut file, &mut head)?;
    let kind = detect::detect_head(&head, &mut file);
    if kind != Kind::Raw {
        if let Some(bytes) = store::extracted_before(kind, &mut file) {
            return Ok(viewed(kind, bytes, file, meta));
        }
        match extract_guarded(kind, &mut file, Some(path), limits) {
            Ok(bytes) => return Ok(viewed(kind, bytes, file, meta)),
            Err(why) => {
                file.seek(SeekFrom::Start(0))?;
                let mut o = raw(RawBody::at_start(file), meta);
                o.note = Some(unreadable(kind, &why));
                o.unreadable = Some(kind);
                return Ok(o);
            }
        }
    }
    if detect::reads_past_head(&head) {
        file.seek(SeekFrom::Start(head.len() as u64))?;
    }
    let ended = head.len() < detect::HEAD;
    if plaintext::may_read_as_prose(&head, meta.len()) {
        return prose_or_raw(file, head, ended, meta);
    }
    Ok(raw(RawBody::after_head(file, head, ended), meta))
}

/// A text file that may read as prose, `head` read: read whole (at most
/// [`plaintext::MAX_PROSE_BYTES`], which its size was checked against),
/// then its prose view, or its raw body from the bytes read, the file not
/// read again.
fn prose_or_raw(mut file: File, head: Vec<u8>, ended: bool, meta: Metadata) -> io::Result<Opened> {
    let mut all = head;
    if !ended {
        let room = (plaintext::MAX_PROSE_BYTES + 1).saturating_sub(all.len());
        (&mut file).take(room as u64).read_to_end(&mut all)?;
    }
    if plaintext::reads_as_prose(&all) {
        return Ok(viewed(Kind::Prose, prose::sentences(&all), file, meta));
    }
    // A file that grew past the limit since its size was read: the rest
    // after the bytes read.
    let ended = all.len() <= plaintext::MAX_PROSE_BYTES;
    Ok(raw(RawBody::after_head(file, all, ended), meta))
}

/// The identity of a file chunked through a content view: the MD5 of its
/// raw bytes from the start, and their number (identical sets stay by raw
/// bytes: two files are never identical because their text is). fsim-chunk
/// records it; the view store looks copies up by it.
pub fn raw_identity(f: &mut File, buf: &mut [u8]) -> io::Result<(u128, u64)> {
    use md5::{Digest as _, Md5};
    f.seek(SeekFrom::Start(0))?;
    let mut h = Md5::new();
    let mut n = 0u64;
    loop {
        match f.read(buf) {
            Ok(0) => return Ok((crate::formats::digest_to_u128(&h.finalize()), n)),
            Ok(got) => {
                h.update(&buf[..got]);
                n += got as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A file opened for its view `bytes` of kind `kind`.
fn viewed(kind: Kind, bytes: Vec<u8>, file: File, meta: Metadata) -> Opened {
    Opened {
        kind,
        body: Body::View(bytes),
        note: None,
        meta,
        unreadable: None,
        source: Some(file),
    }
}

/// A file opened for its raw bytes.
fn raw(body: RawBody, meta: Metadata) -> Opened {
    Opened {
        kind: Kind::Raw,
        body: Body::Raw(body),
        note: None,
        meta,
        unreadable: None,
        source: None,
    }
}

/// True when PDFs get their text here (pdftotext is installed, or
/// fsim-pdftext is beside the running program); else they keep their raw
/// view with a note saying so.
pub fn pdf_available() -> bool {
    pdf::available()
}

pub use pdf::Extractor as PdfExtractor;

/// The PDF text extractor of this process (`FSIM_PDF`, else pdftotext on
/// PATH, else fsim-pdftext beside the running program), or why there is
/// none.
pub fn pdf_extractor() -> Result<&'static PdfExtractor, String> {
    pdf::extractor()
}

/// The `pdf=` chunking parameter of a run with content views (absent for
/// pdftotext, the extractor of every run before it existed).
pub fn pdf_extractor_param() -> Option<&'static str> {
    pdf::extractor_param()
}

/// The `views=` chunking parameter: the version of the views' text, so
/// that records of views made another way are not reused or compared as
/// if made this way. 2: prose as sentences ([`prose`]); 3: text files and
/// decompressed streams that read as prose too ([`plaintext`]), and a
/// short line ending with a colon is no heading; 4: stand-alone HTML
/// documents as their text ([`html::is_document`]); 5: a hyphen between
/// two letters is no part of a prose word; 6: a `.mo` whose strings do not
/// each end in a NUL has no view (src/content/gettext.rs).
pub fn views_param() -> Option<String> {
    Some(VIEWS_VERSION.into())
}

/// See [`views_param`].
const VIEWS_VERSION: &str = "6";

/// The `office=` chunking parameter: which of catdoc's programs were
/// missing, when any (src/content/legacy.rs).
pub fn office_extractor_param() -> Option<String> {
    legacy::extractor_param()
}

/// [`view`] of PDF bytes with the extractor `exe` rather than this
/// process's: how the tests run fsim-pdftext on a machine that has
/// pdftotext. Bytes that are not a PDF are their raw view.
pub fn pdf_view_with(data: &[u8], exe: &PdfExtractor, limits: &Limits) -> View {
    if detect(&mut io::Cursor::new(data)) != Kind::Pdf {
        return View {
            kind: Kind::Raw,
            bytes: data.to_vec(),
            note: None,
        };
    }
    let budget = Budget::new(limits);
    let run = catch_unwind(AssertUnwindSafe(|| {
        pdf::extract_with(exe, &mut io::Cursor::new(data), None, &budget)
            .map(|text| prose::sentences(&text))
    }));
    match run {
        Ok(Ok(bytes)) => View {
            kind: Kind::Pdf,
            bytes,
            note: None,
        },
        Ok(Err(why)) => View {
            kind: Kind::Raw,
            bytes: data.to_vec(),
            note: Some(unreadable(Kind::Pdf, &why)),
        },
        Err(_) => View {
            kind: Kind::Raw,
            bytes: data.to_vec(),
            note: Some(unreadable(Kind::Pdf, "the extractor panicked")),
        },
    }
}

/// [`open`] in `mode`: with `Mode::Raw` the file as it is, never examined
/// (the one function the stages' readers call).
pub fn open_with(path: &Path, mode: Mode, limits: &Limits) -> io::Result<Opened> {
    match mode {
        Mode::Auto => open(path, limits),
        Mode::Raw => {
            let file = crate::io::longpath::open_file(path)?;
            let meta = file.metadata()?;
            Ok(raw(RawBody::at_start(file), meta))
        }
    }
}

/// The content view a file table entry was chunked from (`e.view.kind` is
/// not `Raw`, or the entry is a member of an archive), if the file is
/// still the one chunked (same raw size and mtime) and still gives that
/// view (same kind, same length): the stages after fsim-chunk (the line
/// source, fsim-verify, the html report) read views and members through
/// this, so they measure the bytes that were chunked. The error is the
/// reason, said after the file's path, as for a stale file. Memory: the
/// view (at most `limits.max_bytes`) and the extraction's own; for a
/// member, its archive too (at most `limits.max_input`).
pub fn entry_view(e: &crate::formats::FileEntry, limits: &Limits) -> Result<Vec<u8>, String> {
    if let Some(len) = e.view.archive {
        return member_view(e, len as usize, limits);
    }
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(&e.path));
    if let Some(bytes) = stored_view(e, path)? {
        return Ok(bytes);
    }
    if e.view.kind == Kind::Prose {
        return prose_view(e, path);
    }
    let o = open(path, limits).map_err(vanished)?;
    still_chunked(e, &o.meta)?;
    let want = e.view.kind.name();
    match o.body {
        Body::View(bytes) if o.kind == e.view.kind && bytes.len() as u64 == e.size => Ok(bytes),
        Body::View(bytes) => Err(format!(
            "its {want} view is not the one chunked ({} bytes then, {} bytes as {} now)",
            e.size,
            bytes.len(),
            o.kind.name()
        )),
        Body::Raw(_) => Err(format!(
            "no longer read as {want} ({})",
            o.note.as_deref().unwrap_or("not recognised")
        )),
    }
}

/// The prose view of `e`, which fsim-chunk read as prose: the file's
/// sentences, if it is still the one chunked. Whether its bytes read as
/// prose is not asked again: the same bytes (the same size and mtime) gave
/// fsim-chunk its answer, and asking cost a third of fsim-verify's time
/// when 1 % of the overlap tree was edited. Still checked, cheaply: the
/// bytes are UTF-8 text and give a view of the length chunked.
fn prose_view(e: &crate::formats::FileEntry, path: &Path) -> Result<Vec<u8>, String> {
    let mut file = crate::io::longpath::open_file(path).map_err(vanished)?;
    let m = file.metadata().map_err(vanished)?;
    still_chunked(e, &m)?;
    let mut all = Vec::with_capacity(m.len().min(plaintext::MAX_PROSE_BYTES as u64) as usize);
    (&mut file)
        .take(plaintext::MAX_PROSE_BYTES as u64)
        .read_to_end(&mut all)
        .map_err(vanished)?;
    if memchr::memchr(0, &all).is_some() || std::str::from_utf8(&all).is_err() {
        return Err("no longer read as prose (not UTF-8 text)".into());
    }
    let bytes = prose::sentences(&all);
    if bytes.len() as u64 != e.size {
        return Err(format!(
            "its prose view is not the one chunked ({} bytes then, {} bytes now)",
            e.size,
            bytes.len()
        ));
    }
    Ok(bytes)
}

/// The view of `e` from fsim-chunk's [`store`], if it has it and the file
/// is still the one chunked (the same check as an extraction's).
fn stored_view(e: &crate::formats::FileEntry, path: &Path) -> Result<Option<Vec<u8>>, String> {
    let Some(bytes) = store::get(e) else {
        return Ok(None);
    };
    let m = std::fs::metadata(path).map_err(vanished)?;
    still_chunked(e, &m)?;
    Ok(Some(bytes))
}

/// Why a file chunked earlier cannot be read now.
fn vanished(err: io::Error) -> String {
    format!("vanished or unreadable since chunking ({err})")
}

/// Stale unless `m` is still a regular file of the size and mtime chunked.
fn still_chunked(e: &crate::formats::FileEntry, m: &Metadata) -> Result<(), String> {
    if !m.is_file() {
        return Err("no longer a regular file".into());
    }
    check_unchanged(e, m, m.len())
}

/// Stale unless `size` (the raw bytes read now) and the mtime of `m` are
/// the entry's (a member's mtime is its archive's).
fn check_unchanged(e: &crate::formats::FileEntry, m: &Metadata, size: u64) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    if size != e.view.raw_size || m.mtime() != e.mtime_s || m.mtime_nsec() as u32 != e.mtime_ns {
        return Err(format!(
            "changed since chunking (size {} -> {}, mtime {}.{:09} -> {}.{:09})",
            e.view.raw_size,
            size,
            e.mtime_s,
            e.mtime_ns,
            m.mtime(),
            m.mtime_nsec()
        ));
    }
    Ok(())
}

/// [`entry_view`] of a member of an archive: its bytes read through the
/// archive (the first `len` bytes of its path), then its own view.
fn member_view(
    e: &crate::formats::FileEntry,
    len: usize,
    limits: &Limits,
) -> Result<Vec<u8>, String> {
    let (bytes, meta) = member_bytes(&e.path, len, limits)?;
    check_unchanged(e, &meta, bytes.len() as u64)?;
    if e.view.is_raw() {
        return Ok(bytes);
    }
    let v = view(&bytes, limits);
    if v.kind == e.view.kind && v.bytes.len() as u64 == e.size {
        return Ok(v.bytes);
    }
    Err(format!(
        "its {} view is not the one chunked ({} bytes then, {} bytes as {} now)",
        e.view.kind.name(),
        e.size,
        v.bytes.len(),
        v.kind.name()
    ))
}

/// The raw bytes of the archive member `entry` names (its archive's path,
/// `archive_len` bytes, then `!/` and the member's escaped name, nested
/// levels included), and the archive file's metadata: every reader of a
/// member goes through this, so a member path is never opened as a file.
/// The error says why the member cannot be read (the archive is gone,
/// changed, or no longer holds it).
pub fn member_bytes(
    entry: &[u8],
    archive_len: usize,
    limits: &Limits,
) -> Result<(Vec<u8>, Metadata), String> {
    use std::os::unix::ffi::OsStrExt;
    let (outer, inner) = match entry.get(archive_len..) {
        Some([b'!', b'/', inner @ ..]) => (&entry[..archive_len], inner),
        _ => return Err("not a member of an archive: bad archive path length".into()),
    };
    let path = Path::new(std::ffi::OsStr::from_bytes(outer));
    let mut f = crate::io::longpath::open_file(path)
        .map_err(|err| format!("its archive vanished or is unreadable ({err})"))?;
    let meta = f
        .metadata()
        .map_err(|err| format!("its archive is unreadable ({err})"))?;
    if !meta.is_file() {
        return Err("its archive is no longer a regular file".into());
    }
    let identity = member_cache::Identity::new(outer, &meta);
    let found = match member_cache::lookup(&identity, inner) {
        Some(found) => found,
        None => read_members(&mut f, identity, inner, limits)?,
    };
    match found {
        member_cache::Found::Member(bytes) => Ok((bytes, meta)),
        member_cache::Found::Absent(note) => Err(format!(
            "no longer in its archive{}",
            note.map(|n| format!(" ({n})")).unwrap_or_default()
        )),
    }
}

/// Read the archive `f` for its member `inner`, keeping every member in
/// the thread's cache while they fit its budget ([`member_cache`]).
fn read_members(
    f: &mut File,
    identity: member_cache::Identity,
    inner: &[u8],
    limits: &Limits,
) -> Result<member_cache::Found, String> {
    member_cache::count_read();
    let mut data = Vec::new();
    f.take(limits.max_input + 1)
        .read_to_end(&mut data)
        .map_err(|err| format!("its archive is unreadable ({err})"))?;
    let kind = archive::archive_kind(&data).ok_or("its archive is no longer an archive")?;
    let budget = member_cache::budget(limits);
    let mut found = None;
    let mut kept = Some((std::collections::HashMap::new(), 0u64));
    let run = catch_unwind(AssertUnwindSafe(|| {
        archive::members(&data, kind, limits, &mut |m| {
            if found.is_none() && m.name == inner {
                found = Some(m.bytes.clone());
            }
            if let Some((map, total)) = &mut kept {
                *total += m.bytes.len() as u64;
                if *total > budget {
                    kept = None;
                } else {
                    map.insert(m.name.clone(), m.bytes.clone());
                }
            }
        })
    }));
    let Ok(listed) = run else {
        member_cache::forget();
        return Err("its archive made the reader panic".into());
    };
    match kept {
        Some((bytes, _)) => member_cache::keep(member_cache::Members {
            identity,
            bytes,
            note: listed.note.clone(),
        }),
        None => member_cache::forget(),
    }
    Ok(match found {
        Some(bytes) => member_cache::Found::Member(bytes),
        None => member_cache::Found::Absent(listed.note),
    })
}

/// The note of a file that keeps its raw view.
fn unreadable(kind: Kind, why: &str) -> String {
    format!("unreadable as {}: {why}", kind.name())
}

/// What detection and the extractors read: a file or bytes in memory,
/// seekable (the zip directory is at the end).
pub trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// Why an extraction stopped; becomes the note's text.
pub(crate) type Fail = String;

/// `extract` with panics caught: a panic in a parser (ours or a
/// dependency's) is a note like any other failure.
fn extract_guarded(
    kind: Kind,
    src: &mut dyn Source,
    path: Option<&Path>,
    limits: &Limits,
) -> Result<Vec<u8>, Fail> {
    let budget = Budget::new(limits);
    let run = catch_unwind(AssertUnwindSafe(|| {
        src.seek(SeekFrom::Start(0))
            .map_err(|e| format!("cannot rewind: {e}"))?;
        extract(kind, src, path, &budget)
    }));
    match run {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("the extractor panicked ({msg})"))
        }
    }
}

/// The view of `src` as `kind`: prose kinds as sentences ([`prose`]), and
/// a decompressed stream too when it reads as prose ([`plaintext`]), as
/// the same text uncompressed does.
fn extract(
    kind: Kind,
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    let text = extract_text(kind, src, path, budget)?;
    let stream = matches!(kind, Kind::Gzip | Kind::Bzip2 | Kind::Xz | Kind::Zstd);
    Ok(
        if kind.is_prose() || (stream && plaintext::reads_as_prose(&text)) {
            prose::sentences(&text)
        } else {
            text
        },
    )
}

fn extract_text(
    kind: Kind,
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    match kind {
        Kind::Raw | Kind::Prose => Err("not a document".into()),
        Kind::Gzip | Kind::Bzip2 | Kind::Xz | Kind::Zstd => compressed::extract(kind, src, budget),
        Kind::Odt | Kind::Ods | Kind::Odp | Kind::Odg if !is_zip(src)? => {
            flat::extract(kind, src, budget)
        }
        Kind::Docx
        | Kind::Xlsx
        | Kind::Pptx
        | Kind::Odt
        | Kind::Ods
        | Kind::Odp
        | Kind::Odg
        | Kind::Epub => package::extract(kind, src, budget),
        Kind::Pdf => pdf::extract(src, path, budget),
        Kind::Mail => mail::extract(&read_input(src, budget)?, budget),
        Kind::Html => {
            let mut out = Vec::new();
            html::text(&html::decoded(&read_input(src, budget)?), &mut out, budget)?;
            Ok(out)
        }
        Kind::Mo => gettext::extract(src, budget),
        Kind::Doc | Kind::Xls | Kind::Ppt => legacy::extract(kind, src, path, budget),
    }
}

/// Whether `src` starts as a zip (a package rather than a flat XML
/// OpenDocument); `src` is left at its start.
fn is_zip(src: &mut dyn Source) -> Result<bool, Fail> {
    let mut magic = Vec::with_capacity(4);
    let read = Read::take(&mut *src, 4).read_to_end(&mut magic);
    src.seek(SeekFrom::Start(0))
        .map_err(|e| format!("cannot rewind: {e}"))?;
    read.map_err(|e| format!("read error: {e}"))?;
    Ok(magic == b"PK\x03\x04")
}

/// The whole input in memory, refused beyond `max_input`.
fn read_input(src: &mut dyn Source, budget: &Budget) -> Result<Vec<u8>, Fail> {
    let mut data = Vec::new();
    src.take(budget.limits.max_input + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("read error: {e}"))?;
    if data.len() as u64 > budget.limits.max_input {
        return Err(format!(
            "larger than {} bytes, the limit of a document read whole",
            budget.limits.max_input
        ));
    }
    Ok(data)
}

/// The limits of one extraction with its deadline.
pub(crate) struct Budget<'a> {
    pub limits: &'a Limits,
    pub deadline: Instant,
}

impl<'a> Budget<'a> {
    fn new(limits: &'a Limits) -> Self {
        Budget {
            limits,
            deadline: Instant::now() + limits.time,
        }
    }

    /// An error once the deadline has passed (called every few thousand
    /// events by the loops that could run long).
    pub fn check_time(&self) -> Result<(), Fail> {
        if Instant::now() > self.deadline {
            Err(format!(
                "took longer than {} s, the time limit",
                self.limits.time.as_secs_f64()
            ))
        } else {
            Ok(())
        }
    }

    /// An error when `len` bytes of output are over `max_bytes`.
    pub fn check_size(&self, len: u64, what: &str) -> Result<(), Fail> {
        if len > self.limits.max_bytes {
            Err(format!(
                "{what} larger than {} bytes, the size limit",
                self.limits.max_bytes
            ))
        } else {
            Ok(())
        }
    }

    /// An error when `out` bytes made from `input` are over the ratio limit
    /// (only past `ratio_floor`).
    pub fn check_ratio(&self, out: u64, input: u64, what: &str) -> Result<(), Fail> {
        let l = self.limits;
        if out > l.ratio_floor && out > input.max(1).saturating_mul(l.max_ratio) {
            Err(format!(
                "{what} expands more than {}:1 (a decompression bomb?): over {out} bytes from {input}",
                l.max_ratio
            ))
        } else {
            Ok(())
        }
    }
}

/// Read all of `r` into a vector, checking size and time as it grows, and
/// the ratio to `input` compressed bytes when given.
pub(crate) fn read_bounded(
    r: &mut dyn Read,
    budget: &Budget,
    input: Option<u64>,
    what: &str,
) -> Result<Vec<u8>, Fail> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("{what}: {e}")),
        };
        out.extend_from_slice(&buf[..n]);
        budget.check_size(out.len() as u64, what)?;
        if let Some(input) = input {
            budget.check_ratio(out.len() as u64, input, what)?;
        }
        budget.check_time()?;
    }
}
