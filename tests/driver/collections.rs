//! Collections (paper section 4): two collections chunked apart ("at other
//! sites") are analysed together from their file tables and chunk files
//! alone; ids never collide; the report summarises collection by
//! collection and can keep only the links across collections. Then the
//! same through `make report REPO="x=... y=..."`.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn text(seed: u64, lines: usize) -> String {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut s = String::new();
    for _ in 0..lines {
        for w in 0..8 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for k in 0..(2 + (x % 7) as usize) {
                s.push((b'a' + ((x >> (8 + 5 * k)) % 26) as u8) as char);
            }
            s.push(if w == 7 { '\n' } else { ' ' });
        }
    }
    s
}

fn edited(s: &str) -> String {
    let mid = s.len() / 2;
    let nl = mid + s[mid..].find('\n').unwrap() + 1;
    let mut t = s.to_string();
    t.insert_str(nl, "one new line\n");
    t
}

/// Site x: 6 unique files, shared.txt (= y's copy.txt), doc.txt (~ y's
/// doc2.txt), inner1/inner2 (near-duplicates inside x). Site y: 4 unique
/// files, copy.txt, doc2.txt.
fn make_sites(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (x, y) = (dir.join("site-x"), dir.join("site-y"));
    std::fs::create_dir_all(&x).unwrap();
    std::fs::create_dir_all(&y).unwrap();
    for i in 0..6 {
        std::fs::write(x.join(format!("u{i}.txt")), text(10 + i, 60)).unwrap();
    }
    for i in 0..4 {
        std::fs::write(y.join(format!("v{i}.txt")), text(20 + i, 60)).unwrap();
    }
    let shared = text(1, 80);
    std::fs::write(x.join("shared.txt"), &shared).unwrap();
    std::fs::write(y.join("copy.txt"), &shared).unwrap();
    let doc = text(2, 120);
    std::fs::write(x.join("doc.txt"), &doc).unwrap();
    std::fs::write(y.join("doc2.txt"), edited(&doc)).unwrap();
    let inner = text(3, 120);
    std::fs::write(x.join("inner1.txt"), &inner).unwrap();
    std::fs::write(x.join("inner2.txt"), edited(&inner)).unwrap();
    (x, y)
}

fn chunk_site(site: &Path, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "--files-out"])
        .arg(out.join("files.tsv"))
        .arg("-o")
        .arg(out.join("chunks.tsv"))
        .arg(site);
    run_ok(c, None);
}

/// sort .. analyze .. report from the merged metadata (no verify: the
/// files need not be reachable).
fn analyse(work: &Path, report_args: &[&str]) -> Value {
    let w = |n: &str| work.join(n);
    let mut c = fsim("fsim-sort");
    c.args(["-q", "-o"])
        .arg(w("sorted.tsv"))
        .arg(w("chunks.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-partition");
    c.args(["-q", "--files"])
        .arg(w("files.tsv"))
        .arg("-o")
        .arg(w("partition.tsv"))
        .arg(w("sorted.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-binpack");
    c.args(["-q", "-o"])
        .arg(w("bins.tsv"))
        .arg(w("partition.tsv"));
    run_ok(c, None);
    // Chunk pairs, unverified (the line source is for fsim-verify).
    let mut c = fsim("fsim-analyze");
    c.args(["-q", "--no-line-source", "-o"])
        .arg(w("pairs.tsv"))
        .arg(w("bins.tsv"));
    run_ok(c, None);
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "json", "--files"])
        .arg(w("files.tsv"))
        .args(report_args)
        .arg(w("pairs.tsv"));
    serde_json::from_slice(&run_ok(c, None).stdout).unwrap()
}

fn overlap_row<'a>(v: &'a Value, from: &str, to: &str) -> &'a Value {
    v["collection_overlap"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["from"] == from && r["to"] == to)
        .unwrap_or_else(|| panic!("no row {from}->{to}: {v:#}"))
}

