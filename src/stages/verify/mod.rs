//! fsim-verify: the post-processing step of the paper's section 2.3. Shared
//! chunks give only a lower bound of what two files have in common; this
//! stage reads the two files of each candidate pair and computes the exact
//! figure, and the shared regions (offsets) for a side-by-side view.
//!
//! * **Text pairs** (both files typed `text` or `empty` in the file table):
//!   bytes of a longest common subsequence of **lines** (a line is the bytes
//!   up to and including `\n`; the last line may lack it). Lines longer than
//!   [`LONG_LINE`] (1 KiB: one-line XML, minified code, single-line JSON)
//!   are cut into pieces at token boundaries ([`long_lines`]), so that one
//!   changed byte costs one piece, not the only line.
//! * **Other pairs** (binary): bytes in common counted byte by byte
//!   ([`extend`]): the LCS over content-defined pieces of the whole file
//!   (TTTD, average [`PIECE_AVG`] bytes) anchors runs that are extended
//!   byte by byte into the differing stretches, whose gaps are filled
//!   (bytes equal at the same place of a substitution, as `cmp -l` shows
//!   them; unique 8-byte strings elsewhere). Every byte counted is equal in
//!   both files, in runs a reviewer can check one by one, and the figure no
//!   longer depends on where pieces were cut. The bound before the diff
//!   counts whole pieces, which the byte runs can exceed: binary pairs do
//!   not stop early.
//!
//! The alignment is over interned token ids. We remove, before aligning,
//! the tokens that do not occur in the other file at all (they can never be
//! matched, so the LCS is unchanged) which makes dissimilar pairs cheap,
//! take the common prefix and suffix as they are, and align the middle with
//! the bit-parallel LCS ([`crate::align`], `⌈n/64⌉·m` word operations
//! whatever the distance: two locales of a catalog, slices that overlap in
//! part) or with Myers' diff (the `similar` crate) when the anchors show
//! few differences ([`diff`]'s `choose`). Why `similar` and not
//! `imara-diff`: imara-diff's Myers, even in `MyersMinimal` mode, prunes
//! frequent lines before diffing, so its edit script is not guaranteed
//! minimal. Both maximise the *number* of common lines; among subsequences
//! of equal length the byte count may differ slightly, as with `diff`.
//!
//! Tokens are identified by their xxh3-128 hash (a false match has
//! probability ~n²/2¹²⁹, negligible), so a tokenized file costs 24 bytes per
//! token in the cache and the file's bytes are not kept.
//!
//! **Stale files**: before reading, the file's size and mtime are compared
//! with the file table; if they differ, or the file is gone or unreadable,
//! or the bytes read differ in number from the size, the pair keeps its
//! chunk lower bound and is written `lower-bound`, with one warning per
//! file. A file whose size and mtime match is trusted without rehashing: the
//! content hash would cost an MD5 pass over every file (the paper's chunk
//! stage bound) for a case that needs an edit that preserves both size and
//! mtime.
//!
//! **Threshold** (`--min-percent`): pairs whose sizes cannot reach it are
//! dropped unread; text pairs whose tokens found in the other file weigh
//! less than it stop before the diff, and the others stop inside it as
//! soon as the edit distance bounds the LCS below it ([`Differ`]): the
//! verdict is the full diff's, so the output does not change.
//!
//! **Cost guard**: a pair whose bit-parallel cost exceeds [`BIT_BUDGET`]
//! word operations and whose Myers bound (from the anchors) exceeds
//! [`MYERS_BUDGET`] (files of about half a million lines each that differ
//! throughout) gets the anchors' common subsequence as its figure and is
//! `lower-bound`. The decision depends only on the data, so the output
//! does not depend on timing or `-j`.
//!
//! **Memory and I/O**: pairs are streamed in batches; within a batch, pairs
//! are grouped by file a (the analysis writes them sorted by (a, b)), each
//! worker reads and tokenizes a once per group, and keeps the tokenized
//! files that a later group needs, until their last use, in an LRU cache
//! shared by the workers. `--memory` bounds the run but for the file
//! table: the batch and a compressed output's encoder are taken off it
//! ([`cache_budget`]), the workers reserve their pairs' working memory and
//! their kept buffers in what is left, and the cache holds the rest. The
//! workers tokenize into reused buffers and cache copies of each file's
//! size, all from one malloc arena (the program's `main` asks for it:
//! [`crate::io::one_malloc_arena`]), so
//! that the heap stays near what is counted (fsim-verify on the
//! 100,000-file overlap tree at `--memory 128M`: 380 MiB before, see
//! docs/performance.md).
//!
//! **Determinism**: groups are handed to `-j` workers dynamically, results
//! are written in input order, so output and warnings are byte-identical
//! for any `-j`.

