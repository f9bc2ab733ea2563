//! Step 5 and section 2.4 of the paper: turn the similar pairs into what an
//! analyst reads. Identical files are reported apart (sets, files, overhead
//! bytes), and similar files are grouped into clusters (connected components
//! of the similarity graph), largest first, each with its files, its links,
//! total size, average similarity and a type.
//!
//! Thresholds are applied here again, on what the analysis kept, so trying a
//! stricter threshold takes seconds and needs no re-run (sif's
//! post-processing). Cluster and set ids are derived from content, so they
//! stay the same across re-runs on the same data.
//!
//! Memory: the file table (ids, sizes, content hashes, paths) and the pairs
//! that pass the thresholds are held in memory: the report is bounded by the
//! number of files, like partition, not by the number of chunks.

pub mod collections;
pub mod filter;
pub mod html;
pub mod xlsx;

use crate::error::{Error, Result};
use crate::formats::{
    escape_path_string, hex128, mix128, parse_id, parse_u64, split_fields, Digest, FileEntry,
    InputCheck, Kind, Line, LineReader, Params, CHUNK_PARAM_KEYS,
};
use crate::io::{open_input, Output};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

pub use crate::formats::PercentOf;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Tsv,
    /// One self-contained page (src/report_html.rs).
    Html,
    /// A workbook with outlined rows (src/report_xlsx.rs); needs `-o FILE`.
    Xlsx,
}

/// When the text report is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// When writing to a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

/// ANSI styles of the text report; all empty without colour.
#[derive(Debug, Clone, Copy)]
struct Style {
    bold: &'static str,
    dim: &'static str,
    head: &'static str,
    kind: &'static str,
    pct: &'static str,
    reset: &'static str,
}

impl Style {
    fn new(color: bool) -> Style {
        if color {
            Style {
                bold: "\x1b[1m",
                dim: "\x1b[2m",
                head: "\x1b[1;34m",
                kind: "\x1b[35m",
                pct: "\x1b[33m",
                reset: "\x1b[0m",
            }
        } else {
            Style {
                bold: "",
                dim: "",
                head: "",
                kind: "",
                pct: "",
                reset: "",
            }
        }
    }
}

/// Options of `fsim-report`.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: PathBuf,
    pub pairs: PathBuf,
    pub output: Option<PathBuf>,
    pub format: Format,
    pub min_percent: f64,
    pub min_bytes: u64,
    pub percent_of: PercentOf,
    /// Options of the HTML format.
    pub html: crate::report::html::HtmlOptions,
    /// Colour in the text report.
    pub color: ColorChoice,
    /// sif's post-processing filters (src/report_filter.rs).
    pub filters: crate::report::filter::Filters,
    /// Smallest cluster flagged as a likely template.
    pub template_min_files: usize,
    /// The templates files the analysis ignored (`--templates`): checked
    /// against the pairs header; the HTML views mark their chunks.
    pub templates: Vec<PathBuf>,
}

/// A cluster flagged as a likely template (`crate::stages::templates::likely_template`).
#[derive(Debug, Clone)]
pub struct TemplateHint {
    /// Bytes shared by almost all its links (the 10th percentile).
    pub bytes: u64,
    /// The command that marks it.
    pub command: String,
}

/// One similar pair as read from the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub a: u32,
    pub b: u32,
    /// Bytes in common: exact when `exact`, else a lower bound.
    pub common: u64,
    pub shared_chunks: u64,
    /// Verified by fsim-verify (`common` is the exact figure).
    pub exact: bool,
}

/// A cluster of similar files.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub id: String,
    pub kind: &'static str,
    /// Representative file ids, by size descending then id.
    pub files: Vec<u32>,
    pub links: Vec<Pair>,
    pub total_size: u64,
    pub avg_similarity: f64,
    /// Set when the cluster looks like template similarity.
    pub template: Option<TemplateHint>,
}

/// A set of files with identical content.
#[derive(Debug, Clone)]
pub struct IdenticalSet {
    pub id: String,
    pub size: u64,
    pub files: Vec<u32>,
}

impl IdenticalSet {
    pub fn overhead(&self) -> u64 {
        self.size * (self.files.len() as u64 - 1)
    }
}

