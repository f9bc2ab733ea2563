//! fsim-chunk: cut every file under the roots into content-defined chunks
//! (TTTD by default) and write one MD5 record per chunk, plus a file table.
//! All the work is in `fsim::chunk`; this only parses arguments.

use clap::Parser;
use fsim::chunk::{self, Config};
use fsim::chunker::{Chunker, Method};
use fsim::walk::WalkConfig;
use std::path::PathBuf;
use std::process::ExitCode;

/// Cut files into content-defined chunks and write one MD5 record per chunk.
///
/// Walks the ROOTs (directories in byte order of names; symlinks not
/// followed unless -L), chunks each regular file with TTTD (or BSW) and
/// writes `<md5>\t<file id>\t<length>` lines to the output, and the table of
/// files (id, size, mtime, content hash, type, path) to --files-out. Output
/// is identical whatever --jobs. Memory: about 1 MiB per job plus 32 bytes
/// per chunk of the largest files in flight. Unreadable files are warned
/// about and skipped; a ROOT that does not exist is an error (exit 2).
///
/// Incremental and sharded runs: --previous FILES --previous-chunks CHUNKS
/// reuses the records of unchanged files (same path, size, mtime) of an
/// earlier run without reading them; --shard I/N chunks one Nth of the
/// files, and a run given the N shards as --previous merges them into
/// output identical to an unsharded run.
#[derive(Parser, Debug)]
#[command(name = "fsim-chunk", version)]
struct Args {
    /// Files or directories to chunk, in this order.
    #[arg(value_name = "ROOT")]
    roots: Vec<PathBuf>,
    /// Write chunk records here (default: standard output).
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Write the file table here.
    #[arg(long, value_name = "PATH", default_value = "files.tsv")]
    files_out: PathBuf,
    /// Expected average chunk size in bytes (at least 32). The default, 100,
    /// was chosen by measurement (docs/quality.md): with verification it finds
    /// ~95% of the pairs at least 50% similar, where 1000 (the paper's value,
    /// a fast coarse pass with ~10x fewer records) finds ~40%.
    #[arg(long, value_name = "N", default_value = "100", value_parser = parse_avg)]
    avg_size: usize,
    /// Chunking method: tttd (paper) or bsw (basic sliding window).
    #[arg(long, value_name = "METHOD", default_value = "tttd")]
    method: Method,
    /// Worker threads (default: number of cores).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
    /// Follow symbolic links below the roots.
    #[arg(short = 'L', long)]
    follow: bool,
    /// Also read the paths to chunk from this file (`-`: standard input), one per line.
    #[arg(long, value_name = "PATH")]
    files_from: Option<PathBuf>,
    /// Paths in --files-from are separated by NUL bytes, not newlines.
    #[arg(short = '0', long = "null")]
    null: bool,
    /// No summary line on standard error (warnings are still printed).
    #[arg(short, long)]
    quiet: bool,
    /// Read only the files at walk positions I, I+N, I+2N...; file ids are
    /// walk positions. Merge the N shards with --previous (see below).
    #[arg(long, value_name = "I/N", value_parser = fsim::reuse::Shard::parse)]
    shard: Option<fsim::reuse::Shard>,
    /// File table of an earlier run (with --previous-chunks): files with the
    /// same path, size and mtime are not read, their records are reused.
    /// Give all N shards of a sharded run, in order, to merge them.
    #[arg(long, value_name = "FILES.tsv", requires = "previous_chunks")]
    previous: Vec<PathBuf>,
    /// The unsorted chunk file of that earlier run (one per --previous).
    #[arg(long, value_name = "CHUNKS.tsv", requires = "previous")]
    previous_chunks: Vec<PathBuf>,
}

fn parse_avg(s: &str) -> Result<usize, String> {
    let v = fsim::cli::parse_size(s)?;
    let v = usize::try_from(v).map_err(|_| format!("average size {s:?} is too large"))?;
    if v < fsim::chunker::MIN_AVG {
        return Err(format!(
            "average chunk size must be at least {} bytes",
            fsim::chunker::MIN_AVG
        ));
    }
    if v > fsim::chunker::MAX_AVG {
        return Err(format!(
            "average chunk size must be at most {} bytes",
            fsim::chunker::MAX_AVG
        ));
    }
    Ok(v)
}

fn main() -> ExitCode {
    let args = Args::parse();
    fsim::cli::run(chunk::PROG, || {
        fsim::cli::ensure(!args.roots.is_empty() || args.files_from.is_some(), || {
            "nothing to chunk: give at least one ROOT or --files-from".to_string()
        })?;
        fsim::cli::ensure(args.previous.len() == args.previous_chunks.len(), || {
            "give one --previous-chunks for each --previous".to_string()
        })?;
        let chunker = Chunker::new(args.method, args.avg_size).map_err(fsim::Error::Msg)?;
        let jobs = match args.jobs {
            Some(j) => j as usize,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let cfg = Config {
            walk: WalkConfig {
                roots: args.roots,
                follow: args.follow,
                files_from: args.files_from,
                null: args.null,
            },
            output: args.output,
            files_out: args.files_out,
            chunker,
            jobs,
            quiet: args.quiet,
            shard: args.shard,
            previous: args
                .previous
                .into_iter()
                .zip(args.previous_chunks)
                .collect(),
        };
        chunk::run(&cfg).map(|_| ())
    })
}
