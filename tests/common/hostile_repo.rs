//! A generated repository with a file named like an HTML injection, shared
//! by the HTML tests (tests/report/report_formats.rs, tests/heavy/html_browser.rs).
#![allow(dead_code)]

use crate::common::*;
use std::path::{Path, PathBuf};

/// The hostile name of the browser test and of the escaping checks.
pub const HOSTILE: &str = "<img src=x onerror=alert(1)>.txt";

/// Text lines shared by the hostile file and its near-duplicate.
fn lines() -> Vec<String> {
    let words = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma",
    ];
    let mut x = 12345u64;
    (0..300)
        .map(|_| {
            (0..12)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    words[(x >> 33) as usize % words.len()]
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The sample repository plus a file named [`HOSTILE`] holding hostile
/// text, and its near-duplicate; the pipeline's outputs in `dir/work`.
pub fn setup(dir: &Path) -> PathBuf {
    let (repo, _) = gen_repo(dir, &[]);
    let l = lines();
    let a = format!(
        "{}\n</script><script>alert('text')</script>\n",
        l.join("\n")
    );
    let mut b = l.clone();
    b.splice(150..160, std::iter::repeat_n("CHANGED LINE".to_string(), 5));
    std::fs::write(repo.join(HOSTILE), a).unwrap();
    std::fs::write(repo.join("near-copy.txt"), b.join("\n") + "\n").unwrap();
    let work = dir.join("work");
    pipeline(&repo, &work, &[]);
    work
}
