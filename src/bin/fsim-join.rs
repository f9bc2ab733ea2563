//! fsim-join: join parts of one fsim file (the outputs of several tasks of
//! a distributed run) into one, with one summed trailer. All logic is in
//! `fsim::formats::join`.

use clap::Parser;
use fsim::cli;
use fsim::stages::join::{run, Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// Join parts of one fsim file into one: the header once, the parts' lines
/// in order, one trailer with their counts and digests summed.
///
/// Each input holds whole parts (header, lines, trailer; several parts may
/// follow one another). The parts must have the same header, kind and
/// parameters; the joined trailer is what the whole file's would be, so the
/// next stage checks the records against it. Memory: one line at a time.
#[derive(Parser, Debug)]
#[command(name = "fsim-join", version)]
struct Args {
    /// Output file (default: standard output); written atomically.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Write only the header and the summed trailer (the parts' lines stay
    /// where they are: fsim-spark's folders of parts).
    #[arg(long)]
    ends_only: bool,
    /// The parts' files in order, or - for standard input.
    #[arg(value_name = "PART", default_value = "-")]
    inputs: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let cfg = Config {
        inputs: a.inputs,
        output: a.output,
        ends_only: a.ends_only,
    };
    cli::run("fsim-join", || run(&cfg))
}