mod by_content;
mod cache;
mod diff;
mod extend;
pub mod long_lines;
mod output;
mod plan;
mod previous;
mod read;
mod schedule;
mod table;
#[cfg(test)]
mod tests;
mod tokens;
mod worker;

use by_content::ByContent;
use cache::{Cache, SharedCache};
pub use diff::{compare, Comparison, Differ, Region};
pub use extend::extend_runs;
pub use long_lines::{for_each_line_token, LONG_LINE, LONG_LINES_RULE};
use output::Sink;
pub use output::{pair_mix, region_mix, Summary};
use plan::{global_plan, Plan};
pub use read::{read_checked, Stale};
use schedule::process_batch;
use table::Table;
pub use tokens::{piece_chunker, tokenize, tokenize_into, Mode, Tokens};
use worker::{Outcome, Worker};

use crate::chunking::chunker::Chunker;
use crate::error::{Error, Result};
use crate::formats::headers::{ChunkParams, Delta, PairsHeader, VerifyParams};
use crate::formats::pairs;
use crate::formats::{
    digest_params, write_header, write_trailer, Digest, InputCheck, Kind, Line, LineReader,
};
use crate::formats::{percent, PercentOf};
use crate::io::Output;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Name used in messages.
pub const PROG: &str = "fsim-verify";

/// Average piece size for binary files: small enough
/// that an edit costs few bytes of the figure, large enough that a 100 MB
/// file is ~1.6 M tokens.
pub const PIECE_AVG: usize = 64;

/// The measure of binary pairs, in the `verify-binary` header key: the
/// runs of matched pieces extended byte by byte ([`extend_runs`]). Outputs
/// without the key (written before it) measured binary pairs by whole
/// pieces: their figures are not reused (see [`previous_measures_bytes`]).
pub const BINARY_MEASURE: &str = "byte-runs";

/// Largest bit-parallel cost (`⌈n/64⌉·m` word operations, ~1-2 s) for
/// which a pair is aligned exactly when Myers' bound is larger still.
pub const BIT_BUDGET: u64 = 1 << 31;

/// Largest `(N+M)·D` bound for which Myers runs on long inputs.
pub const MYERS_BUDGET: u64 = 1 << 31;

/// Most pairs read before a batch is handed to the workers (fewer at a
/// small `--memory`: [`batch_pairs`]).
const BATCH_PAIRS: usize = 1 << 16;

/// Fewest pairs of a batch, whatever `--memory`.
const MIN_BATCH_PAIRS: usize = 1 << 10;

/// Bytes a pair of a batch holds: its record, its slot for an earlier
/// run's outcome and its outcome (regions apart: [`REGION_SHARE`]).
const PAIR_BYTES: u64 = (std::mem::size_of::<PairIn>() + 2 * std::mem::size_of::<Outcome>()) as u64;

/// Pairs of a batch at `--memory`: the batch's vectors, which grow to
/// twice their pairs, within an eighth of it.
fn batch_pairs(memory: u64) -> usize {
    let fit = memory / 8 / (2 * PAIR_BYTES);
    usize::try_from(fit)
        .unwrap_or(usize::MAX)
        .clamp(MIN_BATCH_PAIRS, BATCH_PAIRS)
}

/// The token cache's budget: `--memory` less what the run holds beside
/// the cache and the workers (who reserve theirs in it): a batch's pairs,
/// a compressed output's encoder and `held` (an earlier run's figures by
/// content, [`by_content`]); at least a quarter of `--memory`. The file
/// table is not in it (the `--help` says so).
fn cache_budget(cfg: &Config, held: u64) -> u64 {
    let batch = 2 * batch_pairs(cfg.memory) as u64 * PAIR_BYTES;
    let encoder = match cfg.compress && cfg.output.is_some() {
        true => crate::io::ZSTD_SMALL_ENCODER_BYTES,
        false => 0,
    };
    cfg.memory
        .saturating_sub(batch + encoder + held)
        .max(cfg.memory / 4)
}

