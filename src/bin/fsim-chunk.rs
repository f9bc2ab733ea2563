//! fsim-chunk: cut every file under the roots into content-defined chunks
//! (TTTD by default) and write one MD5 record per chunk, plus a file table.
//! All the work is in `fsim::stages::chunk`; this only parses arguments.

use clap::Parser;
use fsim::chunking::chunker::{Chunker, Method};
use fsim::chunking::features::{FeatureMethod, MethodSpec, Normalize};
use fsim::formats::glob::PathPattern;
use fsim::io::walk::WalkConfig;
use fsim::stages::chunk::{self, Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// Cut files into content-defined chunks and write one MD5 record per chunk.
///
/// Walks the ROOTs (directories in byte order of names; symlinks not
/// followed unless -L), chunks each regular file with TTTD (or BSW) and
/// writes `<md5>\t<file id>\t<length>` lines to the output, and the table of
/// files (id, size, mtime, content hash, type, view, raw size, path) to
/// --files-out. Documents are chunked as their text (--content). Output
/// is identical whatever --jobs. Memory: about 1 MiB per job plus 32 bytes
/// per chunk of the largest files in flight, and with --content auto up to
/// twice a document's view (at most 64 MiB) per job. Unreadable files are warned
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
    /// Chunking method: tttd (paper) or bsw (basic sliding window); or a
    /// feature method: sif, mod, min, sketch, bsw-min, supershingle,
    /// oneperm, bbit (docs/formats.md, "Feature methods").
    #[arg(long, value_name = "METHOD", default_value = "tttd")]
    method: String,
    /// Feature methods: window (shingle) length in bytes (default 50 for
    /// sif, 20 for the others).
    #[arg(long, value_name = "W")]
    window: Option<usize>,
    /// Feature methods: n of Mod_n, Min_n, Sketch_n, BSW_n, one-permutation
    /// bins, b-bit sketch length (default 100).
    #[arg(short = 'n', long = "sampling", value_name = "N")]
    n: Option<u32>,
    /// sif: select windows whose fingerprint has its low K bits zero (default 8).
    #[arg(long, value_name = "K")]
    bits: Option<u32>,
    /// sif: anchors variant, windows start at hashed anchors of L bytes (0: off).
    #[arg(long, value_name = "L")]
    anchors: Option<u32>,
    /// supershingle: sketch values per supershingle (default 14).
    #[arg(long = "super-k", value_name = "K")]
    super_k: Option<u32>,
    /// supershingle: supershingles per file (default 6).
    #[arg(long = "super-s", value_name = "S")]
    super_s: Option<u32>,
    /// bbit: bits kept per sketch value (default 8).
    #[arg(long = "b-bits", value_name = "B")]
    b_bits: Option<u32>,
    /// Feature methods: fold ASCII letters to lower case first.
    #[arg(long)]
    fold_case: bool,
    /// Feature methods: collapse runs of white space to one space first.
    #[arg(long)]
    collapse_whitespace: bool,
    /// Feature methods: strip HTML tags and comments first.
    #[arg(long)]
    strip_html: bool,
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
    /// Leave out the files and folders (with all below them) whose path
    /// matches PATTERN: a glob (`*`, `?`, `[a-z]`; `*` crosses `/`) that
    /// matches the whole path as walked, else a part of the path. Repeat
    /// for more. Counted in the file table's trailer (`excluded=`).
    #[arg(long, value_name = "PATTERN")]
    exclude: Vec<String>,
    /// Leave out files smaller than SIZE bytes (K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = fsim::cli::parse_size)]
    min_size: Option<u64>,
    /// Leave out files larger than SIZE bytes (K, M, G suffixes).
    #[arg(long, value_name = "SIZE", value_parser = fsim::cli::parse_size)]
    max_size: Option<u64>,
    /// Keep the output file zstd-compressed (level 1): the next stage
    /// reads it as it reads text, `zstdcat` gives its lines; standard
    /// output stays text. `make report` passes it by default (`COMPRESS=1`;
    /// docs/performance.md, "Scratch space").
    #[arg(long)]
    compress: bool,
    /// No progress and no summary line on standard error (warnings are still printed).
    #[arg(short, long)]
    quiet: bool,
    /// Print the chunking parameters this command line writes in its
    /// headers (tab-separated `key=value`, the PDF extractor and the views'
    /// version included) and exit, reading nothing: how make learns that
    /// an earlier run chunked otherwise (another version, another
    /// extractor) and must chunk again.
    #[arg(long)]
    print_params: bool,
    /// Read only the files at walk positions I, I+N, I+2N...; file ids are
    /// walk positions. Merge the N shards with --previous (see below).
    #[arg(long, value_name = "I/N", value_parser = fsim::stages::reuse::Shard::parse)]
    shard: Option<fsim::stages::reuse::Shard>,
    /// File table of an earlier run (with --previous-chunks): files with the
    /// same path, size and mtime are not read, their records are reused.
    /// Give all N shards of a sharded run, in order, to merge them.
    #[arg(long, value_name = "FILES.tsv", requires = "previous_chunks")]
    previous: Vec<PathBuf>,
    /// The unsorted chunk file of that earlier run (one per --previous).
    #[arg(long, value_name = "CHUNKS.tsv", requires = "previous")]
    previous_chunks: Vec<PathBuf>,
    /// With one --previous: write the chunks of the files changed since
    /// (read again, or gone): their ids and the hashes they hold now or
    /// held then, so that the re-run sorts, partitions and packs only the
    /// records of those chunks (fsim-sort --changed). When they are more
    /// than 4 Mi chunks, FILE is removed instead and the re-run sorts all.
    #[arg(
        long,
        value_name = "FILE",
        requires = "previous",
        conflicts_with = "shard"
    )]
    changed_out: Option<PathBuf>,
    /// With one --previous run: its chunk file is consumed, freed as it is
    /// read (its name removed, then its disk blocks behind the read), so
    /// that the two runs' records are never on disk whole together. For
    /// an earlier run that is thrown away after (the fsim command's
    /// re-run, make's DROP_PREVIOUS=1). A file with another name (a hard
    /// link) is only read; so is the chunk file while this run's records
    /// are still its bytes (a re-run of touched files links it in place).
    /// A run killed after it began has no earlier records: the next reads
    /// every file.
    #[arg(long, requires = "previous", conflicts_with = "shard")]
    consume_previous: bool,
    /// Which bytes of a file to chunk: auto, the content view chosen by
    /// its bytes (compressed streams decompressed; docx, xlsx, pptx, odt,
    /// ods, odp, epub, PDF and e-mail as their text; at most 64 MiB per
    /// view, one view per job in memory), or raw, the bytes as they are.
    /// A document that cannot be read keeps its raw bytes, with a warning.
    /// Recorded in the headers: the later stages read files the same way.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = fsim::content::Mode::parse)]
    content: fsim::content::Mode,
    /// List the members of these archives, not a walk: the entries (walk
    /// positions as ids) of archives a shard run marked `~unlisted`, as
    /// `fsim-join --shard-tables --unlisted` writes them (`-`: standard
    /// input). Writes a members table (--files-out) and the members'
    /// records, each followed by its archive's walk position (-o), which
    /// `fsim-join --shard-tables --members` and `--renumber` put in place
    /// (docs/distributed.md).
    #[arg(long, value_name = "LIST", conflicts_with_all = ["roots", "shard", "previous", "files_from"])]
    members_of: Option<PathBuf>,
}

