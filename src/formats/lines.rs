//! What every format shares: opening a record stream, its header
//! (`#fsim <kind> v1` and the run's parameters) and trailer (`#end <kind>`,
//! counts and digest), the line reader that names file and line in its
//! errors, and the check of headers and trailers against the records.

use crate::error::{Context, Error, Result};
use crate::formats::chunks::Digest;
use crate::formats::numbers::{hex128, parse_hex128};
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// Buffer size for record streams: large enough to amortise syscalls.
pub const BUF_SIZE: usize = 1 << 20;

/// An input: a file or standard input (`-`), with its display name. A
/// compressed stream (the record files `make report` keeps zstd-compressed,
/// [`crate::io::Output::compress`], or gzip) is read as the lines it holds
/// ([`super::codec`]): a record file starts with `#`, never with a
/// compressor's magic number.
pub fn open_input(path: &Path) -> Result<(Box<dyn BufRead + Send>, String)> {
    let (raw, name) = open_raw(path)?;
    let r = super::codec::decode_any(raw).ctx(|| format!("reading {name}"))?;
    Ok((r, name))
}

/// An input's bytes as they are stored (compressed or not), buffered, with
/// its display name: what [`open_input`] decodes, and what a progress bar
/// counts against the file's size.
pub fn open_raw(path: &Path) -> Result<(Box<dyn BufRead + Send>, String)> {
    if path.as_os_str() == "-" {
        let r = BufReader::with_capacity(BUF_SIZE, io::stdin());
        Ok((Box::new(r), "-".to_string()))
    } else {
        let name = path.display().to_string();
        let f = std::fs::File::open(path).ctx(|| format!("cannot open {name}"))?;
        Ok((Box::new(BufReader::with_capacity(BUF_SIZE, f)), name))
    }
}

/// Format version written in the header of every kind but the file table.
pub const VERSION: &str = "v1";

/// Format version of the file table: v2 added `table-digest=` to its
/// trailer (a digest of its own records), v3 the view and raw size of each
/// file, v4 the hash of each content view ("same content,
/// different file"). v3 and v2 tables are still read ([`FILES_V3`],
/// [`FILES_V2`]).
pub const FILES_VERSION: &str = "v4";

/// The file table version before the view hash: its content views read
/// without one.
pub const FILES_V3: &str = "v3";

/// The file table version still read: its records have no view columns
/// and read as raw views.
pub const FILES_V2: &str = "v2";

/// Ordered `key=value` parameters of a header or trailer line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Params(pub Vec<(String, String)>);

impl Params {
    pub fn new() -> Self {
        Params(Vec::new())
    }

    pub fn with(mut self, k: &str, v: impl ToString) -> Self {
        self.set(k, v);
        self
    }

    pub fn set(&mut self, k: &str, v: impl ToString) {
        let v = v.to_string();
        match self.0.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k.to_string(), v)),
        }
    }

    /// These parameters with those of `other` set over them.
    pub fn merged(mut self, other: &Params) -> Params {
        for (k, v) in &other.0 {
            self.set(k, v);
        }
        self
    }

    pub fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    pub fn get_u64(&self, k: &str) -> Option<u64> {
        self.get(k).and_then(|v| v.parse().ok())
    }

    pub fn get_u128_hex(&self, k: &str) -> Option<u128> {
        self.get(k).and_then(|v| parse_hex128(v.as_bytes()))
    }

    /// Keep only the keys of `keys`, in their order (e.g. the chunking
    /// parameters out of a longer header).
    pub fn only(&self, keys: &[&str]) -> Params {
        Params(
            keys.iter()
                .filter_map(|k| self.get(k).map(|v| (k.to_string(), v.to_string())))
                .collect(),
        )
    }

    fn write(&self, out: &mut Vec<u8>) {
        for (k, v) in &self.0 {
            out.push(b'\t');
            out.extend_from_slice(k.as_bytes());
            out.push(b'=');
            out.extend_from_slice(v.as_bytes());
        }
    }

    /// The `\tkey=value...` fields after a line's tag (e.g. a `#forest`
    /// summary's), as a header's are parsed.
    pub fn parse_fields(fields: &[u8]) -> std::result::Result<Params, String> {
        Params::parse(fields.strip_prefix(b"\t").unwrap_or(fields))
    }

    fn parse(fields: &[u8]) -> std::result::Result<Params, String> {
        let mut p = Params::new();
        if fields.is_empty() {
            return Ok(p);
        }
        for f in fields.split(|&c| c == b'\t') {
            let s = std::str::from_utf8(f).map_err(|_| "header parameter is not UTF-8")?;
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| format!("expected key=value in header, found {s:?}"))?;
            p.0.push((k.to_string(), v.to_string()));
        }
        Ok(p)
    }

    /// Describe the first difference with `other` in a sentence.
    pub fn difference(&self, other: &Params) -> Option<String> {
        for (k, v) in &self.0 {
            match other.get(k) {
                Some(w) if w == v => {}
                Some(w) => return Some(format!("{k}={v} here but {k}={w} before")),
                None => return Some(format!("{k}={v} here but no {k} before")),
            }
        }
        for (k, w) in &other.0 {
            if self.get(k).is_none() {
                return Some(format!("no {k} here but {k}={w} before"));
            }
        }
        None
    }
}

