//! fsim-analyze's line source, through the real binaries: two
//! translation catalogs of two locales (same msgids, every msgstr
//! different) and two small files edited every third line share no chunk
//! worth keeping, but their lines are mostly the same. With
//! `--line-catalogs --line-pairs-below 1K` both pairs become candidates, an
//! unrelated small file does not, and fsim-verify gives each pair the
//! exact bytes of its common lines.

use crate::common;

use common::*;
use std::collections::HashMap;
use std::path::Path;

fn catalog(msgstr: impl Fn(usize) -> String) -> (String, u64) {
    let mut s = String::new();
    let mut common = 0u64;
    for i in 0..40 {
        let shared = format!("#: django/contrib/admin/views/main.py:{}\nmsgid \"Select %(name)s item number {i} to change\"\n", 100 + 7 * i);
        let tr = format!("msgstr \"{}\"\n", msgstr(i));
        s.push_str(&shared);
        s.push_str(&tr);
        s.push('\n');
        common += shared.len() as u64 + 1;
    }
    (s, common)
}

fn small(edit: bool) -> (String, u64) {
    let mut s = String::new();
    let mut common = 0u64;
    for i in 0..24 {
        let l = if edit && i % 3 == 1 {
            format!("    'option_{i}': None,  # changed\n")
        } else {
            format!("    'option_{i}': {},\n", i * 7)
        };
        if i % 3 != 1 {
            common += l.len() as u64;
        }
        s.push_str(&l);
    }
    (s, common)
}

fn analyze(work: &Path, out: &str, extra: &[&str]) -> HashMap<(u32, u32), Vec<String>> {
    let mut c = fsim("fsim-analyze");
    c.args(["-q", "--min-percent", "10"])
        .args(extra)
        .arg("-o")
        .arg(work.join(out))
        .arg(work.join("bins.tsv"));
    run_ok(c, None);
    pair_fields(&work.join(out))
}

/// Writes the repository: two catalogs, two small files edited every
/// third line, an unrelated file and two copies the chunks do find. Returns
/// the bytes of the catalogs' common lines, of the small files' and the
/// catalogs' overlap in percent of the smaller.
fn write_scattered_repo(repo: &Path) -> (u64, u64, f64) {
    for d in ["fr/LC_MESSAGES", "de/LC_MESSAGES", "app"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    let (fr, cat_common) = catalog(|i| format!("Sélectionnez l'élément {i} à modifier"));
    let (de, cat_common2) = catalog(|i| format!("Wählen Sie Element {i} zur Änderung"));
    assert_eq!(cat_common, cat_common2);
    let (a, small_common) = small(false);
    let (b, _) = small(true);
    assert!(a.len() < 1024 && b.len() < 1024);
    let other: String = (0..20)
        .map(|i| format!("unrelated line {i} of text\n"))
        .collect();
    std::fs::write(repo.join("fr/LC_MESSAGES/django.po"), &fr).unwrap();
    std::fs::write(repo.join("de/LC_MESSAGES/django.po"), &de).unwrap();
    std::fs::write(repo.join("app/settings_a.py"), &a).unwrap();
    std::fs::write(repo.join("app/settings_b.py"), &b).unwrap();
    std::fs::write(repo.join("app/other.txt"), &other).unwrap();
    // Something the chunks do find, so that the pipeline has a bin.
    let long: String = (0..80)
        .map(|i| format!("a long shared line {i} of a copied module\n"))
        .collect();
    std::fs::write(repo.join("app/copy1.py"), &long).unwrap();
    std::fs::write(
        repo.join("app/copy2.py"),
        format!("{long}# one more line\n"),
    )
    .unwrap();
    let cat_pct = 100.0 * cat_common as f64 / fr.len().min(de.len()) as f64;
    (cat_common, small_common, cat_pct)
}

/// The chunked and bin-packed repository of `write_scattered_repo`, with
/// the keys of its pairs.
struct Scattered {
    work: std::path::PathBuf,
    files: std::path::PathBuf,
    cats: (u32, u32),
    smalls: (u32, u32),
    copies: (u32, u32),
    other: u32,
}

impl Scattered {
    fn new(repo: &Path, work: &Path) -> Scattered {
        chunk_and_sort(repo, work, &[]);
        let files = work.join("files.tsv");
        partition_and_binpack(work, &[]);
        let table = file_ids(&files);
        let id = |suffix: &str| {
            table
                .iter()
                .find(|(p, _)| p.ends_with(suffix))
                .unwrap_or_else(|| panic!("{suffix} not in the file table"))
                .1
        };
        let key = |x: &str, y: &str| {
            let (i, j) = (id(x), id(y));
            (i.min(j), i.max(j))
        };
        Scattered {
            work: work.to_path_buf(),
            cats: key("fr/LC_MESSAGES/django.po", "de/LC_MESSAGES/django.po"),
            smalls: key("settings_a.py", "settings_b.py"),
            copies: key("copy1.py", "copy2.py"),
            other: id("other.txt"),
            files,
        }
    }

    fn fs(&self) -> &str {
        self.files.to_str().unwrap()
    }
}

#[test]
fn scattered_lines_become_candidates_with_exact_figures() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let (cat_common, small_common, cat_pct) = write_scattered_repo(&repo);
    let s = Scattered::new(&repo, &t.path().join("work"));
    let line_opts = line_source_finds_what_chunks_miss(&s);
    line_pairs_alone_are_the_same_bytes(&s, &line_opts);
    // Catalogs only: the small pair is not compared.
    let cats_only = analyze(
        &s.work,
        "pairs-cats.tsv",
        &[
            "--files",
            s.fs(),
            "--line-catalogs",
            "--line-pairs-below",
            "0",
        ],
    );
    assert!(cats_only.contains_key(&s.cats) && !cats_only.contains_key(&s.smalls));
    verify_gives_the_common_lines(&s, cat_common, small_common);
    cut_at_the_verify_threshold(&s, cat_pct);
}

