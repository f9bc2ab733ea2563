//! fsim-binpack: the paper's section 2.5 steps 5-6. Packs the connected
//! components written by fsim-partition into bins that each fit in
//! fsim-analyze's memory (`--capacity`), then routes every kept chunk record
//! to its bin, so that each bin can be analysed on its own.
//!
//! The partition file lists the records before the component table, so the
//! records are first spooled (24 bytes each, binary) to a private temp file
//! while the records and chunks of each file are counted; then the `F` lines
//! give the components. Each component's memory is estimated with
//! [`crate::formats::bins::estimate_memory`] (the real data structures of the
//! analysis), and components are packed with first-fit decreasing. A
//! component larger than the capacity gets a bin of its own marked
//! `oversized=1`, which fsim-analyze processes out of core: never a failure.
//!
//! A partition given as a regular file that is likely to fit one bin (the
//! usual case) is not spooled: pass 1 notes where its records are, and the
//! one bin's records are copied from it as they are ([`Span`]); a file that
//! needs more bins after all is spooled from it then.
//!
//! Memory: ~50 bytes per file (counts and the file table), independent of
//! the number of records. Disk: twice the records in binary (spool plus the
//! per-bin files of one routing pass), in `--tmpdir`; nothing for one bin
//! copied from the file.

use crate::error::{Context, Error, Result};
use crate::formats::bins::{estimate_memory, parse_record, ComponentLine, FileLine};
use crate::formats::headers::{BinsHeader, BinsTrailer, PartitionHeader, PartitionTrailer, Pruned};
use crate::formats::open_input;
use crate::formats::{
    self, classify_line, ChunkRecord, Digest, InputCheck, Kind, Line, LineReader, HASH_WIDTH,
    ID_WIDTH,
};
use crate::io::Output;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// At most this many per-bin temp files are open at once; with more bins
/// the spool is read once per group of this many bins.
pub const MAX_OPEN_BINS: usize = 256;

/// Size of one spooled record: hash (16), file id (4), length (4).
const SPOOL_RECORD: usize = 24;

/// The validated configuration of fsim-binpack.
#[derive(Debug, Clone)]
pub struct Config {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub capacity: u64,
    pub plan: Option<PathBuf>,
    pub tmpdir: Option<PathBuf>,
    pub quiet: bool,
    /// The input is a component table (see [`run_components`]), not a
    /// partition file.
    pub components: bool,
    /// The input is a slice of a bins file, to be made a bins file under
    /// the header of this plan or bins file (see [`run_seal`]).
    pub seal: Option<PathBuf>,
}

/// A connected component with what the analysis of it will need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component {
    /// Smallest file id of the component.
    pub id: u32,
    pub files: u64,
    pub records: u64,
    pub chunks: u64,
    /// [`estimate_memory`] of the above.
    pub memory: u64,
}

/// One bin of the plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bin {
    /// Indices into the component slice given to [`pack`].
    pub components: Vec<usize>,
    pub files: u64,
    pub records: u64,
    pub memory: u64,
    pub oversized: bool,
}

/// First-fit decreasing: components by (memory desc, id asc), each into the
/// first bin (in opening order) with room left; a component above the
/// capacity gets a bin of its own, marked oversized. Deterministic, and
/// O(n log n) thanks to a max-tree over the bins' free space.
pub fn pack(comps: &[Component], capacity: u64) -> Vec<Bin> {
    let mut order: Vec<usize> = (0..comps.len()).collect();
    order.sort_unstable_by_key(|&i| (std::cmp::Reverse(comps[i].memory), comps[i].id));
    let leaves = comps.len().max(1).next_power_of_two();
    // tree[leaves + i] = free space of bin i (0 for bins not yet opened and
    // for oversized bins); inner nodes hold the max of their children.
    let mut tree = vec![0u64; 2 * leaves];
    let set = |tree: &mut Vec<u64>, i: usize, v: u64| {
        let mut n = leaves + i;
        tree[n] = v;
        while n > 1 {
            n /= 2;
            tree[n] = tree[2 * n].max(tree[2 * n + 1]);
        }
    };
    let mut bins: Vec<Bin> = Vec::new();
    for i in order {
        let c = &comps[i];
        let need = c.memory.max(1);
        let slot = if need > capacity || tree[1] < need {
            None
        } else {
            let mut n = 1;
            while n < leaves {
                n = if tree[2 * n] >= need {
                    2 * n
                } else {
                    2 * n + 1
                };
            }
            Some(n - leaves)
        };
        let b = match slot {
            Some(b) => b,
            None => {
                bins.push(Bin {
                    oversized: need > capacity,
                    ..Bin::default()
                });
                bins.len() - 1
            }
        };
        let bin = &mut bins[b];
        bin.components.push(i);
        bin.files += c.files;
        bin.records += c.records;
        bin.memory += c.memory;
        let free = if bin.oversized {
            0
        } else {
            capacity - bin.memory
        };
        set(&mut tree, b, free);
    }
    bins
}

/// `1.9 GiB`-style sizes for people.
pub fn human_size(n: u64) -> String {
    match crate::cli::byte_units(n) {
        (_, "B") => format!("{n} B"),
        (v, unit) if v.fract() == 0.0 => format!("{v:.0} {unit}"),
        (v, unit) => format!("{v:.1} {unit}"),
    }
}

