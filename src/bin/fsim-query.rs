//! fsim-query: which indexed files share content with these files?
use clap::Parser;
use fsim::stages::index::{self, QueryConfig};
use std::path::PathBuf;
use std::process::ExitCode;

/// Chunk each FILE with the parameters recorded in the index and list the
/// indexed files that share chunks with it, best first (identical copies
/// first), as TSV: query, indexed file, bytes in common, % of the query,
/// % of the indexed file, identical. The index is memory-mapped, not loaded.
#[derive(Parser)]
#[command(name = "fsim-query", version)]
struct Args {
    /// The index folder (fsim-index).
    #[arg(long, value_name = "DIR")]
    index: PathBuf,
    /// Files to look up.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// At most this many matches per query file.
    #[arg(long, default_value = "20")]
    top: usize,
    /// Only matches whose bytes in common are at least this percentage of
    /// the smaller of the two files.
    #[arg(long, default_value = "0", value_parser = fsim::cli::parse_percent)]
    min_percent: f64,
    /// Ignore chunks found in more indexed files than this (boilerplate).
    #[arg(long, default_value = "10000")]
    max_degree: usize,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// No summary line on stderr.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let a = Args::parse();
    fsim::cli::run("fsim-query", || {
        index::run_query(&QueryConfig {
            index: a.index,
            queries: a.files,
            top: a.top,
            min_percent: a.min_percent,
            max_degree: a.max_degree,
            output: a.output,
            quiet: a.quiet,
        })
    })
}
