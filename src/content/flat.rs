//! Flat XML OpenDocument (.fodt, .fods, .fodp, .fodg): one XML file whose
//! root, `office:document`, holds what a package keeps in its members
//! (meta, settings, styles, content) and names its kind in its
//! `office:mimetype` attribute. It is read as the zipped kind (`odt`,
//! `ods`, `odp`, `odg`) and gives the same text: its `office:body`, in the
//! dialect of content.xml, so a flat document and its .odt are the same
//! content.

use memchr::memmem;

use super::xml;
use super::{read_input, Budget, Fail, Kind, Source};

/// The kind of a flat OpenDocument whose first bytes are `head`: after an
/// optional byte order mark, XML declaration, comments and document type,
/// a root element `document` (any prefix) whose start tag, whole within
/// `head`, has an OpenDocument `mimetype` attribute.
pub(super) fn kind(head: &[u8]) -> Option<Kind> {
    let mut h = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    loop {
        h = h.trim_ascii_start();
        let skip = if h.starts_with(b"<?") {
            memmem::find(h, b"?>")? + 2
        } else if h.starts_with(b"<!--") {
            memmem::find(h, b"-->")? + 3
        } else if h.starts_with(b"<!") {
            memchr::memchr(b'>', h)? + 1
        } else {
            break;
        };
        h = &h[skip..];
    }
    let h = h.strip_prefix(b"<")?;
    let name_end = h
        .iter()
        .position(|b| b.is_ascii_whitespace() || *b == b'>' || *b == b'/')?;
    let name = &h[..name_end];
    if name.rsplit(|&b| b == b':').next()? != b"document" {
        return None;
    }
    let tag = &h[name_end..name_end + memchr::memchr(b'>', &h[name_end..])?];
    odf_mimetype(tag).and_then(super::detect::odf_kind)
}

/// The value of the `mimetype` attribute (any prefix) among `attrs`.
fn odf_mimetype(attrs: &[u8]) -> Option<&[u8]> {
    let mut from = 0;
    while let Some(at) = memmem::find(&attrs[from..], b"mimetype") {
        let at = from + at;
        from = at + 8;
        let before = at.checked_sub(1).map(|i| attrs[i]);
        if !matches!(before, Some(b':') | Some(b' ' | b'\t' | b'\n' | b'\r')) {
            continue;
        }
        let rest = attrs[from..].trim_ascii_start();
        let Some(rest) = rest.strip_prefix(b"=") else {
            continue;
        };
        let rest = rest.trim_ascii_start();
        let quote = *rest.first()?;
        if quote != b'"' && quote != b'\'' {
            return None;
        }
        let end = memchr::memchr(quote, &rest[1..])?;
        return Some(rest[1..1 + end].trim_ascii());
    }
    None
}

/// The text of a flat OpenDocument of kind `kind`, read whole (at most
/// `max_input` bytes).
pub(super) fn extract(kind: Kind, src: &mut dyn Source, budget: &Budget) -> Result<Vec<u8>, Fail> {
    let data = read_input(src, budget)?;
    let dialect = match kind {
        Kind::Ods => &xml::FLAT_ODF_SHEET,
        _ => &xml::FLAT_ODF_TEXT,
    };
    let mut out = Vec::new();
    xml::lines(&data, dialect, &mut out, budget)?;
    Ok(out)
}
