//! Re-runs on generated changes: whatever happens to a tree between two
//! runs (files edited in place or at their end, emptied, removed, added
//! beside a sibling or in a folder that sorts between two others, renamed,
//! copied, hard-linked, swapped, replaced by a symlink, only touched, whole
//! folders gone), a re-run that takes the earlier run's records
//! (`PREVIOUS=`, with `DROP_PREVIOUS=1` as the installed fsim re-runs)
//! writes the bytes of a run from scratch on the same tree: the reports,
//! the verified pairs and the file table. Each round's re-run takes the
//! previous round's re-run, so an error carried from run to run shows too.
//!
//! The changes are drawn from a fixed seed, several to a round; the test
//! says the seed, the round and the changes when the bytes differ. Not
//! drawn: an edit that keeps a file's size and its timestamp to the
//! nanosecond, which no run without reading every file can see
//! (docs/reliability.md).

use crate::common;

use common::*;
use std::path::{Path, PathBuf};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// `data` with `line` inserted at the line break nearest its middle.
fn with_line_inserted(data: &[u8], line: &str) -> Vec<u8> {
    let mid = data.len() / 2;
    let at = data[mid..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(data.len(), |i| mid + i + 1);
    [&data[..at], line.as_bytes(), &data[at..]].concat()
}

/// A new name for a file beside `p`'s folder: one that sorts between
/// `dir` and `dir/...` in walk order (`dir-b`), before everything (`0`),
/// or with a space or a tab in it.
fn new_path(repo: &Path, p: &Path, n: usize, rng: &mut Rng) -> PathBuf {
    let parent = p.parent().unwrap();
    let dir = match rng.below(4) {
        0 if parent != repo => parent.with_file_name(format!(
            "{}-b",
            parent.file_name().unwrap().to_string_lossy()
        )),
        1 => repo.join("0"),
        2 => parent.join("sub folder"),
        _ => parent.to_path_buf(),
    };
    std::fs::create_dir_all(&dir).unwrap();
    let stem = p.file_stem().unwrap().to_string_lossy();
    let ext = p
        .extension()
        .map_or(String::new(), |e| format!(".{}", e.to_string_lossy()));
    dir.join(format!("{stem}\tv{n}{ext}"))
}

/// A zip of `p` and `q` beside `p`.
fn zip_beside(
    repo: &Path,
    p: &Path,
    q: &Path,
    n: usize,
    rng: &mut Rng,
) -> std::io::Result<&'static str> {
    let (a, b) = (std::fs::read(p).unwrap(), std::fs::read(q).unwrap());
    let zip = archive_repo::zip_of(&[("p.txt", &a), ("q.txt", &b)]);
    std::fs::write(new_path(repo, p, n, rng).with_extension("zip"), zip)
        .map(|_| "zipped with another")
}

/// The members of zip `z`, zipped again in the other order: other bytes,
/// the same members; `None` when `z` is a zip no more (an earlier change
/// edited its bytes).
fn zipped_again(z: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(z).unwrap();
    let mut a = zip::ZipArchive::new(std::io::Cursor::new(bytes)).ok()?;
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..a.len() {
        let mut m = a.by_index(i).ok()?;
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut m, &mut b).ok()?;
        members.push((m.name().to_string(), b));
    }
    members.reverse();
    let refs: Vec<(&str, &[u8])> = members.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
    Some(archive_repo::zip_of(&refs))
}

