//! XML to lines of text: one streaming pass of quick-xml over a document
//! part, driven by a [`Dialect`] (which elements end a line, which hold the
//! text, which to skip). Shared by docx, pptx, OpenDocument and the XHTML
//! of EPUB; xlsx, which needs its shared strings, uses [`Walker`] too.
//!
//! quick-xml builds no tree and does not recurse, so a deep document costs
//! no stack; the depth is still bounded (`max_depth`) because a document
//! nested thousands deep is not a real one, and the output is counted
//! against `max_bytes` as it grows.

use std::borrow::Cow;

use quick_xml::events::{BytesStart, BytesText, Event};
use quick_xml::Reader;

use super::{Budget, Fail};

/// How a family of XML documents lays out its text (names are local:
/// prefixes are ignored, `w:p` and `text:p` are both `p`).
pub(super) struct Dialect {
    /// Elements that end a line where they start and where they end.
    pub line: &'static [&'static [u8]],
    /// Elements whose end is a cell boundary: a tab.
    pub cell: &'static [&'static [u8]],
    /// Text is taken only inside these (docx `w:t`); empty: anywhere.
    pub text: &'static [&'static [u8]],
    /// Elements that stand for a tab.
    pub tab: &'static [&'static [u8]],
    /// Elements that stand for a line break.
    pub brk: &'static [&'static [u8]],
    /// Elements that stand for spaces, their count in attribute `c`
    /// (OpenDocument `text:s`).
    pub spaces: &'static [&'static [u8]],
    /// Subtrees that are not content (styles, properties, deleted text).
    pub skip: &'static [&'static [u8]],
    /// White space runs are one space (XHTML, OpenDocument); otherwise
    /// kept as written (docx, pptx: `xml:space="preserve"`).
    pub collapse: bool,
    /// Only the inside of this element is read (a flat OpenDocument's
    /// `office:body`: its styles, settings and master pages, which a
    /// package keeps in other members, are not content); `None`: all.
    pub within: Option<&'static [u8]>,
}

/// WordprocessingML (word/document.xml): paragraphs `w:p`, text in `w:t`;
/// run and paragraph properties hold tab stops (`w:tabs/w:tab`), not tabs.
pub(super) const DOCX: Dialect = Dialect {
    line: &[b"p"],
    cell: &[],
    text: &[b"t"],
    tab: &[b"tab"],
    brk: &[b"br", b"cr"],
    spaces: &[],
    skip: &[b"pPr", b"rPr", b"sectPr", b"del"],
    collapse: false,
    within: None,
};

/// PresentationML slides: paragraphs `a:p`, text in `a:t`.
pub(super) const PPTX: Dialect = Dialect {
    line: &[b"p"],
    cell: &[],
    text: &[b"t"],
    tab: &[],
    brk: &[b"br"],
    spaces: &[],
    skip: &[b"pPr", b"rPr", b"endParaRPr", b"tabLst"],
    collapse: false,
    within: None,
};

/// OpenDocument text and presentations (content.xml): paragraphs and
/// headings; styles, scripts, deleted text and speaker notes left out.
pub(super) const ODF_TEXT: Dialect = Dialect {
    line: &[b"p", b"h"],
    cell: &[],
    text: &[],
    tab: &[b"tab"],
    brk: &[b"line-break"],
    spaces: &[b"s"],
    skip: &[
        b"automatic-styles",
        b"font-face-decls",
        b"scripts",
        b"tracked-changes",
        b"annotation",
        b"notes",
    ],
    collapse: true,
    within: None,
};

/// OpenDocument spreadsheets: one line per row, cells separated by tabs.
pub(super) const ODF_SHEET: Dialect = Dialect {
    line: &[b"table-row"],
    cell: &[b"table-cell", b"covered-table-cell"],
    text: &[],
    tab: &[b"tab"],
    brk: &[b"line-break"],
    spaces: &[b"s"],
    skip: &[
        b"automatic-styles",
        b"font-face-decls",
        b"scripts",
        b"annotation",
    ],
    collapse: true,
    within: None,
};

/// A flat OpenDocument text, presentation or drawing (.fodt, .fodp,
/// .fodg): [`ODF_TEXT`] inside `office:body`, the part a package's
/// content.xml holds text in, and text only in paragraphs and headings,
/// where OpenDocument keeps it: writers indent a flat file, and the
/// indentation between elements is not text.
pub(super) const FLAT_ODF_TEXT: Dialect = Dialect {
    text: &[b"p", b"h"],
    within: Some(b"body"),
    ..ODF_TEXT
};