/// The plan as a table for people (stderr).
pub fn plan_table(bins: &[Bin], capacity: u64) -> String {
    let mut s = format!(
        "fsim-binpack: {} bins of at most {}\n",
        bins.len(),
        human_size(capacity)
    );
    s += &format!(
        "{:>8} {:>10} {:>10} {:>12} {:>12} {:>9}\n",
        "bin", "components", "files", "records", "memory", "oversized"
    );
    let (mut c, mut f, mut r, mut m, mut o) = (0usize, 0u64, 0u64, 0u64, 0usize);
    for (i, b) in bins.iter().enumerate() {
        s += &format!(
            "{:>8} {:>10} {:>10} {:>12} {:>12} {:>9}\n",
            i + 1,
            b.components.len(),
            b.files,
            b.records,
            human_size(b.memory),
            if b.oversized { "yes" } else { "" }
        );
        c += b.components.len();
        f += b.files;
        r += b.records;
        m += b.memory;
        o += b.oversized as usize;
    }
    s += &format!(
        "{:>8} {:>10} {:>10} {:>12} {:>12} {:>9}\n",
        "total",
        c,
        f,
        r,
        human_size(m),
        o
    );
    s
}

/// The plan as TSV (docs/formats.md, "plan").
pub fn plan_tsv(bins: &[Bin]) -> Vec<u8> {
    let mut s = String::from("bin\tcomponents\tfiles\trecords\tmemory\toversized\n");
    for (i, b) in bins.iter().enumerate() {
        s += &format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            i + 1,
            b.components.len(),
            b.files,
            b.records,
            b.memory,
            b.oversized as u8
        );
    }
    s.into_bytes()
}

#[inline]
fn encode(r: &ChunkRecord) -> [u8; SPOOL_RECORD] {
    let mut b = [0u8; SPOOL_RECORD];
    b[..16].copy_from_slice(&r.hash.to_le_bytes());
    b[16..20].copy_from_slice(&r.file.to_le_bytes());
    b[20..].copy_from_slice(&r.len.to_le_bytes());
    b
}

#[inline]
fn decode(b: &[u8; SPOOL_RECORD]) -> ChunkRecord {
    let mut h = [0u8; 16];
    h.copy_from_slice(&b[..16]);
    let mut f = [0u8; 4];
    f.copy_from_slice(&b[16..20]);
    let mut l = [0u8; 4];
    l.copy_from_slice(&b[20..]);
    ChunkRecord {
        hash: u128::from_le_bytes(h),
        file: u32::from_le_bytes(f),
        len: u32::from_le_bytes(l),
    }
}

/// Grow a per-file-id vector so that `id` is an index.
#[inline]
fn slot(v: &mut Vec<u32>, id: u32) -> &mut u32 {
    let i = id as usize;
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

/// Warnings for the oversized bins, and the plan (table on stderr unless
/// quiet, TSV with `--plan`).
fn report_plan(cfg: &Config, comps: &[Component], bins: &[Bin]) -> Result<()> {
    for b in bins.iter().filter(|b| b.oversized) {
        let c = &comps[b.components[0]];
        crate::cli::stderr_line(format_args!(
            "fsim-binpack: warning: component of file {}: {} estimated > capacity {}: fsim-analyze will process it out of core",
            formats::id_string(c.id),
            human_size(c.memory),
            human_size(cfg.capacity)
        ));
    }
    if !cfg.quiet {
        crate::cli::stderr_line(plan_table(bins, cfg.capacity));
    }
    if let Some(p) = &cfg.plan {
        let mut o = Output::create(Some(p))?;
        o.write_all(&plan_tsv(bins))?;
        o.finish()?;
    }
    Ok(())
}

/// A bin's `#bin` line in the bins file (1-based number).
fn bin_line(number: usize, bin: &Bin) -> String {
    format!(
        "#bin\t{number}\tfiles={}\trecords={}\tmemory={}\toversized={}\n",
        bin.files, bin.records, bin.memory, bin.oversized as u8
    )
}

/// The bins file's header parameters: the partition's stage parameters,
/// what it pruned, the number of bins and the capacity.
fn bins_params(
    header: Option<&formats::Params>,
    pruned: Option<&Pruned>,
    bins: usize,
    capacity: u64,
) -> formats::Params {
    let packing = BinsHeader {
        bins: Some(bins as u64),
        capacity: Some(capacity),
        ..BinsHeader::default()
    };
    header
        .map(formats::stage_params)
        .unwrap_or_default()
        .merged(&pruned.map(Pruned::to_params).unwrap_or_default())
        .merged(&packing.packing_params())
}

/// The bins file's trailer: every record's count and digest, the bins and
/// the files.
fn bins_trailer(records: &Digest, bins: usize, files: u64) -> formats::Params {
    BinsTrailer {
        records: Some(records.count),
        digest: Some(records.sum),
        bins: Some(bins as u64),
        files,
    }
    .to_params()
}

/// The degree limit a partition file's header names (`limit=`), for
/// what fsim-binpack passes on of the pruning.
fn partition_limit(check: &InputCheck) -> std::result::Result<Option<u64>, String> {
    match &check.params {
        Some(p) => Ok(PartitionHeader::parse(p)?.limit),
        None => Ok(None),
    }
}

/// `--components`: the plan from per-component figures only, for a
/// distributed run (scripts/spark, docs/distributed.md) where the records
/// stay where they are. Input: the partition file's header line, one
/// `C<TAB>id<TAB>files<TAB>records<TAB>chunks` line per component (id: its
/// smallest file id, increasing; records and chunks as fsim-binpack counts
/// them from the partition's records: every kept record, and each kept
/// chunk once) and the partition file's trailer line. Output: the bins
/// file's header line, each bin's `#bin` line followed by `C<TAB>id` for
/// its components (increasing id), and the bins file's trailer: with the
/// bins' `F` lines (files in id order) and records (in partition order)
/// inserted after each `#bin` line, the bins file fsim-binpack writes from
/// the whole partition file. Memory: O(components).
pub fn run_components(cfg: &Config) -> Result<()> {
    let (input, name) = open_input(&cfg.input)?;
    let mut r = LineReader::new(input, name);
    let name = r.name().to_string();
    let mut check = InputCheck::new(Kind::Partition, "records");
    let mut comps: Vec<Component> = Vec::new();
    let mut trailer: Option<PartitionTrailer> = None;
    loop {
        let ln = r.line_number() + 1;
        let raw = match r.next_raw()? {
            None => break,
            Some(raw) => raw,
        };
        let err = |m: String| crate::Error::input(&name, ln, m);
        if raw.first() == Some(&b'#') {
            match classify_line(raw).map_err(|m| err(m.to_string()))? {
                Line::Header(kind, p) => {
                    if check.params.is_some() {
                        return Err(err("a second header".into()));
                    }
                    check.header(kind, p).map_err(err)?;
                }
                Line::Trailer(kind, p) => {
                    if trailer.is_some() {
                        return Err(err("a second trailer".into()));
                    }
                    check.trailer(kind, &p).map_err(err)?;
                    trailer = Some(PartitionTrailer::parse(&p).map_err(err)?);
                }
                Line::Comment(_) | Line::Data(_) => {}
            }
            continue;
        }
        if check.params.is_none() {
            return Err(err("no '#fsim partition v1' header first".into()));
        }
        if trailer.is_some() {
            return Err(err("data after the trailer".into()));
        }
        let mut c = parse_component(raw).map_err(|m| err(m.into()))?;
        if comps.last().is_some_and(|p| p.id >= c.id) {
            return Err(err("components are not in increasing id order".into()));
        }
        if c.files < 2 {
            return Err(err("a component of fewer than 2 files".into()));
        }
        c.memory = estimate_memory(c.files, c.records, c.chunks);
        comps.push(c);
    }
    let t =
        trailer.ok_or_else(|| r.error("no '#end partition' trailer: the table is truncated"))?;
    // The figures must add up to the partition's.
    let files: u64 = comps.iter().map(|c| c.files).sum();
    let records: u64 = comps.iter().map(|c| c.records).sum();
    for (what, got, want) in [
        ("records", records, t.records),
        ("files", files, t.files),
        ("components", comps.len() as u64, t.components),
    ] {
        if want != got {
            return Err(r.error(format!(
                "the components hold {got} {what}, the trailer announced {what}={want}"
            )));
        }
    }
    let bins = pack(&comps, cfg.capacity);
    report_plan(cfg, &comps, &bins)?;
    let limit = partition_limit(&check).map_err(|m| r.error(m))?;
    let pruned = Pruned::of_partition(limit, &t);
    let buf = components_plan(&comps, &bins, &check, pruned.as_ref(), files, cfg.capacity);
    let mut out = Output::create(cfg.output.as_deref())?;
    out.write_all(&buf)?;
    out.finish()?;
    Ok(())
}

/// A `C` line of `--components` ([`ComponentLine`]).
fn parse_component(raw: &[u8]) -> std::result::Result<Component, &'static str> {
    let c = ComponentLine::parse(raw)?;
    Ok(Component {
        id: c.id,
        files: c.files,
        records: c.records,
        chunks: c.chunks,
        memory: 0,
    })
}

