//! fsim-join: parts of one fsim file, written by several tasks, joined
//! into one file (or only its header and summed trailer), and the file
//! tables of a run's shards joined into the run's. The format logic is
//! `formats::join` and `formats::shards`; this stage opens the inputs and
//! writes the outputs atomically.

use crate::error::{Context, Result};
use crate::formats::join::Joiner;
use crate::formats::shards::ShardTables;
use crate::formats::{open_input, Digest, LineReader};
use crate::io::Output;
use std::io::Write;
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

/// The shards' file tables joined into the run's (`--shard-tables`).
pub struct ShardConfig {
    pub inputs: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    /// The run's chunk records' count and digest, when their ids were
    /// renumbered (a file skipped); else the shards' sums.
    pub records: Option<Digest>,
    /// Where to write `position<TAB>id` for every file whose id is not its
    /// walk position (nothing when no file was skipped).
    pub moved: Option<PathBuf>,
    /// Where to write the run's chunk stream's header and trailer.
    pub chunk_ends: Option<PathBuf>,
}

/// Join the shard tables; nothing is left at the output paths on an error.
pub fn run_shard_tables(cfg: &ShardConfig) -> Result<()> {
    let mut tables = ShardTables::default();
    for path in &cfg.inputs {
        let (input, name) = open_input(path)?;
        tables.read(&mut LineReader::new(input, name))?;
    }
    let mut out = Output::create(cfg.output.as_deref())?;
    let crate::formats::shards::Joined { moved, chunk_ends } =
        tables.write(cfg.records, &mut out)?;
    if let Some(path) = &cfg.chunk_ends {
        let mut e = Output::create(Some(path))?;
        e.write_all(&chunk_ends)?;
        e.finish()?;
    }
    if let Some(path) = &cfg.moved {
        let mut m = Output::create(Some(path))?;
        for (pos, id) in moved {
            writeln!(m, "{pos}\t{id}").ctx(|| format!("writing {}", path.display()))?;
        }
        m.finish()?;
    }
    out.finish()
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
