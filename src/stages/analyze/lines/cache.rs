//! The line sets an earlier run wrote (`--previous-lines`), taken instead
//! of reading a file again, and the ones this run writes (`--lines-out`)
//! for the next ([`crate::formats::linesets`]).
//!
//! Why a re-run needs them: the line source looks at every content, the
//! unchanged ones too (a pair of a changed file and an unchanged one is
//! found through both files' lines), and its reading is most of a re-run's
//! analysis: on 100,000 generated prose files, 27 of its 30 CPU-seconds
//! after 1 % of them were edited, the sentences of each file's view made
//! again. A content's lines depend only on its bytes, its view and the
//! settings the file's header records, so the earlier run's lines of an
//! unchanged content are the ones a read would give: the pairs are the
//! same bytes, only the files that changed are read.
//!
//! A pass over the contents (in the line source's order: size, then id)
//! walks the earlier file once, holding the sets of one size at a time
//! (within [`GROUP_BYTES`]; a set beyond it is read from its file, as is
//! any content the earlier file lacks). A file that cannot be used (other
//! settings, a broken line) is said on stderr and the files are read: the
//! line sets save work, they never decide a pair.

use super::read::Lines;
use super::LineFiles;
use crate::error::Result;
use crate::formats::linesets::{write_set, LineSet, LineSetKey};
use crate::formats::{
    open_input, write_header, write_trailer, Digest, InputCheck, Kind, Line, LineReader, Params,
    CHUNK_PARAM_KEYS, TEMPLATE_PARAM_KEYS,
};
use crate::io::Output;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The bytes of line sets of one size a pass holds at most (16 a line,
/// 64 a set), and an eighth of the line source's memory when that is
/// less (taken from it: [`Reuse`](super::Reuse)): the sets past it are
/// read from their files.
pub const GROUP_BYTES: u64 = 32 << 20;

/// What a pass holds of the earlier line sets, within the line source's
/// `memory` ([`GROUP_BYTES`]).
pub fn group_bytes(memory: u64) -> u64 {
    (memory / 8).min(GROUP_BYTES)
}

/// The header of a line sets file: what decides a content's lines besides
/// its bytes and view. `run` is the header of the line source's file
/// table (its chunking parameters hold the views' settings) merged with
/// the bins' (the templates cut out).
pub fn header(run: &Params) -> Params {
    run.only(CHUNK_PARAM_KEYS)
        .merged(&run.only(TEMPLATE_PARAM_KEYS))
        .with("line-hash", "xxh3-64")
        .with("long-lines", crate::stages::verify::LONG_LINES_RULE)
}

/// The key of row `row` of the table.
pub fn key_of(files: &LineFiles, row: usize) -> LineSetKey {
    let view = files.view(row);
    LineSetKey {
        size: files.size(row),
        content: files.content(row),
        view: view.kind,
        view_hash: view.hash,
    }
}

/// An earlier run's line sets file whose header matches this run's.
#[derive(Debug)]
pub struct Earlier {
    path: PathBuf,
}

impl Earlier {
    /// `path` when its header is `want`; else `Err` with why not (the file
    /// missing, unreadable, or written under other settings).
    pub fn open(path: &Path, want: &Params) -> std::result::Result<Earlier, String> {
        let theirs = crate::formats::read_header(path, Kind::Lines).map_err(|e| e.to_string())?;
        if let Some(d) = theirs.difference(want) {
            return Err(format!(
                "{}: written under other settings: {d}",
                path.display()
            ));
        }
        Ok(Earlier {
            path: path.to_path_buf(),
        })
    }

    /// A walk of the file from its start, for one pass, holding at most
    /// `cap` bytes of sets of one size.
    pub fn cursor(&self, cap: u64) -> Cursor {
        let (reader, name) = match open_input(&self.path) {
            Ok((r, name)) => (Some(LineReader::new(r, name.clone())), name),
            Err(e) => {
                warn(&e.to_string());
                (None, String::new())
            }
        };
        Cursor {
            reader,
            name,
            cap,
            check: InputCheck::new(Kind::Lines, "sets"),
            seen: Digest::default(),
            pending: None,
            size: None,
            group: HashMap::new(),
        }
    }
}

/// Says that the earlier line sets stop being used, and why.
fn warn(why: &str) {
    crate::cli::stderr_line(format_args!(
        "fsim-analyze: warning: {why}: the earlier line sets are not used past it, the files are read"
    ));
}

/// One pass's walk of an earlier file ([`Earlier::cursor`]).
pub struct Cursor {
    reader: Option<LineReader<Box<dyn BufRead + Send>>>,
    name: String,
    /// The most bytes of sets of one size held.
    cap: u64,
    check: InputCheck,
    seen: Digest,
    /// The first set of a larger size than the group's.
    pending: Option<LineSet>,
    /// The size of the sets in `group`.
    size: Option<u64>,
    group: HashMap<LineSetKey, LineSet>,
}

impl Cursor {
    /// The earlier lines of the content `key`, if the file holds them;
    /// keys must come in increasing size.
    pub(super) fn take(&mut self, key: &LineSetKey) -> Option<Lines> {
        if self.size != Some(key.size) {
            self.load(key.size);
        }
        self.group.remove(key).map(|s| Lines {
            size: s.payload,
            lines: s.lines,
        })
    }

    /// The sets of `size` into the group, those of smaller sizes passed.
    fn load(&mut self, size: u64) {
        self.group.clear();
        self.size = Some(size);
        let mut held = 0u64;
        loop {
            let set = match self.pending.take() {
                Some(s) => s,
                None => match self.next_set() {
                    Some(s) => s,
                    None => return,
                },
            };
            if set.key.size > size {
                self.pending = Some(set);
                return;
            }
            if set.key.size < size {
                continue;
            }
            held += 64 + 16 * set.lines.len() as u64;
            if held <= self.cap {
                self.group.insert(set.key, set);
            }
        }
    }

    /// The next set of the file; `None` at its end or at a line that is
    /// not one (said once, and the file is left).
    fn next_set(&mut self) -> Option<LineSet> {
        let r = self.reader.as_mut()?;
        let got = loop {
            let (line, no) = match r.next_numbered() {
                Ok(Some(l)) => l,
                Ok(None) => {
                    break self
                        .check
                        .finish(&self.seen, r.name(), r.line_number())
                        .err()
                        .map(|e| e.to_string())
                }
                Err(e) => break Some(e.to_string()),
            };
            let at = |m: String| Some(format!("{}:{no}: {m}", self.name));
            match line {
                Line::Header(k, p) => match self.check.header(k, p) {
                    Ok(()) => continue,
                    Err(m) => break at(m),
                },
                Line::Trailer(k, p) => match self.check.trailer(k, &p) {
                    Ok(()) => continue,
                    Err(m) => break at(m),
                },
                Line::Comment(_) => continue,
                Line::Data(d) => match LineSet::parse(d) {
                    Ok(s) => {
                        self.seen.add_mix(LineSet::mix(d, s.key.content));
                        return Some(s);
                    }
                    Err(m) => break at(m),
                },
            }
        };
        if let Some(why) = got {
            warn(&why);
        }
        self.reader = None;
        None
    }
}

/// What one pass over the contents does with line sets: takes the
/// earlier ones (`cursor`), writes each content's (`keep`, the first pass
/// over all of them).
#[derive(Default)]
pub struct Pass {
    pub cursor: Option<Cursor>,
    pub keep: Option<Keep>,
    /// Contents whose lines came from the earlier file.
    pub taken: u64,
    /// Files opened for their lines.
    pub read: u64,
}

impl Pass {
    /// A pass that neither takes nor keeps (the theme's, a group's).
    pub fn none() -> Pass {
        Pass::default()
    }
}

/// This run's line sets file, written as the first whole pass reads or
/// takes each content's lines. A write that fails stops the writing; the
/// error comes back from [`Keep::finish`].
///
/// With a `room` (`--lines-room-beside`), the file is given up as soon as
/// it takes more on disk than that, and removed: the next re-run's work
/// folder would hold it beside both runs' chunk records, over the scratch
/// budget (docs/performance.md, "Re-runs and scratch space"). A run without
/// line sets only reads every file again.
pub struct Keep {
    out: Option<Output>,
    to: KeepTo,
    buf: Vec<u8>,
    seen: Digest,
    failed: Option<crate::Error>,
}

/// What became of this run's line sets ([`Keep::finish`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    Written,
    /// Given up, past their room (in bytes).
    OverRoom(u64),
}