/// The report's collections, by name, in its order.
fn collection_names(v: &Value) -> Vec<&str> {
    v["collections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

fn check_overlap(v: &Value, x: &Path, y: &Path) {
    assert_eq!(collection_names(v), ["x", "y"]);
    assert_eq!(v["collections"][0]["files"], 10);
    assert_eq!(v["collections"][1]["files"], 6);
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    let xy = overlap_row(v, "x", "y");
    assert_eq!(xy["identical_files"], 1, "{xy}");
    assert_eq!(xy["identical_bytes"], size(&x.join("shared.txt")));
    assert_eq!(xy["similar_files"], 1, "{xy}");
    assert_eq!(xy["similar_bytes"], size(&x.join("doc.txt")));
    assert_eq!(xy["files"], 2);
    let yx = overlap_row(v, "y", "x");
    assert_eq!(yx["identical_files"], 1);
    assert_eq!(yx["similar_files"], 1);
    assert_eq!(
        yx["bytes"],
        size(&y.join("copy.txt")) + size(&y.join("doc2.txt"))
    );
}

#[test]
fn collections_chunked_apart_are_analysed_together() {
    let t = tempfile::tempdir().unwrap();
    let (x, y) = make_sites(t.path());
    // Each site chunks its own collection; only metadata travels.
    let (mx, my) = (t.path().join("meta-x"), t.path().join("meta-y"));
    chunk_site(&x, &mx);
    chunk_site(&y, &my);
    let work = t.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut c = fsim("fsim-merge");
    c.arg("--files-out")
        .arg(work.join("files.tsv"))
        .arg("-o")
        .arg(work.join("chunks.tsv"))
        .arg(format!("x={}", mx.display()))
        .arg(format!(
            "y={},{}",
            my.join("files.tsv").display(),
            my.join("chunks.tsv").display()
        ));
    let out = run_ok(c, None);
    let msg = String::from_utf8(out.stderr).unwrap();
    assert!(
        msg.starts_with("fsim-merge: 2 collections, 16 files,"),
        "{msg}"
    );
    // Ids are dense and unique; each collection names its range.
    let table = std::fs::read_to_string(work.join("files.tsv")).unwrap();
    assert!(table.contains("#collection\tx\t0\t10\t"), "{table}");
    assert!(table.contains("#collection\ty\t10\t6\t"), "{table}");
    let ids: Vec<&str> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| &l[..10])
        .collect();
    let want: Vec<String> = (0..16).map(|i| format!("{i:010}")).collect();
    assert_eq!(ids, want);

    let v = analyse(&work, &[]);
    check_overlap(&v, &x, &y);
    // Both links: doc.txt~doc2.txt across, inner1~inner2 inside x.
    let n_links: usize = v["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["links"].as_array().unwrap().len())
        .sum();
    assert_eq!(n_links, 2, "{v:#}");
    let f = &v["clusters"][0]["files"][0];
    assert!(f["collection"].is_string(), "{f}");

    let cross = analyse(&work, &["--cross-collections-only"]);
    let clusters = cross["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{cross:#}");
    let l = &clusters[0]["links"][0];
    assert!(l["a"].as_str().unwrap().ends_with("doc.txt"), "{l}");
    assert!(l["b"].as_str().unwrap().ends_with("doc2.txt"), "{l}");

    // The text report has section C.
    let mut c = fsim("fsim-report");
    c.args(["-q", "--files"])
        .arg(work.join("files.tsv"))
        .arg(work.join("pairs.tsv"));
    let text = String::from_utf8(run_ok(c, None).stdout).unwrap();
    assert!(text.contains("C. Collections: 2"), "{text}");
    assert!(text.contains("[x] "), "{text}");

    // Mixing parameters is refused.
    let mz = t.path().join("meta-z");
    std::fs::create_dir_all(&mz).unwrap();
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "--avg-size", "500", "--files-out"])
        .arg(mz.join("files.tsv"))
        .arg("-o")
        .arg(mz.join("chunks.tsv"))
        .arg(&y);
    run_ok(c, None);
    let mut c = fsim("fsim-merge");
    c.arg("--files-out")
        .arg(t.path().join("f2.tsv"))
        .arg("-o")
        .arg(t.path().join("c2.tsv"))
        .arg(format!("x={}", mx.display()))
        .arg(format!("z={}", mz.display()));
    let err = run_fail(c, None);
    assert!(err.contains("other parameters"), "{err}");
}

