//! `fsim-partition`: prune and partition the file-chunk graph into
//! independent sub-problems (paper 2.5 steps 3-4).
//!
//! One pass over the **sorted** chunk stream: consecutive records with the
//! same hash form a chunk group, whose degree is its number of distinct
//! files. Groups of degree 1 cannot link files and are dropped; groups above
//! the degree limit (default: half the files, as in the paper) would glue
//! everything into one component and are dropped and reported, and so are
//! the groups that web pages of many names hold, a generated site's theme
//! ([`site`]: 4 more bytes per file, read from the file table); every other
//! group unions its files in a [`UnionFind`] and its records are written out
//! unchanged. Then one `F` line per file of a component of ≥ 2 files.
//!
//! Memory, bounded by files and not by chunks: 5 bytes per file (union-find
//! parent + rank, reused afterwards for component labels) plus the largest
//! chunk group kept (8 bytes per record, plus its text while it is under
//! [`TEXT_GROUP_MAX`] records; a group is let go as soon as its degree
//! passes the limit). File sizes and content hashes for the `F`
//! lines are not kept: only the first and last lines of the file table are
//! read up front (its header and trailer: parameters, file count, digest of
//! the records), and the whole table once at the end, which is why
//! `--files` must be a regular file. (If it is a pipe, it is read up front
//! and 24 more bytes per file are kept instead.)
//!
//! Time: one thread parses, checks and groups the chunk stream and copies
//! the kept records' text; this one runs the union-find on the file pairs
//! it is sent (random memory accesses, the one part that cannot be split);
//! a third writes. Records are never formatted again unless their group is
//! long. Figures in docs/performance.md.

mod flines;
mod forest;
mod group;
mod merge;
mod rerun;
pub mod site;
mod table;
#[cfg(test)]
mod tests;
pub mod unionfind;

use flines::{f_lines_parallel, FLines};
pub use forest::{run_forest, ForestConfig};
use group::group_chunks;
pub use group::{Grouper, Keep, TEXT_GROUP_MAX};
pub use merge::{run_merge, MergeConfig};
pub use site::{PageNames, DEFAULT_SITE_NAMES};
use table::{is_regular, parse_file_line, peek_file_table, read_file_table, FileTable};

use crate::error::{Error, Result};
use crate::formats::changed::{DroppedChunk, CHANGED_ONLY};
use crate::formats::files::TableDigest;
use crate::formats::headers::{ChunkParams, PartitionHeader, PartitionTrailer};
use crate::formats::open_input;
use crate::formats::{
    classify_line, hex128, parse_hex128, parse_id, parse_u64, write_header, write_trailer, Digest,
    InputCheck, Kind, Line, Params,
};
use crate::io::bgwrite::BgWriter;
use crate::io::Output;
use crate::stages::partition::unionfind::{QueuedUnions as Unions, UnionFind};
use crate::stages::sort::{format_chunk_line, parse_chunk_line, ChunkKey, FastLines};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::Instant;

/// How many of the dropped chunks of highest degree are reported.
pub const TOP_DROPPED: usize = 20;

/// Default floor of the degree limit: a chunk held by this many files or
/// fewer is never dropped, whatever the fraction. Keeping a chunk of
/// degree d costs the analysis d(d-1)/2 pair updates (16 bytes each when a
/// bin is oversized): 0.5 M for d = 1000, under a second and 8 MB, so no
/// folder of versions smaller than this is ever pruned; the paper's case (a
/// header in all of 100,000 files) is still dropped at half the files.
/// docs/pipeline.md, "Which chunks are dropped".
pub const DEFAULT_DEGREE_FLOOR: u64 = 1000;

/// The chunk degree limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// At most this many distinct files per chunk.
    Absolute(u64),
    /// max(floor(files × fraction), floor); the paper uses one half and no
    /// floor, which drops every shared chunk of a family of versions that
    /// is more than half of a small folder.
    Fraction { fraction: f64, floor: u64 },
}

