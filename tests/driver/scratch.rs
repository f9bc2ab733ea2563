//! Scratch space: with `COMPRESS=1` (the default), the work folder never
//! holds more bytes than the repository it analyses. The record streams
//! (chunk records, sorted records, partition, bins, pairs, verified pairs)
//! are kept zstd-compressed, still lines after `zstd -dc`, and every stage
//! reads them as it reads text (and gzip, an earlier run's); the reports
//! are the bytes of a run that keeps them as text.

use crate::common;

use common::*;
use std::path::{Path, PathBuf};

/// zstd's magic number, the first bytes of a compressed record file.
const ZSTD: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The record streams `make report` writes through the stages.
const RECORDS: [&str; 6] = [
    "chunks.tsv",
    "sorted.tsv",
    "partition.tsv",
    "bins.tsv",
    "pairs.tsv",
    "verified.tsv",
];

/// Apparent bytes of the regular files under `dir`.
fn tree_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = std::fs::symlink_metadata(e.path()).unwrap();
        if m.is_dir() {
            total += tree_bytes(&e.path());
        } else if m.is_file() {
            total += m.len();
        }
    }
    total
}

/// `zstd -dc FILE`: what a shell pipe reading the file gets.
fn unzstd(path: &Path) -> Vec<u8> {
    let mut c = std::process::Command::new("zstd");
    c.arg("-dcq").arg(path);
    run_ok(c, None).stdout
}

/// A tree of many small files, as the one where records are largest
/// against the data: 600 documents of ~2 KB, versions and copies among them.
fn small_files(dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("repo");
    let mut c = fsim("fsim-gen");
    c.args(["--bulk", "600", "--bulk-size", "2000"]).arg(&repo);
    run_ok(c, None);
    repo
}

/// Everything a KEEP=1 run wrote is still in its work folder, so its size
/// bounds the work folder of a compressed run at every moment (nothing
/// spills at this scale: no sort run, no spool is left or needed). Without
/// the compression the same folder is ~1.4x this tree.
#[test]
fn the_work_folder_stays_under_the_tree_and_the_records_read_with_zstd() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = small_files(tmp.path());
    let tree = tree_bytes(&repo);
    let kept = tmp.path().join("kept");
    run_ok(
        make_report_cmd(&repo, &kept, &["KEEP=1", "COMPRESS=1"]),
        None,
    );
    let all = tree_bytes(&kept);
    assert!(
        all <= tree,
        "KEEP=1 work folder {all} bytes, more than the tree's {tree}"
    );
    let text = tmp.path().join("text");
    run_ok(
        make_report_cmd(&repo, &text, &["KEEP=1", "COMPRESS=0"]),
        None,
    );
    assert!(
        tree_bytes(&text) > tree + tree / 4,
        "the text records are not the test's case: {} bytes for {tree}",
        tree_bytes(&text)
    );
    for f in RECORDS {
        let plain = std::fs::read(text.join(f)).unwrap();
        assert!(plain.starts_with(b"#"), "{f} with COMPRESS=0 is text");
        let packed = std::fs::read(kept.join(f)).unwrap();
        assert!(packed.starts_with(&ZSTD), "{f} is not zstd");
        assert!(
            packed.len() * 2 < plain.len(),
            "{f}: {} of {}",
            packed.len(),
            plain.len()
        );
        assert_eq!(
            unzstd(&kept.join(f)),
            plain,
            "{f}: zstd -dc differs from the text run's"
        );
    }
    for f in ["files.tsv", "report.txt", "report.json"] {
        assert_eq!(
            std::fs::read(kept.join(f)).unwrap(),
            std::fs::read(text.join(f)).unwrap(),
            "{f} differs from the text run's"
        );
    }
    // The defaults compress (COMPRESS=1): the run removes what it consumed,
    // keeps its chunk records and bins as zstd, and what stays is under
    // the tree.
    let work = tmp.path().join("work");
    run_ok(make_report_cmd(&repo, &work, &[]), None);
    for f in ["chunks.tsv", "bins.tsv"] {
        let head = std::fs::read(work.join(f)).unwrap();
        assert!(head.starts_with(&ZSTD), "{f} of a default run is not zstd");
    }
    assert!(tree_bytes(&work) <= tree);
    assert_eq!(
        std::fs::read(work.join("report.txt")).unwrap(),
        std::fs::read(text.join("report.txt")).unwrap()
    );
}

