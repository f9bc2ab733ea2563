//! Collections (paper section 4): several repositories analysed together,
//! e.g. before merging collection X into Y, "is there substantial
//! duplication between them?". Each collection is chunked on its own (at
//! another site, on another machine, at another time); only its metadata
//! travels: its file table and its chunk file. `fsim-merge` joins them into
//! one file table and one chunk stream with file ids offset so they never
//! collide, and records which ids belong to which collection in the file
//! table, one comment line per collection after the header:
//!
//! ```text
//! #collection<TAB><name><TAB><first id><TAB><files><TAB><escaped source>
//! ```
//!
//! Comment lines are ignored by every reader that does not look for them,
//! so a merged file table is an ordinary file table, and a table
//! without such lines is one unnamed collection. fsim-report reads them to
//! name each file's collection, summarise collection by collection, and
//! keep only the links across collections when asked.
//!
//! Memory: the file tables of the inputs, one at a time (bounded by files);
//! chunk records are streamed.

use crate::error::{Error, Result};
use crate::formats::collections::{check_name, Collection};
use crate::formats::files::TableDigest;
use crate::formats::headers::{in_file, ChunkParams, FilesHeader, FilesTrailer};
use crate::formats::open_input;
use crate::formats::{
    digest_params, escape_path_string, write_header, write_trailer, ChunkRecord, Digest, FileEntry,
    InputCheck, Kind, Line, LineReader,
};
use crate::io::Output;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------
// fsim-merge
// ---------------------------------------------------------------------------

/// One input of `fsim-merge`.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub files: PathBuf,
    pub chunks: PathBuf,
}

impl Input {
    /// Parse `NAME=DIR` (DIR holds files.tsv and chunks.tsv) or
    /// `NAME=FILES.tsv,CHUNKS.tsv`.
    pub fn parse(s: &str) -> std::result::Result<Input, String> {
        let (name, rest) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?}: expected NAME=DIR or NAME=FILES.tsv,CHUNKS.tsv"))?;
        check_name(name)?;
        let (files, chunks) = match rest.split_once(',') {
            Some((f, c)) => (PathBuf::from(f), PathBuf::from(c)),
            None => (
                Path::new(rest).join("files.tsv"),
                Path::new(rest).join("chunks.tsv"),
            ),
        };
        Ok(Input {
            name: name.to_string(),
            files,
            chunks,
        })
    }
}

/// Options of `fsim-merge`.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    pub inputs: Vec<Input>,
    pub files_out: PathBuf,
    pub output: Option<PathBuf>,
    pub quiet: bool,
}

/// What a merge did.
#[derive(Debug, Clone, Default)]
pub struct MergeSummary {
    pub collections: usize,
    pub files: u64,
    pub bytes: u64,
    pub records: u64,
    pub skipped: u64,
    pub seconds: f64,
}

impl MergeSummary {
    pub fn line(&self) -> String {
        format!(
            "fsim-merge: {} collections, {} files, {} bytes, {} chunks, {} skipped, {:.2} s",
            self.collections, self.files, self.bytes, self.records, self.skipped, self.seconds
        )
    }
}

/// A file table with its trailer.
struct Table {
    chunk: ChunkParams,
    entries: Vec<FileEntry>,
    records: Digest,
    skipped: u64,
}

fn read_table(path: &Path) -> Result<Table> {
    let (entries, params) = crate::formats::files::read_file_table(path)?;
    // The trailer again, for the chunk stream's count and digest.
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let mut t = None;
    while let Some(line) = r.next_line()? {
        if let Line::Trailer(Kind::Files, p) = line {
            t = Some(p);
        }
    }
    let t = t.ok_or_else(|| Error::msg(format!("{name}: no '#end files' trailer")))?;
    let header = FilesHeader::from_params(&params, &name)?;
    if header.shard.is_some() {
        return Err(Error::msg(format!(
            "{name} is a shard's file table: merge the shards first (fsim-chunk --previous)"
        )));
    }
    let t = in_file(&name, FilesTrailer::parse(&t))?;
    let records = Digest {
        count: t
            .records
            .ok_or_else(|| Error::msg(format!("{name}: trailer without records=")))?,
        sum: t
            .digest
            .ok_or_else(|| Error::msg(format!("{name}: trailer without digest=")))?,
    };
    Ok(Table {
        chunk: header.chunk,
        entries,
        records,
        skipped: t.skipped.unwrap_or(0),
    })
}

