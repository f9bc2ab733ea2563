//! Typed header parameters: one struct per group of `key=value`
//! parameters a header carries, and one per record kind that reads the
//! groups its header holds ([`FilesHeader`], [`PartitionHeader`],
//! [`BinsHeader`], [`PairsHeader`]; a chunks or regions header is the
//! chunking parameters and what the groups below say).
//!
//! Why typed: a stage asks `header.verify.min_percent` instead of parsing
//! `"verify-min-percent"` itself, so each key is spelled, parsed and
//! checked in one place, and a malformed value stops the reader with the
//! file, the key and what was expected instead of reading as absent.
//!
//! [`Params`] stays the container on disk: a stage writes its header as
//! its input's parameters (or the part it carries on, [`stage_params`])
//! with its own groups' `to_params()` set over them, so keys keep their
//! order, values their text, and keys no group knows (a newer writer's)
//! pass through where a stage copies its input's header. `to_params()`
//! writes exactly the keys `from_params` reads, in the order of
//! docs/formats.md, with the text fsim always wrote (numbers in decimal,
//! flags `0`/`1`, digests as 32 hex digits).
//!
//! [`stage_params`]: crate::formats::stage_params

use crate::error::{Error, Result};
use crate::formats::files::TABLE_DIGEST_KEY;
use crate::formats::lines::{Params, PercentOf};
use crate::formats::numbers::{hex128, parse_hex128};

/// A reader's complaint about one parameter, without the file (the caller
/// knows it: `FILE:LINE:` or [`in_file`]).
pub type Msg<T> = std::result::Result<T, String>;

/// `r` with the file's name in front of its message.
pub fn in_file<T>(file: &str, r: Msg<T>) -> Result<T> {
    r.map_err(|m| Error::msg(format!("{file}: {m}")))
}

/// Typed reads of a header's parameters: an absent key is `None`, a
/// malformed one an error naming the key, its value and what was expected.
struct Fields<'a>(&'a Params);

impl Fields<'_> {
    fn parsed<T>(
        &self,
        key: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Msg<Option<T>> {
        match self.0.get(key) {
            None => Ok(None),
            Some(v) => parse(v)
                .map(Some)
                .ok_or_else(|| format!("header parameter {key}={v:?}: expected {expected}")),
        }
    }

    fn get<T: Value>(&self, key: &str) -> Msg<Option<T>> {
        self.parsed(key, T::EXPECTED, T::read)
    }

    fn text(&self, key: &str) -> Option<String> {
        self.0.get(key).map(str::to_string)
    }

    fn num(&self, key: &str) -> Msg<Option<u64>> {
        self.get(key)
    }

    fn float(&self, key: &str) -> Msg<Option<f64>> {
        self.get(key)
    }

    fn flag(&self, key: &str) -> Msg<Option<bool>> {
        self.get(key)
    }

    fn hex(&self, key: &str) -> Msg<Option<u128>> {
        self.get(key)
    }

    fn percent_of(&self, key: &str) -> Msg<Option<PercentOf>> {
        self.get(key)
    }
}

/// Appends `key=value` for each present value, in the order given.
#[derive(Default)]
struct Out(Params);

impl Out {
    fn put(mut self, key: &str, v: Option<impl ToString>) -> Self {
        if let Some(v) = v {
            self.0.set(key, v);
        }
        self
    }

    fn flag(self, key: &str, v: Option<bool>) -> Self {
        self.put(key, v.map(u8::from))
    }

    fn value<T: Value>(self, key: &str, v: Option<&T>) -> Self {
        self.put(key, v.map(Value::write))
    }
}

/// How a parameter of one type is read and written: its text on disk both
/// ways, and what a reader expected when the text is not one.
trait Value: Sized {
    const EXPECTED: &'static str;
    fn read(v: &str) -> Option<Self>;
    fn write(&self) -> String;
}

impl Value for u64 {
    const EXPECTED: &'static str = "a whole number";
    fn read(v: &str) -> Option<u64> {
        v.parse().ok()
    }
    fn write(&self) -> String {
        self.to_string()
    }
}

impl Value for f64 {
    const EXPECTED: &'static str = "a number";
    fn read(v: &str) -> Option<f64> {
        v.parse().ok().filter(|x: &f64| x.is_finite())
    }
    fn write(&self) -> String {
        self.to_string()
    }
}