/// A re-run with PREVIOUS= reads the earlier run's compressed records (its
/// unchanged files' chunk records, its verified pairs), and the GNU sort
/// reads compressed chunk records through `zstd -dcf`: the reports are a
/// text run's bytes.
#[test]
fn previous_runs_and_gnu_sort_read_the_compressed_records() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = small_files(tmp.path());
    let first = tmp.path().join("first");
    run_ok(make_report_cmd(&repo, &first, &["COMPRESS=1"]), None);
    assert!(std::fs::read(first.join("chunks.tsv"))
        .unwrap()
        .starts_with(&ZSTD));
    // One file edited: its records are new, the others' reused.
    let edited = files_under(&repo).swap_remove(0);
    let mut body = std::fs::read(&edited).unwrap();
    body.extend_from_slice(b"one more line\n");
    std::fs::write(&edited, body).unwrap();
    let prev = format!("PREVIOUS={}", first.display());
    let rerun = tmp.path().join("rerun");
    let o = run_ok(make_report_cmd(&repo, &rerun, &[&prev, "SORT=gnu"]), None);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("1 read"), "not one file read: {said}");
    let text = tmp.path().join("text");
    run_ok(make_report_cmd(&repo, &text, &["COMPRESS=0"]), None);
    for f in ["verified.tsv", "report.txt", "report.json"] {
        assert_eq!(
            read_records(&rerun.join(f)),
            read_records(&text.join(f)),
            "{f} differs from a text run's"
        );
    }
}

/// The compressed records are the same bytes whatever the threads
/// (fsim-chunk `-j 1` and `-j 3`: zstd's worker sees the same records),
/// and a gzip stream (an earlier run's records) reads as its lines:
/// fsim-sort writes from it what it writes from the text.
#[test]
fn compressed_records_are_the_same_bytes_and_gzip_still_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = small_files(tmp.path());
    let chunks = |j: &str, compress: bool| {
        let out = tmp.path().join(format!("chunks-{j}-{compress}.tsv"));
        let mut c = fsim("fsim-chunk");
        c.args(["-q", "-j", j, "--files-out"])
            .arg(tmp.path().join(format!("files-{j}.tsv")))
            .arg("-o")
            .arg(&out)
            .arg(&repo);
        if compress {
            c.arg("--compress");
        }
        run_ok(c, None);
        out
    };
    let (one, three) = (chunks("1", true), chunks("3", true));
    let packed = std::fs::read(&one).unwrap();
    assert!(packed.starts_with(&ZSTD), "--compress wrote no zstd frame");
    assert_eq!(
        packed,
        std::fs::read(&three).unwrap(),
        "-j 1 and -j 3 differ"
    );
    let text = chunks("2", false);
    assert_eq!(unzstd(&one), std::fs::read(&text).unwrap());
    let gz = tmp.path().join("chunks.gz.tsv");
    let mut c = std::process::Command::new("gzip");
    c.arg("-c").arg(&text);
    std::fs::write(&gz, run_ok(c, None).stdout).unwrap();
    let sorted = |input: &Path| {
        let mut c = fsim("fsim-sort");
        c.args(["-q", "-o", "-"]).arg(input);
        run_ok(c, None).stdout
    };
    assert_eq!(
        sorted(&gz),
        sorted(&text),
        "the gzip records sort differently"
    );
    assert_eq!(
        sorted(&one),
        sorted(&text),
        "the zstd records sort differently"
    );
}