/// The bins file of `--components`: header, each bin's `#bin` line and its
/// components' `C` lines, trailer (`pruned`: what the partition dropped).
fn components_plan(
    comps: &[Component],
    bins: &[Bin],
    check: &InputCheck,
    pruned: Option<&Pruned>,
    files: u64,
    capacity: u64,
) -> Vec<u8> {
    let mut buf = Vec::new();
    formats::write_header(
        Kind::Bins,
        &bins_params(check.params.as_ref(), pruned, bins.len(), capacity),
        &mut buf,
    );
    for (b, bin) in bins.iter().enumerate() {
        buf.extend_from_slice(bin_line(b + 1, bin).as_bytes());
        let mut ids: Vec<u32> = bin.components.iter().map(|&i| comps[i].id).collect();
        ids.sort_unstable();
        for id in ids {
            buf.extend_from_slice(b"C\t");
            formats::write_id(id, &mut buf);
            buf.push(b'\n');
        }
    }
    let seen = Digest {
        count: check.expected.count,
        sum: check.expected.sum,
    };
    let tp = bins_trailer(&seen, bins.len(), files);
    formats::write_trailer(Kind::Bins, &tp, &mut buf);
    buf
}

/// What pass 1 learns from the partition file besides the spooled
/// records: the counts per file, the `F` lines and their components, the
/// header and what fsim-partition dropped.
struct Pass1 {
    check: InputCheck,
    seen: Digest,
    recs_per_file: Vec<u32>,
    chunks_per_file: Vec<u32>,
    /// (hash, file) of the previous record: the records' order is checked.
    prev: Option<(u128, u32)>,
    files: Vec<FileLine>,
    /// Index into `comps` of each of `files`.
    comp_of_file: Vec<u32>,
    comps: Vec<Component>,
    /// Component id -> index into `comps`.
    comp_index: HashMap<u32, u32>,
    trailer_files: Option<u64>,
    /// What fsim-partition dropped, passed on to the report.
    pruned: Option<Pruned>,
    /// Where the records are in the input, and whether they can be copied
    /// from it as they are.
    span: Span,
}

/// The bytes of the partition file that hold its records: one run of
/// lines (no comment among them), each written as fsim-binpack writes a
/// record. Then a bins file of one bin is the partition's records as they
/// are, copied from the input instead of spooled, parsed and written again
/// ([`copy_records`]).
#[derive(Debug, Clone, Copy)]
struct Span {
    /// Offset of the first record's line, and just past the last one's.
    start: u64,
    end: u64,
    /// Every record line one run, as [`ChunkRecord::write`] writes it.
    verbatim: bool,
}

impl Span {
    /// A record line at `at` (bytes into the input), its newline dropped.
    #[inline]
    fn record(&mut self, at: u64, raw: &[u8]) {
        if self.end == 0 {
            self.start = at;
        } else if at != self.end {
            self.verbatim = false;
        }
        self.end = at + raw.len() as u64 + 1;
        // The hash (lowercase) and the id (10 digits) parse only as
        // written; a length parses with leading zeros too.
        let len = &raw[HASH_WIDTH + ID_WIDTH + 2..];
        self.verbatim &= len[0] != b'0' || len.len() == 1;
    }
}