/// With `--regions`, a batch also ends once the smaller files of its pairs
/// add up to this share of `--memory` (1/`REGION_SHARE`): a pair's regions
/// are held until its batch is written, 24 bytes per run of matched lines,
/// which is about half a byte per byte of the smaller file on catalogs of
/// two locales (every other line differs) and less on anything more alike.
/// Without the cut, 7,140 pairs of 100 KB catalogs held 500 MB of regions
/// at `--memory 16M`.
const REGION_SHARE: u64 = 4;

/// Pairs per unit of work handed to a worker (cut at group boundaries).
const UNIT_PAIRS: usize = 64;

/// Validated options of a run.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: PathBuf,
    pub pairs: PathBuf,
    pub output: Option<PathBuf>,
    /// The output file kept zstd-compressed ([`crate::io::Output::compress`]).
    pub compress: bool,
    pub regions: Option<PathBuf>,
    pub min_percent: f64,
    pub percent_of: PercentOf,
    /// Cache budget in bytes (all workers together).
    pub memory: u64,
    pub jobs: usize,
    pub quiet: bool,
    /// Templates files the analysis used (`--templates`): their chunks are
    /// cut out of each file before comparing (the payload).
    pub templates: Vec<PathBuf>,
    /// An earlier run's verified pairs, file table and regions
    /// (`--previous`, `--previous-files`, `--previous-regions`): figures of
    /// pairs whose files are unchanged are reused ([`previous`]).
    pub previous: Option<(PathBuf, PathBuf, Option<PathBuf>)>,
}

/// One candidate pair as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairIn {
    pub a: u32,
    pub b: u32,
    pub size_a: u64,
    pub size_b: u64,
    /// Chunk lower bound (field 5).
    pub common: u64,
    pub shared: u64,
}

/// The base of a percentage for `percent_of`.
fn base(p: &PairIn, of: PercentOf) -> u64 {
    of.base(p.size_a, p.size_b)
}

/// An earlier run's outputs: verified pairs, file table, regions.
type Earlier = (PathBuf, PathBuf, Option<PathBuf>);

/// `fsim-verify`: read the pairs, verify them, write verified pairs.
pub fn run(cfg: &Config) -> Result<Summary> {
    let start = Instant::now();
    crate::io::wait_for_input(&cfg.pairs)?;
    let (table, table_params) = read_table(cfg)?;
    let files = &table.entries;
    crate::content::store::use_beside(&cfg.files);
    let files_name = cfg.files.display().to_string();
    let progress =
        crate::io::progress::Progress::for_inputs(PROG, &[cfg.pairs.as_path()], cfg.quiet);
    let (input, name) = progress.open(&cfg.pairs)?;
    let mut r = LineReader::new(input, name.clone());
    let tset = crate::formats::templates::TemplateSet::load(&cfg.templates, &table_params)?;
    let mut workers = make_workers(cfg, &tset, &table_params, &files_name)?;
    let mut sink = open_sink(cfg)?;
    let want_regions = sink.regions.is_some();
    let previous = usable_previous(cfg)?;
    let open_earlier = || -> Result<Option<previous::Previous>> {
        match &previous {
            Some((pairs, earlier, regions)) => Ok(Some(previous::open(
                files,
                pairs,
                earlier,
                regions.as_deref(),
            )?)),
            None => Ok(None),
        }
    };
    let prev = open_earlier()?;
    let by_content = earlier_by_content(cfg, &previous, files, want_regions)?;
    let held = by_content.as_ref().map_or(0, ByContent::bytes);
    let cache = SharedCache::new(Cache::new(cache_budget(cfg, held)));
    let mut plan = Plan::new(files.len());
    // With --previous, the plan leaves out the pairs the earlier run gives
    // (a second reader of its outputs answers as the real one will): a
    // re-run at the report's threshold still verifies most candidates, as
    // their figures below it were never kept, and reads each file about
    // once only with a plan (14,210 files read instead of 736,812 on
    // 12.6 M rustdoc candidates).
    let known = |p: &PairIn| by_content::knows(by_content.as_ref(), files, p);
    plan.global = global_plan(cfg, &table, open_earlier()?, want_regions, &known);
    let mut reading = Reading {
        cfg,
        table: &table,
        table_params: &table_params,
        files_name: &files_name,
        tset: &tset,
        previous: &previous,
        with_templates: !tset.is_empty(),
        want_regions,
        check: InputCheck::new(Kind::Pairs, "pairs"),
        seen: Digest::default(),
        header_written: false,
        prev,
        prev_regions: Vec::new(),
        delta: None,
        by_content,
    };
    let mut flow = Flow {
        batch: Vec::new(),
        batch_bytes: 0,
        reused: Vec::new(),
        workers: &mut workers,
        cache: &cache,
        table: &table,
        plan: &mut plan,
        sink: &mut sink,
        cfg,
        want_regions,
    };
    while let Some((line, line_no)) = r.next_numbered()? {
        let err = |m: String| Error::input(&name, line_no, m);
        match line {
            Line::Header(k, p) => reading.header(k, p, &err, flow.sink)?,
            Line::Trailer(k, p) => reading.check.trailer(k, &p).map_err(err)?,
            Line::Comment(_) => {}
            Line::Data(d) => reading.pair(d, &err, &mut flow)?,
        }
    }
    reading
        .check
        .finish(&reading.seen, &name, r.line_number())?;
    if let Some(rows) = &mut reading.delta {
        while let Some((q, r)) = rows.next_before(u32::MAX, u32::MAX, want_regions)? {
            flow.push(q, r)?;
        }
    }
    flow.flush()?;
    progress.finish();
    let mut summary = finish_outputs(sink)?;
    summary.files_read = workers.iter().map(|w| w.files_read).sum();
    summary.bytes_read = workers.iter().map(|w| w.bytes_read).sum();
    summary.seconds = start.elapsed().as_secs_f64();
    summary.reused = (reading.prev.map(|p| p.reused)).or(reading.delta.map(|d| d.reused));
    summary.by_content = reading.by_content.map_or(0, |b| b.used);
    if !cfg.quiet {
        crate::cli::stderr_line(summary.line());
    }
    Ok(summary)
}

