//! `fsim-sort`: external sort of chunk records by hash (paper 2.5 step 2),
//! byte-identical to `LC_ALL=C sort`, in bounded memory.
//!
//! The text is parsed once into 24-byte binary records ([`ChunkKey`]) with a
//! table-driven hex parser, sorted in memory in runs that fill the
//! `--memory` budget (the halves on separate threads, merged on the fly, so
//! parallelism costs no extra memory), spilled as binary runs into a private
//! temp dir, then k-way merged with bounded fan-in and formatted back to
//! text only once. Text conversion costs more than the sort (NOTES.md), so
//! both directions avoid allocation and `fmt`.
//!
//! The generic part, [`ExternalSorter`] over any [`FixedRecord`], is meant
//! for reuse (e.g. `fsim-analyze` sorting [`PairRecord`]s out of core):
//!
//! ```
//! use fsim::stages::sort::{ExternalSorter, PairRecord, SortOptions};
//! let mut s = ExternalSorter::<PairRecord>::new(SortOptions::with_memory(64 << 20));
//! s.push(PairRecord { a: 2, b: 1, bytes: 10 }).unwrap();
//! s.push(PairRecord { a: 1, b: 5, bytes: 20 }).unwrap();
//! let out: Vec<PairRecord> = s.finish().unwrap().collect::<fsim::Result<_>>().unwrap();
//! assert_eq!(out[0].a, 1);
//! ```
//!
//! With `--resume-dir`, runs are kept (fsynced) in that directory with a
//! journal instead, so that a killed sort continues after its last finished
//! run ([`crate::stages::sort::resume`]).
//!
//! Memory: `--memory` bounds the record buffer (and, while merging, the run
//! read buffers), and a re-run's filter of the changed chunks (`--changed`),
//! whose bytes the buffer gives up; fixed I/O buffers of about 3 MiB come
//! on top. Disk: one
//! binary copy of the input (24 bytes per record, less than half the text).

/// The sorter lives in the io layer, so the report can use it too.
pub use crate::io::sorter as external;
pub mod keys;
pub mod lines;
pub mod resume;
pub mod split;

pub use external::{ExternalSorter, SortOptions, Sorted, DEFAULT_FAN_IN, MIN_MEMORY};
pub use lines::{At, FastLines, LineSink};

pub use keys::{
    cmp_decimal_strings, format_chunk_line, parse_chunk_line, ChunkKey, FixedRecord, PairRecord,
    MAX_CHUNK_LINE,
};

use crate::error::{Context, Error, Result};
use crate::formats::Codec;
use crate::formats::{classify_line, ChunkRecord, Digest, InputCheck, Kind, Line};
use crate::io::progress::Progress;
use crate::io::Output;
use crate::stages::sort::resume::{Checkpoint, Journal, Position};
use std::fs::File;

use std::path::{Path, PathBuf};
use std::time::Instant;

/// Records merged between two updates of the merge's progress bar: the
/// update is an atomic store, kept out of the per-record path.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Validated options of `fsim-sort`.
#[derive(Debug, Clone)]
pub struct Config {
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub memory: u64,
    pub tmpdir: Option<PathBuf>,
    pub threads: usize,
    pub fan_in: usize,
    pub quiet: bool,
    /// The output file kept zstd-compressed ([`crate::io::Output::compress`]).
    pub compress: bool,
    /// Keep finished runs here with a journal, to resume after a kill
    /// ([`crate::stages::sort::resume`]).
    pub resume_dir: Option<PathBuf>,
    /// Write the sorted records only, without the inputs' `#` lines: one
    /// hash range of a sort by files, whose header and trailer the
    /// concatenation gets once (fsim-spark, [`split`]).
    pub records_only: bool,
    /// Keep only the records of these chunks (`--changed`, a re-run's
    /// [`crate::formats::changed::ChangedSet`]).
    pub changed: Option<PathBuf>,
}

