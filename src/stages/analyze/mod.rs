//! fsim-analyze: the paper's steps 3-4 (section 2.3) with the identical-file
//! handling of section 2.4, run on each bin written by fsim-binpack.
//!
//! For each bin, the file-chunk bipartite graph is loaded into two
//! compressed adjacency arrays (chunk → files, file → chunks). Files with the
//! same content hash are collapsed to their smallest id first, so copies do
//! not multiply links. Then for each file A in id order, the files B > A that
//! share a chunk with A are gathered by walking A's chunks' file lists, and
//! the bytes in common are added up on that same walk, in an array indexed
//! by file rather than a hash table (footnote 2): sum over shared chunks of
//! min(occurrences in A, occurrences in B) × chunk length (footnote 1: a chunk
//! that occurs twice in both files counts twice). The paper's merge of the
//! two sorted chunk lists gives the same sums at |A| + |B| steps per pair.
//!
//! The A range of a bin is split in blocks taken by `-j` threads; results
//! are put back in block order, so the output does not depend on `-j`.
//!
//! A bin whose estimated memory ([`estimate_memory`]) exceeds `--capacity`
//! (fsim-binpack marks it `oversized=1`) is never loaded: its chunk groups
//! are streamed, every pair of files in a group gives a 16-byte record
//! (a, b, min(occ) × len) that goes through a small external sort bounded by
//! the capacity, and the sorted records are summed per pair. Same numbers,
//! same output, memory bounded by the capacity plus the bin's file table.
//!
//! Memory: the largest bin's graph (see [`estimate_memory`], at most
//! `--capacity`) plus a quarter of `--capacity` for the pairs found, which
//! spill to disk beyond it ([`store`]); then, the bins done, the line
//! source within the other three quarters, its file table
//! ([`LineFiles`], read after the bins) included.
//!
//! Chunk groups of many files that a chunk cannot make a pair of alone
//! (the last byte or few of a file, cut where it ends) are counted only
//! for the pairs other chunks find ([`defer`]): the same pairs, without
//! the k(k−1)/2 visits of a group of k files. Disk: 36 bytes per pair when they
//! spill; for oversized bins, 16 bytes per (chunk, file pair).
//!
//! The modules, in the order of the work: [`read`] parses the bins stream
//! and routes each bin, [`groups`] turns a bin's sorted records into chunk
//! groups, [`graph`] analyses a bin in memory (the merge-style comparison),
//! [`defer`] keeps the walk off the large groups that cannot make a pair,
//! [`spill`] out of core, [`files`] judges a pair of a bin's files and
//! [`pairs`] holds the thresholds and writes the pairs file, and [`store`]
//! keeps the pairs sorted in bounded memory until then.

mod defer;
mod delta;
mod files;
mod graph;
mod groups;
mod lines;
mod pairs;
mod read;
mod spill;
mod store;
#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::formats::open_input;
use crate::formats::{Params, TEMPLATE_PARAM_KEYS};
use crate::io::progress::Progress;
use crate::io::Output;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use crate::formats::bins::{
    estimate_memory, BYTES_PER_CHUNK, BYTES_PER_FILE, BYTES_PER_RECORD,
};
pub use defer::DEFER_FROM;
pub use delta::{Changed, Since};
pub use groups::Entry;
pub use lines::{is_catalog, line_pairs, LineFiles, LineSource, LineStats, LineTemplates};
pub use pairs::{pairs_params, write_pairs, Pair, PercentOf, Thresholds};
pub use read::{analyze_reader, analyze_with_progress};
pub use store::PairStore;