/// The file table: without an earlier run, only the entries of the files
/// the pairs name ([`table`]).
fn read_table(cfg: &Config) -> Result<(Table, crate::formats::Params)> {
    let wanted = match cfg.previous {
        None => table::ids_of_pairs(&cfg.pairs),
        Some(_) => None,
    };
    Table::read(&cfg.files, wanted)
}

/// A delta's pairs whose contents the earlier run verified together
/// ([`by_content`]); none with --regions, whose regions it does not keep.
fn earlier_by_content(
    cfg: &Config,
    previous: &Option<Earlier>,
    files: &[crate::formats::FileEntry],
    want_regions: bool,
) -> Result<Option<ByContent>> {
    match previous {
        Some((pairs, table, _)) if !want_regions => {
            ByContent::for_delta(&cfg.pairs, files, pairs, table, cfg.memory)
        }
        _ => Ok(None),
    }
}

/// One worker per job, with the templates (cut out of each file) and the
/// threshold.
fn make_workers(
    cfg: &Config,
    tset: &crate::formats::templates::TemplateSet,
    table_params: &crate::formats::Params,
    files_name: &str,
) -> Result<Vec<Worker>> {
    let tshared = if tset.is_empty() {
        None
    } else {
        let c = Chunker::from_params(table_params)
            .map_err(|m| Error::msg(format!("{files_name}: {m}")))?;
        Some(Arc::new((tset.clone(), c)))
    };
    Ok((0..cfg.jobs.max(1))
        .map(|_| {
            let mut w = Worker::new();
            w.templates = tshared.clone();
            w.limits = crate::content::Limits::within_memory(cfg.memory);
            w.threshold = (cfg.min_percent, cfg.percent_of);
            w
        })
        .collect())
}

/// The outputs: verified pairs, and regions when asked for.
fn open_sink(cfg: &Config) -> Result<Sink> {
    Ok(Sink {
        out: Output::create_small_records(cfg.output.as_deref(), cfg.compress)?,
        regions: match &cfg.regions {
            Some(p) => Some(Output::create(Some(p))?),
            None => None,
        },
        line: Vec::with_capacity(1 << 20),
        written: Digest::default(),
        regions_written: Digest::default(),
        warned: HashSet::new(),
        summary: Summary::default(),
    })
}

