//! fsim-index and fsim-query on a generated repository: planted relations
//! found with their bytes in common, identical copies flagged, segments added
//! and merged without changing answers, and indexes of other parameters or
//! damaged files refused.

use crate::common;

use common::*;
use std::path::Path;

fn build_index(dir: &Path, repo: &Path, files: &str, extra: &[&str]) {
    let chunks = dir.join(format!("{files}.chunks"));
    let sorted = dir.join(format!("{files}.sorted"));
    let mut c = fsim("fsim-chunk");
    c.arg("-q")
        .arg("--files-out")
        .arg(dir.join(files))
        .arg("-o")
        .arg(&chunks)
        .args(extra)
        .arg(repo);
    run_ok(c, None);
    let mut c = fsim("fsim-sort");
    c.arg("-q").arg("-o").arg(&sorted).arg(&chunks);
    run_ok(c, None);
    let mut c = fsim("fsim-index");
    c.arg("-q")
        .arg("--index")
        .arg(dir.join("idx"))
        .arg("--files")
        .arg(dir.join(files))
        .arg(&sorted);
    run_ok(c, None);
}

fn query(dir: &Path, files: &[&Path]) -> String {
    let mut c = fsim("fsim-query");
    c.arg("--index").arg(dir.join("idx")).args(files);
    String::from_utf8(run_ok(c, None).stdout).unwrap()
}

#[test]
fn query_finds_planted_relations_and_copies() {
    let t = tempfile::tempdir().unwrap();
    let (repo, planted) = gen_repo(t.path(), &[]);
    build_index(t.path(), &repo, "files.tsv", &[]);
    let near = planted.iter().find(|r| r[0] == "near").unwrap();
    let (a, b) = (repo.join(&near[1]), repo.join(&near[2]));
    let out = query(t.path(), &[&a]);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    // First the file itself (identical), then its planted near-duplicate.
    assert_eq!(lines[0][1], a.to_str().unwrap());
    assert_eq!(lines[0][5], "yes");
    assert_eq!(
        lines[0][2].parse::<u64>().unwrap(),
        fsim::content::view(&std::fs::read(&a).unwrap(), &Default::default())
            .bytes
            .len() as u64
    );
    assert_eq!(lines[1][1], b.to_str().unwrap());
    assert_eq!(lines[1][5], "no");
    let pct: f64 = lines[1][3].parse().unwrap();
    assert!((50.0..100.0).contains(&pct), "{out}");
    assert_eq!(lines.len(), 2, "nothing unrelated: {out}");
    // Identical copies are all flagged.
    let ident = planted
        .iter()
        .find(|r| r[0] == "identical" && r.len() == 4)
        .unwrap();
    let out = query(t.path(), &[&repo.join(&ident[1])]);
    let yes = out.lines().filter(|l| l.ends_with("\tyes")).count();
    assert_eq!(yes, 3, "{out}");
}

#[test]
fn segments_add_and_merge_without_changing_answers() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    build_index(t.path(), &repo, "files.tsv", &[]);
    let extra = t.path().join("extra");
    std::fs::create_dir(&extra).unwrap();
    let mut text = std::fs::read(repo.join("notes/doc-0001.txt")).unwrap();
    text.extend_from_slice(b"one more line\n");
    std::fs::write(extra.join("new.txt"), &text).unwrap();
    build_index(t.path(), &extra, "files2.tsv", &[]);
    let segs: Vec<_> = std::fs::read_dir(t.path().join("idx")).unwrap().collect();
    assert_eq!(segs.len(), 2);
    let q = repo.join("notes/doc-0001.txt");
    let before = query(t.path(), &[&q]);
    assert!(
        before.contains(&format!("{}\t", extra.join("new.txt").display())),
        "{before}"
    );
    let mut c = fsim("fsim-index");
    c.arg("-q")
        .arg("--merge")
        .arg("--index")
        .arg(t.path().join("idx"));
    run_ok(c, None);
    assert_eq!(std::fs::read_dir(t.path().join("idx")).unwrap().count(), 1);
    assert_eq!(query(t.path(), &[&q]), before);
}

#[test]
fn other_parameters_and_damage_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    build_index(t.path(), &repo, "files.tsv", &[]);
    // A segment of another chunk size cannot join the index.
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "--avg-size", "1000", "--files-out"])
        .arg(t.path().join("f100.tsv"))
        .arg("-o")
        .arg(t.path().join("c100"))
        .arg(&repo);
    run_ok(c, None);
    let mut c = fsim("fsim-index");
    c.arg("--index")
        .arg(t.path().join("idx"))
        .arg("--files")
        .arg(t.path().join("f100.tsv"))
        .arg(t.path().join("c100"));
    let err = run_fail(c, None);
    assert!(
        err.contains(
            "the index was built with other chunking parameters: avg=1000 here but avg=100 before"
        ),
        "{err}"
    );
    // An index whose parameters this fsim would not produce is refused.
    let seg = std::fs::read_dir(t.path().join("idx"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&seg).unwrap();
    let pos = bytes.windows(7).position(|w| w == b"min=45\t").unwrap();
    bytes[pos + 5] = b'6';
    std::fs::write(&seg, &bytes).unwrap();
    let mut c = fsim("fsim-query");
    c.arg("--index")
        .arg(t.path().join("idx"))
        .arg(repo.join("notes/doc-0001.txt"));
    let err = run_fail(c, None);
    assert!(
        err.contains("cannot query this index") && err.contains("min=45 here but min=46 before"),
        "{err}"
    );
    // A damaged segment.
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&seg, &bytes).unwrap();
    let mut c = fsim("fsim-query");
    c.arg("--index")
        .arg(t.path().join("idx"))
        .arg(repo.join("notes/doc-0001.txt"));
    let err = run_fail(c, None);
    assert!(
        err.contains("size does not match its counts: not an fsim index segment, or a damaged one"),
        "{err}"
    );
}