/// Flags are `0` and `1`.
impl Value for bool {
    const EXPECTED: &'static str = "0 or 1";
    fn read(v: &str) -> Option<bool> {
        match v {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }
    }
    fn write(&self) -> String {
        u8::from(*self).to_string()
    }
}

impl Value for String {
    const EXPECTED: &'static str = "text";
    fn read(v: &str) -> Option<String> {
        Some(v.to_string())
    }
    fn write(&self) -> String {
        self.clone()
    }
}

/// Digests: 32 hex digits.
impl Value for u128 {
    const EXPECTED: &'static str = "32 hex digits";
    fn read(v: &str) -> Option<u128> {
        (v.len() == 32)
            .then(|| parse_hex128(v.as_bytes()))
            .flatten()
    }
    fn write(&self) -> String {
        hex128(*self)
    }
}

impl Value for PercentOf {
    const EXPECTED: &'static str = "smaller or larger";
    fn read(v: &str) -> Option<PercentOf> {
        match v {
            "smaller" => Some(PercentOf::Smaller),
            "larger" => Some(PercentOf::Larger),
            _ => None,
        }
    }
    fn write(&self) -> String {
        self.as_str().to_string()
    }
}

/// A group whose fields are each one optional key: the field, its key on
/// disk, in the order written, given once; reading and writing come from
/// the list (`read_keys` fills the listed fields, the others default).
macro_rules! keys {
    ($ty:ident { $($field:ident = $key:expr),* $(,)? }) => {
        impl $ty {
            /// The group's keys, in the order they are written.
            pub const KEYS: &'static [&'static str] = &[$($key),*];

            // The update fills the fields not listed (none in some groups).
            #[allow(clippy::needless_update)]
            fn read_keys(p: &Params) -> Msg<$ty> {
                let f = Fields(p);
                Ok($ty {
                    $($field: f.get($key)?,)*
                    ..Default::default()
                })
            }

            fn write_keys(&self, out: Out) -> Out {
                out$(.value($key, self.$field.as_ref()))*
            }
        }
    };
}

/// The chunking parameters ([`CHUNK_PARAM_KEYS`](crate::formats::CHUNK_PARAM_KEYS)): how the records were
/// made, carried by every stage after fsim-chunk and compared between
/// inputs. Every key is optional (a key absent from both headers compares
/// equal); `method` is kept as its name because formats cannot know the
/// methods (`crate::chunking` parses it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkParams {
    pub method: Option<String>,
    /// The chunk methods' sizes (tttd, bsw).
    pub avg: Option<u64>,
    pub min: Option<u64>,
    pub max: Option<u64>,
    pub div: Option<u64>,
    pub div2: Option<u64>,
    pub window: Option<u64>,
    /// `md5` (chunk methods) or `kr61` (feature methods).
    pub hash: Option<String>,
    /// Which view was chunked, `auto` or `raw`.
    pub content: Option<String>,
    /// The PDF text extractor of a run with content views when it is not
    /// pdftotext (`fsim-pdftext`, or `none`: PDFs kept their raw view), so
    /// that records made by one extractor are not reused, or compared,
    /// as if made by the other. Written only with views (`content=` other
    /// than `raw`): a raw run reads no PDF text.
    pub pdf: Option<String>,
    /// The legacy Office extractors of a run with content views when some
    /// are missing (`office=none`, or those found: `catdoc+xls2csv`), so
    /// that records of .doc/.xls/.ppt kept raw for want of them are not
    /// reused as if read by their text. Written only with views.
    pub office: Option<String>,
    /// The version of the views' text (`2`: prose as sentences), so that
    /// records of views made another way are not reused as if made this
    /// way. Written only with views.
    pub views: Option<String>,
    /// The feature methods' parameters.
    pub n: Option<u64>,
    pub bits: Option<u64>,
    pub anchors: Option<u64>,
    pub k: Option<u64>,
    pub s: Option<u64>,
    pub b: Option<u64>,
    pub fold_case: Option<bool>,
    pub collapse_whitespace: Option<bool>,
    pub strip_html: Option<bool>,
}

