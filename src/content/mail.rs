//! E-mail messages (RFC 5322 with MIME, RFC 2045-2047): the view is the
//! headers a reader compares (From, To, Date, Subject: unfolded, encoded
//! words decoded, white space collapsed) and then the decoded text bodies
//! in order (transfer encoding undone, charset converted to UTF-8). The
//! HTML bodies are used, as their text, only when the message has no plain
//! text body (the usual multipart/alternative holds both). Routing headers
//! (Received, Message-ID, DKIM) differ between two copies of one message
//! and are not content. Attachments are not in the view: each one is a
//! member of the message ([`attachments`], read by `super::archive` like a
//! zip's members), an entry of its own compared by its own view, so that
//! an attached document is found as a copy or a version of a loose one.
//!
//! Bounded: the message is in memory (at most `max_input`), parts are
//! counted (`max_members`) and nested at most `max_depth` deep, the output
//! at most `max_bytes`.

use super::html;
use super::{Budget, Fail};

/// The headers kept, in the order written.
const KEPT: [(&str, &str); 4] = [
    ("from", "From"),
    ("to", "To"),
    ("date", "Date"),
    ("subject", "Subject"),
];

/// The message without an mbox "From " line, which is not a header.
fn without_from_line(data: &[u8]) -> &[u8] {
    match data.starts_with(b"From ") {
        true => memchr::memchr(b'\n', data).map_or(&data[..0], |i| &data[i + 1..]),
        false => data,
    }
}

pub(super) fn extract(data: &[u8], budget: &Budget) -> Result<Vec<u8>, Fail> {
    let (headers, body) = split_headers(without_from_line(data));
    let mut out = Vec::new();
    for (key, label) in KEPT {
        if let Some(v) = header(&headers, key) {
            out.extend_from_slice(format!("{label}: {}\n", decode_words(v)).as_bytes());
        }
    }
    let mut bodies = Bodies::default();
    walk(&headers, body, 0, &mut bodies, budget)?;
    let texts = match bodies.plain.is_empty() {
        true => bodies.html,
        false => bodies.plain,
    };
    // Lines trimmed, empty lines left out, as every view: a message and a
    // document holding the same paragraphs have the same lines.
    for t in texts {
        for line in t.split(|&b| b == b'\n') {
            let line = line.trim_ascii();
            if !line.is_empty() {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        }
        budget.check_size(out.len() as u64, "the text")?;
    }
    Ok(out)
}

/// Hand each attachment of the message `data` to `each`, in message
/// order: the name it was sent with (`None` without one; see
/// [`member_name`]) and its bytes, transfer encoding undone (never larger
/// than the encoded part, so at most the message's size). An attachment
/// is a part that says so (`Content-Disposition: attachment`, a text
/// included) or any leaf part that is not a text or HTML body (a PDF, an
/// image, a message/rfc822 sent as a file); the parts of a message
/// forwarded inline are walked for theirs. `each` returning false stops
/// the walk. The error: why the walk stopped (more than `max_members`
/// parts, nested deeper than `max_depth`, a multipart without boundary,
/// the deadline), the attachments before it handed out.
pub(super) fn attachments(
    data: &[u8],
    budget: &Budget,
    each: &mut dyn FnMut(Option<String>, Vec<u8>) -> bool,
) -> Result<(), Fail> {
    let (headers, body) = split_headers(without_from_line(data));
    let mut found = Bodies {
        attach: Some(each),
        ..Bodies::default()
    };
    walk(&headers, body, 0, &mut found, budget)
}

/// What one walk collects: the text bodies, plain and HTML (as text), in
/// message order (the view), or, when `attach` is set, the attachments
/// handed to it (the members) and no body.
#[derive(Default)]
struct Bodies<'a> {
    plain: Vec<Vec<u8>>,
    html: Vec<Vec<u8>>,
    parts: usize,
    attach: Option<&'a mut dyn FnMut(Option<String>, Vec<u8>) -> bool>,
    /// `attach` asked to stop.
    stopped: bool,
}

type Headers = Vec<(String, String)>;

