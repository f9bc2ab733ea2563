//! The settings of a run, defined once: the make variable (`fsim
//! VAR=value FOLDER` takes the same), the stages whose settings file it is
//! written to (`WORK/settings/<stage>`: a new value re-runs those stages
//! and what follows), what its value must be (checked before any work),
//! and fsim-spark's argument for it. The Makefile's variables, its
//! `SETTINGS_<stage>` lines, fsim-spark's arguments and docs/usage.md are
//! checked against this table by the tests below, so none drifts from it;
//! the defaults are the binaries' own (the Makefile passes a setting only
//! when it is set).

use super::{Invocation, StageKnowledge};
use crate::error::{Error, Result};
use std::path::Path;

/// One setting of `make report` (module doc).
#[derive(Clone, Copy)]
pub struct Setting {
    pub var: &'static str,
    /// The settings files it is written to; empty for a setting that
    /// changes how the run goes (threads, memory, where), not what it finds.
    pub stages: &'static [&'static str],
    /// What its value must be, and whether it may be empty (the Makefile
    /// then passes nothing: the stage's default); `None`: free text, or
    /// checked by the stage that reads it ([`StageKnowledge::check_value`]).
    pub value: Option<(Expect, bool)>,
    /// fsim-spark's argument for it, when Spark runs it.
    pub spark: Option<&'static str>,
    /// The Makefile's value (`VAR ?= default`); empty: the program's own
    /// default of [`Setting::flag`] applies (the man page asks the program).
    pub default: &'static str,
    /// The program and the option the Makefile passes the value to.
    pub flag: Option<(&'static str, &'static str)>,
    /// What it does, in one line (the man page and the completions).
    pub help: &'static str,
}

const fn s(
    var: &'static str,
    stages: &'static [&'static str],
    value: Option<(Expect, bool)>,
    spark: Option<&'static str>,
) -> Setting {
    Setting {
        var,
        stages,
        value,
        spark,
        default: "",
        flag: None,
        help: "",
    }
}

impl Setting {
    const fn default(self, default: &'static str) -> Self {
        Setting { default, ..self }
    }
    const fn flag(self, program: &'static str, option: &'static str) -> Self {
        Setting {
            flag: Some((program, option)),
            ..self
        }
    }
    const fn help(self, help: &'static str) -> Self {
        Setting { help, ..self }
    }
}

const ANY: u64 = u64::MAX;
const BIT: Option<(Expect, bool)> = Some((Expect::OneOf(&["0", "1"]), false));
const BIT_OR_UNSET: Option<(Expect, bool)> = Some((Expect::OneOf(&["0", "1"]), true));

