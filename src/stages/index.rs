//! One-against-all queries (sif's query mode, Manber section 3): a binary
//! index of the chunk records of a repository, opened with `memmap2` and
//! searched without loading it, and the query that chunks new files with the
//! parameters the index records and lists the indexed files that share chunks
//! with each, best first.
//!
//! # Layout
//!
//! An index is a folder of **segments** (`seg-000001.fsx`, ...). A segment is
//! one file, little-endian:
//!
//! ```text
//! magic "FSIMIDX1" | params_len u32 | reserved u32 | files u64 | records u64 | paths_len u64
//! params (UTF-8 `key=value` separated by tabs: the chunking parameters), zero-padded to 8
//! files:   files × 40 bytes: size u64, content u128, path offset u64, path len u32, type u8, 3 pad
//! records: records × 24 bytes: hash u128, file u32, length u32, sorted by (hash, file)
//! paths:   the raw path bytes
//! ```
//!
//! Fixed-width sorted records make a lookup a binary search over the mapped
//! file: a query touches O(chunks × log records) pages, whatever the index
//! size. `fsim-index --add` writes one more segment (new files only, without
//! rebuilding); queries search every segment; `fsim-index --merge` merges
//! the segments into one.

use crate::chunking::chunker::Chunker;
use crate::chunking::reader::chunk_path_as;
use crate::error::{Context, Error, Result};
use crate::formats::headers::ChunkParams;
use crate::formats::open_input;
use crate::formats::{
    escape_path_string, ChunkRecord, Digest, FileEntry, FileType, InputCheck, Kind, Line,
    LineReader, Params, CHUNK_PARAM_KEYS,
};
use crate::io::Output;
use memmap2::Mmap;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"FSIMIDX1";
const PREAMBLE: usize = 40;
const FILE_REC: usize = 40;
const CHUNK_REC: usize = 24;

/// Round up to a multiple of 8.
fn pad8(n: usize) -> usize {
    (n + 7) & !7
}

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    pub size: u64,
    pub content: u128,
    pub ftype: FileType,
    pub path: Vec<u8>,
}

fn type_code(t: FileType) -> u8 {
    FileType::ALL.iter().position(|&x| x == t).unwrap_or(0) as u8
}

/// Write a segment from its files and a sorted stream of records.
/// `records` must be sorted by (hash, file); the segment's record count is
/// patched in at the end.
fn write_segment(
    target: &Path,
    params: &Params,
    files: &[IndexedFile],
    mut records: impl FnMut() -> Result<Option<ChunkRecord>>,
) -> Result<u64> {
    let name = target.display().to_string();
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".seg.")
        .suffix(".tmp")
        .permissions(crate::io::output_mode())
        .tempfile_in(dir)
        .ctx(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let mut params_text = Vec::new();
    for (i, (k, v)) in params.only(CHUNK_PARAM_KEYS).0.iter().enumerate() {
        if i > 0 {
            params_text.push(b'\t');
        }
        params_text.extend_from_slice(format!("{k}={v}").as_bytes());
    }
    let paths_len: usize = files.iter().map(|f| f.path.len()).sum();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
    let mut head = Vec::with_capacity(PREAMBLE + params_text.len() + 8);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&(params_text.len() as u32).to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    head.extend_from_slice(&(files.len() as u64).to_le_bytes());
    head.extend_from_slice(&0u64.to_le_bytes()); // records, patched below
    head.extend_from_slice(&(paths_len as u64).to_le_bytes());
    head.extend_from_slice(&params_text);
    head.resize(PREAMBLE + pad8(params_text.len()), 0);
    let wr = |w: &mut std::io::BufWriter<&mut File>, b: &[u8]| {
        w.write_all(b).ctx(|| format!("writing {name}"))
    };
    wr(&mut w, &head)?;
    let mut off = 0u64;
    for f in files {
        let mut rec = [0u8; FILE_REC];
        rec[0..8].copy_from_slice(&f.size.to_le_bytes());
        rec[8..24].copy_from_slice(&f.content.to_le_bytes());
        rec[24..32].copy_from_slice(&off.to_le_bytes());
        rec[32..36].copy_from_slice(&(f.path.len() as u32).to_le_bytes());
        rec[36] = type_code(f.ftype);
        wr(&mut w, &rec)?;
        off += f.path.len() as u64;
    }
    let mut n = 0u64;
    let mut prev: Option<(u128, u32)> = None;
    while let Some(r) = records()? {
        if prev.is_some_and(|p| (r.hash, r.file) < p) {
            return Err(Error::msg(format!(
                "{name}: records are not sorted by hash: run fsim-sort first"
            )));
        }
        if r.file as usize >= files.len() {
            return Err(Error::msg(format!(
                "{name}: record of file {} outside the file table",
                r.file
            )));
        }
        prev = Some((r.hash, r.file));
        let mut rec = [0u8; CHUNK_REC];
        rec[0..16].copy_from_slice(&r.hash.to_le_bytes());
        rec[16..20].copy_from_slice(&r.file.to_le_bytes());
        rec[20..24].copy_from_slice(&r.len.to_le_bytes());
        wr(&mut w, &rec)?;
        n += 1;
    }
    for f in files {
        wr(&mut w, &f.path)?;
    }
    w.flush().ctx(|| format!("writing {name}"))?;
    drop(w);
    let file = tmp.as_file_mut();
    file.seek(SeekFrom::Start(24))
        .ctx(|| format!("writing {name}"))?;
    file.write_all(&n.to_le_bytes())
        .ctx(|| format!("writing {name}"))?;
    file.sync_all().ctx(|| format!("writing {name}"))?;
    tmp.persist(target).map_err(|e| Error::Io {
        context: format!("renaming the finished segment to {name}"),
        source: e.error,
    })?;
    Ok(n)
}