#[test]
fn make_report_takes_named_roots() {
    let t = tempfile::tempdir().unwrap();
    let (x, y) = make_sites(t.path());
    let work = t.path().join("work");
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .arg("--no-print-directory")
        .arg("report")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO=x={} y={}", x.display(), y.display()))
        .arg(format!("WORK={}", work.display()))
        .arg("VERIFY=0");
    run_ok(c, None);
    let v: Value =
        serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap();
    check_overlap(&v, &x, &y);
    assert!(work.join("collections/x/chunks.tsv").exists());
    // Collections chunked elsewhere join through COLLECTIONS=NAME=DIR.
    let w2 = t.path().join("work2");
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .arg("--no-print-directory")
        .arg("report")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!(
            "COLLECTIONS=x={} y={}",
            work.join("collections/x").display(),
            work.join("collections/y").display()
        ))
        .arg(format!("WORK={}", w2.display()))
        .arg("VERIFY=0");
    run_ok(c, None);
    let v2: Value =
        serde_json::from_slice(&std::fs::read(w2.join("report.json")).unwrap()).unwrap();
    assert_eq!(v2["collection_overlap"], v["collection_overlap"]);
}

/// `make report` of named roots into `work`, with `vars`; its stderr
/// when `ok` is false.
fn make_named(repo: &str, work: &Path, vars: &[&str], ok: bool) -> String {
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .arg("--no-print-directory")
        .arg("report")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={repo}"))
        .arg(format!("WORK={}", work.display()))
        .args(vars);
    if ok {
        run_ok(c, None);
        String::new()
    } else {
        run_fail(c, None)
    }
}

/// Three productions in `dir`/p1, p2, p3: prod1 holds 5 unique files,
/// doc and memo; prod2 a copy of memo, a version of doc, a new file and its
/// copy; prod3 a third copy of that file and a version of prod2's version.
fn make_case(dir: &Path) {
    let p = |n: &str| dir.join(n);
    for d in ["p1", "p2", "p3"] {
        std::fs::create_dir_all(p(d)).unwrap();
    }
    for i in 0..5 {
        std::fs::write(p("p1").join(format!("u{i}.txt")), text(30 + i, 60)).unwrap();
    }
    let (doc, memo) = (text(4, 120), text(5, 90));
    std::fs::write(p("p1/doc.txt"), &doc).unwrap();
    std::fs::write(p("p1/memo.txt"), &memo).unwrap();
    std::fs::write(p("p2/memo-copy.txt"), &memo).unwrap();
    std::fs::write(p("p2/doc-v2.txt"), edited(&doc)).unwrap();
    let fresh = text(6, 70);
    std::fs::write(p("p2/fresh.txt"), &fresh).unwrap();
    std::fs::write(p("p2/fresh-again.txt"), &fresh).unwrap();
    std::fs::write(p("p3/fresh-3.txt"), &fresh).unwrap();
    std::fs::write(p("p3/doc-v3.txt"), edited(&edited(&doc))).unwrap();
}