/// Every setting of a run, in the order of docs/usage.md.
pub const SETTINGS: &[Setting] = &[
    s("REPO", &["chunk"], None, Some("--repo"))
        .help("the folders to analyse (fsim's FOLDER; NAME=DIR names a root)"),
    s("WORK", &[], None, Some("--work"))
        .default("work")
        .help("the work folder: every stage's output and the reports (fsim: ./fsim-work)"),
    s("COLLECTIONS", &["chunk"], None, None)
        .help("collections chunked elsewhere, NAME=DIR with files.tsv and chunks.tsv"),
    s("AGAINST", &["chunk"], None, None)
        .help("an earlier run's work folder: REPO's named roots against its collections"),
    s("METHOD", &["chunk"], None, Some("--method"))
        .flag("fsim-chunk", "--method")
        .help("how files are cut: tttd, bsw, or a feature method (sif, min, sketch...)"),
    s("AVG", &["chunk"], None, Some("--avg"))
        .flag("fsim-chunk", "--avg-size")
        .help("average chunk size in bytes (1000: the paper's faster, coarser pass)"),
    s("CONTENT", &["chunk"], None, None)
        .flag("fsim-chunk", "--content")
        .help("which bytes are compared: auto (documents by their text) or raw"),
    s("METHOD_OPTS", &["chunk"], None, Some("--chunk-opts"))
        .help("more fsim-chunk options, e.g. '-n 50 --fold-case' or '--exclude *.iso'"),
    s(
        "SITE_NAMES",
        &["partition", "analyze"],
        Some((Expect::Number(0, ANY), true)),
        Some("--site-names"),
    )
    .flag("fsim-partition", "--site-names")
    .help("a chunk or line in web pages of at least this many names links no pair (0: off)"),
    s(
        "TEMPLATES",
        &["partition", "analyze", "verify", "report"],
        Some((Expect::Files, true)),
        None,
    )
    .help("templates files (make template) whose chunks every analysis ignores"),
    s(
        "CAPACITY",
        &["binpack"],
        Some((Expect::Size, true)),
        Some("--capacity"),
    )
    .flag("fsim-analyze", "--capacity")
    .help("memory of one bin of the analysis (and of fsim-binpack's bins)"),
    s("VERIFY", &["analyze"], BIT, Some("--verify"))
        .default("1")
        .help("1: exact bytes in common read from the files; 0: chunk figures only"),
    s(
        "FLOOR",
        &["analyze"],
        Some((Expect::Percent, true)),
        Some("--floor"),
    )
    .flag("fsim-analyze", "--min-percent")
    .help("pairs below this percent of the smaller file are not kept by the analysis"),
    s(
        "LINES",
        &["analyze"],
        Some((Expect::SizeLimit, true)),
        Some("--lines"),
    )
    .flag("fsim-analyze", "--line-pairs-below")
    .help("text files of at most this size (default any: every size; 4K: small ones; 0: none) are also compared line by line"),
    s("CATALOGS", &["analyze"], BIT_OR_UNSET, Some("--catalogs"))
        .flag("fsim-analyze", "--line-catalogs")
        .help("1 (the default): translation catalogs (.po, .pot) are also compared line by line; 0: not"),
    s(
        "LINE_FLOOR",
        &["analyze"],
        Some((Expect::Percent, true)),
        Some("--line-floor"),
    )
    .flag("fsim-analyze", "--line-min-percent")
    .help("line overlap (percent of the smaller file) that makes a line candidate"),
    s("REGIONS", &["verify"], BIT, Some("--regions"))
        .default("0")
        .help("1: also write regions.tsv, the shared regions of every verified pair"),
    s(
        "MIN_PERCENT",
        &["report"],
        Some((Expect::Percent, true)),
        Some("--min-percent"),
    )
    .flag("fsim-report", "--min-percent")
    .help("report threshold: percent of the smaller file in common"),
    s(
        "MIN_BYTES",
        &["report"],
        Some((Expect::Number(0, ANY), true)),
        Some("--min-bytes"),
    )
    .flag("fsim-report", "--min-bytes")
    .help("links with fewer bytes in common are left out of the report"),
    s("REPORT_FILTERS", &["report"], None, None)
        .help("more fsim-report options, e.g. '--same-type --max-size-ratio 3'"),
    s(
        "HTML_MAX_VIEWS",
        &["html"],
        Some((Expect::Number(0, ANY), true)),
        Some("--html-max-views"),
    )
    .flag("fsim-report", "--html-max-views")
    .help("side-by-side views in the html report for at most this many links"),
    s("KEEP_RULES", &["sh"], None, None)
        .flag("fsim-report", "--keep")
        .help("which copy of each identical set report.sh keeps, e.g. under:photos,oldest"),
    s(
        "FORMATS",
        &[],
        Some((Expect::Formats, false)),
        Some("--formats"),
    )
    .default("txt json")
    .help("the reports written: any of txt json tsv html xlsx sh"),
    // fsim-chunk's -j takes 1 to 1024 threads.
    s(
        "JOBS",
        &[],
        Some((Expect::Number(1, 1024), false)),
        Some("--jobs"),
    )
    .default("$(shell nproc 2>/dev/null || echo 2)")
    .help("threads of each stage, and reports written at a time (default: the cores)"),
    s("MEMORY", &[], Some((Expect::Size, true)), Some("--memory"))
        .flag("fsim-sort", "--memory")
        .help("memory of fsim-sort, fsim-verify and each fsim-report process"),
    s("SHARDS", &[], Some((Expect::Number(1, ANY), false)), None)
        .default("1")
        .help("chunk in this many shards, run in parallel, merged into the same bytes"),
    s("PREVIOUS", &[], Some((Expect::Previous, true)), None)
        .help("an earlier work folder: only the files that changed are read again"),
    s("DROP_PREVIOUS", &[], BIT_OR_UNSET, None)
        .help("1: PREVIOUS's bins removed before the chunking, its chunk records once this run's are written (a folder fsim made: fsim's own re-run)"),
    s("LINE_SETS", &[], Some((Expect::OneOf(&["0", "1", "auto"]), false)), None)
        .default("auto")
        .help("keep each content's lines (lines.tsv, 0.10-0.20x the tree), so that a re-run reads only the changed files in the analysis too: auto when they leave the re-run within the tree's size, 1 always, 0 never"),
    s("CHANGED_ONLY", &[], Some((Expect::OneOf(&["0", "1"]), false)), None)
        .default("1")
        .help("1: a re-run sorts, partitions and packs only the records of the chunks the changed files hold (every file's), the same pairs; 0: all records"),
    s(
        "SORT",
        &[],
        Some((Expect::OneOf(&["fsim", "gnu"]), false)),
        None,
    )
    .default("fsim")
    .help("gnu: LC_ALL=C sort instead of fsim-sort (the same bytes out)"),
    s("COMPRESS", &[], Some((Expect::OneOf(&["0", "1"]), false)), None)
        .default("1")
        .help("1: the chunk records, sorted records, partition and bins kept zstd-compressed (scratch space 0.15-0.4x; 0: text)"),
    s("KEEP", &[], BIT_OR_UNSET, None)
        .help("1: keep the intermediates a later stage consumed (sorted records, partition)"),
    s("QUIET", &[], None, None)
        .default("-q")
        .help("-q: no progress from the stages; empty: progress on stderr"),
    s("BIN", &[], None, Some("--bin"))
        .default("$(RELEASE_DIR)")
        .help("where the fsim-* programs are (fsim: beside itself)"),
];

