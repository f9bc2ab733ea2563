//! fsim-eval: the controlled experiment of the HP evaluation paper
//! ("An evaluation of syntactic similarity algorithms", sections 3-5),
//! run on any folder of real text documents, with fsim's own TTTD
//! chunk-graph similarity as a fifth method.
//!
//! 1. [`pick_documents`]: 100 distinct text documents between 9 KB and
//!    540 KB, chosen deterministically at evenly spaced ranks of size
//!    (so the folder's own size distribution is sampled, smallest and
//!    largest included), skipping exact copies and documents that share
//!    25% or more of their bytes (TTTD chunks) with one already picked.
//! 2. [`Edits`]: for each document, a sequence of 50 random word starts
//!    (with replacement) and 50 distinct random words (deterministic
//!    SplitMix64 seeded by `--seed` and the document's rank); the
//!    near-duplicate `i` inserts the word (`a`, the paper's word) before
//!    the first `i` starts, or deletes the first `i` words. Variants are
//!    nested: duplicate `i + 1` is duplicate `i` with one more edit.
//! 3. Every method (a [`Config`]) computes a signature of the original
//!    once and of each near-duplicate, and their similarity; the originals'
//!    signatures are kept for the 4,950 pairs of distinct documents.
//! 4. CSV files, SVG plots ([`plot`]) and, with `--markdown`, the report.
//!
//! Cost: the documents in memory (at most 100 × 540 KB), one signature
//! per method and document, one near-duplicate at a time per thread.
//! Sketch_100 dominates the time (100 hashes per distinct window).

pub mod plot;
mod report;

use crate::chunking::chunker::{Chunker, Cut, Method};
use crate::chunking::features::rolling::{for_each_window, mix64};
use crate::chunking::features::{self, Feature, FeatureMethod, MethodSpec};
use crate::error::{Context, Error, Result};
use md5::{Digest as _, Md5};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Validated settings of one run.
#[derive(Debug, Clone)]
pub struct Config {
    pub docs: PathBuf,
    /// Folder for the CSV and SVG files (created).
    pub out: PathBuf,
    /// Write the report (markdown) here, with image links relative to it.
    pub markdown: Option<PathBuf>,
    /// What `docs` is, for the report ("Python 3.11 standard library").
    pub docs_label: Option<String>,
    pub count: usize,
    pub max_i: usize,
    pub min_size: u64,
    pub max_size: u64,
    pub seed: u64,
    /// The inserted word (a space follows it).
    pub word: Vec<u8>,
    /// Window sizes of the sweep (figures 2 and 3).
    pub windows: Vec<usize>,
    /// A candidate sharing this fraction of its bytes (TTTD chunks) with a
    /// picked document is not distinct.
    pub distinct: f64,
    pub jobs: usize,
    /// Measure processing times (figure 11).
    pub timing: bool,
    pub quiet: bool,
}

impl Config {
    pub fn new(docs: PathBuf, out: PathBuf) -> Config {
        Config {
            docs,
            out,
            markdown: None,
            docs_label: None,
            count: 100,
            max_i: 50,
            min_size: 9 << 10,
            max_size: 540 << 10,
            seed: 2007,
            word: b"a".to_vec(),
            windows: vec![5, 10, 20, 40, 60, 80, 100],
            distinct: 0.25,
            jobs: 2,
            timing: true,
            quiet: true,
        }
    }
}

/// The window of the main experiment (figures 4-7): the paper's choice.
pub const MAIN_WINDOW: usize = 20;

// ---------------------------------------------------------------------------
// Deterministic randomness and near-duplicates

/// The corpus generator's SplitMix64: the edits are as reproducible as the
/// corpora.
pub use crate::corpus::Rng;

/// Start offsets of the words of `doc` (a word: a run of bytes that are not
/// ASCII whitespace).
pub fn word_starts(doc: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut prev_space = true;
    for (i, &b) in doc.iter().enumerate() {
        let space = b.is_ascii_whitespace();
        if prev_space && !space {
            v.push(i);
        }
        prev_space = space;
    }
    v
}

/// The random edits of one document, in the order they are applied: the
/// near-duplicate `i` uses the first `i` of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edits {
    /// Word starts (offsets in the original) before which the word is
    /// inserted; drawn with replacement.
    pub inserts: Vec<usize>,
    /// Words (offset, length including the whitespace that follows) to
    /// delete; distinct.
    pub deletes: Vec<(usize, usize)>,
}

