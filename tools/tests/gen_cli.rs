//! fsim-gen, as the tests and benchmarks use it: the same seed gives the
//! same bytes, and the manifest names only files it wrote. (Its being here
//! also makes `cargo test` build the tools' programs, which the tests of
//! the fsim package run.)

use std::path::Path;
use std::process::Command;

fn gen(dir: &Path, seed: &str) -> String {
    let manifest = dir.with_extension("tsv");
    let out = Command::new(env!("CARGO_BIN_EXE_fsim-gen"))
        .args(["--seed", seed, "--manifest"])
        .arg(&manifest)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(manifest).unwrap()
}

/// Every file under `dir` with its bytes, in path order.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn same_seed_same_bytes_and_the_manifest_names_real_files() {
    let t = tempfile::tempdir().unwrap();
    let (a, b, c) = (t.path().join("a"), t.path().join("b"), t.path().join("c"));
    let manifest = gen(&a, "7");
    assert_eq!(manifest, gen(&b, "7"));
    assert_eq!(tree(&a), tree(&b));
    gen(&c, "8");
    assert_ne!(tree(&a), tree(&c));
    assert!(manifest.lines().count() > 5, "{manifest}");
    let written = tree(&a);
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        for rel in line.split('\t').skip(1) {
            assert!(
                written.iter().any(|(p, _)| p == rel),
                "{rel} of {line:?} was not written"
            );
        }
    }
}