// The first eight are those of the chunk methods (tttd, bsw), `content`
// the view chunked (`--content auto|raw`, written by every fsim-chunk
// run), `pdf` the PDF text extractor when not pdftotext; the others those
// of the feature methods (`crate::chunking::features::MethodSpec::params`).
keys!(ChunkParams {
    method = "method",
    avg = "avg",
    min = "min",
    max = "max",
    div = "div",
    div2 = "div2",
    window = "window",
    hash = "hash",
    content = "content",
    pdf = "pdf",
    office = "office",
    views = "views",
    n = "n",
    bits = "bits",
    anchors = "anchors",
    k = "k",
    s = "s",
    b = "b",
    fold_case = "fold-case",
    collapse_whitespace = "collapse-whitespace",
    strip_html = "strip-html",
});

impl ChunkParams {
    pub fn parse(p: &Params) -> Msg<ChunkParams> {
        Self::read_keys(p)
    }

    pub fn from_params(p: &Params, file: &str) -> Result<ChunkParams> {
        in_file(file, Self::parse(p))
    }

    /// The keys present, in [`CHUNK_PARAM_KEYS`](crate::formats::CHUNK_PARAM_KEYS) order (what
    /// `p.only(CHUNK_PARAM_KEYS)` gave before these were typed).
    pub fn to_params(&self) -> Params {
        let views = !matches!(self.content.as_deref(), None | Some("raw"));
        let written = ChunkParams {
            pdf: self.pdf.clone().filter(|_| views),
            office: self.office.clone().filter(|_| views),
            views: self.views.clone().filter(|_| views),
            ..self.clone()
        };
        written.write_keys(Out::default()).0
    }

    /// The first parameter on which two runs disagree, said as
    /// `key=value here but key=value before`; `None` when they chunked
    /// alike.
    pub fn difference(&self, before: &ChunkParams) -> Option<String> {
        self.to_params().difference(&before.to_params())
    }
}

/// The template set a run ignored since fsim-partition (`templates=` its
/// identity, `template-chunks=` its size; [`crate::formats::templates`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Templates {
    pub sum: u128,
    pub chunks: u64,
}

impl Templates {
    /// `None` when the header names no templates.
    pub fn parse(p: &Params) -> Msg<Option<Templates>> {
        let f = Fields(p);
        match (f.hex("templates")?, f.num("template-chunks")?) {
            (None, None) => Ok(None),
            (Some(sum), Some(chunks)) => Ok(Some(Templates { sum, chunks })),
            _ => Err("header with only one of templates= and template-chunks=".into()),
        }
    }

    pub fn to_params(&self) -> Params {
        Params::new()
            .with("templates", hex128(self.sum))
            .with("template-chunks", self.chunks)
    }
}

/// What fsim-partition's degree limit dropped, carried from the bins
/// header on (`PRUNED_PARAM_KEYS`; docs/formats.md, partition).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    pub degree_limit: Option<u64>,
    pub chunks: u64,
    /// Files holding a dropped chunk: unknown from Spark's forests.
    pub files: Option<u64>,
    /// Which chunks: the sum of their hash mixes.
    pub digest: Option<u128>,
    /// Of `chunks`, those dropped as a generated site's template (pages of
    /// at least `site_names` names; `stages::partition::site`).
    pub site_chunks: u64,
    pub site_names: Option<u64>,
}

impl Pruned {
    /// `None` when no chunk was dropped.
    pub fn parse(p: &Params) -> Msg<Option<Pruned>> {
        let f = Fields(p);
        let Some(chunks) = f.num("pruned-chunks")?.filter(|&c| c > 0) else {
            return Ok(None);
        };
        Ok(Some(Pruned {
            degree_limit: f.num("degree-limit")?,
            chunks,
            files: f.num("pruned-files")?,
            digest: f.hex("pruned-digest")?,
            site_chunks: f.num("site-chunks")?.unwrap_or(0),
            site_names: f.num("site-names")?,
        }))
    }

    /// From a partition file's header limit and its trailer.
    pub fn of_partition(limit: Option<u64>, t: &PartitionTrailer) -> Option<Pruned> {
        (t.dropped_chunks > 0).then_some(Pruned {
            degree_limit: limit,
            chunks: t.dropped_chunks,
            files: t.pruned_files,
            digest: t.dropped_digest,
            site_chunks: t.site_chunks,
            site_names: t.site_names,
        })
    }

    pub fn to_params(&self) -> Params {
        Out::default()
            .put("degree-limit", self.degree_limit)
            .put("pruned-chunks", Some(self.chunks))
            .put("pruned-files", self.files)
            .put("pruned-digest", self.digest.map(hex128))
            .put("site-chunks", Some(self.site_chunks).filter(|&c| c > 0))
            .put(
                "site-names",
                self.site_names.filter(|_| self.site_chunks > 0),
            )
            .0
    }
}