/// One entity (the message or a part): its text if it is text, its parts
/// if it is multipart, the message inside a message/rfc822.
fn walk(
    h: &Headers,
    body: &[u8],
    depth: usize,
    found: &mut Bodies,
    budget: &Budget,
) -> Result<(), Fail> {
    found.parts += 1;
    if found.parts > budget.limits.max_members {
        return Err(format!(
            "more than {} MIME parts",
            budget.limits.max_members
        ));
    }
    if depth > budget.limits.max_depth {
        return Err(format!(
            "MIME parts nested deeper than {}",
            budget.limits.max_depth
        ));
    }
    budget.check_time()?;
    let (mime, params) = content_type(h);
    let attachment = header(h, "content-disposition").is_some_and(|d| {
        d.trim_start()
            .to_ascii_lowercase()
            .starts_with("attachment")
    });
    let text = mime == "text/plain" || mime == "text/html";
    if mime.starts_with("multipart/") {
        let boundary = param(&params, "boundary").ok_or("a multipart part without boundary")?;
        for part in split_parts(body, boundary.as_bytes()) {
            if found.stopped {
                break;
            }
            let (ph, pb) = split_headers(part);
            walk(&ph, pb, depth + 1, found, budget)?;
        }
    } else if mime == "message/rfc822" && !attachment {
        let (mh, mb) = split_headers(body);
        walk(&mh, mb, depth + 1, found, budget)?;
    } else if let Some(each) = found.attach.as_mut() {
        if !found.stopped && (attachment || !text) {
            let bytes = transfer_decode(header(h, "content-transfer-encoding"), body);
            found.stopped = !each(attachment_name(h), bytes);
        }
    } else if !attachment && text {
        let raw = transfer_decode(header(h, "content-transfer-encoding"), body);
        budget.check_size(raw.len() as u64, "a MIME part")?;
        let text = charset_decode(param(&params, "charset"), &raw);
        let text = text.replace("\r\n", "\n");
        if mime == "text/plain" {
            found.plain.push(text.into_bytes());
        } else {
            let mut t = Vec::new();
            html::text(text.as_bytes(), &mut t, budget)?;
            found.html.push(t);
        }
    }
    Ok(())
}

/// The name an attachment was sent with: the Content-Disposition's
/// `filename`, else the Content-Type's `name` (each RFC 2231's extended
/// and continued forms first), encoded words decoded.
fn attachment_name(h: &Headers) -> Option<String> {
    let of = |field: &str, key: &str| {
        header(h, field).and_then(|v| extended_param(&quoted_params(v), key))
    };
    of("content-disposition", "filename")
        .or_else(|| of("content-type", "name"))
        .map(|n| decode_words(&n))
}

/// Longest member name made from an attachment's name, in bytes.
const MAX_NAME: usize = 255;

/// An attachment's name as its member name: its last path component
/// (RFC 2183: a receiver ignores the folders a sender names, so
/// `../../etc/passwd` is `passwd` and `C:\x\a.txt` is `a.txt`), control
/// characters as `_`, at most [`MAX_NAME`] bytes (its extension kept);
/// `attachment-N` (N its number in the message, from 1) when none is
/// left (no name, `.`, `..`).
/// Why not kept as sent, as a zip member's name is: a zip's names are
/// its folder tree, which a reviewer compares with folders on disk; a
/// mail client saves an attachment under its base name only.
pub(super) fn member_name(raw: Option<&str>, n: usize) -> String {
    let base = raw.unwrap_or("").rsplit(['/', '\\']).next().unwrap_or("");
    let clean: String = base
        .chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect();
    match clean.trim() {
        "" | "." | ".." => format!("attachment-{n}"),
        c if c.len() > MAX_NAME => shortened(c),
        c => c.to_string(),
    }
}

/// `name` cut to [`MAX_NAME`] bytes at a character boundary, its
/// extension (up to 16 bytes) kept: a reviewer still sees `.pdf`.
fn shortened(name: &str) -> String {
    let ext = match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 16 => &name[i..],
        _ => "",
    };
    let mut end = MAX_NAME - ext.len();
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ext}", &name[..end])
}