/// Where a run's line sets go and what bounds them ([`Keep::create`]).
#[derive(Debug, Clone)]
pub struct KeepTo {
    pub path: PathBuf,
    /// Their header ([`header`]).
    pub params: Params,
    pub compress: bool,
    /// The most bytes they may take on disk; `None`: no bound.
    pub room: Option<u64>,
}

impl Keep {
    pub fn create(to: &KeepTo) -> Result<Keep> {
        let mut buf = Vec::with_capacity(1 << 16);
        write_header(Kind::Lines, &to.params, &mut buf);
        Ok(Keep {
            out: Some(Output::create_records(Some(&to.path), to.compress)?),
            to: to.clone(),
            buf,
            seen: Digest::default(),
            failed: None,
        })
    }

    /// The lines of the content `key` (before any theme is cut: the theme
    /// is the run's, not the content's).
    pub(super) fn push(&mut self, key: &LineSetKey, lines: &Lines) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        if self.failed.is_some() {
            return;
        }
        let start = self.buf.len();
        write_set(key, lines.size, &lines.lines, &mut self.buf);
        let line = &self.buf[start..self.buf.len() - 1];
        self.seen.add_mix(LineSet::mix(line, key.content));
        if self.buf.len() >= 1 << 16 {
            if let Err(e) = out.write_all(&self.buf) {
                self.failed = Some(e);
            }
            self.buf.clear();
            if self.to.room.is_some_and(|r| out.bytes_on_disk() > r) {
                self.give_up();
            }
        }
    }

    /// Past the room: the temp file goes, and so does an older file of
    /// this name (an earlier run's in this folder, which the next re-run
    /// would otherwise take as this run's).
    fn give_up(&mut self) {
        self.out = None;
        self.buf = Vec::new();
        let _ = std::fs::remove_file(&self.to.path);
    }

    pub fn finish(mut self) -> Result<Kept> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let (Some(mut out), room) = (self.out.take(), self.to.room) else {
            // Only a room gives the output up.
            return Ok(Kept::OverRoom(self.to.room.unwrap_or_default()));
        };
        write_trailer(
            Kind::Lines,
            &crate::formats::digest_params(&self.seen, "sets"),
            &mut self.buf,
        );
        out.write_all(&self.buf)?;
        out.finish()?;
        let Some(room) = room else {
            return Ok(Kept::Written);
        };
        // The last bytes were still in zstd's worker at the last look.
        let size = std::fs::metadata(&self.to.path).map_or(0, |m| m.len());
        if size > room {
            let _ = std::fs::remove_file(&self.to.path);
            return Ok(Kept::OverRoom(room));
        }
        Ok(Kept::Written)
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