impl Edits {
    /// `max` insertions and deletions for `doc` (fewer deletions if the
    /// document has fewer words; none of either if it has none).
    pub fn plan(doc: &[u8], max: usize, seed: u64) -> Edits {
        let starts = word_starts(doc);
        let mut rng = Rng::new(seed);
        if starts.is_empty() {
            return Edits {
                inserts: Vec::new(),
                deletes: Vec::new(),
            };
        }
        let inserts = (0..max)
            .map(|_| starts[rng.below(starts.len() as u64) as usize])
            .collect();
        // A partial Fisher-Yates shuffle of the word indices.
        let mut idx: Vec<usize> = (0..starts.len()).collect();
        let take = max.min(idx.len());
        for k in 0..take {
            let j = k + rng.below((idx.len() - k) as u64) as usize;
            idx.swap(k, j);
        }
        let deletes = idx[..take]
            .iter()
            .map(|&w| {
                let s = starts[w];
                let end = starts.get(w + 1).copied().unwrap_or(doc.len());
                (s, end - s)
            })
            .collect();
        Edits { inserts, deletes }
    }
}

/// `doc` with `word` and a space inserted before each offset of
/// `positions` (offsets in `doc`, any order, repeats allowed).
pub fn insert_words(doc: &[u8], word: &[u8], positions: &[usize]) -> Vec<u8> {
    let mut p = positions.to_vec();
    p.sort_unstable();
    let mut out = Vec::with_capacity(doc.len() + p.len() * (word.len() + 1));
    let mut last = 0;
    for &at in &p {
        out.extend_from_slice(&doc[last..at]);
        out.extend_from_slice(word);
        out.push(b' ');
        last = at;
    }
    out.extend_from_slice(&doc[last..]);
    out
}

/// `doc` without the byte ranges `(offset, len)` (disjoint, any order).
pub fn delete_words(doc: &[u8], ranges: &[(usize, usize)]) -> Vec<u8> {
    let mut r = ranges.to_vec();
    r.sort_unstable();
    let mut out = Vec::with_capacity(doc.len());
    let mut last = 0;
    for &(at, len) in &r {
        out.extend_from_slice(&doc[last..at]);
        last = at + len;
    }
    out.extend_from_slice(&doc[last..]);
    out
}

// ---------------------------------------------------------------------------
// Methods

/// How a method turns a document into a signature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algo {
    /// A feature method of [`crate::chunking::features`].
    Feature(MethodSpec),
    /// Exact resemblance of the sets of all w-byte windows (what the
    /// sampling methods estimate).
    Exact(usize),
    /// fsim's chunk graph: TTTD chunks of this average size, MD5 each;
    /// similarity = bytes of shared chunks / size of the smaller file.
    Tttd(usize),
}

/// Which near-duplicates a method is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grid {
    /// Insertions and deletions, every i (the main window).
    Full,
    /// Insertions only, i = 1, 2, 3 and multiples of 5 (the window sweep).
    Sweep,
}

impl Grid {
    pub fn has(self, variant: Variant, i: usize) -> bool {
        match self {
            Grid::Full => true,
            Grid::Sweep => variant == Variant::Insert && (i <= 3 || i.is_multiple_of(5)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Insert,
    Delete,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Insert, Variant::Delete];
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Insert => "insert",
            Variant::Delete => "delete",
        }
    }
}

/// A method as the CSV names it: `method`, `n`, `window`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MethodConf {
    pub algo: Algo,
    pub grid: Grid,
}