/// Merge collections; see the module doc. The file table is renamed into
/// place before the chunk stream is finished, as fsim-chunk does.
pub fn merge(cfg: &MergeConfig) -> Result<MergeSummary> {
    let t0 = std::time::Instant::now();
    if cfg.inputs.is_empty() {
        return Err(Error::msg("no collections to merge: give NAME=DIR..."));
    }
    for (i, a) in cfg.inputs.iter().enumerate() {
        if cfg.inputs[..i].iter().any(|b| b.name == a.name) {
            return Err(Error::msg(format!("collection {} is given twice", a.name)));
        }
    }
    let mut out = Output::create(cfg.output.as_deref())?;
    let mut chunk_params: Option<ChunkParams> = None;
    let mut cols = Vec::new();
    let mut entries: Vec<FileEntry> = Vec::new();
    let mut written = Digest::default();
    let mut summary = MergeSummary {
        collections: cfg.inputs.len(),
        ..Default::default()
    };
    let mut buf = Vec::with_capacity(1 << 16);
    let chunk_paths: Vec<&Path> = cfg.inputs.iter().map(|i| i.chunks.as_path()).collect();
    let progress = crate::io::progress::Progress::for_inputs("fsim-merge", &chunk_paths, cfg.quiet);
    for inp in &cfg.inputs {
        let table = read_table(&inp.files)?;
        let params = table.chunk;
        match &chunk_params {
            None => {
                let h = FilesHeader {
                    chunk: params.clone(),
                    collections: Some(cfg.inputs.len() as u64),
                    merged: Some(true),
                    shard: None,
                };
                write_header(Kind::Chunks, &h.to_params(), &mut buf);
                chunk_params = Some(params.clone());
            }
            Some(first) => {
                if let Some(d) = params.difference(first) {
                    return Err(Error::msg(format!(
                        "collection {} was chunked with other parameters than {}: {d}; chunk every collection with the same --method and --avg-size",
                        inp.name, cfg.inputs[0].name
                    )));
                }
            }
        }
        let offset = entries.len() as u64;
        let n = table.entries.len() as u64;
        if offset + n > u32::MAX as u64 + 1 {
            return Err(Error::msg("more than 2^32 files in all collections"));
        }
        cols.push(Collection {
            name: inp.name.clone(),
            first: offset as u32,
            files: n as u32,
            source: escape_path_string(inp.files.as_os_str().as_encoded_bytes()),
        });
        summary.skipped += table.skipped;
        for mut e in table.entries {
            e.id += offset as u32;
            summary.bytes += e.size;
            entries.push(e);
        }
        // The chunk stream, ids offset.
        let at = Offset {
            first: offset as u32,
            files: n,
        };
        copy_chunks(
            inp,
            &params,
            at,
            &table.records,
            &progress,
            &mut written,
            &mut buf,
            &mut out,
        )?;
    }
    progress.finish();
    write_trailer(Kind::Chunks, &digest_params(&written, "records"), &mut buf);

    // The file table first (renamed into place), then the chunk stream.
    write_file_table(
        cfg,
        chunk_params,
        &cols,
        &entries,
        &written,
        summary.skipped,
    )?;
    out.write_all(&buf)?;
    out.finish()?;
    summary.files = entries.len() as u64;
    summary.records = written.count;
    summary.seconds = t0.elapsed().as_secs_f64();
    Ok(summary)
}

/// Where a collection's files go in the merged table: its first id and
/// its number of files.
#[derive(Clone, Copy)]
struct Offset {
    first: u32,
    files: u64,
}

