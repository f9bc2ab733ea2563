//! Templates (paper section 4): chunks that many files share only because
//! they were made from one template (a JavaScript preamble, a licence
//! text). An analyst marks a cluster as template similarity with
//! `fsim-template`, which writes the chunks shared by all (or a fraction
//! of) the cluster's files to a templates file; later runs take
//! `--templates FILE` and ignore those chunks everywhere, nothing
//! re-chunked:
//!
//! * `fsim-partition` drops the template records (they link no files) and
//!   writes each file's **payload** size, its size less the bytes of its
//!   template chunks, in its `F` line; binpack and analyze carry that size
//!   into the pairs, so analysis percentages are percentages of payload.
//! * `fsim-verify` cuts the template chunks out of the files it reads anyway
//!   (candidate pairs only) and measures the exact figure on the payloads.
//! * `fsim-report` takes the payload sizes from the pairs.
//!
//! The set's identity (`templates=` digest, `template-chunks=` count) is
//! written into the partition, bins and pairs headers, so a stage given
//! other templates than the analysis used refuses with a clear message.
//!
//! Memory: 20 bytes per template chunk (a hash set); a templates file holds
//! tens or hundreds of chunks.

use crate::error::{Error, Result};
use crate::formats::headers::{ChunkParams, TemplatesHeader};
use crate::formats::open_input;
use crate::formats::templates::{line_mix, TemplateSet};
use crate::formats::{
    escape_path_string, write_header, write_hex128, write_trailer, write_u64, Digest, Kind, Line,
    LineReader, Params,
};
use crate::io::Output;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Per-file template bytes, gathered by fsim-partition while it reads the
/// sorted records (8 bytes per file, only when templates are given).
#[derive(Debug, Default)]
pub struct PayloadCounter {
    pub set: TemplateSet,
    bytes: Vec<u64>,
    /// Template records seen (and dropped).
    pub records: u64,
    /// Bytes of those records.
    pub total_bytes: u64,
}

impl PayloadCounter {
    pub fn new(set: TemplateSet, files: usize) -> PayloadCounter {
        let bytes = if set.is_empty() {
            Vec::new()
        } else {
            vec![0; files]
        };
        PayloadCounter {
            set,
            bytes,
            records: 0,
            total_bytes: 0,
        }
    }

    /// True (and counted) when the record is a template chunk to drop.
    #[inline]
    pub fn take(&mut self, hash: u128, file: u32, len: u32) -> bool {
        if self.bytes.is_empty() || !self.set.contains(hash) {
            return false;
        }
        self.bytes[file as usize] += len as u64;
        self.records += 1;
        self.total_bytes += len as u64;
        true
    }

    /// A file's payload: its size less its template bytes.
    #[inline]
    pub fn payload(&self, file: u32, size: u64) -> u64 {
        match self.bytes.get(file as usize) {
            Some(&t) => size.saturating_sub(t),
            None => size,
        }
    }

    /// The summary phrase for stderr, empty without templates.
    pub fn summary(&self) -> String {
        if self.set.is_empty() {
            return String::new();
        }
        format!(
            "; templates: {} chunks, {} records ignored ({} bytes)",
            self.set.len(),
            self.records,
            self.total_bytes
        )
    }
}

// ---------------------------------------------------------------------------
// fsim-template: write the templates of a cluster
// ---------------------------------------------------------------------------

/// Options of `fsim-template`.
#[derive(Debug, Clone)]
pub struct Config {
    /// Cluster ids from the report.
    pub clusters: Vec<String>,
    /// report.json of the last run.
    pub report: PathBuf,
    /// File table of the run (checks that the report belongs to it).
    pub files: PathBuf,
    /// Chunk records: partition, sorted or chunk file of the run.
    pub chunks: Vec<PathBuf>,
    /// A chunk is a template chunk when it is in at least this fraction of
    /// the cluster's files.
    pub fraction: f64,
    pub output: Option<PathBuf>,
    /// Keep what the output file holds and add a section to it (else the
    /// file is replaced).
    pub append: bool,
    pub quiet: bool,
}

/// What a run wrote.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub clusters: usize,
    pub files: usize,
    pub chunks: usize,
    pub bytes: u64,
    pub records_read: u64,
    pub seconds: f64,
}

