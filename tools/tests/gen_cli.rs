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

/// Every file under `dir`, relative to it, with its bytes.
fn folder(root: &Path, rel: &str) -> Vec<(String, Vec<u8>)> {
    tree(&root.join(rel))
}

/// `fsim-gen --folders`: each relation of the manifest holds in the bytes
/// written. Identical, renamed and nested copies are the same files by
/// relative path; a version keeps most names, edits some, adds and
/// removes one; the copies of one folder are all that folder.
#[test]
fn folder_relations_of_the_manifest_hold() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    let manifest = t.path().join("folders.tsv");
    let out = Command::new(env!("CARGO_BIN_EXE_fsim-gen"))
        .args(["--folders", "10", "--folder-copies", "12", "--manifest"])
        .arg(&manifest)
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut kinds = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let (kind, a) = (fields[0], folder(&root, fields[1]));
        kinds.push(kind);
        match kind {
            "folder-identical" | "folder-renamed" | "folder-nested" => {
                assert_eq!(a, folder(&root, fields[2]), "{line}");
            }
            "folder-version" => {
                let b = folder(&root, fields[2]);
                let same = a.iter().filter(|f| b.contains(f)).count();
                let renamed_or_gone = a.iter().filter(|(p, _)| !b.iter().any(|(q, _)| q == p));
                assert_eq!(renamed_or_gone.count(), 1, "{line}: one file removed");
                assert!(b.iter().any(|(p, _)| p == "docs/added.txt"), "{line}");
                assert!(
                    same >= 1 && same <= a.len() - 2,
                    "{line}: {same} of {} kept",
                    a.len()
                );
            }
            "folder-copies" => {
                assert_eq!(fields.len(), 1 + 1 + 12, "{line}");
                for copy in &fields[2..] {
                    assert_eq!(a, folder(&root, copy), "{copy}");
                }
            }
            other => panic!("unknown relation {other}"),
        }
    }
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "folder-copies",
            "folder-identical",
            "folder-nested",
            "folder-renamed",
            "folder-version"
        ]
    );
    // Every project holds the same LICENSE: one identical set across them.
    let license = std::fs::read(root.join("projects/p0000/LICENSE")).unwrap();
    for n in 0..10 {
        let p = root.join(format!("projects/p{n:04}/LICENSE"));
        assert_eq!(std::fs::read(p).unwrap(), license);
    }
}
