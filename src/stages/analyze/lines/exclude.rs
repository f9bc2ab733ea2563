//! What the line source leaves out, as the chunks do: the lines of a
//! generated site's theme and the text of marked templates.
//!
//! The chunk side drops a chunk held by web pages of `--site-names` names
//! or more (fsim-partition, `stages::partition::site`), and the chunks of
//! the templates files a user marked (`--templates`). Without the same
//! rule for lines, the line source at any size would link the pages of a
//! site by their header, sidebar and footer lines, and the files of a
//! marked template by its lines: exactly the links the user asked to
//! leave out.
//!
//! **Theme lines.** A line (a token of [`super::read`]) held by text web
//! pages (`.html`, `.htm`, `.xhtml`, any size) of at least `site_names`
//! page names ([`page_key`]: the file name, lower-cased, without its
//! digits) is a theme line, and counts for no pair of pages: it is taken
//! out of the lines of every web page (a content one of whose files is a
//! text web page) before the prefix filter, so a pair with a page must
//! reach its thresholds, of the files' sizes, on the page's other lines.
//! Other files keep all their lines: a blank line, `}` or `</div>` that
//! pages of many names hold is a theme line too, and must not change the
//! pairs of sources and texts (the chunks' rule drops ~100-byte chunks,
//! which such files rarely share with pages). The names are
//! counted exactly: the distinct (line, name) entries of the pages are
//! gathered, sorted and counted, in one pass when they fit in the memory
//! given, else in passes over a share of the line hashes each (every page
//! read again per pass), the same set either way. A tree whose pages have
//! fewer names than the threshold reads nothing for this.
//!
//! **Templates.** With `--templates`, each file is read whole, cut with
//! the run's chunker, and its template chunks are cut out
//! ([`crate::chunking::reader::payload`], as fsim-verify does): the line
//! source compares the payloads, with their sizes, which are the sizes of
//! the chunk pairs and what fsim-verify measures, so its bound and its cut
//! at fsim-verify's threshold hold again.

use super::cache::Pass;
use super::read::{window_lines, windows};
use super::LineFiles;
use crate::chunking::chunker::Chunker;
use crate::formats::templates::TemplateSet;
use crate::io::hashing::MixedMap;

/// Marked templates cut out of the files the line source reads, with the
/// chunker of the run that marked them.
#[derive(Debug, Clone)]
pub struct LineTemplates {
    pub set: TemplateSet,
    pub chunker: Chunker,
}

/// What the readers leave out of a file's lines.
#[derive(Debug, Default)]
pub(super) struct Exclude<'t> {
    /// The theme lines' hashes (empty: the rule is off or found none).
    theme: MixedMap<u64, ()>,
    /// The contents of text web pages, whose theme lines are left out
    /// (filled with `theme`).
    pages: MixedMap<u128, ()>,
    pub templates: Option<&'t LineTemplates>,
}

/// Bytes held per (line, page name) entry while the names are counted
/// (the entry and the vector's slack), and per theme line kept (its hash
/// in the table and the table's slack).
const BYTES_PER_NAME_ENTRY: u64 = 16;
pub(super) const BYTES_PER_THEME_LINE: u64 = 32;

impl<'t> Exclude<'t> {
    /// Nothing left out but the templates, if any.
    pub fn templates(templates: Option<&'t LineTemplates>) -> Self {
        Exclude {
            theme: MixedMap::default(),
            pages: MixedMap::default(),
            templates,
        }
    }

    /// Whether the line of hash `h` is a theme line.
    #[inline]
    pub fn is_theme(&self, h: u64) -> bool {
        !self.theme.is_empty() && self.theme.contains_key(&h)
    }

    /// Whether `content`'s theme lines are left out: it is a web page's
    /// and there are theme lines.
    #[inline]
    pub fn cuts_theme_of(&self, content: u128) -> bool {
        !self.theme.is_empty() && self.pages.contains_key(&content)
    }

    /// Theme lines found.
    pub fn theme_lines(&self) -> u64 {
        self.theme.len() as u64
    }

