//! Which [`Kind`] a file is, from its bytes alone: the magic number at its
//! start (compressed streams, PDF, zip), the members of a zip (OOXML,
//! OpenDocument, EPUB), the header block of a mail message. The name is
//! never looked at: a .docx renamed .bak is still a docx, and a text file
//! named .docx is text.
//!
//! Bounded: the first 8 KiB, the end of the file (the zip directory, whose
//! 16-bit member count caps what the zip reader lists) and at most one
//! small member are read.

use std::io::{Read, SeekFrom};

use super::{Kind, Source};

/// Bytes of the start of a file examined.
pub(super) const HEAD: usize = 8 << 10;

/// The kind of the file or bytes `src`; `Raw` when nothing is recognised or
/// reading fails (the caller then reads the raw bytes and meets the error
/// itself).
pub fn detect(src: &mut dyn Source) -> Kind {
    let mut head = Vec::with_capacity(HEAD);
    if src.seek(SeekFrom::Start(0)).is_err() || read_head(src, &mut head).is_err() {
        return Kind::Raw;
    }
    detect_head(&head, src)
}

/// Read the start of `src` from where it is into `head` (at most
/// [`HEAD`] bytes): shorter than [`HEAD`] only when `src` ended there.
pub(super) fn read_head(src: &mut dyn Source, head: &mut Vec<u8>) -> std::io::Result<()> {
    src.take(HEAD as u64).read_to_end(head).map(drop)
}

/// The kind of a file whose first bytes ([`read_head`]) are `head`. Only a
/// zip is read further, through `src`: see [`reads_past_head`].
pub(super) fn detect_head(head: &[u8], src: &mut dyn Source) -> Kind {
    if let Some(k) = by_magic(head) {
        return k;
    }
    if head.starts_with(b"PK\x03\x04") {
        return zip_kind(head, src);
    }
    if head.starts_with(&super::legacy::MAGIC) {
        return super::legacy::kind(head, src).unwrap_or(Kind::Raw);
    }
    if let Some(k) = super::flat::kind(head) {
        return k;
    }
    if looks_like_mail(head) {
        return Kind::Mail;
    }
    if super::html::is_document(head) {
        return Kind::Html;
    }
    Kind::Raw
}

/// Whether [`detect_head`] reads `src` beyond `head` (to a zip's
/// directory, a compound file's directory), which leaves it at no
/// particular position.
pub(super) fn reads_past_head(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04") || head.starts_with(&super::legacy::MAGIC)
}

/// Compressed streams and PDF by their magic numbers.
fn by_magic(head: &[u8]) -> Option<Kind> {
    if head.starts_with(&[0x1f, 0x8b, 0x08]) {
        return Some(Kind::Gzip);
    }
    if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        return Some(Kind::Xz);
    }
    if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Some(Kind::Zstd);
    }
    // "BZh1".."BZh9", then the block magic (pi) or the end-of-stream magic
    // (sqrt(pi)) of an empty stream: "BZh" alone starts ordinary text.
    if head.len() >= 10
        && head.starts_with(b"BZh")
        && (b'1'..=b'9').contains(&head[3])
        && (head[4..10] == [0x31, 0x41, 0x59, 0x26, 0x53, 0x59]
            || head[4..10] == [0x17, 0x72, 0x45, 0x38, 0x50, 0x90])
    {
        return Some(Kind::Bzip2);
    }
    if super::gettext::looks_like_mo(head) {
        return Some(Kind::Mo);
    }
    // PDF readers accept the header anywhere in the first 1024 bytes.
    let start = &head[..head.len().min(1024)];
    if memchr::memmem::find(start, b"%PDF-").is_some() {
        return Some(Kind::Pdf);
    }
    None
}

