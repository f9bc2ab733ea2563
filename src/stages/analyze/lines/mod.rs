//! A second candidate source: pairs of text files whose lines are in
//! common but too scattered for a chunk to survive. A catalog alternates
//! `msgid` lines, the same in every locale, with `msgstr` lines, different
//! in each; a 500-byte file edited every few lines keeps no 100-byte
//! chunk; a module run through a formatter (`black` re-quoting and
//! re-indenting one line in three) keeps two thirds of its lines and no
//! chunk. Chunks find none of them, whatever the floor; their lines do.
//!
//! For the selected files (text files of at most `max_size` bytes, any
//! size unless told, and catalogs — `.po`, `.pot` — of any size when
//! asked), each distinct content (one file per content hash, the smallest
//! id, as the chunk analysis collapses copies) is read and cut into lines
//! (up to and including `\n`, as fsim-verify's; [`read`]), each line
//! identified by its xxh3-64 hash. Two contents' **multiset line overlap**
//! is the sum over the distinct lines they share of min(occurrences in a,
//! occurrences in b) × the line's length. It is an upper bound of the
//! bytes of a longest common subsequence of lines (every common line is a
//! line of both files, used at most as often as it occurs in each), so a
//! pair whose exact figure reaches `min_percent` always has an overlap
//! that does: keeping the pairs whose overlap reaches the threshold loses
//! none of them. The same bound cuts the pairs at the threshold
//! fsim-verify keeps pairs from ([`LineSource::verify_floor`]): a pair
//! whose overlap is under it cannot reach it, and would cost fsim-verify
//! two files read for nothing (on a source tree with translation
//! catalogs, five candidates in six). Long lines (over fsim-verify's
//! [`LONG_LINE`](crate::stages::verify::LONG_LINE): one-line XML, minified
//! code, single-line JSON) are cut into the pieces fsim-verify compares
//! ([`for_each_line_token`](crate::stages::verify::for_each_line_token)),
//! so the overlap bounds its figure for them too, and two versions of a
//! one-line file share most of their pieces where they share no line.
//!
//! **Which pairs are compared: a prefix filter** (AllPairs, Bayardo et
//! al., WWW 2007; PPJoin, Xiao et al., WWW 2008), exact. Every pair is
//! looked at from its smaller content (contents in (size, id) order),
//! which needs at least t bytes of overlap, t the least overlap
//! [`order::least_kept`] finds: `min_bytes`, `min_percent` and
//! fsim-verify's threshold, as percentages of that smaller size (the
//! percentages of a pair are of its smaller file or of a larger one, so
//! none asks less). Lines are ranked rarest first: by how many contents
//! hold them, ties by hash. A content's **prefix** is its first lines in
//! that order up to where the weight (length × occurrences) of the rest
//! falls under t. A pair whose overlap reaches t shares a line of the
//! smaller content's prefix: the lines after the prefix weigh less than t
//! together, so they alone cannot make it. So each content is compared
//! only with the smaller contents whose prefix holds one of its lines,
//! found in the postings of the prefixes; what they share there is
//! summed on the way, and the pairs whose sum plus the weight of the rest
//! of the smaller content's lines can still reach the threshold get their
//! exact overlap by merging those rest lines with the larger content's
//! ([`join`]), then the same `keep` and [`reaches`] as ever. Frequent
//! lines (blank lines, `}`, `import os`) come last, past the prefix of
//! any content not mostly made of them, and cost a look-up per content.
//! Which pairs are kept does not depend on the order, only what it costs.
//!
//! A pair found here and not by the chunks is written with `common` = 0 and
//! `shared` = 0 (no chunk evidence: without verification it reports
//! nothing); fsim-verify gives it its exact figure. Pairs the chunks found
//! keep their chunk figures. The files must be reachable (as for
//! fsim-verify); a file that cannot be read, or whose size changed since
//! chunking, is left out of this source (fsim-verify warns about it).
//!
//! Cost: reading the selected files once (`-j` threads read and hash the
//! files of a window of 256 files or 4 MiB; a raw file is streamed 256 KiB
//! at a time), ranking their distinct lines (a sort), and per content,
//! one look-up per distinct line in the postings of the prefixes and one
//! addition per smaller content whose prefix holds it; then per candidate
//! pair a merge of the smaller content's lines past its prefix into the
//! larger's (a galloping search: about the smaller's lines × log). `-j`
//! threads share the contents. Memory: the line postings (8 bytes per
//! distinct line of a content in its list, 8 more when in its prefix) and
//! the line table (~40 bytes per distinct line), counted as 56 bytes per
//! distinct line of a content, and per content of a set 40 bytes and one
//! accumulator per thread (8 bytes), within three quarters of `--capacity`
//! (the bins are done by then) less the file table of the files it may
//! read ([`LineFiles`]: ~41 bytes a file and its front-coded path, loaded
//! once the bins are done) and less 32 bytes per file compared (the
//! order of the contents and the groups' lists); plus, per reader, the
//! lines of one file (16 bytes per distinct line, up to twice that while
//! it is read) and its longest line. When
//! the contents do not fit, they are read once to count their lines into
//! a count-min sketch of the lines' frequencies (an eighth of the budget,
//! 16 KiB to 64 MiB: [`order::Sketch`]) and into a spill file on disk
//! ([`spill`]: 16 bytes per distinct line of a content), and cut, in
//! their order, into groups that fit in three quarters of the rest; each
//! group is taken from the spill file, ranked by the sketch (the same
//! order for all) and joined with itself in memory, then with every later
//! content, taken from the spill file one at a time by each thread: the
//! files are read at most twice (the attempt in one set, and the count),
//! and with G groups the spill file about G/2 times, for the same pairs
//! as in one set ([`line_pairs`]). A single
//! content larger than a group is a group alone. The pairs go to the
//! analysis's pair store as they are found, which spills them beyond its
//! quarter of `--capacity`. On the quality corpus (Django, moment and
//! bash, four releases each: 15,000 contents) it takes 2.1-2.7 s and
//! 117 MB alone, against 1.5-1.8 s and 75 MB for the files up to 4 KiB
//! (docs/performance.md, *Line source on files of any size*).