/// `cp -a`-like copy of the flat work folder `from` (files and the
/// folders one level down) into `to`: an earlier run's folder to drop from.
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_folder(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A small tree run once (`first`), then one file edited and run from
/// scratch (`fresh`): the earlier folder and the figures a re-run must
/// give. Returns the tree, both work folders and the edited file.
fn first_and_fresh(tmp: &Path) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let repo = small_files(tmp);
    let first = tmp.join("first");
    run_ok(make_report_cmd(&repo, &first, &[]), None);
    let edited = files_under(&repo).swap_remove(3);
    let mut body = std::fs::read(&edited).unwrap();
    body.extend_from_slice(b"one more line\n");
    std::fs::write(&edited, body).unwrap();
    let fresh = tmp.join("fresh");
    run_ok(make_report_cmd(&repo, &fresh, &[]), None);
    (repo, first, fresh, edited)
}

/// The re-run's outputs that must be a fresh run's bytes (the file table
/// first: after files were only touched, its times differ).
const FRESH_OUTPUTS: [&str; 4] = ["files.tsv", "verified.tsv", "report.txt", "report.json"];

/// `files` of the re-run `w` are the fresh run's bytes.
fn assert_same_as(w: &Path, fresh: &Path, files: &[&str]) {
    for f in files {
        assert_eq!(
            read_records(&w.join(f)),
            read_records(&fresh.join(f)),
            "{f} of {w:?}"
        );
    }
}

/// `DROP_PREVIOUS=1` (what fsim's own re-run passes for its
/// WORK/previous): the earlier bins go before the chunking, and once the
/// re-run's chunk records are written the earlier ones go, so the two
/// runs' records are never on disk together; the rest of the earlier
/// folder (its file table, verified pairs) is still read, and the reports
/// are a fresh run's bytes. Records that are the earlier file itself
/// (files only touched) are kept; a redo after the drop reads every file
/// again.
#[test]
fn a_rerun_drops_the_earlier_records_once_its_own_are_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, first, fresh, edited) = first_and_fresh(tmp.path());

    // fsim's own: its records and bins dropped, the rest read.
    let own = tmp.path().join("own");
    copy_folder(&first, &own);
    let prev = format!("PREVIOUS={}", own.display());
    let r1 = tmp.path().join("r1");
    let o = run_ok(
        make_report_cmd(&repo, &r1, &[&prev, "DROP_PREVIOUS=1"]),
        None,
    );
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("1 read"), "not one file read: {said}");
    assert!(!own.join("chunks.tsv").exists() && !own.join("bins.tsv").exists());
    for f in ["files.tsv", "verified.tsv", "report.json"] {
        assert!(own.join(f).is_file(), "{f} was removed");
    }
    assert_same_as(&r1, &fresh, &FRESH_OUTPUTS);

    // A redo of that run (its outputs lost, the earlier records gone):
    // every file read, the same bytes.
    let r2 = tmp.path().join("r2");
    let o = run_ok(
        make_report_cmd(&repo, &r2, &[&prev, "DROP_PREVIOUS=1"]),
        None,
    );
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(", 0 reused"),
        "the earlier records were read: {said}"
    );
    assert_same_as(&r2, &fresh, &FRESH_OUTPUTS);

    // Files only touched: the re-run's records are the earlier file (one
    // inode), which stays; the bins are packed again.
    let touched = tmp.path().join("touched");
    copy_folder(&fresh, &touched);
    let t = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&edited)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let prev = format!("PREVIOUS={}", touched.display());
    let r3 = tmp.path().join("r3");
    run_ok(
        make_report_cmd(&repo, &r3, &[&prev, "DROP_PREVIOUS=1"]),
        None,
    );
    assert!(touched.join("chunks.tsv").is_file() && !touched.join("bins.tsv").exists());
    assert!(r3.join("chunks.tsv").is_file() && r3.join("bins.tsv").is_file());
    assert_same_as(&r3, &fresh, &FRESH_OUTPUTS[1..]);
}

