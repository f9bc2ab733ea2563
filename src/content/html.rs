//! HTML to text, tolerant of anything: the view of a stand-alone HTML
//! document, of an HTML-only mail body and of an EPUB chapter that is not
//! well-formed XML. Tags are dropped, block tags and `<br>` end lines,
//! `<script>`, `<style>`, `<head>` and comments are left out, entities are
//! decoded, white space collapses.
//!
//! Which HTML files are documents ([`is_document`]): a page saved by a
//! word processor, a converter or a mail client carries its text and its
//! style in one file, and a reviewer asks whether it holds the words of a
//! .docx or a PDF. A page of a generated site (Sphinx, Javadoc, Doxygen,
//! MkDocs) loads the site's style sheets and scripts: its theme is shared
//! by every page and handled on the raw bytes (`--site-names`), so it
//! keeps its raw view; so does a template (Django, Jinja, JSP, PHP), which
//! is code.
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

/// Whether a file that starts with `head` (its first bytes, up to
/// 8 KiB) is a stand-alone HTML document, compared as its text: it opens
/// as HTML (`<!DOCTYPE html` or `<html`, after a byte-order mark, white
/// space, an XML declaration and comments), loads no style sheet and
/// runs no script (no `<link rel=stylesheet>`, no `<script>`: a page that
/// runs code is an application's or a site's, a saved document has none)
/// and holds no template syntax (`{%`, `{{`, `<%`, `<?php`).
pub(super) fn is_document(head: &[u8]) -> bool {
    let Some(rest) = after_prolog(head) else {
        return false;
    };
    let ends_name = |at: usize| {
        rest.get(at)
            .is_none_or(|b| b.is_ascii_whitespace() || *b == b'>')
    };
    let opens = (starts_with_ci(rest, b"<!doctype html") && ends_name(14))
        || (starts_with_ci(rest, b"<html") && ends_name(5));
    opens && !loads_files(head) && !has_template_syntax(head)
}

/// `head` after a byte-order mark, white space, an XML declaration and
/// comments; `None` when one of them does not end in it.
fn after_prolog(head: &[u8]) -> Option<&[u8]> {
    let mut rest = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    loop {
        rest = rest.trim_ascii_start();
        let close: &[u8] = if rest.starts_with(b"<?xml") {
            b"?>"
        } else if rest.starts_with(b"<!--") {
            b"-->"
        } else {
            return Some(rest);
        };
        let end = memmem::find(&rest[4..], close)?;
        rest = &rest[4 + end + close.len()..];
    }
}

fn starts_with_ci(s: &[u8], prefix: &[u8]) -> bool {
    s.get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
}

/// Whether `head` has a `<link>` to a style sheet or a `<script>`: the
/// page loads its site's files or runs code.
fn loads_files(head: &[u8]) -> bool {
    memchr::memchr_iter(b'<', head).any(|i| {
        let end = memchr::memchr(b'>', &head[i..]).map_or(head.len(), |k| i + k);
        let tag = head[i + 1..end].to_ascii_lowercase();
        match tag_name(&tag).as_slice() {
            b"link" => memmem::find(&tag, b"stylesheet").is_some(),
            b"script" => !tag.starts_with(b"/"),
            _ => false,
        }
    })
}

/// Whether `head` is a template's: a tag that holds template syntax
/// (`<a href="{{ url }}">`, `<% ... %>`, `<?php ... ?>`), or a text
/// between two tags that is nothing but template tags (`{% block %}`,
/// `{{ title }}`). A document that explains templates quotes them inside
/// its sentences, which stay text.
fn has_template_syntax(head: &[u8]) -> bool {
    let mut i = 0;
    while i < head.len() {
        let lt = memchr::memchr(b'<', &head[i..]).map_or(head.len(), |k| i + k);
        if only_template_tags(&head[i..lt]) {
            return true;
        }
        if lt == head.len() {
            return false;
        }
        let gt = memchr::memchr(b'>', &head[lt..]).map_or(head.len(), |k| lt + k + 1);
        let tag = &head[lt..gt];
        if tag.starts_with(b"<%")
            || tag.starts_with(b"<?php")
            || memmem::find(tag, b"{{").is_some()
            || memmem::find(tag, b"{%").is_some()
        {
            return true;
        }
        i = gt;
    }
    false
}