pub mod cache;
mod exclude;
mod join;
mod order;
mod read;
mod spill;
mod table;
#[cfg(test)]
mod tests;

use super::{Pair, PairStore, Thresholds};
use crate::error::Result;
use crate::formats::{percent, FileEntry, FileType, ViewKind};
use cache::{Earlier, Keep, Pass};
pub use cache::{KeepTo, Kept};
use exclude::Exclude;
pub use exclude::LineTemplates;
use order::{Interner, Loaded, Postings, Sketch};
use read::{window_lines, windows};
use spill::{SpillWriter, Spilled, Twice};
use std::sync::Mutex;
pub use table::LineFiles;

/// Which files the line source looks at, and its threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineSource {
    /// Text files of at most this many bytes (`None`: any size; 0: none).
    pub max_size: Option<u64>,
    /// Also translation catalogs (`.po`, `.pot`), whatever their size.
    pub catalogs: bool,
    /// Keep a pair when its line overlap reaches this (percent of the file
    /// the analysis thresholds name, and their `min_bytes`).
    pub thresholds: Thresholds,
    /// The threshold fsim-verify keeps pairs from (percent; 0: none): a
    /// pair whose overlap, an upper bound of fsim-verify's figure, is under
    /// it as a percentage of the smaller file is not a candidate
    /// ([`reaches`]).
    pub verify_floor: f64,
    /// A line held by text web pages of at least this many page names is
    /// a generated site's theme and counts for no pair (0: off; fsim-partition's
    /// `--site-names` for chunks; [`exclude`]).
    pub site_names: u64,
}

