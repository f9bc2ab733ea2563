//! fsim: find similar and duplicate files in document repositories far
//! larger than memory, after Forman, Eshghi & Chiocchetti, "Finding Similar
//! Files in Large Document Repositories" (KDD 2005).
//!
//! The pipeline is a chain of small programs (src/bin) that exchange
//! line-oriented text records (see [`formats`] and docs/formats.md). The
//! tree has one folder per layer; imports only go down this list (checked by
//! tests/rules/layers.rs, docs/pipeline.md "Map of the tree"):
//!
//! | layer | holds |
//! |---|---|
//! | [`error`], [`cli`] | the error type, stderr lines and argument parsers |
//! | [`formats`] | every record format: reader, writer, escaping, digests |
//! | [`io`] | atomic outputs, the background writer, the walk, long paths, progress |
//! | [`align`] | the bit-parallel LCS of token ids (fsim-verify's exact figure) |
//! | [`content`] | the content view of documents: decompressed streams, the text of docx/xlsx/pptx/odt/ods/odp/epub, PDF and mail (docs/documents.md) |
//! | [`chunking`] | TTTD and BSW, the feature methods, batched MD5, parallel hashing, the stream types |
//! | [`stages`] | one module per pipeline stage (below) |
//! | [`report`] | the report model and its text, json, tsv, html and xlsx renderings |
//! | [`driver`] | the installed `fsim FOLDER` command: the Makefile's pipeline outside the checkout |
//!
//! | program | module | paper |
//! |---|---|---|
//! | fsim-chunk | [`stages::chunk`], [`stages::reuse`] | step 1: TTTD chunks, MD5 per chunk |
//! | fsim-sort | [`stages::sort`] | 2.5 step 2: external sort by hash |
//! | fsim-partition | [`stages::partition`] | 2.5 steps 3-4 |
//! | fsim-binpack | [`stages::binpack`] | 2.5 steps 5-6 |
//! | fsim-analyze | [`stages::analyze`] | steps 3-4 and 2.4 |
//! | fsim-verify | [`stages::verify`] | 2.3: exact bytes in common of candidate pairs |
//! | fsim-report | [`report`] | step 5 and 2.4; sif's post-processing |
//! | fsim-index, fsim-query | [`stages::index`] | sif's one-against-all queries |
//! | fsim-template | [`stages::templates`] | section 4: templates |
//! | fsim-merge | [`stages::collections`] | section 4: collections chunked apart |
//! | fsim | [`driver`] | all of the above on one folder: `make report`, installed |
//!
//! The generators of test and benchmark trees (fsim-gen) and the HP paper's
//! controlled experiment (fsim-eval, docs/evaluation.md) are tools for
//! developers, in the workspace member `tools/` (crate fsim-tools): not
//! part of this library, not installed.

pub mod align;
pub mod chunking;
pub mod cli;
pub mod content;
pub mod driver;
pub mod error;
pub mod formats;
pub mod io;
pub mod report;
pub mod stages;

pub use error::{Error, Result};
