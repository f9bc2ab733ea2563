//! Reading a bins stream: the header, each `#bin` line and its F lines,
//! the records (checked for order and counts), each bin routed to the
//! in-memory or the out-of-core path once its file table is read.

use super::files::BinFiles;
use super::graph::Graph;
use super::groups::Grouper;
use super::spill::Spiller;
use super::{Analysis, Options, BYTES_PER_RECORD};
use crate::chunking::features::{self, MethodSpec};
use crate::error::Result;
use crate::formats::bins::{parse_record, FileLine};
use crate::formats::headers::{BinsHeader, BinsTrailer};
use crate::formats::{
    self, classify_line, ChunkRecord, Digest, InputCheck, Kind, Line, LineReader,
};
use crate::io::progress::Progress;
use std::io::BufRead;

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
                let th = &opts.thresholds;
                g.defer(&self.files, th, opts.defer_from);
                a.visits += match &opts.only {
                    None => g.all_pairs(&self.files, th, opts.threads, &mut a.pairs)?,
                    Some(c) => g.changed_pairs(&self.files, th, c, &mut a.pairs)?,
                };
            }
            Some(Route::Spill(mut s)) => {
                self.grouper.flush(&mut s)?;
                a.spilled_bins += 1;
                a.spilled_records += s.emitted;
                let (files, th, pairs) = (&self.files, &opts.thresholds, &mut a.pairs);
                let only = opts.only.as_deref();
                let mut stored = Ok(());
                s.finish(|key, common, shared| {
                    let (x, y) = ((key >> 32) as usize, (key & 0xffff_ffff) as usize);
                    if only.is_some_and(|c| !c.any(files.ids[x], files.ids[y])) {
                        return;
                    }
                    if let (Some(p), Ok(())) = (files.pair(x, y, common, shared, th), &stored) {
                        stored = pairs.push(p);
                    }
                })?;
                stored?;
            }
        }
        progress.set_count(a.bins);
        Ok(())
    }

    /// Choose the path once the F lines are read (at the first record).
    fn start(&mut self, opts: &Options) {
        self.files.index_ids();
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
    let mut s = BinsReader {
        opts,
        progress,
        check: InputCheck::new(Kind::Bins, "records"),
        seen: Digest::default(),
        a: Analysis::new(opts),
        cur: None,
        announced_bins: None,
        spec: None,
        trailer_seen: false,
    };
    let name = r.name().to_string();
    loop {
        let ln = r.line_number() + 1;
        let Some(raw) = r.next_raw()? else { break };
        let at = |m: String| crate::Error::input(&name, ln, m);
        match raw.first() {
            Some(b'#') => s.meta_line(raw, &name, ln)?,
            _ if s.trailer_seen => return Err(at("data after the trailer".into())),
            first => {
                let Some(bin) = s.cur.as_mut() else {
                    return Err(at("data before the first '#bin' line: expected a bins file written by fsim-binpack".into()));
                };
                if first == Some(&b'F') {
                    bin.file_line(raw).map_err(at)?;
                } else {
                    let rec = parse_record(raw).map_err(at)?;
                    s.seen.add(&rec);
                    bin.record(&rec, opts)?.map_err(at)?;
                }
            }
        }
    }
    if let Some(b) = s.cur.take() {
        // No trailer: still check the bin's counts for a precise message.
        b.finish(opts, &mut s.a, r.name(), r.line_number(), progress)?;
    }
    s.check.finish(&s.seen, r.name(), r.line_number())?;
    if let Some(b) = s.announced_bins {
        if b != s.a.bins {
            return Err(r.error(format!(
                "{} bins read but the header announced bins={b}",
                s.a.bins
            )));
        }
    }
    s.a.params = s
        .check
        .params
        .as_ref()
        .map(formats::stage_params)
        .unwrap_or_default();
    Ok(s.a)
}

/// What reading a bins stream keeps from line to line: the checks, the
/// analysis so far and the bin being read.
struct BinsReader<'a> {
    opts: &'a Options,
    progress: &'a Progress,
    check: InputCheck,
    seen: Digest,
    a: Analysis,
    cur: Option<Bin>,
    announced_bins: Option<u64>,
    /// The feature method of the bins, if not chunks.
    spec: Option<MethodSpec>,
    trailer_seen: bool,
}