/// A flat OpenDocument spreadsheet (.fods): [`ODF_SHEET`] as
/// [`FLAT_ODF_TEXT`] reads [`ODF_TEXT`].
pub(super) const FLAT_ODF_SHEET: Dialect = Dialect {
    text: &[b"p", b"h"],
    within: Some(b"body"),
    ..ODF_SHEET
};

/// XHTML (EPUB chapters): block elements end lines.
pub(super) const XHTML: Dialect = Dialect {
    line: &[
        b"p",
        b"div",
        b"h1",
        b"h2",
        b"h3",
        b"h4",
        b"h5",
        b"h6",
        b"li",
        b"tr",
        b"blockquote",
        b"pre",
        b"dt",
        b"dd",
        b"caption",
        b"figcaption",
        b"section",
        b"article",
        b"table",
    ],
    cell: &[b"td", b"th"],
    text: &[],
    tab: &[],
    brk: &[b"br", b"hr"],
    spaces: &[],
    skip: &[b"head", b"script", b"style"],
    collapse: true,
    within: None,
};

/// The lines of `xml` in `dialect`, appended to `out`.
pub(super) fn lines(
    xml: &[u8],
    dialect: &Dialect,
    out: &mut Vec<u8>,
    budget: &Budget,
) -> Result<(), Fail> {
    let mut w = Walker::new(xml, budget);
    let mut text = Lines::new(out, dialect.collapse);
    let mut skip_at: Option<usize> = None;
    let mut in_text = 0usize;
    // The depth of the `within` element while inside it.
    let mut within_at: Option<usize> = None;
    while let Some(ev) = w.next()? {
        let outside = dialect.within.is_some() && within_at.is_none();
        match ev {
            Step::Open(e, empty) if outside => {
                if Some(e.local_name().as_ref()) == dialect.within && !empty {
                    within_at = Some(w.depth);
                }
            }
            Step::Close(_) | Step::Text(_) if outside => {}
            Step::Close(_) if skip_at.is_none() && within_at == Some(w.depth + 1) => {
                within_at = None;
            }
            Step::Open(e, empty) => {
                let name = e.local_name();
                let name = name.as_ref();
                if skip_at.is_some() {
                    continue;
                }
                if dialect.skip.contains(&name) {
                    if !empty {
                        skip_at = Some(w.depth);
                    }
                    continue;
                }
                if dialect.line.contains(&name) {
                    text.end_line(budget)?;
                }
                if dialect.tab.contains(&name) {
                    text.push_raw(b"\t");
                } else if dialect.brk.contains(&name) {
                    text.end_line(budget)?;
                } else if dialect.spaces.contains(&name) {
                    text.push_raw(&b" ".repeat(space_count(&e)));
                }
                if empty {
                    close(name, dialect, &mut text, budget)?;
                } else if dialect.text.contains(&name) {
                    in_text += 1;
                }
            }
            Step::Close(name) => {
                if let Some(at) = skip_at {
                    if at == w.depth + 1 {
                        skip_at = None;
                    }
                    continue;
                }
                if dialect.text.contains(&name.as_slice()) {
                    in_text = in_text.saturating_sub(1);
                }
                close(&name, dialect, &mut text, budget)?;
            }
            Step::Text(t) => {
                if skip_at.is_none() && (dialect.text.is_empty() || in_text > 0) {
                    text.push_text(&t);
                }
            }
        }
    }
    if w.depth > 0 {
        return Err(format!(
            "the XML ends inside {} open elements (truncated?)",
            w.depth
        ));
    }
    text.end_line(budget)
}

/// The end of element `name`: a line or a cell ends.
fn close(name: &[u8], dialect: &Dialect, text: &mut Lines, budget: &Budget) -> Result<(), Fail> {
    if dialect.line.contains(&name) {
        text.end_line(budget)?;
    } else if dialect.cell.contains(&name) {
        text.push_raw(b"\t");
    }
    Ok(())
}

/// `text:c` of `text:s`: the number of spaces (1 by default, at most 1000).
fn space_count(e: &BytesStart) -> usize {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == b"c")
        .and_then(|a| std::str::from_utf8(&a.value).ok()?.trim().parse().ok())
        .map_or(1, |n: usize| n.min(1000))
}

