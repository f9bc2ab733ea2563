//! fsim-template: mark a cluster as template similarity (paper section 4).
//! Logic: `fsim::stages::templates`.

use clap::Parser;
use fsim::stages::templates::{self, Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// Write the chunks shared by all (or --fraction of) the files of a
/// cluster to a templates file; later runs given `--templates FILE`
/// (fsim-partition, fsim-verify; make TEMPLATES=FILE) ignore them, so each
/// file counts only its non-template payload. Nothing is re-chunked.
///
/// Reads the json report of the last run (for the cluster's files), its
/// file table (to check that the report belongs to it) and one of its
/// chunk record files: partition.tsv (smallest), sorted.tsv or chunks.tsv.
/// The defaults are the names in a `make report` work folder: run it there.
/// Memory: one counter per distinct chunk of the cluster's files.
#[derive(Parser, Debug)]
#[command(name = "fsim-template", version)]
struct Args {
    /// Cluster id from the report (repeat to mark several).
    #[arg(long, value_name = "ID", required = true)]
    cluster: Vec<String>,
    /// The json report that names the cluster.
    #[arg(long, value_name = "REPORT.json", default_value = "report.json")]
    report: PathBuf,
    /// The file table of the run.
    #[arg(long, value_name = "FILES.tsv", default_value = "files.tsv")]
    files: PathBuf,
    /// A chunk is a template chunk when at least this fraction of the
    /// cluster's files hold it.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    fraction: f64,
    /// Templates file: this cluster's section is added to what it holds
    /// (it is created if needed), atomically; `-` for standard output.
    #[arg(
        short,
        long,
        value_name = "TEMPLATES.tsv",
        default_value = "templates.tsv"
    )]
    output: PathBuf,
    /// Replace the templates file instead of adding to it.
    #[arg(long)]
    replace: bool,
    /// No summary line on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// Chunk records of the run: partition.tsv, sorted.tsv or chunks.tsv
    /// (`-`: standard input).
    #[arg(value_name = "CHUNKS", default_value = "partition.tsv")]
    chunks: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    fsim::cli::run("fsim-template", || {
        let cfg = Config {
            clusters: a.cluster,
            report: a.report,
            files: a.files,
            chunks: a.chunks,
            fraction: a.fraction,
            output: Some(a.output),
            append: !a.replace,
            quiet: a.quiet,
        };
        let s = templates::run(&cfg)?;
        if !cfg.quiet {
            fsim::cli::stderr_line(s.line());
        }
        Ok(())
    })
}