/// A cluster as the json report gives it: its id and its files (the
/// report's other fields are skipped as they are parsed).
#[derive(serde::Deserialize)]
struct ClusterInfo {
    id: String,
    #[serde(rename = "files", default)]
    members: Vec<Member>,
    /// Its first file's path, escaped, from the file table once checked.
    #[serde(skip)]
    sample: String,
}

/// A file of a cluster: its id and a hash of the path the report gives it
/// (checked against the file table: the report must be of this run), the
/// path itself dropped as soon as it is read.
#[derive(serde::Deserialize)]
struct Member {
    id: u32,
    #[serde(rename = "path", deserialize_with = "path_hash_of")]
    path_hash: u64,
}

/// The hash a member keeps of its path (as the report escapes it).
fn path_hash(escaped: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(escaped.as_bytes())
}

fn path_hash_of<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    let p: std::borrow::Cow<str> = serde::Deserialize::deserialize(d)?;
    Ok(path_hash(&p))
}

/// The run's parameters and the wanted clusters, read from report.json as
/// it is parsed: every other value is skipped, never held. The json report
/// of a large run is gigabytes (1.25 GB for eight Django releases with
/// their HTML docs, which took 8 GB and 30 s to load whole); the memory is
/// now 16 bytes per file of the largest cluster. A cluster's `files` come
/// before its `id` (the report's keys are sorted), so each cluster's
/// members are gathered, then kept or dropped once its id is known.
fn read_report(path: &Path, ids: &[String]) -> Result<(Vec<ClusterInfo>, Params)> {
    use serde::Deserializer as _;
    let file = std::fs::File::open(path)
        .map_err(|e| Error::msg(format!("cannot read {}: {e}", path.display())))?;
    let mut de =
        serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 20, file));
    let mut read = ReportRead {
        want: ids,
        params: Params::new(),
        found: ids.iter().map(|_| None).collect(),
        clusters: false,
    };
    de.deserialize_map(&mut read)
        .and_then(|()| de.end())
        .map_err(|e| {
            Error::msg(format!(
                "{}: not a json report (fsim-report --format json): {e}",
                path.display()
            ))
        })?;
    if !read.clusters {
        return Err(Error::msg(format!(
            "{}: no clusters array: not a json report of fsim-report",
            path.display()
        )));
    }
    let mut out = Vec::with_capacity(ids.len());
    for (want, c) in ids.iter().zip(read.found) {
        out.push(c.ok_or_else(|| {
            Error::msg(format!(
                "no cluster {want} in {} (ids are the 'cluster' column of the last report)",
                path.display()
            ))
        })?);
    }
    Ok((out, read.params))
}

/// The streaming read of report.json ([`read_report`]).
struct ReportRead<'a> {
    want: &'a [String],
    params: Params,
    /// The first cluster of each wanted id, in the order of `want`.
    found: Vec<Option<ClusterInfo>>,
    /// A `clusters` array was read.
    clusters: bool,
}

