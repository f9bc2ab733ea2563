//! fsim-report: cluster similar files and list identical ones (paper step 5, 2.4).
use clap::Parser;
use fsim::report::{self, Format, PercentOf};
use std::path::PathBuf;
use std::process::ExitCode;

/// Cluster the similar pairs found by fsim-analyze and list identical files
/// apart. Formats: text, json, tsv, html (one self-contained page with
/// side-by-side views), xlsx (needs -o). Clusters are ranked by the bytes a
/// reviewer could remove, then files. Memory: the file table (bounded by the
/// number of files) plus --memory of links, in every format (the pairs are
/// read several times); the html page is capped (what it leaves out is
/// said in it) and re-reads the viewed files.
#[derive(Parser)]
#[command(name = "fsim-report", version)]
struct Args {
    /// File table written by fsim-chunk --files-out.
    #[arg(long, default_value = "files.tsv")]
    files: PathBuf,
    /// Pairs written by fsim-analyze (`-` for standard input).
    #[arg(default_value = "-")]
    pairs: PathBuf,
    /// Output file (default: standard output), written atomically.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Also write this format to this file, from the same read of the
    /// pairs and the same model (e.g. `--also json=report.json`); repeat
    /// for more. The bytes are those of a run of that format alone.
    #[arg(long, value_name = "FORMAT=FILE", value_parser = report::parse_also)]
    also: Vec<(Format, PathBuf)>,
    /// Keep links whose bytes in common are at least this percentage of the
    /// smaller (or larger) file. Applied to what fsim-analyze kept, so it can
    /// only be stricter than the analysis floor.
    #[arg(long, default_value = "50", value_parser = fsim::cli::parse_percent)]
    min_percent: f64,
    /// Keep links with at least this many bytes in common. The default, 32,
    /// is a line of code or a short sentence: a shared blank line, a closing
    /// brace or the page numbers "1\n2\n" of a short PDF are no link, however
    /// large a share of a tiny file they are (docs/usage.md). 0 keeps all.
    #[arg(long, default_value = "32")]
    min_bytes: u64,
    /// Which file the percentage refers to.
    #[arg(long, value_enum, default_value = "smaller")]
    percent_of: PercentOf,
    /// HTML: side-by-side views (files re-read and re-chunked) for at most
    /// this many links, those of the largest clusters first.
    #[arg(long, default_value = "200")]
    html_max_views: usize,
    /// HTML: bytes of text embedded per viewed file at most (K, M suffixes).
    #[arg(long, default_value = "256K", value_parser = fsim::cli::parse_size)]
    html_text_cap: u64,
    /// Colour in the text report: auto (only when standard output is a
    /// terminal and NO_COLOR is unset), always, never.
    #[arg(long, value_enum, default_value = "auto")]
    color: report::ColorChoice,
    /// Drop links whose larger file is more than R times the smaller (sif's
    /// size ratio; sizes are payloads when templates were ignored).
    #[arg(long, value_name = "R")]
    max_size_ratio: Option<f64>,
    /// Link only files with the same suffix (text after the last '.' of the
    /// name, case-insensitive).
    #[arg(long)]
    same_suffix: bool,
    /// Link only files of the same type (text, binary, pdf... as in the file table).
    #[arg(long)]
    same_type: bool,
    /// Which types may be linked: separate (text-like files, text and
    /// postscript, are not linked to binary-like ones: binary, compressed,
    /// pdf, image) or any.
    #[arg(long, value_enum, default_value = "separate")]
    link_types: fsim::report::filter::LinkTypes,
    /// Only files whose path matches: a glob on the whole path (`*`, `?`,
    /// `[...]`; `*` crosses `/`) or, without glob characters, a substring.
    /// Repeat for several (a file matching any is kept).
    #[arg(long, value_name = "PATTERN")]
    path_include: Vec<String>,
    /// Leave out files whose path matches (glob or substring, as above).
    #[arg(long, value_name = "PATTERN")]
    path_exclude: Vec<String>,
    /// Keep only links between files of different collections (fsim-merge).
    #[arg(long)]
    cross_collections_only: bool,
    /// Flag clusters of at least this many files as likely templates (when
    /// almost every link shares about the same bytes).
    #[arg(long, value_name = "N", default_value_t = fsim::report::templates::LIKELY_MIN_FILES)]
    template_min_files: usize,
    /// Templates files the analysis ignored (the --templates given to
    /// fsim-partition and fsim-verify; checked against the pairs): the HTML
    /// side-by-side views mark their chunks apart from the shared ones.
    #[arg(long, value_name = "FILE")]
    templates: Vec<PathBuf>,
    /// Budget of the links held at once, in every format (e.g. 256M, 1G);
    /// memory also grows with the number of files (the file table and about
    /// 60 bytes per file), not with the links.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = fsim::cli::parse_size)]
    memory: u64,
    /// Where a piped pairs input is spooled (it is read several times);
    /// default: the system's temporary folder.
    #[arg(long, value_name = "DIR")]
    tmpdir: Option<PathBuf>,
    /// A cluster of more files than this is shown as its sub-clusters at
    /// 50/70/90 % similarity and each file's 3 closest relatives: instead of
    /// all its links in text and html, beside them in json (tsv and json
    /// keep every link).
    #[arg(long, value_name = "N", default_value = "50")]
    review_files: usize,
    /// The sh format: which copy of each identical set is kept, the first
    /// by these rules, tried in order (comma-separated): under:DIR (files
    /// under DIR first; may repeat), root (the order of the roots), oldest,
    /// newest, shallow (fewest folders deep), deep, short (shortest path),
    /// path (byte order, always the last tie-break). The default keeps the
    /// original in place over a copy made later in a sub-folder.
    #[arg(long, value_name = "RULES", default_value = fsim::report::actions::keep::DEFAULT,
          value_parser = fsim::report::actions::keep::Keep::parse)]
    keep: fsim::report::actions::keep::Keep,
    /// No summary line on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// Print the report's thresholds for this command line as one line of
    /// `key=value` fields (tab-separated) and exit, reading nothing: how
    /// make learns the threshold it gives fsim-verify instead of restating
    /// the default.
    #[arg(long)]
    print_settings: bool,
}