impl Limit {
    /// The paper's half of the files, with [`DEFAULT_DEGREE_FLOOR`].
    pub const DEFAULT: Limit = Limit::Fraction {
        fraction: 0.5,
        floor: DEFAULT_DEGREE_FLOOR,
    };

    pub fn resolve(self, files: u64) -> u64 {
        match self {
            Limit::Absolute(n) => n,
            Limit::Fraction { fraction, floor } => {
                ((files as f64 * fraction).floor() as u64).max(floor)
            }
        }
    }
}

/// The set of files that hold a dropped chunk: their similarity to others
/// is a lower bound (pairs linked only through dropped chunks are never
/// candidates). One bit per file: 1.9 MB for 15 M files.
#[derive(Debug, Clone, Default)]
pub struct FileBits(Vec<u64>);

impl FileBits {
    pub fn new(files: u64) -> Self {
        FileBits(vec![0; files.div_ceil(64) as usize])
    }

    #[inline]
    pub fn set(&mut self, file: u32) {
        if let Some(w) = self.0.get_mut(file as usize / 64) {
            *w |= 1 << (file % 64);
        }
    }

    pub fn words(&self) -> &[u64] {
        &self.0
    }

    pub fn count(&self) -> u64 {
        self.0.iter().map(|w| w.count_ones() as u64).sum()
    }

    #[inline]
    pub fn get(&self, file: u32) -> bool {
        self.0
            .get(file as usize / 64)
            .is_some_and(|w| w >> (file % 64) & 1 == 1)
    }

    /// Set or clear `file`'s bit.
    #[inline]
    pub fn put(&mut self, file: u32, on: bool) {
        if let Some(w) = self.0.get_mut(file as usize / 64) {
            *w = (*w & !(1 << (file % 64))) | (u64::from(on) << (file % 64));
        }
    }
}

/// Validated options of `fsim-partition`.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: PathBuf,
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub limit: Limit,
    pub quiet: bool,
    /// The output file kept zstd-compressed ([`crate::io::Output::compress`]).
    pub compress: bool,
    /// Templates files (`--templates`): their chunks are ignored and file
    /// sizes reduced to their payload (`crate::stages::templates`).
    pub templates: Vec<PathBuf>,
    /// `--site-names`: the fewest page names that make a chunk a generated
    /// site's template ([`site`]); 0 turns the rule off.
    pub site_names: u64,
    /// Write every dropped chunk and the files holding one here
    /// (`--dropped-out`, for the next re-run).
    pub dropped_out: Option<PathBuf>,
    /// A re-run given the changed chunks' records alone (fsim-sort
    /// --changed): the earlier run's dropped list and this run's changed set.
    pub previous_dropped: Option<PathBuf>,
    pub changed: Option<PathBuf>,
}

/// A dropped chunk of high degree, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped {
    pub hash: u128,
    pub degree: u64,
    pub len: u32,
    /// Smallest file id holding the chunk.
    pub example: u32,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub files: u64,
    pub limit: u64,
    pub records_in: u64,
    pub kept: Digest,
    pub components: u64,
    pub files_in_components: u64,
    pub singleton_chunks: u64,
    pub dropped_chunks: u64,
    pub dropped_records: u64,
    /// Files holding at least one dropped chunk.
    pub pruned_files: u64,
    /// Of the dropped chunks, a generated site's template (`site_names`:
    /// the rule's threshold, 0 when off).
    pub site_chunks: u64,
    pub site_names: u64,
    /// Highest-degree dropped chunks, highest first.
    pub top: Vec<Dropped>,
    /// Escaped path of the example file of the highest dropped chunk.
    pub top_example_path: Option<String>,
    /// `; templates: ...` phrase, empty without templates.
    pub templates: String,
    pub seconds: f64,
}