impl Pass1 {
    fn new() -> Pass1 {
        Pass1 {
            check: InputCheck::new(Kind::Partition, "records"),
            seen: Digest::default(),
            recs_per_file: Vec::new(),
            chunks_per_file: Vec::new(),
            prev: None,
            files: Vec::new(),
            comp_of_file: Vec::new(),
            comps: Vec::new(),
            comp_index: HashMap::new(),
            trailer_files: None,
            pruned: None,
            span: Span {
                start: 0,
                end: 0,
                verbatim: true,
            },
        }
    }

    /// A `#` line: the header, the trailer (its file count checked against
    /// the `F` lines read) or a comment.
    fn meta_line(&mut self, raw: &[u8]) -> std::result::Result<(), String> {
        match classify_line(raw)? {
            Line::Header(kind, p) => {
                if self.check.params.is_some() {
                    return Err("a second header: fsim-binpack reads one partition file".into());
                }
                self.check.header(kind, p)?;
                let header = self.check.params.as_ref().map(PartitionHeader::parse);
                if let Some(n) = header.transpose()?.and_then(|h| h.files) {
                    // Counts indexed by id: reserve for the announced table.
                    self.recs_per_file.reserve(n.min(1 << 32) as usize);
                }
            }
            Line::Trailer(kind, p) => {
                if self.trailer_files.is_some() {
                    return Err("a second trailer".into());
                }
                self.check.trailer(kind, &p)?;
                let t = PartitionTrailer::parse(&p)?;
                self.trailer_files = Some(t.files);
                self.pruned = Pruned::of_partition(partition_limit(&self.check)?, &t);
                if t.files != self.files.len() as u64 {
                    return Err(format!(
                        "{} F lines read but the trailer announced files={}: the file is truncated or was edited",
                        self.files.len(),
                        t.files
                    ));
                }
            }
            Line::Comment(_) | Line::Data(_) => {}
        }
        Ok(())
    }

    /// An `F` line: the file joins its component (its own, when it is the
    /// smallest id, else one listed before) with the records counted.
    fn file_line(&mut self, raw: &[u8]) -> std::result::Result<(), String> {
        let f = FileLine::parse(raw)?;
        if self.files.last().is_some_and(|p| p.id >= f.id) {
            return Err("F lines are not in increasing id order".into());
        }
        let ci = if f.component == f.id {
            self.comp_index.insert(f.id, self.comps.len() as u32);
            self.comps.push(Component {
                id: f.id,
                files: 0,
                records: 0,
                chunks: 0,
                memory: 0,
            });
            self.comps.len() as u32 - 1
        } else {
            match self.comp_index.get(&f.component) {
                Some(&ci) if f.component < f.id => ci,
                _ => {
                    return Err(format!(
                        "component {} is not the smallest id of a component listed before (expected the id of an earlier F line, or the file's own id)",
                        formats::id_string(f.component)
                    ))
                }
            }
        };
        let c = &mut self.comps[ci as usize];
        c.files += 1;
        c.records += self.recs_per_file.get(f.id as usize).copied().unwrap_or(0) as u64;
        c.chunks += self
            .chunks_per_file
            .get(f.id as usize)
            .copied()
            .unwrap_or(0) as u64;
        self.comp_of_file.push(ci);
        self.files.push(f);
        Ok(())
    }

    /// A chunk record, checked (before the `F` lines, in (hash, file)
    /// order) and counted for its file; the caller spools it.
    #[inline]
    fn record(&mut self, raw: &[u8]) -> std::result::Result<ChunkRecord, String> {
        if !self.files.is_empty() {
            return Err("chunk record after the F lines: records must come first".into());
        }
        let rec = parse_record(raw)?;
        match self.prev {
            Some(p) if (rec.hash, rec.file) < p => {
                return Err("chunk records are not sorted by (hash, file id)".into());
            }
            Some((h, _)) if h == rec.hash => {}
            // First record of a hash group: count the chunk once, for its first file.
            _ => *slot(&mut self.chunks_per_file, rec.file) += 1,
        }
        self.prev = Some((rec.hash, rec.file));
        *slot(&mut self.recs_per_file, rec.file) += 1;
        self.seen.add(&rec);
        Ok(rec)
    }
}

/// Pass 1: count records and chunks per file, read the component table
/// and the trailer, and spool the records to `spool` (none: they stay in
/// the input, a regular file, where [`Span`] finds them).
fn spool_partition<R: std::io::BufRead>(
    r: &mut LineReader<R>,
    mut spool: Option<&mut BufWriter<File>>,
    spool_path: &Path,
) -> Result<Pass1> {
    let mut p = Pass1::new();
    let name = r.name().to_string();
    // Bytes read before this line: every line ends with a newline.
    let mut at = 0u64;
    loop {
        let ln = r.line_number() + 1;
        let Some(raw) = r.next_raw()? else { break };
        let line_at = at;
        at += raw.len() as u64 + 1;
        let err = |m: String| crate::Error::input(&name, ln, m);
        match raw.first() {
            Some(b'#') => p.meta_line(raw).map_err(err)?,
            _ if p.check.params.is_none() => {
                return Err(err("no '#fsim partition v1' header: expected a partition file written by fsim-partition".into()));
            }
            _ if p.trailer_files.is_some() => return Err(err("data after the trailer".into())),
            Some(b'F') => p.file_line(raw).map_err(err)?,
            _ => {
                let rec = p.record(raw).map_err(err)?;
                p.span.record(line_at, raw);
                if let Some(spool) = spool.as_mut() {
                    spool
                        .write_all(&encode(&rec))
                        .ctx(|| format!("writing {}", spool_path.display()))?;
                }
            }
        }
    }
    p.check.finish(&p.seen, r.name(), r.line_number())?;
    if let Some(spool) = spool {
        spool
            .flush()
            .ctx(|| format!("writing {}", spool_path.display()))?;
    }
    Ok(p)
}

