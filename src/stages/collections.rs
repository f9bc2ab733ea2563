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
use crate::formats::changed::{ChangedSet, Move, BEFORE_FILES, BEFORE_PATHS};
use crate::formats::collections::{check_name, Collection};
use crate::formats::files::TableDigest;
use crate::formats::headers::{in_file, ChunkParams, FilesHeader, FilesTrailer};
use crate::formats::open_input;
use crate::formats::Params;
use crate::formats::{
    digest_params, escape_path_string, write_header, write_trailer, ChunkRecord, Digest, FileEntry,
    InputCheck, Kind, Line, LineReader,
};
use crate::io::Output;
use crate::stages::reuse::ChangedHashes;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------
// fsim-merge
// ---------------------------------------------------------------------------

/// One input of `fsim-merge`.
#[derive(Debug, Clone)]
pub struct Input {
    /// The collection's name; `None` for an earlier merge whose
    /// collections keep their own names.
    pub name: Option<String>,
    pub files: PathBuf,
    pub chunks: PathBuf,
}

impl Input {
    /// Parse `NAME=DIR` (DIR holds files.tsv and chunks.tsv),
    /// `NAME=FILES.tsv,CHUNKS.tsv`, or either without `NAME=`: an earlier
    /// merge (a make work folder of named collections), whose collections
    /// keep their names. That is how a new production is compared with the
    /// ones a case already holds, without reading their files again.
    pub fn parse(s: &str) -> std::result::Result<Input, String> {
        let (name, rest) = match s.split_once('=') {
            Some((name, rest)) => {
                check_name(name).map_err(|m| {
                    format!("{m} (in {s:?}: expected NAME=DIR, NAME=FILES.tsv,CHUNKS.tsv or a merged DIR)")
                })?;
                (Some(name.to_string()), rest)
            }
            None => (None, s),
        };
        if rest.is_empty() {
            return Err(format!("{s:?}: no folder after the name"));
        }
        let (files, chunks) = match rest.split_once(',') {
            Some((f, c)) => (PathBuf::from(f), PathBuf::from(c)),
            None => (
                Path::new(rest).join("files.tsv"),
                Path::new(rest).join("chunks.tsv"),
            ),
        };
        Ok(Input {
            name,
            files,
            chunks,
        })
    }

    /// How the input is named in messages: its name, else its file table.
    fn label(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => self.files.display().to_string(),
        }
    }

    /// The collections this input adds, their ids from 0 (before the
    /// offset): one named by `NAME=` (its size set when the table is
    /// read), or the earlier merge's own, read from its comment lines.
    fn collections(&self) -> Result<Vec<Collection>> {
        if let Some(name) = &self.name {
            return Ok(vec![Collection {
                name: name.clone(),
                first: 0,
                files: 0,
                source: escape_path_string(self.files.as_os_str().as_encoded_bytes()),
            }]);
        }
        let inner = crate::formats::collections::read(&self.files)?;
        if inner.is_empty() {
            return Err(Error::msg(format!(
                "{} names no collections (no #collection lines): give it a name, NAME={}",
                self.files.display(),
                self.files.parent().unwrap_or(Path::new(".")).display()
            )));
        }
        Ok(inner)
    }
}

/// Options of `fsim-merge`.
#[derive(Debug, Clone)]
pub struct MergeConfig {
    pub inputs: Vec<Input>,
    pub files_out: PathBuf,
    pub output: Option<PathBuf>,
    pub quiet: bool,
    /// The last input is the earlier run of a case (`AGAINST`), the others
    /// new: write the changed set of a re-run here ([`Against`]).
    pub changed_out: Option<PathBuf>,
}

/// What a merge did.
#[derive(Debug, Clone, Default)]
pub struct MergeSummary {
    pub collections: usize,
    pub files: u64,
    pub bytes: u64,
    pub records: u64,
    pub skipped: u64,
    /// Files met in more than one collection ([`mark_same_files`]).
    pub same_files: u64,
    pub seconds: f64,
}