/// E-discovery: productions added to a case one at a time
/// (`AGAINST=` the earlier run), each new folder chunked alone, the
/// earlier collections taken from the earlier run's records with their
/// names, only the pairs with a new file analysed; the report is the
/// bytes of a run from scratch on every folder.
#[test]
fn a_new_collection_against_a_case_reads_only_the_new_files() {
    let t = tempfile::tempdir().unwrap();
    let p = |n: &str| t.path().join(n);
    make_case(t.path());
    let all = format!(
        "prod3={} prod2={} prod1={}",
        p("p3").display(),
        p("p2").display(),
        p("p1").display()
    );
    let formats = "FORMATS=txt json";
    make_named(&all, &p("scratch"), &[formats], true);
    make_named(
        &format!("prod1={}", p("p1").display()),
        &p("run1"),
        &[formats],
        true,
    );
    // A file of prod1 that pairs with nothing, gone after run1: never
    // walked nor read again, it is still in the case from run1's records.
    std::fs::remove_file(p("p1/u0.txt")).unwrap();
    let against = |w: &str| format!("AGAINST={}", p(w).display());
    make_named(
        &format!("prod2={}", p("p2").display()),
        &p("run2"),
        &[formats, &against("run1"), "KEEP=1"],
        true,
    );
    make_named(
        &format!("prod3={}", p("p3").display()),
        &p("run3"),
        &[formats, &against("run2"), "KEEP=1"],
        true,
    );
    for f in ["report.txt", "report.json"] {
        assert_eq!(
            String::from_utf8(std::fs::read(p("run3").join(f)).unwrap()).unwrap(),
            String::from_utf8(std::fs::read(p("scratch").join(f)).unwrap()).unwrap(),
            "{f}"
        );
    }
    // Only the new folder was chunked; the sort, the partition and the
    // packing took the records of its chunks alone (the earlier ids moved
    // past the new ones); the analysis wrote only the pairs with a new file.
    for run in ["run2", "run3"] {
        let bins = read(&p(run), "bins.tsv");
        let header = bins.lines().next().unwrap();
        assert!(header.contains("\tchanged-only="), "{run}: {header}");
    }
    assert!(p("run3/collections/prod3").exists());
    assert!(!p("run3/collections/prod2").exists() && !p("run3/collections/prod1").exists());
    let pairs = read(&p("run3"), "pairs.tsv");
    assert!(
        pairs.lines().next().unwrap().contains("\tdelta=1\t"),
        "{pairs}"
    );
    let v: Value = serde_json::from_slice(&std::fs::read(p("run3/report.json")).unwrap()).unwrap();
    assert_eq!(collection_names(&v), ["prod3", "prod2", "prod1"]);
    let row = overlap_row(&v, "prod3", "prod2");
    assert_eq!(row["identical_files"], 1, "{row}");
    assert_eq!(row["similar_files"], 1, "{row}");

    // A name the case already holds is refused before anything is written.
    let err = make_named(
        &format!("prod1={}", p("p3").display()),
        &p("run4"),
        &[&against("run3")],
        false,
    );
    assert!(err.contains("collection prod1 is given twice"), "{err}");
    assert!(!p("run4/chunks.tsv").exists() && !p("run4/files.tsv").exists());
    // A run of unnamed roots must be named.
    make_named(&p("p2").display().to_string(), &p("plain"), &[], true);
    let err = make_named(
        &format!("prod3={}", p("p3").display()),
        &p("run5"),
        &[&against("plain")],
        false,
    );
    assert!(err.contains("names no collections"), "{err}");
    make_named(
        &format!("prod3={}", p("p3").display()),
        &p("run5"),
        &[&format!("AGAINST=prod2={}", p("plain").display())],
        true,
    );
}

/// Productions whose paths the case holds already: one folder added to
/// it twice, then its sub-folder. The earlier files are found by path, and
/// a path met twice names two of them: every record is sorted (no changed
/// set, the bins of every chunk), and each report is a run from scratch's
/// bytes.
#[test]
fn a_production_the_case_holds_already_is_a_run_from_scratch() {
    let t = tempfile::tempdir().unwrap();
    let p = |n: &str| t.path().join(n);
    // Six versions of a 60-clause contract, each with 3 clauses amended
    // from the one before, a copy, a hard link, a note; below, a copy of
    // a version and a symlink.
    std::fs::create_dir_all(p("p1/sub")).unwrap();
    let mut clauses: Vec<String> = (0..60)
        .map(|i| {
            format!(
                "Clause {i}: the party shall act within {} days.\n",
                5 + i * 7 % 83
            )
        })
        .collect();
    for v in 0..6 {
        std::fs::write(p(&format!("p1/contract-v{v}.txt")), clauses.concat()).unwrap();
        for k in 0..3 {
            let j = (v * 17 + k * 23 + 5) % 60;
            clauses[j] = format!("Clause {j} amended in v{}: notice in writing.\n", v + 1);
        }
    }
    std::fs::copy(p("p1/contract-v0.txt"), p("p1/copy-of-v0.txt")).unwrap();
    std::fs::hard_link(p("p1/contract-v1.txt"), p("p1/hardlink-v1.txt")).unwrap();
    std::fs::write(p("p1/note.txt"), "a note on nothing in particular\n").unwrap();
    std::fs::copy(p("p1/contract-v2.txt"), p("p1/sub/c2.txt")).unwrap();
    std::fs::write(p("note2.txt"), "note two\n").unwrap();
    std::os::unix::fs::symlink("../../note2.txt", p("p1/sub/link.txt")).unwrap();
    let formats = "FORMATS=txt json";
    let against = |w: &str| format!("AGAINST={}", p(w).display());
    let named = |names: &[(&str, &str)]| -> String {
        let each = names.iter().map(|(n, d)| format!("{n}={}", p(d).display()));
        each.collect::<Vec<_>>().join(" ")
    };
    make_named(&named(&[("a", "p1")]), &p("r1"), &[formats], true);
    let steps = [("r2", "r1", ("b", "p1")), ("r3", "r2", ("c", "p1/sub"))];
    let mut held = vec![("a", "p1")];
    for (run, earlier, new) in steps {
        let vars = [formats, &against(earlier), "KEEP=1"];
        make_named(&named(&[new]), &p(run), &vars, true);
        held.insert(0, new);
        let scratch = format!("scratch-{run}");
        make_named(&named(&held), &p(&scratch), &[formats], true);
        for f in ["report.txt", "report.json"] {
            let (a, b) = (p(run).join(f), p(&scratch).join(f));
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "{run}: {f} differs from a run from scratch"
            );
        }
        let bins = read(&p(run), "bins.tsv");
        assert!(
            !bins.lines().next().unwrap().contains("changed-only="),
            "{run}"
        );
    }
}

