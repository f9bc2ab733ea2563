//! HTML to text, tolerant of anything: the view of an HTML-only mail body
//! and of an EPUB chapter that is not well-formed XML. Tags are dropped,
//! block tags and `<br>` end lines, `<script>`, `<style>`, `<head>` and
//! comments are left out, entities are decoded, white space collapses.
//! (A stand-alone .html file keeps its raw view: its markup is what its
//! author wrote and the chunks compare it well.)
//!
//! A single pass over the bytes, linear in the input, no recursion.

use memchr::memmem;

use super::xml::Lines;
use super::{Budget, Fail};

/// Tags whose start or end ends a line.
const BLOCKS: [&[u8]; 24] = [
    b"p",
    b"div",
    b"br",
    b"hr",
    b"li",
    b"ul",
    b"ol",
    b"tr",
    b"table",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"blockquote",
    b"pre",
    b"dt",
    b"dd",
    b"section",
    b"article",
    b"title",
    b"td",
    b"th",
];

/// Tags whose whole content is left out.
const HIDDEN: [&[u8]; 3] = [b"script", b"style", b"head"];

/// The text of `html`, appended to `out` as lines.
pub(super) fn text(html: &[u8], out: &mut Vec<u8>, budget: &Budget) -> Result<(), Fail> {
    let mut lines = Lines::new(out, true);
    let mut i = 0;
    let mut run = Vec::new();
    while i < html.len() {
        if html[i] != b'<' {
            let end = memchr::memchr(b'<', &html[i..]).map_or(html.len(), |k| i + k);
            run.clear();
            decode_entities(&html[i..end], &mut run);
            lines.push_text(&String::from_utf8_lossy(&run));
            i = end;
            continue;
        }
        if html[i..].starts_with(b"<!--") {
            i = memmem::find(&html[i + 4..], b"-->").map_or(html.len(), |k| i + 4 + k + 3);
            continue;
        }
        let end = memchr::memchr(b'>', &html[i..]).map_or(html.len(), |k| i + k + 1);
        let name = tag_name(&html[i + 1..end]);
        if BLOCKS.contains(&name.as_slice()) {
            lines.end_line(budget)?;
        }
        let opening = html.get(i + 1) != Some(&b'/') && !html[..end].ends_with(b"/>");
        i = end;
        if opening && HIDDEN.contains(&name.as_slice()) {
            i = skip_hidden(html, i, &name);
        }
    }
    lines.end_line(budget)
}

/// The position after `</name ...>` from `from` (any case), or the end
/// of the input.
fn skip_hidden(html: &[u8], from: usize, name: &[u8]) -> usize {
    for k in memmem::find_iter(&html[from..], b"</") {
        let at = from + k + 2;
        let candidate = html.get(at..at + name.len());
        if candidate.is_some_and(|c| c.eq_ignore_ascii_case(name)) {
            return memchr::memchr(b'>', &html[at..]).map_or(html.len(), |e| at + e + 1);
        }
    }
    html.len()
}

/// The lower-case name of the tag in `inner` (`/P class=x>` gives `p`).
fn tag_name(inner: &[u8]) -> Vec<u8> {
    let inner = inner.strip_prefix(b"/").unwrap_or(inner);
    inner
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .map(|b| b.to_ascii_lowercase())
        .collect()
}

/// `&amp;`, `&#233;`, `&#xE9;` and the common named entities decoded; an
/// unknown one kept as written.
pub(super) fn decode_entities(s: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'&' {
            let semi = s[i..].iter().take(12).position(|&b| b == b';');
            if let Some(ch) = semi.and_then(|k| entity(&s[i + 1..i + k])) {
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i += semi.unwrap_or(0) + 1;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
}

fn entity(name: &[u8]) -> Option<char> {
    if let Some(num) = name.strip_prefix(b"#") {
        let s = std::str::from_utf8(num).ok()?;
        let code = match s.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => s.parse().ok()?,
        };
        return char::from_u32(code);
    }
    Some(match name {
        b"amp" => '&',
        b"lt" => '<',
        b"gt" => '>',
        b"quot" => '"',
        b"apos" => '\'',
        b"nbsp" => ' ',
        b"mdash" => '\u{2014}',
        b"ndash" => '\u{2013}',
        b"hellip" => '\u{2026}',
        b"lsquo" => '\u{2018}',
        b"rsquo" => '\u{2019}',
        b"ldquo" => '\u{201c}',
        b"rdquo" => '\u{201d}',
        b"copy" => '\u{a9}',
        b"eacute" => '\u{e9}',
        b"egrave" => '\u{e8}',
        b"agrave" => '\u{e0}',
        b"uuml" => '\u{fc}',
        b"ouml" => '\u{f6}',
        b"auml" => '\u{e4}',
        _ => return None,
    })
}