/// One change to the tree, drawn; returns what it did.
fn change(repo: &Path, n: usize, rng: &mut Rng) -> String {
    let files = files_under(repo);
    if files.len() < 2 {
        std::fs::write(
            repo.join(format!("new {n}.txt")),
            format!("a file of change {n}\n"),
        )
        .unwrap();
        return format!("new {n}.txt added");
    }
    let p = files[rng.below(files.len())].clone();
    let q = files[rng.below(files.len())].clone();
    let data = std::fs::read(&p).unwrap();
    let line = format!("a line added by change {n}\n");
    let what = match rng.below(14) {
        0 => std::fs::write(&p, with_line_inserted(&data, &line)).map(|_| "edited"),
        1 => std::fs::write(&p, [&data[..], line.as_bytes()].concat()).map(|_| "appended to"),
        2 => std::fs::write(&p, b"").map(|_| "emptied"),
        3 => std::fs::remove_file(&p).map(|_| "removed"),
        4 => std::fs::write(new_path(repo, &p, n, rng), with_line_inserted(&data, &line))
            .map(|_| "given a new version beside it"),
        5 => std::fs::rename(&p, new_path(repo, &p, n, rng)).map(|_| "renamed"),
        6 => std::fs::write(new_path(repo, &p, n, rng), &data).map(|_| "copied"),
        7 => std::fs::hard_link(&p, new_path(repo, &p, n, rng)).map(|_| "hard-linked"),
        8 => {
            let other = std::fs::read(&q).unwrap();
            std::fs::write(&p, &other)
                .and_then(|()| std::fs::write(&q, &data))
                .map(|_| "swapped with another")
        }
        9 => std::fs::remove_file(&p)
            .and_then(|()| std::os::unix::fs::symlink(&q, &p))
            .map(|_| "replaced by a symlink"),
        10 => std::fs::File::options()
            .write(true)
            .open(&p)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()))
            .map(|_| "touched"),
        11 => match files
            .iter()
            .find(|f| f.extension().is_some_and(|e| e == "zip"))
        {
            Some(z) if n.is_multiple_of(2) => {
                touch(z, n as u64);
                Ok("(a zip touched)")
            }
            Some(z) => match zipped_again(z) {
                Some(bytes) => std::fs::write(z, bytes).map(|_| "(a zip zipped again)"),
                None => zip_beside(repo, &p, &q, n, rng),
            },
            None => zip_beside(repo, &p, &q, n, rng),
        },
        12 => zip_beside(repo, &p, &q, n, rng),
        _ if p.parent() == Some(repo) => std::fs::remove_file(&p).map(|_| "removed"),
        _ => std::fs::remove_dir_all(p.parent().unwrap()).map(|_| "removed with its folder"),
    }
    .unwrap();
    format!("{} {what}", p.strip_prefix(repo).unwrap().display())
}

/// `make report` of `repo` into `work`, small memory (the sort and the
/// bins spill), the defaults otherwise; `vars` added.
fn report(repo: &Path, work: &Path, vars: &[&str]) {
    make_report(
        repo,
        work,
        &[&["CAPACITY=64K", "MEMORY=64K", "QUIET=-q"], vars].concat(),
    );
}

/// The outputs that must be a run from scratch's bytes.
const SAME: &[&str] = &["files.tsv", "verified.tsv", "report.txt", "report.json"];

/// Four rounds of five changes from `seed`, each round re-run from the
/// last and compared with a run from scratch; `vars` for every run.
fn rounds(seed: u64, vars: &[&str]) {
    rounds_on(seed, vars, &[]);
}

/// [`rounds`] on the tree `fsim-gen GEN` writes (its sample when empty).
fn rounds_on(seed: u64, vars: &[&str], gen: &[&str]) {
    let t = tempfile::tempdir().unwrap();
    let repo = match gen {
        [] => gen_repo(t.path(), &[]).0,
        _ => {
            let repo = t.path().join("repo");
            let mut c = fsim("fsim-gen");
            c.args(gen).arg(&repo);
            run_ok(c, None);
            repo
        }
    };
    let mut rng = Rng(seed);
    let mut previous = t.path().join("run-0");
    report(&repo, &previous, vars);
    for round in 1..=4 {
        let changes: Vec<String> = (0..5)
            .map(|i| change(&repo, round * 10 + i, &mut rng))
            .collect();
        let rerun = t.path().join(format!("run-{round}"));
        let prev = format!("PREVIOUS={}", previous.display());
        report(&repo, &rerun, &[vars, &[&prev, "DROP_PREVIOUS=1"]].concat());
        let scratch = t.path().join(format!("scratch-{round}"));
        report(&repo, &scratch, vars);
        for name in SAME {
            let (a, b) = (rerun.join(name), scratch.join(name));
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "seed {seed:#x} {vars:?}, round {round}: {name} of the re-run differs from a run \
                 from scratch after these changes:\n{}",
                changes.join("\n")
            );
        }
        let why = format!(
            "seed {seed:#x} {vars:?}, round {round}: {}",
            changes.join("\n")
        );
        assert_records_same(&rerun, &scratch, &why);
        std::fs::remove_dir_all(&scratch).unwrap();
        previous = rerun;
    }
}