/// Everything a report format needs.
pub struct Report {
    pub files: Vec<FileEntry>,
    pub params: Params,
    pub config: Config,
    pub identical: Vec<IdenticalSet>,
    pub clusters: Vec<Cluster>,
    /// Identical set of a representative file, by file id.
    pub set_of: HashMap<u32, usize>,
    pub pairs_read: u64,
    /// Size of each file as the percentages use it: its payload (size less
    /// its template chunks) when the analysis ignored templates, else its
    /// size.
    pub sizes: Vec<u64>,
    /// Collections of a merged file table (empty: one unnamed collection).
    pub collections: Vec<crate::stages::collections::Collection>,
    /// Collection index of each file.
    pub coll: Vec<usize>,
    /// Links that passed the thresholds but not the filters.
    pub filtered_links: u64,
}

/// Read the file table: entries indexed by id.
pub fn read_file_table(path: &Path) -> Result<(Vec<FileEntry>, Params)> {
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let mut check = InputCheck::new(Kind::Files, "files");
    let mut files: Vec<FileEntry> = Vec::new();
    let mut announced: Option<(u64, Params)> = None;
    while let Some((line, line_no)) = r.next_numbered()? {
        match line {
            Line::Header(k, p) => check
                .header(k, p)
                .map_err(|m| Error::input(&name, line_no, m))?,
            Line::Trailer(k, p) => {
                if k != Kind::Files {
                    return Err(Error::input(
                        &name,
                        line_no,
                        "expected '#end files' trailer",
                    ));
                }
                let n = p
                    .get_u64("files")
                    .ok_or_else(|| Error::input(&name, line_no, "trailer without files="))?;
                announced = Some((n, p));
            }
            Line::Comment(_) => {}
            Line::Data(d) => {
                if check.params.is_none() {
                    return Err(Error::input(
                        &name,
                        line_no,
                        "expected a '#fsim files v1' header (written by fsim-chunk --files-out)",
                    ));
                }
                let e = FileEntry::parse(d).map_err(|m| Error::input(&name, line_no, m))?;
                if e.id as usize != files.len() {
                    return Err(Error::input(
                        &name,
                        line_no,
                        format!(
                            "expected file id {} (ids are consecutive), found {}",
                            files.len(),
                            e.id
                        ),
                    ));
                }
                files.push(e);
            }
        }
    }
    let line = r.line_number();
    match &announced {
        None => return Err(Error::input(&name, line, "no '#end files' trailer: the file table is truncated")),
        Some((n, _)) if *n != files.len() as u64 => {
            return Err(Error::input(&name, line, format!("{} files read but the trailer announced {n}: the file table is truncated or was edited", files.len())))
        }
        _ => {}
    }
    let params = check.params.clone().unwrap_or_default();
    Ok((files, params))
}

