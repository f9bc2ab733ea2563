//! fsim-analyze: find the similar file pairs of each bin (paper steps 3-4).

use clap::Parser;
use fsim::cli;
use fsim::stages::analyze::{run, Config, Options, PercentOf, Thresholds};
use std::path::PathBuf;
use std::process::ExitCode;

/// Find the pairs of similar files in a bins file (fsim-binpack) and write
/// them as a pairs file.
///
/// Each bin's file-chunk graph is loaded and, for each file, the bytes in
/// common with every file sharing a chunk are counted (identical files are
/// collapsed to their smallest id first). Bins marked oversized, or
/// estimated above --capacity, are processed out of core through a sort on
/// disk. Memory: the largest bin (its estimate) plus 40 bytes per pair.
#[derive(Parser, Debug)]
#[command(name = "fsim-analyze", version)]
struct Args {
    /// Output pairs file (default: standard output); written atomically.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Keep a pair only if it has at least this many bytes in common.
    #[arg(long, value_name = "N", default_value_t = 0)]
    min_bytes: u64,
    /// Keep a pair only if its bytes in common are at least this percentage of a file's size.
    #[arg(long, value_name = "P", default_value = "10", value_parser = cli::parse_percent)]
    min_percent: f64,
    /// Which file's size --min-percent refers to.
    #[arg(long, value_name = "WHICH", value_enum, default_value = "smaller")]
    percent_of: PercentOf,
    /// Memory budget: bins estimated above it are processed out of core.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = cli::parse_size)]
    capacity: u64,
    /// Threads (default: number of cores). The output does not depend on it.
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,
    /// Directory for the out-of-core sort (default: $TMPDIR).
    #[arg(long, value_name = "DIR")]
    tmpdir: Option<PathBuf>,
    /// Process every bin out of core (for tests).
    #[arg(long, hide = true)]
    force_spill: bool,
    /// No progress bar and no summary on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Bins file, or - for standard input.
    #[arg(value_name = "BINS", default_value = "-")]
    input: PathBuf,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let threads = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let percent_of = a.percent_of;
    let cfg = Config {
        input: a.input,
        output: a.output,
        options: Options {
            thresholds: Thresholds {
                min_bytes: a.min_bytes,
                min_percent: a.min_percent,
                percent_of,
            },
            capacity: a.capacity,
            threads,
            tmpdir: a.tmpdir,
            force_spill: a.force_spill,
        },
        quiet: a.quiet,
    };
    cli::run("fsim-analyze", || run(&cfg))
}