/// Which file's size a percentage threshold refers to (`--percent-of`), as
/// recorded in pairs headers (`percent-of=smaller`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PercentOf {
    /// Of the smaller file: finds containment (a file wholly inside another).
    Smaller,
    /// Of the larger file: only files that are mostly the same.
    Larger,
}

impl PercentOf {
    pub fn as_str(self) -> &'static str {
        match self {
            PercentOf::Smaller => "smaller",
            PercentOf::Larger => "larger",
        }
    }

    /// The size a percentage of a pair of sizes refers to.
    pub fn base(self, a: u64, b: u64) -> u64 {
        match self {
            PercentOf::Smaller => a.min(b),
            PercentOf::Larger => a.max(b),
        }
    }
}

/// Percentage of `part` in `whole`, 0 when whole is 0.
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Symmetric similarity of a pair: bytes in common over the mean size
/// (Dice coefficient), 100 for identical files.
pub fn symmetric(common: u64, sa: u64, sb: u64) -> f64 {
    percent(2 * common, sa + sb)
}

/// Header keys that name the template set a stage applied
/// ([`crate::formats::templates`]).
pub const TEMPLATE_PARAM_KEYS: &[&str] = &["templates", "template-chunks"];

/// The parameters of the chunking that define whether two chunk files can
/// be compared: every later stage carries them in its header. The first
/// eight are those of the chunk methods (tttd, bsw), `content` the view
/// chunked (written by every fsim-chunk run); the others those of the
/// feature methods (`crate::chunking::features::MethodSpec::params`). A key absent
/// from both headers compares equal.
pub const CHUNK_PARAM_KEYS: &[&str] = &[
    "method",
    "avg",
    "min",
    "max",
    "div",
    "div2",
    "window",
    "hash",
    // Which view was chunked (`--content auto|raw`).
    "content",
    // Which PDF text extractor made the PDF views, when not pdftotext.
    "pdf",
    // Which legacy Office extractors were missing (catdoc's), when any.
    "office",
    // The version of the views' text, when views are on.
    "views",
    "n",
    "bits",
    "anchors",
    "k",
    "s",
    "b",
    "fold-case",
    "collapse-whitespace",
    "strip-html",
];

impl Params {
    /// The chunking parameters ([`CHUNK_PARAM_KEYS`]) on which `self` and
    /// `other` disagree, said as `key=value vs key=value`; `None` when two
    /// files come from runs that chunked alike.
    pub fn chunking_difference(&self, other: &Params) -> Option<String> {
        self.only(CHUNK_PARAM_KEYS)
            .difference(&other.only(CHUNK_PARAM_KEYS))
    }
}