/// Chunks alone find the copies, not the scattered pairs; with the line
/// source, both, and nothing with the unrelated file. Returns the line
/// source's options.
fn line_source_finds_what_chunks_miss(s: &Scattered) -> Vec<&str> {
    let (work, cats, smalls, copies) = (&s.work, s.cats, s.smalls, s.copies);
    let chunk_only = analyze(work, "pairs-chunks.tsv", &["--no-line-source"]);
    assert!(chunk_only.contains_key(&copies));
    assert!(!chunk_only.contains_key(&cats), "{chunk_only:?}");
    assert!(!chunk_only.contains_key(&smalls), "{chunk_only:?}");

    // (Every pair the lines find: not cut at fsim-verify's threshold.)
    let every = ["--verify-min-percent", "0"];
    let line_opts = [
        &[
            "--files",
            s.fs(),
            "--line-pairs-below",
            "1K",
            "--line-catalogs",
        ][..],
        &every,
    ]
    .concat();
    let with = analyze(work, "pairs.tsv", &line_opts);
    assert_eq!(
        with[&copies], chunk_only[&copies],
        "chunk pairs keep their figures"
    );
    assert_eq!(with[&cats][2], "0", "no chunk evidence: common 0");
    assert!(with.contains_key(&smalls));
    let o = s.other;
    assert!(with.keys().all(|&(x, y)| x != o && y != o), "{with:?}");
    line_opts
}

/// Split as fsim-spark runs it: the line pairs alone, then a bins
/// analysis taking them from that file: the same bytes.
fn line_pairs_alone_are_the_same_bytes(s: &Scattered, line_opts: &[&str]) {
    let (work, cats, smalls, copies) = (&s.work, s.cats, s.smalls, s.copies);
    let mut c = fsim("fsim-analyze");
    c.args(["-q", "--min-percent", "10", "--line-pairs-only"])
        .args(line_opts)
        .arg("-o")
        .arg(work.join("lines.tsv"));
    run_ok(c, None);
    let alone = pair_fields(&work.join("lines.tsv"));
    assert!(
        alone.contains_key(&cats) && alone.contains_key(&smalls),
        "{alone:?}"
    );
    assert!(
        !alone.contains_key(&copies) || alone[&copies][2] == "0",
        "{alone:?}"
    );
    let lines_file = work.join("lines.tsv");
    let from = [
        line_opts,
        &["--line-pairs-from", lines_file.to_str().unwrap()],
    ]
    .concat();
    analyze(work, "pairs-from.tsv", &from);
    assert_eq!(
        std::fs::read(work.join("pairs-from.tsv")).unwrap(),
        crate::common::read_records(&work.join("pairs.tsv")),
        "the line pairs taken from a file give other pairs"
    );
    std::fs::write(&lines_file, "#fsim pairs v1\n0000000001\t0000000002\t5\n").unwrap();
    let mut c = fsim("fsim-analyze");
    c.args(["-q"]).args(&from).arg(work.join("bins.tsv"));
    let err = run_fail(c, None);
    assert!(err.contains("lines.tsv:2: expected a pair line"), "{err}");
}

/// fsim-verify: the exact bytes of the common lines (every pair).
fn verify_gives_the_common_lines(s: &Scattered, cat_common: u64, small_common: u64) {
    let (work, cats, smalls) = (&s.work, s.cats, s.smalls);
    let mut c = fsim("fsim-verify");
    c.args(["-q", "--min-percent", "0", "--files"])
        .arg(&s.files)
        .arg("-o")
        .arg(work.join("verified.tsv"))
        .arg(work.join("pairs.tsv"));
    run_ok(c, None);
    let v = pair_fields(&work.join("verified.tsv"));
    assert_eq!(v[&cats][4], cat_common.to_string(), "{:?}", v[&cats]);
    assert_eq!(v[&cats][5], "exact");
    assert_eq!(v[&smalls][4], small_common.to_string(), "{:?}", v[&smalls]);
    assert_eq!(v[&smalls][5], "exact");
}