/// Read the analysis' pairs, check them against the file table.
fn read_pairs(
    path: &Path,
    files: &[FileEntry],
    table_params: &Params,
    files_name: &str,
    sizes: &mut [u64],
) -> Result<(Vec<Pair>, Params)> {
    let mut payloads = false;
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let mut check = InputCheck::new(Kind::Pairs, "pairs");
    let mut seen = Digest::default();
    let mut pairs = Vec::new();
    let expected =
        "a pair record: file id a, file id b, size a, size b, bytes in common, shared chunks";
    while let Some((line, line_no)) = r.next_numbered()? {
        let err = |m: String| Error::input(&name, line_no, m);
        match line {
            Line::Header(k, p) => {
                payloads |= p.get("templates").is_some();
                check.header(k, p.clone()).map_err(err)?;
                if let Some(d) = p
                    .only(CHUNK_PARAM_KEYS)
                    .difference(&table_params.only(CHUNK_PARAM_KEYS))
                {
                    return Err(Error::input(
                        &name,
                        line_no,
                        format!("pairs and file table {files_name} come from runs with different parameters: {d}"),
                    ));
                }
            }
            Line::Trailer(k, p) => check.trailer(k, &p).map_err(err)?,
            Line::Comment(_) => {}
            Line::Data(d) => {
                // 6 fields from fsim-analyze, 8 from fsim-verify (exact
                // figure and status appended).
                let bad = || err(format!("expected {expected}"));
                let mut verified: Option<(&[u8], &[u8])> = None;
                let f: [&[u8]; 6] = match split_fields::<8>(d) {
                    Some(x) => {
                        verified = Some((x[6], x[7]));
                        [x[0], x[1], x[2], x[3], x[4], x[5]]
                    }
                    None => split_fields::<6>(d).ok_or_else(bad)?,
                };
                let a = parse_id(f[0]).ok_or_else(bad)?;
                let b = parse_id(f[1]).ok_or_else(bad)?;
                let nums: Option<Vec<u64>> = f[2..].iter().map(|x| parse_u64(x)).collect();
                let nums = nums.ok_or_else(bad)?;
                let (sa, sb, common, shared) = (nums[0], nums[1], nums[2], nums[3]);
                // The exact figure replaces the chunk lower bound; a
                // lower-bound line keeps the better of its two lower bounds.
                let (best, exact) = match verified {
                    None => (common, false),
                    Some((v, status)) => {
                        let v = parse_u64(v).ok_or_else(bad)?;
                        match status {
                            b"exact" => (v, true),
                            b"lower-bound" => (v.max(common), false),
                            _ => {
                                return Err(err(
                                    "expected status 'exact' or 'lower-bound' in field 8".into(),
                                ))
                            }
                        }
                    }
                };
                let fa = files.get(a as usize);
                let fb = files.get(b as usize);
                // With templates the pairs carry payload sizes.
                let fits = |f: &FileEntry, s: u64| f.size == s || (payloads && f.size > s);
                match (fa, fb) {
                    (Some(fa), Some(fb)) if fits(fa, sa) && fits(fb, sb) && a < b => {
                        sizes[a as usize] = sa;
                        sizes[b as usize] = sb;
                    }
                    _ => {
                        return Err(err(format!(
                            "pair {a}-{b} does not match the file table {files_name} (unknown id or other size): pairs from another run?"
                        )))
                    }
                }
                seen.add_mix(mix128(
                    ((a as u128) << 96) | ((b as u128) << 64) | common as u128,
                ));
                pairs.push(Pair {
                    a,
                    b,
                    common: best,
                    shared_chunks: shared,
                    exact,
                });
            }
        }
    }
    check.finish(&seen, &name, r.line_number())?;
    Ok((pairs, check.params.unwrap_or_default()))
}

/// Percentage of `part` in `whole`, 0 when whole is 0.
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Symmetric similarity of a pair: bytes in common over the mean size
/// (Dice coefficient), 100 for identical files.
pub fn symmetric(common: u64, sa: u64, sb: u64) -> f64 {
    percent(2 * common, sa + sb)
}