/// The input when it is a regular file whose graph is likely to fit one
/// bin: its records are then left in it by pass 1, not spooled. Likely:
/// the memory estimate of as many records as its size could hold (the
/// shortest record line is 46 bytes) and of the files its header announces
/// is within `capacity`. Only a hint: a file that takes more bins is
/// spooled after pass 1 ([`spool_span`]), the output the same.
fn one_bin_input(path: &Path, capacity: u64) -> Option<Kept> {
    const SHORTEST_RECORD: u64 = (HASH_WIDTH + ID_WIDTH + 4) as u64;
    if path.as_os_str() == "-" {
        return None;
    }
    use std::os::unix::fs::FileExt;
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok().filter(|m| m.is_file())?;
    // The header line, read where it is (pass 1 reads from the start).
    let mut first = vec![0u8; 1 << 16];
    let n = file.read_at(&mut first, 0).ok()?;
    let line = &first[..memchr::memchr(b'\n', &first[..n])?];
    let Ok(Line::Header(Kind::Partition, header)) = classify_line(line) else {
        return None;
    };
    let files = PartitionHeader::parse(&header).ok()?.files?;
    let records = meta.len() / SHORTEST_RECORD;
    (estimate_memory(files, records, records) <= capacity).then(|| Kept {
        file,
        len: meta.len(),
        modified: meta.modified().ok(),
    })
}

/// The input file whose records pass 1 left in place, and its size and
/// time then: read again by [`spool_span`] or [`copy_records`] through the
/// same descriptor, and checked unchanged.
struct Kept {
    file: File,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Kept {
    /// An error unless the file has the size and time pass 1 saw.
    fn unchanged(&self, name: &str) -> Result<()> {
        let now = self
            .file
            .metadata()
            .ctx(|| format!("reading {name} again"))?;
        if (now.len(), now.modified().ok()) != (self.len, self.modified) {
            return Err(Error::msg(format!("{name} changed while it was read")));
        }
        Ok(())
    }

    /// The bytes of `span`, read where they are in the file (positioned
    /// reads: the descriptor's offset is left as pass 1 left it), through
    /// a buffer as large as the spool's.
    fn span_reader<'k>(&'k self, span: &Span) -> BufReader<SpanReader<'k>> {
        BufReader::with_capacity(
            1 << 20,
            SpanReader {
                file: &self.file,
                at: span.start,
                end: span.end,
            },
        )
    }
}

/// A byte range of a file as a [`Read`]: the file ending before the range
/// does is an error, not the end of the records.
struct SpanReader<'k> {
    file: &'k File,
    at: u64,
    end: u64,
}

impl Read for SpanReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let want = buf.len().min((self.end - self.at) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file got shorter while it was read",
            ));
        }
        self.at += n as u64;
        Ok(n)
    }
}

/// Pass 1's records, read again from the input where [`Span`] found them,
/// spooled to `spool_path` as pass 1 would have.
fn spool_span(kept: &Kept, span: &Span, spool_path: &Path, name: &str) -> Result<()> {
    let mut spool = BufWriter::with_capacity(
        1 << 20,
        File::create(spool_path).ctx(|| format!("cannot create {}", spool_path.display()))?,
    );
    let mut records = kept.span_reader(span);
    let mut line = Vec::new();
    loop {
        line.clear();
        if records
            .read_until(b'\n', &mut line)
            .ctx(|| format!("reading {name} again"))?
            == 0
        {
            break;
        }
        // Pass 1 read the span: whole lines, records and comments among them.
        let Some(line) = line.strip_suffix(b"\n") else {
            return Err(Error::msg(format!("{name} changed while it was read")));
        };
        if line.first() == Some(&b'#') {
            continue;
        }
        let rec = ChunkRecord::parse(line)
            .ok_or_else(|| Error::msg(format!("{name} changed while it was read")))?;
        spool
            .write_all(&encode(&rec))
            .ctx(|| format!("writing {}", spool_path.display()))?;
    }
    spool
        .flush()
        .ctx(|| format!("writing {}", spool_path.display()))?;
    kept.unchanged(name)
}

/// Write the records of [`Span`] from the input to `out` as they are: the
/// only bin's records, in the partition's order. The input must not have
/// changed since pass 1 read it (its size and time are checked: no fsim
/// program writes into an existing file, each renames a new one).
fn copy_records(kept: &Kept, span: &Span, out: &mut Output, name: &str) -> Result<()> {
    std::io::copy(&mut kept.span_reader(span), out)
        .ctx(|| format!("copying the records of {name}"))?;
    kept.unchanged(name)
}

/// The bins and where everything goes.
struct Placement {
    bins: Vec<Bin>,
    /// Bin of each file id (`u32::MAX`: none).
    bin_of: Vec<u32>,
    /// The files of each bin in id order: indices into `Pass1::files`.
    file_order: Vec<usize>,
}

/// Estimate each component's memory, pack the bins, and place every file;
/// a file with records but no `F` line is an error (its records would be
/// lost).
fn place(p: &mut Pass1, capacity: u64) -> std::result::Result<Placement, String> {
    let mut bin_of = vec![
        u32::MAX;
        p.recs_per_file
            .len()
            .max(p.files.last().map_or(0, |f| f.id as usize + 1))
    ];
    for c in p.comps.iter_mut() {
        c.memory = estimate_memory(c.files, c.records, c.chunks);
    }
    let bins = pack(&p.comps, capacity);
    let mut bin_of_comp = vec![0u32; p.comps.len()];
    for (b, bin) in bins.iter().enumerate() {
        for &ci in &bin.components {
            bin_of_comp[ci] = b as u32;
        }
    }
    for (f, &ci) in p.files.iter().zip(&p.comp_of_file) {
        bin_of[f.id as usize] = bin_of_comp[ci as usize];
    }
    if let Some(id) = p
        .recs_per_file
        .iter()
        .enumerate()
        .find(|(i, &n)| n > 0 && bin_of[*i] == u32::MAX)
        .map(|(i, _)| i)
    {
        return Err(format!(
            "chunk records of file {} but no F line for it: the partition file is inconsistent",
            formats::id_string(id as u32)
        ));
    }
    let mut file_order: Vec<usize> = (0..p.files.len()).collect();
    file_order.sort_by_key(|&i| bin_of_comp[p.comp_of_file[i] as usize]);
    Ok(Placement {
        bins,
        bin_of,
        file_order,
    })
}

