//! The merge mode (`--merge-forests`): the reduce side of a distributed
//! partition (scripts/spark, docs/distributed.md). The forests of the hash
//! ranges ([`super::run_forest`]) joined by one union-find into what
//! `fsim-partition` writes around the kept records: the header, the `F`
//! lines, the top dropped chunks and the trailer. The driver puts the kept
//! records (the ranges' own outputs) between them, so the partition file of
//! a distributed run is written by the same code as a single run's, and the
//! driver restates no format.

use super::*;
use crate::formats::bins::ComponentLine;
use crate::stages::partition::unionfind::Components;
use std::collections::BTreeMap;

/// Options of the merge mode (`fsim-partition --merge-forests`).
#[derive(Debug, Clone)]
pub struct MergeConfig {
    /// The run's file table: its chunking parameters, file count and
    /// records' digest (which the ranges' summaries must add up to), and
    /// each file's size and content for the `F` lines.
    pub files: PathBuf,
    /// The ranges' forest lines (`E`, `N`, `P`, `K`, `#dropped`,
    /// `#forest`).
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    /// Also write the components table here (`fsim-binpack
    /// --components`'s input): the `K` lines summed per component.
    pub components: Option<PathBuf>,
    /// Add each file's distinct features (its `N` lines summed) to its `F`
    /// line, as for feature methods.
    pub feature_counts: bool,
}

/// What the ranges' `#forest` lines add up to.
#[derive(Debug, Default)]
struct Sums {
    records: Digest,
    kept: Digest,
    dropped_chunks: u64,
    dropped_records: u64,
    dropped_digest: u128,
    /// The degree limit the ranges resolved (all equal), `None` without a
    /// range.
    limit: Option<u64>,
    site_chunks: u64,
    /// The ranges' `--site-names` (all equal).
    site_names: Option<u64>,
}

/// The ranges' forest lines, read: a union-find of their edges, the files
/// holding a dropped chunk, feature counts, dropped chunks and sums.
struct Forests {
    unions: Unions,
    pruned: FileBits,
    features: Option<Vec<u32>>,
    /// Kept (records, chunks) per file, from the `K` lines, when the
    /// components table is asked for.
    kept: Option<Vec<(u64, u64)>>,
    /// (degree, hash, line) of every range's top dropped chunks.
    dropped: Vec<(u64, u128, Vec<u8>)>,
    sums: Sums,
}

/// Merge mode: see the module doc. Checks that the ranges hold exactly
/// the records of the file table's run (count and digest) and agree on
/// the degree limit; nothing is written otherwise.
pub fn run_merge(cfg: &MergeConfig) -> Result<()> {
    let (table, kept_files, _) = load_table(&cfg.files, false)?;
    let f = read_forests(cfg, table.files)?;
    if f.sums.records != table.chunk_digest {
        return Err(Error::msg(format!(
            "the forests hold {} records (digest {}) but the file table {} was written with {} records (digest {}): a range is missing, repeated or of another run",
            f.sums.records.count,
            hex128(f.sums.records.sum),
            table.name,
            table.chunk_digest.count,
            hex128(table.chunk_digest.sum)
        )));
    }
    let chunk = ChunkParams::from_params(&table.params, &table.name)?;
    let tmpl = crate::stages::templates::PayloadCounter::new(
        crate::formats::templates::TemplateSet::load(&[], &chunk.to_params())?,
        table.files as usize,
    );
    let mut w = BgWriter::new(Output::create(cfg.output.as_deref())?);
    let mut head = Vec::new();
    let header = PartitionHeader {
        chunk,
        files: Some(table.files),
        limit: Some(f.sums.limit.unwrap_or(0)),
        templates: None,
    };
    write_header(Kind::Partition, &header.to_params(), &mut head);
    w.raw(&head)?;
    let comps = f.unions.into_components();
    let fl = FLines {
        comps: &comps,
        tmpl: &tmpl,
        feature_counts: f.features.as_deref(),
        want_path: None,
    };
    write_f_lines(&cfg.files, &table, kept_files.as_deref(), &fl, &mut w)?;
    let (components, files_in_components) = comps.multi_counts();
    let table_lines = f.kept.as_deref().map(|k| component_lines(&comps, k));
    drop(comps);
    let mut tail = top_dropped_lines(f.dropped);
    let s = &f.sums;
    let tp = PartitionTrailer {
        records: s.kept.count,
        digest: s.kept.sum,
        files: files_in_components,
        components,
        dropped_chunks: s.dropped_chunks,
        dropped_records: s.dropped_records,
        pruned_files: Some(f.pruned.count()),
        dropped_digest: Some(s.dropped_digest),
        site_chunks: s.site_chunks,
        site_names: s.site_names,
        changed_only: None,
    };
    let mut trailer = Vec::new();
    write_trailer(Kind::Partition, &tp.to_params(), &mut trailer);
    if let (Some(path), Some(lines)) = (&cfg.components, table_lines) {
        let mut out = Output::create(Some(path))?;
        out.write_all(&head)?;
        out.write_all(&lines)?;
        out.write_all(&trailer)?;
        out.finish()?;
    }
    tail.extend_from_slice(&trailer);
    w.raw(&tail)?;
    w.finish()?.finish()?;
    Ok(())
}

