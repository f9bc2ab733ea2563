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

mod documents;
mod edits;
mod experiment;
mod methods;
mod output;
pub mod plot;
mod report;
#[cfg(test)]
mod tests;

pub use documents::{pick_documents, Doc};
pub use edits::{delete_words, insert_words, word_starts, Edits};
pub use experiment::{measure, Results, TIMING_BYTES};
pub use methods::{methods, shared_chunk_bytes, tttd_chunks, Algo, Grid, MethodConf, Sig, Variant};
pub(crate) use output::write_file;
pub use output::{cdf_points, pair_stats, write_csvs, PairStats, AVERAGE_COLUMNS};

use fsim::chunking::chunker::{Chunker, Cut, Method};
use fsim::chunking::features::rolling::{for_each_window, mix64};
use fsim::chunking::features::{self, Feature, FeatureMethod, MethodSpec};
use fsim::error::{Context, Error, Result};
use md5::{Digest as _, Md5};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// The corpus generator's SplitMix64: the edits are as reproducible as the
/// corpora.
pub use crate::corpus::Rng;

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
