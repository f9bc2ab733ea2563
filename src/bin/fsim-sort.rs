//! fsim-sort: sort chunk records by hash in bounded memory, byte-identical
//! to `LC_ALL=C sort` (paper 2.5 step 2). All logic is in `fsim::stages::sort`.

use clap::Parser;
use fsim::cli;
use std::path::PathBuf;
use std::process::ExitCode;

/// Sort chunk records by hash, byte-identical to `LC_ALL=C sort`, in bounded memory.
///
/// Memory: --memory for the record buffer (24 bytes per record) plus about
/// 3 MiB of I/O buffers. Disk: when the input does not fit, sorted binary
/// runs (24 bytes per record) in a private directory under --tmpdir,
/// removed at exit; with --resume-dir, in that directory, kept until the
/// sort completes.
#[derive(Parser, Debug)]
#[command(name = "fsim-sort", version)]
struct Args {
    /// Output file (written atomically); standard output when absent or `-`.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Memory budget for records, e.g. 256M, 1G (minimum 4K).
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = cli::parse_size)]
    memory: u64,
    /// Directory for temporary runs (default: $TMPDIR or /tmp).
    #[arg(long, value_name = "DIR")]
    tmpdir: Option<PathBuf>,
    /// Threads for in-memory sorting (default: available CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    jobs: Option<usize>,
    /// Maximum number of runs merged at once.
    #[arg(long, value_name = "N", default_value_t = fsim::stages::sort::DEFAULT_FAN_IN, hide = true)]
    fan_in: usize,
    /// Keep finished runs in DIR with a journal: the same command run again
    /// after a kill continues after the last finished run (same inputs,
    /// unchanged, and same --memory; otherwise it starts over). DIR is
    /// removed when the sort completes. Costs one fsync per run.
    #[arg(long, value_name = "DIR")]
    resume_dir: Option<PathBuf>,
    /// Write the sorted records without the inputs' header and trailer
    /// lines (one range of a sort split with --split-ranges).
    #[arg(long, conflicts_with = "split_ranges")]
    records_only: bool,
    /// Do not sort: cut the input into N chunk files, one per equal range
    /// of the hash's first 32 bits, named OUT.r00000 .. (each with the
    /// header and its own trailer, records in input order; -o required).
    /// Sorting the r-th files of several splits with --records-only gives
    /// range r of their sort.
    #[arg(long, value_name = "N", requires = "output", value_parser = clap::value_parser!(u32).range(1..=99999))]
    split_ranges: Option<u32>,
    /// Do not sort: cut record lines without header or trailer (as
    /// fsim-partition keeps them) by their file, MAP giving each file id's
    /// part (lines `ID<TAB>PART`), into OUT.r00000 .. up to the largest
    /// part (records in input order, bare; -o required). A record whose
    /// file is not in MAP is an error.
    #[arg(long, value_name = "MAP", requires = "output", conflicts_with_all = ["split_ranges", "records_only"])]
    split_by_file: Option<PathBuf>,
    /// Keep the output file zstd-compressed (level 1): the next stage
    /// reads it as it reads text, `zstdcat` gives its lines; standard
    /// output stays text. `make report` passes it by default (`COMPRESS=1`;
    /// docs/performance.md, "Scratch space").
    #[arg(long)]
    compress: bool,
    /// A re-run's changed chunks (fsim-chunk --changed-out): sort only
    /// the records of those chunks, every file's; the header says
    /// changed-only=N and the trailer counts the records kept and, as
    /// all-records/all-digest, those read. When the set takes more than
    /// half of --memory, every record is sorted.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["split_ranges", "split_by_file", "records_only"])]
    changed: Option<PathBuf>,
    /// No progress bar and no summary on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// Chunk files (concatenated, like sort); `-` or none for standard input.
    #[arg(value_name = "INPUT")]
    inputs: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    cli::run("fsim-sort", || {
        if let (Some(n), Some(out)) = (a.split_ranges, &a.output) {
            let records = fsim::stages::sort::split::split(&a.inputs, n, out)?;
            if !a.quiet {
                cli::stderr_line(format_args!(
                    "fsim-sort: {records} records split into {n} ranges"
                ));
            }
            return Ok(());
        }
        if let (Some(map), Some(out)) = (&a.split_by_file, &a.output) {
            let (map, n) = fsim::stages::sort::split::read_file_map(map)?;
            let records = fsim::stages::sort::split::split_by_file(&a.inputs, &map, n, out)?;
            if !a.quiet {
                cli::stderr_line(format_args!(
                    "fsim-sort: {records} records split into {n} parts by file"
                ));
            }
            return Ok(());
        }
        let cfg = fsim::stages::sort::Config {
            inputs: a.inputs,
            output: a.output,
            memory: a.memory,
            tmpdir: a.tmpdir,
            threads: a.jobs.unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            }),
            fan_in: a.fan_in,
            quiet: a.quiet,
            compress: a.compress,
            resume_dir: a.resume_dir,
            records_only: a.records_only,
            changed: a.changed,
        };
        let s = fsim::stages::sort::run(&cfg)?;
        if !cfg.quiet {
            cli::stderr_line(format_args!("{}", s.line()));
        }
        Ok(())
    })
}
