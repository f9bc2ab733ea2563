//! fsim-partition: drop useless and ubiquitous chunks and split the files
//! into independent components (paper 2.5 steps 3-4). Logic: `fsim::stages::partition`.

use clap::Parser;
use fsim::cli;
use fsim::stages::partition::{Config, Limit};
use std::path::PathBuf;
use std::process::ExitCode;

/// Partition sorted chunk records into connected components of files.
///
/// Reads the file table (written by fsim-chunk --files-out) and a chunk
/// stream sorted by hash (fsim-sort or LC_ALL=C sort). Chunks in one file
/// only are dropped; chunks in more files than the degree limit (half the
/// files, never below 1000) are dropped and reported, and so are chunks held
/// by web pages of --site-names names or more (a generated site's theme);
/// the others link their files (union-find). Writes the kept
/// records, one F line per file in a component of 2 or more files, and the
/// highest-degree dropped chunks.
///
/// Memory: 5 bytes per file plus the largest chunk group, and 4 for the page
/// names; the file table is read three times (give a regular file; a pipe
/// costs 24 more bytes per file).
#[derive(Parser, Debug)]
#[command(name = "fsim-partition", version)]
struct Args {
    /// The file table of the run that wrote the chunks.
    #[arg(long, value_name = "FILES.tsv", default_value = "files.tsv")]
    files: PathBuf,
    /// Output file (written atomically); standard output when absent or `-`.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Drop chunks found in more than N distinct files.
    #[arg(long, value_name = "N", conflicts_with = "max_degree_fraction")]
    max_degree: Option<u64>,
    /// Drop chunks found in more than max(floor(files × F), --degree-floor)
    /// files (the paper: half).
    #[arg(long, value_name = "F", default_value_t = 0.5)]
    max_degree_fraction: f64,
    /// Never drop a chunk found in N files or fewer, whatever the fraction:
    /// a folder of versions of one document (most files share most chunks)
    /// stays whole. Dropped chunks are counted in the report.
    #[arg(long, value_name = "N", default_value_t = fsim::stages::partition::DEFAULT_DEGREE_FLOOR, conflicts_with = "max_degree")]
    degree_floor: u64,
    /// A generated site's template: drop a chunk held by web pages (.html,
    /// .htm, .xhtml) of at least N different names (the file name,
    /// lower-cased, without its digits: one page in several releases, or
    /// numbered versions of a page, are one name). The theme every page of
    /// a Sphinx or Javadoc site repeats links no pair; the pages' own text
    /// still does. 0 turns it off. Dropped chunks are counted in the
    /// report. Forest mode reads --files for the names.
    #[arg(long, value_name = "N", default_value_t = fsim::stages::partition::DEFAULT_SITE_NAMES)]
    site_names: u64,
    /// Ignore the chunks of this templates file (written by fsim-template;
    /// repeat for several): they link no files, and each file's size in its
    /// F line becomes its payload (size less its template chunks).
    #[arg(long, value_name = "TEMPLATES.tsv")]
    templates: Vec<PathBuf>,
    /// Write every chunk dropped and the files holding one (runs of ids),
    /// the degrees of the chunks near the limit, and what they depend on
    /// (the file table, limit, site rule): what a re-run of the changed
    /// chunks alone patches.
    #[arg(long, value_name = "FILE")]
    dropped_out: Option<PathBuf>,
    /// A re-run whose sorted records are the changed chunks' alone
    /// (fsim-sort --changed): the earlier run's --dropped-out ...
    #[arg(long, value_name = "FILE")]
    previous_dropped: Option<PathBuf>,
    /// ... and this run's changed set (fsim-chunk --changed-out). The
    /// trailer's dropped figures are then the whole tree's. When the two
    /// cannot stand for every record (another table than the set's, a
    /// chunk held by unchanged files whose degree lies between the two
    /// limits, templates, a chunk dropped then and not now...) it exits with 3,
    /// saying why, and nothing is written: partition every record.
    #[arg(long, value_name = "FILE")]
    changed: Option<PathBuf>,
    /// Keep the output file zstd-compressed (level 1): the next stage
    /// reads it as it reads text, `zstdcat` gives its lines; standard
    /// output stays text. `make report` passes it by default (`COMPRESS=1`;
    /// docs/performance.md, "Scratch space").
    #[arg(long)]
    compress: bool,
    /// No progress bar and no summary on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// Forest mode (distributed runs, docs/distributed.md): read one hash
    /// range of sorted chunk records (no file table; `#` lines ignored) and
    /// write its kept records, the edges `E<TAB>a<TAB>b` of a spanning
    /// forest of its file graph, its top dropped chunks and a `#forest`
    /// summary line. Needs --files-count.
    #[arg(long, requires = "files_count")]
    emit_forest: bool,
    /// Forest mode: number of files in the run's file table.
    #[arg(long, value_name = "N")]
    files_count: Option<u64>,
    /// Forest mode: also write `N<TAB>file<TAB>count` (distinct features
    /// per file, for feature methods); merge mode: add their sums to the F
    /// lines.
    #[arg(long)]
    feature_counts: bool,
    /// Forest mode: also write `K<TAB>file<TAB>records<TAB>chunks` per file
    /// with kept records (its kept records, and the kept chunks it is the
    /// first file of): summed per component, `fsim-binpack --components`.
    #[arg(long, requires = "emit_forest")]
    kept_counts: bool,
    /// Merge mode (distributed runs, docs/distributed.md): read the forest
    /// lines of every hash range (--emit-forest's E, N, P, #dropped and
    /// #forest lines; K lines are summed for --components-out) and write what a partition file
    /// holds around its kept records: the header, the F lines of the
    /// components the forests join into (--files gives the sizes and
    /// contents), the top dropped chunks and the trailer. The ranges must
    /// hold exactly the file table's records. With --feature-counts, each F
    /// line gets its N lines' sum.
    #[arg(long, conflicts_with_all = ["emit_forest", "templates", "kept_counts"])]
    merge_forests: bool,
    /// Merge mode: also write the components table (`fsim-binpack
    /// --components`'s input) to this file: the partition file's header,
    /// one `C` line per component with its files and the K lines' kept
    /// records and chunks summed, its trailer.
    #[arg(long, value_name = "FILE", requires = "merge_forests")]
    components_out: Option<PathBuf>,
    /// Sorted chunk files (merge mode: forest files); `-` or none for
    /// standard input.
    #[arg(value_name = "SORTED_CHUNKS")]
    inputs: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    cli::run("fsim-partition", || {
        cli::ensure((0.0..=1.0).contains(&a.max_degree_fraction), || {
            format!(
                "--max-degree-fraction {} is outside 0..1",
                a.max_degree_fraction
            )
        })?;
        let limit = match a.max_degree {
            Some(n) => Limit::Absolute(n),
            None => Limit::Fraction {
                fraction: a.max_degree_fraction,
                floor: a.degree_floor,
            },
        };
        if a.merge_forests {
            return fsim::stages::partition::run_merge(&fsim::stages::partition::MergeConfig {
                files: a.files,
                inputs: a.inputs,
                output: a.output,
                feature_counts: a.feature_counts,
                components: a.components_out,
            });
        }
        if a.emit_forest {
            let files = a.files_count.unwrap_or(0);
            return fsim::stages::partition::run_forest(fsim::stages::partition::ForestConfig {
                files,
                site: fsim::stages::partition::PageNames::load(&a.files, files, a.site_names)?,
                inputs: a.inputs,
                output: a.output,
                limit,
                feature_counts: a.feature_counts,
                kept_counts: a.kept_counts,
            });
        }
        let cfg = Config {
            files: a.files,
            inputs: a.inputs,
            output: a.output,
            limit,
            quiet: a.quiet,
            compress: a.compress,
            templates: a.templates,
            site_names: a.site_names,
            dropped_out: a.dropped_out,
            previous_dropped: a.previous_dropped,
            changed: a.changed,
        };
        let s = fsim::stages::partition::run(&cfg)?;
        if !cfg.quiet {
            fsim::cli::stderr_line(s.report());
        }
        Ok(())
    })
}