/// Route the spool's `records` records of bins `group` to one temp file
/// each in `dir`; returns their paths. On the first group, also checks that
/// no chunk is in two bins (it would lose its links), naming `at` (the
/// input and its last line) in the error.
fn route_group(
    spool_path: &Path,
    dir: &Path,
    group: std::ops::Range<usize>,
    records: u64,
    bin_of: &[u32],
    at: (&str, u64),
) -> Result<Vec<PathBuf>> {
    let (lo, hi) = (group.start, group.end);
    let paths: Vec<PathBuf> = (lo..hi)
        .map(|b| dir.join(format!("bin{}", b + 1)))
        .collect();
    let mut writers = Vec::with_capacity(hi - lo);
    for p in &paths {
        writers.push(BufWriter::with_capacity(
            1 << 16,
            File::create(p).ctx(|| format!("cannot create {}", p.display()))?,
        ));
    }
    let mut sr = BufReader::with_capacity(
        1 << 20,
        File::open(spool_path).ctx(|| format!("cannot open {}", spool_path.display()))?,
    );
    let mut rec = [0u8; SPOOL_RECORD];
    // (hash, bin, file) of the previous record: a chunk whose files are
    // in two bins would lose its links, so the first pass checks it.
    let mut prev: Option<([u8; 16], usize, u32)> = None;
    for _ in 0..records {
        sr.read_exact(&mut rec)
            .ctx(|| format!("reading {}", spool_path.display()))?;
        let file = u32::from_le_bytes([rec[16], rec[17], rec[18], rec[19]]);
        let b = bin_of[file as usize] as usize;
        if lo == 0 {
            let hash: [u8; 16] = rec[..16].try_into().unwrap_or_default();
            if let Some((h, pb, pf)) = prev {
                if h == hash && pb != b {
                    return Err(crate::Error::input(
                        at.0,
                        at.1,
                        format!(
                            "chunk {} is in files {} and {} of different components: the partition file is inconsistent",
                            formats::hex128(u128::from_le_bytes(hash)),
                            formats::id_string(pf),
                            formats::id_string(file)
                        ),
                    ));
                }
            }
            prev = Some((hash, b, file));
        }
        if (lo..hi).contains(&b) {
            writers[b - lo]
                .write_all(&rec)
                .ctx(|| format!("writing {}", paths[b - lo].display()))?;
        }
    }
    for (w, p) in writers.into_iter().zip(&paths) {
        w.into_inner().map_err(|e| Error::Io {
            context: format!("writing {}", p.display()),
            source: e.into_error(),
        })?;
    }
    Ok(paths)
}

/// Write the bins `lo..` whose records `route_group` put in `paths`: each
/// bin's `#bin` line, its `F` lines, its records; `next_file` is the
/// position in `pl.file_order` of the next bin's first file.
fn write_group(
    out: &mut Output,
    buf: &mut Vec<u8>,
    lo: usize,
    paths: &[PathBuf],
    pl: &Placement,
    files: &[FileLine],
    next_file: &mut usize,
) -> Result<()> {
    let mut rec = [0u8; SPOOL_RECORD];
    for (b, p) in (lo..).zip(paths) {
        let bin = &pl.bins[b];
        bin_head(buf, b, pl, files, next_file);
        let mut br = BufReader::with_capacity(
            1 << 20,
            File::open(p).ctx(|| format!("cannot open {}", p.display()))?,
        );
        for _ in 0..bin.records {
            br.read_exact(&mut rec)
                .ctx(|| format!("reading {}", p.display()))?;
            decode(&rec).write(buf);
            if buf.len() >= 1 << 16 {
                out.write_all(buf)?;
                buf.clear();
            }
        }
        drop(br);
        let _ = std::fs::remove_file(p);
    }
    Ok(())
}

/// Bin `b`'s `#bin` line and its `F` lines, to `buf`.
fn bin_head(
    buf: &mut Vec<u8>,
    b: usize,
    pl: &Placement,
    files: &[FileLine],
    next_file: &mut usize,
) {
    let bin = &pl.bins[b];
    buf.extend_from_slice(bin_line(b + 1, bin).as_bytes());
    for _ in 0..bin.files {
        files[pl.file_order[*next_file]].write(buf);
        *next_file += 1;
    }
}

