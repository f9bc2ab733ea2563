//! Zip packages of XML: OOXML (docx, xlsx, pptx), OpenDocument (odt, ods,
//! odp) and EPUB. Only the parts that hold the text are read, in reading
//! order: word/document.xml; the worksheets in their number order with the
//! shared strings; the slides in their number order; content.xml; the
//! EPUB spine. Styles, settings, themes, fonts and images are not content,
//! which is why two documents from one template stop looking alike.
//!
//! Every member read is bounded: its declared and its actual size (both
//! against `max_bytes`), its expansion ratio, the bytes read from the whole
//! package (`max_input`), and the number of members (`max_members`). An
//! encrypted member, a bad CRC or a truncated package is an error, so the
//! file keeps its raw view with the zip reader's reason.

use std::collections::HashMap;

use zip::ZipArchive;

use super::xml::{self, Lines, Step, Walker};
use super::{html, read_bounded, Budget, Fail, Kind, Source};

pub(super) fn extract(kind: Kind, src: &mut dyn Source, budget: &Budget) -> Result<Vec<u8>, Fail> {
    let mut pkg = Package::open(src, budget)?;
    let mut out = Vec::new();
    match kind {
        Kind::Docx => {
            let main = docx_main(&mut pkg)?;
            xml::lines(&pkg.member(&main)?, &xml::DOCX, &mut out, budget)?
        }
        Kind::Pptx => {
            for name in pkg.numbered("ppt/slides/slide", ".xml") {
                xml::lines(&pkg.member(&name)?, &xml::PPTX, &mut out, budget)?;
            }
        }
        Kind::Xlsx => xlsx(&mut pkg, &mut out, budget)?,
        Kind::Odt | Kind::Odp | Kind::Odg => xml::lines(
            &pkg.member("content.xml")?,
            &xml::ODF_TEXT,
            &mut out,
            budget,
        )?,
        Kind::Ods => xml::lines(
            &pkg.member("content.xml")?,
            &xml::ODF_SHEET,
            &mut out,
            budget,
        )?,
        Kind::Epub => epub(&mut pkg, &mut out, budget)?,
        _ => return Err(format!("{} is not a zip package", kind.name())),
    }
    Ok(out)
}

/// A zip archive and the bytes read from it so far.
struct Package<'s, 'b> {
    zip: ZipArchive<&'s mut dyn Source>,
    budget: &'b Budget<'b>,
    read: u64,
}

impl<'s, 'b> Package<'s, 'b> {
    fn open(src: &'s mut dyn Source, budget: &'b Budget<'b>) -> Result<Self, Fail> {
        let zip = ZipArchive::new(src).map_err(|e| format!("bad zip: {e}"))?;
        if zip.len() > budget.limits.max_members {
            return Err(format!(
                "{} members, more than the limit of {}",
                zip.len(),
                budget.limits.max_members
            ));
        }
        Ok(Package {
            zip,
            budget,
            read: 0,
        })
    }

    /// The bytes of member `name`, bounded.
    fn member(&mut self, name: &str) -> Result<Vec<u8>, Fail> {
        let limits = self.budget.limits;
        let mut f = self
            .zip
            .by_name(name)
            .map_err(|e| format!("member {name}: {e}"))?;
        if f.size() > limits.max_bytes {
            return Err(format!(
                "member {name} declares {} bytes, more than the size limit of {}",
                f.size(),
                limits.max_bytes
            ));
        }
        let packed = f.compressed_size();
        let what = format!("member {name}");
        let data = read_bounded(&mut f, self.budget, Some(packed), &what)?;
        self.read += data.len() as u64;
        if self.read > limits.max_input {
            return Err(format!(
                "members expand to more than {} bytes in all",
                limits.max_input
            ));
        }
        Ok(data)
    }

    /// The member if the package has it.
    fn optional(&mut self, name: &str) -> Result<Option<Vec<u8>>, Fail> {
        match self.zip.index_for_name(name) {
            Some(_) => self.member(name).map(Some),
            None => Ok(None),
        }
    }

    /// Members `PREFIX<n>SUFFIX` in the order of n (slide2 before slide10).
    fn numbered(&self, prefix: &str, suffix: &str) -> Vec<String> {
        let mut found: Vec<(u64, String)> = self
            .zip
            .file_names()
            .filter_map(|n| {
                let num = n.strip_prefix(prefix)?.strip_suffix(suffix)?;
                Some((num.parse().ok()?, n.to_string()))
            })
            .collect();
        found.sort();
        found.into_iter().map(|(_, n)| n).collect()
    }
}

