//! fsim-analyze: the paper's steps 3-4 (section 2.3) with the identical-file
//! handling of section 2.4, run on each bin written by fsim-binpack.
//!
//! For each bin, the file-chunk bipartite graph is loaded into two
//! compressed adjacency arrays (chunk → files, file → chunks). Files with the
//! same content hash are collapsed to their smallest id first, so copies do
//! not multiply links. Then for each file A in id order, the files B > A that
//! share a chunk with A are gathered (deduplicated with a stamp array, not a
//! hash table) and the bytes in common are computed with a merge of the two
//! sorted chunk lists (footnote 2): sum over shared chunks of
//! min(occurrences in A, occurrences in B) × chunk length (footnote 1: a chunk
//! that occurs twice in both files counts twice).
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
//! Memory: the largest bin's graph (see [`estimate_memory`]) plus the pairs
//! found (40 bytes each). Disk: only for oversized bins, 16 bytes per
//! (chunk, file pair).

use crate::chunking::features::{self, MethodSpec};
use crate::error::{Context, Result};
use crate::formats::bins::{parse_record, FileLine};
use crate::formats::open_input;
use crate::formats::{
    self, classify_line, ChunkRecord, Digest, InputCheck, Kind, Line, LineReader, Params,
};
use crate::io::progress::Progress;
use crate::io::Output;
use crate::stages::sort::{ExternalSorter, PairRecord, SortOptions};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

pub use crate::formats::bins::{
    estimate_memory, BYTES_PER_CHUNK, BYTES_PER_FILE, BYTES_PER_RECORD,
};

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

pub use crate::formats::PercentOf;

/// The thresholds of step 4(c).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub min_bytes: u64,
    pub min_percent: f64,
    pub percent_of: PercentOf,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_bytes: 0,
            min_percent: 10.0,
            percent_of: PercentOf::Smaller,
        }
    }
}

impl Thresholds {
    /// Keep a pair with `common` bytes in common? Both paths (in memory and
    /// out of core) and the test model call this one function.
    #[inline]
    pub fn keep(&self, common: u64, size_a: u64, size_b: u64) -> bool {
        if common < self.min_bytes {
            return false;
        }
        let base = self.percent_of.base(size_a, size_b);
        common as f64 * 100.0 >= self.min_percent * base as f64
    }
}

/// Options of one analysis, independent of where input and output are.
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            thresholds: Thresholds::default(),
            capacity: 1 << 30,
            threads: 1,
            tmpdir: None,
            force_spill: false,
        }
    }
}

/// The validated configuration of fsim-analyze.
#[derive(Debug, Clone)]
pub struct Config {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub options: Options,
    pub quiet: bool,
}

/// One similar pair (global file ids, a < b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    pub a: u32,
    pub b: u32,
    pub size_a: u64,
    pub size_b: u64,
    pub common: u64,
    pub shared: u32,
}

impl Pair {
    /// This pair's contribution to the trailer digest.
    #[inline]
    pub fn mix(&self) -> u128 {
        formats::mix128(((self.a as u128) << 96) | ((self.b as u128) << 64) | self.common as u128)
    }

    #[inline]
    pub fn write(&self, out: &mut Vec<u8>) {
        formats::write_id(self.a, out);
        out.push(b'\t');
        formats::write_id(self.b, out);
        out.push(b'\t');
        formats::write_u64(self.size_a, out);
        out.push(b'\t');
        formats::write_u64(self.size_b, out);
        out.push(b'\t');
        formats::write_u64(self.common, out);
        out.push(b'\t');
        formats::write_u64(self.shared as u64, out);
        out.push(b'\n');
    }
}

/// What an analysis found, plus counts for the summary.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Chunking parameters of the input.
    pub params: Params,
    /// Sorted by (a, b).
    pub pairs: Vec<Pair>,
    pub bins: u64,
    pub files: u64,
    pub records: u64,
    /// Files skipped because an earlier file of their bin had the same content.
    pub collapsed: u64,
    /// Bins processed out of core.
    pub spilled_bins: u64,
    /// Pair records that went through the out-of-core sort.
    pub spilled_records: u64,
}

// ---------------------------------------------------------------------------
// Chunk groups: shared by both paths so they see exactly the same data
// ---------------------------------------------------------------------------

/// One (file or chunk index, occurrences) adjacency entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub idx: u32,
    pub occ: u32,
}

/// Receives each chunk group of a bin: its length and its distinct
/// representative files (local indices, ascending) with occurrence counts.
trait GroupSink {
    fn group(&mut self, len: u32, entries: &[Entry]) -> Result<()>;
}

/// Collects the records of the current hash into a group.
struct Grouper {
    hash: u128,
    len: u32,
    active: bool,
    entries: Vec<Entry>,
}

impl Grouper {
    fn new() -> Self {
        Grouper {
            hash: 0,
            len: 0,
            active: false,
            entries: Vec::new(),
        }
    }

    /// Feed one record; `local` is None for the copy of another file (its
    /// records are skipped but still close the previous group).
    #[inline]
    fn feed(
        &mut self,
        r: &ChunkRecord,
        local: Option<u32>,
        sink: &mut impl GroupSink,
    ) -> Result<std::result::Result<(), String>> {
        if !self.active || r.hash != self.hash {
            self.flush(sink)?;
            self.active = true;
            self.hash = r.hash;
            self.len = r.len;
        } else if r.len != self.len {
            return Ok(Err(format!(
                "chunk {} has two lengths, {} and {}: records of different chunkings are mixed",
                formats::hex128(r.hash),
                self.len,
                r.len
            )));
        }
        if let Some(l) = local {
            match self.entries.last_mut() {
                Some(e) if e.idx == l => e.occ += 1,
                _ => self.entries.push(Entry { idx: l, occ: 1 }),
            }
        }
        Ok(Ok(()))
    }

