//! fsim-reuse: run a stage, or copy its output from an earlier run whose
//! stage had the same program, arguments and inputs. Logic:
//! `fsim::stages::rerun`.

use clap::Parser;
use fsim::stages::rerun::{Config, Outcome};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run COMMAND, the stage that writes OUTPUT; with --previous, take
/// OUTPUT (and the --also files) from that earlier work folder instead
/// when its run of the stage had the same program (by its bytes), the same
/// arguments (the work folder's name aside) and inputs of the same bytes
/// (the files named by the arguments): a hard link to the earlier file,
/// dated now (a copy on another file system). No fsim program writes into
/// an existing output (each renames a new file over it), so a later run in
/// either folder replaces its own file only. Either way the stage's key is
/// left in WORK/reuse/, for a later run. `make report PREVIOUS=OLD` wraps the
/// sort, the partition, the bin packing and the reports in it
/// (docs/reliability.md).
#[derive(Parser, Debug)]
#[command(
    name = "fsim-reuse",
    version,
    override_usage = "fsim-reuse [OPTIONS] -o OUTPUT -- COMMAND [ARGS...]"
)]
struct Args {
    /// The stage's output (its folder is the work folder).
    #[arg(short, long, value_name = "OUTPUT")]
    output: PathBuf,
    /// Another output of the stage, in the same folder (repeat for more).
    #[arg(long, value_name = "FILE")]
    also: Vec<PathBuf>,
    /// The earlier run's work folder.
    #[arg(long, value_name = "OLD_WORK")]
    previous: Option<PathBuf>,
    /// The stage reads no timestamps from a file table: a table whose
    /// files only got new timestamps is the same input.
    #[arg(long)]
    mtimes_unused: bool,
    /// No line on standard error when the output is reused.
    #[arg(short, long)]
    quiet: bool,
    /// The stage's program and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    // The stage said why on stderr; make reads the exit code alone.
    let mut needs_all = false;
    let code = fsim::cli::run("fsim-reuse", || {
        let previous = a.previous.filter(|p| !p.as_os_str().is_empty());
        let cfg = Config {
            output: a.output,
            also: a.also,
            previous,
            mtimes_unused: a.mtimes_unused,
            command: a.command,
        };
        let how = match fsim::stages::rerun::run(&cfg)? {
            Outcome::Linked => "a hard link",
            Outcome::Copied => "copied",
            Outcome::Ran => return Ok(()),
            Outcome::NeedsAll => {
                needs_all = true;
                return Ok(());
            }
        };
        if !a.quiet {
            fsim::cli::stderr_line(format_args!(
                "fsim-reuse: {}: reused from {} ({how}; same program, arguments and inputs)",
                cfg.output.display(),
                cfg.previous
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
                    .display()
            ));
        }
        Ok(())
    });
    match needs_all {
        true => ExitCode::from(fsim::cli::NEEDS_ALL),
        false => code,
    }
}