/// The chunks a re-run keeps: an open-addressed table of their hashes,
/// behind a bitmap by the hash's top bits. Most records read are of other
/// chunks, and the table of 100,000 chunks is larger than the caches:
/// looking every record up in it was half of a re-run's sort (a miss a
/// record); the bitmap, 32 bits a chunk, lets through 3 % of the others.
/// The bitmap is larger than the core's cache too for a large changed
/// set, so records are looked up a [`BATCH`] at a time: their bitmap
/// words asked for first, then the table slots of those that pass, then
/// both read (the misses overlap instead of coming one after the other).
struct ChunkFilter {
    bits: Vec<u64>,
    /// The hash's top `64 - shift` bits index `bits`.
    shift: u32,
    /// Hashes by their low half's bits (`mask`), linear probing; at most
    /// half full. (0, 0) marks a free slot: that hash is `zero`.
    slots: Vec<(u64, u64)>,
    mask: u64,
    zero: bool,
    /// Distinct chunks in the set.
    chunks: usize,
}

/// Records a [`ChunkFilter`] looks up together.
const BATCH: usize = 16;

impl ChunkFilter {
    fn new(hashes: &[u128]) -> ChunkFilter {
        let width = (hashes.len() as u64 * 32).next_power_of_two().max(1 << 12);
        let shift = 64 - width.trailing_zeros();
        let mut bits = vec![0u64; (width / 64) as usize];
        let size = (hashes.len() * 2).next_power_of_two().max(16);
        let mut f = ChunkFilter {
            bits: Vec::new(),
            shift,
            slots: vec![(0, 0); size],
            mask: size as u64 - 1,
            zero: false,
            chunks: 0,
        };
        for &h in hashes {
            let (hi, lo) = ((h >> 64) as u64, h as u64);
            let i = hi >> shift;
            bits[(i / 64) as usize] |= 1 << (i % 64);
            f.insert(hi, lo);
        }
        f.bits = bits;
        f
    }

    /// The slot of (`hi`, `lo`): its own, or the free one it would take.
    /// The low half of an MD5 is as uniform as its top, which the bitmap
    /// takes: the two index apart.
    #[inline]
    fn slot(&self, hi: u64, lo: u64) -> usize {
        let mut at = lo & self.mask;
        loop {
            let s = self.slots[at as usize];
            if s == (hi, lo) || s == (0, 0) {
                return at as usize;
            }
            at = (at + 1) & self.mask;
        }
    }

    fn insert(&mut self, hi: u64, lo: u64) {
        if (hi, lo) == (0, 0) {
            self.chunks += usize::from(!self.zero);
            self.zero = true;
            return;
        }
        let at = self.slot(hi, lo);
        self.chunks += usize::from(self.slots[at] == (0, 0));
        self.slots[at] = (hi, lo);
    }

    /// What it holds: its table and its bitmap.
    fn bytes(&self) -> u64 {
        (self.slots.len() * 16 + self.bits.len() * 8) as u64
    }

    #[inline]
    fn bit(&self, hi: u64) -> (usize, u64) {
        let i = hi >> self.shift;
        ((i / 64) as usize, 1 << (i % 64))
    }

    #[inline]
    fn contains(&self, hi: u64, lo: u64) -> bool {
        let (w, b) = self.bit(hi);
        if self.bits[w] & b == 0 {
            return false;
        }
        if (hi, lo) == (0, 0) {
            return self.zero;
        }
        self.slots[self.slot(hi, lo)] == (hi, lo)
    }

    /// Whether each of `keys` is of the set, into `out`: the same answers
    /// as [`ChunkFilter::contains`], the cache misses overlapped.
    fn contains_all(&self, keys: &[ChunkKey], out: &mut [bool; BATCH]) {
        use crate::io::hashing::prefetch;
        for k in keys {
            prefetch(&self.bits[self.bit(k.hi).0]);
        }
        for (k, o) in keys.iter().zip(out.iter_mut()) {
            let (w, b) = self.bit(k.hi);
            *o = self.bits[w] & b != 0;
            if *o {
                prefetch(&self.slots[(k.lo & self.mask) as usize]);
            }
        }
        for (k, o) in keys.iter().zip(out.iter_mut()) {
            *o = *o && self.contains(k.hi, k.lo);
        }
    }
}

/// Memory a changed chunk takes in the filter at most: two to four
/// table slots of 16 bytes, and 32 to 64 bits of bitmap.
const FILTER_BYTES: u64 = 72;