/// The whole stage.
pub fn run(cfg: &Config) -> Result<()> {
    if cfg.components {
        return run_components(cfg);
    }
    if let Some(plan) = &cfg.seal {
        return run_seal(plan, cfg);
    }
    let t0 = std::time::Instant::now();
    let kept = one_bin_input(&cfg.input, cfg.capacity);
    let (input, name) = match &kept {
        Some(k) => {
            let f = k
                .file
                .try_clone()
                .ctx(|| format!("cannot open {}", cfg.input.display()))?;
            let input: Box<dyn std::io::BufRead + Send> =
                Box::new(BufReader::with_capacity(formats::BUF_SIZE, f));
            (input, cfg.input.display().to_string())
        }
        None => open_input(&cfg.input)?,
    };
    let progress = crate::io::progress::Progress::for_inputs(
        "fsim-binpack",
        &[cfg.input.as_path()],
        cfg.quiet,
    );
    let mut r = LineReader::new(progress.reader(input), name);
    let tmp = tempfile::Builder::new()
        .prefix("fsim-binpack.")
        .tempdir_in(cfg.tmpdir.clone().unwrap_or_else(std::env::temp_dir))
        .ctx(|| "cannot create a temporary directory (see --tmpdir)")?;
    let spool_path = tmp.path().join("spool");
    let mut spool = match kept {
        Some(_) => None,
        None => Some(BufWriter::with_capacity(
            1 << 20,
            File::create(&spool_path).ctx(|| format!("cannot create {}", spool_path.display()))?,
        )),
    };
    let mut p = spool_partition(&mut r, spool.as_mut(), &spool_path)?;
    drop(spool);
    let pl = place(&mut p, cfg.capacity).map_err(|m| r.error(m))?;

    // The plan, before the long part; printed above the progress bar, which
    // would otherwise be redrawn over its last line.
    progress.suspend(|| report_plan(cfg, &p.comps, &pl.bins))?;

    let mut out = Output::create(cfg.output.as_deref())?;
    let input = Pass2Input {
        kept: kept.as_ref(),
        spool: &spool_path,
        tmp: tmp.path(),
        at: (r.name(), r.line_number()),
    };
    write_bins(&mut out, cfg.capacity, &p, &pl, &input)?;
    out.finish()?;
    progress.finish();
    if !cfg.quiet {
        crate::cli::stderr_line(format_args!(
            "fsim-binpack: {} bins, {} files, {} records, {:.2} s",
            pl.bins.len(),
            p.files.len(),
            p.seen.count,
            t0.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// Where pass 2 finds the records: the input itself when pass 1 left them
/// there, else the spool; per-bin files go to `tmp`; `at` is the input's
/// name and last line (for the errors of routing).
struct Pass2Input<'a> {
    kept: Option<&'a Kept>,
    spool: &'a Path,
    tmp: &'a Path,
    at: (&'a str, u64),
}

/// Pass 2: the bins file. One bin whose records pass 1 left in a regular
/// input is its records copied as they are; otherwise the spool (written
/// now from the input if pass 1 left them there) is routed to per-bin
/// files, a group of bins at a time, and each group's bins written.
fn write_bins(
    out: &mut Output,
    capacity: u64,
    p: &Pass1,
    pl: &Placement,
    input: &Pass2Input,
) -> Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    let params = bins_params(
        p.check.params.as_ref(),
        p.pruned.as_ref(),
        pl.bins.len(),
        capacity,
    );
    formats::write_header(Kind::Bins, &params, &mut buf);
    let mut next_file = 0;
    // One bin (a repository whose graph fits in memory, the usual case):
    // its records are the partition's, in order.
    let one_bin = pl.bins.len() == 1 && pl.bins[0].records == p.seen.count;
    let copied = match input.kept {
        Some(k) if one_bin && p.span.verbatim => {
            bin_head(&mut buf, 0, pl, &p.files, &mut next_file);
            out.write_all(&buf)?;
            buf.clear();
            copy_records(k, &p.span, out, input.at.0)?;
            true
        }
        Some(k) => {
            spool_span(k, &p.span, input.spool, input.at.0)?;
            false
        }
        None => false,
    };
    // Copied: no bin is left to route.
    let routed = if copied { 0 } else { pl.bins.len() };
    for lo in (0..routed).step_by(MAX_OPEN_BINS) {
        let hi = (lo + MAX_OPEN_BINS).min(pl.bins.len());
        // One bin: the spool is its records, in order; routing it would
        // copy every record once more for nothing to check.
        let paths = if one_bin {
            vec![input.spool.to_path_buf()]
        } else {
            route_group(
                input.spool,
                input.tmp,
                lo..hi,
                p.seen.count,
                &pl.bin_of,
                input.at,
            )?
        };
        write_group(out, &mut buf, lo, &paths, pl, &p.files, &mut next_file)?;
    }
    let t = bins_trailer(&p.seen, pl.bins.len(), p.files.len() as u64);
    formats::write_trailer(Kind::Bins, &t, &mut buf);
    out.write_all(&buf)
}

/// `--seal PLAN`: a slice of a bins file (consecutive bins: each `#bin`
/// line, its `F` lines and its records, as fsim-binpack writes them), made
/// a bins file of its own: PLAN's header (a bins file or the plan of
/// `--components`) with `bins=` the slice's, the slice as it is, and a
/// trailer with its records' count and digest, its bins and its files. A
/// distributed run's analysis tasks (scripts/spark) each analyse one slice;
/// the checks fsim-analyze makes of a bins file then hold for it.
pub fn run_seal(plan: &Path, cfg: &Config) -> Result<()> {
    let mut head = LineReader::new(
        BufReader::new(File::open(plan).ctx(|| format!("cannot open {}", plan.display()))?),
        plan.display().to_string(),
    );
    let first = head.next_raw()?.map(<[u8]>::to_vec);
    let params = match first.as_deref().map(classify_line) {
        Some(Ok(Line::Header(Kind::Bins, p))) => p,
        _ => return Err(head.error("expected a '#fsim bins v1' header on line 1")),
    };
    let mut header = BinsHeader::parse(&params).map_err(|m| head.error(m))?;
    let (input, name) = open_input(&cfg.input)?;
    let mut r = LineReader::new(input, name.clone());
    let mut body = Vec::new();
    let (mut bins, mut files, mut records) = (0u64, 0u64, Digest::default());
    loop {
        let ln = r.line_number() + 1;
        let Some(raw) = r.next_raw()? else { break };
        let err = |m: String| Error::input(&name, ln, m);
        if raw.starts_with(b"#bin\t") {
            bins += 1;
        } else if bins == 0 {
            return Err(err(
                "expected a #bin line before the bin's F lines and records".into(),
            ));
        } else if raw.starts_with(b"F\t") {
            FileLine::parse(raw).map_err(err)?;
            files += 1;
        } else {
            records.add(&parse_record(raw).map_err(|m| err(format!("{m} or a #bin line")))?);
        }
        body.extend_from_slice(raw);
        body.push(b'\n');
    }
    header.bins = Some(bins);
    let mut buf = Vec::with_capacity(body.len() + 512);
    formats::write_header(
        Kind::Bins,
        &params.merged(&header.packing_params()),
        &mut buf,
    );
    buf.extend_from_slice(&body);
    formats::write_trailer(
        Kind::Bins,
        &bins_trailer(&records, bins as usize, files),
        &mut buf,
    );
    let mut out = Output::create(cfg.output.as_deref())?;
    out.write_all(&buf)?;
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Records of a run of lines, as fsim-binpack writes them, are copied
    /// as they are; a length with a leading zero, or a line between two
    /// records, are not.
    #[test]
    fn a_span_is_verbatim_only_as_written() {
        let rec = |len: &str| format!("{}\t0000000007\t{len}", "ab".repeat(16)).into_bytes();
        let mut s = Pass1::new().span;
        let (one, zero) = (rec("100"), rec("0"));
        s.record(50, &one);
        s.record(50 + one.len() as u64 + 1, &zero);
        assert!(s.verbatim);
        assert_eq!(
            (s.start, s.end),
            (50, 50 + (one.len() + zero.len()) as u64 + 2)
        );
        let mut padded = Pass1::new().span;
        padded.record(50, &rec("0100"));
        assert!(!padded.verbatim);
        let mut gap = Pass1::new().span;
        gap.record(50, &one);
        gap.record(50 + one.len() as u64 + 12, &one);
        assert!(!gap.verbatim);
    }

    /// Records are left in the input only when it is a regular file with
    /// a partition header whose files and size fit the capacity.
    #[test]
    fn records_are_left_in_a_file_that_fits_one_bin() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.tsv");
        let mut text = Vec::new();
        let header = formats::Params::new()
            .with("method", "tttd")
            .with("files", 10);
        formats::write_header(Kind::Partition, &header, &mut text);
        text.extend_from_slice(&[b'x'; 4600]);
        std::fs::write(&p, &text).unwrap();
        // 10 files, and as many records as 46-byte lines the size holds.
        let records = text.len() as u64 / 46;
        let need = estimate_memory(10, records, records);
        assert_eq!(need, 10 * 168 + records * 24);
        assert!(one_bin_input(&p, need).is_some());
        assert!(one_bin_input(&p, need - 1).is_none());
        assert!(one_bin_input(Path::new("-"), u64::MAX).is_none());
        std::fs::write(&p, b"F\t0000000001\n").unwrap();
        assert!(one_bin_input(&p, u64::MAX).is_none());
    }

    fn comp(id: u32, memory: u64) -> Component {
        Component {
            id,
            files: 2,
            records: 4,
            chunks: 2,
            memory,
        }
    }

    #[test]
    fn first_fit_decreasing_known_answer() {
        let cs = [
            comp(0, 30),
            comp(5, 70),
            comp(9, 50),
            comp(12, 50),
            comp(20, 20),
            comp(30, 150),
        ];
        let bins = pack(&cs, 100);
        let got: Vec<(Vec<usize>, u64, bool)> = bins
            .iter()
            .map(|b| (b.components.clone(), b.memory, b.oversized))
            .collect();
        assert_eq!(
            got,
            vec![
                (vec![5], 150, true),
                (vec![1, 0], 100, false),
                (vec![2, 3], 100, false),
                (vec![4], 20, false)
            ]
        );
    }

    #[test]
    fn f_line_round_trip() {
        let f = FileLine {
            id: 7,
            component: 3,
            size: 1234,
            content: 0xabc,
            features: None,
        };
        let mut v = Vec::new();
        f.write(&mut v);
        assert_eq!(
            v,
            b"F\t0000000007\t0000000003\t1234\t00000000000000000000000000000abc\n"
        );
        assert_eq!(FileLine::parse(&v[..v.len() - 1]), Ok(f));
        let g = FileLine {
            features: Some(42),
            ..f
        };
        v.clear();
        g.write(&mut v);
        assert!(v.ends_with(b"abc\t42\n"));
        assert_eq!(FileLine::parse(&v[..v.len() - 1]), Ok(g));
        assert!(FileLine::parse(
            b"G\t0000000007\t0000000003\t1234\t00000000000000000000000000000abc"
        )
        .is_err());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1 << 30), "1 GiB");
        assert_eq!(human_size(2040 << 20), "2.0 GiB");
        assert_eq!(human_size(1536), "1.5 KiB");
    }

    proptest! {
        #[test]
        fn packing_invariants(mems in proptest::collection::vec(1u64..300, 0..60), cap in 1u64..250) {
            let cs: Vec<Component> = mems.iter().enumerate().map(|(i, &m)| comp(i as u32 * 3, m)).collect();
            let bins = pack(&cs, cap);
            let mut placed = vec![0u32; cs.len()];
            for b in &bins {
                prop_assert!(!b.components.is_empty());
                prop_assert_eq!(b.memory, b.components.iter().map(|&i| cs[i].memory).sum::<u64>());
                if b.oversized {
                    prop_assert_eq!(b.components.len(), 1);
                    prop_assert!(b.memory > cap);
                } else {
                    prop_assert!(b.memory <= cap);
                }
                for &i in &b.components {
                    placed[i] += 1;
                }
            }
            prop_assert!(placed.iter().all(|&n| n == 1));
            // First fit: no component of a later bin would have fitted an earlier one
            // at the time it was placed; weaker check: no two non-oversized bins
            // could be merged when both are at most half full.
            let halves = bins.iter().filter(|b| !b.oversized && b.memory * 2 <= cap).count();
            prop_assert!(halves <= 1);
            // Same input, same plan.
            prop_assert_eq!(pack(&cs, cap), bins);
        }
    }
}
