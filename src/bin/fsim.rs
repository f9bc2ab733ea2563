//! fsim: the whole pipeline on one folder, installed (`make report` outside
//! the checkout). Logic: `fsim::driver`.

use clap::Parser;
use fsim::driver::Outcome;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Find similar and duplicate files in FOLDER: runs every stage with the
/// recommended settings and writes the reports to the work folder
/// (default ./fsim-work: report.txt and report.json).
///
/// The run is `make report REPO=FOLDER` with the pipeline's makefile (kept
/// in WORK/fsim.mk) and the fsim-* programs installed beside this one:
/// each stage writes a named file in WORK, so a stopped run (Ctrl-C stops
/// every stage) resumes where it stopped when the same command is run
/// again; run again after it finished, it reads only the files that
/// changed in FOLDER and runs only the stages other settings change
/// (nothing when nothing changed). A bad setting is refused before any
/// work. Settings are make report's, written VAR=value: WORK=DIR,
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

/// The values of the settings that only the chunk stage knows, checked as
/// fsim-chunk parses them (its methods, content modes and chunk sizes).
fn check_value(name: &str, value: &str) -> Option<Result<(), String>> {
    use fsim::chunking::{chunker, features::FeatureMethod};
    Some(match name {
        "METHOD" => value
            .parse::<chunker::Method>()
            .map(drop)
            .or_else(|_| value.parse::<FeatureMethod>().map(drop)),
        "CONTENT" => fsim::content::Mode::parse(value).map(drop),
        "AVG" => match fsim::cli::parse_size(value) {
            Ok(v) if (chunker::MIN_AVG as u64..=chunker::MAX_AVG as u64).contains(&v) => Ok(()),
            Ok(_) | Err(_) => Err(format!(
                "expected an average chunk size from {} to {} bytes (a number with an optional K or M suffix)",
                chunker::MIN_AVG,
                chunker::MAX_AVG
            )),
        },
        _ => return None,
    })
}

/// The files of a file table as the driver's stat walk compares them: each
/// file on disk (members of archives have none; files and folders not read
/// have no figures: the walk cannot open them either), its size and mtime.
fn table_files(table: &Path) -> fsim::Result<Vec<fsim::driver::ListedFile>> {
    let (files, _) = fsim::formats::read_file_table(table)?;
    Ok(files
        .into_iter()
        .filter(|f| !f.view.is_member() && f.view.unread.is_none())
        .map(|f| fsim::driver::ListedFile {
            path: PathBuf::from(OsString::from_vec(f.path)),
            size: f.view.raw_size,
            mtime: (f.mtime_s, f.mtime_ns),
        })
        .collect())
}

fn main() -> ExitCode {
    let a = Args::parse();
    let stages = fsim::driver::StageKnowledge {
        check_value,
        table_files,
    };
    let mut stopped = None;
    let code = fsim::cli::run("fsim", || {
        let inv = fsim::driver::parse_args(&a.words)?;
        match fsim::driver::run(&inv, &stages)? {
            Outcome::Finished(summary) => {
                fsim::cli::stderr_line(format_args!("fsim: {}", summary.line()))
            }
            Outcome::Stopped { signal, work } => {
                let (line, status) = Outcome::stopped_line(signal, &work);
                fsim::cli::stderr_line(format_args!("fsim: {line}"));
                stopped = Some(status);
            }
        }
        Ok(())
    });
    stopped.map_or(code, ExitCode::from)
}