/// A mapped segment.
pub struct Segment {
    map: Mmap,
    pub name: String,
    pub params: Params,
    pub files: usize,
    pub records: usize,
    files_at: usize,
    records_at: usize,
    paths_at: usize,
}

impl Segment {
    pub fn open(path: &Path) -> Result<Segment> {
        let name = path.display().to_string();
        let f = File::open(path).ctx(|| format!("cannot open {name}"))?;
        let meta = f.metadata().ctx(|| format!("cannot read {name}"))?;
        if !meta.is_file() {
            return Err(Error::msg(format!("{name}: not a regular file")));
        }
        // SAFETY: segments are written to a temp file and renamed into place,
        // never modified afterwards (a merge writes a new file and removes
        // the old ones, which keeps this mapping's inode alive), and the
        // sizes are checked below before any slice is taken.
        let map = unsafe { Mmap::map(&f) }.ctx(|| format!("cannot map {name}"))?;
        let bad = |m: &str| {
            Error::msg(format!(
                "{name}: {m}: not an fsim index segment, or a damaged one"
            ))
        };
        if map.len() < PREAMBLE || &map[..8] != MAGIC {
            return Err(bad("bad magic"));
        }
        let u32_at =
            |o: usize| u32::from_le_bytes(map[o..o + 4].try_into().unwrap_or_default()) as usize;
        let u64_at =
            |o: usize| u64::from_le_bytes(map[o..o + 8].try_into().unwrap_or_default()) as usize;
        let plen = u32_at(8);
        let (files, records, paths_len) = (u64_at(16), u64_at(24), u64_at(32));
        let files_at = PREAMBLE + pad8(plen);
        let records_at = files_at + files * FILE_REC;
        let paths_at = records_at + records * CHUNK_REC;
        if map.len() < files_at || paths_at.checked_add(paths_len) != Some(map.len()) {
            return Err(bad("size does not match its counts"));
        }
        let ptext =
            std::str::from_utf8(&map[PREAMBLE..PREAMBLE + plen]).map_err(|_| bad("parameters"))?;
        let mut params = Params::new();
        for kv in ptext.split('\t') {
            let (k, v) = kv.split_once('=').ok_or_else(|| bad("parameters"))?;
            params.set(k, v);
        }
        Ok(Segment {
            map,
            name,
            params,
            files,
            records,
            files_at,
            records_at,
            paths_at,
        })
    }