/// One folder named twice (`a=X c=X/`), or a folder and its sub-folder
/// (`a=X s=X/sub`), is one set of files met in two collections: no file
/// is a copy of itself, nor a member of an archive in it (each is the same
/// member again, with the hard links: no identical set of 0 bytes), the
/// one real copy is the only overhead, each collection holds the other's
/// files, and the plan removes the copy once and nothing else.
#[test]
fn a_folder_named_twice_is_no_copy_of_itself() {
    let t = tempfile::tempdir().unwrap();
    let x = t.path().join("x");
    std::fs::create_dir_all(x.join("sub")).unwrap();
    for i in 0..3 {
        std::fs::write(x.join(format!("u{i}.txt")), text(40 + i, 50)).unwrap();
        std::fs::write(x.join(format!("sub/s{i}.txt")), text(50 + i, 50)).unwrap();
    }
    let dup = text(7, 60);
    std::fs::write(x.join("sub/kept.txt"), &dup).unwrap();
    std::fs::write(x.join("sub/zz-copy.txt"), &dup).unwrap();
    let (m1, m2) = (text(60, 40), text(61, 40));
    let zip = common::archive_repo::zip_of(&[("m1.txt", m1.as_bytes()), ("m2.txt", m2.as_bytes())]);
    std::fs::write(x.join("sub/pack.zip"), zip).unwrap();
    let xs = x.display().to_string();
    // Names met in both collections: the files, the zip and its two members.
    for (case, repo, names) in [
        ("twice", format!("a={xs} c={xs}/"), 11u64),
        ("sub", format!("a={xs} s={xs}/sub"), 8),
    ] {
        let work = t.path().join(case);
        make_named(&repo, &work, &["FORMATS=txt json sh"], true);
        let v: Value =
            serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap();
        let s = &v["summary"];
        assert_eq!(s["identical_sets"], 1, "{case}: {s}");
        assert_eq!(s["overhead_bytes"], dup.len(), "{case}: {s}");
        assert_eq!(s["hard_link_files"], names - 2, "{case}: {s}");
        let row = overlap_row(&v, collection_names(&v)[1], "a");
        assert_eq!(row["identical_files"], names, "{case}: {row}");
        let text = std::fs::read_to_string(work.join("report.txt")).unwrap();
        assert!(
            text.contains("(the same file again, in another collection)"),
            "{case}: {text}"
        );
        // The plan: one copy removed, every content still on disk.
        let plan = std::fs::read_to_string(work.join("report.sh")).unwrap();
        assert_eq!(
            plan.lines().filter(|l| l.starts_with("dup ")).count(),
            1,
            "{case}: {plan}"
        );
    }
    let mut c = Command::new("sh");
    c.arg(t.path().join("twice/report.sh")).arg("--remove");
    run_ok(c, None);
    assert!(x.join("sub/kept.txt").exists() && !x.join("sub/zz-copy.txt").exists());
    for i in 0..3 {
        assert!(x.join(format!("u{i}.txt")).exists() && x.join(format!("sub/s{i}.txt")).exists());
    }
}