    /// The theme lines of `files`' text web pages (module doc), found in
    /// at most about `memory` bytes; `site_names` 0 (or 1) finds none.
    /// Returns the passes over the pages it took (0: none read).
    pub fn find_theme(
        &mut self,
        files: &LineFiles,
        site_names: u64,
        threads: usize,
        memory: u64,
    ) -> u64 {
        let (pages, names) = pages(files);
        if site_names < 2 || names < site_names as usize {
            return 0;
        }
        let mut parts = 1u64;
        let mut passes = 0u64;
        let theme = loop {
            match self.theme_in(
                files,
                &pages,
                site_names,
                parts,
                threads,
                memory,
                &mut passes,
            ) {
                Some(theme) => break theme,
                // More entries than fit: again, in more parts.
                None => parts *= 4,
            }
        };
        self.theme = theme.into_iter().map(|h| (h, ())).collect();
        if !self.theme.is_empty() {
            self.pages = pages.iter().map(|p| (files.content(p.0), ())).collect();
        }
        passes
    }

    /// The theme lines, the pages read once per part of the line hashes
    /// (`parts` of them); `None` when a part's entries do not fit in
    /// `memory` (and `parts` can still grow).
    #[allow(clippy::too_many_arguments)]
    fn theme_in(
        &self,
        files: &LineFiles,
        pages: &[(usize, Vec<u32>)],
        site_names: u64,
        parts: u64,
        threads: usize,
        memory: u64,
        passes: &mut u64,
    ) -> Option<Vec<u64>> {
        let reps: Vec<usize> = pages.iter().map(|p| p.0).collect();
        let mut theme = Vec::new();
        for part in 0..parts {
            *passes += 1;
            let mut seen = NameEntries::default();
            let mut at = 0;
            for window in windows(files, &reps) {
                for lines in window_lines(files, window, threads, self, &mut Pass::none()) {
                    let names = &pages[at].1;
                    at += 1;
                    let Some(lines) = lines else { continue };
                    for &(h, _, _) in lines.lines.iter().filter(|l| l.0 % parts == part) {
                        for &k in names {
                            seen.push(h, k);
                        }
                    }
                    if seen.over(memory) && parts < 1 << 16 {
                        return None;
                    }
                }
            }
            theme.extend(seen.lines_of(site_names));
        }
        Some(theme)
    }
}

/// The text web pages of `files`, one per content (the smallest id, as
/// the line source reads them), with the distinct page names of the files
/// holding it, by file index; and how many names there are in all.
#[allow(clippy::type_complexity)]
fn pages(files: &LineFiles) -> (Vec<(usize, Vec<u32>)>, usize) {
    let mut by_content: MixedMap<u128, (usize, Vec<u32>)> = MixedMap::default();
    let mut all: Vec<u32> = Vec::new();
    for &(row, key) in files.pages() {
        let i = row as usize;
        all.push(key);
        let p = by_content
            .entry(files.content(i))
            .or_insert((i, Vec::new()));
        if files.id(i) < files.id(p.0) {
            p.0 = i;
        }
        p.1.push(key);
    }
    all.sort_unstable();
    all.dedup();
    let mut pages: Vec<(usize, Vec<u32>)> = by_content
        .into_values()
        .map(|(i, mut keys)| {
            keys.sort_unstable();
            keys.dedup();
            (i, keys)
        })
        .collect();
    pages.sort_unstable_by_key(|p| p.0);
    (pages, all.len())
}

/// Distinct (line hash, page name) entries, sorted and merged whenever
/// the list doubles.
#[derive(Default)]
struct NameEntries {
    v: Vec<(u64, u32)>,
    merged: usize,
}

impl NameEntries {
    fn push(&mut self, h: u64, key: u32) {
        self.v.push((h, key));
        if self.v.len() >= (2 * self.merged).max(1 << 16) {
            self.merge();
        }
    }

    fn merge(&mut self) {
        self.v.sort_unstable();
        self.v.dedup();
        self.merged = self.v.len();
    }

    /// Whether the entries, merged, hold more than half of `memory` (they
    /// may double before the next merge).
    fn over(&mut self, memory: u64) -> bool {
        if self.v.len() as u64 * BYTES_PER_NAME_ENTRY <= memory {
            return false;
        }
        self.merge();
        self.v.len() as u64 * BYTES_PER_NAME_ENTRY > memory / 2
    }

    /// The lines held by pages of at least `min` names.
    fn lines_of(mut self, min: u64) -> Vec<u64> {
        self.merge();
        self.v
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|run| run.len() as u64 >= min)
            .map(|run| run[0].0)
            .collect()
    }
}

#[cfg(test)]
#[path = "exclude_tests.rs"]
mod tests;