impl MethodConf {
    pub fn method(&self) -> &'static str {
        match self.algo {
            Algo::Feature(s) => s.method.as_str(),
            Algo::Exact(_) => "exact",
            Algo::Tttd(_) => "tttd",
        }
    }

    /// Mod_n / Min_n / Sketch_n / BSW_n: n; sif: 2^bits (one window in n);
    /// TTTD: the average chunk size; exact: 1.
    pub fn n(&self) -> u64 {
        match self.algo {
            Algo::Feature(s) if s.method == FeatureMethod::Sif => 1 << s.bits,
            Algo::Feature(s) => s.n as u64,
            Algo::Exact(_) => 1,
            Algo::Tttd(avg) => avg as u64,
        }
    }

    /// Window in bytes (TTTD: the gear hash's 64-byte window).
    pub fn window(&self) -> usize {
        match self.algo {
            Algo::Feature(s) => s.window,
            Algo::Exact(w) => w,
            Algo::Tttd(_) => crate::chunking::chunker::WINDOW,
        }
    }

    /// The paper's name: `Mod_100`, `BSW_400`, `sif_256`, `TTTD_100`.
    pub fn name(&self) -> String {
        let base = match self.method() {
            "mod" => "Mod",
            "min" => "Min",
            "sketch" => "Sketch",
            "bsw-min" => "BSW",
            "sif" => "sif",
            "exact" => return "exact".into(),
            "tttd" => "TTTD",
            other => other,
        };
        format!("{base}_{}", self.n())
    }

    /// `Mod_100 w=20` (TTTD has no w: it is the same in every window plot).
    pub fn label(&self) -> String {
        match self.algo {
            Algo::Tttd(_) => self.name(),
            _ => format!("{} w={}", self.name(), self.window()),
        }
    }

    /// The signature of `data`.
    pub fn signature(&self, data: &[u8]) -> Sig {
        match self.algo {
            Algo::Feature(spec) => {
                let mut v = Vec::new();
                features::extract(&spec, data, &mut v);
                Sig::Features(v)
            }
            Algo::Exact(w) => {
                let mut v = Vec::with_capacity(data.len());
                for_each_window(data, w, |_, fp| v.push(fp));
                v.sort_unstable();
                v.dedup();
                Sig::Windows(v)
            }
            Algo::Tttd(avg) => {
                let c = Chunker::new(Method::Tttd, avg).expect("valid average chunk size");
                Sig::Chunks(tttd_chunks(&c, data), data.len() as u64)
            }
        }
    }

    /// The method's similarity of two signatures (within 0..=1).
    pub fn similarity(&self, a: &Sig, b: &Sig) -> f64 {
        match (self.algo, a, b) {
            (Algo::Feature(spec), Sig::Features(x), Sig::Features(y)) => {
                let m = count_common(x, y, |f: &Feature| f.hash);
                features::estimate(&spec, m, x.len() as u64, y.len() as u64)
            }
            (Algo::Exact(_), Sig::Windows(x), Sig::Windows(y)) => {
                let m = count_common(x, y, |&v| v);
                let union = (x.len() + y.len()) as u64 - m;
                if union == 0 {
                    0.0
                } else {
                    m as f64 / union as f64
                }
            }
            (Algo::Tttd(_), Sig::Chunks(x, sx), Sig::Chunks(y, sy)) => {
                let small = (*sx).min(*sy);
                if small == 0 {
                    0.0
                } else {
                    (shared_chunk_bytes(x, y) as f64 / small as f64).min(1.0)
                }
            }
            _ => panic!("signature of another method"),
        }
    }
}

/// A document's signature under one method.
#[derive(Debug, Clone)]
pub enum Sig {
    /// Sorted, distinct features ([`features::extract`]).
    Features(Vec<Feature>),
    /// Sorted, distinct window fingerprints.
    Windows(Vec<u64>),
    /// Sorted (MD5, length) of every chunk (repeats kept), and the size.
    Chunks(Vec<(u128, u32)>, u64),
}

/// TTTD chunks of `data` as sorted (MD5, length), repeats kept.
pub fn tttd_chunks(c: &Chunker, data: &[u8]) -> Vec<(u128, u32)> {
    let mut v: Vec<(u128, u32)> = c
        .chunks(data)
        .map(|ch| {
            let d = Md5::digest(&data[ch.offset..ch.offset + ch.len]);
            (crate::formats::digest_to_u128(&d), ch.len as u32)
        })
        .collect();
    v.sort_unstable();
    v
}

/// Bytes of the chunks two sorted chunk lists share, each chunk counted
/// min(occurrences in a, occurrences in b) times.
pub fn shared_chunk_bytes(a: &[(u128, u32)], b: &[(u128, u32)]) -> u64 {
    let (mut i, mut j, mut s) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += a[i].1 as u64;
                i += 1;
                j += 1;
            }
        }
    }
    s
}

/// Common elements of two sorted, distinct lists.
fn count_common<T, K: Ord>(a: &[T], b: &[T], key: impl Fn(&T) -> K) -> u64 {
    let (mut i, mut j, mut m) = (0, 0, 0u64);
    while i < a.len() && j < b.len() {
        match key(&a[i]).cmp(&key(&b[j])) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                m += 1;
                i += 1;
                j += 1;
            }
        }
    }
    m
}

fn spec(method: FeatureMethod, window: usize, n: u32) -> MethodSpec {
    let mut s = MethodSpec::new(method);
    s.window = window;
    s.n = n;
    s
}

/// The methods of the run: the sweep methods (Mod_100, Min_100,
/// Sketch_100, BSW_400, sif 1/256) at every window; at the main window
/// also Mod_500, BSW_100/500/1000, Sketch_10, the exact resemblance, and
/// TTTD with average chunks of 100 (fsim's default) and 1000 bytes.
pub fn methods(windows: &[usize]) -> Vec<MethodConf> {
    let mut v = Vec::new();
    let mut add = |algo: Algo, w: usize| {
        let grid = if w == MAIN_WINDOW {
            Grid::Full
        } else {
            Grid::Sweep
        };
        let m = MethodConf { algo, grid };
        if !v.contains(&m) {
            v.push(m);
        }
    };
    let mut ws: Vec<usize> = windows.to_vec();
    if !ws.contains(&MAIN_WINDOW) {
        ws.push(MAIN_WINDOW);
    }
    ws.sort_unstable();
    ws.dedup();
    for &w in &ws {
        add(Algo::Feature(spec(FeatureMethod::Mod, w, 100)), w);
        add(Algo::Feature(spec(FeatureMethod::Min, w, 100)), w);
        add(Algo::Feature(spec(FeatureMethod::Sketch, w, 100)), w);
        add(Algo::Feature(spec(FeatureMethod::BswMin, w, 400)), w);
        add(Algo::Feature(spec(FeatureMethod::Sif, w, 100)), w);
        add(Algo::Exact(w), w);
    }
    let w = MAIN_WINDOW;
    add(Algo::Feature(spec(FeatureMethod::Mod, w, 500)), w);
    add(Algo::Feature(spec(FeatureMethod::BswMin, w, 100)), w);
    add(Algo::Feature(spec(FeatureMethod::BswMin, w, 500)), w);
    add(Algo::Feature(spec(FeatureMethod::BswMin, w, 1000)), w);
    add(Algo::Feature(spec(FeatureMethod::Sketch, w, 10)), w);
    add(Algo::Tttd(100), w);
    add(Algo::Tttd(1000), w);
    v
}