    fn flush(&mut self, sink: &mut impl GroupSink) -> Result<()> {
        // A chunk in one file (after collapsing copies) links nothing.
        if self.entries.len() >= 2 {
            sink.group(self.len, &self.entries)?;
        }
        self.entries.clear();
        self.active = false;
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// In-memory path
// ---------------------------------------------------------------------------

/// The bipartite graph of one bin, as two compressed adjacency arrays.
/// Chunk indices follow the hash order of the bin and file indices the id
/// order, so both lists come out sorted without sorting.
#[derive(Default)]
struct Graph {
    chunk_start: Vec<u32>,
    chunk_len: Vec<u32>,
    chunk_files: Vec<Entry>,
    file_start: Vec<u32>,
    file_chunks: Vec<Entry>,
}

impl GroupSink for Graph {
    #[inline]
    fn group(&mut self, len: u32, entries: &[Entry]) -> Result<()> {
        self.chunk_len.push(len);
        self.chunk_files.extend_from_slice(entries);
        self.chunk_start.push(self.chunk_files.len() as u32);
        Ok(())
    }
}

impl Graph {
    fn with_capacity(files: usize, records: usize) -> Graph {
        let mut chunk_start = Vec::with_capacity(records / 2 + 1);
        chunk_start.push(0);
        Graph {
            chunk_start,
            chunk_len: Vec::with_capacity(records / 2),
            chunk_files: Vec::with_capacity(records),
            file_start: Vec::with_capacity(files + 1),
            file_chunks: Vec::new(),
        }
    }

    /// Build the file → chunks side from the chunk → files side.
    fn finish(&mut self, files: usize) {
        let mut start = vec![0u32; files + 1];
        for e in &self.chunk_files {
            start[e.idx as usize + 1] += 1;
        }
        for i in 0..files {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut fc = vec![Entry { idx: 0, occ: 0 }; self.chunk_files.len()];
        for c in 0..self.chunk_len.len() {
            let (s, e) = (
                self.chunk_start[c] as usize,
                self.chunk_start[c + 1] as usize,
            );
            for f in &self.chunk_files[s..e] {
                let slot = &mut fill[f.idx as usize];
                fc[*slot as usize] = Entry {
                    idx: c as u32,
                    occ: f.occ,
                };
                *slot += 1;
            }
        }
        self.file_start = start;
        self.file_chunks = fc;
    }

    #[inline]
    fn chunks_of(&self, f: usize) -> &[Entry] {
        &self.file_chunks[self.file_start[f] as usize..self.file_start[f + 1] as usize]
    }

    #[inline]
    fn files_of(&self, c: usize) -> &[Entry] {
        &self.chunk_files[self.chunk_start[c] as usize..self.chunk_start[c + 1] as usize]
    }

    /// Bytes and chunks in common of two sorted chunk lists (footnote 2).
    #[inline]
    fn common(&self, a: &[Entry], b: &[Entry]) -> (u64, u32) {
        let (mut i, mut j) = (0, 0);
        let (mut bytes, mut shared) = (0u64, 0u32);
        while i < a.len() && j < b.len() {
            let (x, y) = (a[i], b[j]);
            if x.idx < y.idx {
                i += 1;
            } else if x.idx > y.idx {
                j += 1;
            } else {
                bytes += x.occ.min(y.occ) as u64 * self.chunk_len[x.idx as usize] as u64;
                shared += 1;
                i += 1;
                j += 1;
            }
        }
        (bytes, shared)
    }

    /// Step 4 for the files `range` of the bin, appending kept pairs.
    fn pairs_for(
        &self,
        bin: &BinFiles,
        range: std::ops::Range<usize>,
        th: &Thresholds,
        stamp: &mut [u32],
        cand: &mut Vec<u32>,
        out: &mut Vec<Pair>,
    ) {
        for a in range {
            let la = self.chunks_of(a);
            if la.is_empty() {
                continue;
            }
            cand.clear();
            let mark = a as u32 + 1;
            for ca in la {
                let files = self.files_of(ca.idx as usize);
                // Lists are sorted by file: skip files up to A (symmetry, step 4b).
                let from = files.partition_point(|e| e.idx as usize <= a);
                for e in &files[from..] {
                    let s = &mut stamp[e.idx as usize];
                    if *s != mark {
                        *s = mark;
                        cand.push(e.idx);
                    }
                }
            }
            cand.sort_unstable();
            for &b in cand.iter() {
                let (common, shared) = self.common(la, self.chunks_of(b as usize));
                out.extend(bin.pair(a, b as usize, common, shared, th));
            }
        }
    }

    /// Step 4 for the whole bin on `threads` threads; the result is in
    /// (a, b) order whatever the number of threads.
    fn all_pairs(&self, bin: &BinFiles, th: &Thresholds, threads: usize, out: &mut Vec<Pair>) {
        let n = bin.ids.len();
        let threads = if self.chunk_files.len() < 20_000 {
            1
        } else {
            threads.max(1)
        };
        if threads == 1 {
            let mut stamp = vec![0u32; n];
            let mut cand = Vec::new();
            self.pairs_for(bin, 0..n, th, &mut stamp, &mut cand, out);
            return;
        }
        // Small blocks taken dynamically balance files of very different degrees.
        const BLOCK: usize = 256;
        let blocks = n.div_ceil(BLOCK);
        let next = AtomicUsize::new(0);
        let mut results: Vec<(usize, Vec<Pair>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut stamp = vec![0u32; n];
                        let mut cand = Vec::new();
                        let mut mine = Vec::new();
                        loop {
                            let blk = next.fetch_add(1, Ordering::Relaxed);
                            if blk >= blocks {
                                break;
                            }
                            let mut v = Vec::new();
                            self.pairs_for(
                                bin,
                                blk * BLOCK..((blk + 1) * BLOCK).min(n),
                                th,
                                &mut stamp,
                                &mut cand,
                                &mut v,
                            );
                            if !v.is_empty() {
                                mine.push((blk, v));
                            }
                        }
                        mine
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("analysis thread panicked"))
                .collect()
        });
        results.sort_unstable_by_key(|r| r.0);
        for (_, v) in results {
            out.extend_from_slice(&v);
        }
    }
}

// ---------------------------------------------------------------------------
// Out-of-core path
// ---------------------------------------------------------------------------

/// Emits a (a, b, bytes) record for every pair of files in each chunk group
/// into the shared external sorter ([`crate::stages::sort::ExternalSorter`]), which
/// keeps half the bin capacity in memory and spills sorted runs to disk.
struct Spiller {
    sorter: ExternalSorter<PairRecord>,
    emitted: u64,
}

impl GroupSink for Spiller {
    fn group(&mut self, len: u32, entries: &[Entry]) -> Result<()> {
        for (i, x) in entries.iter().enumerate() {
            for y in &entries[i + 1..] {
                self.sorter.push(PairRecord {
                    a: x.idx,
                    b: y.idx,
                    bytes: x.occ.min(y.occ) as u64 * len as u64,
                })?;
            }
        }
        self.emitted += (entries.len() * (entries.len() - 1) / 2) as u64;
        Ok(())
    }
}

impl Spiller {
    fn new(capacity: u64, tmpdir: Option<PathBuf>) -> Spiller {
        let mut opts = SortOptions::with_memory(capacity / 2);
        opts.tmpdir = tmpdir;
        Spiller {
            sorter: ExternalSorter::new(opts),
            emitted: 0,
        }
    }