#[derive(Debug, Clone)]
pub struct Options {
    pub thresholds: Thresholds,
    /// Bins estimated above this are processed out of core; also the memory
    /// budget of the out-of-core sort.
    pub capacity: u64,
    pub threads: usize,
    pub tmpdir: Option<PathBuf>,
    /// Process every bin out of core (tests, and a way out when an estimate
    /// turns out too low).
    pub force_spill: bool,
    /// A re-run's changed files: only pairs with one of them are looked for
    /// ([`delta`]).
    pub only: Option<std::sync::Arc<Changed>>,
    /// Chunk groups of at least this many files are counted only for the
    /// pairs other chunks propose when the chunk cannot make a pair alone
    /// ([`defer`]; the default [`DEFER_FROM`]). The output does not depend
    /// on it, only the work.
    pub defer_from: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            thresholds: Thresholds::default(),
            capacity: 1 << 30,
            threads: 1,
            tmpdir: None,
            force_spill: false,
            only: None,
            defer_from: DEFER_FROM,
        }
    }
}

/// The validated configuration of fsim-analyze.
#[derive(Debug, Clone)]
pub struct Config {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    /// The output file kept zstd-compressed ([`crate::io::Output::compress`]).
    pub compress: bool,
    pub options: Options,
    pub quiet: bool,
    /// The second candidate source ([`lines`]): the file table and what to
    /// compare line by line. The files must be reachable.
    pub lines: Option<(PathBuf, LineSource)>,
    /// The file table (`--files`): needed by the line source and `since`.
    pub files: Option<PathBuf>,
    /// Where the line source's pairs come from or go ([`LineMode`]).
    pub line_mode: LineMode,
    /// Templates files (`--templates`): the line source cuts their chunks
    /// out of the files it reads, as the bins left them out (the same
    /// files fsim-partition was given; checked against the bins' header).
    pub templates: Vec<PathBuf>,
    /// A re-run: the earlier run's outputs; only the pairs with a file
    /// changed since are written when they are enough ([`delta`]).
    pub since: Option<Since>,
    /// The line source's lines of each content, written for the next run
    /// (`--lines-out`; [`lines::cache`]).
    pub lines_out: Option<PathBuf>,
    /// An earlier run's (`--previous-lines`): the contents it holds are
    /// not read again.
    pub previous_lines: Option<PathBuf>,
    /// The chunk records whose size, twice, with the line sets', must stay
    /// within 4/5 of the repository's bytes for the line sets to be kept
    /// (`--lines-room-beside`; [`lines_room`]).
    pub lines_room_beside: Option<PathBuf>,
}

/// How the line source runs: in this process over the file table (as
/// `make report` runs it), or split in two for a distributed run
/// (fsim-spark): one process computes the line pairs alone, and the
/// analyses of the bins take their share of them from a file. A bins
/// analysis given the pairs of the line source computed over the same file
/// table with the same settings writes the same pairs as one that computes
/// them: both hand them to the same store.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum LineMode {
    /// Compute the line pairs here.
    #[default]
    Here,
    /// Do not read the bins: write the line source's pairs alone (a pairs
    /// file whose header has the line settings).
    Only,
    /// Take the line source's pairs from this file (pair lines of a file
    /// that [`LineMode::Only`] wrote, or of part of one; `#` lines skipped)
    /// instead of reading the files.
    From(PathBuf),
}

#[derive(Debug)]
pub struct Analysis {
    /// Chunking parameters of the input.
    pub params: Params,
    /// Sorted by (a, b) when read back.
    pub pairs: PairStore,
    pub bins: u64,
    pub files: u64,
    pub records: u64,
    /// Files skipped because an earlier file of their bin had the same content.
    pub collapsed: u64,
    /// Bins processed out of core.
    pub spilled_bins: u64,
    /// Pair records that went through the out-of-core sort.
    pub spilled_records: u64,
    /// Entries of the chunks' file lists visited in memory: the work of
    /// the candidate walk ([`defer`] keeps it off the large groups).
    pub visits: u64,
}