// ---------------------------------------------------------------------------
// Documents

/// A picked document: its rank by size (1-based, as the paper's document
/// ID), path and bytes.
#[derive(Debug, Clone)]
pub struct Doc {
    pub id: usize,
    pub path: PathBuf,
    pub data: Vec<u8>,
}

/// Text: valid UTF-8 without NUL bytes.
fn is_text(data: &[u8]) -> bool {
    !data.contains(&0) && std::str::from_utf8(data).is_ok()
}

/// Pick `cfg.count` distinct text documents from `cfg.docs` (see the
/// module documentation). Errors when the folder has too few.
pub fn pick_documents(cfg: &Config) -> Result<Vec<Doc>> {
    let mut cands: Vec<(u64, PathBuf)> = Vec::new();
    for e in walkdir::WalkDir::new(&cfg.docs)
        .follow_links(false)
        .sort_by_file_name()
    {
        let e = match e {
            Ok(e) => e,
            Err(_) => continue, // unreadable folders: not candidates
        };
        if !e.file_type().is_file() {
            continue;
        }
        let Ok(md) = e.metadata() else { continue };
        if (cfg.min_size..=cfg.max_size).contains(&md.len()) {
            cands.push((md.len(), e.into_path()));
        }
    }
    cands.sort();
    let n = cands.len();
    if n < cfg.count || cfg.count == 0 {
        return Err(Error::msg(format!(
            "{} has {n} files between {} and {} bytes: {} needed",
            cfg.docs.display(),
            cfg.min_size,
            cfg.max_size,
            cfg.count
        )));
    }
    // 0: not tried, 1: rejected, 2: picked.
    let mut state = vec![0u8; n];
    let chunker = Chunker::new(Method::Tttd, 100).expect("valid");
    let mut seen = HashSet::new();
    // (rank, bytes, sorted TTTD chunks) of the picked documents.
    type Picked = (usize, Vec<u8>, Vec<(u128, u32)>);
    let mut picked: Vec<Picked> = Vec::new();
    for k in 0..cfg.count {
        let target = if cfg.count == 1 {
            0
        } else {
            (k * (n - 1) + (cfg.count - 1) / 2) / (cfg.count - 1)
        };
        // Nearest untried candidate to the target rank, alternating sides.
        let mut found = false;
        for d in 0..2 * n {
            let idx = if d % 2 == 0 {
                target.checked_add(d / 2)
            } else {
                target.checked_sub(d / 2 + 1)
            };
            let Some(idx) = idx.filter(|&x| x < n) else {
                continue;
            };
            if state[idx] != 0 {
                continue;
            }
            state[idx] = 1;
            let Ok(data) = std::fs::read(&cands[idx].1) else {
                continue;
            };
            if !is_text(&data) || !seen.insert(Md5::digest(&data)) {
                continue;
            }
            let chunks = tttd_chunks(&chunker, &data);
            let close = picked.iter().any(|(_, d, c)| {
                let small = d.len().min(data.len()) as f64;
                shared_chunk_bytes(c, &chunks) as f64 >= cfg.distinct * small
            });
            if close {
                continue;
            }
            state[idx] = 2;
            picked.push((idx, data, chunks));
            found = true;
            break;
        }
        if !found {
            return Err(Error::msg(format!(
                "{} has only {} distinct text files between {} and {} bytes: {} needed",
                cfg.docs.display(),
                picked.len(),
                cfg.min_size,
                cfg.max_size,
                cfg.count
            )));
        }
    }
    picked.sort_by_key(|p| p.0);
    Ok(picked
        .into_iter()
        .enumerate()
        .map(|(k, (idx, data, _))| Doc {
            id: k + 1,
            path: cands[idx].1.clone(),
            data,
        })
        .collect())
}

// ---------------------------------------------------------------------------
// The experiment

