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
    /// Expected average chunk size in bytes (at least 32).
    #[arg(long, value_name = "N", default_value = "1000", value_parser = parse_avg)]
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
        };
        chunk::run(&cfg).map(|_| ())
    })
}