/// The records a re-run keeps for the next are a run from scratch's
/// bytes too: its chunk records (the earlier run's frames copied where
/// their files came unchanged) and its line sets, when kept.
fn assert_records_same(rerun: &Path, scratch: &Path, why: &str) {
    for name in ["chunks.tsv", "lines.tsv"] {
        let (a, b) = (rerun.join(name), scratch.join(name));
        assert_eq!(
            a.exists(),
            b.exists(),
            "{name}: kept by one run only: {why}"
        );
        assert!(a.exists() || name == "lines.tsv", "{name}: not kept: {why}");
        if a.exists() {
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "{name} of the re-run differs from a run from scratch: {why}"
            );
        }
    }
}

#[test]
fn a_rerun_after_any_changes_is_a_run_from_scratch() {
    rounds(0x5eed_f00d, &[]);
}

/// A tree whose chunk records are many frames (1,000 documents of 2 KB
/// in 50 folders: one file edited, a re-run copies 12 frames as they
/// are): the frames a round's changes leave whole, before the first that
/// moves the ids after it, are copied from the last run.
#[test]
fn a_rerun_that_copies_frames_after_any_changes_is_a_run_from_scratch() {
    let gen = ["--bulk", "1000", "--bulk-size", "2000", "--bulk-dirs", "50"];
    rounds_on(0xf4a3_e5c0, &[], &gen);
}

/// The line sets always kept (`LINE_SETS=1`): each re-run takes the
/// unchanged contents' lines from the last.
#[test]
fn a_rerun_that_takes_the_earlier_line_sets_is_a_run_from_scratch() {
    rounds(0xdeca_fbad, &["LINE_SETS=1"]);
}

/// Chunked in shards, each shard's re-run from the earlier records.
#[test]
fn a_sharded_rerun_is_a_run_from_scratch() {
    rounds(0xfeed_beef, &["SHARDS=3", "-j2"]);
}

/// Other seeds, for a soak run when the re-run changes: `FSIM_SOAK=N`
/// rounds of each kind above (the sample tree, the tree of many frames,
/// the line sets kept, in shards) from seeds 1..=N, e.g. `FSIM_SOAK=20 cargo test
/// --test tests soak -- --ignored` (about 10 s a seed on 2 cores).
/// Ignored in `make test`: each seed runs the same code on other changes.
#[test]
#[ignore]
fn soak_reruns_of_other_seeds() {
    let n: u64 = std::env::var("FSIM_SOAK")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let frames = ["--bulk", "1000", "--bulk-size", "2000", "--bulk-dirs", "50"];
    for seed in 1..=n {
        rounds(seed, &[]);
        rounds_on(seed ^ 0xf4a3_e5c0, &[], &frames);
        rounds(seed ^ 0xdeca_fbad, &["LINE_SETS=1"]);
        rounds(seed ^ 0xfeed_beef, &["SHARDS=3", "-j2"]);
    }
}

/// One edit in place (the paths, and so the ids, stay): a line inserted,
/// a line appended, the file emptied, two files swapped, or one touched.
fn edit_in_place(repo: &Path, n: usize, rng: &mut Rng) -> String {
    let files = files_under(repo);
    let p = files[rng.below(files.len())].clone();
    let q = files[rng.below(files.len())].clone();
    let data = std::fs::read(&p).unwrap();
    let line = format!("a line added by edit {n}\n");
    let what = match rng.below(5) {
        0 => std::fs::write(&p, with_line_inserted(&data, &line)).map(|_| "edited"),
        1 => std::fs::write(&p, [&data[..], line.as_bytes()].concat()).map(|_| "appended to"),
        2 => std::fs::write(&p, b"").map(|_| "emptied"),
        3 => {
            let other = std::fs::read(&q).unwrap();
            std::fs::write(&p, &other)
                .and_then(|()| std::fs::write(&q, &data))
                .map(|_| "swapped with another")
        }
        _ => std::fs::File::options()
            .write(true)
            .open(&p)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()))
            .map(|_| "touched"),
    }
    .unwrap();
    format!("{} {what}", p.strip_prefix(repo).unwrap().display())
}