/// Whether `text` is one or more `{% ... %}` and `{{ ... }}`, with white
/// space around them and nothing else.
fn only_template_tags(text: &[u8]) -> bool {
    let mut rest = text.trim_ascii();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let close: &[u8] = if rest.starts_with(b"{%") {
            b"%}"
        } else if rest.starts_with(b"{{") {
            b"}}"
        } else {
            return false;
        };
        match memmem::find(&rest[2..], close) {
            Some(k) => rest = rest[2 + k + 2..].trim_ascii_start(),
            None => return false,
        }
    }
    true
}

/// A stand-alone document as UTF-8: as it is when it is valid UTF-8, else
/// decoded by the charset its head declares (`<meta charset=...>` or
/// `content="text/html; charset=..."`), or as windows-1252, HTML's
/// default. Word saves its web pages in windows-1252: read as UTF-8, every
/// curly apostrophe would be a replacement character and no sentence with
/// one would be its .docx's.
pub(super) fn decoded(html: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if std::str::from_utf8(html).is_ok() {
        return std::borrow::Cow::Borrowed(html);
    }
    let head = &html[..html.len().min(super::detect::HEAD)];
    let encoding = declared_charset(head)
        .and_then(encoding_rs::Encoding::for_label)
        .unwrap_or(encoding_rs::WINDOWS_1252);
    let (text, _, _) = encoding.decode(html);
    std::borrow::Cow::Owned(text.into_owned().into_bytes())
}