/// The header parameters a stage passes on to the next: the chunking
/// parameters plus the identity of the templates ignored since
/// fsim-partition (`templates=`, `template-chunks=`; see
/// [`crate::stages::templates`]), what it dropped, and whether its
/// records were a re-run's changed chunks alone (`changed-only=`, which
/// the analysis checks and drops).
pub fn stage_params(p: &Params) -> Params {
    p.only(CHUNK_PARAM_KEYS)
        .merged(&p.only(TEMPLATE_PARAM_KEYS))
        .merged(&p.only(PRUNED_PARAM_KEYS))
        .merged(&p.only(&[CHANGED_ONLY]))
}

/// The header key of sorted records, a partition's trailer and a bins
/// header whose records are a re-run's changed chunks alone (its value:
/// how many chunks the changed set holds; [`crate::formats::changed`]).
pub const CHANGED_ONLY: &str = "changed-only";

/// What fsim-partition's degree limit dropped, carried in the headers of
/// bins, pairs and verified pairs so that the report can say it: the limit,
/// the chunks dropped and the files holding one (absent when no chunk was
/// dropped; `pruned-files` absent when unknown, as from Spark's forests),
/// and which chunks (`pruned-digest`, the sum of their hash mixes: a re-run
/// whose analysis dropped the same chunks can reuse the earlier pairs).
pub const PRUNED_PARAM_KEYS: &[&str] = &[
    "degree-limit",
    "pruned-chunks",
    "pruned-files",
    "pruned-digest",
    "site-chunks",
    "site-names",
];

/// The header of the fsim file of `kind` at `path`: its first line that is
/// not a comment, read without reading the rest.
pub fn read_header(path: &Path, kind: Kind) -> Result<Params> {
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    while let Some((line, no)) = r.next_numbered()? {
        match line {
            Line::Header(k, p) if k == kind => return Ok(p),
            Line::Comment(_) => {}
            _ => {
                return Err(Error::input(
                    &name,
                    no,
                    format!("expected a '#fsim {} v1' header", kind.as_str()),
                ))
            }
        }
    }
    Err(Error::msg(format!(
        "{name}: empty: expected a '#fsim {} v1' header",
        kind.as_str()
    )))
}

/// The kinds of file fsim writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Files,
    Chunks,
    Partition,
    Bins,
    Pairs,
    /// Shared regions of verified pairs (`fsim-verify --regions`).
    Regions,
    /// Template chunks to ignore (`fsim-template`).
    Templates,
    /// The line source's lines of each content (`fsim-analyze --lines-out`).
    Lines,
    /// The chunks of the files changed since an earlier run (`fsim-chunk --changed-out`).
    Changed,
    /// The chunks a partition dropped (`fsim-partition --dropped-out`).
    Dropped,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Files => "files",
            Kind::Chunks => "chunks",
            Kind::Partition => "partition",
            Kind::Bins => "bins",
            Kind::Pairs => "pairs",
            Kind::Regions => "regions",
            Kind::Templates => "templates",
            Kind::Lines => "lines",
            Kind::Changed => "changed",
            Kind::Dropped => "dropped",
        }
    }

    fn parse(s: &[u8]) -> Option<Kind> {
        [
            Kind::Files,
            Kind::Chunks,
            Kind::Partition,
            Kind::Bins,
            Kind::Pairs,
            Kind::Regions,
            Kind::Templates,
            Kind::Lines,
            Kind::Changed,
            Kind::Dropped,
        ]
        .into_iter()
        .find(|k| k.as_str().as_bytes() == s)
    }

    /// The format version its header carries.
    pub fn version(self) -> &'static str {
        match self {
            Kind::Files => FILES_VERSION,
            _ => VERSION,
        }
    }

    /// Which stage writes this kind, for error messages.
    pub fn producer(self) -> &'static str {
        match self {
            Kind::Files => "fsim-chunk --files-out",
            Kind::Chunks => "fsim-chunk or fsim-sort",
            Kind::Partition => "fsim-partition",
            Kind::Bins => "fsim-binpack",
            Kind::Pairs => "fsim-analyze",
            Kind::Regions => "fsim-verify --regions",
            Kind::Templates => "fsim-template",
            Kind::Lines => "fsim-analyze --lines-out",
            Kind::Changed => "fsim-chunk --changed-out",
            Kind::Dropped => "fsim-partition --dropped-out",
        }
    }
}