/// Files edited in place, removed and added, as in a weekly re-run of a
/// share: each re-run sorts, partitions and packs the records of the
/// changed chunks alone (fsim-sort says so), the ids of the files after a
/// file removed or added moved through the changed set's map, and writes
/// the bytes of a run from scratch, round after round. Then another
/// setting of the analysis: the bins of the changed chunks are refused,
/// and make packs every record again.
#[test]
fn a_rerun_of_the_changed_chunks_alone_is_a_run_from_scratch() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let mut rng = Rng(0x0c4a_d6ed);
    let vars = ["MEMORY=16M", "QUIET="];
    let run = |work: &Path, more: &[&str]| make_report(&repo, work, &[&vars[..], more].concat());
    let mut previous = t.path().join("run-0");
    run(&previous, &[]);
    for round in 1..=6 {
        let mut more = vec![];
        let changes: Vec<String> = match round {
            3 | 4 => {
                let gone = files_under(&repo)[1].clone();
                std::fs::remove_file(&gone).unwrap();
                if round == 3 {
                    // A copy of a file that stays, before every other.
                    let kept = files_under(&repo)[5].clone();
                    std::fs::copy(&kept, repo.join("0 new.txt")).unwrap();
                }
                vec![format!(
                    "{} removed (round 3: 0 new.txt added)",
                    gone.display()
                )]
            }
            5 => {
                let files = files_under(&repo);
                let mid = files[files.len() / 2].clone();
                std::fs::copy(&mid, mid.with_extension("copy")).unwrap();
                std::fs::write(repo.join("zz last.txt"), "added at the end\n").unwrap();
                vec![format!(
                    "{} copied beside, zz last.txt added",
                    mid.display()
                )]
            }
            6 => {
                more.push("MIN_PERCENT=20");
                vec![edit_in_place(&repo, 60, &mut rng), "MIN_PERCENT=20".into()]
            }
            _ => (0..3)
                .map(|i| edit_in_place(&repo, round * 10 + i, &mut rng))
                .collect(),
        };
        let rerun = t.path().join(format!("run-{round}"));
        let prev = format!("PREVIOUS={}", previous.display());
        let err = run(
            &rerun,
            &[&[&prev[..], "DROP_PREVIOUS=1"][..], &more].concat(),
        );
        let restricted = err.contains("(those of the changed chunks)");
        let again = err.contains("again from every record");
        let why = format!("round {round}, after:\n{}\n{err}", changes.join("\n"));
        match round {
            6 => assert!(
                restricted && again,
                "another setting: every record again: {why}"
            ),
            _ => assert!(restricted && !again, "the changed chunks alone: {why}"),
        }
        let scratch = t.path().join(format!("scratch-{round}"));
        run(&scratch, &more);
        for name in SAME {
            let (a, b) = (rerun.join(name), scratch.join(name));
            assert!(
                std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                "{name} of the re-run differs from a run from scratch: {why}"
            );
        }
        previous = rerun;
    }
}

/// The outputs of re-run `rerun` are those of `scratch`'s run from scratch.
fn assert_same(rerun: &Path, scratch: &Path, why: &str) {
    for name in SAME {
        assert!(
            std::fs::read(rerun.join(name)).unwrap() == std::fs::read(scratch.join(name)).unwrap(),
            "{why}: {name} differs from a run from scratch"
        );
    }
}

/// `make report` of `repo` into `work` with `vars`, which must succeed:
/// its standard error.
fn make_report(repo: &Path, work: &Path, vars: &[&str]) -> String {
    let out = run_raw(make_report_cmd(repo, work, vars), None);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "make report into {}:\n{err}",
        work.display()
    );
    err
}

/// `path` given a time `secs` from now, its bytes kept.
fn touch(path: &Path, secs: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    let when = std::time::SystemTime::now() + std::time::Duration::from_secs(secs);
    file.set_modified(when).unwrap();
}

