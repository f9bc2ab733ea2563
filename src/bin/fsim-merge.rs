//! fsim-merge: analyse collections chunked apart together (paper section
//! 4). Logic: `fsim::stages::collections`.

use clap::Parser;
use fsim::stages::collections::{self, Input, MergeConfig};
use std::path::PathBuf;
use std::process::ExitCode;

/// Join the metadata of collections chunked separately (other sites,
/// machines or times) into one file table and one chunk stream, file ids
/// offset so they never collide; the file table names each collection
/// (`#collection` lines) for fsim-report. Only the file tables and chunk
/// files are read, never the collections' files.
///
/// Each COLLECTION is NAME=DIR (DIR holds files.tsv and chunks.tsv, as
/// fsim-chunk or a make work folder leaves them) or
/// NAME=FILES.tsv,CHUNKS.tsv. All must be chunked with the same parameters.
/// Memory: one input file table at a time; records are streamed.
#[derive(Parser, Debug)]
#[command(name = "fsim-merge", version)]
struct Args {
    /// Where to write the merged file table.
    #[arg(long, value_name = "FILES.tsv", default_value = "files.tsv")]
    files_out: PathBuf,
    /// Merged chunk records (default: standard output), written atomically.
    #[arg(short, long, value_name = "CHUNKS.tsv")]
    output: Option<PathBuf>,
    /// No progress bar and no summary line on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// The last COLLECTION is an earlier run of the case (make's
    /// AGAINST), the others new: write the changed set of a re-run (the
    /// new files, the chunks they hold, where the earlier ids went), so
    /// that the sort, the partition and the bin packing take only the
    /// records of those chunks (fsim-sort --changed). Removed instead
    /// when those chunks are more than 4 Mi.
    #[arg(long, value_name = "FILE")]
    changed_out: Option<PathBuf>,
    /// NAME=DIR or NAME=FILES.tsv,CHUNKS.tsv, one per collection.
    #[arg(value_name = "COLLECTION", required = true, value_parser = Input::parse)]
    inputs: Vec<Input>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    fsim::cli::run("fsim-merge", || {
        let s = collections::merge(&MergeConfig {
            inputs: a.inputs,
            files_out: a.files_out,
            output: a.output,
            quiet: a.quiet,
            changed_out: a.changed_out,
        })?;
        if !a.quiet {
            fsim::cli::stderr_line(s.line());
        }
        Ok(())
    })
}
