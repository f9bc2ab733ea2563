//! fsim: the whole pipeline on one folder, installed (`make report` outside
//! the checkout). Logic: `fsim::driver`.

use clap::Parser;
use std::ffi::OsString;
use std::process::ExitCode;

/// Find similar and duplicate files in FOLDER: runs every stage with the
/// recommended settings and writes the reports to the work folder
/// (default ./fsim-work: report.txt and report.json).
///
/// The run is `make report REPO=FOLDER` with the pipeline's makefile (kept
/// in WORK/fsim.mk) and the fsim-* programs installed beside this one:
/// each stage writes a named file in WORK, so a stopped run resumes where
/// it stopped when the same command is run again, and a finished one does
/// nothing. Settings are make report's, written VAR=value: WORK=DIR,
/// MEMORY=1G (sort and each report), CAPACITY=4G (analysis), JOBS=N,
/// FORMATS="txt json tsv html xlsx", PREVIOUS=OLD_WORK (a later run:
/// only changed files are read again), SHARDS=N, MIN_PERCENT=50, AVG=100,
/// VERIFY=0, QUIET=-q (no progress)... (docs/usage.md). Needs GNU make
/// on PATH. Memory and disk: those of make report (docs/pipeline.md).
#[derive(Parser, Debug)]
#[command(name = "fsim", version, override_usage = "fsim [VAR=value...] FOLDER")]
struct Args {
    /// Settings (VAR=value, as for make report) and the folder to analyse.
    #[arg(value_name = "VAR=value | FOLDER", required = true)]
    words: Vec<OsString>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    fsim::cli::run("fsim", || {
        let inv = fsim::driver::parse_args(&a.words)?;
        let summary = fsim::driver::run(&inv)?;
        fsim::cli::stderr_line(format_args!("fsim: {}", summary.line()));
        Ok(())
    })
}