/// The components table's `C` lines: each component of two or more files
/// (by smallest file id) with its files and the kept records and chunks
/// of its files summed.
fn component_lines(comps: &Components, kept: &[(u64, u64)]) -> Vec<u8> {
    let mut sums: BTreeMap<u32, ComponentLine> = BTreeMap::new();
    for (file, &(records, chunks)) in kept.iter().enumerate() {
        let file = file as u32;
        if !comps.in_multi(file) {
            continue;
        }
        let id = comps.label(file);
        let c = sums.entry(id).or_insert(ComponentLine {
            id,
            files: 0,
            records: 0,
            chunks: 0,
        });
        c.files += 1;
        c.records += records;
        c.chunks += chunks;
    }
    let mut out = Vec::new();
    for c in sums.values() {
        c.write(&mut out);
    }
    out
}

/// The [`TOP_DROPPED`] highest of the ranges' dropped chunks (a chunk is
/// in one range only): by degree, then hash, as the `#dropped` lines.
fn top_dropped_lines(mut dropped: Vec<(u64, u128, Vec<u8>)>) -> Vec<u8> {
    dropped.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let mut tail = Vec::new();
    for (_, _, line) in dropped.iter().take(TOP_DROPPED) {
        tail.extend_from_slice(line);
        tail.push(b'\n');
    }
    tail
}

/// Read every range's forest lines; an unexpected line is an error naming
/// its file and line.
fn read_forests(cfg: &MergeConfig, files: u64) -> Result<Forests> {
    let mut f = Forests {
        unions: Unions::new(files as usize),
        pruned: FileBits::new(files),
        features: cfg.feature_counts.then(|| vec![0u32; files as usize]),
        kept: cfg
            .components
            .is_some()
            .then(|| vec![(0, 0); files as usize]),
        dropped: Vec::new(),
        sums: Sums::default(),
    };
    for path in &cfg.inputs {
        let (r, name) = open_input(path)?;
        let mut lines = FastLines::new(r, name);
        while let Some((line, at)) = lines.next_line_at()? {
            f.add_line(line, files).map_err(|e| at.error(e))?;
        }
    }
    Ok(f)
}

impl Forests {
    fn add_line(&mut self, line: &[u8], files: u64) -> std::result::Result<(), String> {
        let id = |field: Option<&[u8]>| -> std::result::Result<u32, String> {
            let v = field
                .and_then(parse_id)
                .ok_or("expected a 10-digit file id")?;
            if v as u64 >= files {
                return Err(format!(
                    "file id {v} is not below the table's {files} files"
                ));
            }
            Ok(v)
        };
        let mut fields = line.split(|&c| c == b'\t');
        match fields.next().unwrap_or_default() {
            b"E" => {
                let (a, b) = (id(fields.next())?, id(fields.next())?);
                self.unions.queue(a, b);
            }
            b"P" => self.pruned.set(id(fields.next())?),
            b"N" => {
                let file = id(fields.next())?;
                let n = fields
                    .next()
                    .and_then(parse_u64)
                    .ok_or("expected a feature count after the file id")?;
                if let Some(c) = self.features.as_mut() {
                    let slot = &mut c[file as usize];
                    *slot = slot.saturating_add(n.min(u32::MAX as u64) as u32);
                }
            }
            b"K" => {
                let file = id(fields.next())?;
                let mut n = || {
                    fields
                        .next()
                        .and_then(parse_u64)
                        .ok_or("expected kept records and chunks after the file id")
                };
                let (records, chunks) = (n()?, n()?);
                if let Some(k) = self.kept.as_mut() {
                    let slot = &mut k[file as usize];
                    slot.0 += records;
                    slot.1 += chunks;
                }
            }
            b"#dropped" => {
                let hash = fields
                    .next()
                    .and_then(parse_hex128)
                    .ok_or("expected a chunk hash after #dropped")?;
                let degree = fields
                    .next()
                    .and_then(parse_u64)
                    .ok_or("expected a degree after the hash")?;
                self.dropped.push((degree, hash, line.to_vec()));
            }
            b"#forest" => self.add_summary(line)?,
            _ => return Err("expected a forest line (E, N, P, K, #dropped or #forest)".into()),
        }
        Ok(())
    }

    /// Add a range's `#forest` summary to the sums.
    fn add_summary(&mut self, line: &[u8]) -> std::result::Result<(), String> {
        let p = Params::parse_fields(&line[b"#forest".len()..])?;
        let num = |k: &str| p.get_u64(k).ok_or(format!("expected {k}=N in #forest"));
        let hex = |k: &str| {
            p.get_u128_hex(k)
                .ok_or(format!("expected {k}=HEX in #forest"))
        };
        let s = &mut self.sums;
        s.records.count += num("records")?;
        s.records.sum = s.records.sum.wrapping_add(hex("digest")?);
        s.kept.count += num("kept")?;
        s.kept.sum = s.kept.sum.wrapping_add(hex("kept_digest")?);
        s.dropped_chunks += num("dropped_chunks")?;
        s.dropped_records += num("dropped_records")?;
        s.dropped_digest = s.dropped_digest.wrapping_add(hex("dropped_digest")?);
        same_in_every_range("limit", num("limit")?, &mut s.limit)?;
        s.site_chunks += num("site_chunks")?;
        same_in_every_range("site_names", num("site_names")?, &mut s.site_names)?;
        Ok(())
    }
}

/// A setting every range must have resolved alike (`key=value`): the first
/// range's value, or an error naming both.
fn same_in_every_range(
    key: &str,
    value: u64,
    seen: &mut Option<u64>,
) -> std::result::Result<(), String> {
    match *seen {
        Some(v) if v != value => Err(format!(
            "{key}={value} here but {key}={v} in an earlier range"
        )),
        _ => {
            *seen = Some(value);
            Ok(())
        }
    }
}