/// The names `fsim` takes (`REPO` is its FOLDER argument).
pub fn settings() -> Vec<&'static str> {
    let mut names: Vec<&str> = SETTINGS
        .iter()
        .map(|s| s.var)
        .filter(|&v| v != "REPO")
        .collect();
    names.sort_unstable();
    names
}

/// The report formats `make report` writes.
pub const FORMATS: [&str; 6] = ["txt", "json", "tsv", "html", "xlsx", "sh"];

/// What a setting's value must be, checked before the work folder is made,
/// as the stage that takes it parses it.
#[derive(Clone, Copy)]
pub enum Expect {
    /// A byte size (`256M`), as `cli::parse_size` reads it.
    Size,
    /// A byte size or `any`, as `cli::parse_size_limit` reads it.
    SizeLimit,
    /// A percentage, as `cli::parse_percent` reads it.
    Percent,
    /// A whole number within these bounds.
    Number(u64, u64),
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// One or more of the report formats.
    Formats,
    /// An earlier work folder.
    Previous,
    /// Files that exist.
    Files,
}

impl Expect {
    /// What a value must be, for the message that refuses one.
    pub fn what(self) -> String {
        match self {
            Expect::Size => {
                "a size such as 256M (a number with an optional K, M, G or T suffix)".into()
            }
            Expect::SizeLimit => {
                "a size such as 64K (a number with an optional K, M, G or T suffix), or any".into()
            }
            Expect::Percent => "a percentage from 0 to 100".into(),
            Expect::Number(0, u64::MAX) => "a whole number, 0 or more".into(),
            Expect::Number(lo, u64::MAX) => format!("a whole number, {lo} or more"),
            Expect::Number(lo, hi) => format!("a whole number from {lo} to {hi}"),
            Expect::OneOf(words) => words.join(" or "),
            Expect::Formats => format!("one or more of {}", FORMATS.join(" ")),
            Expect::Previous => "an earlier work folder (with files.tsv and chunks.tsv)".into(),
            Expect::Files => "templates files that exist (make template writes one)".into(),
        }
    }

    fn accepts(self, v: &str) -> bool {
        let words = || v.split_whitespace();
        match self {
            Expect::Size => crate::cli::parse_size(v).is_ok(),
            Expect::SizeLimit => crate::cli::parse_size_limit(v).is_ok(),
            Expect::Percent => crate::cli::parse_percent(v).is_ok(),
            Expect::Number(lo, hi) => v.parse::<u64>().is_ok_and(|n| (lo..=hi).contains(&n)),
            Expect::OneOf(words) => words.contains(&v),
            Expect::Formats => words().next().is_some() && words().all(|f| FORMATS.contains(&f)),
            Expect::Previous => ["files.tsv", "chunks.tsv"]
                .iter()
                .all(|f| Path::new(v).join(f).is_file()),
            Expect::Files => words().all(|f| Path::new(f).is_file()),
        }
    }
}