    /// Sort everything and call `f(key, bytes, shared)` once per pair, in
    /// key order.
    fn finish(self, mut f: impl FnMut(u64, u64, u32)) -> Result<()> {
        let mut agg = Aggregate::default();
        for r in self.sorter.finish()? {
            let r = r?;
            agg.add(((r.a as u64) << 32) | r.b as u64, r.bytes, &mut f);
        }
        agg.end(&mut f);
        Ok(())
    }
}

/// Sums consecutive records of one key.
#[derive(Default)]
struct Aggregate {
    key: u64,
    bytes: u64,
    shared: u32,
}

impl Aggregate {
    #[inline]
    fn add(&mut self, k: u64, v: u64, f: &mut impl FnMut(u64, u64, u32)) {
        if self.shared > 0 && k != self.key {
            f(self.key, self.bytes, self.shared);
            self.shared = 0;
            self.bytes = 0;
        }
        self.key = k;
        self.bytes += v;
        self.shared += 1;
    }

    fn end(&mut self, f: &mut impl FnMut(u64, u64, u32)) {
        if self.shared > 0 {
            f(self.key, self.bytes, self.shared);
            self.shared = 0;
        }
    }
}

// ---------------------------------------------------------------------------
// Reading bins
// ---------------------------------------------------------------------------

/// The file table of one bin (id order), with the representative of each
/// identical-content set.
#[derive(Default)]
struct BinFiles {
    ids: Vec<u32>,
    sizes: Vec<u64>,
    /// true for the smallest id of each content (the one analysed).
    is_rep: Vec<bool>,
    by_content: HashMap<u128, u32>,
    /// Feature methods: each file's distinct features (F line field 6).
    features: Vec<u32>,
    /// Feature methods: how shared features become a similarity.
    spec: Option<MethodSpec>,
}

impl BinFiles {
    /// The pair of local files `x < y` with `common` bytes and `shared`
    /// chunks in common, if it passes the thresholds. For feature methods
    /// `common` becomes the estimated bytes in common of the method's
    /// similarity estimate ([`crate::chunking::features::common_bytes`]); a pair
    /// whose estimate is 0 (megashingles: fewer than two supershingles;
    /// b-bit: at or below chance) is not a candidate.
    #[inline]
    fn pair(&self, x: usize, y: usize, common: u64, shared: u32, th: &Thresholds) -> Option<Pair> {
        let (sa, sb) = (self.sizes[x], self.sizes[y]);
        let common = match &self.spec {
            None => common,
            Some(spec) => {
                let (fa, fb) = (self.features[x] as u64, self.features[y] as u64);
                let r = features::estimate(spec, shared as u64, fa, fb);
                if r <= 0.0 {
                    return None;
                }
                features::common_bytes(r, sa, sb)
            }
        };
        th.keep(common, sa, sb).then(|| Pair {
            a: self.ids[x],
            b: self.ids[y],
            size_a: sa,
            size_b: sb,
            common,
            shared,
        })
    }
}

/// What the `#bin` line announced.
#[derive(Default)]
struct BinHeader {
    number: u64,
    files: u64,
    records: u64,
    memory: u64,
    oversized: bool,
    line: u64,
}

fn parse_bin_line(raw: &[u8]) -> std::result::Result<BinHeader, String> {
    const EXPECTED: &str = "expected '#bin\\t<n>\\tfiles=F\\trecords=R\\tmemory=M\\toversized=0|1'";
    let [_, n, files, recs, mem, over] = formats::split_fields::<6>(raw).ok_or(EXPECTED)?;
    let val = |f: &[u8], key: &str| -> std::result::Result<u64, String> {
        f.strip_prefix(key.as_bytes())
            .and_then(|v| v.strip_prefix(b"="))
            .and_then(formats::parse_u64)
            .ok_or_else(|| EXPECTED.to_string())
    };
    let oversized = match over {
        b"oversized=0" => false,
        b"oversized=1" => true,
        _ => return Err(EXPECTED.into()),
    };
    Ok(BinHeader {
        number: formats::parse_u64(n).ok_or(EXPECTED)?,
        files: val(files, "files")?,
        records: val(recs, "records")?,
        memory: val(mem, "memory")?,
        oversized,
        line: 0,
    })
}

enum Route {
    Memory(Graph),
    Spill(Spiller),
}

/// The bin being read.
struct Bin {
    head: BinHeader,
    files: BinFiles,
    path: Option<Route>,
    grouper: Grouper,
    records: u64,
    prev: Option<(u128, u32)>,
}

impl Bin {
    /// Finish reading: run step 4 (or the out-of-core merge) and add the
    /// pairs to `out`.
    fn finish(
        mut self,
        opts: &Options,
        a: &mut Analysis,
        name: &str,
        ln: u64,
        progress: &Progress,
    ) -> Result<()> {
        if self.files.ids.len() as u64 != self.head.files {
            return Err(crate::Error::input(name, ln, format!(
                "bin {} (line {}) announced files={} but has {} F lines: the file is truncated or was edited",
                self.head.number,
                self.head.line,
                self.head.files,
                self.files.ids.len()
            )));
        }
        if self.records != self.head.records {
            return Err(crate::Error::input(name, ln, format!(
                "bin {} (line {}) announced records={} but has {}: the file is truncated or was edited",
                self.head.number, self.head.line, self.head.records, self.records
            )));
        }
        a.bins += 1;
        a.files += self.head.files;
        a.records += self.records;
        a.collapsed += self.files.is_rep.iter().filter(|r| !**r).count() as u64;
        let n = self.files.ids.len();
        if self.path.is_none() {
            // A bin without records: still counted on the path it would take.
            self.start(opts);
        }
        match self.path.take() {
            None => {}
            Some(Route::Memory(mut g)) => {
                self.grouper.flush(&mut g)?;
                g.finish(n);
                g.all_pairs(&self.files, &opts.thresholds, opts.threads, &mut a.pairs);
            }
            Some(Route::Spill(mut s)) => {
                self.grouper.flush(&mut s)?;
                a.spilled_bins += 1;
                a.spilled_records += s.emitted;
                let (files, th, pairs) = (&self.files, &opts.thresholds, &mut a.pairs);
                s.finish(|key, common, shared| {
                    let (x, y) = ((key >> 32) as usize, (key & 0xffff_ffff) as usize);
                    pairs.extend(files.pair(x, y, common, shared, th));
                })?;
            }
        }
        progress.set_count(a.bins);
        Ok(())
    }