/// The filter of `--changed`, when it fits in half of `--memory` (else,
/// and for a set of another chunking, every record is kept: a full sort
/// is always right, only slower).
fn load_filter(cfg: &Config) -> Result<Option<(ChunkFilter, Digest)>> {
    let Some(path) = &cfg.changed else {
        return Ok(None);
    };
    if cfg.inputs.len() != 1 || cfg.records_only {
        return Err(Error::msg(
            "--changed sorts one chunk file (a run's chunks.tsv), as a whole",
        ));
    }
    let set = crate::formats::changed::ChangedSet::read(path)?;
    let of = match (
        set.params.get_u64("records"),
        set.params.get_u128_hex("digest"),
    ) {
        (Some(count), Some(sum)) => Digest { count, sum },
        _ => {
            return Err(Error::msg(format!(
                "{}: no records= and digest= in its header (written by fsim-chunk --changed-out)",
                path.display()
            )))
        }
    };
    if set.hashes.len() as u64 * FILTER_BYTES > cfg.memory / 2 {
        return Ok(None);
    }
    Ok(Some((ChunkFilter::new(&set.hashes), of)))
}

/// A changed set belongs to the chunk records it was written with: a set
/// of other records would leave out chunks of the changed files.
fn check_changed_of(cfg: &Config, of: &Digest, read: &Digest) -> Result<()> {
    if of == read {
        return Ok(());
    }
    Err(Error::msg(format!(
        "{}: written with {} chunk records (digest {}), but the input holds {} (digest {}): a changed set of another run; remove it (every record is then sorted)",
        cfg.changed.as_deref().unwrap_or(Path::new("-")).display(),
        of.count,
        crate::formats::hex128(of.sum),
        read.count,
        crate::formats::hex128(read.sum)
    )))
}

/// What a run did (for the summary and for tests).
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Records in the output.
    pub records: u64,
    /// Of these, records in runs kept from a killed sort (not read again).
    pub resumed: u64,
    pub header_lines: usize,
    pub runs_spilled: usize,
    /// With `--changed`: the records of the input, of which `records` kept.
    pub of: Option<u64>,
    pub seconds: f64,
}

impl Summary {
    /// `fsim-sort: R records (S sorted, K resumed), H header lines, N runs spilled, T s`.
    pub fn line(&self) -> String {
        let of = self.of.map_or(String::new(), |n| {
            format!(" of {n} (those of the changed chunks)")
        });
        format!(
            "fsim-sort: {} records{of} ({} sorted, {} resumed), {} header lines, {} runs spilled, {:.2} s",
            self.records,
            self.records - self.resumed,
            self.resumed,
            self.header_lines,
            self.runs_spilled,
            self.seconds
        )
    }
}

/// An input file read from byte `offset` of its text on (a resumed sort),
/// its bytes counted by `progress`. A compressed input cannot seek: its
/// first `offset` bytes of text are decompressed and skipped.
fn open_input_at(
    path: &Path,
    offset: u64,
    progress: &Progress,
) -> Result<(Box<dyn std::io::BufRead + Send>, String)> {
    use std::io::{Seek, SeekFrom};
    if Codec::of_file(path).is_compressed() {
        let (mut r, name) = progress.open(path)?;
        let skipped = std::io::copy(
            &mut std::io::Read::take(&mut r, offset),
            &mut std::io::sink(),
        )
        .ctx(|| format!("reading {name}"))?;
        if skipped != offset {
            return Err(Error::msg(format!(
                "{name} got shorter than the sort's journal says"
            )));
        }
        return Ok((r, name));
    }
    let name = path.display().to_string();
    let mut f = File::open(path).ctx(|| format!("cannot open {name}"))?;
    f.seek(SeekFrom::Start(offset))
        .ctx(|| format!("cannot seek in {name}"))?;
    progress.inc(offset);
    let r = std::io::BufReader::with_capacity(64 << 10, f);
    Ok((Box::new(progress.reader(r)), name))
}

/// The inputs given, or standard input (`-`) when none is.
pub(crate) fn inputs_or_stdin(inputs: &[PathBuf]) -> Vec<PathBuf> {
    if inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        inputs.to_vec()
    }
}