/// The header of a file table, and of the chunk file written beside it
/// (fsim-chunk and fsim-merge head both alike): the chunking parameters,
/// the run's shard, the collections merged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilesHeader {
    pub chunk: ChunkParams,
    /// `shard=I/N` of `fsim-chunk --shard` (parsed by `stages::reuse`).
    pub shard: Option<String>,
    /// Collections joined by fsim-merge (`collections=K`).
    pub collections: Option<u64>,
    /// `merged=1`: a chunk stream joined by fsim-merge.
    pub merged: Option<bool>,
}

keys!(FilesHeader {
    collections = "collections",
    merged = "merged",
    shard = "shard",
});

impl FilesHeader {
    pub fn parse(p: &Params) -> Msg<FilesHeader> {
        Ok(FilesHeader {
            chunk: ChunkParams::parse(p)?,
            ..Self::read_keys(p)?
        })
    }

    /// The chunking parameters, then `collections=`, `merged=` and
    /// `shard=` (fsim-merge writes the first two, fsim-chunk the last).
    pub fn to_params(&self) -> Params {
        self.write_keys(Out(self.chunk.to_params())).0
    }

    pub fn from_params(p: &Params, file: &str) -> Result<FilesHeader> {
        in_file(file, Self::parse(p))
    }
}

/// A file table's trailer: its files, the count and digest of the chunk
/// records written in the same run, the files skipped, and the table's
/// own digest. Each key is optional here: readers say which one they miss.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilesTrailer {
    pub files: Option<u64>,
    pub records: Option<u64>,
    pub digest: Option<u128>,
    pub skipped: Option<u64>,
    pub table_digest: Option<u128>,
    /// Folders and files reached a second time, walked once
    /// ([`crate::io::walk`]).
    pub repeated: Option<u64>,
    /// fsim work folders left out of the walk.
    pub work_folders: Option<u64>,
    /// Files and folders left out by `--exclude` or the size limits.
    pub excluded: Option<u64>,
    /// Those rules, as fsim-chunk's options ([`crate::io::walk::WalkConfig::rules`]).
    pub left_out_by: Option<String>,
}

keys!(FilesTrailer {
    files = "files",
    records = "records",
    digest = "digest",
    skipped = "skipped",
    table_digest = TABLE_DIGEST_KEY,
    repeated = "repeated",
    work_folders = "work-folders",
    excluded = "excluded",
    left_out_by = "left-out-by",
});

impl FilesTrailer {
    pub fn parse(p: &Params) -> Msg<FilesTrailer> {
        Self::read_keys(p)
    }

    /// `files=`, `records=`, `digest=`, `skipped=`, `table-digest=`, and
    /// the walk's counts when not zero.
    pub fn to_params(&self) -> Params {
        let nonzero = |n: Option<u64>| n.filter(|&n| n > 0);
        let written = FilesTrailer {
            repeated: nonzero(self.repeated),
            work_folders: nonzero(self.work_folders),
            excluded: nonzero(self.excluded),
            ..self.clone()
        };
        written.write_keys(Out::default()).0
    }
}

/// A partition file's header: the chunking parameters, the files in the
/// table and the degree limit, and the templates ignored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartitionHeader {
    pub chunk: ChunkParams,
    pub files: Option<u64>,
    pub limit: Option<u64>,
    pub templates: Option<Templates>,
}

impl PartitionHeader {
    pub fn parse(p: &Params) -> Msg<PartitionHeader> {
        let f = Fields(p);
        Ok(PartitionHeader {
            chunk: ChunkParams::parse(p)?,
            files: f.num("files")?,
            limit: f.num("limit")?,
            templates: Templates::parse(p)?,
        })
    }

    /// Chunking parameters, `files=`, `limit=`, then the templates' keys.
    pub fn to_params(&self) -> Params {
        let mut p = Out(self.chunk.to_params())
            .put("files", self.files)
            .put("limit", self.limit)
            .0;
        if let Some(t) = &self.templates {
            p = p.merged(&t.to_params());
        }
        p
    }
}