/// The document kind of a zip: OpenDocument and EPUB name themselves in a
/// first, stored member `mimetype`; OOXML by its main part. Anything else
/// (a plain zip, a jar) is `Raw` in this slice (archives: a later slice).
fn zip_kind(head: &[u8], src: &mut dyn Source) -> Kind {
    if let Some(k) = first_member_mimetype(head) {
        return k;
    }
    let count = zip_entry_count(src);
    if count == Some(u16::MAX) {
        return Kind::Raw;
    }
    let listed = match count {
        Some(_) if src.seek(SeekFrom::Start(0)).is_ok() => zip::ZipArchive::new(&mut *src).ok(),
        _ => None,
    };
    // A truncated or damaged package has no readable directory: its first
    // members' names still say what it was meant to be, so that it keeps
    // its raw view with a note rather than silently.
    let Some(mut zip) = listed else {
        return local_names_kind(head);
    };
    for (part, kind) in [
        ("word/document.xml", Kind::Docx),
        ("xl/workbook.xml", Kind::Xlsx),
        ("ppt/presentation.xml", Kind::Pptx),
    ] {
        if zip.index_for_name(part).is_some() {
            return kind;
        }
    }
    // A main part named otherwise (`word/document2.xml`): the one its
    // content types declare.
    if let Some(k) = declared_main_kind(&mut zip) {
        return k;
    }
    // An OOXML package without its main part: still that kind, so that it
    // gets a note saying the part is missing.
    if zip.index_for_name("[Content_Types].xml").is_some() {
        for (dir, kind) in OOXML_DIRS {
            if zip.file_names().any(|n| n.starts_with(dir)) {
                return kind;
            }
        }
    }
    let mut mime = Vec::new();
    match zip.by_name("mimetype") {
        Ok(f) if f.size() <= 200 => {
            if f.take(200).read_to_end(&mut mime).is_err() {
                return Kind::Raw;
            }
        }
        _ => return Kind::Raw,
    }
    mimetype_kind(&mime).unwrap_or(Kind::Raw)
}

/// The kind of the main part `[Content_Types].xml` declares (at most
/// 256 KiB of it read), when the package holds that part.
fn declared_main_kind(zip: &mut zip::ZipArchive<&mut dyn Source>) -> Option<Kind> {
    let mut types = Vec::new();
    let f = zip.by_name("[Content_Types].xml").ok()?;
    if f.size() > 256 << 10 {
        return None;
    }
    f.take(256 << 10).read_to_end(&mut types).ok()?;
    let (kind, part) = super::package::main_part(&types)?;
    zip.index_for_name(&part).map(|_| kind)
}

/// The folders of the OOXML kinds' parts.
const OOXML_DIRS: [(&str, Kind); 3] = [
    ("word/", Kind::Docx),
    ("xl/", Kind::Xlsx),
    ("ppt/", Kind::Pptx),
];

/// An OOXML package by the names of the local headers in `head`: its
/// `[Content_Types].xml` (which Office writes first) or a first member
/// `_rels/.rels` (LibreOffice writes the content types last), and its main
/// part or a part in `word/`, `xl/` or `ppt/`.
fn local_names_kind(head: &[u8]) -> Kind {
    let first_rels = head.get(26..28).map(|b| u16::from_le_bytes([b[0], b[1]])) == Some(11)
        && head.get(30..41) == Some(b"_rels/.rels");
    if !first_rels && memchr::memmem::find(head, b"[Content_Types].xml").is_none() {
        return Kind::Raw;
    }
    for (part, kind) in [
        ("word/document.xml", Kind::Docx),
        ("xl/workbook.xml", Kind::Xlsx),
        ("ppt/presentation.xml", Kind::Pptx),
    ] {
        if memchr::memmem::find(head, part.as_bytes()).is_some() {
            return kind;
        }
    }
    for (dir, kind) in OOXML_DIRS {
        if memchr::memmem::find(head, dir.as_bytes()).is_some() {
            return kind;
        }
    }
    Kind::Raw
}

