//! fsim-verify: exact bytes in common of the candidate pairs (paper 2.3's
//! post-processing). All the work is in `fsim::stages::verify`.

use clap::Parser;
use fsim::report::PercentOf;
use fsim::stages::verify::{self, Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// Compute the exact bytes in common of the pairs found by fsim-analyze.
///
/// Reads both files of each pair: text pairs are compared by a longest
/// common subsequence of lines, other pairs by one of ~64-byte
/// content-defined pieces. Writes the pairs with two more fields, the exact
/// figure and `exact` or `lower-bound` (file changed, vanished or
/// unreadable since chunking: the chunk lower bound is kept, with a
/// warning). Paths are those of the file table: run from the directory
/// fsim-chunk ran in. Output is identical whatever --jobs and --memory.
/// Memory: --memory (a cache of tokenized files, both files of the pairs
/// in flight, a batch of pairs, the output's encoder), plus the entries
/// of the file table that the pairs name (every entry when the pairs come
/// from a pipe, or with --previous).
#[derive(Parser, Debug)]
#[command(name = "fsim-verify", version)]
struct Args {
    /// Pairs written by fsim-analyze (`-` for standard input).
    #[arg(value_name = "PAIRS", default_value = "-")]
    pairs: PathBuf,
    /// File table written by fsim-chunk --files-out.
    #[arg(long, value_name = "PATH", default_value = "files.tsv")]
    files: PathBuf,
    /// Output file (default: standard output), written atomically.
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Keep the output file zstd-compressed (level 1): the next stage
    /// reads it as it reads text, `zstdcat` gives its lines; standard
    /// output stays text. `make report` passes it by default (`COMPRESS=1`;
    /// docs/performance.md, "Scratch space").
    #[arg(long)]
    compress: bool,
    /// Also write the shared regions (offset in a, offset in b, length).
    #[arg(long, value_name = "PATH")]
    regions: Option<PathBuf>,
    /// Drop pairs whose sizes cannot reach this percentage (unread), and
    /// verified pairs below it. The default is fsim-report's --min-percent
    /// default (the report would not show them); 0 verifies every pair.
    #[arg(long, value_name = "P", default_value = "50", value_parser = fsim::cli::parse_percent)]
    min_percent: f64,
    /// Which file the percentage refers to.
    #[arg(long, value_enum, default_value = "smaller")]
    percent_of: PercentOf,
    /// Memory of the run besides the file table: the cache of tokenized
    /// files takes what the pairs in flight and a batch leave (e.g. 256M, 1G).
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = fsim::cli::parse_size)]
    memory: u64,
    /// Worker threads (default: number of cores).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
    /// The templates files given to fsim-partition (repeat for several): their
    /// chunks are cut out of each file and the payloads compared.
    #[arg(long, value_name = "TEMPLATES.tsv")]
    templates: Vec<PathBuf>,
    /// Verified pairs of an earlier run (its verified.tsv): pairs whose two
    /// files are unchanged (path, size, content hash) take their figure
    /// from it instead of being read. The output is the same as without.
    #[arg(long, value_name = "VERIFIED.tsv", requires = "previous_files")]
    previous: Option<PathBuf>,
    /// The earlier run's file table (with --previous).
    #[arg(long, value_name = "FILES.tsv", requires = "previous")]
    previous_files: Option<PathBuf>,
    /// The earlier run's regions (with --previous, when --regions is given:
    /// without them its pairs are verified again).
    #[arg(long, value_name = "REGIONS.tsv", requires = "previous")]
    previous_regions: Option<PathBuf>,
    /// No summary line on standard error (warnings are still printed).
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    // The workers share one cache: one arena (see the function).
    fsim::io::one_malloc_arena();
    let a = Args::parse();
    fsim::cli::run(verify::PROG, || {
        let jobs = match a.jobs {
            Some(j) => j as usize,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        verify::run(&Config {
            files: a.files,
            pairs: a.pairs,
            output: a.output,
            compress: a.compress,
            regions: a.regions,
            min_percent: a.min_percent,
            percent_of: a.percent_of,
            memory: a.memory,
            jobs,
            quiet: a.quiet,
            templates: a.templates,
            previous: a.previous.map(|p| {
                (
                    p,
                    a.previous_files.expect("required by clap"),
                    a.previous_regions,
                )
            }),
        })
        .map(|_| ())
    })
}