/// A partition file's trailer (docs/formats.md, partition).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionTrailer {
    /// The kept records: their count and digest.
    pub records: u64,
    pub digest: u128,
    /// Files in components of two or more files.
    pub files: u64,
    pub components: u64,
    pub dropped_chunks: u64,
    pub dropped_records: u64,
    pub pruned_files: Option<u64>,
    pub dropped_digest: Option<u128>,
    /// Of the dropped chunks, those dropped as a generated site's template,
    /// and the rule's threshold (`site_names=`, written with them).
    pub site_chunks: u64,
    pub site_names: Option<u64>,
    /// A re-run's partition of the changed chunks' records alone
    /// (`changed-only=N`, N changed chunks): its kept records are those;
    /// its dropped figures are the whole tree's.
    pub changed_only: Option<u64>,
}

impl PartitionTrailer {
    pub fn parse(p: &Params) -> Msg<PartitionTrailer> {
        let f = Fields(p);
        let need = |k: &str| f.num(k)?.ok_or_else(|| format!("trailer without {k}="));
        Ok(PartitionTrailer {
            records: need("records")?,
            digest: f.hex("digest")?.ok_or("trailer without digest=")?,
            files: need("files")?,
            components: need("components")?,
            dropped_chunks: f.num("dropped_chunks")?.unwrap_or(0),
            dropped_records: f.num("dropped_records")?.unwrap_or(0),
            pruned_files: f.num("pruned_files")?,
            dropped_digest: f.hex("dropped_digest")?,
            site_chunks: f.num("site_chunks")?.unwrap_or(0),
            site_names: f.num("site_names")?,
            changed_only: f.num("changed-only")?,
        })
    }

    /// `pruned_files=` and `dropped_digest=` only when chunks were dropped.
    pub fn to_params(&self) -> Params {
        let dropped = self.dropped_chunks > 0;
        Out::default()
            .put("records", Some(self.records))
            .put("digest", Some(hex128(self.digest)))
            .put("files", Some(self.files))
            .put("components", Some(self.components))
            .put("dropped_chunks", Some(self.dropped_chunks))
            .put("dropped_records", Some(self.dropped_records))
            .put("pruned_files", self.pruned_files.filter(|_| dropped))
            .put(
                "dropped_digest",
                self.dropped_digest.filter(|_| dropped).map(hex128),
            )
            .put("site_chunks", Some(self.site_chunks).filter(|&c| c > 0))
            .put(
                "site_names",
                self.site_names.filter(|_| self.site_chunks > 0),
            )
            .put("changed-only", self.changed_only)
            .0
    }
}

/// A bins file's header: what it carries on from the partition and the
/// packing's own `bins=` and `capacity=`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BinsHeader {
    pub chunk: ChunkParams,
    pub bins: Option<u64>,
    pub capacity: Option<u64>,
}

keys!(BinsHeader {
    bins = "bins",
    capacity = "capacity",
});

impl BinsHeader {
    pub fn parse(p: &Params) -> Msg<BinsHeader> {
        Ok(BinsHeader {
            chunk: ChunkParams::parse(p)?,
            ..Self::read_keys(p)?
        })
    }

    /// `bins=` and `capacity=`, set over the parameters carried on.
    pub fn packing_params(&self) -> Params {
        self.write_keys(Out::default()).0
    }
}

/// A bins file's trailer: the records (checked by `InputCheck`) and the
/// files of its `F` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinsTrailer {
    /// All records: their count and digest (those of the partition file).
    pub records: Option<u64>,
    pub digest: Option<u128>,
    pub bins: Option<u64>,
    pub files: u64,
}

impl BinsTrailer {
    pub fn parse(p: &Params) -> Msg<BinsTrailer> {
        let f = Fields(p);
        Ok(BinsTrailer {
            records: f.num("records")?,
            digest: f.hex("digest")?,
            bins: f.num("bins")?,
            files: f.num("files")?.ok_or("trailer without files=")?,
        })
    }

    pub fn to_params(&self) -> Params {
        Out::default()
            .put("records", self.records)
            .put("digest", self.digest.map(hex128))
            .put("bins", self.bins)
            .put("files", Some(self.files))
            .0
    }
}

/// fsim-analyze's settings in a pairs header: the thresholds, the
/// estimator of a feature method, the line source's settings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AnalysisParams {
    pub min_bytes: Option<u64>,
    pub min_percent: Option<f64>,
    pub percent_of: Option<PercentOf>,
    /// `resemblance`, `positions`, ... (feature methods only).
    pub estimate: Option<&'static str>,
    pub lines: Option<LineParams>,
}

