//! The options of `fsim-report` ([`Config`]): the formats asked for, the
//! thresholds and filters, the memory budget, set once by the command line.

use crate::formats::PercentOf;
use std::path::PathBuf;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Tsv,
    /// One self-contained page (src/report/html.rs).
    Html,
    /// A workbook with outlined rows (src/report/xlsx.rs); needs `-o FILE`.
    Xlsx,
    /// A shell script of actions for the identical files, reviewed and run
    /// by a person (src/report/actions.rs).
    Sh,
}

impl Config {
    /// Every report asked for: the main one, then the `--also` ones.
    pub(crate) fn outputs(&self) -> impl Iterator<Item = (Format, Option<&std::path::Path>)> {
        std::iter::once((self.format, self.output.as_deref()))
            .chain(self.also.iter().map(|(f, p)| (*f, Some(p.as_path()))))
    }

    /// Whether any report asked for is in one of `formats`.
    pub(crate) fn writes(&self, formats: &[Format]) -> bool {
        self.outputs().any(|(f, _)| formats.contains(&f))
    }
}

/// When the text report is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// When writing to a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

/// ANSI styles of the text report; all empty without colour.
/// Options of `fsim-report`.
#[derive(Debug, Clone)]
pub struct Config {
    pub files: PathBuf,
    pub pairs: PathBuf,
    pub output: Option<PathBuf>,
    pub format: Format,
    /// More reports written from the same model (`--also FORMAT=FILE`):
    /// the pairs are read and the model built once for all of them.
    pub also: Vec<(Format, PathBuf)>,
    pub min_percent: f64,
    pub min_bytes: u64,
    pub percent_of: PercentOf,
    /// Options of the HTML format.
    pub html: HtmlOptions,
    /// Colour in the text report.
    pub color: ColorChoice,
    /// sif's post-processing filters (src/report/filter.rs).
    pub filters: crate::report::filter::Filters,
    /// Smallest cluster flagged as a likely template.
    pub template_min_files: usize,
    /// The templates files the analysis ignored (`--templates`): checked
    /// against the pairs header; the HTML views mark their chunks.
    pub templates: Vec<PathBuf>,
    /// Budget of the links held at once (`--memory`), besides what grows
    /// with the number of files and the stated constants of each format.
    pub memory: u64,
    /// Where a piped pairs input is spooled (`--tmpdir`; default: the
    /// system's temporary folder).
    pub tmpdir: Option<PathBuf>,
    /// A cluster of more files than this is shown as sub-clusters and each
    /// file's closest relatives: instead of its links in the text and html
    /// reports, beside them in the json (`--review-files`).
    pub review_files: usize,
    /// Which copy of an identical set the actions script keeps (`--keep`).
    pub keep: crate::report::actions::keep::Keep,
}

/// Options of the HTML format.
#[derive(Debug, Clone, Copy)]
pub struct HtmlOptions {
    /// Side-by-side views for at most this many links (first clusters first).
    pub max_views: usize,
    /// Bytes of text embedded per viewed file at most.
    pub text_cap: usize,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        HtmlOptions {
            max_views: 200,
            text_cap: 256 << 10,
        }
    }
}