fn parse_avg(s: &str) -> Result<usize, String> {
    let v = fsim::cli::parse_size(s)?;
    let v = usize::try_from(v).map_err(|_| format!("average size {s:?} is too large"))?;
    if v < fsim::chunking::chunker::MIN_AVG {
        return Err(format!(
            "average chunk size must be at least {} bytes",
            fsim::chunking::chunker::MIN_AVG
        ));
    }
    if v > fsim::chunking::chunker::MAX_AVG {
        return Err(format!(
            "average chunk size must be at most {} bytes",
            fsim::chunking::chunker::MAX_AVG
        ));
    }
    Ok(v)
}

/// A chunk method (`--avg-size`) or a feature method (its own options).
fn make_chunker(a: &Args) -> Result<Chunker, String> {
    if let Ok(m) = a.method.parse::<Method>() {
        let feature_opts = a.window.is_some()
            || a.n.is_some()
            || a.bits.is_some()
            || a.anchors.is_some()
            || a.super_k.is_some()
            || a.super_s.is_some()
            || a.b_bits.is_some()
            || a.fold_case
            || a.collapse_whitespace
            || a.strip_html;
        if feature_opts {
            return Err(format!(
                "--window, -n, --bits, --anchors, --super-k, --super-s, --b-bits and the normalisation options apply to feature methods, not to {m}"
            ));
        }
        return Chunker::new(m, a.avg_size);
    }
    let method: FeatureMethod = a.method.parse()?;
    let mut s = MethodSpec::new(method);
    s.window = a.window.unwrap_or(s.window);
    s.n = a.n.unwrap_or(s.n);
    s.bits = a.bits.unwrap_or(s.bits);
    s.anchors = a.anchors.unwrap_or(s.anchors);
    s.k = a.super_k.unwrap_or(s.k);
    s.s = a.super_s.unwrap_or(s.s);
    s.b = a.b_bits.unwrap_or(s.b);
    s.norm = Normalize {
        fold_case: a.fold_case,
        collapse_whitespace: a.collapse_whitespace,
        strip_html: a.strip_html,
    };
    s.validate()?;
    Ok(Chunker::Features(s))
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.print_params {
        return fsim::cli::run(chunk::PROG, || {
            let chunker = make_chunker(&args).map_err(fsim::Error::Msg)?;
            chunk::print_params(&chunker, args.content)
        });
    }
    if let Some(list) = args.members_of.clone() {
        return fsim::cli::run(chunk::PROG, || {
            let cfg = fsim::stages::members::Config {
                list,
                output: args.output.clone(),
                files_out: args.files_out.clone(),
                chunker: make_chunker(&args).map_err(fsim::Error::Msg)?,
                content: args.content,
                quiet: args.quiet,
            };
            fsim::stages::members::run(&cfg)
        });
    }
    fsim::cli::run(chunk::PROG, || {
        fsim::cli::ensure(!args.roots.is_empty() || args.files_from.is_some(), || {
            "nothing to chunk: give at least one ROOT or --files-from".to_string()
        })?;
        fsim::cli::ensure(args.previous.len() == args.previous_chunks.len(), || {
            "give one --previous-chunks for each --previous".to_string()
        })?;
        fsim::cli::ensure(
            args.changed_out.is_none() || args.previous.len() == 1,
            || "--changed-out takes one earlier run (one --previous), not shards".to_string(),
        )?;
        let chunker = make_chunker(&args).map_err(fsim::Error::Msg)?;
        let jobs = match args.jobs {
            Some(j) => j as usize,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        // fsim-chunk never reads what it writes (`-o chunks.tsv .`).
        let own_outputs = [
            args.output.clone(),
            Some(args.files_out.clone()),
            args.changed_out.clone(),
        ]
        .into_iter()
        .flatten()
        .filter(|p| p.as_os_str() != "-")
        .collect();
        let cfg = Config {
            walk: WalkConfig {
                roots: args.roots,
                follow: args.follow,
                files_from: args.files_from,
                null: args.null,
                exclude: args.exclude.iter().map(|p| PathPattern::parse(p)).collect(),
                min_size: args.min_size.unwrap_or(0),
                max_size: args.max_size,
                own_outputs,
            },
            output: args.output,
            files_out: args.files_out,
            chunker,
            jobs,
            quiet: args.quiet,
            compress: args.compress,
            shard: args.shard,
            previous: args
                .previous
                .into_iter()
                .zip(args.previous_chunks)
                .collect(),
            changed_out: args.changed_out,
            consume_previous: args.consume_previous,
            content: args.content,
        };
        chunk::run(&cfg).map(|_| ())
    })
}