/// The main part of a WordprocessingML package: `word/document.xml`, or
/// where a writer named it otherwise (`word/document2.xml`), the part
/// `[Content_Types].xml` gives a document's, template's or macro-enabled
/// main content type.
fn docx_main(pkg: &mut Package) -> Result<String, Fail> {
    const USUAL: &str = "word/document.xml";
    if pkg.zip.index_for_name(USUAL).is_some() {
        return Ok(USUAL.into());
    }
    let named = match pkg.optional("[Content_Types].xml")? {
        Some(types) => main_part(&types).filter(|(k, _)| *k == Kind::Docx),
        None => None,
    };
    Ok(named.map_or(USUAL.into(), |(_, part)| part))
}

/// The main content types of the OOXML kinds (after `application/`):
/// documents, templates, macro-enabled documents and templates, slide
/// shows.
const MAIN_TYPES: [(&str, Kind); 14] = [
    (
        "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        Kind::Docx,
    ),
    (
        "vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
        Kind::Docx,
    ),
    ("vnd.ms-word.document.macroEnabled.main+xml", Kind::Docx),
    (
        "vnd.ms-word.template.macroEnabledTemplate.main+xml",
        Kind::Docx,
    ),
    (
        "vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
        Kind::Xlsx,
    ),
    (
        "vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml",
        Kind::Xlsx,
    ),
    ("vnd.ms-excel.sheet.macroEnabled.main+xml", Kind::Xlsx),
    ("vnd.ms-excel.template.macroEnabled.main+xml", Kind::Xlsx),
    (
        "vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
        Kind::Pptx,
    ),
    (
        "vnd.openxmlformats-officedocument.presentationml.template.main+xml",
        Kind::Pptx,
    ),
    (
        "vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
        Kind::Pptx,
    ),
    (
        "vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
        Kind::Pptx,
    ),
    (
        "vnd.ms-powerpoint.template.macroEnabled.main+xml",
        Kind::Pptx,
    ),
    (
        "vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
        Kind::Pptx,
    ),
];

/// The kind and the member name of the main part an OOXML package's
/// `[Content_Types].xml` (`types`) declares: its first `Override` with a
/// main content type ([`MAIN_TYPES`]). Malformed XML declares none.
pub(super) fn main_part(types: &[u8]) -> Option<(Kind, String)> {
    let mut reader = quick_xml::Reader::from_reader(types);
    loop {
        match reader.read_event().ok()? {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)
                if e.local_name().as_ref() == b"Override" =>
            {
                let ct = attribute(&e, b"ContentType")?;
                let Some(kind) = ct
                    .strip_prefix("application/")
                    .and_then(|t| MAIN_TYPES.iter().find(|(m, _)| *m == t))
                    .map(|(_, k)| *k)
                else {
                    continue;
                };
                let part = attribute(&e, b"PartName")?;
                return Some((kind, part.trim_start_matches('/').to_string()));
            }
            quick_xml::events::Event::Eof => return None,
            _ => {}
        }
    }
}

/// xlsx: every worksheet in number order, one line per row, cells (shared
/// strings resolved) separated by tabs.
fn xlsx(pkg: &mut Package, out: &mut Vec<u8>, budget: &Budget) -> Result<(), Fail> {
    let shared = match pkg.optional("xl/sharedStrings.xml")? {
        Some(x) => shared_strings(&x, budget)?,
        None => Vec::new(),
    };
    let sheets = pkg.numbered("xl/worksheets/sheet", ".xml");
    if sheets.is_empty() {
        return Err("no worksheet".into());
    }
    for name in sheets {
        sheet_rows(&pkg.member(&name)?, &shared, out, budget)?;
    }
    Ok(())
}

/// The shared strings (`si`), each the text of its runs; phonetic
/// readings (`rPh`) left out.
fn shared_strings(x: &[u8], budget: &Budget) -> Result<Vec<String>, Fail> {
    let mut w = Walker::new(x, budget);
    let (mut all, mut cur, mut in_t, mut in_rph) = (Vec::new(), String::new(), false, false);
    while let Some(step) = w.next()? {
        match step {
            Step::Open(e, empty) => match e.local_name().as_ref() {
                b"si" if !empty => cur.clear(),
                b"si" => all.push(String::new()),
                b"t" => in_t = !empty,
                b"rPh" => in_rph = !empty,
                _ => {}
            },
            Step::Close(n) => match n.as_slice() {
                b"si" => all.push(std::mem::take(&mut cur)),
                b"t" => in_t = false,
                b"rPh" => in_rph = false,
                _ => {}
            },
            Step::Text(t) if in_t && !in_rph => cur.push_str(&t),
            Step::Text(_) => {}
        }
    }
    Ok(all)
}

