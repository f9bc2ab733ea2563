//! A re-run's pairs whose two contents the earlier run verified together,
//! under other file ids: their figure is that run's, and neither file is
//! read.
//!
//! Identical copies are analysed through one of them (the lowest id), so
//! editing or removing that copy moves its pairs to another one: the
//! analysis lists them again (its delta counts every file with the content
//! of a file added, removed or changed), although the earlier run verified
//! the very same bytes. On releases of one project, where most files have
//! copies in other releases, those pairs are as many as the edited files'
//! own (2026-11-29: 3,645 files in the delta for 346 edited).
//!
//! A pair's exact figure depends only on the bytes compared and on how
//! they are compared: the two files' contents (content hash, size, type,
//! view), the sizes the analysis gives (payloads, with templates), and the
//! run's settings, which the earlier verified header must agree on
//! ([`super::previous::Previous::check`], before any pair is written). So
//! an earlier exact row of the same two contents in the same order gives
//! the figure a verification would compute; the threshold is applied to it
//! as to a computed one. A pair without such a row (below the earlier
//! threshold, or of new content) is verified as usual: the output is the
//! bytes of a run from scratch either way.
//!
//! Only the earlier rows with a file changed, added or removed are kept
//! (the others are merged by id, [`super::previous::Rows`], and hold no
//! content of the delta), at most what a quarter of `--memory` holds;
//! beyond that the pairs are verified. Regions are not kept: with
//! `--regions` every pair of the delta is verified.

use super::PairIn;
use crate::error::Result;
use crate::formats::files::{changed_since, read_file_table};
use crate::formats::headers::{Delta, VerifyParams};
use crate::formats::views::{FileType, ViewKind};
use crate::formats::{open_input, pairs, FileEntry, Kind, Line, LineReader};
use std::collections::HashMap;
use std::path::Path;

/// Bytes an entry of the map takes, counted against its budget (two keys
/// of ~64 bytes, the figure, the table's overhead).
const ENTRY_BYTES: u64 = 160;

/// What a file's side of a pair is compared as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Side {
    content: u128,
    size: u64,
    raw_size: u64,
    ftype: FileType,
    view: ViewKind,
    view_hash: Option<u128>,
    /// The pair's size of this file (its payload, with templates).
    pair_size: u64,
}

impl Side {
    fn of(e: &FileEntry, pair_size: u64) -> Side {
        Side {
            content: e.content,
            size: e.size,
            raw_size: e.view.raw_size,
            ftype: e.ftype,
            view: e.view.kind,
            view_hash: e.view.hash,
            pair_size,
        }
    }
}

/// The earlier run's exact figures of the pairs with a file changed since,
/// by the two files' contents.
#[derive(Debug, Default)]
pub(super) struct ByContent {
    figures: HashMap<(Side, Side), u64>,
    /// Pairs whose figure was taken from here.
    pub(super) used: u64,
}

impl ByContent {
    /// For a delta pairs file (`delta=1` in its header) with files changed
    /// since the earlier run (`previous` its verified pairs, `previous_files`
    /// its file table): the earlier figures of the pairs with a file
    /// changed. `None` for anything else: pairs that are not a regular
    /// file, not a delta, or a delta of no changed file.
    pub(super) fn for_delta(
        pairs_path: &Path,
        files: &[FileEntry],
        previous: &Path,
        previous_files: &Path,
        memory: u64,
    ) -> Result<Option<ByContent>> {
        if !std::fs::metadata(pairs_path).is_ok_and(|m| m.is_file()) {
            return Ok(None);
        }
        let Ok(p) = crate::formats::read_header(pairs_path, Kind::Pairs) else {
            // The real reading says what is wrong with it.
            return Ok(None);
        };
        let delta = Delta::parse(&p).ok().flatten();
        if delta.is_none_or(|d| d.changed_files == Some(0)) {
            return Ok(None);
        }
        let (old, _) = read_file_table(previous_files)?;
        let (_, new_of_old) = changed_since(files, &old);
        let max = (memory / 4 / ENTRY_BYTES).max(1) as usize;
        Ok(Some(load(previous, &old, &new_of_old, max)?))
    }

    /// Bytes held, as counted against the quarter of `--memory`.
    pub(super) fn bytes(&self) -> u64 {
        self.figures.len() as u64 * ENTRY_BYTES
    }

    /// The earlier figure of pair `p` of `files`, if the earlier run
    /// verified its two contents exactly, in this order.
    pub(super) fn figure(&self, files: &[FileEntry], p: &PairIn) -> Option<u64> {
        let (fa, fb) = (files.get(p.a as usize)?, files.get(p.b as usize)?);
        let key = (Side::of(fa, p.size_a), Side::of(fb, p.size_b));
        self.figures.get(&key).copied()
    }
}

/// Whether `by_content` gives pair `p` a figure (the plan of the files
/// to read leaves such pairs out).
pub(super) fn knows(by_content: Option<&ByContent>, files: &[FileEntry], p: &PairIn) -> bool {
    by_content.is_some_and(|b| b.figure(files, p).is_some())
}

/// The exact rows of `previous` (verified pairs of the file table `old`)
/// with a file that has no id now (`new_of_old`: changed, removed, or of a
/// changed content), at most `max` of them. A file that is not verified
/// pairs, or a row that does not fit the table, gives none: the merge of
/// the earlier rows ([`super::previous::Rows`]) reads the same file and
/// says what is wrong with it.
fn load(previous: &Path, old: &[FileEntry], new_of_old: &[u32], max: usize) -> Result<ByContent> {
    let (input, name) = open_input(previous)?;
    let mut r = LineReader::new(input, name);
    let mut figures = HashMap::new();
    let none = Ok(ByContent::default());
    let gone = |id: u32| new_of_old.get(id as usize).is_none_or(|&n| n == u32::MAX);
    // The table is in id order (ids may skip: collections).
    let side = |id: u32, size: u64| {
        let at = old.binary_search_by_key(&id, |e| e.id).ok()?;
        Some(Side::of(&old[at], size))
    };
    while let Some(line) = r.next_line()? {
        let d = match line {
            Line::Data(d) => d,
            Line::Header(_, p) if !matches!(VerifyParams::parse(&p), Ok(Some(_))) => return none,
            _ => continue,
        };
        let Ok((p, Some(figure))) = pairs::parse_line(d) else {
            return none;
        };
        if !figure.exact || !(gone(p.a) || gone(p.b)) {
            continue;
        }
        let (Some(a), Some(b)) = (side(p.a, p.size_a), side(p.b, p.size_b)) else {
            return none;
        };
        figures.insert((a, b), figure.bytes);
        if figures.len() >= max {
            break;
        }
    }
    Ok(ByContent { figures, used: 0 })
}