/// Everything measured.
#[derive(Debug, Clone)]
pub struct Results {
    pub methods: Vec<MethodConf>,
    pub max_i: usize,
    /// `sims[method][variant][i][doc]` (NaN where not measured).
    pub sims: Vec<[Vec<Vec<f64>>; 2]>,
    /// Similarities of the pairs of distinct originals, per method.
    pub pairs: Vec<Vec<f64>>,
    /// Processing time (seconds, fastest of 5) per method of the timing
    /// document, and that document's size in bytes.
    pub times: Vec<f64>,
    pub timing_bytes: Option<usize>,
    /// Average signature length per method over the originals.
    pub sig_len: Vec<f64>,
}

impl Results {
    /// Average over the documents at (method, variant, i), if measured.
    pub fn avg(&self, m: usize, v: Variant, i: usize) -> Option<f64> {
        let row = &self.sims[m][v as usize][i];
        if row.iter().any(|x| x.is_nan()) || row.is_empty() {
            None
        } else {
            Some(row.iter().sum::<f64>() / row.len() as f64)
        }
    }

    /// Index of the method with this name and window (`Mod_100`, 20).
    pub fn find(&self, name: &str, window: usize) -> Option<usize> {
        self.methods
            .iter()
            .position(|m| m.name() == name && (m.window() == window || m.method() == "tttd"))
    }
}

fn sig_len(s: &Sig) -> usize {
    match s {
        Sig::Features(v) => v.len(),
        Sig::Windows(v) => v.len(),
        Sig::Chunks(v, _) => v.len(),
    }
}

/// Run `f(k)` for k in 0..n on `jobs` threads, taking work in order.
fn parallel<T: Send>(n: usize, jobs: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(n.max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= n {
                    break;
                }
                let r = f(k);
                out.lock().unwrap()[k] = Some(r);
            });
        }
    });
    out.into_inner()
        .unwrap()
        .into_iter()
        .map(|x| x.expect("every job ran"))
        .collect()
}

/// Measure every method on the documents.
pub fn measure(cfg: &Config, docs: &[Doc], methods: &[MethodConf]) -> Results {
    let nd = docs.len();
    let max_i = cfg.max_i;
    // Largest documents first, for an even load.
    let mut order: Vec<usize> = (0..nd).collect();
    order.sort_by_key(|&d| std::cmp::Reverse(docs[d].data.len()));
    let done = AtomicUsize::new(0);
    type PerDoc = (Vec<Sig>, Vec<[Vec<f64>; 2]>);
    let per_doc: Vec<PerDoc> = parallel(nd, cfg.jobs, |k| {
        let d = &docs[order[k]];
        let edits = Edits::plan(&d.data, max_i, cfg.seed ^ mix64(d.id as u64));
        let orig: Vec<Sig> = methods.iter().map(|m| m.signature(&d.data)).collect();
        let mut sims: Vec<[Vec<f64>; 2]> = methods
            .iter()
            .map(|_| [vec![f64::NAN; max_i + 1], vec![f64::NAN; max_i + 1]])
            .collect();
        // i = 0 is the original itself.
        for (s, m) in sims.iter_mut().zip(methods) {
            for v in Variant::ALL {
                if m.grid.has(v, 0) {
                    s[v as usize][0] = 1.0;
                }
            }
        }
        for v in Variant::ALL {
            let avail = match v {
                Variant::Insert => edits.inserts.len(),
                Variant::Delete => edits.deletes.len(),
            };
            // `i` is the number of edits, not only an index.
            #[allow(clippy::needless_range_loop)]
            for i in 1..=max_i.min(avail) {
                let want: Vec<usize> = (0..methods.len())
                    .filter(|&m| methods[m].grid.has(v, i))
                    .collect();
                if want.is_empty() {
                    continue;
                }
                let dup = match v {
                    Variant::Insert => insert_words(&d.data, &cfg.word, &edits.inserts[..i]),
                    Variant::Delete => delete_words(&d.data, &edits.deletes[..i]),
                };
                for m in want {
                    let sig = methods[m].signature(&dup);
                    let x = methods[m].similarity(&orig[m], &sig);
                    sims[m][v as usize][i] = x;
                }
            }
        }
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if !cfg.quiet {
            eprint!("\rfsim-eval: {n}/{nd} documents");
        }
        (orig, sims)
    });
    if !cfg.quiet {
        eprintln!();
    }
    // Back to document order.
    let mut by_doc: Vec<Option<PerDoc>> = (0..nd).map(|_| None).collect();
    for (k, r) in per_doc.into_iter().enumerate() {
        by_doc[order[k]] = Some(r);
    }
    let by_doc: Vec<PerDoc> = by_doc.into_iter().map(|x| x.unwrap()).collect();
    let sims = (0..methods.len())
        .map(|m| {
            let mk = |v: usize| {
                (0..=max_i)
                    .map(|i| by_doc.iter().map(|d| d.1[m][v][i]).collect())
                    .collect()
            };
            [mk(0), mk(1)]
        })
        .collect();
    let sig_len = (0..methods.len())
        .map(|m| by_doc.iter().map(|d| sig_len(&d.0[m]) as f64).sum::<f64>() / nd.max(1) as f64)
        .collect();
    // Pairs of distinct originals, one method per job.
    let pairs = parallel(methods.len(), cfg.jobs, |m| {
        let mut v = Vec::with_capacity(nd * nd.saturating_sub(1) / 2);
        for a in 0..nd {
            for b in a + 1..nd {
                v.push(methods[m].similarity(&by_doc[a].0[m], &by_doc[b].0[m]));
            }
        }
        v
    });
    drop(by_doc);
    let (times, timing_bytes) = if cfg.timing {
        time_methods(docs, methods)
    } else {
        (vec![f64::NAN; methods.len()], None)
    };
    Results {
        methods: methods.to_vec(),
        max_i,
        sims,
        pairs,
        times,
        timing_bytes,
        sig_len,
    }
}

