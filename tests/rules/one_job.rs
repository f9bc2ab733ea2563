//! Every source file says its one job: the first line of each `.rs` file
//! of src/, tools/src/ and tests/ (test data aside) is a `//!` doc comment, so a reader
//! who opens any file, or lists their first lines (`head -1`), learns
//! what it holds and where the next thing lives. A file with no header
//! fails here with its path. A file that grows past [`MAX_FILE_LINES`]
//! has taken on more than one job, and is split along them.

use crate::common;
use common::rust_files;

/// The tree's root and the `.rs` files of src/, tools/src/ and tests/.
fn sources() -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let root = common::source_root();
    let mut files = Vec::new();
    for dir in ["src", "tools/src", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
    (root, files)
}

#[test]
fn every_source_file_opens_with_its_job() {
    let (root, files) = sources();
    let missing: Vec<String> = files
        .iter()
        // Test inputs (tests/data) are data, not source.
        .filter(|f| !f.starts_with(root.join("tests/data")))
        .filter(|f| !f.components().any(|c| c.as_os_str() == "node_modules"))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.starts_with("//!")
        })
        .map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files whose first line is not a `//!` header saying their job: {missing:?}"
    );
}

/// Lines a source file may hold: past it a file does several jobs (the
/// stage, its writer, its re-run sets) that a reader would rather open
/// one at a time.
const MAX_FILE_LINES: usize = 1_200;

#[test]
fn no_source_file_does_several_jobs() {
    let (root, files) = sources();
    let long: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(root.join("tests/data")))
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            (lines > MAX_FILE_LINES).then(|| {
                format!(
                    "{} ({lines} lines)",
                    f.strip_prefix(&root).unwrap().display()
                )
            })
        })
        .collect();
    assert!(
        long.is_empty(),
        "source files over {MAX_FILE_LINES} lines (split them along their jobs): {long:?}"
    );
}

/// History stays in the CHANGELOG and the commits: no source file, test,
/// script or user doc says which issue or period of work something came
/// from ("issue 27", "session 3"); they say what and why.
#[test]
fn history_stays_out_of_the_code_and_the_docs() {
    let root = common::source_root();
    let mut files = Vec::new();
    for dir in ["src", "tools/src", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    for doc in ["README.md", "CONTRIBUTING.md", "Makefile"] {
        files.push(root.join(doc));
    }
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let this = root.join("tests/rules/one_job.rs");
    let mut found = Vec::new();
    for f in files
        .iter()
        .filter(|f| !f.starts_with(root.join("tests/data")) && **f != this)
    {
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let lower = line.to_ascii_lowercase();
            for word in ["issue ", "session "] {
                let hit = lower.match_indices(word).any(|(at, _)| {
                    lower[at + word.len()..].starts_with(|c: char| c.is_ascii_digit())
                });
                if hit {
                    found.push(format!(
                        "{}:{}",
                        f.strip_prefix(&root).unwrap().display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(found.is_empty(), "history in the tree: {found:?}");
}