/// Copy a collection's chunk stream to `out` (through `buf`), its file
/// ids offset, checked against its file table (`params`, `records`).
#[allow(clippy::too_many_arguments)]
fn copy_chunks(
    inp: &Input,
    params: &ChunkParams,
    at: Offset,
    records: &Digest,
    progress: &crate::io::progress::Progress,
    written: &mut Digest,
    buf: &mut Vec<u8>,
    out: &mut Output,
) -> Result<()> {
    let (input, name) = progress.open(&inp.chunks)?;
    let mut r = LineReader::new(input, name.clone());
    let mut check = InputCheck::new(Kind::Chunks, "records");
    let mut seen = Digest::default();
    while let Some((line, line_no)) = r.next_numbered()? {
        let err = |m: String| Error::input(&name, line_no, m);
        match line {
            Line::Header(k, p) => {
                let chunk = ChunkParams::parse(&p).map_err(err)?;
                if let Some(d) = chunk.difference(params) {
                    return Err(err(format!(
                        "chunking parameters differ from its file table {}: {d}",
                        inp.files.display()
                    )));
                }
                check.header(k, p).map_err(err)?;
            }
            Line::Trailer(k, p) => check.trailer(k, &p).map_err(err)?,
            Line::Comment(_) => {}
            Line::Data(d) => {
                let mut rec = ChunkRecord::parse(d)
                    .ok_or_else(|| err(format!("expected {}", ChunkRecord::EXPECTED)))?;
                seen.add(&rec);
                if rec.file as u64 >= at.files {
                    return Err(err(format!(
                        "file id {} is not in the file table {} ({} files)",
                        rec.file,
                        inp.files.display(),
                        at.files
                    )));
                }
                rec.file += at.first;
                written.add(&rec);
                rec.write(buf);
                if buf.len() >= 1 << 16 {
                    out.write_all(buf)?;
                    buf.clear();
                }
            }
        }
    }
    check.finish(&seen, &name, r.line_number())?;
    if seen != *records {
        return Err(Error::msg(format!(
            "{} does not belong to the file table {}: {} records read, {} announced",
            name,
            inp.files.display(),
            seen.count,
            records.count
        )));
    }
    Ok(())
}

/// The merged file table: the chunking parameters, the collections, every
/// file, the trailer of the merged chunk stream (`written`).
fn write_file_table(
    cfg: &MergeConfig,
    chunk_params: Option<ChunkParams>,
    cols: &[Collection],
    entries: &[FileEntry],
    written: &Digest,
    skipped: u64,
) -> Result<()> {
    let mut ft = Vec::with_capacity(entries.len() * 100 + 256);
    let fp = FilesHeader {
        chunk: chunk_params.unwrap_or_default(),
        collections: Some(cols.len() as u64),
        ..FilesHeader::default()
    };
    write_header(Kind::Files, &fp.to_params(), &mut ft);
    for c in cols {
        c.write(&mut ft);
    }
    let mut table = TableDigest::default();
    for e in entries {
        table.write(e, &mut ft);
    }
    write_trailer(
        Kind::Files,
        &FilesTrailer {
            files: Some(entries.len() as u64),
            records: Some(written.count),
            digest: Some(written.sum),
            skipped: Some(skipped),
            table_digest: Some(table.0),
            ..Default::default()
        }
        .to_params(),
        &mut ft,
    );
    let mut fo = Output::create(Some(&cfg.files_out))?;
    fo.write_all(&ft)?;
    fo.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::collections::of_files;

    #[test]
    fn collection_line_round_trip() {
        let c = Collection {
            name: "manuals".into(),
            first: 10,
            files: 5,
            source: "site\\ta/files.tsv".into(),
        };
        let mut v = Vec::new();
        c.write(&mut v);
        assert_eq!(Collection::parse(&v[..v.len() - 1]).unwrap(), c);
        let idx = of_files(std::slice::from_ref(&c), 15).unwrap_err();
        assert!(idx.contains("file id 0"));
    }

    #[test]
    fn input_forms() {
        let i = Input::parse("a=w/x").unwrap();
        assert_eq!(i.files, Path::new("w/x/files.tsv"));
        let i = Input::parse("b=f.tsv,c.tsv").unwrap();
        assert_eq!(i.chunks, Path::new("c.tsv"));
        assert!(Input::parse("bad name=x").is_err());
        assert!(Input::parse("x").is_err());
    }
}