    pub fn file(&self, i: usize) -> IndexedFile {
        let r = &self.map[self.files_at + i * FILE_REC..][..FILE_REC];
        let off = u64::from_le_bytes(r[24..32].try_into().unwrap_or_default()) as usize;
        let len = u32::from_le_bytes(r[32..36].try_into().unwrap_or_default()) as usize;
        IndexedFile {
            size: u64::from_le_bytes(r[0..8].try_into().unwrap_or_default()),
            content: u128::from_le_bytes(r[8..24].try_into().unwrap_or_default()),
            ftype: FileType::ALL
                .get(r[36] as usize)
                .copied()
                .unwrap_or(FileType::Binary),
            path: self.map[self.paths_at + off..][..len].to_vec(),
        }
    }

    #[inline]
    pub fn record(&self, i: usize) -> ChunkRecord {
        let r = &self.map[self.records_at + i * CHUNK_REC..][..CHUNK_REC];
        ChunkRecord {
            hash: u128::from_le_bytes(r[0..16].try_into().unwrap_or_default()),
            file: u32::from_le_bytes(r[16..20].try_into().unwrap_or_default()),
            len: u32::from_le_bytes(r[20..24].try_into().unwrap_or_default()),
        }
    }

    /// Index range of the records with this hash (binary search).
    pub fn find(&self, hash: u128) -> std::ops::Range<usize> {
        let (mut lo, mut hi) = (0, self.records);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.record(mid).hash < hash {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let start = lo;
        let mut end = start;
        while end < self.records && self.record(end).hash == hash {
            end += 1;
        }
        start..end
    }
}

/// The segments of an index folder, in name order.
pub fn segment_paths(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let n = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                n.starts_with("seg-") && n.ends_with(".fsx")
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            return Err(Error::Io {
                context: format!("cannot read {}", dir.display()),
                source: e,
            })
        }
    };
    v.sort();
    Ok(v)
}

/// Open every segment and check they share one set of chunking parameters.
pub fn open_index(dir: &Path) -> Result<Vec<Segment>> {
    let paths = segment_paths(dir)?;
    if paths.is_empty() {
        return Err(Error::msg(format!(
            "{}: no index segments (build one with fsim-index)",
            dir.display()
        )));
    }
    let segs: Vec<Segment> = paths
        .iter()
        .map(|p| Segment::open(p))
        .collect::<Result<_>>()?;
    for s in &segs[1..] {
        if let Some(d) = s.params.difference(&segs[0].params) {
            return Err(Error::msg(format!(
                "{}: segments built with different parameters: {d}",
                s.name
            )));
        }
    }
    Ok(segs)
}

/// What `fsim-index` does.
#[derive(Debug, Clone)]
pub struct BuildConfig {
    pub index: PathBuf,
    pub files: PathBuf,
    pub sorted: PathBuf,
}

