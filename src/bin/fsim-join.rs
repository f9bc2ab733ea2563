//! fsim-join: join parts of one fsim file (the outputs of several tasks of
//! a distributed run) into one, with one summed trailer. All logic is in
//! `fsim::formats::join`.

use clap::Parser;
use fsim::cli;
use fsim::formats::{parse_hex128, Digest};
use fsim::stages::join::{
    run, run_renumber, run_shard_tables, Config, RenumberConfig, ShardConfig,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// Join parts of one fsim file into one: the header once, the parts' lines
/// in order, one trailer with their counts and digests summed.
///
/// Each input holds whole parts (header, lines, trailer; several parts may
/// follow one another). The parts must have the same header, kind and
/// parameters; the joined trailer is what the whole file's would be, so the
/// next stage checks the records against it. Memory: one line at a time
/// (--shard-tables: the file table, ~110 bytes per file).
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
    /// The inputs are the file tables of the shards of one run (fsim-chunk
    /// --shard I/N, every shard once): write the run's file table, ids
    /// renumbered in walk order, as the merging fsim-chunk run writes it.
    #[arg(long, conflicts_with = "ends_only")]
    shard_tables: bool,
    /// With --shard-tables: the run's chunk records' COUNT:DIGEST for the
    /// trailer, when a skipped file made their ids differ from the walk
    /// positions (default: the shards' sums). Repeated: summed (the
    /// `#records` lines of the --renumber tasks, as they are).
    #[arg(long, value_name = "COUNT:DIGEST", requires = "shard_tables", value_parser = parse_records)]
    records: Vec<Digest>,
    /// Renumber chunk records (the inputs: record lines, `#` lines
    /// dropped) by this file of `POSITION<TAB>ID` lines (--shard-tables
    /// --moved's); the last output line is `#records<TAB>COUNT:DIGEST`.
    /// A member's record of `fsim-chunk --members-of` (a fourth field, its
    /// archive's walk position) gets its archive's id plus its index.
    #[arg(long, value_name = "MOVED", conflicts_with_all = ["shard_tables", "ends_only"])]
    renumber: Option<PathBuf>,
    /// With --shard-tables: write `POSITION<TAB>ID` for each file whose id
    /// differs from its walk position (an empty file when none does).
    #[arg(long, value_name = "FILE", requires = "shard_tables")]
    moved: Option<PathBuf>,
    /// With --shard-tables: write the header and trailer of the run's chunk
    /// stream here (the table's parameters; the records' count and digest).
    #[arg(long, value_name = "FILE", requires = "shard_tables")]
    chunk_ends: Option<PathBuf>,
    /// With --shard-tables: the members of the archives the shards marked
    /// `~unlisted`, as `fsim-chunk --members-of` lists them (repeated: all
    /// of them); each archive's members are inserted after it, every later
    /// file moving down (--moved). Their records are renumbered with
    /// --renumber.
    #[arg(long, value_name = "TABLE", requires = "shard_tables")]
    members: Vec<PathBuf>,
    /// With --shard-tables: write the entries of the archives the shards
    /// marked `~unlisted` here, walk positions as ids (the input of
    /// `fsim-chunk --members-of`; empty when --members is given).
    #[arg(long, value_name = "FILE", requires = "shard_tables")]
    unlisted: Option<PathBuf>,
    /// The parts' files in order, or - for standard input.
    #[arg(value_name = "PART", default_value = "-")]
    inputs: Vec<PathBuf>,
}

fn parse_records(s: &str) -> Result<Digest, String> {
    let (n, d) = s.split_once(':').ok_or("expected COUNT:DIGEST")?;
    Ok(Digest {
        count: n.parse().map_err(|_| "expected a count before ':'")?,
        sum: parse_hex128(d.as_bytes()).ok_or("expected 32 hex digits after ':'")?,
    })
}

fn main() -> ExitCode {
    let a = Args::parse();
    if let Some(moved) = a.renumber {
        let cfg = RenumberConfig {
            moved,
            inputs: a.inputs,
            output: a.output,
        };
        return cli::run("fsim-join", || run_renumber(&cfg));
    }
    if a.shard_tables {
        let cfg = ShardConfig {
            inputs: a.inputs,
            output: a.output,
            records: a.records,
            moved: a.moved,
            chunk_ends: a.chunk_ends,
            members: a.members,
            unlisted: a.unlisted,
        };
        return cli::run("fsim-join", || run_shard_tables(&cfg));
    }
    let cfg = Config {
        inputs: a.inputs,
        output: a.output,
        ends_only: a.ends_only,
    };
    cli::run("fsim-join", || run(&cfg))
}