/// One worksheet's rows: the cell values, `t="s"` through the shared
/// strings, inline strings (`is/t`) as written.
fn sheet_rows(x: &[u8], shared: &[String], out: &mut Vec<u8>, budget: &Budget) -> Result<(), Fail> {
    let mut w = Walker::new(x, budget);
    let mut lines = Lines::new(out, false);
    let (mut cell, mut is_shared, mut in_value) = (String::new(), false, false);
    let mut first = true;
    while let Some(step) = w.next()? {
        match step {
            Step::Open(e, empty) => match e.local_name().as_ref() {
                b"row" => {
                    lines.end_line(budget)?;
                    first = true;
                }
                b"c" => {
                    cell.clear();
                    is_shared = e
                        .try_get_attribute("t")
                        .ok()
                        .flatten()
                        .is_some_and(|a| a.value.as_ref() == b"s");
                }
                b"v" | b"t" => in_value = !empty,
                _ => {}
            },
            Step::Close(n) => match n.as_slice() {
                b"v" | b"t" => in_value = false,
                b"c" => {
                    let value = match is_shared {
                        true => cell
                            .trim()
                            .parse::<usize>()
                            .ok()
                            .and_then(|i| shared.get(i)),
                        false => Some(&cell),
                    };
                    if let Some(v) = value.filter(|v| !v.is_empty()) {
                        if !first {
                            lines.push_raw(b"\t");
                        }
                        lines.push_raw(v.replace(['\n', '\r'], " ").as_bytes());
                        first = false;
                    }
                }
                b"row" => lines.end_line(budget)?,
                _ => {}
            },
            Step::Text(t) if in_value => cell.push_str(&t),
            Step::Text(_) => {}
        }
    }
    lines.end_line(budget)
}

/// EPUB: the chapters of the spine of the package document named by
/// META-INF/container.xml, each as XHTML (as tolerant HTML when it is not
/// well-formed XML).
fn epub(pkg: &mut Package, out: &mut Vec<u8>, budget: &Budget) -> Result<(), Fail> {
    let container = pkg.member("META-INF/container.xml")?;
    let opf_path = first_attribute(&container, b"rootfile", b"full-path", budget)?
        .ok_or("META-INF/container.xml names no rootfile")?;
    let opf = pkg.member(&opf_path)?;
    let base = opf_path.rsplit_once('/').map_or("", |(d, _)| d);
    for href in spine(&opf, budget)? {
        let name = join_href(base, &href);
        let chapter = pkg.member(&name)?;
        let before = out.len();
        if xml::lines(&chapter, &xml::XHTML, out, budget).is_err() {
            out.truncate(before);
            html::text(&chapter, out, budget)?;
        }
    }
    Ok(())
}

/// The value of attribute `attr` of the first element `elem`.
fn first_attribute(
    x: &[u8],
    elem: &[u8],
    attr: &[u8],
    budget: &Budget,
) -> Result<Option<String>, Fail> {
    let mut w = Walker::new(x, budget);
    while let Some(step) = w.next()? {
        if let Step::Open(e, _) = step {
            if e.local_name().as_ref() == elem {
                return Ok(attribute(&e, attr));
            }
        }
    }
    Ok(None)
}

fn attribute(e: &quick_xml::events::BytesStart, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .and_then(|a| {
            // Not `unescape_value`: it changes with quick-xml's `encoding`
            // feature, which another dependency may turn on.
            let raw = std::str::from_utf8(&a.value).ok()?;
            quick_xml::escape::unescape(raw)
                .ok()
                .map(|v| v.into_owned())
        })
}

/// The hrefs of the spine's items, in reading order (manifest ids
/// resolved; an idref missing from the manifest is skipped).
fn spine(opf: &[u8], budget: &Budget) -> Result<Vec<String>, Fail> {
    let mut w = Walker::new(opf, budget);
    let mut manifest = HashMap::new();
    let mut order = Vec::new();
    while let Some(step) = w.next()? {
        if let Step::Open(e, _) = step {
            match e.local_name().as_ref() {
                b"item" => {
                    if let (Some(id), Some(href)) = (attribute(&e, b"id"), attribute(&e, b"href")) {
                        manifest.insert(id, href);
                    }
                }
                b"itemref" => order.extend(attribute(&e, b"idref")),
                _ => {}
            }
        }
    }
    Ok(order
        .iter()
        .filter_map(|id| manifest.get(id).cloned())
        .collect())
}

/// A member name from the package document's folder and a relative,
/// percent-encoded href ("../Text/ch%201.xhtml").
fn join_href(base: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or("");
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    let decoded = percent_decode(href);
    for p in decoded.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