/// The parameters of a header value (`type; k=v; k="v; w"`), names
/// lower-cased, quotes and their backslash escapes undone: a quoted
/// file name may hold `;`.
fn quoted_params(v: &str) -> Vec<(String, String)> {
    let mut fields = vec![String::new()];
    let (mut quoted, mut escaped) = (false, false);
    for c in v.chars() {
        let cur = fields.last_mut().expect("one field at least");
        match c {
            _ if escaped => {
                cur.push(c);
                escaped = false;
            }
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => fields.push(String::new()),
            _ => cur.push(c),
        }
    }
    fields
        .iter()
        .skip(1)
        .filter_map(|f| {
            let (k, v) = f.split_once('=')?;
            Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect()
}

/// Parameter `key` in RFC 2231's forms, the first found of: `key*`
/// (`charset'lang'percent-encoded`), `key*0`, `key*1*`, ... (continued,
/// in number order), then plain `key`.
fn extended_param(params: &[(String, String)], key: &str) -> Option<String> {
    let star = format!("{key}*");
    if let Some(v) = param(params, &star) {
        let (charset, bytes) = rfc2231_value(v, true);
        return Some(charset_decode(charset, &bytes));
    }
    let mut segments: Vec<(u32, bool, &str)> = params
        .iter()
        .filter_map(|(k, v)| {
            let rest = k.strip_prefix(&star)?;
            let (num, ext) = rest.strip_suffix('*').map_or((rest, false), |n| (n, true));
            Some((num.parse().ok()?, ext, v.as_str()))
        })
        .collect();
    if segments.is_empty() {
        return param(params, key).map(String::from);
    }
    segments.sort_by_key(|s| s.0);
    let (mut charset, mut bytes) = (None, Vec::new());
    for (i, &(_, ext, v)) in segments.iter().enumerate() {
        if ext {
            let (c, b) = rfc2231_value(v, i == 0);
            charset = charset.or(c);
            bytes.extend_from_slice(&b);
        } else {
            bytes.extend_from_slice(v.as_bytes());
        }
    }
    Some(charset_decode(charset, &bytes))
}

/// An RFC 2231 extended value: its charset (in the `first` segment only)
/// and its percent-decoded bytes.
fn rfc2231_value(v: &str, first: bool) -> (Option<&str>, Vec<u8>) {
    let (charset, text) = match first {
        true => match v.splitn(3, '\'').collect::<Vec<_>>()[..] {
            [c, _, t] => (Some(c), t),
            _ => (None, v),
        },
        false => (None, v),
    };
    let s = text.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match (
            s[i],
            s.get(i + 1).and_then(|&c| hex(c)),
            s.get(i + 2).and_then(|&c| hex(c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    (charset.filter(|c| !c.is_empty()), out)
}

/// Header fields (names lower-cased, folded lines joined) and the body
/// after the first empty line.
fn split_headers(data: &[u8]) -> (Headers, &[u8]) {
    let mut headers: Headers = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let end = memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |i| pos + i);
        let line = &data[pos..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        pos = (end + 1).min(data.len());
        if line.is_empty() {
            return (headers, &data[pos..]);
        }
        let text = String::from_utf8_lossy(line);
        if line[0] == b' ' || line[0] == b'\t' {
            if let Some(last) = headers.last_mut() {
                last.1.push(' ');
                last.1.push_str(text.trim());
            }
        } else if let Some((k, v)) = text.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    (headers, &data[data.len()..])
}

/// The first field named `key` (lower case).
fn header<'h>(h: &'h Headers, key: &str) -> Option<&'h str> {
    h.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// The MIME type (lower case; text/plain by default, RFC 2045) and its
/// parameters.
fn content_type(h: &Headers) -> (String, Vec<(String, String)>) {
    let Some(v) = header(h, "content-type") else {
        return ("text/plain".into(), Vec::new());
    };
    let mut it = v.split(';');
    let mime = it.next().unwrap_or("").trim().to_ascii_lowercase();
    let params = it
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            Some((
                k.trim().to_ascii_lowercase(),
                v.trim().trim_matches('"').to_string(),
            ))
        })
        .collect();
    (mime, params)
}

fn param<'p>(params: &'p [(String, String)], key: &str) -> Option<&'p str> {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The parts between `--boundary` lines, up to `--boundary--`.
fn split_parts<'a>(body: &'a [u8], boundary: &[u8]) -> Vec<&'a [u8]> {
    let mut delim = b"--".to_vec();
    delim.extend_from_slice(boundary);
    let mut parts = Vec::new();
    let mut start: Option<usize> = None;
    let mut pos = 0;
    while pos < body.len() {
        let end = memchr::memchr(b'\n', &body[pos..]).map_or(body.len(), |i| pos + i);
        let line = body[pos..end].trim_ascii_end();
        if line.starts_with(&delim) {
            if let Some(s) = start {
                // The line break before the delimiter belongs to it.
                let stop = pos.saturating_sub(1);
                let stop = if stop > s && body[stop - 1] == b'\r' {
                    stop - 1
                } else {
                    stop
                };
                parts.push(&body[s..stop.max(s)]);
            }
            if line[delim.len()..].starts_with(b"--") {
                return parts;
            }
            start = Some((end + 1).min(body.len()));
        }
        pos = end + 1;
    }
    if let Some(s) = start {
        parts.push(&body[s.min(body.len())..]);
    }
    parts
}

