//! Every source file says its one job: the first line of each `.rs` file
//! of src/, tools/src/ and tests/ (test data aside) is a `//!` doc comment, so a reader
//! who opens any file, or lists their first lines (`head -1`), learns
//! what it holds and where the next thing lives. A file with no header
//! fails here with its path.

use crate::common;
use common::rust_files;

#[test]
fn every_source_file_opens_with_its_job() {
    let root = common::source_root();
    let mut files = Vec::new();
    for dir in ["src", "tools/src", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
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