/// Feed a `#` line of a chunk input to the checks of its file (`check`)
/// and of all the inputs (`all`, whose headers must agree); true when it
/// is a header.
pub(crate) fn check_hash_line(
    line: &[u8],
    check: &mut InputCheck,
    all: &mut InputCheck,
) -> std::result::Result<bool, String> {
    Ok(match classify_line(line)? {
        Line::Header(kind, params) => {
            check.header(kind, params.clone())?;
            all.header(kind, params)?;
            true
        }
        Line::Trailer(kind, params) => {
            check.trailer(kind, &params)?;
            false
        }
        Line::Comment(_) | Line::Data(_) => false,
    })
}

/// What a line of a chunk input that is neither a record nor a `#` line
/// should have been.
pub(crate) fn not_a_record(line: &[u8]) -> String {
    let why = if ChunkRecord::parse(line).is_some() {
        " (without leading zeros in the length)"
    } else {
        ""
    };
    format!("expected {}{why}", ChunkRecord::EXPECTED)
}

/// Sort chunk files; see the module doc. Nothing is written when an input
/// is invalid, truncated or mixed. With `resume_dir`, finished runs are
/// journaled there and a killed sort continues after them.
pub fn run(cfg: &Config) -> Result<Summary> {
    let t0 = Instant::now();
    if cfg.memory < MIN_MEMORY {
        return Err(Error::msg(format!(
            "--memory must be at least {MIN_MEMORY} bytes (4K)"
        )));
    }
    let inputs: &[PathBuf] = &inputs_or_stdin(&cfg.inputs);
    let (filter, of) = load_filter(cfg)?.unzip();
    // A re-run's few records are sorted again rather than resumed.
    let (journal, cp) = match cfg.resume_dir.as_ref().filter(|_| filter.is_none()) {
        Some(d) => {
            let (j, cp) = Journal::open(d, inputs, cfg.memory)?;
            (Some(j), cp)
        }
        None => (None, None),
    };
    let out = Output::create_records(cfg.output.as_deref(), cfg.compress)?;
    // The filter is held all through the sort: its bytes are the
    // records' less.
    let held = filter.as_ref().map_or(0, ChunkFilter::bytes);
    let mut p1 = Phase1::new(cfg, cfg.memory.saturating_sub(held), journal, cp.as_ref())?;
    p1.filter = filter;
    let resumed = p1.sorter.len();
    // Progress, phase 1: bytes of input read (ETA when the inputs are files).
    let paths: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let progress = crate::io::progress::Progress::for_inputs("fsim-sort", &paths, cfg.quiet);
    let start = cp.as_ref().map_or(0, |c| c.at.input);
    for (idx, path) in inputs.iter().enumerate().skip(start) {
        let here = cp.as_ref().map(|c| c.at).filter(|at| at.input == idx);
        p1.read_input(idx, path, here, &progress)?;
    }
    let Phase1 {
        sorter,
        journal,
        meta,
        mut hash_lines,
        filter,
        kept,
        read,
        ..
    } = p1;
    if let (Some(f), Some(of)) = (&filter, &of) {
        check_changed_of(cfg, of, &read)?;
        hash_lines = mark_changed_only(&hash_lines, f.chunks, &kept, &read);
    }
    // `#` sorts before every hex digit: these lines come first, in byte order.
    hash_lines.sort_unstable();
    // Formatting (here) overlaps writing (on the writer's thread).
    let mut w = crate::io::bgwrite::BgWriter::new(out);
    if cfg.records_only {
        hash_lines.clear();
    }
    for l in &hash_lines {
        w.raw(l)?;
        w.raw(b"\n")?;
    }
    let records = sorter.len();
    progress.finish();
    let end = Position {
        input: inputs.len(),
        ..Position::default()
    };
    let (runs_spilled, progress) = merge_out(cfg, sorter, &journal, &end, &meta, &mut w)?;
    w.finish()?.finish()?;
    if let Some(j) = journal {
        j.remove();
    }
    progress.finish();
    Ok(Summary {
        records,
        resumed,
        header_lines: hash_lines.len(),
        runs_spilled,
        of: filter.map(|_| read.count),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The `#` lines of a sort of the changed chunks' records: the header
/// says `changed-only=N` (N chunks asked for), the trailer counts the
/// records kept, and `all-records`/`all-digest` those read, which
/// fsim-partition checks against the file table.
fn mark_changed_only(
    lines: &[Vec<u8>],
    chunks: usize,
    kept: &Digest,
    read: &Digest,
) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        let mut buf = Vec::new();
        match classify_line(l) {
            Ok(Line::Header(kind, params)) => {
                crate::formats::write_header(kind, &params.with("changed-only", chunks), &mut buf)
            }
            Ok(Line::Trailer(kind, _)) => {
                let p = crate::formats::digest_params(kept, "records")
                    .with("all-records", read.count)
                    .with("all-digest", crate::formats::hex128(read.sum));
                crate::formats::write_trailer(kind, &p, &mut buf)
            }
            _ => buf.extend_from_slice(l),
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        out.push(buf);
    }
    out
}

/// Phase 2: the records merged and written (the bar is up while the last
/// run is sorted and any intermediate merge passes run, its clock going);
/// the runs spilled, and the bar.
fn merge_out(
    cfg: &Config,
    sorter: ExternalSorter<ChunkKey>,
    journal: &Option<Journal>,
    end: &Position,
    meta: &[(usize, Vec<u8>)],
    w: &mut crate::io::bgwrite::BgWriter,
) -> Result<(usize, crate::io::progress::Progress)> {
    let records = sorter.len();
    let progress =
        crate::io::progress::Progress::items("fsim-sort: merging", records, "records", cfg.quiet);
    let mut sorted = sorter.finish_with(|runs| match journal {
        Some(j) => j.write(runs, end, meta),
        None => Ok(()),
    })?;
    let runs_spilled = sorted.runs_spilled();
    let mut line = [0u8; 64];
    let mut done = 0u64;
    while let Some(k) = sorted.next_item()? {
        let n = format_chunk_line(&k, &mut line);
        w.raw(&line[..n])?;
        done += 1;
        if done.is_multiple_of(PROGRESS_EVERY) {
            progress.set_position(done);
        }
    }
    drop(sorted);
    Ok((runs_spilled, progress))
}

/// Phase 1: the inputs read into the sorter, their `#` lines checked and
/// kept (and journaled with the runs when resuming is on).
struct Phase1 {
    sorter: ExternalSorter<ChunkKey>,
    journal: Option<Journal>,
    /// The '#' lines read, with the index of their input (journaled).
    meta: Vec<(usize, Vec<u8>)>,
    hash_lines: Vec<Vec<u8>>,
    /// The checks across all inputs.
    all: InputCheck,
    /// `--changed`: the chunks whose records are kept.
    filter: Option<ChunkFilter>,
    /// The records kept, and all those read.
    kept: Digest,
    read: Digest,
}

impl Phase1 {
    /// The sorter (with the runs a killed sort finished, `cp`) and the
    /// checks, the '#' lines read before the kill replayed so that the
    /// checks go on from where they were (they passed them then).
    fn new(
        cfg: &Config,
        memory: u64,
        journal: Option<Journal>,
        cp: Option<&Checkpoint>,
    ) -> Result<Phase1> {
        let mut opts = SortOptions::with_memory(memory.max(MIN_MEMORY));
        opts.tmpdir = cfg.tmpdir.clone();
        opts.threads = cfg.threads.max(1);
        opts.fan_in = cfg.fan_in;
        let sorter = match &journal {
            Some(j) => ExternalSorter::<ChunkKey>::keep_runs_in(
                opts,
                j.dir().to_path_buf(),
                cp.map(|c| c.runs.clone()).unwrap_or_default(),
            ),
            None => ExternalSorter::<ChunkKey>::new(opts),
        };
        let meta: Vec<(usize, Vec<u8>)> = cp.map(|c| c.meta.clone()).unwrap_or_default();
        let hash_lines: Vec<Vec<u8>> = meta.iter().map(|m| m.1.clone()).collect();
        let mut all = InputCheck::new(Kind::Chunks, "records");
        for (_, l) in &meta {
            if let Ok(Line::Header(kind, params)) = classify_line(l) {
                all.header(kind, params).map_err(Error::msg)?;
            }
        }
        Ok(Phase1 {
            sorter,
            journal,
            meta,
            hash_lines,
            all,
            filter: None,
            kept: Digest::default(),
            read: Digest::default(),
        })
    }

    /// Read input `idx` (`path`) into the sorter, from the position `here`
    /// when a killed sort stopped in it (its '#' lines replayed).
    fn read_input(
        &mut self,
        idx: usize,
        path: &Path,
        here: Option<Position>,
        progress: &Progress,
    ) -> Result<()> {
        if self.filter.is_some() {
            return self.read_filtered(path, progress);
        }
        let mut check = InputCheck::new(Kind::Chunks, "records");
        let mut seen = Digest::default();
        let mut lines = match here {
            Some(at) => {
                for (_, l) in self.meta.iter().filter(|m| m.0 == idx) {
                    match classify_line(l) {
                        Ok(Line::Header(kind, params)) => check.header(kind, params),
                        Ok(Line::Trailer(kind, params)) => check.trailer(kind, &params),
                        _ => Ok(()),
                    }
                    .map_err(Error::msg)?;
                }
                seen = at.seen;
                let (reader, name) = open_input_at(path, at.offset, progress)?;
                FastLines::new(reader, name).starting_at(at.line, at.offset)
            }
            None => {
                let (reader, name) = progress.open(path)?;
                FastLines::new(reader, name)
            }
        };
        while let Some(line) = lines.next_line()? {
            if let Some(k) = parse_chunk_line(line) {
                if let Some(j) = &self.journal {
                    if self.sorter.spill_due() {
                        // Spill here, where the input position is known,
                        // then journal it: it starts at this line.
                        let len = line.len() as u64 + 1;
                        self.sorter.spill()?;
                        let at = Position {
                            input: idx,
                            offset: lines.offset() - len,
                            line: lines.line_number() - 1,
                            seen,
                        };
                        j.write(self.sorter.runs(), &at, &self.meta)?;
                        crate::io::test_abort_after_run(self.sorter.runs_spilled() as u64);
                    }
                }
                seen.add(&k.record());
                self.sorter.push(k)?;
                continue;
            }
            if line.first() == Some(&b'#') {
                let owned = self
                    .hash_line(line, &mut check)
                    .map_err(|m| lines.error(m))?;
                if self.journal.is_some() {
                    self.meta.push((idx, owned));
                }
                continue;
            }
            let why = not_a_record(line);
            return Err(lines.error(why));
        }
        check.finish(&seen, lines.name(), lines.line_number())
    }

    /// A `#` line checked and kept; its bytes, for the journal.
    fn hash_line(
        &mut self,
        line: &[u8],
        check: &mut InputCheck,
    ) -> std::result::Result<Vec<u8>, String> {
        let owned = line.to_vec();
        check_hash_line(&owned, check, &mut self.all)?;
        self.hash_lines.push(owned.clone());
        Ok(owned)
    }

    /// A re-run's one input (`--changed`, never resumed) read into the
    /// sorter, the records of the filter's chunks only, looked up a
    /// [`BATCH`] at a time ([`ChunkFilter::contains_all`]). Every record
    /// read counts in `read`, those kept in `kept`.
    fn read_filtered(&mut self, path: &Path, progress: &Progress) -> Result<()> {
        let mut check = InputCheck::new(Kind::Chunks, "records");
        let (reader, name) = progress.open(path)?;
        let mut lines = FastLines::new(reader, name);
        let mut batch: Vec<ChunkKey> = Vec::with_capacity(BATCH);
        while let Some(line) = lines.next_line()? {
            if let Some(k) = parse_chunk_line(line) {
                batch.push(k);
                if batch.len() == BATCH {
                    self.keep_of(&mut batch)?;
                }
                continue;
            }
            self.keep_of(&mut batch)?;
            if line.first() == Some(&b'#') {
                self.hash_line(line, &mut check)
                    .map_err(|m| lines.error(m))?;
                continue;
            }
            let why = not_a_record(line);
            return Err(lines.error(why));
        }
        self.keep_of(&mut batch)?;
        check.finish(&self.read, lines.name(), lines.line_number())
    }

    /// The records of `batch` counted as read, those of the filter's
    /// chunks sorted; `batch` emptied.
    fn keep_of(&mut self, batch: &mut Vec<ChunkKey>) -> Result<()> {
        let f = self
            .filter
            .as_ref()
            .expect("a filtered read has its filter");
        let mut kept = [false; BATCH];
        f.contains_all(batch, &mut kept);
        for (k, keep) in batch.drain(..).zip(kept) {
            let m = k.record().mix();
            self.read.add_mix(m);
            if keep {
                self.kept.add_mix(m);
                self.sorter.push(k)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(hash: u128, file: u32, len: u32) -> ChunkKey {
        ChunkRecord { hash, file, len }.into()
    }

    proptest! {
        /// The filter keeps exactly the chunks of the set: those whose
        /// top bits fall on a set bit of another chunk are looked up.
        #[test]
        fn the_chunk_filter_keeps_the_set_and_nothing_else(
            set in proptest::collection::vec(any::<u128>(), 0..300),
            others in proptest::collection::vec(any::<u128>(), 0..300),
            near in any::<u64>(),
        ) {
            let f = ChunkFilter::new(&set);
            for &h in &set {
                prop_assert!(f.contains((h >> 64) as u64, h as u64));
                // A chunk with its top half (its bit set): looked up.
                let twin = (h & !(u64::MAX as u128)) | near as u128;
                prop_assert_eq!(f.contains((h >> 64) as u64, near), set.contains(&twin));
            }
            for &h in &others {
                let inside = set.contains(&h);
                prop_assert_eq!(f.contains((h >> 64) as u64, h as u64), inside);
            }
            let mut distinct = set.clone();
            distinct.sort_unstable();
            distinct.dedup();
            prop_assert_eq!(f.chunks, distinct.len());
        }

        /// A batch gets the answers one look-up at a time gives, with
        /// chunks that crowd one slot of the table (the same low half)
        /// and the hash 0, which marks a free slot.
        #[test]
        fn a_batch_is_looked_up_as_one_record_at_a_time(
            tops in proptest::collection::vec(0u64..64, 0..200),
            probes in proptest::collection::vec((0u64..80, 0u64..3), 0..200),
            with_zero in any::<bool>(),
        ) {
            let crowd = |hi: u64, lo: u64| u128::from(hi) << 64 | u128::from(lo);
            let mut set: Vec<u128> = tops.iter().map(|&hi| crowd(hi, 7)).collect();
            if with_zero {
                set.push(0);
            }
            let f = ChunkFilter::new(&set);
            let keys: Vec<ChunkKey> = probes.iter().map(|&(hi, lo)| key(crowd(hi, lo * 7), 0, 1)).collect();
            for part in keys.chunks(BATCH) {
                let mut got = [false; BATCH];
                f.contains_all(part, &mut got);
                for (k, &g) in part.iter().zip(&got) {
                    let h = crowd(k.hi, k.lo);
                    prop_assert_eq!(g, set.contains(&h));
                    prop_assert_eq!(f.contains(k.hi, k.lo), g);
                }
            }
        }
    }

    fn tiny(fan_in: usize, threads: usize) -> SortOptions {
        SortOptions {
            memory: MIN_MEMORY,
            tmpdir: None,
            threads,
            fan_in,
        }
    }

    fn sort_all<T: FixedRecord>(items: &[T], opts: SortOptions) -> (Vec<T>, usize) {
        let mut s = ExternalSorter::new(opts);
        for &x in items {
            s.push(x).unwrap();
        }
        let sorted = s.finish().unwrap();
        let spilled = sorted.runs_spilled();
        (sorted.collect::<Result<Vec<T>>>().unwrap(), spilled)
    }

    fn arb_key() -> impl Strategy<Value = ChunkKey> {
        // A small hash and file space so that ties on hash and file occur.
        (
            0u128..8,
            any::<u128>(),
            prop::bool::ANY,
            0u32..4,
            prop_oneof![0u32..200, any::<u32>()],
        )
            .prop_map(|(small, big, use_small, file, len)| {
                key(if use_small { small } else { big }, file, len)
            })
    }

    proptest! {
        #[test]
        fn external_sort_matches_vec_sort(items in prop::collection::vec(arb_key(), 0..3000), fan_in in 2usize..5) {
            let (got, _) = sort_all(&items, tiny(fan_in, 2));
            let mut want = items.clone();
            want.sort();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn pair_records_sort(items in prop::collection::vec((0u32..50, 0u32..50, any::<u64>()), 0..2000)) {
            let items: Vec<PairRecord> = items.into_iter().map(|(a, b, bytes)| PairRecord { a, b, bytes }).collect();
            let (got, _) = sort_all(&items, tiny(3, 1));
            let mut want = items.clone();
            want.sort();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn key_order_is_text_byte_order(a in arb_key(), b in arb_key()) {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            a.record().write(&mut x);
            b.record().write(&mut y);
            // Compare lines without their newline, as sort does.
            prop_assert_eq!(a.cmp(&b), x[..x.len() - 1].cmp(&y[..y.len() - 1]));
        }

        #[test]
        fn format_and_parse_match_chunk_record(k in arb_key()) {
            let mut want = Vec::new();
            k.record().write(&mut want);
            let mut line = [0u8; 64];
            let n = format_chunk_line(&k, &mut line);
            prop_assert_eq!(&line[..n], &want[..]);
            prop_assert_eq!(parse_chunk_line(&want[..n - 1]), Some(k));
        }

        #[test]
        fn fast_parser_never_panics(line in prop::collection::vec(any::<u8>(), 0..80)) {
            if let Some(k) = parse_chunk_line(&line) {
                prop_assert_eq!(ChunkRecord::parse(&line), Some(k.record()));
            }
        }
    }

    #[test]
    fn non_canonical_lines_are_refused() {
        let ok = b"0123456789abcdef0123456789abcdef\t0000000001\t12";
        assert!(parse_chunk_line(ok).is_some());
        assert!(parse_chunk_line(b"0123456789abcdef0123456789abcdef\t0000000001\t012").is_none());
        assert!(parse_chunk_line(b"0123456789ABCDEF0123456789abcdef\t0000000001\t12").is_none());
        assert!(
            parse_chunk_line(b"0123456789abcdef0123456789abcdef\t0000000001\t4294967296").is_none()
        );
        assert!(parse_chunk_line(b"0123456789abcdef0123456789abcdef\t0000000001\t0").is_some());
    }

    #[test]
    fn many_spills_and_passes_give_the_same_order() {
        let items: Vec<ChunkKey> = (0..20_000u64)
            .map(|i| {
                key(
                    crate::formats::mix128(i as u128 % 5000),
                    (i % 7) as u32,
                    (i % 13) as u32 * 11,
                )
            })
            .collect();
        let (got, spilled) = sort_all(&items, tiny(3, 2));
        // 170 records per run: ~118 runs, then merge passes of 3.
        assert!(spilled > 150, "{spilled} runs");
        let mut want = items.clone();
        want.sort();
        assert_eq!(got, want);
        let (mem, spilled) = sort_all(&items, SortOptions::with_memory(64 << 20));
        assert_eq!(spilled, 0);
        assert_eq!(mem, want);
    }

    #[test]
    fn decimal_string_order() {
        let mut v: Vec<u32> = vec![
            0,
            1,
            9,
            10,
            11,
            12,
            119,
            120,
            2,
            100,
            1000,
            u32::MAX,
            4_000_000_000,
        ];
        let mut s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        v.sort_by(|a, b| cmp_decimal_strings(*a, *b));
        s.sort();
        assert_eq!(v.iter().map(|x| x.to_string()).collect::<Vec<_>>(), s);
    }

    #[test]
    fn fast_lines_reports_truncation() {
        let mut l = FastLines::new(&b"a\nbc"[..], "x");
        assert_eq!(l.next_line().unwrap(), Some(&b"a"[..]));
        let e = l.next_line().unwrap_err().to_string();
        assert_eq!(e, "x:2: last line has no newline: the file is truncated");
    }
}