/// The body with its Content-Transfer-Encoding undone.
fn transfer_decode(encoding: Option<&str>, body: &[u8]) -> Vec<u8> {
    match encoding.map(|e| e.trim().to_ascii_lowercase()).as_deref() {
        Some("base64") => base64(body),
        Some("quoted-printable") => quoted_printable(body, false),
        _ => body.to_vec(),
    }
}

/// Base64, ignoring what is not in its alphabet (line breaks, junk).
fn base64(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// Quoted-printable (`=XX`, soft line breaks); `underscore_space` for the
/// Q encoding of encoded words.
fn quoted_printable(s: &[u8], underscore_space: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let hex = |c: u8| (c as char).to_digit(16);
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'=' if s[i + 1..].starts_with(b"\r\n") => i += 3,
            b'=' if s[i + 1..].starts_with(b"\n") => i += 2,
            b'=' if i + 2 < s.len() => match (hex(s[i + 1]), hex(s[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                _ => {
                    out.push(b'=');
                    i += 1;
                }
            },
            b'_' if underscore_space => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Bytes in `charset` as a string (UTF-8 when the label is missing or
/// unknown; malformed sequences replaced).
fn charset_decode(charset: Option<&str>, bytes: &[u8]) -> String {
    let enc = charset
        .and_then(|c| encoding_rs::Encoding::for_label(c.trim().as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    enc.decode_without_bom_handling(bytes).0.into_owned()
}

/// A header value with its RFC 2047 encoded words (`=?utf-8?B?...?=`)
/// decoded, the white space between two encoded words dropped, and white
/// space runs collapsed.
fn decode_words(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    let mut pending_space = String::new();
    let mut last_was_word = false;
    while !rest.is_empty() {
        if let Some((decoded, len)) = encoded_word(rest) {
            if !last_was_word {
                out.push_str(&pending_space);
            }
            pending_space.clear();
            out.push_str(&decoded);
            rest = &rest[len..];
            last_was_word = true;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            pending_space.push(c);
        } else {
            out.push_str(&pending_space);
            pending_space.clear();
            out.push(c);
            last_was_word = false;
        }
        rest = &rest[c.len_utf8()..];
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The encoded word at the start of `s` and its length.
fn encoded_word(s: &str) -> Option<(String, usize)> {
    let inner = s.strip_prefix("=?")?;
    let end = inner.find("?=")?;
    // "?=" may close the encoding part too early for Q words ending in "?".
    let word = &inner[..end];
    let mut f = word.splitn(3, '?');
    let (charset, enc, text) = (f.next()?, f.next()?, f.next()?);
    let bytes = match enc {
        "B" | "b" => base64(text.as_bytes()),
        "Q" | "q" => quoted_printable(text.as_bytes(), true),
        _ => return None,
    };
    let charset = charset.split('*').next().unwrap_or(charset);
    Some((charset_decode(Some(charset), &bytes), 2 + end + 2))
}
