//! The installed programs' man pages and shell completions, generated at
//! `make install` from what each program says (`--help`, `--version`) and
//! from fsim's settings table, so they cannot drift from the programs.

pub mod complete;
pub mod help;
pub mod man;

use std::path::Path;
use std::process::Command;

/// Run `program` from `bin` with one argument; its standard output.
fn ask(bin: &Path, program: &str, arg: &str) -> Result<String, String> {
    let path = bin.join(program);
    let out = Command::new(&path)
        .arg(arg)
        .output()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!("{} {arg}: exit {}", path.display(), out.status));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("{} {arg}: not UTF-8", path.display()))
}

/// A program's long help, read.
pub fn help_of(bin: &Path, program: &str) -> Result<help::Help, String> {
    let text = ask(bin, program, "--help")?;
    help::parse(&text).ok_or_else(|| format!("{program} --help: no `Usage:` line"))
}

/// Write `man1/<program>.1` under `man_dir` and `<program>` under
/// `completions_dir` for every program.
pub fn write_all(
    bin: &Path,
    programs: &[String],
    man_dir: &Path,
    completions_dir: &Path,
) -> Result<(), String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    for d in [man_dir, completions_dir] {
        std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
    }
    let helps = |p: &str| help_of(bin, p).ok();
    for program in programs {
        let help = help_of(bin, program)?;
        let version = ask(bin, program, "--version")?;
        let version = version.split_whitespace().nth(1).unwrap_or("").to_string();
        let defaults = |s: &fsim::driver::Setting| man::setting_default(s, &helps);
        let page = man::page(program, &version, &help, &defaults);
        let completion = if program == "fsim" {
            complete::fsim()
        } else {
            complete::program(program, &help)
        };
        let m = man_dir.join(format!("{program}.1"));
        std::fs::write(&m, page).map_err(|e| io(&m, e))?;
        let c = completions_dir.join(program);
        std::fs::write(&c, completion).map_err(|e| io(&c, e))?;
    }
    Ok(())
}
