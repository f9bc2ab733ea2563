//! One file is one file: however the folders are given (twice, a folder
//! and its sub-folder, `./` and trailing slashes, a followed link into the
//! tree), each file is walked once, so no file is "a copy of itself" and
//! the plan of actions has nothing to remove; an fsim work folder inside
//! the scanned folder is never input; files and folders that cannot be
//! read are listed in the report.

use crate::common;
use common::*;
use std::fs;
use std::path::Path;

/// A folder of unique files, one of them in a sub-folder.
fn unique_tree(dir: &Path) -> std::path::PathBuf {
    let d = dir.join("d");
    fs::create_dir_all(d.join("sub/deeper")).unwrap();
    fs::write(d.join("only0.txt"), settings_text(false)).unwrap();
    let lines: String = (0..300)
        .map(|i| format!("line {i} of the only one\n"))
        .collect();
    fs::write(d.join("sub/only1.txt"), &lines).unwrap();
    fs::write(
        d.join("sub/deeper/only2.txt"),
        lines.replace("only", "sole"),
    )
    .unwrap();
    d
}

/// fsim-chunk of `roots` (in `dir`, paths relative to it), then the rest of
/// the pipeline and the plan; returns the file table's paths, the json
/// report and the plan.
fn run_roots(
    dir: &Path,
    roots: &[&str],
    extra: &[&str],
) -> (Vec<String>, serde_json::Value, String) {
    let work = dir.join("work");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    let mut c = fsim("fsim-chunk");
    c.current_dir(dir)
        .args([
            "-q",
            "--files-out",
            "work/files.tsv",
            "-o",
            "work/chunks.tsv",
        ])
        .args(extra)
        .args(roots);
    run_ok(c, None);
    let mut c = fsim("fsim-sort");
    c.current_dir(dir)
        .args(["-q", "-o", "work/sorted.tsv", "work/chunks.tsv"]);
    run_ok(c, None);
    let report = rest_of_pipeline(&work, &[]);
    let mut c = fsim("fsim-report");
    c.current_dir(dir).args([
        "-q",
        "--format",
        "sh",
        "--files",
        "work/files.tsv",
        "-o",
        "work/report.sh",
        "work/verified.tsv",
    ]);
    run_ok(c, None);
    let paths = read(&work, "files.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit('\t').next().unwrap().to_string())
        .collect();
    (paths, report, read(&work, "report.sh"))
}

#[test]
fn a_folder_given_twice_or_nested_is_walked_once() {
    let t = tempfile::tempdir().unwrap();
    unique_tree(t.path());
    let forms: [&[&str]; 5] = [
        &["d", "d/"],
        &["d", "d/sub"],
        &["d/sub", "d"],
        &["./d", "d/./sub/..", "d/sub/only1.txt"],
        &["d/sub/deeper/only2.txt", "d"],
    ];
    for roots in forms {
        let (paths, report, plan) = run_roots(t.path(), roots, &[]);
        assert_eq!(paths.len(), 3, "{roots:?}: {paths:?}");
        let s = &report["summary"];
        assert_eq!(s["identical_sets"], 0, "{roots:?}: {s}");
        assert!(!plan.contains("\ndup "), "{roots:?}: {plan}");
        assert!(!plan.contains("\ntree "), "{roots:?}: {plan}");
        let trailer = read(&t.path().join("work"), "files.tsv");
        assert!(trailer.contains("\trepeated="), "{roots:?}: {trailer}");
    }
}

#[test]
fn a_followed_link_into_the_tree_is_not_a_second_copy() {
    let t = tempfile::tempdir().unwrap();
    let d = unique_tree(t.path());
    std::os::unix::fs::symlink("sub", d.join("link-to-sub")).unwrap();
    std::os::unix::fs::symlink("only0.txt", d.join("link-to-file")).unwrap();
    let (paths, report, plan) = run_roots(t.path(), &["d"], &["-L"]);
    assert_eq!(
        paths,
        ["d/only0.txt", "d/sub/deeper/only2.txt", "d/sub/only1.txt"]
    );
    assert_eq!(report["summary"]["identical_sets"], 0);
    assert!(
        !plan.contains("\ndup ") && !plan.contains("\ntree "),
        "{plan}"
    );
}

#[test]
fn a_work_folder_inside_the_tree_is_never_input() {
    let t = tempfile::tempdir().unwrap();
    let d = unique_tree(t.path());
    // A finished run's folder inside the tree: its files are not walked.
    fs::create_dir_all(d.join("fsim-work")).unwrap();
    fs::write(
        d.join("fsim-work/CACHEDIR.TAG"),
        format!(
            "{}\n# This file is a cache directory tag created by fsim\n",
            fsim::io::walk::CACHEDIR_SIGNATURE
        ),
    )
    .unwrap();
    fs::copy(d.join("only0.txt"), d.join("fsim-work/only0.txt")).unwrap();
    // Another program's cache is walked: it may hold the only copy.
    fs::create_dir_all(d.join("cache")).unwrap();
    fs::write(
        d.join("cache/CACHEDIR.TAG"),
        format!("{}\n", fsim::io::walk::CACHEDIR_SIGNATURE),
    )
    .unwrap();
    fs::write(d.join("cache/kept.txt"), "cached\n").unwrap();
    let (paths, report, _) = run_roots(t.path(), &["d"], &[]);
    assert!(paths.iter().all(|p| !p.contains("fsim-work")), "{paths:?}");
    assert!(paths.contains(&"d/cache/kept.txt".to_string()), "{paths:?}");
    assert_eq!(report["summary"]["identical_sets"], 0);
    let table = read(&t.path().join("work"), "files.tsv");
    assert!(table.contains("\twork-folders=1"), "{table}");
}

#[test]
fn exclusions_and_size_limits_apply_before_reading() {
    let t = tempfile::tempdir().unwrap();
    let d = unique_tree(t.path());
    fs::write(d.join("tiny.txt"), "x").unwrap();
    let (paths, _, _) = run_roots(
        t.path(),
        &["d"],
        &["--exclude", "*/deeper", "--min-size", "2"],
    );
    assert_eq!(paths, ["d/only0.txt", "d/sub/only1.txt"]);
    let table = read(&t.path().join("work"), "files.tsv");
    assert!(table.contains("\texcluded=2"), "{table}");
    let err = run_fail(
        {
            let mut c = fsim("fsim-chunk");
            c.current_dir(t.path())
                .args(["-q", "--min-size", "lots", "-o", "/dev/null", "d"]);
            c
        },
        None,
    );
    assert!(err.contains("--min-size"), "{err}");
}

#[test]
fn what_could_not_be_read_is_in_every_report() {
    let t = tempfile::tempdir().unwrap();
    let d = unique_tree(t.path());
    // A link to nothing, followed: the walk cannot examine it (as root,
    // permissions deny nothing, so this is the error a test can make).
    std::os::unix::fs::symlink("/nonexistent/fsim-test", d.join("dangling")).unwrap();
    let (paths, report, _) = run_roots(t.path(), &["d"], &["-L"]);
    assert!(paths.contains(&"d/dangling".to_string()), "{paths:?}");
    let u = &report["unreadable_files"];
    assert_eq!(u["count"], 1, "{report}");
    assert_eq!(u["listed"][0]["path"], "d/dangling");
    assert!(
        u["listed"][0]["note"]
            .as_str()
            .unwrap()
            .contains("not read"),
        "{u}"
    );
    let work = t.path().join("work");
    for format in ["text", "tsv"] {
        let out = work.join(format!("report.{format}"));
        let mut c = fsim("fsim-report");
        c.args(["-q", "--format", format, "--files"])
            .arg(work.join("files.tsv"))
            .arg("-o")
            .arg(&out)
            .arg(work.join("verified.tsv"));
        run_ok(c, None);
        let text = fs::read_to_string(&out).unwrap();
        assert!(text.contains("d/dangling"), "{format}: {text}");
    }
}
