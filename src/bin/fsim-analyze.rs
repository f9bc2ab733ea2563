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
/// disk. Memory: the largest bin (its estimate) and the pairs found (a
/// quarter of --capacity; they spill beyond it); then the line source,
/// within the other three quarters: its file table (~41 bytes and a
/// front-coded path for each text file it may read, and 32 bytes more
/// while it compares them), then the files' lines in what is left, in
/// groups read again when they do not fit. stderr warns, naming the
/// --capacity that holds both, when the table leaves the lines less than
/// an eighth: only then does the peak exceed the capacity.
///
/// The defaults are the recommended settings (docs/quality.md), those of
/// `make report`: floor 10 %, and the line source on (text files of any
/// size, read through the file table files.tsv, compared line by line at
/// 30 %); --no-line-source for chunks only.
#[derive(Parser, Debug)]
#[command(name = "fsim-analyze", version)]
struct Args {
    /// Output pairs file (default: standard output); written atomically.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Keep the output file zstd-compressed (level 1): the next stage
    /// reads it as it reads text, `zstdcat` gives its lines; standard
    /// output stays text. `make report` passes it by default (`COMPRESS=1`;
    /// docs/performance.md, "Scratch space").
    #[arg(long)]
    compress: bool,
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
    /// File table (fsim-chunk --files-out), read by the line source and
    /// --previous-files (paths as fsim-chunk wrote them: run from the
    /// directory it ran in).
    #[arg(long, value_name = "FILES", default_value = "files.tsv")]
    files: PathBuf,
    /// Line source: also compare, line by line, the text files of at most
    /// SIZE bytes (any: every size; 0: none), and keep the pairs whose
    /// multiset line overlap (an upper bound of the exact figure) reaches
    /// --line-min-percent. Reads the files (those of --files): its pairs
    /// are for fsim-verify. `any` (the default) finds reformatted code of
    /// any size at about the cost of 4K (docs/performance.md, "Line source
    /// on files of any size"); the lines of a site's theme (--site-names)
    /// and of marked templates (--templates) count for no pair, as their
    /// chunks do not (docs/usage.md).
    #[arg(long, value_name = "SIZE", default_value = "any", value_parser = cli::parse_size_limit)]
    line_pairs_below: cli::SizeLimit,
    /// Line source: also compare translation catalogs (.po, .pot), any size
    /// (the default; --no-line-catalogs turns it off).
    #[arg(long, overrides_with = "no_line_catalogs")]
    line_catalogs: bool,
    /// Line source: do not compare translation catalogs apart from the
    /// text files --line-pairs-below selects.
    #[arg(long, overrides_with = "line_catalogs")]
    no_line_catalogs: bool,
    /// No line source: the pairs of the chunks only (as --line-pairs-below 0
    /// --no-line-catalogs), e.g. when the files are not reachable or the
    /// pairs are not verified.
    #[arg(long, conflicts_with_all = ["line_pairs_only", "line_pairs_from"])]
    no_line_source: bool,
    /// Line source: a line held by web pages (.html, .htm, .xhtml) of at
    /// least N names (file names, lower-cased, without digits) is a
    /// generated site's theme and counts for no pair, as fsim-partition
    /// --site-names drops such chunks (0: off; give both the same N).
    #[arg(long, value_name = "N", default_value_t = fsim::stages::partition::DEFAULT_SITE_NAMES)]
    site_names: u64,
    /// Templates file (fsim-template) whose chunks the bins left out
    /// (fsim-partition --templates, the same files): the line source cuts
    /// them out of the files it reads. Repeatable.
    #[arg(long, value_name = "FILE")]
    templates: Vec<PathBuf>,
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
    /// says why. This run's file table is --files.
    #[arg(long, value_name = "FILES", requires = "previous_verified")]
    previous_files: Option<PathBuf>,
    /// Re-run: the earlier run's verified pairs (fsim-verify's output).
    #[arg(long, value_name = "VERIFIED", requires = "previous_files")]
    previous_verified: Option<PathBuf>,
    /// Line source: write each content's lines to FILE (a line sets file,
    /// zstd-compressed with --compress), for a later run's
    /// --previous-lines. `make report` keeps it as WORK/lines.tsv
    #[arg(long, value_name = "FILE", conflicts_with = "line_pairs_from")]
    lines_out: Option<PathBuf>,
    /// Line source: an earlier run's --lines-out. The contents it holds
    /// (the same bytes and view) are not read again: their lines are
    /// taken from it, the same pairs. One written under other settings
    /// (chunking, templates) is not used, and stderr says why
    #[arg(long, value_name = "FILE", conflicts_with = "line_pairs_from")]
    previous_lines: Option<PathBuf>,
    /// With --lines-out: keep the line sets only when they, with twice
    /// FILE (this run's chunk records) and twice the file table (the next
    /// re-run holds its own of both beside them), take at most 4/5 of the
    /// repository's bytes (the file table's files), so that the re-run's
    /// work folder stays within the repository's size; else none are
    /// written, and stderr says so.
    /// `make report` gives its chunks.tsv (LINE_SETS=auto, the default)
    #[arg(long, value_name = "FILE", requires = "lines_out")]
    lines_room_beside: Option<PathBuf>,
    /// The threshold fsim-verify will keep pairs from (its --min-percent;
    /// default: its default). The line source writes no pair whose line
    /// overlap, an upper bound of fsim-verify's figure, is under it (of the
    /// smaller file; 0: every pair it keeps), and fsim-verify refuses a
    /// lower one; a re-run's earlier run must not have had a higher one.
    #[arg(long, value_name = "P", default_value = "50", value_parser = cli::parse_percent)]
    verify_min_percent: f64,
    /// Print the effective settings of this command line as one line of
    /// `key=value` fields (tab-separated; `line-source=1` when the line
    /// source runs) and exit, reading nothing: how fsim-spark learns the
    /// defaults instead of restating them (docs/distributed.md).
    #[arg(long)]
    print_settings: bool,
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
    let catalogs = !a.no_line_source && (a.line_catalogs || !a.no_line_catalogs);
    let max_size = if a.no_line_source {
        Some(0)
    } else {
        a.line_pairs_below.0
    };
    let wants_lines = max_size != Some(0) || catalogs;
    let lines = wants_lines.then(|| {
        (
            a.files.clone(),
            LineSource {
                max_size,
                catalogs,
                thresholds: Thresholds {
                    min_bytes: a.min_bytes,
                    min_percent: a.line_min_percent,
                    percent_of,
                },
                verify_floor: a.verify_min_percent,
                site_names: a.site_names,
            },
        )
    });
    if (a.line_pairs_only || a.line_pairs_from.is_some()) && !wants_lines {
        return cli::run("fsim-analyze", || {
            Err(fsim::error::Error::msg(
                "--line-pairs-only and --line-pairs-from need the line source (--line-pairs-below above 0 or catalogs)",
            ))
        });
    }
    if a.print_settings {
        let line = format!(
            "line-source={}\tline-pairs-below={}\tline-catalogs={}\tline-min-percent={}\tverify-min-percent={}\tmin-percent={}\tcapacity={}\n",
            u8::from(wants_lines),
            cli::SizeLimit(max_size),
            u8::from(catalogs),
            a.line_min_percent,
            a.verify_min_percent,
            a.min_percent,
            a.capacity
        );
        return cli::run("fsim-analyze", || {
            use fsim::error::Context;
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(line.as_bytes())
                .and_then(|()| out.flush())
                .ctx(|| "writing the settings to standard output")
        });
    }
    let line_mode = match a.line_pairs_from {
        Some(f) => LineMode::From(f),
        None if a.line_pairs_only => LineMode::Only,
        None => LineMode::Here,
    };
    let since = match (a.previous_files, a.previous_verified) {
        (Some(files), Some(verified)) => Some(Since {
            files,
            verified,
            verify_min_percent: a.verify_min_percent,
        }),
        _ => None,
    };
    let cfg = Config {
        input: a.input,
        output: a.output,
        compress: a.compress,
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
            defer_from: fsim::stages::analyze::DEFER_FROM,
        },
        quiet: a.quiet,
        lines,
        files: Some(a.files),
        since,
        line_mode,
        templates: a.templates,
        lines_out: a.lines_out,
        previous_lines: a.previous_lines,
        lines_room_beside: a.lines_room_beside,
    };
    cli::run("fsim-analyze", || run(&cfg))
}