/// The earlier folder loses nothing unless it is fsim's: without
/// `DROP_PREVIOUS` (a folder the user keeps), and with it when the folder
/// has no fsim cache directory tag (a folder of the user's, holding files
/// named as fsim's, given by mistake). Its records are still read.
#[test]
fn a_rerun_removes_nothing_from_a_folder_fsim_did_not_make() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, first, fresh, _) = first_and_fresh(tmp.path());
    let names = [
        "chunks.tsv",
        "bins.tsv",
        "plan.tsv",
        "files.tsv",
        "verified.tsv",
    ];
    let untagged = tmp.path().join("mine");
    copy_folder(&first, &untagged);
    std::fs::remove_file(untagged.join("CACHEDIR.TAG")).unwrap();
    let other_tag = tmp.path().join("other");
    copy_folder(&first, &other_tag);
    std::fs::write(
        other_tag.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n# another tool's cache\n",
    )
    .unwrap();
    let kept = tmp.path().join("kept");
    copy_folder(&first, &kept);
    let cases = [
        (&untagged, "DROP_PREVIOUS=1"),
        (&other_tag, "DROP_PREVIOUS=1"),
        (&kept, "DROP_PREVIOUS="),
    ];
    for (i, (folder, drop)) in cases.into_iter().enumerate() {
        let before: Vec<_> = names
            .iter()
            .map(|n| std::fs::read(folder.join(n)).unwrap())
            .collect();
        let prev = format!("PREVIOUS={}", folder.display());
        let w = tmp.path().join(format!("r{i}"));
        let o = run_ok(make_report_cmd(&repo, &w, &[&prev, drop]), None);
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(said.contains("1 read"), "{folder:?} not read: {said}");
        for (n, b) in names.iter().zip(&before) {
            let now = std::fs::read(folder.join(n));
            assert_eq!(now.ok().as_ref(), Some(b), "{n} of {folder:?} changed");
        }
        assert_same_as(&w, &fresh, &FRESH_OUTPUTS);
    }
}