/// The line source's settings (`--line-pairs-below`, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineParams {
    /// Text files of at most this many bytes; `None`: any size
    /// (`line-pairs-below=any`).
    pub below: Option<u64>,
    pub catalogs: bool,
    pub min_percent: f64,
    /// fsim-verify's threshold the line source's pairs were cut to
    /// (`line-verify-min-percent`; absent: not cut, as before the key).
    pub verify_min_percent: Option<f64>,
}

/// The estimators a pairs header names (docs/formats.md, feature methods);
/// `'static` so that [`AnalysisParams`] stays `Copy`.
const ESTIMATES: &[&str] = &["resemblance", "positions", "bbit", "megashingle"];

impl AnalysisParams {
    pub fn parse(p: &Params) -> Msg<AnalysisParams> {
        let f = Fields(p);
        let estimate = f.parsed(
            "estimate",
            "resemblance, positions, bbit or megashingle",
            |v| ESTIMATES.iter().copied().find(|&e| e == v),
        )?;
        let lines =
            match (
                f.parsed("line-pairs-below", "a whole number or any", |v| match v {
                    "any" => Some(None),
                    v => v.parse().ok().map(Some),
                })?,
                f.flag("line-catalogs")?,
                f.float("line-min-percent")?,
            ) {
                (None, None, None) => None,
                (Some(below), Some(catalogs), Some(min_percent)) => Some(LineParams {
                    below,
                    catalogs,
                    min_percent,
                    verify_min_percent: f.float("line-verify-min-percent")?,
                }),
                _ => return Err(
                    "header with only some of line-pairs-below=, line-catalogs=, line-min-percent="
                        .into(),
                ),
            };
        Ok(AnalysisParams {
            min_bytes: f.num("min-bytes")?,
            min_percent: f.float("min-percent")?,
            percent_of: f.percent_of("percent-of")?,
            estimate,
            lines,
        })
    }

    pub fn to_params(&self) -> Params {
        let l = self.lines.as_ref();
        Out::default()
            .put("min-bytes", self.min_bytes)
            .put("min-percent", self.min_percent)
            .put("percent-of", self.percent_of.map(PercentOf::as_str))
            .put("estimate", self.estimate)
            .put(
                "line-pairs-below",
                l.map(|l| l.below.map_or("any".to_string(), |b| b.to_string())),
            )
            .flag("line-catalogs", l.map(|l| l.catalogs))
            .put("line-min-percent", l.map(|l| l.min_percent))
            .put(
                "line-verify-min-percent",
                l.and_then(|l| l.verify_min_percent),
            )
            .0
    }
}

/// A delta pairs file's mark (`delta=1`, `changed-files=N`): only the
/// pairs of the files changed since an earlier run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delta {
    pub changed_files: Option<u64>,
}

impl Delta {
    /// `None` for an ordinary pairs file.
    pub fn parse(p: &Params) -> Msg<Option<Delta>> {
        if p.get("delta").is_none() {
            return Ok(None);
        }
        Ok(Some(Delta {
            changed_files: Fields(p).num("changed-files")?,
        }))
    }

    pub fn to_params(&self) -> Params {
        Out(Params::new().with("delta", 1))
            .put("changed-files", self.changed_files)
            .0
    }

    /// `p` without the mark (verified pairs are whole, not a delta).
    pub fn remove(p: &mut Params) {
        p.0.retain(|(k, _)| k != "delta" && k != "changed-files");
    }
}

/// fsim-verify's settings in a verified pairs header (`verified=1` and
/// the `verify-` keys); `pieces` and `binary` also head a regions file.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyParams {
    pub min_percent: Option<f64>,
    pub percent_of: Option<PercentOf>,
    /// Average size of the pieces of long lines and binary files.
    pub pieces: Option<u64>,
    /// The measure of binary pairs (`byte-runs`); absent before it.
    pub binary: Option<String>,
    /// How long lines of text pairs are cut (`verify-long-lines=`, the
    /// rule's name); absent before it (lines cut past 64 KiB only).
    pub long_lines: Option<String>,
}

impl VerifyParams {
    /// `None` when the pairs are not verified.
    pub fn parse(p: &Params) -> Msg<Option<VerifyParams>> {
        if p.get("verified").is_none() {
            return Ok(None);
        }
        let f = Fields(p);
        Ok(Some(VerifyParams {
            min_percent: f.float("verify-min-percent")?,
            percent_of: f.percent_of("verify-percent-of")?,
            pieces: f.num("verify-pieces")?,
            binary: f.text("verify-binary"),
            long_lines: f.text("verify-long-lines"),
        }))
    }