/// Refuse a setting whose value no stage would take, in one line naming
/// the setting, the value and what it must be, before any work.
pub(super) fn check_values(inv: &Invocation, stages: &StageKnowledge) -> Result<()> {
    for (name, value) in &inv.vars {
        let v = value.to_string_lossy();
        let bad = |what: String| Error::msg(format!("{name}={v}: {what}"));
        if let Some((expect, empty_ok)) = SETTINGS
            .iter()
            .find(|s| s.var == name)
            .and_then(|s| s.value)
        {
            let unset = v.is_empty() && empty_ok;
            if !unset && !expect.accepts(&v) {
                return Err(bad(format!("expected {}", expect.what())));
            }
        } else if !v.is_empty() {
            if let Some(Err(m)) = (stages.check_value)(name, &v) {
                return Err(bad(m));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn set<'a>(words: impl IntoIterator<Item = &'a str>) -> BTreeSet<&'a str> {
        words.into_iter().collect()
    }

    /// The Makefile assigns every setting with `?=` (a default the command
    /// line overrides), and its `SETTINGS_<stage>` lines are the table's.
    #[test]
    fn the_makefile_is_the_tables() {
        let mk = super::super::MAKEFILE;
        let assigned = set(mk
            .lines()
            .filter_map(|l| l.split_once("?=").map(|(n, _)| n.trim_end())));
        for s in SETTINGS {
            assert!(
                assigned.contains(s.var),
                "{} has no `?=` in the Makefile",
                s.var
            );
        }
        let stages = set(SETTINGS.iter().flat_map(|s| s.stages.iter().copied()));
        for stage in &stages {
            let line = mk
                .lines()
                .find_map(|l| l.strip_prefix(&format!("SETTINGS_{stage}")))
                .unwrap_or_else(|| panic!("no SETTINGS_{stage} in the Makefile"));
            let words = set(line.trim_start().trim_start_matches('=').split_whitespace());
            let want = set(SETTINGS
                .iter()
                .filter(|s| s.stages.contains(stage))
                .map(|s| s.var));
            assert_eq!(words, want, "SETTINGS_{stage}");
        }
        let files = mk
            .lines()
            .find_map(|l| l.strip_prefix("STAGE_SETTINGS = $(addprefix $(WORK)/settings/,"))
            .expect("STAGE_SETTINGS");
        assert_eq!(set(files.trim_end_matches(')').split_whitespace()), stages);
    }

    /// The Makefile's variables that are not settings of a run: how fsim is
    /// built and installed, and the other targets' own (Spark's demo, make
    /// template, make quality, make eval).
    const NOT_SETTINGS: &[&str] = &[
        "CARGO",
        "NATIVE",
        "NATIVE_DIR",
        "PREFIX",
        "DESTDIR",
        "CLUSTER",
        "FRACTION",
        "SPARK_VENV",
        "PYSPARK_VERSION",
        "SPARK_MASTER",
        "SPARK_OPTS",
        "SDEMO",
        "SDEMO_FORMATS",
        "QDIR",
        "DOCS_LABEL",
        "EVAL_OUT",
        "EVAL_MD",
    ];

    /// The table is the one place a setting and its default are written:
    /// every `VAR ?= value` of the Makefile is a setting with that default
    /// (or one of [`NOT_SETTINGS`]), and a setting passed to a program
    /// reaches it by the table's option.
    #[test]
    fn the_makefile_adds_no_setting_and_no_default() {
        let mk = super::super::MAKEFILE;
        for (var, value) in mk.lines().filter_map(|l| l.split_once("?=")) {
            let (var, value) = (var.trim_end(), value.trim());
            if NOT_SETTINGS.contains(&var) {
                continue;
            }
            let s = SETTINGS
                .iter()
                .find(|s| s.var == var)
                .unwrap_or_else(|| panic!("Makefile: {var} ?= is not in the settings table"));
            assert_eq!(
                value, s.default,
                "Makefile: {var}'s default is not the table's"
            );
        }
        for s in SETTINGS {
            if let Some((program, option)) = s.flag {
                let var = format!("$({})", s.var);
                assert!(
                    mk.lines().any(|l| l.contains(&var) && l.contains(option)),
                    "Makefile: no line passes {var} to {program} as {option}"
                );
            }
        }
    }

    /// fsim-spark takes each setting the table gives it, by that name, and
    /// says which make variable each of its arguments is.
    #[test]
    fn spark_arguments_are_the_tables() {
        let py = include_str!("../../scripts/spark/fsim_spark.py");
        for s in SETTINGS {
            if let Some(flag) = s.spark {
                assert!(
                    py.contains(&format!("ap.add_argument(\"{flag}\"")),
                    "fsim-spark has no {flag}"
                );
            }
        }
        for l in py.lines().filter(|l| l.contains("ap.add_argument(")) {
            let Some((_, var)) = l.split_once("help=\"make's ") else {
                continue;
            };
            let var = var
                .split(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                .next()
                .unwrap();
            let flag = l.split('"').nth(1).unwrap();
            let s = SETTINGS
                .iter()
                .find(|s| s.var == var)
                .unwrap_or_else(|| panic!("{var} not in the table"));
            assert_eq!(s.spark, Some(flag), "{var}");
        }
    }

    /// Every setting is documented for users.
    #[test]
    fn usage_names_every_setting() {
        let usage = include_str!("../../docs/usage.md");
        for s in SETTINGS {
            assert!(
                usage.contains(&format!("`{}", s.var)),
                "docs/usage.md does not name {}",
                s.var
            );
        }
    }
}