/// Of 200-byte files the file table is half the tree: `LINE_SETS=auto`
/// counts it twice with the chunk records, as a re-run holds both runs'
/// tables, and keeps no line sets, where the records alone would have let
/// them in and the work folder would end over the tree (1.13x at 10^6
/// such files). It ends within it; `LINE_SETS=1` still keeps them.
#[test]
fn the_file_table_counts_in_the_line_sets_room() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let mut c = fsim("fsim-gen");
    c.args(["--bulk", "3000", "--bulk-size", "200"]).arg(&repo);
    run_ok(c, None);
    let tree = tree_bytes(&repo);
    let size = |p: PathBuf| std::fs::metadata(p).unwrap().len();

    let kept = tmp.path().join("kept");
    run_ok(make_report_cmd(&repo, &kept, &["LINE_SETS=1"]), None);
    let (records, table, lines) = (
        size(kept.join("chunks.tsv")),
        size(kept.join("files.tsv")),
        size(kept.join("lines.tsv")),
    );
    assert!(
        2 * records + lines <= tree / 5 * 4,
        "not the test's case (the records alone leave room): {records} {lines} {tree}"
    );
    assert!(
        2 * (records + table) + lines > tree / 5 * 4,
        "not the test's case (the table leaves room): {records} {table} {lines} {tree}"
    );
    assert!(
        tree_bytes(&kept) > tree,
        "not the test's case: {} kept for a tree of {tree}",
        tree_bytes(&kept)
    );

    let work = tmp.path().join("auto");
    let o = run_ok(make_report_cmd(&repo, &work, &[]), None);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(!work.join("lines.tsv").exists(), "{said}");
    assert!(said.contains("fsim-analyze: line sets not kept"), "{said}");
    assert!(
        tree_bytes(&work) <= tree,
        "{} in the work folder for a tree of {tree}",
        tree_bytes(&work)
    );
    for f in ["report.txt", "report.json"] {
        assert_eq!(
            std::fs::read(work.join(f)).unwrap(),
            std::fs::read(kept.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// `LINE_SETS=auto` (the default) keeps the line sets where a re-run
/// holding them beside both runs' chunk records stays within the tree:
/// twice the records with the line sets within 4/5 of it. On the same
/// texts gzip-compressed (a third of the bytes, the same records: the
/// views are the texts) they would not fit, and none are written; the
/// re-run reads every file, with the same reports. `LINE_SETS=1` keeps
/// them whatever their size.
#[test]
fn line_sets_are_kept_only_where_a_rerun_stays_within_the_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(tmp.path(), &[]);
    let size = |p: PathBuf| std::fs::metadata(p).unwrap().len();
    let plain = tmp.path().join("plain");
    run_ok(make_report_cmd(&repo, &plain, &[]), None);
    let tree = tree_bytes(&repo);
    let (records, lines) = (
        size(plain.join("chunks.tsv")),
        size(plain.join("lines.tsv")),
    );
    assert!(
        2 * records + lines <= tree / 5 * 4,
        "{records} {lines} {tree}"
    );

    let gz = tmp.path().join("gz");
    let mut c = std::process::Command::new("cp");
    c.arg("-a").arg(&repo).arg(&gz);
    run_ok(c, None);
    let mut c = std::process::Command::new("gzip");
    c.arg("-rn").arg(&gz);
    run_ok(c, None);
    let work = tmp.path().join("work");
    let o = run_ok(make_report_cmd(&gz, &work, &[]), None);
    let said = String::from_utf8_lossy(&o.stderr);
    let tree = tree_bytes(&gz);
    assert!(
        2 * size(work.join("chunks.tsv")) > tree / 5 * 4,
        "not the test's case: {} of records for a tree of {tree}",
        size(work.join("chunks.tsv"))
    );
    assert!(!work.join("lines.tsv").exists(), "{said}");
    assert!(
        said.contains("fsim-analyze: line sets not kept: they took more than their room"),
        "{said}"
    );
    // The re-run after an edit: every file read by the line source, the
    // reports a fresh run's.
    let edited = files_under(&gz).into_iter().min().unwrap();
    let mut c = std::process::Command::new("sh");
    c.arg("-c").arg(format!(
        "gzip -dc '{0}' > '{0}.txt' && echo one more line >> '{0}.txt' && gzip -nc '{0}.txt' > '{0}' && rm '{0}.txt'",
        edited.display()
    ));
    run_ok(c, None);
    let prev = format!("PREVIOUS={}", work.display());
    let rerun = tmp.path().join("rerun");
    let o = run_ok(make_report_cmd(&gz, &rerun, &[&prev]), None);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(!said.contains("taken from the earlier line sets"), "{said}");
    let fresh = tmp.path().join("fresh");
    run_ok(make_report_cmd(&gz, &fresh, &["LINE_SETS=1"]), None);
    assert!(fresh.join("lines.tsv").is_file());
    for f in ["report.txt", "report.json"] {
        assert_eq!(
            std::fs::read(rerun.join(f)).unwrap(),
            std::fs::read(fresh.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// fsim's own re-run (`DROP_PREVIOUS=1`) on a tree whose chunk records
/// take megabytes: fsim-chunk frees the earlier records as it reads them
/// (`--consume-previous`), from the first file that differs (the edited
/// one is first), so both runs' records are never whole on disk together;
/// the reports are a fresh run's bytes.
#[test]
fn a_rerun_frees_the_earlier_records_while_it_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut letters = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 61 == 60 {
                    b'\n'
                } else {
                    b'a' + (x % 26) as u8
                }
            })
            .collect()
    };
    for i in 0..200 {
        std::fs::write(repo.join(format!("f{i:03}.txt")), letters(100_000)).unwrap();
    }
    let first = tmp.path().join("first");
    run_ok(make_report_cmd(&repo, &first, &[]), None);
    let records = std::fs::metadata(first.join("chunks.tsv")).unwrap().len();
    assert!(records > 2 << 20, "{records} bytes of records");
    std::fs::write(repo.join("f000.txt"), letters(100_000)).unwrap();
    let prev = format!("PREVIOUS={}", first.display());
    let rerun = tmp.path().join("rerun");
    let o = run_ok(
        make_report_cmd(&repo, &rerun, &[&prev, "DROP_PREVIOUS=1"]),
        None,
    );
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("1 read, 199 reused")
            && said.contains("the earlier records freed as they were read"),
        "{said}"
    );
    assert!(!first.join("chunks.tsv").exists());
    let fresh = tmp.path().join("fresh");
    run_ok(make_report_cmd(&repo, &fresh, &[]), None);
    assert_same_as(&rerun, &fresh, &FRESH_OUTPUTS);
}