/// Round to one decimal, so reports are stable and readable.
fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Build the report from the file table and the pairs.
pub fn build(config: Config) -> Result<Report> {
    crate::io::wait_for_input(&config.pairs)?;
    let (files, table_params) = read_file_table(&config.files)?;
    let files_name = config.files.display().to_string();
    let collections = crate::stages::collections::read(&config.files)?;
    let coll = crate::stages::collections::of_files(&collections, files.len())
        .map_err(|m| Error::msg(format!("{files_name}: {m}")))?;
    let mut sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
    let (pairs, pair_params) = read_pairs(
        &config.pairs,
        &files,
        &table_params,
        &files_name,
        &mut sizes,
    )?;
    let pairs_read = pairs.len() as u64;
    let filters = &config.filters;
    let path_filtered = !filters.include.is_empty() || !filters.exclude.is_empty();
    let path_ok: Vec<bool> = files
        .iter()
        .map(|f| !path_filtered || filters.file_ok(&escape_path_string(&f.path)))
        .collect();

    // Identical sets (2.4): equal content hash, non-empty files.
    let mut by_content: BTreeMap<u128, Vec<u32>> = BTreeMap::new();
    for f in files
        .iter()
        .filter(|f| f.size > 0 && path_ok[f.id as usize])
    {
        by_content.entry(f.content).or_default().push(f.id);
    }
    let mut identical: Vec<IdenticalSet> = by_content
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(c, v)| IdenticalSet {
            id: hex128(c)[..10].to_string(),
            size: files[v[0] as usize].size,
            files: v,
        })
        .collect();
    identical.sort_by(|x, y| {
        y.overhead()
            .cmp(&x.overhead())
            .then(x.files[0].cmp(&y.files[0]))
    });
    let mut set_of = HashMap::new();
    for (i, s) in identical.iter().enumerate() {
        set_of.insert(s.files[0], i);
    }

    // Thresholds on what the analysis kept, then the filters.
    let size = |id: u32| sizes[id as usize];
    let keep = |p: &Pair| {
        let (sa, sb) = (size(p.a), size(p.b));
        let base = config.percent_of.base(sa, sb);
        p.common >= config.min_bytes
            && p.common > 0
            && percent(p.common, base) >= config.min_percent
    };
    let pass = |p: &Pair| {
        let (a, b) = (p.a as usize, p.b as usize);
        path_ok[a]
            && path_ok[b]
            && filters.link_ok(&files[a], &files[b], size(p.a), size(p.b), coll[a], coll[b])
    };
    let above: Vec<Pair> = pairs.into_iter().filter(keep).collect();
    let n_above = above.len() as u64;
    let kept: Vec<Pair> = above.into_iter().filter(pass).collect();
    let filtered_links = n_above - kept.len() as u64;

    // Connected components of the similarity graph.
    let mut adj: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, p) in kept.iter().enumerate() {
        adj.entry(p.a).or_default().push(i);
        adj.entry(p.b).or_default().push(i);
    }
    let mut done: HashMap<u32, ()> = HashMap::new();
    let mut clusters = Vec::new();
    for &start in adj.keys() {
        if done.contains_key(&start) {
            continue;
        }
        let mut members = vec![start];
        let mut links = Vec::new();
        done.insert(start, ());
        let mut k = 0;
        while k < members.len() {
            let f = members[k];
            k += 1;
            for &pi in &adj[&f] {
                let p = kept[pi];
                if p.a == f {
                    links.push(p);
                }
                let other = if p.a == f { p.b } else { p.a };
                if done.insert(other, ()).is_none() {
                    members.push(other);
                }
            }
        }
        links.sort_by_key(|p| (p.a, p.b));
        members.sort_by(|&x, &y| size(y).cmp(&size(x)).then(x.cmp(&y)));
        let total_size: u64 = members.iter().map(|&m| size(m)).sum();
        let avg = links
            .iter()
            .map(|p| symmetric(p.common, size(p.a), size(p.b)))
            .sum::<f64>()
            / links.len() as f64;
        let n = members.len();
        let kind = if n == 2 {
            // The paper's "contains": the smaller file is (mostly) inside a
            // file at least half as large again.
            let p = links[0];
            let (small, large) = (size(p.a).min(size(p.b)), size(p.a).max(size(p.b)));
            if large * 2 >= small * 3 {
                "contains"
            } else {
                "pair"
            }
        } else if links.len() == n * (n - 1) / 2 {
            "clique"
        } else {
            "group"
        };
        let id_hash = members
            .iter()
            .map(|&m| files[m as usize].content)
            .min()
            .unwrap_or(0);
        let id = hex128(id_hash)[..10].to_string();
        let commons: Vec<u64> = links.iter().map(|p| p.common).collect();
        let template =
            crate::stages::templates::likely_template(n, &commons, config.template_min_files).map(
                |t| TemplateHint {
                    bytes: t,
                    command: crate::stages::templates::mark_command(&id),
                },
            );
        clusters.push(Cluster {
            id,
            kind,
            files: members,
            links,
            total_size,
            avg_similarity: avg,
            template,
        });
    }
    clusters.sort_by(|x, y| y.total_size.cmp(&x.total_size).then(x.id.cmp(&y.id)));

    let mut params = pair_params;
    params.set("report-min-percent", config.min_percent);
    params.set("report-min-bytes", config.min_bytes);
    params.set("report-percent-of", config.percent_of.as_str());
    params.set("report-filters", config.filters.describe());
    Ok(Report {
        files,
        params,
        config,
        identical,
        clusters,
        set_of,
        pairs_read,
        sizes,
        collections,
        coll,
        filtered_links,
    })
}