/// What the line source did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LineStats {
    /// Distinct contents compared.
    pub contents: u64,
    /// Selected files left out (unreadable, or changed since chunking).
    pub unreadable: u64,
    /// Pairs whose prefixes met and whose bound reached the threshold:
    /// their overlap was merged.
    pub candidates: u64,
    /// Pairs kept by the line overlap (before merging with the chunk pairs).
    pub pairs: u64,
    /// Of those, pairs the chunk analysis had not kept.
    pub added: u64,
    /// Groups the contents were joined in (more than 1 when they were over
    /// the memory).
    pub passes: u64,
    /// Lines of a site's theme left out ([`exclude`]).
    pub theme_lines: u64,
    /// Contents whose lines came from the earlier run's line sets
    /// ([`cache`]), not from their files.
    pub taken: u64,
    /// Files opened for their lines (a site theme's pages besides): each
    /// content's at most twice, in one set or in groups ([`spill`]).
    pub read: u64,
    /// In groups: (content, line) entries left out as the line is held by
    /// that content only ([`spill::Twice`]).
    pub single: u64,
    /// What became of this run's line sets (`None`: none were asked for).
    pub kept: Option<Kept>,
    /// (content, line) entries interned when all contents were joined in
    /// one set: a re-run with few changed contents interns only the lines
    /// they hold ([`Filter`]).
    pub interned: u64,
}

/// What the line source takes from an earlier run and keeps for the next.
#[derive(Debug, Default)]
pub struct Reuse<'a> {
    /// A re-run's changed files ([`super::Changed`]): only the pairs with
    /// one of them are looked for (the others are in the earlier run's
    /// verified pairs).
    pub only: Option<&'a super::Changed>,
    /// The earlier run's line sets, taken instead of reading the files.
    pub earlier: Option<Earlier>,
    /// Where this run's line sets go: the path, the header, compressed.
    pub keep: Option<KeepTo>,
}

impl Reuse<'_> {
    /// The memory the earlier line sets take of the line source's
    /// `memory` ([`cache::group_bytes`]).
    fn held(&self, memory: u64) -> u64 {
        match self.earlier {
            Some(_) => cache::group_bytes(memory),
            None => 0,
        }
    }

    /// A pass over all the contents: it takes (holding at most `cap`
    /// bytes of the earlier sets) and keeps.
    fn whole_pass(&self, cap: u64) -> Result<Pass> {
        Ok(Pass {
            cursor: self.earlier.as_ref().map(|e| e.cursor(cap)),
            keep: match &self.keep {
                Some(to) => Some(Keep::create(to)?),
                None => None,
            },
            taken: 0,
            read: 0,
        })
    }
}

/// A translation catalog: a source catalog by its name (`.po`, `.pot`), a
/// compiled one (`.mo`) by its bytes, read as its messages (its view).
pub fn is_catalog(e: &FileEntry) -> bool {
    e.path.ends_with(b".po") || e.path.ends_with(b".pot") || e.view.kind == ViewKind::Mo
}

fn selected(e: &FileEntry, src: &LineSource) -> bool {
    e.ftype == FileType::Text
        && e.size > 0
        && (src.max_size.is_none_or(|m| e.size <= m) || (src.catalogs && is_catalog(e)))
}

/// Bytes the line source holds per (content, distinct line): its entry in
/// the content's list and in the postings of the prefixes (8 + 8), and
/// the line's share of the intern table, length and postings header (~40,
/// counted per entry: a line has at least one).
const BYTES_PER_ENTRY: u64 = 56;

/// Bytes the line source holds per content of a set besides its lines:
/// its id and size, where its lines start, its prefix (16 + 8 + 16), and
/// per thread an accumulator ([`BYTES_PER_ACC`]). Small files have few
/// lines: at 10^7 files of ~200 bytes this is as much as their lines.
const BYTES_PER_CONTENT: u64 = 40;

/// Bytes of a content in each thread's accumulator ([`join::Work`]).
const BYTES_PER_ACC: u64 = 8;

/// Bytes held per file compared, whatever the set (counted with the file
/// table by the caller: [`LineFiles::compared_rows`]): its content's file
/// in the order of the contents and then, when they are joined in groups,
/// its place in the spill file and its count of lines (8, then 24:
/// [`Held`]), and for the changed ones of a re-run a copy of that (24).
pub const BYTES_PER_REP: u64 = 48;