impl<'de> serde::de::Visitor<'de> for &mut ReportRead<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the json report's object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut m: A,
    ) -> std::result::Result<(), A::Error> {
        while let Some(key) = m.next_key::<String>()? {
            match key.as_str() {
                "params" => {
                    // Sorted, as the report writes them.
                    let p: BTreeMap<String, serde_json::Value> = m.next_value()?;
                    for (k, v) in p {
                        if let Some(s) = v.as_str() {
                            self.params.set(&k, s);
                        }
                    }
                }
                "clusters" => {
                    m.next_value_seed(Clusters(&mut *self))?;
                    self.clusters = true;
                }
                _ => {
                    m.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The `clusters` array: each cluster read, the wanted ones kept.
struct Clusters<'r, 'a>(&'r mut ReportRead<'a>);

impl<'de> serde::de::DeserializeSeed<'de> for Clusters<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Clusters<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of clusters")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut s: A,
    ) -> std::result::Result<(), A::Error> {
        while let Some(c) = s.next_element::<ClusterInfo>()? {
            if let Some(i) = self.0.want.iter().position(|w| *w == c.id) {
                if self.0.found[i].is_none() {
                    self.0.found[i] = Some(c);
                }
            }
        }
        Ok(())
    }
}

/// Write the template chunks of the clusters; see the module doc.
pub fn run(cfg: &Config) -> Result<Summary> {
    let t0 = std::time::Instant::now();
    if !(cfg.fraction > 0.0 && cfg.fraction <= 1.0) {
        return Err(Error::msg(format!(
            "--fraction {} is outside (0, 1]",
            cfg.fraction
        )));
    }
    let (mut clusters, rparams) = read_report(&cfg.report, &cfg.clusters)?;
    let report_name = cfg.report.display().to_string();
    let chunk_params = ChunkParams::from_params(&rparams, &report_name)?;
    check_files(cfg, &mut clusters, &chunk_params)?;
    let (counts, records_read) = count_chunks(cfg, &clusters, &chunk_params)?;
    // Template chunks per cluster, hash order.
    let mut per: Vec<BTreeMap<u128, u32>> = vec![BTreeMap::new(); clusters.len()];
    for ((ci, h), (n, len, _)) in counts {
        let need = ((clusters[ci].members.len() as f64) * cfg.fraction).ceil() as u32;
        if n >= need.max(2) {
            per[ci].insert(h, len);
        }
    }
    let mut summary = Summary {
        clusters: clusters.len(),
        records_read,
        ..Default::default()
    };
    let body = templates_file(cfg, &chunk_params, &clusters, &per, &mut summary)?;
    let mut out = Output::create(cfg.output.as_deref())?;
    out.write_all(&body)?;
    out.finish()?;
    summary.seconds = t0.elapsed().as_secs_f64();
    Ok(summary)
}

/// Check that the file table comes from the report's run: the same
/// chunking, and each member of the clusters the file of its id.
fn check_files(
    cfg: &Config,
    clusters: &mut [ClusterInfo],
    chunk_params: &ChunkParams,
) -> Result<()> {
    let files = &cfg.files;
    let (table, tparams) = crate::formats::files::read_file_table(files)?;
    let table_chunk = ChunkParams::from_params(&tparams, &files.display().to_string())?;
    if let Some(d) = table_chunk.difference(chunk_params) {
        return Err(Error::msg(format!(
            "{} and {} come from runs with different parameters: {d}",
            cfg.report.display(),
            files.display()
        )));
    }
    for c in clusters.iter_mut() {
        for &Member {
            id,
            path_hash: hash,
        } in &c.members
        {
            let path = table.get(id as usize).map(|e| escape_path_string(&e.path));
            if path.as_deref().map(path_hash) != Some(hash) {
                return Err(Error::msg(format!(
                    "file id {id} of cluster {} is not {} in {}: the report is from another run",
                    c.id,
                    path.as_deref().unwrap_or("a file"),
                    files.display()
                )));
            }
            if c.sample.is_empty() {
                c.sample = path.unwrap_or_default();
            }
        }
    }
    Ok(())
}

/// Per (cluster, chunk hash): (distinct members, length, last member
/// seen).
type ChunkCounts = HashMap<(usize, u128), (u32, u32, u32)>;

/// Count the chunks of the clusters' members in the chunk records.
fn count_chunks(
    cfg: &Config,
    clusters: &[ClusterInfo],
    chunk_params: &ChunkParams,
) -> Result<(ChunkCounts, u64)> {
    // Member -> cluster index.
    let mut member: HashMap<u32, usize> = HashMap::new();
    for (i, c) in clusters.iter().enumerate() {
        for &Member { id, .. } in &c.members {
            member.insert(id, i);
        }
    }
    let mut counts: ChunkCounts = HashMap::new();
    let mut records_read = 0u64;
    let default_input = [PathBuf::from("-")];
    let inputs: &[PathBuf] = if cfg.chunks.is_empty() {
        &default_input
    } else {
        &cfg.chunks
    };
    let mut seen_header = false;
    for path in inputs {
        let (input, name) = open_input(path)?;
        let mut r = LineReader::new(input, name.clone());
        while let Some((line, line_no)) = r.next_numbered()? {
            match line {
                Line::Header(k, p) => {
                    if !matches!(k, Kind::Chunks | Kind::Partition | Kind::Bins) {
                        return Err(Error::input(&name, line_no, format!("this is a {} file: expected chunk records (partition.tsv, sorted.tsv or chunks.tsv)", k.as_str())));
                    }
                    changed_only_refused(&p, &name, line_no)?;
                    let chunk =
                        ChunkParams::parse(&p).map_err(|m| Error::input(&name, line_no, m))?;
                    if let Some(d) = chunk.difference(chunk_params) {
                        return Err(Error::input(
                            &name,
                            line_no,
                            format!(
                                "chunking parameters differ from the report's: {d} (in the report)"
                            ),
                        ));
                    }
                    seen_header = true;
                }
                Line::Trailer(_, p) => changed_only_refused(&p, &name, line_no)?,
                Line::Data(d) => {
                    let Some(rec) = crate::formats::ChunkRecord::parse(d) else {
                        continue; // F lines of a partition or bins file
                    };
                    records_read += 1;
                    if let Some(&ci) = member.get(&rec.file) {
                        let e = counts
                            .entry((ci, rec.hash))
                            .or_insert((0, rec.len, u32::MAX));
                        if e.2 != rec.file {
                            e.0 += 1;
                            e.2 = rec.file;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if !seen_header {
        return Err(Error::msg(
            "no chunk records header in the input: expected partition.tsv, sorted.tsv or chunks.tsv of the run",
        ));
    }
    Ok((counts, records_read))
}

/// The templates file: what is kept of an earlier one (`--append`), the
/// header, each cluster's template chunks (a chunk once), the trailer;
/// counted in `summary`.
fn templates_file(
    cfg: &Config,
    chunk_params: &ChunkParams,
    clusters: &[ClusterInfo],
    per: &[BTreeMap<u128, u32>],
    summary: &mut Summary,
) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    if cfg.append {
        if let Some(o) = cfg.output.as_ref().filter(|o| o.as_os_str() != "-") {
            if o.exists() {
                // Validate what is there before keeping it.
                TemplateSet::load(std::slice::from_ref(o), &chunk_params.to_params())?;
                body = std::fs::read(o)
                    .map_err(|e| Error::msg(format!("cannot read {}: {e}", o.display())))?;
            }
        }
    }
    let mut written: HashSet<u128> = HashSet::new();
    let hp = TemplatesHeader {
        chunk: chunk_params.clone(),
        fraction: Some(cfg.fraction),
    };
    write_header(Kind::Templates, &hp.to_params(), &mut body);
    let mut d = Digest::default();
    for (c, chunks) in clusters.iter().zip(per) {
        let bytes: u64 = chunks.values().map(|&l| l as u64).sum();
        let sample = if c.members.is_empty() { "?" } else { &c.sample };
        body.extend_from_slice(
            format!(
                "# cluster {}: {} files, {} chunks ({} bytes) in at least {}% of them; e.g. {}\n",
                c.id,
                c.members.len(),
                chunks.len(),
                bytes,
                cfg.fraction * 100.0,
                sample
            )
            .as_bytes(),
        );
        summary.files += c.members.len();
        for (&h, &len) in chunks {
            if !written.insert(h) {
                continue;
            }
            write_hex128(h, &mut body);
            body.push(b'\t');
            write_u64(len as u64, &mut body);
            body.push(b'\n');
            d.add_mix(line_mix(h, len));
            summary.chunks += 1;
            summary.bytes += len as u64;
        }
    }
    write_trailer(
        Kind::Templates,
        &crate::formats::digest_params(&d, "templates"),
        &mut body,
    );
    Ok(body)
}

impl Summary {
    pub fn line(&self) -> String {
        format!(
            "fsim-template: {} clusters, {} files, {} template chunks ({} bytes), {} records read, {:.2} s",
            self.clusters, self.files, self.chunks, self.bytes, self.records_read, self.seconds
        )
    }
}

/// A re-run's records of the changed chunks alone (`changed-only=` in a
/// header or trailer) hold a cluster's files only in part: a template
/// made from them would miss chunks. Refused, saying so.
fn changed_only_refused(p: &crate::formats::Params, name: &str, line: u64) -> Result<()> {
    if p.get(crate::formats::CHANGED_ONLY).is_none() {
        return Ok(());
    }
    Err(Error::input(
        name,
        line,
        "a re-run's records of the changed chunks alone (changed-only=): a template needs every record; remove this file and run make template again, which partitions every record",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_reduces_sizes() {
        let mut set = TemplateSet::default();
        set.chunks.insert(7, 100);
        let mut pc = PayloadCounter::new(set, 3);
        assert!(pc.take(7, 1, 100));
        assert!(!pc.take(8, 1, 50));
        assert_eq!(pc.payload(1, 1000), 900);
        assert_eq!(pc.payload(0, 1000), 1000);
        assert_eq!(pc.records, 1);
    }
}
