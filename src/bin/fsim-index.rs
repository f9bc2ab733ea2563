//! fsim-index: build or extend a memory-mapped index for fsim-query.
use clap::Parser;
use fsim::stages::index::{self, BuildConfig};
use std::path::PathBuf;
use std::process::ExitCode;

/// Add a segment made of a sorted chunk file and its file table to an index
/// folder (created if needed), or merge the folder's segments into one.
/// Memory: the file table being added (or, with --merge, all file entries).
#[derive(Parser)]
#[command(name = "fsim-index", version)]
struct Args {
    /// The index folder.
    #[arg(long, value_name = "DIR")]
    index: PathBuf,
    /// File table of the chunk file (fsim-chunk --files-out).
    #[arg(long, default_value = "files.tsv")]
    files: PathBuf,
    /// Sorted chunk file (fsim-sort output); `-` for standard input.
    #[arg(default_value = "-")]
    sorted: PathBuf,
    /// Merge all segments of the index into one instead of adding one.
    #[arg(long)]
    merge: bool,
    /// No summary line on stderr.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let a = Args::parse();
    fsim::cli::run("fsim-index", || {
        index::run_build(
            &BuildConfig {
                index: a.index,
                files: a.files,
                sorted: a.sorted,
            },
            a.merge,
            a.quiet,
        )
    })
}