    /// Of which file `min_percent` is: the smaller when not recorded.
    pub fn percent_of(&self) -> PercentOf {
        self.percent_of.unwrap_or(PercentOf::Smaller)
    }

    /// `verified=1` and the settings.
    pub fn to_params(&self) -> Params {
        Out(Params::new().with("verified", 1))
            .put("verify-min-percent", self.min_percent)
            .put("verify-percent-of", self.percent_of.map(PercentOf::as_str))
            .0
            .merged(&self.measure_params())
    }

    /// How the figures were measured, without the threshold: the keys a
    /// regions file adds to the chunking parameters.
    pub fn measure_params(&self) -> Params {
        Out::default()
            .put("verify-pieces", self.pieces)
            .put("verify-binary", self.binary.as_ref())
            .put("verify-long-lines", self.long_lines.as_ref())
            .0
    }
}

/// A pairs file's header (fsim-analyze; verified pairs: fsim-verify),
/// every group it may hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairsHeader {
    pub chunk: ChunkParams,
    pub templates: Option<Templates>,
    pub pruned: Option<Pruned>,
    pub analysis: AnalysisParams,
    pub delta: Option<Delta>,
    pub verify: Option<VerifyParams>,
}

impl PairsHeader {
    pub fn parse(p: &Params) -> Msg<PairsHeader> {
        Ok(PairsHeader {
            chunk: ChunkParams::parse(p)?,
            templates: Templates::parse(p)?,
            pruned: Pruned::parse(p)?,
            analysis: AnalysisParams::parse(p)?,
            delta: Delta::parse(p)?,
            verify: VerifyParams::parse(p)?,
        })
    }

    pub fn from_params(p: &Params, file: &str) -> Result<PairsHeader> {
        in_file(file, Self::parse(p))
    }

    /// What makes two runs' figures comparable: the chunking parameters
    /// and the templates ignored, as header parameters (for
    /// [`Params::difference`]'s sentence).
    pub fn run_identity(&self) -> Params {
        let t = self.templates.map(|t| t.to_params()).unwrap_or_default();
        self.chunk.to_params().merged(&t)
    }
}

/// A templates file's header: the chunking parameters of the run and the
/// fraction of a cluster's files a template chunk is in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TemplatesHeader {
    pub chunk: ChunkParams,
    pub fraction: Option<f64>,
}

keys!(TemplatesHeader { fraction = "fraction" });

impl TemplatesHeader {
    pub fn parse(p: &Params) -> Msg<TemplatesHeader> {
        Ok(TemplatesHeader {
            chunk: ChunkParams::parse(p)?,
            ..Self::read_keys(p)?
        })
    }

    pub fn to_params(&self) -> Params {
        self.write_keys(Out(self.chunk.to_params())).0
    }
}

/// fsim-report's own settings, added to the pairs' in its outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportParams {
    pub min_percent: f64,
    pub min_bytes: u64,
    pub percent_of: PercentOf,
    /// The filters, as `Filters::describe` says them.
    pub filters: String,
}