/// The earlier run whose figures may be reused: refused when its file
/// table is this run's, dropped (with a warning) when it measured binary
/// pairs or long lines otherwise.
fn usable_previous(cfg: &Config) -> Result<Option<Earlier>> {
    if let Some((_, table, _)) = &cfg.previous {
        let same = std::fs::canonicalize(table)
            .ok()
            .is_some_and(|t| Some(t) == std::fs::canonicalize(&cfg.files).ok());
        if same {
            return Err(Error::msg(format!(
                "--previous-files {} is this run's file table: give the earlier run's",
                table.display()
            )));
        }
    }
    Ok(match &cfg.previous {
        Some((pairs, ..)) => match previous_measures_otherwise(pairs)? {
            Some(why) => {
                crate::cli::stderr_line(format_args!(
                    "{PROG}: warning: {}: verified {why}: no figure reused, every pair verified again",
                    pairs.display()
                ));
                None
            }
            None => cfg.previous.clone(),
        },
        None => None,
    })
}

/// Write the trailers and make the outputs appear; the summary so far.
fn finish_outputs(mut sink: Sink) -> Result<Summary> {
    let mut t = Vec::new();
    write_trailer(Kind::Pairs, &digest_params(&sink.written, "pairs"), &mut t);
    sink.out.write_all(&t)?;
    if let Some(ro) = &mut sink.regions {
        let mut t = Vec::new();
        write_trailer(
            Kind::Regions,
            &digest_params(&sink.regions_written, "regions"),
            &mut t,
        );
        ro.write_all(&t)?;
    }
    let Sink {
        out,
        regions,
        summary,
        ..
    } = sink;
    if let Some(ro) = regions {
        ro.finish()?;
    }
    out.finish()?;
    Ok(summary)
}

/// What reading the pairs keeps beside the flow: the checks of the input,
/// the earlier run's figures, a delta's earlier rows.
struct Reading<'a> {
    cfg: &'a Config,
    /// The file table (the whole of it with an earlier run).
    table: &'a Table,
    table_params: &'a crate::formats::Params,
    files_name: &'a str,
    tset: &'a crate::formats::templates::TemplateSet,
    previous: &'a Option<Earlier>,
    /// With templates the pairs carry payload sizes.
    with_templates: bool,
    want_regions: bool,
    check: InputCheck,
    seen: Digest,
    header_written: bool,
    /// The earlier run's figures, looked up pair by pair.
    prev: Option<previous::Previous>,
    prev_regions: Vec<Region>,
    /// A delta pairs file (a re-run's fsim-analyze): the pairs of unchanged
    /// files come from the earlier run, merged in (a, b) order.
    delta: Option<previous::Rows>,
    /// The earlier figures of a delta's pairs, by their files' contents.
    by_content: Option<ByContent>,
}