/// The label after the first `charset=` of `head`, quotes left out.
fn declared_charset(head: &[u8]) -> Option<&[u8]> {
    let at = head
        .windows(8)
        .position(|w| w.eq_ignore_ascii_case(b"charset="))?
        + 8;
    let rest = &head[at..];
    let rest = rest
        .strip_prefix(b"\"")
        .or_else(|| rest.strip_prefix(b"'"))
        .unwrap_or(rest);
    let end = rest
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || b"-_:.".contains(b)))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_saved_as_documents_are_documents() {
        for page in [
            &b"<!DOCTYPE html>\n<html><head><style>p{margin:0}</style></head><body><p>Hi.</p>"[..],
            b"\xef\xbb\xbf  <!-- saved -->\n<HTML lang=en><BODY>Hi.",
            b"<?xml version=\"1.0\"?>\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\">",
            // A document that explains templates quotes them in its text.
            b"<!DOCTYPE html><html><body><p>Write {{ name }} to print a variable, and \
              {% if %} to test it.</p><p>{{ alone }} and a word.</p>",
            // Word's export links its own parts, no style sheet.
            b"<html xmlns:o=\"urn:schemas-microsoft-com:office:office\">\n<head>\
              <link rel=File-List href=\"letter_files/filelist.xml\"><style>p.MsoNormal{}</style>",
        ] {
            assert!(is_document(page), "{}", String::from_utf8_lossy(page));
        }
    }

    #[test]
    fn site_pages_templates_and_other_markup_are_not_documents() {
        for page in [
            // A generated site's page loads the theme's files.
            &b"<!DOCTYPE html>\n<html><head><link rel=\"stylesheet\" href=\"_static/basic.css\">"[..],
            b"<!DOCTYPE html><html><head><LINK HREF=\"tabs.css\" REL=\"StyleSheet\">",
            b"<!DOCTYPE html><html><head><script type=\"text/javascript\" src=\"../script.js\"></script>",
            // A page that runs code is an application's.
            b"<!doctype html><html><head><script>var x = 1;</script></head>",
            // Templates are code.
            b"<!DOCTYPE html>\n<html><head><title>{% block title %}{% endblock %}</title>",
            b"<!DOCTYPE html><html><body>{{ user.name }}",
            b"<!DOCTYPE html><html><body><p>\n  {% csrf_token %}\n  {{ form }} </p>",
            b"<!DOCTYPE html><html><body><a href=\"{% url 'home' %}\">Home</a>",
            b"<!DOCTYPE html><html><body><% out.println(1); %>",
            b"<html><body><?php echo 1; ?>",
            // Not HTML at its start, or not HTML at all.
            b"<p>A fragment.</p>",
            b"{% extends \"base.html\" %}\n<!DOCTYPE html>",
            b"<htmlx>",
            b"<!DOCTYPE htmlfoo>",
            b"<!-- never closed <html>",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>",
            b"",
        ] {
            assert!(!is_document(page), "{}", String::from_utf8_lossy(page));
        }
    }

    #[test]
    fn a_documents_text_is_its_blocks_a_line_each() {
        let page = b"<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head>\n\
            <body><h1>Terms</h1><p>The first\n  paragraph &amp; its <b>bold</b> words.</p>\
            <style>.no{}</style><!-- <p>no</p> --><ul><li>One</li><li>Two&nbsp;items</li></ul></body></html>";
        let limits = crate::content::Limits::default();
        let v = crate::content::view(page, &limits);
        assert_eq!(v.kind, crate::content::Kind::Html);
        assert_eq!(
            String::from_utf8(v.bytes).unwrap(),
            "Terms\nThe first paragraph & its bold words.\nOne\nTwo items\n"
        );
    }

    /// A page saved in windows-1252 reads as its words, declared or not;
    /// another declared charset is honoured; UTF-8 is left as it is.
    #[test]
    fn a_page_is_read_in_its_charset() {
        let text_of = |page: &[u8]| {
            let limits = crate::content::Limits::default();
            let budget = Budget::new(&limits);
            let mut out = Vec::new();
            text(&decoded(page), &mut out, &budget).unwrap();
            String::from_utf8(out).unwrap()
        };
        let word = b"<html><head><meta http-equiv=Content-Type content=\"text/html; \
                     charset=windows-1252\"></head><body><p>Don\x92t pay \x80 5.</p>";
        assert_eq!(text_of(word), "Don\u{2019}t pay \u{20ac} 5.\n");
        assert_eq!(text_of(b"<html><body><p>Don\x92t.</p>"), "Don\u{2019}t.\n");
        assert_eq!(
            text_of(b"<html><head><meta charset='iso-8859-15'></head><p>\xa4 caf\xe9</p>"),
            "\u{20ac} caf\u{e9}\n"
        );
        assert_eq!(
            text_of("<html><p>caf\u{e9} \u{2019}</p>".as_bytes()),
            "caf\u{e9} \u{2019}\n"
        );
    }

    /// scripts/quality/htmltext.py (the truth's reader) checks the same
    /// digests of the same page: entities, hidden blocks, comments, CRLF,
    /// upper-case tags and an invalid byte read alike in both. (The page
    /// runs a script, so it is no document by [`is_document`]: its text is
    /// checked here as a mail body's or an EPUB chapter's would be.)
    #[test]
    fn the_sample_page_reads_as_the_truth_reads_it() {
        use md5::{Digest as _, Md5};
        let page = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/documents/page.html"),
        )
        .unwrap();
        assert!(!is_document(&page));
        let limits = crate::content::Limits::default();
        let budget = Budget::new(&limits);
        let mut text_out = Vec::new();
        text(&page, &mut text_out, &budget).unwrap();
        let sentences = crate::content::prose::sentences(&text_out);
        for (bytes, want) in [
            (&text_out, "ce6a4840dd14754960baadc4d2427f6d 353"),
            (&sentences, "5bd1ba1f870b3f7887abc5f33ed7f11b 353"),
        ] {
            let got = format!("{:x} {}", Md5::digest(bytes), bytes.len());
            assert_eq!(got, want, "{}", String::from_utf8_lossy(bytes));
        }
    }
}
