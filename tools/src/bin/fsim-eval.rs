//! fsim-eval: reproduce the HP paper's controlled experiment (near-duplicates
//! with i words inserted or deleted) on a folder of text documents.
use clap::Parser;
use fsim_tools::eval::{self, Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// Compare Mod_n, Min_n, Sketch_n, BSW_n, sif and fsim's TTTD on near-duplicates
/// of real documents (HP evaluation paper, figures 1-7 and 11).
///
/// Picks --count distinct text documents from --docs, makes near-duplicates
/// with i = 1..--max-i words inserted (and deleted), and writes CSV and SVG
/// files to --out and, with --markdown, a report. Memory: the documents (at
/// most count × max-size) and one signature per method and document; time:
/// about a minute per 5 MB of documents on two cores.
#[derive(Parser)]
#[command(name = "fsim-eval", version)]
struct Args {
    /// Folder of real text documents (searched recursively).
    #[arg(long)]
    docs: PathBuf,
    /// Folder for the CSV and SVG files (created).
    #[arg(long, short = 'o', default_value = "docs/evaluation")]
    out: PathBuf,
    /// Write the markdown report here (image links relative to it).
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// What --docs is, for the report (e.g. "Python 3.11 standard library").
    #[arg(long)]
    docs_label: Option<String>,
    /// Number of distinct documents.
    #[arg(long, default_value = "100")]
    count: usize,
    /// Largest number of edits i.
    #[arg(long, default_value = "50")]
    max_i: usize,
    /// Smallest document (bytes; K, M suffixes).
    #[arg(long, default_value = "9K", value_parser = fsim::cli::parse_size)]
    min_size: u64,
    /// Largest document.
    #[arg(long, default_value = "540K", value_parser = fsim::cli::parse_size)]
    max_size: u64,
    /// Seed of the edits: the same seed gives the same near-duplicates.
    #[arg(long, default_value = "2007")]
    seed: u64,
    /// Word to insert (a space follows it).
    #[arg(long, default_value = "a")]
    word: String,
    /// Window sizes of the sweep, comma separated.
    #[arg(long, default_value = "5,10,20,40,60,80,100", value_delimiter = ',')]
    windows: Vec<usize>,
    /// Documents sharing this percentage of their bytes (TTTD chunks) with
    /// a picked one are not distinct.
    #[arg(long, default_value = "25", value_parser = fsim::cli::parse_percent)]
    distinct: f64,
    /// Threads.
    #[arg(short = 'j', long, default_value_t = std::thread::available_parallelism().map_or(2, |n| n.get()))]
    jobs: usize,
    /// Skip the timing of figure 11 (for tests: times are not deterministic).
    #[arg(long)]
    no_timing: bool,
    /// No progress on stderr.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let a = Args::parse();
    fsim::cli::run("fsim-eval", || {
        fsim::cli::ensure(a.count >= 2, || "--count must be at least 2".into())?;
        fsim::cli::ensure(a.min_size <= a.max_size, || {
            "--min-size is larger than --max-size".into()
        })?;
        fsim::cli::ensure(
            !a.word.is_empty() && !a.word.bytes().any(|b| b.is_ascii_whitespace()),
            || "--word must be one word".into(),
        )?;
        fsim::cli::ensure(
            !a.windows.is_empty() && a.windows.iter().all(|&w| (1..=4096).contains(&w)),
            || "--windows must be sizes within 1..=4096".into(),
        )?;
        let mut c = Config::new(a.docs, a.out);
        c.markdown = a.markdown;
        c.docs_label = a.docs_label;
        c.count = a.count;
        c.max_i = a.max_i;
        c.min_size = a.min_size;
        c.max_size = a.max_size;
        c.seed = a.seed;
        c.word = a.word.into_bytes();
        c.windows = a.windows;
        c.distinct = a.distinct / 100.0;
        c.jobs = a.jobs.max(1);
        c.timing = !a.no_timing;
        c.quiet = a.quiet;
        eval::run(&c).map(|_| ())
    })
}
