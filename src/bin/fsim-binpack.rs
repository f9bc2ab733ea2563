//! fsim-binpack: pack the components of a partition file into bins that fit
//! fsim-analyze's memory, and write each bin's files and records.

use clap::Parser;
use fsim::cli;
use fsim::stages::binpack::{run, Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// Pack the connected components of a partition file (fsim-partition) into
/// bins that each fit in fsim-analyze's memory, and write the bins file.
///
/// Components are packed first-fit decreasing by their estimated analysis
/// memory; one larger than --capacity gets its own bin, marked oversized,
/// which fsim-analyze processes out of core. The plan is printed on stderr
/// before routing. Memory: ~50 bytes per file. Disk: ~2 × 24 bytes per
/// record in --tmpdir.
#[derive(Parser, Debug)]
#[command(name = "fsim-binpack", version)]
struct Args {
    /// Output bins file (default: standard output); written atomically.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Memory budget of one fsim-analyze bin (e.g. 512M, 1G).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = cli::parse_size)]
    capacity: u64,
    /// Also write the plan as TSV to this file.
    #[arg(long, value_name = "PLAN.tsv")]
    plan: Option<PathBuf>,
    /// Directory for the temporary spool (default: $TMPDIR).
    #[arg(long, value_name = "DIR")]
    tmpdir: Option<PathBuf>,
    /// Keep the output file zstd-compressed (level 1): the next stage
    /// reads it as it reads text, `zstdcat` gives its lines; standard
    /// output stays text. `make report` passes it by default (`COMPRESS=1`;
    /// docs/performance.md, "Scratch space").
    #[arg(long)]
    compress: bool,
    /// No plan, progress bar or summary (warnings are still printed).
    #[arg(short, long)]
    quiet: bool,
    /// The input is a component table, not a partition file (distributed
    /// runs, docs/distributed.md): the partition's header line,
    /// `C<TAB>id<TAB>files<TAB>records<TAB>chunks` per component and the
    /// partition's trailer line. Writes the plan only: the bins file's
    /// header, each bin's `#bin` line and `C<TAB>id` per component of it,
    /// and the bins file's trailer. Memory: O(components); no records read.
    #[arg(long, conflicts_with = "seal")]
    components: bool,
    /// The input is a slice of a bins file (consecutive bins: their `#bin`
    /// lines, `F` lines and records); write it as a bins file of its own,
    /// under the header of this bins file or `--components` plan (with its
    /// number of bins) and with its own trailer (its records' count and
    /// digest, bins and files). For the analysis tasks of distributed runs.
    #[arg(long, value_name = "PLAN")]
    seal: Option<PathBuf>,
    /// Partition file, or - for standard input.
    #[arg(value_name = "PARTITION", default_value = "-")]
    input: PathBuf,
}

fn main() -> ExitCode {
    let a = Args::parse();
    cli::run("fsim-binpack", || {
        run(&Config {
            input: a.input,
            output: a.output,
            capacity: a.capacity,
            plan: a.plan,
            tmpdir: a.tmpdir,
            quiet: a.quiet,
            compress: a.compress,
            components: a.components,
            seal: a.seal,
        })
    })
}