impl ReportParams {
    pub fn to_params(&self) -> Params {
        Params::new()
            .with("report-min-percent", self.min_percent)
            .with("report-min-bytes", self.min_bytes)
            .with("report-percent-of", self.percent_of.as_str())
            .with("report-filters", &self.filters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::CHUNK_PARAM_KEYS;

    fn params(s: &str) -> Params {
        Params(
            s.split('\t')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect(),
        )
    }

    /// The chunking keys every stage carries on are ChunkParams' keys.
    #[test]
    fn chunk_param_keys_are_chunk_params_keys() {
        assert_eq!(ChunkParams::KEYS, CHUNK_PARAM_KEYS);
    }

    #[test]
    fn chunk_params_round_trip_in_key_order() {
        let tttd = params("method=tttd\tavg=1000\tmin=460\tmax=2800\tdiv=540\tdiv2=270\twindow=64\thash=md5\tcontent=raw");
        let c = ChunkParams::parse(&tttd).unwrap();
        assert_eq!(c.avg, Some(1000));
        assert_eq!(c.to_params(), tttd);
        // A feature header is written in its method's order and read back
        // in CHUNK_PARAM_KEYS order, what every later stage writes.
        let sif = params("method=sif\twindow=32\tbits=5\tanchors=4\tfold-case=1\tcollapse-whitespace=0\tstrip-html=0\thash=kr61\tfiles=3");
        let c = ChunkParams::parse(&sif).unwrap();
        assert_eq!(c.fold_case, Some(true));
        assert_eq!(c.to_params(), sif.only(CHUNK_PARAM_KEYS));
        let all: Vec<(String, String)> = CHUNK_PARAM_KEYS
            .iter()
            .map(|k| {
                (
                    k.to_string(),
                    if k.contains('-') { "1" } else { "7" }.to_string(),
                )
            })
            .collect();
        let all = Params(all);
        assert_eq!(ChunkParams::parse(&all).unwrap().to_params(), all);
        let other = ChunkParams {
            avg: Some(100),
            ..ChunkParams::parse(&tttd).unwrap()
        };
        assert_eq!(
            other
                .difference(&ChunkParams::parse(&tttd).unwrap())
                .unwrap(),
            "avg=100 here but avg=1000 before"
        );
    }

    #[test]
    fn malformed_values_name_file_key_and_expectation() {
        let e = ChunkParams::from_params(&params("method=tttd\tavg=1k"), "x.tsv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.tsv: header parameter avg=\"1k\": expected a whole number"
        );
        let e = PairsHeader::parse(&params("verified=1\tverify-percent-of=half")).unwrap_err();
        assert_eq!(
            e,
            "header parameter verify-percent-of=\"half\": expected smaller or larger"
        );
        assert!(Templates::parse(&params("templates=00")).is_err());
    }

    #[test]
    fn pairs_groups_round_trip() {
        let text = "method=tttd\tavg=1000\ttemplates=0123456789abcdef0123456789abcdef\ttemplate-chunks=23\tdegree-limit=1000\tpruned-chunks=5\tpruned-digest=000000000000000000000000000000ff\tmin-bytes=1\tmin-percent=12.5\tpercent-of=smaller\testimate=resemblance\tline-pairs-below=4096\tline-catalogs=1\tline-min-percent=30\tdelta=1\tchanged-files=4\tverified=1\tverify-min-percent=50\tverify-percent-of=larger\tverify-pieces=64\tverify-binary=byte-runs\tverify-long-lines=pieces-1024-sep-fnv8-4-max256";
        let p = params(text);
        let h = PairsHeader::parse(&p).unwrap();
        assert_eq!(h.pruned.unwrap().files, None);
        assert_eq!(h.verify.as_ref().unwrap().percent_of(), PercentOf::Larger);
        let mut again = h.chunk.to_params();
        for g in [
            h.templates.unwrap().to_params(),
            h.pruned.unwrap().to_params(),
            h.analysis.to_params(),
            h.delta.unwrap().to_params(),
            h.verify.unwrap().to_params(),
        ] {
            again = again.merged(&g);
        }
        assert_eq!(again, p);
        let none = PairsHeader::parse(&params("method=tttd")).unwrap();
        assert_eq!(
            (none.templates, none.pruned, none.delta, none.verify),
            (None, None, None, None)
        );
        // The line source on files of any size.
        let any = params("line-pairs-below=any\tline-catalogs=1\tline-min-percent=30");
        let a = AnalysisParams::parse(&any).unwrap();
        assert_eq!(a.lines.unwrap().below, None);
        assert_eq!(a.to_params(), any);
        assert!(AnalysisParams::parse(&params(
            "line-pairs-below=all\tline-catalogs=1\tline-min-percent=30"
        ))
        .unwrap_err()
        .contains("expected a whole number or any"));
    }

    #[test]
    fn partition_header_and_trailer() {
        let p = params("method=tttd\tavg=1000\tfiles=10\tlimit=1000\ttemplates=0123456789abcdef0123456789abcdef\ttemplate-chunks=2");
        assert_eq!(PartitionHeader::parse(&p).unwrap().to_params(), p);
        let t = params("records=9\tdigest=00000000000000000000000000000001\tfiles=4\tcomponents=2\tdropped_chunks=3\tdropped_records=7\tpruned_files=2\tdropped_digest=000000000000000000000000000000aa");
        let t = PartitionTrailer::parse(&t).unwrap();
        assert_eq!(
            Pruned::of_partition(Some(1000), &t).unwrap().to_params(),
            params("degree-limit=1000\tpruned-chunks=3\tpruned-files=2\tpruned-digest=000000000000000000000000000000aa")
        );
    }
}
