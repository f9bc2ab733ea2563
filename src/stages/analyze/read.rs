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
use crate::formats::{self, classify_line, Digest, InputCheck, Kind, Line, LineReader};
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
                match &opts.only {
                    None => {
                        g.all_pairs(&self.files, &opts.thresholds, opts.threads, &mut a.pairs)?
                    }
                    Some(c) => g.changed_pairs(&self.files, &opts.thresholds, c, &mut a.pairs)?,
                }
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
    let mut a = Analysis::new(opts);
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
    Ok(a)
}