impl Analysis {
    /// An empty analysis whose pairs are kept within `opts`' capacity.
    pub fn new(opts: &Options) -> Analysis {
        Analysis {
            params: Params::default(),
            pairs: PairStore::new(opts.capacity, opts.tmpdir.clone()),
            bins: 0,
            files: 0,
            records: 0,
            collapsed: 0,
            spilled_bins: 0,
            spilled_records: 0,
            visits: 0,
        }
    }
}

/// The line source's pairs written by a [`LineMode::Only`] run (all or
/// part of its pair lines), into `store`.
fn read_line_pairs(path: &Path, store: &mut PairStore) -> Result<LineStats> {
    let (reader, name) = open_input(path)?;
    let mut lines = crate::stages::sort::FastLines::new(reader, name);
    let mut batch = Vec::with_capacity(1 << 12);
    let mut stats = LineStats::default();
    while let Some(line) = lines.next_line()? {
        if line.first() == Some(&b'#') {
            continue;
        }
        let Some(p) = Pair::parse(line) else {
            return Err(lines.error(format!("expected {}", Pair::EXPECTED)));
        };
        batch.push(p);
        stats.pairs += 1;
        if batch.len() == batch.capacity() {
            store.extend(&batch)?;
            batch.clear();
        }
    }
    store.extend(&batch)?;
    Ok(stats)
}