    /// Choose the path once the F lines are read (at the first record).
    fn start(&mut self, opts: &Options) {
        let spill = opts.force_spill
            || self.head.oversized
            || self.head.memory > opts.capacity
            || self.head.records >= u32::MAX as u64;
        self.path = Some(if spill {
            Route::Spill(Spiller::new(opts.capacity, opts.tmpdir.clone()))
        } else {
            // Reserve what the #bin line announced, but never more than the
            // capacity allows: a wrong count must not allocate terabytes.
            Route::Memory(Graph::with_capacity(
                self.files.ids.len(),
                self.head.records.min(opts.capacity / BYTES_PER_RECORD) as usize,
            ))
        });
    }
}

/// Analyse a bins stream (`fsim-binpack`'s output). Nothing is written: the
/// caller writes [`Analysis::pairs`] only when this returned Ok, so a bad
/// input never leaves an output.
pub fn analyze_reader<R: BufRead>(input: R, name: &str, opts: &Options) -> Result<Analysis> {
    analyze_with_progress(input, name, opts, &Progress::none())
}

/// [`analyze_reader`], counting finished bins on `progress` (whose bytes
/// follow the input when it wraps `input`).
pub fn analyze_with_progress<R: BufRead>(
    input: R,
    name: &str,
    opts: &Options,
    progress: &Progress,
) -> Result<Analysis> {
    let mut r = LineReader::new(input, name);
    let mut check = InputCheck::new(Kind::Bins, "records");
    let mut seen = Digest::default();
    let mut a = Analysis::default();
    let mut cur: Option<Bin> = None;
    let mut announced_bins: Option<u64> = None;
    let mut spec: Option<MethodSpec> = None;
    let mut trailer_seen = false;
    let name = r.name().to_string();
    loop {
        let ln = r.line_number() + 1;
        let raw = match r.next_raw()? {
            None => break,
            Some(raw) => raw,
        };
        let first = raw.first().copied();
        if first == Some(b'#') {
            let line = classify_line(raw).map_err(|m| crate::Error::input(&name, ln, m))?;
            match line {
                Line::Header(kind, p) => {
                    if check.params.is_some() {
                        return Err(crate::Error::input(
                            &name,
                            ln,
                            "a second header: fsim-analyze reads one bins file",
                        ));
                    }
                    let bins = p.get_u64("bins");
                    if p.get("method").is_some_and(features::is_feature_method) {
                        spec = Some(
                            MethodSpec::from_params(&p)
                                .map_err(|m| crate::Error::input(&name, ln, m))?,
                        );
                    }
                    check
                        .header(kind, p)
                        .map_err(|m| crate::Error::input(&name, ln, m))?;
                    progress.set_count_total(bins.unwrap_or(0));
                    announced_bins = Some(bins.ok_or_else(|| {
                        crate::Error::input(
                            &name,
                            ln,
                            "header without bins=: expected a bins file written by fsim-binpack",
                        )
                    })?);
                }
                Line::Trailer(kind, p) => {
                    if let Some(b) = cur.take() {
                        b.finish(opts, &mut a, &name, ln, progress)?;
                    }
                    check
                        .trailer(kind, &p)
                        .map_err(|m| crate::Error::input(&name, ln, m))?;
                    let files = p
                        .get_u64("files")
                        .ok_or_else(|| crate::Error::input(&name, ln, "trailer without files="))?;
                    if files != a.files {
                        return Err(crate::Error::input(
                            &name,
                            ln,
                            format!(
                                "{} F lines read but the trailer announced files={files}",
                                a.files
                            ),
                        ));
                    }
                    trailer_seen = true;
                }
                Line::Comment(c) if c.starts_with(b"#bin\t") => {
                    if check.params.is_none() {
                        return Err(crate::Error::input(
                            &name,
                            ln,
                            "'#bin' line before the '#fsim bins v1' header",
                        ));
                    }
                    if trailer_seen {
                        return Err(crate::Error::input(
                            &name,
                            ln,
                            "'#bin' line after the trailer",
                        ));
                    }
                    let mut head =
                        parse_bin_line(c).map_err(|m| crate::Error::input(&name, ln, m))?;
                    head.line = r.line_number();
                    if let Some(b) = cur.take() {
                        b.finish(opts, &mut a, &name, ln, progress)?;
                    }
                    cur = Some(Bin {
                        head,
                        files: BinFiles {
                            spec,
                            ..BinFiles::default()
                        },
                        path: None,
                        grouper: Grouper::new(),
                        records: 0,
                        prev: None,
                    });
                }
                Line::Comment(_) | Line::Data(_) => {}
            }
            continue;
        }
        if trailer_seen {
            return Err(crate::Error::input(&name, ln, "data after the trailer"));
        }
        let Some(bin) = cur.as_mut() else {
            return Err(crate::Error::input(
                &name,
                ln,
                "data before the first '#bin' line: expected a bins file written by fsim-binpack",
            ));
        };
        if first == Some(b'F') {
            if bin.path.is_some() {
                return Err(crate::Error::input(
                    &name,
                    ln,
                    "F line after the bin's chunk records",
                ));
            }
            let f = FileLine::parse(raw).map_err(|m| crate::Error::input(&name, ln, m))?;
            if bin.files.ids.last().is_some_and(|&p| p >= f.id) {
                return Err(crate::Error::input(
                    &name,
                    ln,
                    "F lines of a bin are not in increasing id order",
                ));
            }
            let local = bin.files.ids.len() as u32;
            let rep = *bin.files.by_content.entry(f.content).or_insert(local) == local;
            bin.files.ids.push(f.id);
            bin.files.sizes.push(f.size);
            bin.files.is_rep.push(rep);
            if bin.files.spec.is_some() {
                let n = f.features.ok_or_else(|| {
                    crate::Error::input(
                        &name,
                        ln,
                        "F line without its feature count (field 6): a feature-method bin file needs the counts fsim-partition writes",
                    )
                })?;
                bin.files.features.push(n);
            }
            continue;
        }
        let rec = parse_record(raw).map_err(|m| crate::Error::input(&name, ln, m))?;
        seen.add(&rec);
        bin.records += 1;
        if bin.prev.is_some_and(|p| (rec.hash, rec.file) < p) {
            return Err(crate::Error::input(
                &name,
                ln,
                "chunk records of a bin are not sorted by (hash, file id)",
            ));
        }
        bin.prev = Some((rec.hash, rec.file));
        if bin.path.is_none() {
            bin.start(opts);
        }
        let local = match bin.files.ids.binary_search(&rec.file) {
            Ok(l) => l,
            Err(_) => {
                return Err(crate::Error::input(
                    &name,
                    ln,
                    format!(
                        "record of file {} which has no F line in this bin",
                        formats::id_string(rec.file)
                    ),
                ))
            }
        };
        let local = bin.files.is_rep[local].then_some(local as u32);
        let res = match bin.path.as_mut() {
            Some(Route::Memory(g)) => bin.grouper.feed(&rec, local, g)?,
            Some(Route::Spill(s)) => bin.grouper.feed(&rec, local, s)?,
            None => Ok(()),
        };
        res.map_err(|m| crate::Error::input(&name, ln, m))?;
    }
    if let Some(b) = cur.take() {
        // No trailer: still check the bin's counts for a precise message.
        b.finish(opts, &mut a, r.name(), r.line_number(), progress)?;
    }
    check.finish(&seen, r.name(), r.line_number())?;
    if let Some(b) = announced_bins {
        if b != a.bins {
            return Err(r.error(format!(
                "{} bins read but the header announced bins={b}",
                a.bins
            )));
        }
    }
    a.params = check
        .params
        .as_ref()
        .map(formats::stage_params)
        .unwrap_or_default();
    // Bins hold disjoint files but components interleave ids across bins.
    a.pairs.sort_unstable();
    Ok(a)
}

/// Write a pairs file (header, pair lines, trailer).
pub fn write_pairs(a: &Analysis, th: &Thresholds, out: &mut impl Write, name: &str) -> Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    let params = a
        .params
        .clone()
        .with("min-bytes", th.min_bytes)
        .with("min-percent", th.min_percent)
        .with("percent-of", th.percent_of.as_str());
    let params = match a
        .params
        .get("method")
        .map(str::parse::<features::FeatureMethod>)
    {
        Some(Ok(m)) => params.with("estimate", m.estimator().as_str()),
        _ => params,
    };
    formats::write_header(Kind::Pairs, &params, &mut buf);
    let mut sum = 0u128;
    for p in &a.pairs {
        p.write(&mut buf);
        sum = sum.wrapping_add(p.mix());
        if buf.len() >= 1 << 16 {
            out.write_all(&buf).ctx(|| format!("writing {name}"))?;
            buf.clear();
        }
    }
    let t = Params::new()
        .with("pairs", a.pairs.len())
        .with("digest", formats::hex128(sum));
    formats::write_trailer(Kind::Pairs, &t, &mut buf);
    out.write_all(&buf).ctx(|| format!("writing {name}"))?;
    Ok(())
}