/// Files only touched (a new time, the same bytes): the re-run's records
/// and file table but for its times are the earlier run's, so it sorts
/// no record, and takes every pair from the earlier run. A file renamed
/// in place (the same id, the same records, another path) is no touch:
/// its pairs are found again from every record. Both give a run from
/// scratch's bytes.
#[test]
fn a_rerun_of_files_only_touched_sorts_nothing_and_a_rename_in_place_everything() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let text: String = (0..400)
        .map(|i| {
            format!(
                "clause {i}: the parties agree to term {}\n",
                i * 7919 % 1009
            )
        })
        .collect();
    // b.txt a version of a.txt; d.txt another text.
    std::fs::write(repo.join("a.txt"), &text).unwrap();
    std::fs::write(
        repo.join("b.txt"),
        with_line_inserted(text.as_bytes(), "new\n"),
    )
    .unwrap();
    std::fs::write(repo.join("d.txt"), text.replace("parties", "others")).unwrap();
    let run = |work: &Path, prev: Option<&Path>| {
        let p = prev.map(|p| format!("PREVIOUS={}", p.display()));
        let vars: Vec<&str> = p
            .iter()
            .map(|s| s.as_str())
            .chain(["DROP_PREVIOUS=1"])
            .collect();
        make_report(&repo, work, &vars)
    };
    let same_as_scratch = |rerun: &Path, scratch: &Path, why: &str| {
        run(scratch, None);
        assert_same(rerun, scratch, why);
    };
    let first = t.path().join("first");
    run(&first, None);
    let report = std::fs::read_to_string(first.join("report.txt")).unwrap();
    assert!(
        report.contains("a.txt") && report.contains("b.txt"),
        "{report}"
    );

    for f in ["a.txt", "d.txt"] {
        touch(&repo.join(f), 60);
    }
    let touched = t.path().join("touched");
    let err = run(&touched, Some(&first));
    assert!(
        err.contains("fsim-sort: 0 records of ") && err.contains("(those of the changed chunks)"),
        "files only touched: no record sorted:\n{err}"
    );
    same_as_scratch(&touched, &t.path().join("scratch-1"), "touched");

    // a.txt touched again, d.txt edited: the changed set holds d.txt
    // (id 2) alone, a.txt moved with b.txt onto their own ids.
    touch(&repo.join("a.txt"), 120);
    let d = std::fs::read(repo.join("d.txt")).unwrap();
    std::fs::write(repo.join("d.txt"), with_line_inserted(&d, "an edit\n")).unwrap();
    let edited = t.path().join("edited");
    let err = run(&edited, Some(&touched));
    let set = std::fs::read_to_string(edited.join("changed.tsv")).unwrap();
    assert!(
        err.contains("2 read, 1 reused") && set.contains("\nF\t2\nM\t0\t0\t2\n"),
        "one file touched, one edited: the edited one changed:\n{err}\n{set}"
    );
    same_as_scratch(&edited, &t.path().join("scratch-3"), "touched and edited");

    // b.txt -> c.txt: between a.txt and d.txt, so its id stays.
    std::fs::rename(repo.join("b.txt"), repo.join("c.txt")).unwrap();
    let renamed = t.path().join("renamed");
    let err = run(&renamed, Some(&edited));
    assert!(
        !err.contains("(those of the changed chunks)"),
        "a file renamed in place: every record sorted:\n{err}"
    );
    let report = std::fs::read_to_string(renamed.join("report.txt")).unwrap();
    assert!(
        report.contains("c.txt") && !report.contains("b.txt"),
        "{report}"
    );
    same_as_scratch(&renamed, &t.path().join("scratch-2"), "renamed in place");
}