fn main() -> ExitCode {
    let a = Args::parse();
    if a.print_settings {
        let line = format!(
            "min-percent={}\tmin-bytes={}\tpercent-of={}\n",
            a.min_percent,
            a.min_bytes,
            a.percent_of.as_str()
        );
        return fsim::cli::run("fsim-report", || {
            use fsim::error::Context;
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(line.as_bytes())
                .and_then(|()| out.flush())
                .ctx(|| "writing the settings to standard output")
        });
    }
    fsim::cli::run("fsim-report", || {
        fsim::cli::ensure(a.max_size_ratio.is_none_or(|r| r >= 1.0), || {
            "--max-size-ratio must be at least 1".into()
        })?;
        report::run(
            report::Config {
                files: a.files,
                pairs: a.pairs,
                output: a.output,
                format: a.format,
                also: a.also,
                min_percent: a.min_percent,
                min_bytes: a.min_bytes,
                percent_of: a.percent_of,
                html: fsim::report::model::HtmlOptions {
                    max_views: a.html_max_views,
                    text_cap: a.html_text_cap.min(usize::MAX as u64) as usize,
                },
                color: a.color,
                filters: fsim::report::filter::Filters {
                    max_size_ratio: a.max_size_ratio,
                    same_suffix: a.same_suffix,
                    same_type: a.same_type,
                    include: a
                        .path_include
                        .iter()
                        .map(|p| fsim::report::filter::PathPattern::parse(p))
                        .collect(),
                    exclude: a
                        .path_exclude
                        .iter()
                        .map(|p| fsim::report::filter::PathPattern::parse(p))
                        .collect(),
                    link_types: a.link_types,
                    cross_collections_only: a.cross_collections_only,
                },
                template_min_files: a.template_min_files,
                templates: a.templates,
                memory: a.memory,
                tmpdir: a.tmpdir,
                review_files: a.review_files,
                keep: a.keep,
            },
            a.quiet,
        )
    })
}