/// What a set of `contents` contents holding `entries` (content, line)
/// entries costs with `threads` threads.
fn set_bytes(entries: u64, contents: u64, threads: usize) -> u64 {
    entries * BYTES_PER_ENTRY + contents * (BYTES_PER_CONTENT + threads as u64 * BYTES_PER_ACC)
}

/// The pairs of the selected files whose line overlap reaches the
/// threshold, ids of the smallest file of each content, handed to `out`
/// (which sorts them, within its memory) in batches as the workers find
/// them: however many pairs there are, none is held here.
///
/// Memory: at most `memory` for the lines (besides one accumulator of 8
/// bytes per content per thread and the lines of the files being read).
/// When the lines of all contents do not fit ([`BYTES_PER_ENTRY`] per
/// distinct line of a content), the contents are joined in groups (module
/// doc): the same pairs.
///
/// `reuse.only`: a re-run's changed files ([`super::Changed`]): only the
/// pairs with one of them are looked for (the others are in the earlier
/// run's verified pairs): an unchanged content is only looked up in the
/// postings of the changed contents' prefixes, and a group without a
/// changed content reads only the changed files after it. `reuse.earlier`:
/// the lines of the contents an earlier run kept are taken, not read;
/// `reuse.keep`: this run's are written for the next ([`cache`]).
///
/// `templates`: marked templates, cut out of every file read ([`exclude`]);
/// the lines of a site's theme (`src.site_names`) are found first, within
/// `memory`, and left out of every file.
pub fn line_pairs(
    files: &LineFiles,
    src: &LineSource,
    templates: Option<&LineTemplates>,
    threads: usize,
    memory: u64,
    reuse: &Reuse,
    out: &mut PairStore,
) -> Result<LineStats> {
    let reps = representatives(files);
    let mut ex = Exclude::templates(templates);
    if !reps.is_empty() {
        ex.find_theme(files, src.site_names, threads, memory);
    }
    let theme_lines = ex.theme_lines();
    let memory = memory.saturating_sub(theme_lines * exclude::BYTES_PER_THEME_LINE);
    let cap = reuse.held(memory);
    let memory = memory - cap;
    let tmpdir = out.tmpdir().map(std::path::Path::to_path_buf);
    let store = Mutex::new(out);
    let run = Run {
        files,
        src,
        threads,
        only: reuse.only,
        store: &store,
        ex: &ex,
    };
    let filter = reuse
        .only
        .and_then(|only| Filter::of(files, &reps, only, threads, &ex, memory / 8));
    let memory = memory - filter.as_ref().map_or(0, |f| Filter::bytes(&f.lines));
    let mut pass = reuse.whole_pass(cap)?;
    let stats = match load(
        files,
        &reps,
        threads,
        Some(memory),
        &ex,
        &mut pass,
        filter.as_ref(),
    ) {
        Some((set, unreadable)) => {
            let (taken, read) = (pass.taken, pass.read);
            let kept = pass.keep.map(Keep::finish).transpose()?;
            LineStats {
                taken,
                read,
                kept,
                ..run.in_one(set, unreadable)?
            }
        }
        // Over the memory: the keeping starts again with the count.
        None => {
            let tried = pass.read;
            drop(pass);
            let st = run.in_groups(reps, memory, reuse, cap, tmpdir.as_deref())?;
            LineStats {
                read: tried + st.read,
                ..st
            }
        }
    };
    Ok(LineStats {
        theme_lines,
        ..stats
    })
}

/// One file per content (the smallest id), smaller contents first. Found
/// by sorting the compared rows by content (4 bytes a row) rather than in
/// a map by content (~50 bytes a content: 500 MB at 10^7 files, outside
/// any budget).
fn representatives(files: &LineFiles) -> Vec<usize> {
    let mut rows: Vec<u32> = (0..files.len() as u32)
        .filter(|&i| files.compared(i as usize))
        .collect();
    rows.sort_unstable_by_key(|&i| (files.content(i as usize), files.id(i as usize)));
    rows.dedup_by_key(|i| files.content(*i as usize));
    let mut reps: Vec<usize> = rows.into_iter().map(|i| i as usize).collect();
    reps.sort_unstable_by_key(|&i| (files.size(i), files.id(i)));
    reps
}