/// Human-readable size: `812 B`, `12.3 KiB`, `4.1 MiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl Report {
    fn path(&self, id: u32) -> String {
        escape_path_string(&self.files[id as usize].path)
    }

    /// The size percentages refer to: the payload when templates were
    /// ignored, else the file's size.
    pub fn size(&self, id: u32) -> u64 {
        self.sizes[id as usize]
    }

    /// Name of a file's collection, when there are collections.
    pub fn collection(&self, id: u32) -> Option<&str> {
        self.collections
            .get(self.coll[id as usize])
            .map(|c| c.name.as_str())
    }

    /// Template chunks ignored by the analysis: (count, digest).
    pub fn templates(&self) -> Option<(&str, &str)> {
        Some((
            self.params.get("template-chunks")?,
            self.params.get("templates")?,
        ))
    }

    /// Copies of a representative (other members of its identical set).
    fn copies(&self, id: u32) -> &[u32] {
        match self.set_of.get(&id) {
            Some(&s) => &self.identical[s].files[1..],
            None => &[],
        }
    }

    pub fn summary(&self) -> Value {
        let cluster_files: usize = self.clusters.iter().map(|c| c.files.len()).sum();
        let cluster_bytes: u64 = self.clusters.iter().map(|c| c.total_size).sum();
        let ident_files: usize = self.identical.iter().map(|s| s.files.len()).sum();
        let overhead: u64 = self.identical.iter().map(|s| s.overhead()).sum();
        json!({
            "files": self.files.len(),
            "clusters": self.clusters.len(),
            "cluster_files": cluster_files,
            "cluster_bytes": cluster_bytes,
            "links": self.clusters.iter().map(|c| c.links.len()).sum::<usize>(),
            "identical_sets": self.identical.len(),
            "identical_files": ident_files,
            "overhead_bytes": overhead,
            "filtered_links": self.filtered_links,
            "likely_templates": self.clusters.iter().filter(|c| c.template.is_some()).count(),
        })
    }

    fn link_json(&self, p: &Pair) -> Value {
        let (sa, sb) = (self.size(p.a), self.size(p.b));
        json!({
            "a": self.path(p.a),
            "b": self.path(p.b),
            "a_id": p.a,
            "b_id": p.b,
            "bytes_in_common": p.common,
            "shared_chunks": p.shared_chunks,
            "percent_of_a": r1(percent(p.common, sa)),
            "percent_of_b": r1(percent(p.common, sb)),
            "percent_symmetric": r1(symmetric(p.common, sa, sb)),
            "exact": p.exact,
        })
    }

    pub fn to_json(&self) -> Value {
        let params: serde_json::Map<String, Value> = self
            .params
            .0
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let identical: Vec<Value> = self
            .identical
            .iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "size": s.size,
                    "overhead_bytes": s.overhead(),
                    "files": s.files.iter().map(|&f| self.path(f)).collect::<Vec<_>>(),
                })
            })
            .collect();
        let clusters: Vec<Value> = self
            .clusters
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": c.kind,
                    "file_count": c.files.len(),
                    "total_size": c.total_size,
                    "average_similarity": r1(c.avg_similarity),
                    "likely_template": c.template.is_some(),
                    "template_bytes": c.template.as_ref().map(|t| t.bytes),
                    "template_command": c.template.as_ref().map(|t| t.command.clone()),
                    "files": c.files.iter().map(|&f| {
                        let e = &self.files[f as usize];
                        json!({
                            "id": f,
                            "path": self.path(f),
                            "size": self.size(f),
                            "file_size": e.size,
                            "type": e.ftype.as_str(),
                            "collection": self.collection(f),
                            "identical_copies": self.copies(f).iter().map(|&x| self.path(x)).collect::<Vec<_>>(),
                        })
                    }).collect::<Vec<_>>(),
                    "links": c.links.iter().map(|p| self.link_json(p)).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "fsim_report": 1,
            "params": params,
            "summary": self.summary(),
            "identical_sets": identical,
            "clusters": clusters,
            "collections": self.collections.iter().map(|c| json!({
                "name": c.name,
                "files": c.files,
                "bytes": self.files[c.first as usize..(c.first + c.files) as usize].iter().map(|f| f.size).sum::<u64>(),
            })).collect::<Vec<_>>(),
            "collection_overlap": crate::report::collections::overlap(self).iter().map(|o| o.to_json(self)).collect::<Vec<_>>(),
        })
    }

    pub fn to_text(&self) -> String {
        self.to_text_styled(false)
    }

    /// The text report, with ANSI colours when `color`.
    pub fn to_text_styled(&self, color: bool) -> String {
        use std::fmt::Write;
        let st = Style::new(color);
        let Style {
            bold,
            dim,
            head,
            kind,
            pct,
            reset,
        } = st;
        let s = self.summary();
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{bold}fsim report{reset}: {} clusters, {} files, {}; {} identical sets, {} files, {} overhead",
            s["clusters"],
            s["cluster_files"],
            human_bytes(s["cluster_bytes"].as_u64().unwrap_or(0)),
            s["identical_sets"],
            s["identical_files"],
            human_bytes(s["overhead_bytes"].as_u64().unwrap_or(0)),
        );
        let p = &self.params;
        let (basis, bound) = match p.get("estimate") {
            // Feature methods (docs/formats.md): bytes in common are the
            // method's similarity estimate expressed in bytes.
            Some(e) => (
                format!(
                    "features: {} window {} bytes",
                    p.get("method").unwrap_or("?"),
                    p.get("window").unwrap_or("?")
                ),
                format!("the method's {e} estimate in bytes, exact where fsim-verify measured it"),
            ),
            None => (
                format!(
                    "chunks: {} avg {} bytes",
                    p.get("method").unwrap_or("?"),
                    p.get("avg").unwrap_or("?")
                ),
                if p.get("verified") == Some("1") {
                    "exact where fsim-verify measured them, else lower bounds from shared chunks"
                        .to_string()
                } else {
                    "lower bounds from shared chunks".to_string()
                },
            ),
        };
        let _ = writeln!(
            o,
            "{dim}{} files scanned; {basis}; links kept at >= {}% of the {} file and >= {} bytes in common ({bound}){reset}",
            self.files.len(),
            self.config.min_percent,
            self.config.percent_of.as_str(),
            self.config.min_bytes
        );
        if let Some((n, digest)) = self.templates() {
            let _ = writeln!(
                o,
                "{dim}templates: {n} chunks ignored (templates={}); sizes and percentages are of the payload (file less its template chunks){reset}",
                &digest[..digest.len().min(10)]
            );
        }
        if self.config.filters.describe() != "none" || self.filtered_links > 0 {
            let _ = writeln!(
                o,
                "{dim}filters: {}; {} links dropped by them{reset}",
                self.config.filters.describe(),
                self.filtered_links
            );
        }
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{head}A. Identical files: {} sets{reset}",
            self.identical.len()
        );
        for s in &self.identical {
            let _ = writeln!(
                o,
                "  {bold}set {}{reset}  {} files x {} = {} overhead",
                s.id,
                s.files.len(),
                human_bytes(s.size),
                human_bytes(s.overhead())
            );
            for &f in &s.files {
                let _ = writeln!(o, "    {}", self.path(f));
            }
        }
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{head}B. Clusters of similar files: {} (largest first){reset}",
            self.clusters.len()
        );
        for c in &self.clusters {
            let _ = writeln!(
                o,
                "  {bold}cluster {}{reset}  {kind}{}{reset}  {} files  {} total  {} links  avg {pct}{:.1}%{reset} similar",
                c.id,
                c.kind,
                c.files.len(),
                human_bytes(c.total_size),
                c.links.len(),
                c.avg_similarity
            );
            if let Some(t) = &c.template {
                let _ = writeln!(
                    o,
                    "    {pct}likely template{reset}: about {} shared by almost all its files; to ignore those chunks from now on, in the work folder:\n      {}",
                    human_bytes(t.bytes),
                    t.command
                );
            }
            for &f in &c.files {
                let copies = self.copies(f);
                let extra = if copies.is_empty() {
                    String::new()
                } else {
                    format!("  (+{} identical copies)", copies.len())
                };
                let coll = match self.collection(f) {
                    Some(c) if self.collections.len() > 1 => format!("[{c}] "),
                    _ => String::new(),
                };
                let _ = writeln!(
                    o,
                    "    {:>10}  {coll}{}{}",
                    human_bytes(self.size(f)),
                    self.path(f),
                    extra
                );
            }
            for l in &c.links {
                let (sa, sb) = (self.size(l.a), self.size(l.b));
                let _ = writeln!(
                    o,
                    "      {dim}link{reset} {pct}{:5.1}%{reset}  {} <-> {}: {} in common ({:.1}% / {:.1}%), {}",
                    symmetric(l.common, sa, sb),
                    self.path(l.a),
                    self.path(l.b),
                    human_bytes(l.common),
                    percent(l.common, sa),
                    percent(l.common, sb),
                    if l.exact { "exact" } else { "lower bound" }
                );
            }
        }
        if !self.collections.is_empty() {
            crate::report::collections::text(self, &mut o, st.head, st.reset);
        }
        o
    }

    /// One row per link, for scripts: cluster fields repeated on each row.
    pub fn to_tsv(&self) -> String {
        use std::fmt::Write;
        let mut o = String::from(
            "cluster\ttype\tcluster_files\tcluster_bytes\tpercent_symmetric\tbytes_in_common\tpercent_of_a\tpercent_of_b\tsize_a\tsize_b\tpath_a\tpath_b\n",
        );
        for c in &self.clusters {
            for l in &c.links {
                let (sa, sb) = (self.size(l.a), self.size(l.b));
                let _ = writeln!(
                    o,
                    "{}\t{}\t{}\t{}\t{:.1}\t{}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}",
                    c.id,
                    c.kind,
                    c.files.len(),
                    c.total_size,
                    symmetric(l.common, sa, sb),
                    l.common,
                    percent(l.common, sa),
                    percent(l.common, sb),
                    sa,
                    sb,
                    self.path(l.a),
                    self.path(l.b)
                );
            }
        }
        o
    }
}