/// Add a segment made of a sorted chunk file and its file table to the
/// index folder (created if needed). Returns (files, records).
pub fn add_segment(cfg: &BuildConfig) -> Result<(usize, u64)> {
    let (entries, table_params) = crate::formats::files::read_file_table(&cfg.files)?;
    let chunk = ChunkParams::from_params(&table_params, &cfg.files.display().to_string())?;
    if let Some(m) = chunk
        .method
        .as_deref()
        .filter(|m| crate::chunking::features::is_feature_method(m))
    {
        return Err(Error::msg(format!(
            "{}: method={m} makes features, not chunks with byte lengths: fsim-index indexes tttd and bsw chunk files only",
            cfg.files.display()
        )));
    }
    std::fs::create_dir_all(&cfg.index).ctx(|| format!("cannot create {}", cfg.index.display()))?;
    let existing = segment_paths(&cfg.index)?;
    if let Some(first) = existing.first() {
        let s = Segment::open(first)?;
        if let Some(d) = table_params.only(CHUNK_PARAM_KEYS).difference(&s.params) {
            return Err(Error::msg(format!(
                "{}: the index was built with other chunking parameters: {d}",
                cfg.files.display()
            )));
        }
    }
    let next = existing
        .last()
        .and_then(|p| {
            p.file_name()?
                .to_str()?
                .strip_prefix("seg-")?
                .strip_suffix(".fsx")?
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(0)
        + 1;
    let target = cfg.index.join(format!("seg-{next:06}.fsx"));
    let files: Vec<IndexedFile> = entries
        .iter()
        .map(|e: &FileEntry| IndexedFile {
            size: e.size,
            content: e.content,
            ftype: e.ftype,
            path: e.path.clone(),
        })
        .collect();
    let (input, name) = open_input(&cfg.sorted)?;
    let mut r = LineReader::new(input, name.clone());
    let mut check = InputCheck::new(Kind::Chunks, "records");
    let mut seen = Digest::default();
    // Everything is checked before the segment is renamed into place.
    let n = write_segment(&target, &table_params, &files, || loop {
        let line_no = r.line_number() + 1;
        let line = match r.next_line()? {
            None => {
                check.finish(&seen, &name, r.line_number())?;
                return Ok(None);
            }
            Some(l) => l,
        };
        match line {
            Line::Header(k, p) => {
                check
                    .header(k, p.clone())
                    .map_err(|m| Error::input(&name, line_no, m))?;
                if let Some(d) = p.chunking_difference(&table_params) {
                    return Err(Error::input(
                        &name,
                        line_no,
                        format!("chunks and file table come from different runs: {d}"),
                    ));
                }
            }
            Line::Trailer(k, p) => check
                .trailer(k, &p)
                .map_err(|m| Error::input(&name, line_no, m))?,
            Line::Comment(_) => {}
            Line::Data(d) => {
                let rec = ChunkRecord::parse(d).ok_or_else(|| {
                    Error::input(
                        &name,
                        line_no,
                        format!("expected {}", ChunkRecord::EXPECTED),
                    )
                })?;
                seen.add(&rec);
                return Ok(Some(rec));
            }
        }
    });
    Ok((files.len(), n?))
}

/// Merge every segment of the index into one (file ids renumbered), then
/// remove the old segments. Returns (files, records).
pub fn merge(index: &Path) -> Result<(usize, u64)> {
    let segs = open_index(index)?;
    let paths = segment_paths(index)?;
    if segs.len() == 1 {
        return Ok((segs[0].files, segs[0].records as u64));
    }
    let mut files = Vec::new();
    let mut base = Vec::with_capacity(segs.len());
    for s in &segs {
        base.push(files.len() as u32);
        for i in 0..s.files {
            files.push(s.file(i));
        }
    }
    let last: u64 = paths
        .last()
        .and_then(|p| {
            p.file_name()?
                .to_str()?
                .strip_prefix("seg-")?
                .strip_suffix(".fsx")?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    let target = index.join(format!("seg-{:06}.fsx", last + 1));
    // k-way merge of the segments' sorted records by (hash, new file id).
    let mut pos = vec![0usize; segs.len()];
    let mut heap = std::collections::BinaryHeap::new();
    let key = |s: usize, i: usize| {
        let r = segs[s].record(i);
        std::cmp::Reverse((r.hash, r.file + base[s], r.len, s))
    };
    for (s, seg) in segs.iter().enumerate() {
        if seg.records > 0 {
            heap.push(key(s, 0));
        }
    }
    let n = write_segment(&target, &segs[0].params, &files, || {
        let Some(std::cmp::Reverse((hash, file, len, s))) = heap.pop() else {
            return Ok(None);
        };
        pos[s] += 1;
        if pos[s] < segs[s].records {
            heap.push(key(s, pos[s]));
        }
        Ok(Some(ChunkRecord { hash, file, len }))
    })?;
    drop(segs);
    for p in paths {
        std::fs::remove_file(&p).ctx(|| format!("cannot remove {}", p.display()))?;
    }
    Ok((files.len(), n))
}

/// One indexed file that shares chunks with a query file.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub path: Vec<u8>,
    pub size: u64,
    pub common: u64,
    pub shared_chunks: u64,
    pub identical: bool,
}

/// Options of `fsim-query`.
#[derive(Debug, Clone)]
pub struct QueryConfig {
    pub index: PathBuf,
    pub queries: Vec<PathBuf>,
    pub top: usize,
    pub min_percent: f64,
    /// Chunks found in more indexed files than this are ignored (templates,
    /// boilerplate): they would make a query touch most of the index.
    pub max_degree: usize,
    pub output: Option<PathBuf>,
    /// No summary line on stderr.
    pub quiet: bool,
}

/// Query one file against open segments.
/// The query is read as the indexed files were (`mode`: their content
/// views, or their raw bytes).
pub fn query_file(
    segs: &[Segment],
    chunker: &Chunker,
    mode: crate::content::Mode,
    path: &Path,
    max_degree: usize,
) -> Result<(Vec<Match>, u64)> {
    let (mut pieces, info, _, _) =
        chunk_path_as(path, chunker, mode, &crate::content::Limits::default(), 0)?;
    pieces.sort_unstable();
    let mut found: HashMap<(usize, u32), (u64, u64)> = HashMap::new();
    let mut i = 0;
    while i < pieces.len() {
        let (h, len) = pieces[i];
        let mut j = i;
        while j < pieces.len() && pieces[j].0 == h {
            j += 1;
        }
        let qcount = (j - i) as u64;
        for (s, seg) in segs.iter().enumerate() {
            let range = seg.find(h);
            if range.is_empty() || range.len() > max_degree {
                continue;
            }
            let mut k = range.start;
            while k < range.end {
                let f = seg.record(k).file;
                let mut m = k;
                while m < range.end && seg.record(m).file == f {
                    m += 1;
                }
                let e = found.entry((s, f)).or_default();
                e.0 += qcount.min((m - k) as u64) * len as u64;
                e.1 += 1;
                k = m;
            }
        }
        i = j;
    }
    let mut out: Vec<Match> = Vec::new();
    for ((s, f), (common, shared)) in found {
        let file = segs[s].file(f as usize);
        let identical = file.content == info.content && file.size == info.size;
        out.push(Match {
            path: file.path,
            size: file.size,
            common,
            shared_chunks: shared,
            identical,
        });
    }
    out.sort_by(|a, b| {
        b.identical
            .cmp(&a.identical)
            .then(b.common.cmp(&a.common))
            .then(a.path.cmp(&b.path))
    });
    Ok((out, info.size))
}

/// `fsim-query`: TSV lines `query, indexed file, bytes in common, % of the
/// query, % of the indexed file, identical`, best first, per query file.
pub fn run_query(cfg: &QueryConfig) -> Result<()> {
    let start = std::time::Instant::now();
    let segs = open_index(&cfg.index)?;
    let chunker = Chunker::from_params(&segs[0].params).map_err(|m| {
        Error::msg(format!(
            "{}: cannot query this index: {m}",
            cfg.index.display()
        ))
    })?;
    let mode = crate::content::Mode::of_table(&segs[0].params).map_err(|m| {
        Error::msg(format!(
            "{}: cannot query this index: {m}",
            cfg.index.display()
        ))
    })?;
    let mut out = Output::create(cfg.output.as_deref())?;
    out.write_all(
        b"query\tindexed\tbytes_in_common\tpercent_of_query\tpercent_of_indexed\tidentical\n",
    )?;
    let (mut listed, mut bytes) = (0u64, 0u64);
    for q in &cfg.queries {
        let (matches, qsize) = query_file(&segs, &chunker, mode, q, cfg.max_degree)?;
        bytes += qsize;
        let qname = escape_path_string(q.as_os_str().as_encoded_bytes());
        for m in matches
            .iter()
            .filter(|m| crate::formats::percent(m.common, qsize.min(m.size)) >= cfg.min_percent)
            .take(cfg.top)
        {
            listed += 1;
            let line = format!(
                "{qname}\t{}\t{}\t{:.1}\t{:.1}\t{}\n",
                escape_path_string(&m.path),
                m.common,
                crate::formats::percent(m.common, qsize),
                crate::formats::percent(m.common, m.size),
                if m.identical { "yes" } else { "no" }
            );
            out.write_all(line.as_bytes())?;
        }
    }
    out.finish()?;
    if !cfg.quiet {
        crate::cli::stderr_line(format_args!(
            "fsim-query: {} files ({bytes} bytes) queried against {} segments, {listed} matches, {:.2} s",
            cfg.queries.len(),
            segs.len(),
            start.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// `fsim-index`: add a segment (or, with `merge`, merge the segments) and
/// print the one-line summary unless `quiet`.
pub fn run_build(cfg: &BuildConfig, merge_segments: bool, quiet: bool) -> Result<()> {
    let start = std::time::Instant::now();
    let (files, records) = if merge_segments {
        merge(&cfg.index)?
    } else {
        add_segment(cfg)?
    };
    if !quiet {
        crate::cli::stderr_line(format_args!(
            "fsim-index: {files} files, {records} records in {}, {:.2} s",
            cfg.index.display(),
            start.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}