impl MergeSummary {
    pub fn line(&self) -> String {
        format!(
            "fsim-merge: {} collections, {} files, {} bytes, {} chunks, {} skipped, {} met twice, {:.2} s",
            self.collections,
            self.files,
            self.bytes,
            self.records,
            self.skipped,
            self.same_files,
            self.seconds
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

/// The changed set of a merge against an earlier run (its last input):
/// every other input's files are new, and so are the chunks they hold;
/// the earlier run's files keep their order, their ids moved past the new
/// ones (one run). The sort, the partition and the bin packing then take
/// only the records of the new files' chunks, as a re-run of fsim-chunk's
/// (docs/pipeline.md, "Re-runs").
#[derive(Default)]
struct Against {
    new_files: Vec<u32>,
    hashes: ChangedHashes,
    moves: Vec<Move>,
    before: Params,
}

impl Against {
    /// The earlier run's table at ids from `offset`: where its ids go, and
    /// what its dropped list names it by (`files=`, `paths=`).
    fn earlier(&mut self, entries: &[FileEntry], offset: u32) {
        let mut paths = 0u128;
        let mut esc = Vec::new();
        for e in entries {
            esc.clear();
            crate::formats::escape_path(&e.path, &mut esc);
            paths = paths.wrapping_add(crate::formats::files::path_mix(e.id, &esc));
        }
        if !entries.is_empty() {
            self.moves.push(Move {
                from: 0,
                to: offset,
                len: entries.len() as u32,
            });
        }
        self.before = Params::new()
            .with(BEFORE_FILES, entries.len())
            .with(BEFORE_PATHS, crate::formats::hex128(paths));
    }

    /// The set, or none when its chunks are too many, or when a path is
    /// met twice (a folder and its sub-folder, one folder in two
    /// collections): that maps an earlier file to two of this run's, and
    /// the analysis, which finds the earlier files by path, would take more
    /// files for changed than the set holds the chunks of.
    fn finish(
        self,
        chunk: Option<&ChunkParams>,
        written: &Digest,
        paths_repeat: bool,
    ) -> Option<ChangedSet> {
        if paths_repeat {
            return None;
        }
        let params = chunk?
            .to_params()
            .merged(&digest_params(written, "records"))
            .merged(&self.before);
        Some(ChangedSet {
            params,
            files: self.new_files,
            moves: self.moves,
            hashes: self.hashes.finish()?,
        })
    }
}

/// Merge collections; see the module doc. Every file table is read and
/// every name checked before anything is written; the file table is
/// renamed into place before the chunk stream is finished, as fsim-chunk
/// does.
pub fn merge(cfg: &MergeConfig) -> Result<MergeSummary> {
    let t0 = std::time::Instant::now();
    if cfg.inputs.is_empty() {
        return Err(Error::msg("no collections to merge: give NAME=DIR..."));
    }
    let (planned, names) = plan(&cfg.inputs)?;
    let mut cols: Vec<Collection> = Vec::with_capacity(names.len());
    let mut out = Output::create(cfg.output.as_deref())?;
    let mut chunk_params: Option<ChunkParams> = None;
    let mut entries: Vec<FileEntry> = Vec::new();
    let mut written = Digest::default();
    let mut summary = MergeSummary {
        collections: names.len(),
        ..Default::default()
    };
    let mut buf = Vec::with_capacity(1 << 16);
    let chunk_paths: Vec<&Path> = cfg.inputs.iter().map(|i| i.chunks.as_path()).collect();
    let progress = crate::io::progress::Progress::for_inputs("fsim-merge", &chunk_paths, cfg.quiet);
    let mut against = cfg.changed_out.as_ref().map(|_| Against::default());
    let last = cfg.inputs.len() - 1;
    for (i, (inp, planned)) in cfg.inputs.iter().zip(planned).enumerate() {
        let table = read_table(&inp.files)?;
        let params = table.chunk;
        match &chunk_params {
            None => {
                write_chunks_header(&params, names.len(), &mut buf);
                chunk_params = Some(params.clone());
            }
            Some(first) => {
                if let Some(d) = params.difference(first) {
                    return Err(Error::msg(format!(
                        "collection {} was chunked with other parameters than {}: {d}; chunk every collection with the same --method and --avg-size",
                        inp.label(),
                        cfg.inputs[0].label()
                    )));
                }
            }
        }
        let offset = entries.len() as u64;
        let n = table.entries.len() as u64;
        if offset + n > u32::MAX as u64 + 1 {
            return Err(Error::msg("more than 2^32 files in all collections"));
        }
        cols.extend(placed(inp, planned, offset as u32, n as usize)?);
        summary.skipped += table.skipped;
        let mut new_hashes = None;
        if let Some(a) = &mut against {
            if i == last {
                a.earlier(&table.entries, offset as u32);
            } else {
                a.new_files.extend(offset as u32..(offset + n) as u32);
                new_hashes = Some(&mut a.hashes);
            }
        }
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
        let to = Copied {
            written: &mut written,
            hashes: new_hashes,
            buf: &mut buf,
            out: &mut out,
        };
        copy_chunks(inp, &params, at, &table.records, &progress, to)?;
    }
    progress.finish();
    let (same_files, paths_repeat) = mark_same_files(&mut entries);
    summary.same_files = same_files;
    write_trailer(Kind::Chunks, &digest_params(&written, "records"), &mut buf);

    // The file table first (renamed into place), then the chunk stream.
    let chunk_for_set = chunk_params.clone();
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
    if let (Some(path), Some(a)) = (&cfg.changed_out, against) {
        let set = a.finish(chunk_for_set.as_ref(), &written, paths_repeat);
        crate::stages::reuse::write_changed_set(path, set.as_ref())?;
    }
    summary.files = entries.len() as u64;
    summary.records = written.count;
    summary.seconds = t0.elapsed().as_secs_f64();
    Ok(summary)
}

/// The merged chunk stream's header: the chunking of the first input,
/// the number of collections.
fn write_chunks_header(params: &ChunkParams, collections: usize, buf: &mut Vec<u8>) {
    let h = FilesHeader {
        chunk: params.clone(),
        collections: Some(collections as u64),
        merged: Some(true),
        shard: None,
    };
    write_header(Kind::Chunks, &h.to_params(), buf);
}

/// Every input's collections, read first (comment lines only) so that
/// nothing is written when a name is given twice; and all their names.
fn plan(inputs: &[Input]) -> Result<(Vec<Vec<Collection>>, Vec<String>)> {
    let mut planned: Vec<Vec<Collection>> = Vec::with_capacity(inputs.len());
    let mut names: Vec<String> = Vec::new();
    for inp in inputs {
        let cs = inp.collections()?;
        for c in &cs {
            if names.contains(&c.name) {
                let whose = match inp.name {
                    None => format!(" (it is one of {}'s)", inp.files.display()),
                    Some(_) => String::new(),
                };
                return Err(Error::msg(format!(
                    "collection {} is given twice{whose}",
                    c.name
                )));
            }
            names.push(c.name.clone());
        }
        planned.push(cs);
    }
    Ok((planned, names))
}

/// An input's collections at their place in the merged table: ids from
/// `offset`, a named input's size its table's `files`, an earlier merge's
/// checked to cover its table.
fn placed(
    inp: &Input,
    mut cols: Vec<Collection>,
    offset: u32,
    files: usize,
) -> Result<Vec<Collection>> {
    if inp.name.is_some() {
        cols[0].files = files as u32;
    } else {
        crate::formats::collections::of_files(&cols, files)
            .map_err(|m| Error::msg(format!("{}: {m}", inp.files.display())))?;
    }
    for c in &mut cols {
        c.first += offset;
    }
    Ok(cols)
}

/// Identity given to the names of a file met in several collections,
/// (`SAME_FILE_DEVICE`, the first name's id): no file system has this
/// device number, so it never joins a real (device, inode).
pub const SAME_FILE_DEVICE: u64 = u64::MAX;

/// One file met in two collections (the same folder named twice, a folder
/// and its sub-folder, an earlier run's collection and a new one over the
/// same files) is one file, not a copy of itself: its entries have one
/// path, and the same size, modification time and content. They are given
/// one identity on disk, as the walk gives the names of a hard link
/// ([`crate::formats::FileView::link`]), so the report lists them as names
/// of one file, counts no overhead for them and plans nothing on them.
/// So are the members of such an archive (the same path inside it, the
/// same bytes): one member met twice, not an identical set of two.
/// Returns the entries marked after the first of their file, and whether
/// any path is met twice (marked or not). Sorts a `u32` a file by path:
/// the entries stay in id order.
fn mark_same_files(entries: &mut [FileEntry]) -> (u64, bool) {
    let mut by_path: Vec<u32> = (0..entries.len() as u32).collect();
    by_path.sort_unstable_by(|&a, &b| {
        let (x, y) = (&entries[a as usize], &entries[b as usize]);
        x.path.cmp(&y.path).then(a.cmp(&b))
    });
    let same = |x: &FileEntry, y: &FileEntry| {
        x.path == y.path
            && (x.size, x.mtime_s, x.mtime_ns, x.content)
                == (y.size, y.mtime_s, y.mtime_ns, y.content)
            && x.view.raw_size == y.view.raw_size
    };
    let mut marked = 0;
    let mut start = 0;
    while start < by_path.len() {
        let first = by_path[start] as usize;
        let mut end = start + 1;
        while end < by_path.len() && same(&entries[first], &entries[by_path[end] as usize]) {
            end += 1;
        }
        if end - start >= 2 {
            let link = entries[first]
                .view
                .link
                .unwrap_or((SAME_FILE_DEVICE, first as u64));
            for &i in &by_path[start..end] {
                entries[i as usize].view.link = Some(link);
            }
            marked += (end - start) as u64 - 1;
        }
        start = end;
    }
    let repeated = by_path
        .windows(2)
        .any(|w| entries[w[0] as usize].path == entries[w[1] as usize].path);
    (marked, repeated)
}

/// Where a collection's files go in the merged table: its first id and
/// its number of files.
#[derive(Clone, Copy)]
struct Offset {
    first: u32,
    files: u64,
}

/// Where a collection's records go: the merged stream (`out`, through
/// `buf`) and its digest; a new collection's hashes to the changed set.
struct Copied<'a> {
    written: &'a mut Digest,
    hashes: Option<&'a mut ChangedHashes>,
    buf: &'a mut Vec<u8>,
    out: &'a mut Output,
}

/// Copy a collection's chunk stream to `out` (through `buf`), its file
/// ids offset, checked against its file table (`params`, `records`).
fn copy_chunks(
    inp: &Input,
    params: &ChunkParams,
    at: Offset,
    records: &Digest,
    progress: &crate::io::progress::Progress,
    to: Copied,
) -> Result<()> {
    let Copied {
        written,
        mut hashes,
        buf,
        out,
    } = to;
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
                if let Some(h) = hashes.as_deref_mut() {
                    h.push(rec.hash);
                }
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
        assert!(Input::parse("x=").is_err());
        // A folder alone: an earlier merge whose collections keep their names.
        let i = Input::parse("case/run1").unwrap();
        assert_eq!(i.name, None);
        assert_eq!(i.files, Path::new("case/run1/files.tsv"));
    }
}