impl Summary {
    /// The stderr report, one line: the analyst must see what was dropped.
    pub fn report(&self) -> String {
        let mut s = format!(
            "fsim-partition: {} files, {} components of 2 or more files holding {} files, {} records kept of {} ({} single-file chunks dropped){}",
            self.files,
            self.components,
            self.files_in_components,
            self.kept.count,
            self.records_in,
            self.singleton_chunks,
            self.templates,
        );
        s += &format!(
            "; dropped {} chunks above degree {}",
            self.dropped_chunks - self.site_chunks,
            self.limit
        );
        if self.site_chunks > 0 {
            s += &format!(
                " and {} chunks of a site's template (pages of {} names or more)",
                self.site_chunks, self.site_names
            );
        }
        s += &format!(
            " ({} records, in {} files whose similarity is now a lower bound)",
            self.dropped_records, self.pruned_files
        );
        if let Some(t) = self.top.first() {
            let ex = match &self.top_example_path {
                Some(p) => p.clone(),
                None => format!("file id {}", t.example),
            };
            s += &format!(
                "; highest: degree {}, {} bytes, e.g. {}",
                t.degree, t.len, ex
            );
        }
        s += &format!("; {:.2} s\n", self.seconds);
        s
    }
}

/// Partition; see the module doc. Nothing is written when an input is
/// invalid, unsorted, truncated or does not belong to the file table.
///
/// Threads: one reads and parses the chunk stream (and checks its order),
/// this one groups and unions, a third writes the output
/// ([`BgWriter`]). A regular file table is read once, at the end, for the
/// `F` lines; only its first and last lines are read up front.
pub fn run(cfg: &Config) -> Result<Summary> {
    let t0 = Instant::now();
    crate::io::wait_for_input(cfg.inputs.first().map_or(Path::new("-"), |p| p.as_path()))?;
    let (table, kept_files, keys) = load_table(&cfg.files, cfg.site_names > 0)?;
    let n = table.files;
    let limit = cfg.limit.resolve(n);
    let chunk = ChunkParams::from_params(&table.params, &table.name)?;
    let tmpl = crate::stages::templates::PayloadCounter::new(
        crate::formats::templates::TemplateSet::load(&cfg.templates, &chunk.to_params())?,
        n as usize,
    );
    let mut w = BgWriter::new(Output::create_records(cfg.output.as_deref(), cfg.compress)?);
    let header = PartitionHeader {
        chunk: chunk.clone(),
        files: Some(n),
        limit: Some(limit),
        templates: tmpl.set.identity(),
    };
    w.raw(&header_line(&header))?;

    let grouper = grouper(cfg, limit, n, keys)?;
    let (grouped, unions) = group_and_join(cfg, &table, &chunk, tmpl, grouper, w);
    let gr = grouped?;
    let (mut g, mut w, seen, tmpl, feature_counts) =
        (gr.grouper, gr.out, gr.seen, gr.tmpl, gr.feature_counts);
    let last_name = gr.last_name;
    gr.check.finish(&seen, &last_name, gr.last_line)?;
    let changed_only = gr
        .check
        .params
        .as_ref()
        .and_then(|p| p.get_u64(CHANGED_ONLY));
    belongs(changed_only, gr.trailer.as_ref(), &seen, &table, &last_name)?;

    let top = g.top_dropped();
    let kept = g.kept;
    let singleton_chunks = g.singleton_chunks;
    let site_names = g.site.min_names();
    let own = rerun::DroppedFigures::take(&mut g);
    drop(g);
    let comps = unions.into_components();
    let (components, files_in_components) = comps.multi_counts();

    // F lines, in id order.
    let fl = FLines {
        comps: &comps,
        tmpl: &tmpl,
        feature_counts: feature_counts.as_deref(),
        want_path: top.first().map(|t| t.example),
    };
    let (top_example_path, paths) =
        write_f_lines(&cfg.files, &table, kept_files.as_deref(), &fl, &mut w)?;
    drop(comps);
    let ident = chunk.to_params().merged(&tmpl.set.header_params());
    let mine = rerun::Mine {
        figures: own,
        list: paths.map(|p| rerun::list_params(&ident, n, p, limit, site_names)),
        per_file_records: !tmpl.set.is_empty() || feature_counts.is_some(),
        files: n,
        table: &table.name,
    };
    let dropped = rerun::settle(cfg, mine, changed_only.is_some())?;

    let mut tail = Vec::new();
    dropped_lines(&top, &mut tail);
    let tp = PartitionTrailer {
        records: kept.count,
        digest: kept.sum,
        files: files_in_components,
        components,
        dropped_chunks: dropped.chunks.len() as u64,
        dropped_records: dropped.records(),
        pruned_files: Some(dropped.pruned.count()),
        dropped_digest: Some(dropped.digest()),
        site_chunks: dropped.site_chunks(),
        site_names: Some(site_names),
        changed_only,
    };
    write_trailer(Kind::Partition, &tp.to_params(), &mut tail);
    w.raw(&tail)?;
    w.finish()?.finish()?;
    Ok(Summary {
        files: n,
        limit,
        records_in: seen.count,
        kept,
        components,
        files_in_components,
        singleton_chunks,
        dropped_chunks: tp.dropped_chunks,
        dropped_records: tp.dropped_records,
        pruned_files: dropped.pruned.count(),
        site_chunks: tp.site_chunks,
        site_names,
        top,
        top_example_path,
        templates: tmpl.summary(),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The partition's header line.
fn header_line(h: &PartitionHeader) -> Vec<u8> {
    let mut head = Vec::new();
    write_header(Kind::Partition, &h.to_params(), &mut head);
    head
}

/// The records read are those the file table was written with: those
/// `seen`, or, in a re-run's records of the changed chunks alone
/// (`changed_only`), all those its sort read (the `trailer` says).
fn belongs(
    changed_only: Option<u64>,
    trailer: Option<&Params>,
    seen: &Digest,
    table: &FileTable,
    name: &str,
) -> Result<()> {
    let read = match changed_only {
        Some(_) => all_read(trailer, name)?,
        None => *seen,
    };
    if read == table.chunk_digest {
        return Ok(());
    }
    Err(Error::msg(format!(
        "{name} does not belong to the file table {}: it holds {} records (digest {}) but the file table was written with {} records (digest {}); a stale or foreign file table",
        table.name,
        read.count,
        hex128(read.sum),
        table.chunk_digest.count,
        hex128(table.chunk_digest.sum)
    )))
}

/// A re-run's sorted records: the count and digest of every record the
/// sort read, from the trailer's `all-records` and `all-digest`.
fn all_read(trailer: Option<&Params>, name: &str) -> Result<Digest> {
    let t = trailer.ok_or_else(|| Error::msg(format!("{name}: no trailer")))?;
    match (t.get_u64("all-records"), t.get_u128_hex("all-digest")) {
        (Some(count), Some(sum)) => Ok(Digest { count, sum }),
        _ => Err(Error::msg(format!(
            "{name}: the header says changed-only= but the trailer has no all-records= and all-digest= (written by fsim-sort --changed)"
        ))),
    }
}

/// The `#dropped` lines of the highest dropped chunks.
fn dropped_lines(top: &[Dropped], out: &mut Vec<u8>) {
    for t in top {
        out.extend_from_slice(b"#dropped\t");
        out.extend_from_slice(hex128(t.hash).as_bytes());
        out.extend_from_slice(format!("\t{}\t{}\t", t.degree, t.len).as_bytes());
        crate::formats::write_id(t.example, out);
        out.push(b'\n');
    }
}

/// The grouper of this run: its limit, its site rule, and the degrees it
/// lists for a re-run ([`rerun::near_from`]).
fn grouper(cfg: &Config, limit: u64, files: u64, keys: Option<Vec<u32>>) -> Result<Grouper> {
    Ok(Grouper::new(limit, files)
        .with_site(page_names(cfg, files, keys)?)
        .with_near(rerun::near_from(cfg.limit, limit)))
}

/// The site-template rule's page names: from the table's one read when it
/// was read whole up front (a pipe), else from a read of their own.
fn page_names(cfg: &Config, files: u64, keys: Option<Vec<u32>>) -> Result<PageNames> {
    match keys {
        Some(keys) => Ok(PageNames::from_keys(keys, cfg.site_names)),
        None => PageNames::load(&cfg.files, files, cfg.site_names),
    }
}

/// A file's size and content hash.
type SizeContent = (u64, u128);

/// What [`load_table`] read: the table's ends, and, when it read the
/// whole table, each file's size and content, and page name if asked.
type Loaded = (FileTable, Option<Vec<SizeContent>>, Option<Vec<u32>>);

/// The file table's ends (a regular file whose ends look right), or the
/// whole table read now with the size and content of each file (a pipe,
/// or ends that do not look right: the full read says why), and then each
/// file's page name too when `pages` (a pipe cannot be read again).
fn load_table(files: &Path, pages: bool) -> Result<Loaded> {
    let peeked = if is_regular(files) {
        peek_file_table(files)
    } else {
        None
    };
    if let Some(t) = peeked {
        return Ok((t, None, None));
    }
    let (mut k, mut keys) = (Vec::new(), Vec::new());
    let t = read_file_table(files, |_, size, content, path| {
        k.push((size, content));
        if pages {
            keys.push(site::page_key(path));
        }
        Ok(())
    })?;
    Ok((t, Some(k), pages.then_some(keys)))
}

/// Group the chunk stream on a thread of its own (which writes the kept
/// records to `w`) while this one joins the files of each kept chunk, in
/// input order.
fn group_and_join(
    cfg: &Config,
    table: &FileTable,
    chunk_params: &ChunkParams,
    tmpl: crate::stages::templates::PayloadCounter,
    grouper: Grouper,
    w: BgWriter,
) -> (Result<group::Grouped>, Unions) {
    let default_input = [PathBuf::from("-")];
    let inputs: &[PathBuf] = if cfg.inputs.is_empty() {
        &default_input
    } else {
        &cfg.inputs
    };
    std::thread::scope(|s| {
        let (tx, rx) = sync_channel::<Vec<(u32, u32)>>(4);
        let (back_tx, back_rx) = sync_channel::<Vec<(u32, u32)>>(8);
        let quiet = cfg.quiet;
        let grouping = s.spawn(move || {
            group_chunks(
                inputs,
                table,
                chunk_params,
                tmpl,
                grouper,
                quiet,
                w,
                tx,
                back_rx,
            )
        });
        // This thread: the union-find, fed in input order.
        let mut unions = Unions::new(table.files as usize);
        for mut links in rx.iter() {
            for &(a, b) in &links {
                unions.queue(a, b);
            }
            links.clear();
            let _ = back_tx.try_send(links);
        }
        let grouped = grouping
            .join()
            .unwrap_or_else(|_| Err(Error::msg("internal error: the grouping thread panicked")));
        (grouped, unions)
    })
}

/// The `F` lines, in id order: from the sizes and contents read up front,
/// or from the one full read of the table (which checks every line, as the
/// read up front of a pipe does). Returns the path of `fl.want_path` when
/// the table was read for it, and the identity of its paths (not from a
/// pipe).
fn write_f_lines(
    files: &Path,
    table: &FileTable,
    kept_files: Option<&[SizeContent]>,
    fl: &FLines,
    w: &mut BgWriter,
) -> Result<(Option<String>, Option<u128>)> {
    let Some(kept_files) = kept_files else {
        return f_lines_parallel(files, table, fl, w).map(|(e, p)| (e, Some(p)));
    };
    for (id, &(size, content)) in kept_files.iter().enumerate() {
        fl.line(id as u32, size, content, w.buf());
        w.maybe_flush()?;
    }
    Ok((None, None))
}
