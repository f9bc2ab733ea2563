//! Pass 1 over the partition file: its records counted per file and
//! spooled (or, in a regular file likely to fit one bin, found in place:
//! [`Span`]), its component table read.

use super::pack::partition_limit;
use super::Component;
use crate::error::{Context, Error, Result};
use crate::formats::bins::{estimate_memory, parse_record, FileLine};
use crate::formats::headers::{PartitionHeader, PartitionTrailer, Pruned};
use crate::formats::{
    self, classify_line, ChunkRecord, Codec, Digest, InputCheck, Kind, Line, LineReader,
    HASH_WIDTH, ID_WIDTH,
};
use crate::io::Output;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

/// Size of one spooled record: hash (16), file id (4), length (4).
pub(super) const SPOOL_RECORD: usize = 24;

#[inline]
pub(super) fn encode(r: &ChunkRecord) -> [u8; SPOOL_RECORD] {
    let mut b = [0u8; SPOOL_RECORD];
    b[..16].copy_from_slice(&r.hash.to_le_bytes());
    b[16..20].copy_from_slice(&r.file.to_le_bytes());
    b[20..].copy_from_slice(&r.len.to_le_bytes());
    b
}

#[inline]
pub(super) fn decode(b: &[u8; SPOOL_RECORD]) -> ChunkRecord {
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
pub(super) fn slot(v: &mut Vec<u32>, id: u32) -> &mut u32 {
    let i = id as usize;
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

/// What pass 1 learns from the partition file besides the spooled
/// records: the counts per file, the `F` lines and their components, the
/// header and what fsim-partition dropped.
pub(super) struct Pass1 {
    pub(super) check: InputCheck,
    pub(super) seen: Digest,
    pub(super) recs_per_file: Vec<u32>,
    pub(super) chunks_per_file: Vec<u32>,
    /// (hash, file) of the previous record: the records' order is checked.
    pub(super) prev: Option<(u128, u32)>,
    pub(super) files: Vec<FileLine>,
    /// Index into `comps` of each of `files`.
    pub(super) comp_of_file: Vec<u32>,
    pub(super) comps: Vec<Component>,
    /// Component id -> index into `comps`.
    pub(super) comp_index: HashMap<u32, u32>,
    pub(super) trailer_files: Option<u64>,
    /// What fsim-partition dropped, passed on to the report.
    pub(super) pruned: Option<Pruned>,
    /// A re-run's partition of the changed chunks alone (`changed-only=N`),
    /// passed on to the analysis, which then needs the earlier run.
    pub(super) changed_only: Option<u64>,
    /// Where the records are in the input, and whether they can be copied
    /// from it as they are.
    pub(super) span: Span,
}

/// The bytes of the partition file that hold its records: one run of
/// lines (no comment among them), each written as fsim-binpack writes a
/// record. Then a bins file of one bin is the partition's records as they
/// are, copied from the input instead of spooled, parsed and written again
/// ([`copy_records`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    /// Offset of the first record's line, and just past the last one's.
    pub(super) start: u64,
    pub(super) end: u64,
    /// Every record line one run, as [`ChunkRecord::write`] writes it.
    pub(super) verbatim: bool,
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
            changed_only: None,
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
                self.changed_only = t.changed_only;
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
pub(super) fn spool_partition<R: std::io::BufRead>(
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
/// is within `capacity` (a compressed input, `make report`'s, counted as
/// the text it holds at most: zstd keeps a partition's records in about a
/// sixth of their text, deflate in about a quarter). Only a hint: a file that takes more bins is
/// spooled after pass 1 ([`spool_span`]), the output the same; without
/// it, the spool would hold the records again beside the input.
pub(super) fn one_bin_input(path: &Path, capacity: u64) -> Option<Kept> {
    const SHORTEST_RECORD: u64 = (HASH_WIDTH + ID_WIDTH + 4) as u64;
    if path.as_os_str() == "-" {
        return None;
    }
    use std::os::unix::fs::FileExt;
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok().filter(|m| m.is_file())?;
    let mut magic = [0u8; 4];
    let n = file.read_at(&mut magic, 0).ok()?;
    let codec = Codec::of(&magic[..n]);
    let kept = Kept {
        file,
        len: meta.len(),
        modified: meta.modified().ok(),
        codec,
    };
    // The header line, read where it is (pass 1 reads from the start).
    let mut first = vec![0u8; 1 << 16];
    let whole = Span {
        start: 0,
        end: if codec.is_compressed() {
            1 << 16
        } else {
            meta.len().min(1 << 16)
        },
        verbatim: false,
    };
    let mut n = 0;
    let mut head = kept.span_reader(&whole).ok()?;
    while n < first.len() {
        match head.read(&mut first[n..]).ok()? {
            0 => break,
            k => n += k,
        }
    }
    drop(head);
    let line = &first[..memchr::memchr(b'\n', &first[..n])?];
    let Ok(Line::Header(Kind::Partition, header)) = classify_line(line) else {
        return None;
    };
    let files = PartitionHeader::parse(&header).ok()?.files?;
    let text_per_byte = match codec {
        Codec::Text => 1,
        Codec::Gzip => 4,
        Codec::Zstd => 6,
    };
    let records = meta.len() * text_per_byte / SHORTEST_RECORD;
    (estimate_memory(files, records, records) <= capacity).then_some(kept)
}

/// The input file whose records pass 1 left in place, and its size and
/// time then: read again by [`spool_span`] or [`copy_records`] through the
/// same descriptor, and checked unchanged.
pub(super) struct Kept {
    pub(super) file: File,
    pub(super) len: u64,
    pub(super) modified: Option<std::time::SystemTime>,
    /// How its bytes are stored: in a compressed one, spans are offsets
    /// in its decompressed text.
    pub(super) codec: Codec,
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
    /// In a compressed stream, the text before the span is decompressed
    /// and skipped.
    fn span_reader<'k>(&'k self, span: &Span) -> std::io::Result<Box<dyn BufRead + 'k>> {
        let raw = |at, end| SpanReader {
            file: &self.file,
            at,
            end,
        };
        if !self.codec.is_compressed() {
            let r = BufReader::with_capacity(1 << 20, raw(span.start, span.end));
            return Ok(Box::new(r));
        }
        let whole = BufReader::with_capacity(1 << 20, raw(0, self.len));
        let mut text = self.codec.decode(whole)?;
        std::io::copy(&mut (&mut text).take(span.start), &mut std::io::sink())?;
        Ok(Box::new(text.take(span.end - span.start)))
    }
}

/// A byte range of a file as a [`Read`]: the file ending before the range
/// does is an error, not the end of the records.
pub(super) struct SpanReader<'k> {
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
pub(super) fn spool_span(kept: &Kept, span: &Span, spool_path: &Path, name: &str) -> Result<()> {
    let mut spool = BufWriter::with_capacity(
        1 << 20,
        File::create(spool_path).ctx(|| format!("cannot create {}", spool_path.display()))?,
    );
    let mut records = kept
        .span_reader(span)
        .ctx(|| format!("reading {name} again"))?;
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
pub(super) fn copy_records(kept: &Kept, span: &Span, out: &mut Output, name: &str) -> Result<()> {
    let mut records = kept
        .span_reader(span)
        .ctx(|| format!("copying the records of {name}"))?;
    let copied =
        std::io::copy(&mut records, out).ctx(|| format!("copying the records of {name}"))?;
    if copied != span.end - span.start {
        return Err(Error::msg(format!("{name} changed while it was read")));
    }
    kept.unchanged(name)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