/// The templates files given with `--templates`, if any. They must be the
/// set the analysis ignored (the pairs header names it): marking other
/// chunks as template in the views would mislead the analyst.
fn load_templates(report: &Report) -> Result<Option<crate::stages::templates::TemplateSet>> {
    let paths = &report.config.templates;
    if paths.is_empty() {
        return Ok(None);
    }
    let set = crate::stages::templates::TemplateSet::load(paths, &report.params)?;
    set.check_against(&report.params, "the pairs")
        .map_err(|m| Error::msg(format!("{}: {m}", report.config.pairs.display())))?;
    Ok(Some(set))
}

/// `fsim-report`: read, build, write in the chosen format.
pub fn run(config: Config, quiet: bool) -> Result<()> {
    let start = std::time::Instant::now();
    let output = config.output.clone();
    let format = config.format;
    if format == Format::Xlsx && output.as_deref().is_none_or(|p| p.as_os_str() == "-") {
        return Err(Error::msg(
            "--format xlsx writes a workbook: give the output file with -o FILE.xlsx",
        ));
    }
    let color = match config.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            use std::io::IsTerminal;
            output.as_deref().is_none_or(|p| p.as_os_str() == "-")
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let report = build(config)?;
    let templates = load_templates(&report)?;
    let bytes = match format {
        Format::Text => report.to_text_styled(color).into_bytes(),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report.to_json())
                .map_err(|e| Error::msg(format!("json: {e}")))?;
            s.push('\n');
            s.into_bytes()
        }
        Format::Tsv => report.to_tsv().into_bytes(),
        Format::Html => {
            crate::report::html::render(&report, &report.config.html, templates.as_ref())?
                .into_bytes()
        }
        Format::Xlsx => crate::report::xlsx::render(&report)?,
    };
    let mut out = Output::create(output.as_deref())?;
    out.write_all(&bytes)?;
    out.finish()?;
    if !quiet {
        let s = report.summary();
        crate::cli::stderr_line(format_args!(
            "fsim-report: {} pairs read, {} clusters, {} identical sets, {:.2} s",
            report.pairs_read,
            s["clusters"],
            s["identical_sets"],
            start.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(812), "812 B");
        assert_eq!(human_bytes(12 * 1024 + 300), "12.3 KiB");
        assert_eq!(human_bytes(5 << 20), "5.0 MiB");
    }

    #[test]
    fn similarity_measures() {
        assert_eq!(symmetric(50, 100, 100), 50.0);
        assert_eq!(symmetric(100, 100, 300), 50.0);
        assert_eq!(percent(1, 0), 0.0);
    }
}
