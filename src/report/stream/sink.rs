//! A txt, json or tsv report written as the walk hands it the clusters and
//! their links ([`Sink`]): the json document is written piece by piece
//! around markers, so no report is held whole in memory.

use super::buffered::Buffered;
use super::walk::Visit;
use crate::error::{Error, Result};
use crate::formats::files::CompactTable;
use crate::report::folders::FolderPair;
use crate::report::model::{Cluster, Format, Pair, Report};
use serde_json::Value;
use std::path::PathBuf;

/// A txt, json or tsv report to write, and whether in colour.
pub(crate) struct Target {
    pub format: Format,
    pub output: Option<PathBuf>,
    pub color: bool,
}

/// Where the report goes: the output file through a 1 MiB buffer.
pub(super) struct Sink {
    out: Buffered,
    format: Format,
    color: bool,
    /// Links written in the current cluster.
    in_cluster: usize,
    /// Clusters written.
    clusters: usize,
    /// The json text of the current cluster after its links.
    json_tail: String,
    /// A link's json text (reused).
    scratch: Vec<u8>,
    /// A json text indented ([`indent_into`], reused).
    indented: Vec<u8>,
}

/// Markers of the values written apart in the json document.
const MARK: &str = "\u{1}fsim-stream\u{1}";
const FILES: &str = "\u{1}fsim-stream-files\u{1}";
const FOLDERS: &str = "\u{1}fsim-stream-folders\u{1}";
const FAMILIES: &str = "\u{1}fsim-stream-folder-families\u{1}";
const IDENTICAL: &str = "\u{1}fsim-stream-identical-sets\u{1}";

/// A marker as serde_json writes it.
fn quoted(m: &str) -> String {
    format!("\"{}\"", m.replace('\u{1}', "\\u0001"))
}

fn pretty(v: &Value) -> Result<String> {
    serde_json::to_string_pretty(v).map_err(|e| Error::msg(format!("json: {e}")))
}

/// `text` with every line but the first indented by `n` spaces, appended
/// to `out` ([`indent`] without its `String`s: the folder pairs' list is a
/// tenth of a json report).
fn indent_into(text: &[u8], n: usize, out: &mut Vec<u8>) {
    let mut rest = text;
    while let Some(k) = memchr::memchr(b'\n', rest) {
        out.extend_from_slice(&rest[..=k]);
        out.extend(std::iter::repeat_n(b' ', n));
        rest = &rest[k + 1..];
    }
    out.extend_from_slice(rest);
}

/// Indent every line but the first by `n` spaces.
fn indent(s: &str, n: usize) -> String {
    let mut out = Vec::with_capacity(s.len());
    indent_into(s.as_bytes(), n, &mut out);
    String::from_utf8(out).expect("spaces added after newlines of UTF-8")
}

impl Sink {
    /// The report `t`, its head not written yet.
    pub(super) fn create(t: &Target) -> Result<Sink> {
        Ok(Sink {
            out: Buffered::create(t.output.as_deref())?,
            format: t.format,
            color: t.color,
            in_cluster: 0,
            clusters: 0,
            json_tail: String::new(),
            scratch: Vec::new(),
            indented: Vec::new(),
        })
    }

    fn push(&mut self, s: &str) -> Result<()> {
        self.out.push(s)
    }

    pub(super) fn head(&mut self, r: &Report) -> Result<()> {
        match self.format {
            Format::Text => self.push(&r.text_head(self.color)?),
            Format::Tsv => {
                self.push(crate::report::TSV_HEADER)?;
                for k in 0..r.folders.pairs.len() {
                    self.push(&r.folders.listed(k, None)?.tsv())?;
                }
                self.push(&r.tsv_same_content())?;
                self.push(&r.tsv_hard_links())?;
                self.push(&r.notes_tsv())
            }
            _ => self.push("{\n  \"clusters\": "),
        }
    }

    fn start(&mut self, r: &Report, c: &Cluster) -> Result<()> {
        self.in_cluster = 0;
        match self.format {
            Format::Text => {
                let out = &mut self.out;
                r.text_cluster(self.color, c, &mut |s| out.push(s))
            }
            Format::Tsv => Ok(()),
            _ => {
                let (mf, ml) = (Value::String(FILES.into()), Value::String(MARK.into()));
                let j = indent(&pretty(&r.cluster_json(c, mf, ml))?, 4);
                let (qf, ql) = (quoted(FILES), quoted(MARK));
                // Keys are in order: nothing before "files" holds a path,
                // nothing after "links" does: the files' marker is the first
                // match, the links' the last.
                let f = j
                    .find(&qf)
                    .ok_or_else(|| Error::msg("json: files marker"))?;
                let l = j
                    .rfind(&ql)
                    .ok_or_else(|| Error::msg("json: cluster marker"))?;
                self.json_tail = j[l + ql.len()..].to_string();
                let lead = if self.clusters == 0 {
                    "[\n    "
                } else {
                    ",\n    "
                };
                self.push(lead)?;
                self.push(&j[..f])?;
                for i in 0..c.files.len() {
                    self.push(if i == 0 { "[\n        " } else { ",\n        " })?;
                    self.scratch.clear();
                    r.write_file_json(c, i, 8, &mut self.scratch);
                    self.out.push_bytes(&self.scratch)?;
                }
                self.push("\n      ]")?;
                self.push(&j[f + qf.len()..l])
            }
        }
    }

    fn link(&mut self, r: &Report, c: &Cluster, l: &Pair) -> Result<()> {
        self.in_cluster += 1;
        match self.format {
            Format::Text => self.push(&r.text_link(self.color, l)),
            Format::Tsv => self.push(&r.tsv_link(c, l)),
            _ => {
                let lead = if self.in_cluster == 1 {
                    "[\n        "
                } else {
                    ",\n        "
                };
                self.push(lead)?;
                self.scratch.clear();
                r.write_link_json(l, 8, &mut self.scratch);
                self.out.push_bytes(&self.scratch)
            }
        }
    }

