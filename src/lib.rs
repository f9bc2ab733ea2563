//! fsim: find similar and duplicate files in document repositories far
//! larger than memory, after Forman, Eshghi & Chiocchetti, "Finding Similar
//! Files in Large Document Repositories" (KDD 2005).
//!
//! The pipeline is a chain of small programs (src/bin) that exchange
//! line-oriented text records (see [`records`] and docs/formats.md):
//!
//! | stage | module | paper |
//! |---|---|---|
//! | fsim-chunk | [`chunker`], [`walk`], [`longpath`], [`chunk`] | step 1: TTTD chunks, MD5 per chunk |
//! | fsim-sort | [`sort`], [`sort_resume`] | 2.5 step 2: external sort by hash |
//! | fsim-partition | [`partition`], [`unionfind`] | 2.5 steps 3-4 |
//! | fsim-binpack | [`binpack`] | 2.5 steps 5-6 |
//! | fsim-analyze | [`analyze`] | steps 3-4 and 2.4 |
//! | fsim-verify | [`verify`] | 2.3: exact bytes in common of candidate pairs |
//! | fsim-report | [`report`] | step 5 and 2.4 |
//! | fsim-index, fsim-query | [`index`] | sif's one-against-all queries |
//! | fsim-report | [`report`], [`report_html`], [`report_xlsx`], [`report_filter`], [`report_collections`] | step 5 and 2.4; sif's post-processing |
//! | fsim-template | [`templates`] | section 4: templates |
//! | fsim-merge | [`collections`] | section 4: collections chunked apart |
//! | fsim-eval | [`eval`] | the HP paper's controlled experiment (docs/evaluation.md) |

pub mod analyze;
pub mod bgwrite;
pub mod binpack;
pub mod chunk;
pub mod chunker;
pub mod cli;
pub mod collections;
pub mod corpus;
pub mod error;
pub mod eval;
pub mod features;
pub mod index;
pub mod io;
pub mod longpath;
pub mod md5batch;
pub mod parhash;
pub mod partition;
pub mod progress;
pub mod records;
pub mod report;
pub mod report_collections;
pub mod report_filter;
pub mod report_html;
pub mod report_xlsx;
pub mod reuse;
pub mod sort;
pub mod sort_resume;
pub mod templates;
pub mod unionfind;
pub mod verify;
pub mod walk;

pub use error::{Error, Result};