/// The whole stage: read, analyse, write atomically, summarise on stderr.
pub fn run(cfg: &Config) -> Result<()> {
    let t0 = Instant::now();
    let (input, name) = open_input(&cfg.input)?;
    // Progress: bytes of the bins file read (a bin is analysed as soon as
    // it is read, so this tracks the work; ETA when it is a file) and bins
    // done of those the header announces.
    let progress = Progress::bytes_and(
        "fsim-analyze",
        crate::io::progress::inputs_size(&[cfg.input.as_path()]),
        "bins",
        cfg.quiet,
    );
    let a = analyze_with_progress(progress.reader(input), &name, &cfg.options, &progress)?;
    progress.finish();
    let mut out = Output::create(cfg.output.as_deref())?;
    let oname = out.name().to_string();
    write_pairs(&a, &cfg.options.thresholds, &mut out, &oname)?;
    out.finish()?;
    if !cfg.quiet {
        crate::cli::stderr_line(format_args!(
            "fsim-analyze: {} bins ({} out of core), {} files, {} records, {} identical files collapsed, {} pairs in {:.2} s",
            a.bins,
            a.spilled_bins,
            a.files,
            a.records,
            a.collapsed,
            a.pairs.len(),
            t0.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A file of a test bin: id, size, content hash, chunks as (hash, len)
    /// with repeats for chunks occurring more than once.
    #[derive(Debug, Clone)]
    struct TFile {
        id: u32,
        size: u64,
        content: u128,
        chunks: Vec<(u128, u32)>,
    }

    /// A bins file with these bins (each a list of files, in any order).
    fn bins_text(bins: &[Vec<TFile>], oversized: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let p = Params::new()
            .with("method", "tttd")
            .with("avg", 1000)
            .with("bins", bins.len())
            .with("capacity", 1000);
        formats::write_header(Kind::Bins, &p, &mut out);
        let mut d = Digest::default();
        let mut nfiles = 0;
        for (i, bin) in bins.iter().enumerate() {
            let mut files = bin.clone();
            files.sort_by_key(|f| f.id);
            let mut recs: Vec<ChunkRecord> = files
                .iter()
                .flat_map(|f| {
                    f.chunks.iter().map(|&(hash, len)| ChunkRecord {
                        hash,
                        file: f.id,
                        len,
                    })
                })
                .collect();
            recs.sort_by_key(|r| (r.hash, r.file, r.len));
            out.extend_from_slice(
                format!(
                    "#bin\t{}\tfiles={}\trecords={}\tmemory=100\toversized={}\n",
                    i + 1,
                    files.len(),
                    recs.len(),
                    oversized as u8
                )
                .as_bytes(),
            );
            for f in &files {
                FileLine {
                    id: f.id,
                    component: files[0].id,
                    size: f.size,
                    content: f.content,
                    features: None,
                }
                .write(&mut out);
            }
            for r in &recs {
                r.write(&mut out);
                d.add(r);
            }
            nfiles += files.len();
        }
        let t = formats::digest_params(&d, "records")
            .with("bins", bins.len())
            .with("files", nfiles);
        formats::write_trailer(Kind::Bins, &t, &mut out);
        out
    }

    /// Trivially correct model: hash maps, every pair of representatives.
    fn model(bins: &[Vec<TFile>], th: &Thresholds) -> Vec<Pair> {
        let mut pairs = Vec::new();
        for bin in bins {
            let mut files = bin.clone();
            files.sort_by_key(|f| f.id);
            let mut seen = std::collections::HashSet::new();
            let reps: Vec<&TFile> = files.iter().filter(|f| seen.insert(f.content)).collect();
            let maps: Vec<HashMap<u128, (u64, u64)>> = reps
                .iter()
                .map(|f| {
                    let mut m = HashMap::new();
                    for &(h, l) in &f.chunks {
                        m.entry(h).or_insert((0, l as u64)).0 += 1;
                    }
                    m
                })
                .collect();
            for i in 0..reps.len() {
                for j in i + 1..reps.len() {
                    let (mut common, mut shared) = (0u64, 0u32);
                    for (h, &(oa, len)) in &maps[i] {
                        if let Some(&(ob, _)) = maps[j].get(h) {
                            common += oa.min(ob) * len;
                            shared += 1;
                        }
                    }
                    let (a, b) = (reps[i], reps[j]);
                    if shared > 0 && th.keep(common, a.size, b.size) {
                        pairs.push(Pair {
                            a: a.id,
                            b: b.id,
                            size_a: a.size,
                            size_b: b.size,
                            common,
                            shared,
                        });
                    }
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    fn run_on(text: &[u8], th: Thresholds, threads: usize, force_spill: bool) -> Analysis {
        let opts = Options {
            thresholds: th,
            capacity: 1 << 30,
            threads,
            tmpdir: None,
            force_spill,
        };
        analyze_reader(text, "test.bins", &opts).unwrap()
    }

    fn f(id: u32, size: u64, chunks: &[(u128, u32)]) -> TFile {
        TFile {
            id,
            size,
            content: 0x1000 + id as u128,
            chunks: chunks.to_vec(),
        }
    }

    const ALL: Thresholds = Thresholds {
        min_bytes: 0,
        min_percent: 0.0,
        percent_of: PercentOf::Smaller,
    };

    #[test]
    fn chunk_twice_in_one_file_once_in_other_counts_once() {
        let bins = vec![vec![
            f(1, 1000, &[(7, 100), (7, 100), (8, 50)]),
            f(2, 500, &[(7, 100), (9, 30)]),
        ]];
        let a = run_on(&bins_text(&bins, false), ALL, 1, false);
        assert_eq!(
            a.pairs,
            vec![Pair {
                a: 1,
                b: 2,
                size_a: 1000,
                size_b: 500,
                common: 100,
                shared: 1
            }]
        );
    }

    #[test]
    fn chunk_twice_in_both_counts_twice() {
        let bins = vec![vec![
            f(1, 1000, &[(7, 100), (7, 100), (8, 50)]),
            f(2, 500, &[(7, 100), (8, 50), (7, 100)]),
        ]];
        let a = run_on(&bins_text(&bins, false), ALL, 1, false);
        assert_eq!(
            a.pairs,
            vec![Pair {
                a: 1,
                b: 2,
                size_a: 1000,
                size_b: 500,
                common: 250,
                shared: 2
            }]
        );
        let mut out = Vec::new();
        write_pairs(&a, &ALL, &mut out, "test").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("#fsim pairs v1\tmethod=tttd\tavg=1000\tmin-bytes=0\tmin-percent=0\tpercent-of=smaller\n"));
        assert!(text.contains("\n0000000001\t0000000002\t1000\t500\t250\t2\n"));
        let d = formats::mix128((1u128 << 96) | (2u128 << 64) | 250);
        assert!(text.ends_with(&format!(
            "#end pairs\tpairs=1\tdigest={}\n",
            formats::hex128(d)
        )));
    }

    #[test]
    fn percent_of_smaller_vs_larger() {
        // 100 bytes in common: 50% of the smaller (200), 10% of the larger (1000).
        let bins = vec![vec![f(3, 200, &[(1, 100)]), f(4, 1000, &[(1, 100)])]];
        let text = bins_text(&bins, false);
        let th = |p, of| Thresholds {
            min_bytes: 0,
            min_percent: p,
            percent_of: of,
        };
        assert_eq!(
            run_on(&text, th(50.0, PercentOf::Smaller), 1, false)
                .pairs
                .len(),
            1
        );
        assert_eq!(
            run_on(&text, th(50.1, PercentOf::Smaller), 1, false)
                .pairs
                .len(),
            0
        );
        assert_eq!(
            run_on(&text, th(10.0, PercentOf::Larger), 1, false)
                .pairs
                .len(),
            1
        );
        assert_eq!(
            run_on(&text, th(11.0, PercentOf::Larger), 1, false)
                .pairs
                .len(),
            0
        );
        let mb = |n| Thresholds {
            min_bytes: n,
            ..ALL
        };
        assert_eq!(run_on(&text, mb(100), 1, false).pairs.len(), 1);
        assert_eq!(run_on(&text, mb(101), 1, false).pairs.len(), 0);
    }

    #[test]
    fn identical_files_collapse_to_smallest_id() {
        let mut a = f(5, 300, &[(1, 100), (2, 100), (3, 100)]);
        let mut b = f(2, 300, &[(1, 100), (2, 100), (3, 100)]);
        let mut c = f(9, 300, &[(1, 100), (2, 100), (3, 100)]);
        a.content = 77;
        b.content = 77;
        c.content = 77;
        let d = f(7, 250, &[(1, 100), (3, 100), (4, 50)]);
        let bins = vec![vec![a, b, c, d]];
        for spill in [false, true] {
            let r = run_on(&bins_text(&bins, false), ALL, 1, spill);
            assert_eq!(r.collapsed, 2);
            assert_eq!(
                r.pairs,
                vec![Pair {
                    a: 2,
                    b: 7,
                    size_a: 300,
                    size_b: 250,
                    common: 200,
                    shared: 2
                }]
            );
        }
    }

    #[test]
    fn pairs_sorted_across_bins() {
        let bins = vec![
            vec![f(1, 100, &[(1, 60)]), f(8, 100, &[(1, 60)])],
            vec![
                f(3, 100, &[(2, 60)]),
                f(4, 100, &[(2, 60)]),
                f(0, 100, &[(2, 60)]),
            ],
        ];
        let r = run_on(&bins_text(&bins, false), ALL, 1, false);
        let ab: Vec<(u32, u32)> = r.pairs.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(ab, vec![(0, 3), (0, 4), (1, 8), (3, 4)]);
    }

    #[test]
    fn bad_inputs_name_the_line() {
        let bins = vec![vec![f(1, 100, &[(1, 60)]), f(8, 100, &[(1, 60)])]];
        let text = bins_text(&bins, false);
        let opts = Options::default();
        // Truncated: drop the trailer.
        let trailer_at = text[..text.len() - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .unwrap()
            + 1;
        let cut = &text[..trailer_at];
        let e = analyze_reader(cut, "x.bins", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.bins:6: no '#end bins' trailer"), "{e}");
        // Unsorted records.
        let s = String::from_utf8(text.clone()).unwrap().replace(
            "00000000000000000000000000000001\t0000000008",
            "00000000000000000000000000000000\t0000000008",
        );
        let e = analyze_reader(s.as_bytes(), "x.bins", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("x.bins:6: chunk records of a bin are not sorted"),
            "{e}"
        );
        // Same hash, two lengths.
        let s = String::from_utf8(text)
            .unwrap()
            .replace("0000000008\t60", "0000000008\t61");
        let e = analyze_reader(s.as_bytes(), "x.bins", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x.bins:6: chunk 00000000000000000000000000000001 has two lengths"),
            "{e}"
        );
    }

    fn arb_bins() -> impl Strategy<Value = (Vec<Vec<TFile>>, Thresholds)> {
        let file = (1u64..400, 0u8..6, proptest::collection::vec(0u8..10, 0..10));
        (
            proptest::collection::vec(proptest::collection::vec(file, 2..9), 1..4),
            0u64..120,
            0u32..60,
            any::<bool>(),
        )
            .prop_map(|(bins, min_bytes, pct, larger)| {
                let mut id = 0u32;
                let bins = bins
                    .into_iter()
                    .enumerate()
                    .map(|(bi, files)| {
                        files
                            .into_iter()
                            .map(|(size, content, chunks)| {
                                id += 1;
                                // Interleave ids across bins; contents may repeat (copies).
                                let fid = id * 3 + bi as u32;
                                let content = if content < 2 {
                                    content as u128
                                } else {
                                    1000 + fid as u128
                                };
                                TFile {
                                    id: fid,
                                    size,
                                    content,
                                    chunks: chunks
                                        .iter()
                                        .map(|&c| (c as u128 * 0x1234_5678_9abc, 10 + c as u32 * 7))
                                        .collect(),
                                }
                            })
                            .collect()
                    })
                    .collect();
                let of = if larger {
                    PercentOf::Larger
                } else {
                    PercentOf::Smaller
                };
                (
                    bins,
                    Thresholds {
                        min_bytes,
                        min_percent: pct as f64,
                        percent_of: of,
                    },
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn memory_equals_out_of_core_equals_model((bins, th) in arb_bins()) {
            let text = bins_text(&bins, false);
            let want = model(&bins, &th);
            let mem = run_on(&text, th, 1, false);
            prop_assert_eq!(&mem.pairs, &want);
            let spill = run_on(&text, th, 1, true);
            prop_assert_eq!(&spill.pairs, &want);
            // Oversized bins marked by fsim-binpack take the out-of-core path too.
            let over = run_on(&bins_text(&bins, true), th, 2, false);
            prop_assert_eq!(over.spilled_bins, bins.len() as u64);
            prop_assert_eq!(&over.pairs, &want);
        }
    }

    /// A bin big enough for several threads and for several spilled runs
    /// and merge passes (tiny capacity).
    #[test]
    fn threads_and_spill_runs_give_identical_output() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let files: Vec<TFile> = (0..3000u32)
            .map(|i| {
                let chunks = (0..12)
                    .map(|_| (next(9000) as u128, 50))
                    .collect::<Vec<_>>();
                TFile {
                    id: i,
                    size: 400 + next(400),
                    content: if i % 50 == 7 { 5 } else { 100 + i as u128 },
                    chunks,
                }
            })
            .collect();
        let bins = vec![files];
        let text = bins_text(&bins, false);
        let th = Thresholds {
            min_bytes: 0,
            min_percent: 5.0,
            percent_of: PercentOf::Smaller,
        };
        let one = run_on(&text, th, 1, false);
        assert!(one.pairs.len() > 1000, "{}", one.pairs.len());
        assert_eq!(one.pairs, model(&bins, &th));
        assert_eq!(run_on(&text, th, 4, false).pairs, one.pairs);
        let opts = Options {
            thresholds: th,
            capacity: 16 * 1024,
            threads: 1,
            tmpdir: None,
            force_spill: true,
        };
        let spill = analyze_reader(&text[..], "t", &opts).unwrap();
        assert_eq!(spill.pairs, one.pairs);
        // 16 KiB budget: 512-record runs, so more runs than the merge fan-in.
        assert!(
            spill.spilled_records > 512 * crate::stages::sort::DEFAULT_FAN_IN as u64,
            "{}",
            spill.spilled_records
        );
    }
}