impl Reading<'_> {
    /// A header: checked against the file table, the templates and the
    /// earlier run; a delta's earlier rows opened; the outputs' headers
    /// written once.
    fn header(
        &mut self,
        k: Kind,
        p: crate::formats::Params,
        err: &dyn Fn(String) -> Error,
        sink: &mut Sink,
    ) -> Result<()> {
        self.check.header(k, p.clone()).map_err(err)?;
        if let Some(d) = p.chunking_difference(self.table_params) {
            return Err(err(format!(
                "pairs and file table {} come from runs with different parameters: {d}",
                self.files_name
            )));
        }
        self.tset.check_against(&p, "these pairs").map_err(err)?;
        let h = PairsHeader::parse(&p).map_err(err)?;
        if h.verify.is_some() {
            return Err(err(
                "these pairs are already verified (written by fsim-verify)".into(),
            ));
        }
        if let Some(pv) = &mut self.prev {
            pv.check(&p)?;
        }
        match h.delta {
            Some(delta) if self.delta.is_none() => self.open_delta(&p, delta, err)?,
            _ => {}
        }
        // The line source's pairs cut at a higher threshold lack those in
        // between (checked after the earlier run's, whose message says more).
        let cut = h.analysis.lines.and_then(|l| l.verify_min_percent);
        if let Some(cut) = cut.filter(|&c| self.cfg.min_percent < c) {
            return Err(err(format!(
                "these pairs were cut for fsim-verify --min-percent {cut} (fsim-analyze --verify-min-percent), above this run's {}: the pairs between are missing; analyse again with --verify-min-percent {}",
                self.cfg.min_percent, self.cfg.min_percent
            )));
        }
        if !self.header_written {
            write_headers(&p, self.cfg, sink)?;
            self.header_written = true;
        }
        Ok(())
    }

    /// Pairs of the files changed since an earlier run (`delta=1`): that
    /// run's rows of the unchanged files are merged in.
    fn open_delta(
        &mut self,
        p: &crate::formats::Params,
        delta: Delta,
        err: &dyn Fn(String) -> Error,
    ) -> Result<()> {
        let Some((old_pairs, old_table, old_regions)) = &self.cfg.previous else {
            return Err(err("these pairs are only those of the files changed since an earlier run (delta=1): give that run's outputs with --previous, --previous-files and --previous-regions".into()));
        };
        let mut rows = previous::Rows::open(
            &self.table.entries,
            old_pairs,
            old_table,
            old_regions.as_deref().filter(|_| self.want_regions),
        )?;
        if Some(rows.changed) != delta.changed_files {
            return Err(err(format!(
                "these pairs were analysed for {} changed files, but {} changed since {}: another earlier run?",
                delta.changed_files.map_or("?".into(), |n| n.to_string()),
                rows.changed,
                old_table.display()
            )));
        }
        rows.check(p, self.cfg.min_percent, self.cfg.percent_of)?;
        // Its figures are not reused (warned above): its rows
        // are verified like the new pairs.
        rows.reverify = self.previous.is_none();
        // Every pair comes from the delta or the earlier run.
        self.prev = None;
        self.delta = Some(rows);
        Ok(())
    }

    /// A pair line: checked against the file table, then queued after the
    /// delta's earlier rows that come before it, with the earlier run's
    /// figure when it is reused.
    fn pair(&mut self, d: &[u8], err: &dyn Fn(String) -> Error, flow: &mut Flow) -> Result<()> {
        if !self.header_written {
            return Err(err(
                "expected a '#fsim pairs v1' header (written by fsim-analyze)".into(),
            ));
        }
        let p = parse_pair(d).ok_or_else(|| err(pairs::BadPair::Fields.message()))?;
        let with_templates = self.with_templates;
        match (self.table.get(p.a), self.table.get(p.b)) {
            // With templates the pairs carry payload sizes.
            (Some(fa), Some(fb))
                if p.a < p.b
                    && (fa.size == p.size_a || (with_templates && fa.size > p.size_a))
                    && (fb.size == p.size_b || (with_templates && fb.size > p.size_b)) => {}
            _ => {
                return Err(err(format!(
                    "pair {}-{} does not match the file table {} (unknown id or other size): pairs from another run?",
                    p.a, p.b, self.files_name
                )))
            }
        }
        self.seen.add_mix(pair_mix(p.a, p.b, p.common));
        flow.sink.summary.pairs_read += 1;
        if let Some(rows) = &mut self.delta {
            while let Some((q, r)) = rows.next_before(p.a, p.b, self.want_regions)? {
                flow.push(q, r)?;
            }
        }
        let r = match &mut self.prev {
            Some(pv) => pv
                .lookup(&p, self.want_regions.then_some(&mut self.prev_regions))?
                .map(|common| Outcome::reused(common, std::mem::take(&mut self.prev_regions))),
            None => self.same_contents(&p),
        };
        flow.push(self.table.to_local(p), r)
    }

    /// A delta pair's figure from the earlier run's pair of the same two
    /// contents ([`by_content`]), unless that run's figures are not reused.
    fn same_contents(&mut self, p: &PairIn) -> Option<Outcome> {
        if self.want_regions || self.delta.as_ref().is_none_or(|d| d.reverify) {
            return None;
        }
        let b = self.by_content.as_mut()?;
        let common = b.figure(&self.table.entries, p)?;
        b.used += 1;
        Some(Outcome::reused(common, Vec::new()))
    }
}

/// The headers of the outputs, from the pairs' header `p`: verified pairs
/// (the verification's settings added, a delta's keys dropped) and regions.
fn write_headers(p: &crate::formats::Params, cfg: &Config, sink: &mut Sink) -> Result<()> {
    let verify = VerifyParams {
        min_percent: Some(cfg.min_percent),
        percent_of: Some(cfg.percent_of),
        pieces: Some(PIECE_AVG as u64),
        binary: Some(BINARY_MEASURE.to_string()),
        long_lines: Some(LONG_LINES_RULE.to_string()),
    };
    let mut hp = p.clone();
    Delta::remove(&mut hp);
    let hp = hp.merged(&verify.to_params());
    let mut h = Vec::new();
    write_header(Kind::Pairs, &hp, &mut h);
    sink.out.write_all(&h)?;
    if let Some(ro) = &mut sink.regions {
        let mut h = Vec::new();
        // The pairs' header was read as a `PairsHeader`: it parses.
        let chunk = ChunkParams::parse(p).map_err(Error::msg)?;
        let rp = chunk.to_params().merged(&verify.measure_params());
        write_header(Kind::Regions, &rp, &mut h);
        ro.write_all(&h)?;
    }
    Ok(())
}

