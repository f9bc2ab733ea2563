//! The per-file notes of a run (docs/documents.md): files and folders the
//! walk found but could not read (permission denied, gone), documents
//! whose bytes could not be read as their kind (their raw bytes were
//! compared) and archives whose members were not all listed (damaged,
//! nested too deep, over a limit). fsim-chunk warns with the details on
//! standard error, once; the file table keeps each note's kind (`raw/docx`,
//! `raw~broken`), so every report format lists them, also when a re-run or
//! a shard merge reused the records without reading the files.

use super::{Report, Style, MAX_UNREADABLE};
use crate::content::archive::MAX_ARCHIVE_DEPTH;
use crate::formats::{FileRef, LeftOut};
use serde_json::{json, Value};

/// One listed note: the file, what kind of note (the tsv `type`), and its
/// text.
pub(crate) struct Note {
    pub id: u32,
    pub kind: &'static str,
    pub text: String,
}

/// The notes listed (at most [`MAX_UNREADABLE`] of each kind, in id order)
/// and how many of each kind there are.
#[derive(Default)]
pub(crate) struct Notes {
    pub documents: Vec<Note>,
    pub document_count: usize,
    pub archives: Vec<Note>,
    pub archive_count: usize,
    /// Files and folders the walk found but could not read.
    pub unread: Vec<Note>,
    pub unread_count: usize,
}

/// The tsv `type` of a document note and of an archive note.
const DOCUMENT: &str = "unreadable-document";
const ARCHIVE: &str = "members-left-out";
const UNREAD: &str = "unreadable";

/// What the reports say of an archive whose members were not all listed.
pub fn left_out_text(l: LeftOut) -> String {
    let why = match l {
        LeftOut::Broken => {
            "the archive is damaged or truncated (the members before the damage are listed)"
                .to_string()
        }
        LeftOut::Deep => format!(
            "an archive inside it is nested more than {MAX_ARCHIVE_DEPTH} deep (it is listed, its members are not)"
        ),
        LeftOut::Limit => {
            "members over a limit (size, expansion ratio, count or time) left out".to_string()
        }
        LeftOut::Unread => {
            "the archive was not read (larger than the limit read whole, or changed)".to_string()
        }
        LeftOut::Unlisted => "a distributed run's shard chunked it and lists no members \
             (make report SHARDS=N, or a run in one process, lists them)"
            .to_string(),
    };
    format!("members left out: {why}")
}

/// A file's note, if it has one.
fn note_of(f: &FileRef) -> Option<Note> {
    if let Some(u) = f.unread {
        return Some(Note {
            id: f.id,
            kind: UNREAD,
            text: u.text().to_string(),
        });
    }
    if let Some(k) = f.unreadable {
        return Some(Note {
            id: f.id,
            kind: DOCUMENT,
            // The table cannot tell a broken document from one with no
            // text (a scanned PDF): both are compared by their bytes.
            text: format!(
                "no text read as {} (unreadable, or a scan or a document without text): raw bytes compared",
                k.name()
            ),
        });
    }
    f.left_out.map(|l| Note {
        id: f.id,
        kind: ARCHIVE,
        text: left_out_text(l),
    })
}

impl Report {
    /// Every file's note, the first [`MAX_UNREADABLE`] of each kind listed.
    pub(crate) fn notes(&self) -> Notes {
        let mut n = Notes::default();
        for f in self.files.iter() {
            let Some(note) = note_of(&f) else { continue };
            let (list, count) = match note.kind {
                DOCUMENT => (&mut n.documents, &mut n.document_count),
                UNREAD => (&mut n.unread, &mut n.unread_count),
                _ => (&mut n.archives, &mut n.archive_count),
            };
            *count += 1;
            if list.len() < MAX_UNREADABLE {
                list.push(note);
            }
        }
        n
    }

    /// The json report's `unreadable_documents`, `members_left_out` and
    /// `unreadable_files`: `{count, listed, capped}` each.
    pub(crate) fn notes_json(&self) -> (Value, Value, Value) {
        let n = self.notes();
        let one = |listed: &[Note], count: usize| {
            json!({
                "count": count,
                "listed": listed.iter().map(|x| json!({
                    "path": self.path(x.id),
                    "note": x.text,
                })).collect::<Vec<_>>(),
                "capped": count > listed.len(),
            })
        };
        (
            one(&n.documents, n.document_count),
            one(&n.archives, n.archive_count),
            one(&n.unread, n.unread_count),
        )
    }

    /// The text report's dim blocks under the summary: the documents read
    /// as raw bytes, the archives with members left out.
    pub(crate) fn notes_text(&self, o: &mut String, st: &Style) {
        use std::fmt::Write;
        let n = self.notes();
        let (dim, reset) = (st.dim, st.reset);
        let blocks = [
            (
                &n.unread,
                n.unread_count,
                "files and folders not read (fsim-chunk's warnings say why)",
            ),
            (
                &n.documents,
                n.document_count,
                "documents compared by their raw bytes (unreadable as their kind, or without text; fsim-chunk's warnings say why)",
            ),
            (
                &n.archives,
                n.archive_count,
                "archives whose members are not all listed (fsim-chunk's warnings say which and why)",
            ),
        ];
        for (listed, count, title) in blocks {
            if count == 0 {
                continue;
            }
            let _ = writeln!(o, "{dim}{title}: {count}{reset}");
            for line in self.listed_lines(listed, count) {
                let _ = writeln!(o, "{dim}  {line}{reset}");
            }
        }
    }

    /// `PATH  (note)` for each listed note, and a line for those left
    /// unlisted.
    fn listed_lines(&self, listed: &[Note], count: usize) -> Vec<String> {
        let mut out: Vec<String> = listed
            .iter()
            .map(|x| format!("{}  ({})", self.path(x.id), x.text))
            .collect();
        if count > listed.len() {
            out.push(format!(
                "... and {} more (the first {MAX_UNREADABLE} listed)",
                count - listed.len()
            ));
        }
        out
    }

    /// The tsv report's `note` rows: `cluster` = `note`, `type` = the
    /// kind, the file's size as `cluster_bytes` and `size_a`, its path as
    /// `path_a` and the note as `path_b`; the figures 0.
    pub(crate) fn notes_tsv(&self) -> String {
        let n = self.notes();
        let mut o = String::new();
        for x in n.unread.iter().chain(&n.documents).chain(&n.archives) {
            let size = self.files.size(x.id);
            o.push_str(&format!(
                "note\t{}\t1\t{size}\t0.0\t0\t0.0\t0.0\t{size}\t0\t{}\t{}\t0\t\t\n",
                x.kind,
                self.path(x.id),
                x.text
            ));
        }
        o
    }

    /// The html page's `notes`: `{count, listed: [[path, note]]}` of every
    /// kind, the files not read first.
    pub(crate) fn notes_html(&self) -> Value {
        let n = self.notes();
        json!({
            "count": n.unread_count + n.document_count + n.archive_count,
            "listed": n.unread.iter().chain(&n.documents).chain(&n.archives)
                .map(|x| json!([self.path(x.id), x.text]))
                .collect::<Vec<_>>(),
        })
    }

    /// The lines of [`Report::listed_lines`] of every kind: the xlsx
    /// Summary's `note` rows.
    pub(crate) fn notes_lines(&self) -> Vec<String> {
        let n = self.notes();
        let mut out = self.listed_lines(&n.unread, n.unread_count);
        out.extend(self.listed_lines(&n.documents, n.document_count));
        out.extend(self.listed_lines(&n.archives, n.archive_count));
        out
    }
}