/// A re-run's join with few changed contents: it looks only for pairs with
/// a changed content, so an unchanged content's lines that no changed
/// content holds can be in none of its pairs, and are left out of the
/// interning (most of the lines, most of the line source's time, when 1 %
/// changed). The pairs and their overlaps are those of the whole sets: a
/// pair's common lines are all kept, and a content's prefix
/// ([`order::Loaded`]) is taken from the lines it keeps, with its whole
/// size, so it still holds one of any pair's common lines.
struct Filter<'a> {
    /// Every line of the changed contents.
    lines: crate::io::hashing::MixedSet<u64>,
    only: &'a super::Changed,
}

impl<'a> Filter<'a> {
    /// The filter of a re-run whose changed contents are at most a quarter
    /// of `reps` and their lines fit in `cap` bytes; `None` otherwise (all
    /// lines interned, as from scratch).
    fn of(
        files: &LineFiles,
        reps: &[usize],
        only: &'a super::Changed,
        threads: usize,
        ex: &Exclude,
        cap: u64,
    ) -> Option<Filter<'a>> {
        let changed: Vec<usize> = reps
            .iter()
            .copied()
            .filter(|&i| only.any(files.id(i), files.id(i)))
            .collect();
        if changed.len() > reps.len() / 4 {
            return None;
        }
        let lines = read::changed_lines(files, &changed, threads, ex, cap)?;
        Some(Filter { lines, only })
    }

    /// What a set of lines takes: a hash and a control byte a slot, and
    /// up to one slot in eight left empty beyond its capacity.
    fn bytes(set: &crate::io::hashing::MixedSet<u64>) -> u64 {
        (set.capacity() as u64 * 8).div_ceil(7) * 9
    }

    /// The lines of the content of file `id` worth interning, into `out`.
    fn keep<'l>(
        &self,
        id: u32,
        lines: &'l [(u64, u32, u32)],
        out: &'l mut Vec<(u64, u32, u32)>,
    ) -> &'l [(u64, u32, u32)] {
        if self.only.any(id, id) {
            return lines;
        }
        out.clear();
        out.extend(lines.iter().filter(|l| self.lines.contains(&l.0)));
        out
    }
}

/// The contents of `reps` read (or taken, by `pass`) and interned in their
/// order (only their lines `filter` keeps), and the files left out;
/// `None` as soon as they hold more than `cap`.
fn load(
    files: &LineFiles,
    reps: &[usize],
    threads: usize,
    cap: Option<u64>,
    ex: &Exclude,
    pass: &mut Pass,
    filter: Option<&Filter>,
) -> Option<(Interner, u64)> {
    let mut set = Interner::default();
    let mut unreadable = 0u64;
    let mut kept = Vec::new();
    for window in windows(files, reps) {
        for (&i, lines) in window
            .iter()
            .zip(window_lines(files, window, threads, ex, pass))
        {
            let Some(lines) = lines else {
                unreadable += 1;
                continue;
            };
            let id = files.id(i);
            let own = match filter {
                Some(f) => f.keep(id, &lines.lines, &mut kept),
                None => &lines.lines,
            };
            set.push(id, lines.size, own);
            if cap.is_some_and(|m| set_bytes(set.entries(), set.contents(), threads) > m) {
                return None;
            }
        }
    }
    Some((set, unreadable))
}

/// One line-source run's settings and output.
struct Run<'a, 'o> {
    files: &'a LineFiles,
    src: &'a LineSource,
    threads: usize,
    only: Option<&'a super::Changed>,
    store: &'a Mutex<&'o mut PairStore>,
    ex: &'a Exclude<'a>,
}