/// The pairs on their way to the workers and the outputs, in input order.
struct Flow<'a> {
    batch: Vec<PairIn>,
    /// Bytes of the smaller file of each pair of `batch`, added up.
    batch_bytes: u64,
    /// Per pair of `batch`: the earlier run's outcome, if reused.
    reused: Vec<Option<Outcome>>,
    workers: &'a mut Vec<Worker>,
    cache: &'a SharedCache,
    /// Pairs reach the flow renumbered into the entries held
    /// ([`Table::to_local`]).
    table: &'a Table,
    plan: &'a mut Plan,
    sink: &'a mut Sink,
    cfg: &'a Config,
    want_regions: bool,
}

impl Flow<'_> {
    /// Take pair `p` (its outcome when reused), after the size-ratio
    /// filter: even if the smaller file were wholly inside the larger, the
    /// pair could not reach the threshold.
    fn push(&mut self, p: PairIn, reused: Option<Outcome>) -> Result<()> {
        let cfg = self.cfg;
        if percent(p.size_a.min(p.size_b), base(&p, cfg.percent_of)) < cfg.min_percent {
            self.sink.summary.dropped_ratio += 1;
            return Ok(());
        }
        // Batches end between two files A, unless one A has very many pairs.
        let most = batch_pairs(cfg.memory);
        let full = self.batch.len() >= most
            || (self.want_regions && self.batch_bytes >= cfg.memory / REGION_SHARE);
        if full && (self.batch.last().map(|l| l.a) != Some(p.a) || self.batch.len() >= 4 * most) {
            self.flush()?;
        }
        self.batch_bytes += p.size_a.min(p.size_b);
        self.reused.push(reused);
        self.batch.push(p);
        Ok(())
    }

    /// Verify the batch and write it.
    fn flush(&mut self) -> Result<()> {
        let o = process_batch(
            &self.batch,
            &mut self.reused,
            self.workers,
            self.cache,
            &self.table.entries,
            self.plan,
            self.want_regions,
        );
        self.sink
            .write_batch(&self.batch, &o, self.table, self.cfg)?;
        self.batch.clear();
        self.batch_bytes = 0;
        Ok(())
    }
}

/// How the earlier verified pairs at `path` measured otherwise than this
/// run does, if they did: binary pairs not in bytes (no header
/// `verify-binary=`[`BINARY_MEASURE`]), or long lines cut by another rule
/// (`verify-long-lines=`[`LONG_LINES_RULE`]). A file that is not verified
/// pairs at all (or cannot be read) answers `None`:
/// [`previous::Previous::check`] then refuses it with its own message.
fn previous_measures_otherwise(path: &std::path::Path) -> Result<Option<String>> {
    let Ok(p) = crate::formats::read_header(path, Kind::Pairs) else {
        return Ok(None);
    };
    let Ok(Some(v)) = VerifyParams::parse(&p) else {
        return Ok(None);
    };
    Ok(if v.binary.as_deref() != Some(BINARY_MEASURE) {
        Some(format!(
            "before binary pairs were measured in bytes (no verify-binary={BINARY_MEASURE})"
        ))
    } else if v.long_lines.as_deref() != Some(LONG_LINES_RULE) {
        Some(format!(
            "with long lines cut otherwise (verify-long-lines={}, {LONG_LINES_RULE} now)",
            v.long_lines.as_deref().unwrap_or("none")
        ))
    } else {
        None
    })
}

/// Parse a 6-field pair line, as fsim-analyze writes it.
pub fn parse_pair(d: &[u8]) -> Option<PairIn> {
    pairs::Pair::parse(d).map(PairIn::from)
}

impl From<pairs::Pair> for PairIn {
    fn from(p: pairs::Pair) -> PairIn {
        PairIn {
            a: p.a,
            b: p.b,
            size_a: p.size_a,
            size_b: p.size_b,
            common: p.common,
            shared: p.shared as u64,
        }
    }
}
