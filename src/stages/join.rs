//! fsim-join: parts of one fsim file, written by several tasks, joined
//! into one file (or only its header and summed trailer); the format logic
//! is `formats::join`, this stage opens the inputs and writes the output
//! atomically.

use crate::error::Result;
use crate::formats::join::Joiner;
use crate::formats::{open_input, LineReader};
use crate::io::Output;
use std::path::PathBuf;

/// What to join, and where to.
pub struct Config {
    /// The parts, in order (`-`: standard input); each input holds whole parts.
    pub inputs: Vec<PathBuf>,
    /// Output file (standard output when absent), written atomically.
    pub output: Option<PathBuf>,
    /// Only the header and the summed trailer, not the parts' records.
    pub ends_only: bool,
}

/// Join the inputs' parts; nothing is left at the output path on an error.
pub fn run(cfg: &Config) -> Result<()> {
    let mut out = Output::create(cfg.output.as_deref())?;
    let mut joiner = Joiner::new(!cfg.ends_only);
    for path in &cfg.inputs {
        let (input, name) = open_input(path)?;
        joiner.read(&mut LineReader::new(input, name), &mut out)?;
    }
    joiner.finish(&mut out)?;
    out.finish()
}