impl BinsReader<'_> {
    /// A `#` line at line `ln` of `name`: the header, the trailer (which
    /// finishes the last bin) or a `#bin` line (which finishes the bin
    /// before and starts its own).
    fn meta_line(&mut self, raw: &[u8], name: &str, ln: u64) -> Result<()> {
        let at = |m: String| crate::Error::input(name, ln, m);
        match classify_line(raw).map_err(at)? {
            Line::Header(kind, p) => {
                if self.check.params.is_some() {
                    return Err(at(
                        "a second header: fsim-analyze reads one bins file".into()
                    ));
                }
                let h = BinsHeader::parse(&p).map_err(at)?;
                let bins = h.bins;
                if h.chunk
                    .method
                    .as_deref()
                    .is_some_and(features::is_feature_method)
                {
                    self.spec = Some(MethodSpec::from_chunk_params(&h.chunk).map_err(at)?);
                }
                self.check.header(kind, p).map_err(at)?;
                self.progress.set_count_total(bins.unwrap_or(0));
                self.announced_bins = Some(bins.ok_or_else(|| {
                    at("header without bins=: expected a bins file written by fsim-binpack".into())
                })?);
            }
            Line::Trailer(kind, p) => {
                if let Some(b) = self.cur.take() {
                    b.finish(self.opts, &mut self.a, name, ln, self.progress)?;
                }
                self.check.trailer(kind, &p).map_err(at)?;
                let files = BinsTrailer::parse(&p).map_err(at)?.files;
                if files != self.a.files {
                    return Err(at(format!(
                        "{} F lines read but the trailer announced files={files}",
                        self.a.files
                    )));
                }
                self.trailer_seen = true;
            }
            Line::Comment(c) if c.starts_with(b"#bin\t") => {
                if self.check.params.is_none() {
                    return Err(at("'#bin' line before the '#fsim bins v1' header".into()));
                }
                if self.trailer_seen {
                    return Err(at("'#bin' line after the trailer".into()));
                }
                let mut head = parse_bin_line(c).map_err(at)?;
                head.line = ln;
                if let Some(b) = self.cur.take() {
                    b.finish(self.opts, &mut self.a, name, ln, self.progress)?;
                }
                self.cur = Some(Bin {
                    head,
                    files: BinFiles {
                        spec: self.spec,
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
        Ok(())
    }
}

impl Bin {
    /// An `F` line of this bin: its file, a representative of its content
    /// or not, and its feature count for a feature method.
    fn file_line(&mut self, raw: &[u8]) -> std::result::Result<(), String> {
        if self.path.is_some() {
            return Err("F line after the bin's chunk records".into());
        }
        let f = FileLine::parse(raw)?;
        if self.files.ids.last().is_some_and(|&p| p >= f.id) {
            return Err("F lines of a bin are not in increasing id order".into());
        }
        let local = self.files.ids.len() as u32;
        let rep = *self.files.by_content.entry(f.content).or_insert(local) == local;
        self.files.ids.push(f.id);
        self.files.sizes.push(f.size);
        self.files.is_rep.push(rep);
        if self.files.spec.is_some() {
            let n = f.features.ok_or(
                "F line without its feature count (field 6): a feature-method bin file needs the counts fsim-partition writes",
            )?;
            self.files.features.push(n);
        }
        Ok(())
    }

    /// A chunk record of this bin, checked (sorted, of a file of the bin)
    /// and fed to the bin's grouper (the first one chooses the bin's route:
    /// in memory or out of core). The inner result is the record's error.
    #[inline]
    fn record(
        &mut self,
        rec: &ChunkRecord,
        opts: &Options,
    ) -> Result<std::result::Result<(), String>> {
        self.records += 1;
        if self.prev.is_some_and(|p| (rec.hash, rec.file) < p) {
            return Ok(Err(
                "chunk records of a bin are not sorted by (hash, file id)".into(),
            ));
        }
        self.prev = Some((rec.hash, rec.file));
        if self.path.is_none() {
            self.start(opts);
        }
        let Some(local) = self.files.local(rec.file) else {
            return Ok(Err(format!(
                "record of file {} which has no F line in this bin",
                formats::id_string(rec.file)
            )));
        };
        let local = self.files.is_rep[local].then_some(local as u32);
        match self.path.as_mut() {
            Some(Route::Memory(g)) => self.grouper.feed(rec, local, g),
            Some(Route::Spill(s)) => self.grouper.feed(rec, local, s),
            None => Ok(Ok(())),
        }
    }
}

/// A re-run in which no file changed since the earlier run: no pair can
/// have a changed file, so the bins are not analysed (nor their records
/// read); their header, checked, gives the parameters the pairs carry.
pub fn header_only<R: BufRead>(mut input: R, name: &str, opts: &Options) -> Result<Analysis> {
    let mut line = Vec::new();
    input
        .read_until(b'\n', &mut line)
        .map_err(|e| crate::Error::Io {
            context: format!("reading {name}"),
            source: e,
        })?;
    let raw = line.strip_suffix(b"\n").unwrap_or(&line);
    let at = |m: String| crate::Error::input(name, 1, m);
    let expected = || at("expected a '#fsim bins v1' header (written by fsim-binpack)".into());
    match classify_line(raw).map_err(at)? {
        Line::Header(Kind::Bins, p) => {
            BinsHeader::parse(&p).map_err(at)?;
            let mut a = Analysis::new(opts);
            a.params = formats::stage_params(&p);
            Ok(a)
        }
        _ => Err(expected()),
    }
}