/// The kind named by `mimetype` when it is the first member, stored.
fn first_member_mimetype(head: &[u8]) -> Option<Kind> {
    // Local file header: method at 8, compressed size at 18, name length
    // at 26, extra length at 28, name at 30.
    let u16_at = |i: usize| {
        head.get(i..i + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    };
    let method = u16_at(8)?;
    let name_len = u16_at(26)?;
    let extra_len = u16_at(28)?;
    if method != 0 || head.get(30..30 + name_len)? != b"mimetype" {
        return None;
    }
    let size = u32::from_le_bytes(head.get(18..22)?.try_into().ok()?) as usize;
    let start = 30 + name_len + extra_len;
    mimetype_kind(head.get(start..start + size.min(200))?)
}

/// The kind a `mimetype` names. An OpenDocument template (`.ott`, `.ots`,
/// `.otp`, `.otg`: `...-template`) is read as its document kind: its
/// content.xml is the same format, so a template and the documents made
/// from it are compared by the same text. A master document (`.odm`) and
/// an HTML template (`.oth`) are text documents too.
pub(super) fn mimetype_kind(mime: &[u8]) -> Option<Kind> {
    let mime = mime.trim_ascii();
    if mime == b"application/epub+zip" {
        return Some(Kind::Epub);
    }
    odf_kind(mime)
}

/// The kind of an OpenDocument mimetype (`application/vnd.oasis.
/// opendocument.KIND`, with `-template` or not).
pub(super) fn odf_kind(mime: &[u8]) -> Option<Kind> {
    let kind = mime.strip_prefix(b"application/vnd.oasis.opendocument.")?;
    let kind = kind.strip_suffix(b"-template").unwrap_or(kind);
    match kind {
        b"text" | b"text-master" | b"text-web" => Some(Kind::Odt),
        b"spreadsheet" => Some(Kind::Ods),
        b"presentation" => Some(Kind::Odp),
        b"graphics" => Some(Kind::Odg),
        _ => None,
    }
}

/// The member count of the zip's end-of-central-directory record (found in
/// the last 64 KiB + 22 bytes), so that no directory of more than 65,535
/// entries (zip64) is ever listed by detection.
fn zip_entry_count(src: &mut dyn Source) -> Option<u16> {
    let len = src.seek(SeekFrom::End(0)).ok()?;
    let tail_len = len.min(65_557);
    src.seek(SeekFrom::Start(len - tail_len)).ok()?;
    let mut tail = Vec::with_capacity(tail_len as usize);
    src.take(tail_len).read_to_end(&mut tail).ok()?;
    let at = memchr::memmem::rfind(&tail, b"PK\x05\x06")?;
    let b = tail.get(at + 10..at + 12)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

/// Header names whose presence marks a mail message (RFC 5322).
const MAIL_FIELDS: [&[u8]; 9] = [
    b"from",
    b"to",
    b"date",
    b"subject",
    b"message-id",
    b"received",
    b"mime-version",
    b"return-path",
    b"delivered-to",
];

/// A mail message: its first lines up to an empty line (or the end of the
/// head) are all header fields or their continuations, optionally after an
/// mbox "From " line, and at least two of them are fields of a message
/// ([`MAIL_FIELDS`]), one of which is From, Date or Received.
/// Whether `data` starts as a mail message, judged on its first 8 KiB as
/// [`detect`] judges a file (the archive reader asks it of a member).
pub(super) fn is_mail(data: &[u8]) -> bool {
    looks_like_mail(&data[..data.len().min(HEAD)])
}

fn looks_like_mail(head: &[u8]) -> bool {
    // A full head may end in the middle of a line: leave that line out.
    let full = head.len() >= HEAD;
    let head = match memchr::memrchr(b'\n', head) {
        Some(end) if full => &head[..end],
        _ => head,
    };
    let mut lines = head.split(|&b| b == b'\n').peekable();
    if lines.peek().is_some_and(|l| l.starts_with(b"From ")) {
        lines.next();
    }
    let (mut known, mut key, mut fields) = (0, false, 0);
    for (i, line) in lines.enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return fields > 0 && known >= 2 && key;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            if i == 0 {
                return false;
            }
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return false;
        };
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&b| b.is_ascii_graphic()) {
            return false;
        }
        let lower = name.to_ascii_lowercase();
        fields += 1;
        if MAIL_FIELDS.contains(&lower.as_slice()) {
            known += 1;
            key |= matches!(lower.as_slice(), b"from" | b"date" | b"received");
        }
    }
    // The head ended inside the header block (a long header).
    full && known >= 2 && key
}