/// One step of a document: an element opens (and closes at once when
/// `true`), closes (its local name), or text.
pub(super) enum Step<'a> {
    Open(BytesStart<'a>, bool),
    Close(Vec<u8>),
    Text(Cow<'a, str>),
}

/// quick-xml's events with the depth counted and bounded, the time
/// checked, and text unescaped (the entities of XHTML that XML lacks
/// included).
pub(super) struct Walker<'a, 'b> {
    reader: Reader<&'a [u8]>,
    budget: &'b Budget<'b>,
    pub depth: usize,
    events: u64,
}

impl<'a, 'b> Walker<'a, 'b> {
    pub fn new(xml: &'a [u8], budget: &'b Budget<'b>) -> Self {
        let mut reader = Reader::from_reader(xml);
        reader.config_mut().check_end_names = true;
        Walker {
            reader,
            budget,
            depth: 0,
            events: 0,
        }
    }

    /// The next step, `None` at the end; an error for malformed XML, a
    /// depth over the limit or the deadline passed.
    pub fn next(&mut self) -> Result<Option<Step<'a>>, Fail> {
        loop {
            self.events += 1;
            if self.events.is_multiple_of(4096) {
                self.budget.check_time()?;
            }
            let pos = self.reader.buffer_position();
            let ev = self
                .reader
                .read_event()
                .map_err(|e| format!("malformed XML at byte {pos}: {e}"))?;
            return Ok(Some(match ev {
                Event::Start(e) => {
                    self.depth += 1;
                    if self.depth > self.budget.limits.max_depth {
                        return Err(format!(
                            "XML nested deeper than {} elements",
                            self.budget.limits.max_depth
                        ));
                    }
                    Step::Open(e, false)
                }
                Event::Empty(e) => Step::Open(e, true),
                Event::End(e) => {
                    self.depth = self.depth.saturating_sub(1);
                    Step::Close(e.local_name().as_ref().to_vec())
                }
                Event::Text(t) => Step::Text(unescape(&t)),
                Event::CData(c) => Step::Text(match c.into_inner() {
                    Cow::Borrowed(b) => String::from_utf8_lossy(b),
                    Cow::Owned(b) => Cow::Owned(String::from_utf8_lossy(&b).into_owned()),
                }),
                Event::Eof => return Ok(None),
                _ => continue,
            }));
        }
    }
}

/// Text with its entities resolved; an unknown entity leaves the text as
/// written rather than failing the document.
fn unescape<'a>(t: &BytesText<'a>) -> Cow<'a, str> {
    t.unescape_with(html_entity)
        .unwrap_or_else(|_| Cow::Owned(String::from_utf8_lossy(t.as_ref()).into_owned()))
}

/// XML's five entities (`&lt;` ...) and the named entities of HTML that
/// EPUB chapters use most. (quick-xml's `unescape_with` asks the resolver
/// for every named entity, the predefined ones included: without them a
/// text holding `&lt;` was kept as written, escaped.)
fn html_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "nbsp" => "\u{a0}",
        "mdash" => "\u{2014}",
        "ndash" => "\u{2013}",
        "hellip" => "\u{2026}",
        "lsquo" => "\u{2018}",
        "rsquo" => "\u{2019}",
        "ldquo" => "\u{201c}",
        "rdquo" => "\u{201d}",
        "copy" => "\u{a9}",
        _ => return quick_xml::escape::resolve_predefined_entity(name),
    })
}

/// Output text cut into lines: each line trimmed, empty lines left out,
/// white space collapsed when asked.
pub(super) struct Lines<'o> {
    out: &'o mut Vec<u8>,
    line: Vec<u8>,
    collapse: bool,
}

impl<'o> Lines<'o> {
    pub fn new(out: &'o mut Vec<u8>, collapse: bool) -> Self {
        Lines {
            out,
            line: Vec::new(),
            collapse,
        }
    }

    /// Text as written in the document (collapsed if asked; line breaks in
    /// it are spaces when collapsing, new lines otherwise).
    pub fn push_text(&mut self, t: &str) {
        for &b in t.as_bytes() {
            if self.collapse && b.is_ascii_whitespace() {
                if !self.line.is_empty() && !self.line.ends_with(b" ") {
                    self.line.push(b' ');
                }
            } else if b == b'\n' {
                self.flush();
            } else if b != b'\r' {
                self.line.push(b);
            }
        }
    }

    /// Bytes pushed as they are (tabs, counted spaces).
    pub fn push_raw(&mut self, b: &[u8]) {
        self.line.extend_from_slice(b);
    }

    /// Ends the current line, checking the output's size.
    pub fn end_line(&mut self, budget: &Budget) -> Result<(), Fail> {
        self.flush();
        budget.check_size(self.out.len() as u64, "the text")
    }

    fn flush(&mut self) {
        let t = self.line.trim_ascii();
        if !t.is_empty() {
            self.out.extend_from_slice(t);
            self.out.push(b'\n');
        }
        self.line.clear();
    }
}