/// The whole stage: read, analyse, write atomically, summarise on stderr.
pub fn run(cfg: &Config) -> Result<()> {
    let t0 = Instant::now();
    // Progress: bytes of the bins file read (a bin is analysed as soon as
    // it is read, so this tracks the work; ETA when it is a file) and bins
    // done of those the header announces.
    let progress = Progress::bytes_and(
        "fsim-analyze",
        crate::io::progress::inputs_size(&[cfg.input.as_path()]),
        "bins",
        cfg.quiet,
    );
    let (input, name) = progress.open(&cfg.input)?;
    let th = &cfg.options.thresholds;
    let src = cfg.lines.as_ref().map(|(_, s)| s);
    if let (Some(_), Some(files)) = (src, &cfg.files) {
        // The table is read after the bins; a missing one is said before.
        table_exists(files)?;
    }
    let mut options = cfg.options.clone();
    let whole = plan_rerun(cfg, &mut options)?;
    if cfg.input.as_os_str() != "-" {
        let bins = crate::formats::read_header(&cfg.input, crate::formats::Kind::Bins)?;
        needs_earlier(&bins, &options, &cfg.input)?;
    }
    // Nothing changed since the earlier run: every pair is in its verified
    // pairs, and the bins need not be analysed.
    let unchanged = options.only.as_ref().is_some_and(|c| c.count == 0);
    let mut a = if cfg.line_mode == LineMode::Only {
        drop(input);
        Analysis::new(&options)
    } else if unchanged {
        read::header_only(input, &name, &options)?
    } else {
        analyze_with_progress(input, &name, &options, &progress)?
    };
    progress.finish();
    // The bins are done (their graphs freed): the line source's table, if
    // a re-run did not read it already.
    let table = match (src, &cfg.files, unchanged) {
        (Some(s), Some(files), false) if whole.is_none() => Some(line_table(files, s)?),
        _ if unchanged => None,
        _ => whole,
    };
    let templates = match (&table, src, unchanged) {
        (Some((_, table_params)), Some(_), false) => line_templates(cfg, &a, table_params)?,
        _ => None,
    };
    let mut line_stats = None;
    let chunk_pairs = a.pairs.len();
    if let (Some(src), Some((table, table_params)), false) = (src, &table, unchanged) {
        line_stats = Some(match &cfg.line_mode {
            LineMode::From(path) => read_line_pairs(path, &mut a.pairs)?,
            LineMode::Here | LineMode::Only => {
                let memory = line_memory(cfg.options.capacity, table);
                let reuse = line_reuse(cfg, &a.params, table_params, options.only.as_deref());
                let t = templates.as_ref();
                let threads = cfg.options.threads;
                line_pairs(table, src, t, threads, memory, &reuse, &mut a.pairs)?
            }
        });
    } else if unchanged {
        keep_earlier_lines(cfg, &a.params)?;
    }
    needs_earlier(&a.params, &options, &cfg.input)?;
    // The bins header was read as a `BinsHeader`: its values are well formed.
    let mut params = pairs_params(&a.params, th, src).map_err(crate::Error::msg)?;
    if let Some(c) = &options.only {
        params = delta::mark(params, c);
    }
    let counts = format!(
        "{} bins ({} out of core), {} files, {} records, {} identical files collapsed",
        a.bins, a.spilled_bins, a.files, a.records, a.collapsed
    );
    let visits = a.visits;
    let mut out = Output::create_records(cfg.output.as_deref(), cfg.compress)?;
    let oname = out.name().to_string();
    let pairs = write_pairs(a, &params, options.only.as_deref(), &mut out, &oname)?;
    out.finish()?;
    if !cfg.quiet {
        // The summary line last (every stage ends with it), after the
        // delta's and the line source's lines.
        if let Some(c) = &options.only {
            crate::cli::stderr_line(format_args!(
                "fsim-analyze: {} files changed since the earlier run: only their pairs written (the others are in its verified pairs)",
                c.count
            ));
        }
        if let Some(mut st) = line_stats {
            st.added = pairs.saturating_sub(chunk_pairs);
            line_source_line(&st);
        }
        crate::cli::stderr_line(format_args!(
            "fsim-analyze: {counts}, {} pairs in {:.2} s ({visits} chunk postings visited)",
            pairs,
            t0.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// The line sets the line source takes (`--previous-lines`, when its
/// header is this run's: else stderr says why not) and writes
/// (`--lines-out`), with the header of this run's: the file table's
/// chunking parameters and the bins' templates.
fn line_reuse<'a>(
    cfg: &Config,
    bins: &Params,
    table: &Params,
    only: Option<&'a Changed>,
) -> lines::Reuse<'a> {
    let header = lines::cache::header(&table.clone().merged(&bins.only(TEMPLATE_PARAM_KEYS)));
    let earlier = cfg.previous_lines.as_deref().and_then(|p| {
        lines::cache::Earlier::open(p, &header)
            .map_err(|why| {
                crate::cli::stderr_line(format_args!(
                    "fsim-analyze: warning: the earlier line sets are not used, every file is read: {why}"
                ))
            })
            .ok()
    });
    let keep = cfg.lines_out.clone().map(|path| lines::KeepTo {
        path,
        params: header,
        compress: cfg.compress,
        room: lines_room(cfg),
    });
    lines::Reuse {
        only,
        earlier,
        keep,
    }
}

/// The most bytes this run's line sets may take (`--lines-room-beside`):
/// 4/5 of the repository's bytes less twice the chunk records' and the
/// file table's. A re-run's work folder is fullest while it writes its
/// chunk records and file table beside the earlier run's, or while it
/// holds its records, their sorted copy and the partition (about as
/// large again): twice each, with the earlier line sets, the reports and
/// the bins in the last fifth. Measured: the line sets are 0.10-0.20x a
/// tree, the chunk records 0.19-0.46x (docs/performance.md, "Re-runs and
/// scratch space"); the file table is 0.01-0.05x a tree of documents but
/// half a tree of 200-byte files, whose line sets then put the work
/// folder over the tree (it ended at 1.13x at 10^6 files, 0.96x without
/// them; its peak, at the partition, is then 1.06x).
/// `None` without the flag, or when the file table or the records cannot
/// be read (the stages reading them say why): no bound.
fn lines_room(cfg: &Config) -> Option<u64> {
    let (chunks, files) = (cfg.lines_room_beside.as_deref()?, cfg.files.as_deref()?);
    let records = std::fs::metadata(chunks).ok()?.len();
    let table = std::fs::metadata(files).ok()?.len();
    let mut repository = 0u64;
    crate::formats::files::scan_file_table(files, &mut |e| {
        if !e.view.is_member() {
            repository += e.view.raw_size;
        }
    })
    .ok()?;
    Some((repository / 5 * 4).saturating_sub(2 * (records + table)))
}

/// A re-run in which no file changed: the line source does not run, and
/// its line sets are the earlier run's (the same contents in the same
/// order), linked as `--lines-out` when their header is this run's (not
/// when the link fails: the next run then reads the files).
fn keep_earlier_lines(cfg: &Config, bins: &Params) -> Result<()> {
    let (Some(out), Some(prev), Some(files)) = (&cfg.lines_out, &cfg.previous_lines, &cfg.files)
    else {
        return Ok(());
    };
    let table = crate::formats::read_header(files, crate::formats::Kind::Files)?;
    let header = lines::cache::header(&table.merged(&bins.only(TEMPLATE_PARAM_KEYS)));
    if lines::cache::Earlier::open(prev, &header).is_err() {
        return Ok(());
    }
    let _ = std::fs::remove_file(out);
    let _ = crate::io::link_dated_now(prev, out);
    Ok(())
}

/// The templates the line source cuts out of the files: those the bins
/// left out, which `--templates` must name (as fsim-verify checks the
/// pairs); `None` without templates. The line source's pairs then carry
/// the payloads' sizes, as the chunk pairs do.
fn line_templates(
    cfg: &Config,
    a: &Analysis,
    table_params: &Params,
) -> Result<Option<LineTemplates>> {
    use crate::formats::templates::TemplateSet;
    let set = TemplateSet::load(&cfg.templates, table_params)?;
    if cfg.line_mode != LineMode::Only {
        set.check_against(&a.params, "the bins").map_err(|m| {
            crate::Error::msg(format!(
                "{}: {m} (or --no-line-source)",
                cfg.input.display()
            ))
        })?;
    }
    if set.is_empty() {
        return Ok(None);
    }
    let chunker = crate::chunking::chunker::Chunker::from_params(table_params).map_err(|m| {
        crate::Error::msg(format!(
            "{}: {m}",
            cfg.files
                .as_deref()
                .unwrap_or(Path::new("files.tsv"))
                .display()
        ))
    })?;
    Ok(Some(LineTemplates { set, chunker }))
}

/// Bins of a re-run's changed chunks alone (`changed-only=N`, fsim-sort
/// --changed) hold every pair with a changed file and no other: they are
/// enough only when the pairs of the other files are the earlier run's
/// (`options.only`, [`delta`]). Else [`Error::NeedsAll`]: exit code 3,
/// on which `make` packs every record again.
fn needs_earlier(bins: &Params, options: &Options, input: &Path) -> Result<()> {
    let key = crate::formats::changed::CHANGED_ONLY;
    if bins.get(key).is_none() || options.only.is_some() {
        return Ok(());
    }
    Err(crate::Error::NeedsAll(format!(
        "{}: the bins hold only the chunks of the files changed since the earlier run ({key}=), and this run must analyse every file (stderr says why; without --previous-files and --previous-verified, no earlier run was given): bin every record",
        input.display()
    )))
}

/// A re-run (`--previous-files`): which files changed, into `options`
/// ([`delta`]), and the line source's rows of the file table it read
/// whole (freed before the bins).
fn plan_rerun(cfg: &Config, options: &mut Options) -> Result<Option<(LineFiles, Params)>> {
    let (Some(since), Some(files)) = (&cfg.since, &cfg.files) else {
        return Ok(None);
    };
    let src = cfg.lines.as_ref().map(|(_, s)| s);
    let (table, params) = whole_table(cfg, files)?;
    match delta::plan(&table, since, &cfg.input, &cfg.options.thresholds, src)? {
        Ok(c) => options.only = Some(std::sync::Arc::new(c)),
        Err(why) if !cfg.quiet => crate::cli::stderr_line(format_args!(
            "fsim-analyze: every file analysed, not only the changed ones: {why}"
        )),
        Err(_) => {}
    }
    Ok(src.map(|s| (LineFiles::of(&table, s), params)))
}

/// The whole file table `files` and its header, for a re-run's delta.
fn whole_table(cfg: &Config, files: &Path) -> Result<(Vec<crate::formats::FileEntry>, Params)> {
    if cfg.line_mode != LineMode::Only {
        // In a pipe (docs/usage.md's), fsim-chunk's file table is complete
        // only once the bins arrive.
        crate::io::wait_for_input(&cfg.input)?;
    }
    table_exists(files)?;
    crate::formats::files::read_file_table(files)
}

/// The line source's rows of the file table `files` ([`LineFiles`]) and
/// its header.
fn line_table(files: &Path, src: &LineSource) -> Result<(LineFiles, Params)> {
    table_exists(files)?;
    LineFiles::load(files, src)
}

fn table_exists(files: &Path) -> Result<()> {
    crate::content::store::use_beside(files);
    if files.exists() {
        return Ok(());
    }
    Err(crate::error::Error::msg(format!(
        "{}: no file table (--files; the line source, on by default, reads it: give the one fsim-chunk --files-out wrote, or --no-line-source)",
        files.display()
    )))
}

/// The line source's memory: `--capacity` less the pair store's quarter
/// (the bins are done) and less its file table and what it holds for each
/// file compared ([`lines::BYTES_PER_REP`]), so the peak stays within
/// the capacity: a large table leaves the lines less room, and they are
/// joined in more groups (the files read more times). Only a table that
/// leaves less than an eighth of the line source's share is over the
/// model: the lines get that eighth, and stderr says, even with `-q`,
/// which `--capacity` would hold both.
fn line_memory(capacity: u64, table: &LineFiles) -> u64 {
    let memory = capacity - capacity / 4;
    let held = table.heap_bytes() + table.compared_rows() * lines::BYTES_PER_REP;
    let least = memory / 8;
    if held <= memory - least {
        return memory - held;
    }
    // held ≤ 7/8 of 3/4 of the capacity: capacity ≥ held × 32 / 21.
    let needed = (held * 32).div_ceil(21).div_ceil(1 << 20);
    crate::cli::stderr_line(format_args!(
        "fsim-analyze: warning: the line source's file table ({} files, {} MiB with what it holds a file) leaves its lines less than an eighth of its {} MiB of --capacity: peak memory will exceed the capacity; give --capacity {needed}M or more (or --line-pairs-below a smaller size, or --no-line-source)",
        table.len(),
        held >> 20,
        memory >> 20
    ));
    least
}

/// The line source's line of the summary on stderr.
fn line_source_line(st: &LineStats) {
    if let Some(lines::Kept::OverRoom(room)) = st.kept {
        crate::cli::stderr_line(format_args!(
            "fsim-analyze: line sets not kept: they took more than their room of {room} bytes (4/5 of the repository less twice its chunk records and file table); the next re-run reads every file"
        ));
    }
    crate::cli::stderr_line(format_args!(
        "fsim-analyze: line source: {} contents compared ({} unreadable or changed{}){}, {} candidates merged, {} pairs, {} not found by the chunks{}",
        st.contents,
        st.unreadable,
        if st.taken > 0 {
            format!(", {} taken from the earlier line sets, not read", st.taken)
        } else {
            String::new()
        },
        if st.theme_lines > 0 {
            format!(", {} lines of a site's theme left out", st.theme_lines)
        } else {
            String::new()
        },
        st.candidates,
        st.pairs,
        st.added,
        if st.passes > 1 {
            format!(
                " ({} groups of contents to stay within --capacity, {} lines of a single content left out)",
                st.passes, st.single
            )
        } else {
            String::new()
        }
    ));
}