/// Size of the timing document (figure 11).
pub const TIMING_BYTES: usize = 500_000;

/// Processing time of a 500 KB document under each method: the first
/// 500,000 bytes of the documents concatenated, largest first (one
/// document when the folder has one that large). Signature only, fastest
/// of five runs, one thread. Returns the times and the document's size.
fn time_methods(docs: &[Doc], methods: &[MethodConf]) -> (Vec<f64>, Option<usize>) {
    let mut by_size: Vec<&Doc> = docs.iter().collect();
    by_size.sort_by_key(|d| std::cmp::Reverse(d.data.len()));
    let mut doc = Vec::with_capacity(TIMING_BYTES);
    for d in by_size {
        if doc.len() >= TIMING_BYTES {
            break;
        }
        doc.extend_from_slice(&d.data);
    }
    doc.truncate(TIMING_BYTES);
    if doc.is_empty() {
        return (vec![f64::NAN; methods.len()], None);
    }
    let times = methods
        .iter()
        .map(|m| {
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    let s = m.signature(&doc);
                    let e = t.elapsed().as_secs_f64();
                    std::hint::black_box(s);
                    e
                })
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    (times, Some(doc.len()))
}

// ---------------------------------------------------------------------------
// Outputs

/// Write a file atomically.
pub(crate) fn write_file(path: &Path, data: &[u8]) -> Result<()> {
    let mut o = crate::io::Output::create(Some(path))?;
    o.write_all(data)?;
    o.finish()
}

/// A CSV field: quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Header of `average.csv`.
pub const AVERAGE_COLUMNS: &str = "variant,method,n,window,i,docs,avg_similarity";

/// Write the CSV files; returns their names.
pub fn write_csvs(cfg: &Config, docs: &[Doc], r: &Results) -> Result<Vec<String>> {
    let out = &cfg.out;
    let mut names = Vec::new();
    let mut put = |name: &str, body: String| -> Result<()> {
        write_file(&out.join(name), body.as_bytes())?;
        names.push(name.to_string());
        Ok(())
    };

    let mut s = String::from("id,bytes,path\n");
    for d in docs {
        let p = d.path.strip_prefix(&cfg.docs).unwrap_or(&d.path);
        let _ = writeln!(
            s,
            "{},{},{}",
            d.id,
            d.data.len(),
            csv_field(&p.to_string_lossy())
        );
    }
    put("documents.csv", s)?;

    let mut s = format!("{AVERAGE_COLUMNS}\n");
    for (m, mc) in r.methods.iter().enumerate() {
        for v in Variant::ALL {
            for i in 0..=r.max_i {
                if let Some(a) = r.avg(m, v, i) {
                    let _ = writeln!(
                        s,
                        "{},{},{},{},{i},{},{a:.6}",
                        v.as_str(),
                        mc.method(),
                        mc.n(),
                        mc.window(),
                        docs.len()
                    );
                }
            }
        }
    }
    put("average.csv", s)?;

    // Per document at the largest i (figures 6 and 8).
    let mut s = String::from("variant,method,n,window,i,doc,bytes,similarity\n");
    for (m, mc) in r.methods.iter().enumerate() {
        for v in Variant::ALL {
            let row = &r.sims[m][v as usize][r.max_i];
            if row.iter().any(|x| x.is_nan()) {
                continue;
            }
            for (d, x) in docs.iter().zip(row) {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{x:.6}",
                    v.as_str(),
                    mc.method(),
                    mc.n(),
                    mc.window(),
                    r.max_i,
                    d.id,
                    d.data.len()
                );
            }
        }
    }
    put("per_document.csv", s)?;

    // Pairs of distinct documents: summary and CDF.
    let mut s = String::from(
        "method,n,window,pairs,nonzero,mean,median_nonzero,p95_nonzero,max,nonzero_below_4pct,nonzero_above_20pct\n",
    );
    let mut c = String::from("method,n,window,similarity,cdf_nonzero,cdf_all\n");
    for (m, mc) in r.methods.iter().enumerate() {
        let p = pair_stats(&r.pairs[m]);
        let _ = writeln!(
            s,
            "{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
            mc.method(),
            mc.n(),
            mc.window(),
            p.pairs,
            p.nonzero,
            p.mean,
            p.median_nonzero,
            p.p95_nonzero,
            p.max,
            p.below_4pct,
            p.above_20pct
        );
        for (x, nz, all) in cdf_points(&r.pairs[m]) {
            let _ = writeln!(
                c,
                "{},{},{},{x:.6},{nz:.6},{all:.6}",
                mc.method(),
                mc.n(),
                mc.window()
            );
        }
    }
    put("pairs_summary.csv", s)?;
    put("pairs_cdf.csv", c)?;

    if let Some(bytes) = r.timing_bytes {
        let mut s = String::from("method,n,window,bytes,milliseconds,signature_len\n");
        for (m, mc) in r.methods.iter().enumerate() {
            let _ = writeln!(
                s,
                "{},{},{},{bytes},{:.3},{:.1}",
                mc.method(),
                mc.n(),
                mc.window(),
                r.times[m] * 1e3,
                r.sig_len[m]
            );
        }
        put("timing.csv", s)?;
    }
    Ok(names)
}