/// An archive only touched, beside a file edited: the archive and its
/// members are moved onto their earlier entries, not changed (their
/// records passed over, none of their chunks sorted). The same members
/// zipped again (other bytes) change the archive and every member. Both
/// give a run from scratch's bytes.
#[test]
fn a_touched_archive_is_moved_with_its_members_and_a_rezipped_one_changed() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let (a, b) = (
        archive_repo::text(300, false),
        archive_repo::text(300, true),
    );
    std::fs::write(repo.join("a.txt"), &a).unwrap();
    std::fs::write(repo.join("b.txt"), &b).unwrap();
    // Walk order: a.txt 0, b.txt 1, pack.zip 2, its members 3 and 4.
    let members = [("x.txt", a.as_bytes()), ("y.txt", b.as_bytes())];
    std::fs::write(repo.join("pack.zip"), archive_repo::zip_of(&members)).unwrap();
    let run = |work: &Path, prev: &[&str]| {
        make_report(&repo, work, prev);
        std::fs::read_to_string(work.join("changed.tsv")).unwrap_or_default()
    };
    let same_as_scratch = |rerun: &Path, why: &str| {
        let scratch = rerun.with_extension("scratch");
        run(&scratch, &[]);
        assert_same(rerun, &scratch, why);
    };
    let first = t.path().join("first");
    run(&first, &[]);

    touch(&repo.join("pack.zip"), 60);
    std::fs::write(
        repo.join("b.txt"),
        with_line_inserted(b.as_bytes(), "an edit\n"),
    )
    .unwrap();
    let touched = t.path().join("touched");
    let prev = format!("PREVIOUS={}", first.display());
    let set = run(&touched, &[&prev, "DROP_PREVIOUS=1"]);
    assert!(
        set.contains("\nF\t1\nM\t0\t0\t1\nM\t2\t2\t3\n") && !set.contains("\nF\t2\n"),
        "b.txt edited, pack.zip touched: b.txt alone changed, the archive and its members moved:\n{set}"
    );
    same_as_scratch(&touched, "an archive touched");

    let again = [("y.txt", b.as_bytes()), ("x.txt", a.as_bytes())];
    std::fs::write(repo.join("pack.zip"), archive_repo::zip_of(&again)).unwrap();
    let rezipped = t.path().join("rezipped");
    let prev = format!("PREVIOUS={}", touched.display());
    let set = run(&rezipped, &[&prev, "DROP_PREVIOUS=1"]);
    assert!(
        set.contains("\nF\t2\nF\t3\nF\t4\nM\t0\t0\t2\n"),
        "pack.zip zipped again: it and its members changed:\n{set}"
    );
    same_as_scratch(&rezipped, "an archive zipped again");
}

/// A file added that makes a chunk too common (1,001 files hold it, the
/// limit is 1,000): the partition of the changed chunks alone cannot say
/// what is dropped now, exits 3, and make partitions every record. One
/// line says why (the partition's), one what happens (make's): no line of
/// fsim-reuse's between them, which read as a second failure. The report
/// is a run from scratch's, which prunes the chunk too.
#[test]
fn a_chunk_that_becomes_too_common_partitions_every_record_said_once() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let notice: String = (0..20)
        .map(|i| format!("shared preamble line {i} of the standard notice\n"))
        .collect();
    let mut rng = Rng(7);
    for i in 0..1000 {
        let own: String = (0..10)
            .map(|_| format!("file {i} says {}\n", rng.below(1_000_000_007)))
            .collect();
        std::fs::write(repo.join(format!("n{i:04}.txt")), format!("{notice}{own}")).unwrap();
    }
    let run = |work: &Path, vars: &[&str]| make_report(&repo, work, vars);
    let first = t.path().join("first");
    run(&first, &[]);
    let report = std::fs::read_to_string(first.join("report.txt")).unwrap();
    assert!(
        !report.contains("pruned:"),
        "1,000 files: nothing pruned yet:\n{report}"
    );

    std::fs::write(repo.join("zz.txt"), format!("{notice}one more file\n")).unwrap();
    let rerun = t.path().join("rerun");
    let prev = format!("PREVIOUS={}", first.display());
    let err = run(&rerun, &[&prev]);
    let why = "fsim-partition: the changed chunks alone are not enough: the chunks dropped changed";
    assert!(
        err.contains(why) && err.contains("make: partition.tsv again from every record"),
        "the partition says why, make what it does:\n{err}"
    );
    assert!(
        !err.contains("fsim-reuse"),
        "no second line from the stage's wrapper:\n{err}"
    );
    let report = std::fs::read_to_string(rerun.join("report.txt")).unwrap();
    assert!(
        report.contains(
            "found in more than 1000 files were ignored as boilerplate (1001 files hold one)"
        ),
        "the chunk now pruned:\n{report}"
    );
    let scratch = t.path().join("scratch");
    run(&scratch, &[]);
    assert_same(&rerun, &scratch, "a chunk now too common");
}