impl Run<'_, '_> {
    /// Whether file `id` changed since the earlier run (always, in a run
    /// from scratch).
    fn changed(&self, id: u32) -> bool {
        self.only.is_none_or(|c| c.any(id, id))
    }

    /// Every content's pairs with the contents before it in `set`; then,
    /// when `later` is given, every file of it (the contents after the
    /// set, in order) compared with the whole set. Returns (candidates,
    /// pairs).
    fn join(&self, set: &Loaded, later: Option<Later>) -> Result<(u64, u64)> {
        let flags: Option<Vec<bool>> = self
            .only
            .map(|_| set.meta.iter().map(|&(id, _)| self.changed(id)).collect());
        let post = Postings::of_prefixes(set, |_| true);
        let changed_post = flags.as_ref().map(|f| Postings::of_prefixes(set, |c| f[c]));
        let probe = join::Probe {
            set,
            post: &post,
            changed_post: changed_post.as_ref(),
            src: self.src,
        };
        let (mut candidates, mut pairs) =
            probe.in_memory(flags.as_deref(), self.threads, self.store)?;
        if let Some(later) = later {
            // A set without a changed content has pairs only with the
            // changed contents after it.
            let any = flags.as_ref().is_none_or(|f| f.contains(&true));
            let changed = |h: &Held| self.changed(self.files.id(h.row as usize));
            let read: std::borrow::Cow<[Held]> = if any {
                later.held.into()
            } else {
                later.held.iter().copied().filter(changed).collect()
            };
            let (c, p) = probe.read_later(
                self.files,
                &read,
                later.spill,
                changed,
                self.threads,
                self.store,
            )?;
            candidates += c;
            pairs += p;
        }
        Ok((candidates, pairs))
    }

    /// All the contents in memory, ranked by their exact frequencies.
    fn in_one(&self, set: Interner, unreadable: u64) -> Result<LineStats> {
        let interned = set.entries();
        let set = set.finish(|_, df| df, self.src, false);
        let (candidates, pairs) = self.join(&set, None)?;
        Ok(LineStats {
            interned,
            contents: set.contents() as u64,
            unreadable,
            candidates,
            pairs,
            added: 0,
            passes: 1,
            theme_lines: 0,
            taken: 0,
            read: 0,
            single: 0,
            kept: None,
        })
    }

    /// Over the memory: the contents counted into a sketch of the lines'
    /// frequencies and written to a spill file ([`spill`]), cut into
    /// groups that fit, each group joined with itself and with the
    /// contents after it, all taken from the spill file (module doc).
    fn in_groups(
        &self,
        reps: Vec<usize>,
        memory: u64,
        reuse: &Reuse,
        cap: u64,
        tmpdir: Option<&std::path::Path>,
    ) -> Result<LineStats> {
        let mut sketch = Sketch::new((memory / 8).clamp(16 << 10, 64 << 20));
        let mut twice = Twice::new(memory.saturating_sub(sketch.bytes()));
        let mut pass = reuse.whole_pass(cap)?;
        let mut spill = SpillWriter::create(tmpdir)?;
        // Each readable content, in (size, id) order (sizes of the
        // payloads with templates).
        let mut counted: Vec<Held> = Vec::with_capacity(reps.len());
        let mut unreadable = 0u64;
        for window in windows(self.files, &reps) {
            for (&i, lines) in window.iter().zip(window_lines(
                self.files,
                window,
                self.threads,
                self.ex,
                &mut pass,
            )) {
                match &lines {
                    Some(l) => {
                        twice.add(&l.lines);
                        counted.push(Held {
                            row: i as u32,
                            entries: l.len().min(u32::MAX as usize) as u32,
                            size: l.size,
                            at: spill.push(l)?,
                        })
                    }
                    None => unreadable += 1,
                }
                sketch.add(&lines);
            }
        }
        // Only the counts from here on (BYTES_PER_REP).
        drop(reps);
        let (spill, single) = shared_only(spill.finish()?, &mut counted, &twice, tmpdir)?;
        drop(twice);
        let contents = counted.len() as u64;
        // A content left with no line can be in no pair.
        counted.retain(|h| h.entries > 0);
        let (taken, read) = (pass.taken, pass.read);
        let kept = pass.keep.map(Keep::finish).transpose()?;
        counted.sort_by_key(|h| (h.size, self.files.id(h.row as usize)));
        let budget = memory.saturating_sub(sketch.bytes());
        let budget = budget - budget / 4;
        let mut stats = LineStats {
            contents,
            unreadable,
            taken,
            read,
            single,
            kept,
            ..LineStats::default()
        };
        let mut from = 0;
        let mut buf = Vec::new();
        while from < counted.len() {
            let mut bytes = 0u64;
            let n = counted[from..]
                .iter()
                .take_while(|h| {
                    bytes += set_bytes(h.entries as u64, 1, self.threads);
                    bytes <= budget
                })
                .count()
                .max(1);
            let mut set = Interner::default();
            for h in &counted[from..from + n] {
                let lines = spill.read(h.at, &mut buf)?;
                set.push(self.files.id(h.row as usize), lines.size, &lines.lines);
            }
            let set = set.finish(|h, _| sketch.get(h), self.src, true);
            let later = Later {
                held: &counted[from + n..],
                spill: &spill,
            };
            let (c, p) = self.join(&set, Some(later))?;
            stats.candidates += c;
            stats.pairs += p;
            stats.passes += 1;
            from += n;
        }
        Ok(stats)
    }
}