/// Summary of the similarities of the distinct pairs.
#[derive(Debug, Clone, Copy, Default)]
pub struct PairStats {
    pub pairs: usize,
    pub nonzero: usize,
    pub mean: f64,
    pub median_nonzero: f64,
    pub p95_nonzero: f64,
    pub max: f64,
    /// Share of the non-zero pairs below 4% (the paper's figure 4 numbers).
    pub below_4pct: f64,
    /// Share of the non-zero pairs above 20% (figure 3).
    pub above_20pct: f64,
}

pub fn pair_stats(v: &[f64]) -> PairStats {
    let mut nz: Vec<f64> = v.iter().copied().filter(|&x| x > 0.0).collect();
    nz.sort_by(f64::total_cmp);
    let q = |p: f64| {
        if nz.is_empty() {
            0.0
        } else {
            nz[((nz.len() - 1) as f64 * p).round() as usize]
        }
    };
    let share = |f: &dyn Fn(f64) -> bool| {
        if nz.is_empty() {
            0.0
        } else {
            nz.iter().filter(|&&x| f(x)).count() as f64 / nz.len() as f64
        }
    };
    PairStats {
        pairs: v.len(),
        nonzero: nz.len(),
        mean: if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        },
        median_nonzero: q(0.5),
        p95_nonzero: q(0.95),
        max: nz.last().copied().unwrap_or(0.0),
        below_4pct: share(&|x| x < 0.04),
        above_20pct: share(&|x| x > 0.20),
    }
}

/// The CDF at similarity 0, 0.01, ..., 1: (x, share of the non-zero
/// pairs at or below x, share of all pairs at or below x).
pub fn cdf_points(v: &[f64]) -> Vec<(f64, f64, f64)> {
    let nz = v.iter().filter(|&&x| x > 0.0).count().max(1) as f64;
    let all = v.len().max(1) as f64;
    (0..=100)
        .map(|k| {
            let x = k as f64 / 100.0;
            let a = v.iter().filter(|&&s| s <= x + 1e-12).count() as f64;
            let z = v.iter().filter(|&&s| s > 0.0 && s <= x + 1e-12).count() as f64;
            (x, z / nz, a / all)
        })
        .collect()
}

