//! fsim-analyze: find the similar file pairs of each bin (paper steps 3-4).

use clap::Parser;
use fsim::cli;
use fsim::stages::analyze::{
    run, Config, LineMode, LineSource, Options, PercentOf, Since, Thresholds,
};
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
    /// File table (fsim-chunk --files-out): needed by the line source.
    #[arg(long, value_name = "FILES")]
    files: Option<PathBuf>,
    /// Line source: also compare, line by line, the text files of at most
    /// SIZE bytes (0: none), and keep the pairs whose multiset line overlap
    /// (an upper bound of the exact figure) reaches --line-min-percent.
    /// Reads the files: use with fsim-verify.
    #[arg(long, value_name = "SIZE", default_value = "0", value_parser = cli::parse_size)]
    line_pairs_below: u64,
    /// Line source: also compare translation catalogs (.po, .pot), any size.
    #[arg(long)]
    line_catalogs: bool,
    /// Line source threshold, percent of the file --percent-of names.
    #[arg(long, value_name = "P", default_value = "30", value_parser = cli::parse_percent)]
    line_min_percent: f64,
    /// Line source, split for a distributed run: write its pairs alone
    /// (BINS is not read), for --line-pairs-from.
    #[arg(long, conflicts_with_all = ["line_pairs_from", "previous_files"])]
    line_pairs_only: bool,
    /// Line source, split for a distributed run: take its pairs from FILE
    /// (the pair lines, or a share of them, that --line-pairs-only wrote
    /// with the same settings) instead of reading the files.
    #[arg(long, value_name = "FILE")]
    line_pairs_from: Option<PathBuf>,
    /// Re-run: the earlier run's file table. With --previous-verified, only
    /// the pairs with a file changed since are written (header `delta=1`),
    /// for fsim-verify --previous to complete from that run's verified
    /// pairs; when that would not give the same result as analysing
    /// everything (other parameters, other chunks dropped, a copy of a
    /// changed file, a lower threshold), every pair is written and stderr
    /// says why. Needs --files.
    #[arg(long, value_name = "FILES", requires = "previous_verified")]
    previous_files: Option<PathBuf>,
    /// Re-run: the earlier run's verified pairs (fsim-verify's output).
    #[arg(long, value_name = "VERIFIED", requires = "previous_files")]
    previous_verified: Option<PathBuf>,
    /// Re-run: the threshold fsim-verify will keep pairs from (the earlier
    /// run's must not be higher).
    #[arg(long, value_name = "P", default_value = "0", value_parser = cli::parse_percent)]
    verify_min_percent: f64,
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
    let wants_lines = a.line_pairs_below > 0 || a.line_catalogs;
    let lines = match (&a.files, wants_lines) {
        (Some(f), true) => Some((
            f.clone(),
            LineSource {
                max_size: a.line_pairs_below,
                catalogs: a.line_catalogs,
                thresholds: Thresholds {
                    min_bytes: a.min_bytes,
                    min_percent: a.line_min_percent,
                    percent_of,
                },
            },
        )),
        (None, true) => {
            return cli::run("fsim-analyze", || {
                Err(fsim::error::Error::msg(
                    "--line-pairs-below and --line-catalogs need --files (the file table)",
                ))
            })
        }
        _ => None,
    };
    if (a.line_pairs_only || a.line_pairs_from.is_some()) && !wants_lines {
        return cli::run("fsim-analyze", || {
            Err(fsim::error::Error::msg(
                "--line-pairs-only and --line-pairs-from need the line source's settings (--line-pairs-below or --line-catalogs)",
            ))
        });
    }
    let line_mode = match a.line_pairs_from {
        Some(f) => LineMode::From(f),
        None if a.line_pairs_only => LineMode::Only,
        None => LineMode::Here,
    };
    let since = match (a.previous_files, a.previous_verified, &a.files) {
        (Some(files), Some(verified), Some(_)) => Some(Since {
            files,
            verified,
            verify_min_percent: a.verify_min_percent,
        }),
        (Some(_), _, None) => {
            return cli::run("fsim-analyze", || {
                Err(fsim::error::Error::msg(
                    "--previous-files needs --files (this run's file table)",
                ))
            })
        }
        _ => None,
    };
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
            only: None,
        },
        quiet: a.quiet,
        lines,
        files: a.files,
        since,
        line_mode,
    };
    cli::run("fsim-analyze", || run(&cfg))
}