    fn end(&mut self) -> Result<()> {
        self.clusters += 1;
        if matches!(self.format, Format::Json) {
            let close = if self.in_cluster == 0 {
                "[]"
            } else {
                "\n      ]"
            };
            self.push(close)?;
            let t = std::mem::take(&mut self.json_tail);
            self.push(&t)?;
        }
        Ok(())
    }

    fn tail(&mut self, r: &Report) -> Result<()> {
        match self.format {
            Format::Text => self.push(&r.text_tail(self.color)),
            Format::Tsv => Ok(()),
            _ => {
                self.push(if self.clusters == 0 { "[]" } else { "\n  ]" })?;
                let j = pretty(&r.json_top(MARK, FOLDERS, FAMILIES, IDENTICAL))?;
                let m = quoted(MARK);
                let at = j.find(&m).ok_or_else(|| Error::msg("json: marker"))?;
                if &j[..at] != "{\n  \"clusters\": " {
                    return Err(Error::msg("json: clusters is not the first key"));
                }
                let mut rest = &j[at + m.len()..];
                // The folder pairs, their families and the identical sets,
                // in the keys' order, one at a time: there may be many more
                // than fit in --memory as one value.
                let mut marks = [FAMILIES, FOLDERS, IDENTICAL];
                marks.sort_by_key(|m| rest.find(&quoted(m)));
                for mark in marks {
                    let fm = quoted(mark);
                    let fat = rest.find(&fm).ok_or_else(|| Error::msg("json: marker"))?;
                    self.push(&rest[..fat])?;
                    if mark == FOLDERS {
                        self.json_folders(r)?;
                    } else if mark == IDENTICAL {
                        let set = |s| Ok(r.identical_set_json(s));
                        self.json_list(r.identical.iter().map(set))?;
                    } else {
                        self.json_list(r.folders.families.iter().map(|f| Ok(f.to_json())))?;
                    }
                    rest = &rest[fat + fm.len()..];
                }
                self.push(&format!("{rest}\n"))
            }
        }
    }

    /// The json's `folders`, each pair and each of its children written
    /// one at a time: the pair of two trees of backups may have 70,000
    /// children, 100 MB as one value.
    fn json_folders(&mut self, r: &Report) -> Result<()> {
        let f = &r.folders;
        for k in 0..f.pairs.len() {
            self.push(if k == 0 { "[\n    " } else { ",\n    " })?;
            self.json_pair(&f.listed(k, None)?, &r.files, 4)?;
        }
        self.push(if f.pairs.is_empty() { "[]" } else { "\n  ]" })
    }

    /// Pair `p` as `serde_json::to_writer_pretty` writes it, each line
    /// after the first indented by `n` spaces.
    fn json_pair(&mut self, p: &FolderPair, table: &CompactTable, n: usize) -> Result<()> {
        const EMPTY: &str = "\"children\": []";
        let text = serde_json::to_string_pretty(&p.json_without_children(table))
            .map_err(|e| Error::msg(format!("json: {e}")))?;
        // Keys and paths are escaped strings: the first unescaped
        // `"children": []` is the key's.
        let at = text.find(EMPTY).filter(|_| !p.children.is_empty());
        let Some(at) = at else {
            return self.push(&indent(&text, n));
        };
        self.push(&indent(&text[..at + EMPTY.len() - 2], n))?;
        for (i, c) in p.children.iter().enumerate() {
            self.push(if i == 0 { "[\n" } else { ",\n" })?;
            self.push(&" ".repeat(n + 4))?;
            self.json_pair(c, table, n + 4)?;
        }
        self.push(&format!("\n{}]", " ".repeat(n + 2)))?;
        self.push(&indent(&text[at + EMPTY.len()..], n))
    }

    /// A json list at the second level, its values written one by one.
    fn json_list(&mut self, values: impl Iterator<Item = Result<Value>>) -> Result<()> {
        let mut empty = true;
        for v in values {
            let v = v?;
            self.push(if empty { "[\n    " } else { ",\n    " })?;
            let mut text = std::mem::take(&mut self.scratch);
            text.clear();
            serde_json::to_writer_pretty(&mut text, &v)
                .map_err(|e| Error::msg(format!("json: {e}")))?;
            self.indented.clear();
            indent_into(&text, 4, &mut self.indented);
            self.scratch = text;
            self.out.push_bytes(&self.indented)?;
            empty = false;
        }
        self.push(if empty { "[]" } else { "\n  ]" })
    }

    fn finish(self) -> Result<()> {
        self.out.finish()
    }
}

impl Sink {
    /// Write the report's tail and flush it.
    pub(super) fn close(mut self, r: &Report) -> Result<()> {
        self.tail(r)?;
        self.finish()
    }
}

impl Visit for Sink {
    fn wants(&self, r: &Report, i: usize) -> bool {
        // The text and json reports show a reviewed cluster's closest
        // relatives: its every link is in the tsv report alone (in json,
        // the links of a few large clusters were most of a report as large
        // as half the repository).
        !matches!(self.format, Format::Text | Format::Json) || r.clusters[i].review.is_none()
    }
    fn start(&mut self, r: &Report, i: usize) -> Result<()> {
        Sink::start(self, r, &r.clusters[i])
    }
    fn link(&mut self, r: &Report, i: usize, l: &Pair) -> Result<()> {
        Sink::link(self, r, &r.clusters[i], l)
    }
    fn end(&mut self, _: &Report, _: usize) -> Result<()> {
        Sink::end(self)
    }
}
