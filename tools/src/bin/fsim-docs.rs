//! fsim-docs: the man pages and bash completions of the installed
//! programs (`make install`). Logic: `fsim_tools::docs`.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Write PROGRAM.1 into --man and the bash completion PROGRAM into
/// --completions for each PROGRAM of --bin, from the program's own
/// `--help` and fsim's settings table.
#[derive(Parser, Debug)]
#[command(name = "fsim-docs", version)]
struct Args {
    /// The folder of the programs.
    #[arg(long, value_name = "DIR")]
    bin: PathBuf,
    /// Where the man pages go (e.g. PREFIX/share/man/man1).
    #[arg(long, value_name = "DIR")]
    man: PathBuf,
    /// Where the completions go (e.g. PREFIX/share/bash-completion/completions).
    #[arg(long, value_name = "DIR")]
    completions: PathBuf,
    /// The programs (fsim, fsim-chunk, ...).
    #[arg(required = true)]
    programs: Vec<String>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    match fsim_tools::docs::write_all(&a.bin, &a.programs, &a.man, &a.completions) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fsim-docs: {e}");
            ExitCode::FAILURE
        }
    }
}