/// The whole run: pick, measure, write CSV, SVG and the report. Returns
/// the results for callers that look at them (tests).
pub fn run(cfg: &Config) -> Result<Results> {
    let t0 = Instant::now();
    let docs = pick_documents(cfg)?;
    if !cfg.quiet {
        let total: usize = docs.iter().map(|d| d.data.len()).sum();
        eprintln!(
            "fsim-eval: {} documents, {} bytes, from {}",
            docs.len(),
            total,
            cfg.docs.display()
        );
    }
    let methods = methods(&cfg.windows);
    let r = measure(cfg, &docs, &methods);
    std::fs::create_dir_all(&cfg.out).ctx(|| format!("cannot create {}", cfg.out.display()))?;
    write_csvs(cfg, &docs, &r)?;
    let plots = plot::write_all(cfg, &docs, &r)?;
    if let Some(md) = &cfg.markdown {
        let text = report::markdown(cfg, &docs, &r, &plots, t0.elapsed().as_secs_f64());
        write_file(md, text.as_bytes())?;
    }
    if !cfg.quiet {
        eprintln!(
            "fsim-eval: wrote {} in {:.1} s",
            cfg.out.display(),
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(len: usize, seed: u64) -> Vec<u8> {
        crate::chunking::chunker::pseudo_text(len, seed)
    }

    #[test]
    fn insert_exact_count_and_reversible() {
        let doc = text(20_000, 1);
        let e = Edits::plan(&doc, 50, 7);
        assert_eq!(e.inserts.len(), 50);
        let starts: HashSet<usize> = word_starts(&doc).into_iter().collect();
        assert!(e.inserts.iter().all(|p| starts.contains(p)));
        for i in [0, 1, 17, 50] {
            let dup = insert_words(&doc, b"a", &e.inserts[..i]);
            assert_eq!(dup.len(), doc.len() + 2 * i);
            // Removing the inserted "a " at the shifted offsets gives the
            // original back: exactly i insertions, nowhere else.
            let mut p = e.inserts[..i].to_vec();
            p.sort_unstable();
            let mut back = dup.clone();
            for (k, &at) in p.iter().enumerate().rev() {
                let at = at + 2 * k;
                assert_eq!(&back[at..at + 2], b"a ");
                back.drain(at..at + 2);
            }
            assert_eq!(back, doc);
        }
        // Repeated positions are allowed: "a a word".
        assert_eq!(insert_words(b"x y", b"a", &[2, 2, 0]), b"a x a a y");
    }

    #[test]
    fn delete_exact_count() {
        let doc = b"one two  three\nfour five".to_vec();
        let e = Edits::plan(&doc, 3, 1);
        assert_eq!(e.deletes.len(), 3);
        let d: HashSet<_> = e.deletes.iter().collect();
        assert_eq!(d.len(), 3, "distinct words");
        let out = delete_words(&doc, &e.deletes);
        let words = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(words(&out).len(), 2);
        assert_eq!(delete_words(&doc, &[(4, 5)]), b"one three\nfour five");
        // More deletions asked than words: all of them, once.
        let e = Edits::plan(b"a b", 5, 1);
        assert_eq!(e.deletes.len(), 2);
        assert!(delete_words(b"a b", &e.deletes).is_empty());
        assert_eq!(Edits::plan(b"   ", 5, 1).inserts.len(), 0);
    }

    #[test]
    fn edits_are_deterministic() {
        let doc = text(30_000, 2);
        assert_eq!(Edits::plan(&doc, 50, 9), Edits::plan(&doc, 50, 9));
        assert_ne!(Edits::plan(&doc, 50, 9), Edits::plan(&doc, 50, 10));
        // Pinned: the generator must not change silently.
        let e = Edits::plan(b"w0 w1 w2 w3 w4 w5 w6 w7 w8 w9", 4, 2007);
        assert_eq!(e.inserts, [18, 24, 3, 12]);
        assert_eq!(e.deletes, [(6, 3), (18, 3), (15, 3), (27, 2)]);
    }

    #[test]
    fn tttd_similarity_counts_shared_bytes() {
        let m = MethodConf {
            algo: Algo::Tttd(100),
            grid: Grid::Full,
        };
        let a = text(50_000, 3);
        let sa = m.signature(&a);
        assert_eq!(m.similarity(&sa, &sa), 1.0);
        let mut b = a[..25_000].to_vec();
        b.extend_from_slice(&text(25_000, 4));
        let sb = m.signature(&b);
        let s = m.similarity(&sa, &sb);
        assert!((0.45..0.5).contains(&s), "{s}");
        // Repeats count min(occurrences): a doubled file shares one copy.
        let mut aa = a.clone();
        aa.extend_from_slice(&a);
        let s = m.similarity(&sa, &m.signature(&aa));
        assert!(s > 0.99, "{s}");
        assert_eq!(
            shared_chunk_bytes(&[(1, 5), (1, 5), (2, 3)], &[(1, 5), (2, 3), (2, 3)]),
            8
        );
    }

    #[test]
    fn exact_is_jaccard() {
        let m = MethodConf {
            algo: Algo::Exact(4),
            grid: Grid::Full,
        };
        // Windows of "abcdef": abcd bcde cdef; of "abcdxf": abcd bcdx cdxf.
        let s = m.similarity(&m.signature(b"abcdef"), &m.signature(b"abcdxf"));
        assert!((s - 1.0 / 5.0).abs() < 1e-12, "{s}");
    }

    #[test]
    fn method_names() {
        let ms = methods(&[5, 20]);
        let names: Vec<String> = ms.iter().map(|m| m.label()).collect();
        for want in [
            "Mod_100 w=5",
            "BSW_400 w=20",
            "sif_256 w=20",
            "TTTD_100",
            "Sketch_10 w=20",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
        }
        assert_eq!(names.len(), ms.len());
        assert!(ms
            .iter()
            .all(|m| (m.window() == 20 || m.method() == "tttd") == (m.grid == Grid::Full)));
    }
}