/// Append a header line: `#fsim <kind> <version>\tk=v...`.
pub fn write_header(kind: Kind, params: &Params, out: &mut Vec<u8>) {
    out.extend_from_slice(b"#fsim ");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(kind.version().as_bytes());
    params.write(out);
    out.push(b'\n');
}

/// Append a trailer line: `#end <kind>\tk=v...`.
pub fn write_trailer(kind: Kind, params: &Params, out: &mut Vec<u8>) {
    out.extend_from_slice(b"#end ");
    out.extend_from_slice(kind.as_str().as_bytes());
    params.write(out);
    out.push(b'\n');
}

/// Params of a digest for a trailer.
pub fn digest_params(d: &Digest, count_key: &str) -> Params {
    Params::new()
        .with(count_key, d.count)
        .with("digest", hex128(d.sum))
}

/// A classified input line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    Header(Kind, Params),
    Trailer(Kind, Params),
    /// Another `#` line (comment or a section marker such as `#bin`).
    Comment(&'a [u8]),
    Data(&'a [u8]),
}

/// Reads lines of an fsim file with a reused buffer, knows its name and the
/// current line number, and makes errors that say both.
pub struct LineReader<R> {
    inner: R,
    name: String,
    line: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, name: impl Into<String>) -> Self {
        LineReader {
            inner,
            name: name.into(),
            line: 0,
            buf: Vec::with_capacity(256),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// Count `n` lines passed over without being read (a frame copied
    /// whole: [`crate::io::frames`]).
    pub fn count_lines(&mut self, n: u64) {
        self.line += n;
    }

    /// The reader under the lines (a chunk file's frames, to look at the
    /// next one before reading on).
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The reader under the lines, to take or give back a frame whole;
    /// the lines read are counted by [`Self::count_lines`].
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// An input error at the current line.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::input(self.name.clone(), self.line, msg)
    }

    /// Next line without its newline, or None at the end. A last line
    /// without a newline is an error: it is what a cut-off file looks like.
    pub fn next_raw(&mut self) -> Result<Option<&[u8]>> {
        self.buf.clear();
        let n = self
            .inner
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| Error::Io {
                context: format!("reading {} after line {}", self.name, self.line),
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.last() != Some(&b'\n') {
            return Err(self.error("last line has no newline: the file is truncated"));
        }
        self.buf.pop();
        Ok(Some(&self.buf))
    }

    /// Next line, classified.
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>> {
        Ok(self.next_numbered()?.map(|(line, _)| line))
    }

    /// Next line, classified, with its line number (for the caller's own
    /// errors about it).
    pub fn next_numbered(&mut self) -> Result<Option<(Line<'_>, u64)>> {
        if self.next_raw()?.is_none() {
            return Ok(None);
        }
        // The name is cloned only for an error, not for every line.
        let (name, line_no) = (&self.name, self.line);
        match classify_line(&self.buf) {
            Ok(line) => Ok(Some((line, line_no))),
            Err(m) => Err(Error::input(name.clone(), line_no, m)),
        }
    }
}

/// Classify one line (without newline).
pub fn classify_line(raw: &[u8]) -> std::result::Result<Line<'_>, String> {
    if raw.first() != Some(&b'#') {
        return Ok(Line::Data(raw));
    }
    if let Some(rest) = raw.strip_prefix(b"#fsim ") {
        let end = rest.iter().position(|&c| c == b'\t').unwrap_or(rest.len());
        let mut words = rest[..end].split(|&c| c == b' ');
        let kind = words
            .next()
            .and_then(Kind::parse)
            .ok_or("unknown fsim file kind in header")?;
        let ver = words.next().unwrap_or(b"");
        let older =
            kind == Kind::Files && (ver == FILES_V2.as_bytes() || ver == FILES_V3.as_bytes());
        if ver != kind.version().as_bytes() && !older {
            let older = if kind == Kind::Files && ver == VERSION.as_bytes() {
                ": a file table written by an older fsim, without table-digest=; run fsim-chunk again"
            } else {
                ""
            };
            return Err(format!(
                "unsupported format version {:?} (this fsim reads {}){older}",
                String::from_utf8_lossy(ver),
                kind.version()
            ));
        }
        let params = Params::parse(rest.get(end + 1..).unwrap_or(b""))?;
        return Ok(Line::Header(kind, params));
    }
    if let Some(rest) = raw.strip_prefix(b"#end ") {
        let end = rest.iter().position(|&c| c == b'\t').unwrap_or(rest.len());
        let kind = Kind::parse(&rest[..end]).ok_or("unknown fsim file kind in trailer")?;
        let params = Params::parse(rest.get(end + 1..).unwrap_or(b""))?;
        return Ok(Line::Trailer(kind, params));
    }
    Ok(Line::Comment(raw))
}

/// Tracks the headers and trailers seen in an input (which may be several
/// files concatenated, or a sorted file where they all come first) and
/// checks them: one kind, one set of chunking parameters, and at the end
/// the record count and digest that the trailers announced.
#[derive(Debug)]
pub struct InputCheck {
    pub kind: Kind,
    /// Parameters of the first header.
    pub params: Option<Params>,
    /// Sum of the trailers' counts and digests.
    pub expected: Digest,
    pub trailers: u64,
    count_key: &'static str,
}

impl InputCheck {
    pub fn new(kind: Kind, count_key: &'static str) -> Self {
        InputCheck {
            kind,
            params: None,
            expected: Digest::default(),
            trailers: 0,
            count_key,
        }
    }

    /// Feed a header; errors (as messages for the current line) on another
    /// kind or on parameters that differ from the first header's.
    pub fn header(&mut self, kind: Kind, params: Params) -> std::result::Result<(), String> {
        if kind != self.kind {
            return Err(format!(
                "this is a {} file (written by {}), expected a {} file (written by {})",
                kind.as_str(),
                kind.producer(),
                self.kind.as_str(),
                self.kind.producer()
            ));
        }
        let chunk = params.only(CHUNK_PARAM_KEYS);
        match &self.params {
            None => self.params = Some(params),
            Some(first) => {
                if let Some(d) = chunk.difference(&first.only(CHUNK_PARAM_KEYS)) {
                    return Err(format!(
                        "records from runs with different parameters are mixed: {d}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Feed a trailer.
    pub fn trailer(&mut self, kind: Kind, params: &Params) -> std::result::Result<(), String> {
        if kind != self.kind {
            return Err(format!(
                "trailer of a {} file in a {} file",
                kind.as_str(),
                self.kind.as_str()
            ));
        }
        let count = params
            .get_u64(self.count_key)
            .ok_or_else(|| format!("trailer without {}=", self.count_key))?;
        let sum = params
            .get_u128_hex("digest")
            .ok_or("trailer without digest=")?;
        self.expected.merge(&Digest { count, sum });
        self.trailers += 1;
        Ok(())
    }

    /// At the end of the input: was there a header and a trailer, and did the
    /// records add up to what the trailers announced?
    pub fn finish(&self, seen: &Digest, name: &str, line: u64) -> Result<()> {
        if self.params.is_none() {
            return Err(Error::input(
                name,
                line,
                format!(
                    "no '#fsim {} v1' header: expected a {} file written by {}",
                    self.kind.as_str(),
                    self.kind.as_str(),
                    self.kind.producer()
                ),
            ));
        }
        if self.trailers == 0 {
            return Err(Error::input(
                name,
                line,
                format!(
                    "no '#end {}' trailer: the file is truncated or its writer was interrupted",
                    self.kind.as_str()
                ),
            ));
        }
        if seen.count != self.expected.count {
            return Err(Error::input(
                name,
                line,
                format!(
                    "{} {} read but the trailer announced {}: the file is truncated or was edited",
                    seen.count, self.count_key, self.expected.count
                ),
            ));
        }
        if seen.sum != self.expected.sum {
            return Err(Error::input(name, line, "the records do not match the trailer's digest: the file was edited or mixed with another run's records"));
        }
        Ok(())
    }
}