/// Cut at fsim-verify's threshold (its default, 50, unless told): the
/// catalogs' overlap, their common lines, decides whether they are a
/// candidate; the copies, found by the chunks, stay whatever it is; and
/// fsim-verify refuses a threshold under the cut, writing nothing.
fn cut_at_the_verify_threshold(s: &Scattered, cat_pct: f64) {
    let (work, cats, copies) = (&s.work, s.cats, s.copies);
    let cut = |p: f64| {
        let p = format!("{p:.1}");
        let opts = [
            "--files",
            s.fs(),
            "--line-pairs-below",
            "1K",
            "--line-catalogs",
        ];
        let got = analyze(
            work,
            "pairs-cut.tsv",
            &[&opts[..], &["--verify-min-percent", &p]].concat(),
        );
        let head = std::fs::read_to_string(work.join("pairs-cut.tsv")).unwrap();
        assert!(
            head.lines()
                .next()
                .unwrap()
                .contains(&format!("\tline-verify-min-percent={p}")),
            "{head}"
        );
        got
    };
    let under = cut(cat_pct - 0.5);
    assert!(under.contains_key(&cats) && under.contains_key(&copies));
    let over = cut(cat_pct + 0.5);
    assert!(
        !over.contains_key(&cats) && over.contains_key(&copies),
        "{over:?}"
    );
    let mut c = fsim("fsim-verify");
    c.args(["-q", "--min-percent", "30", "--files"])
        .arg(&s.files)
        .arg("-o")
        .arg(work.join("verified-cut.tsv"))
        .arg(work.join("pairs-cut.tsv"));
    let err = run_fail(c, None);
    assert!(
        err.contains(&format!(
            "pairs-cut.tsv:1: these pairs were cut for fsim-verify --min-percent {:.1} (fsim-analyze --verify-min-percent), above this run's 30",
            cat_pct + 0.5
        )),
        "{err}"
    );
    assert!(!work.join("verified-cut.tsv").exists());
}

#[test]
fn line_source_needs_the_file_table() {
    let t = tempfile::tempdir().unwrap();
    // On by default, the line source reads files.tsv of the current
    // folder: when there is none, the error says so and names --files.
    std::fs::write(t.path().join("bins.tsv"), "").unwrap();
    for extra in [&[][..], &["--line-catalogs"]] {
        let mut c = fsim("fsim-analyze");
        c.current_dir(t.path())
            .arg("-q")
            .args(extra)
            .arg("-o")
            .arg(t.path().join("p.tsv"))
            .arg(t.path().join("bins.tsv"));
        let err = run_fail(c, None);
        assert!(err.contains("--files"), "{err}");
        assert!(err.contains("files.tsv"), "{err}");
    }
}

/// `--print-settings`: the effective settings, defaults included, read
/// nothing; fsim-spark decides from `line-source=` whether a line-source
/// task runs, so the defaults live in fsim-analyze alone.
#[test]
fn print_settings_says_whether_the_line_source_runs() {
    let settings = |args: &[&str]| -> String {
        let mut c = fsim("fsim-analyze");
        c.arg("--print-settings")
            .args(args)
            .arg("/nonexistent/bins.tsv");
        String::from_utf8(run_ok(c, None).stdout).unwrap()
    };
    assert_eq!(
        settings(&[]),
        "line-source=1\tline-pairs-below=any\tline-catalogs=1\tline-min-percent=30\tverify-min-percent=50\tmin-percent=10\tcapacity=1073741824\n"
    );
    for (args, on) in [
        (&["--no-line-source"][..], "0"),
        (&["--line-pairs-below", "0", "--no-line-catalogs"], "0"),
        (&["--line-pairs-below", "0"], "1"),
        (&["--no-line-catalogs"], "1"),
        (&["--line-pairs-below", "4K", "--no-line-catalogs"], "1"),
    ] {
        let s = settings(args);
        assert!(
            s.starts_with(&format!("line-source={on}\t")),
            "{args:?}: {s}"
        );
    }
    let s = settings(&[
        "--line-min-percent",
        "45",
        "--verify-min-percent",
        "60",
        "--min-percent",
        "5",
        "--capacity",
        "64K",
    ]);
    assert!(
        s.ends_with("line-min-percent=45\tverify-min-percent=60\tmin-percent=5\tcapacity=65536\n"),
        "{s}"
    );
}