/// The spill file again with only the lines `twice` says two contents or
/// more hold, and each content's place and count of lines in it updated;
/// how many (content, line) entries were left out. One sequential pass:
/// the contents are in the order they were written.
fn shared_only(
    spill: Spilled,
    counted: &mut [Held],
    twice: &Twice,
    tmpdir: Option<&std::path::Path>,
) -> Result<(Spilled, u64)> {
    let mut out = SpillWriter::create(tmpdir)?;
    let mut buf = Vec::new();
    let mut single = 0u64;
    for h in counted.iter_mut() {
        let mut lines = spill.read(h.at, &mut buf)?;
        let before = lines.lines.len();
        lines.lines.retain(|l| twice.shared(l.0));
        single += (before - lines.lines.len()) as u64;
        h.entries = lines.lines.len() as u32;
        h.at = out.push(&lines)?;
    }
    Ok((out.finish()?, single))
}

/// A content counted by [`Run::in_groups`]: its row of the file table,
/// its distinct lines, its size, and where its lines are in the spill
/// file (24 bytes: [`BYTES_PER_REP`]).
#[derive(Debug, Clone, Copy)]
struct Held {
    row: u32,
    entries: u32,
    size: u64,
    at: spill::Offset,
}

/// The contents after a group, as its join takes them: from the spill.
struct Later<'a> {
    held: &'a [Held],
    spill: &'a Spilled,
}

/// Whether a pair whose line overlap is `most` bytes can reach fsim-verify's
/// threshold `floor`: fsim-verify drops a pair whose figure is under
/// `floor` % of the file its `--percent-of` names, and the figure is at
/// most the overlap. Measured against the smaller file, the largest
/// percentage either setting gives, and with fsim-verify's own
/// [`percent`], so a pair it would keep is never left out.
fn reaches(most: u64, size_a: u64, size_b: u64, floor: f64) -> bool {
    floor <= 0.0 || percent(most, size_a.min(size_b)) >= floor
}

/// The pairs in (a, b) order with one line per pair: a pair that both
/// sources found keeps its chunk figures. The line source's copy has
/// common = shared = 0, so it sorts just before the chunks' copy, which
/// replaces it.
pub fn keep_chunk_figures<I: Iterator<Item = Result<Pair>>>(
    sorted: I,
) -> impl Iterator<Item = Result<Pair>> {
    let mut it = sorted.peekable();
    std::iter::from_fn(move || {
        let mut p = match it.next()? {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        while let Some(Ok(q)) = it.peek() {
            if (q.a, q.b) != (p.a, p.b) {
                break;
            }
            p = *q;
            it.next();
        }
        Some(Ok(p))
    })
}
