//! The ground truth of `make quality` (scripts/quality/truth.py,
//! docs/quality.md): known answers for its byte LCS of binary pairs
//! (scripts/quality/bytelcs.c, compiled with `cc`) and its line LCS of text
//! pairs, in scripts/quality/test_truth.py. Needs python3, a C compiler and
//! GNU diff; skipped with a SKIP line when python3 or cc is missing, except
//! under CI (env var CI set), where that is a failure.

use crate::common;

use common::*;
use std::process::Command;

#[test]
fn quality_truth_known_answers() {
    for tool in ["python3", "cc"] {
        let found = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            if std::env::var_os("CI").is_some() {
                panic!("{tool} is needed by scripts/quality/test_truth.py");
            }
            eprintln!("SKIP quality_truth_known_answers: {tool} is not installed");
            return;
        }
    }
    let out = Command::new("python3")
        .arg(source_root().join("scripts/quality/test_truth.py"))
        .current_dir(source_root())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "scripts/quality/test_truth.py failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
