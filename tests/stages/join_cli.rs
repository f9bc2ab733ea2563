//! fsim-join through the real binary: parts of one file joined are the file
//! written whole, byte for byte; parts that do not belong together are
//! refused with the file and line, and no output is left.

use crate::common;

use common::*;
use std::path::Path;

/// A sorted chunk file of the demo repository, and its hash ranges as
/// `fsim-sort --split-ranges` cuts it: each range a chunk file with its own
/// header and trailer, in hash order, so the ranges in order are the file.
/// (fsim-sort writes the whole file's two `#` lines first, in byte order:
/// `#end` before `#fsim`; the joined file has its header first.)
fn sorted_and_ranges(dir: &Path) -> Vec<std::path::PathBuf> {
    let (repo, _) = gen_repo(dir, &[]);
    chunk_and_sort(&repo, &dir.join("w"), &[]);
    let mut c = fsim("fsim-sort");
    c.args(["-q", "--split-ranges", "4", "-o"])
        .arg(dir.join("r"))
        .arg(dir.join("w/sorted.tsv"));
    run_ok(c, None);
    (0..4).map(|i| dir.join(format!("r.r{i:05}"))).collect()
}

#[test]
fn parts_joined_are_the_file_written_whole() {
    let t = tempfile::tempdir().unwrap();
    let ranges = sorted_and_ranges(t.path());
    let sorted = std::fs::read_to_string(t.path().join("w/sorted.tsv")).unwrap();
    let mut lines: Vec<&str> = sorted.lines().collect();
    assert!(lines[0].starts_with("#end chunks\t") && lines[1].starts_with("#fsim chunks v1\t"));
    let trailer = lines.remove(0);
    lines.push(trailer);
    let whole = format!("{}\n", lines.join("\n")).into_bytes();
    let mut c = fsim("fsim-join");
    c.arg("-o").arg(t.path().join("joined.tsv")).args(&ranges);
    run_ok(c, None);
    assert!(std::fs::read(t.path().join("joined.tsv")).unwrap() == whole);
    // From standard input, the parts one after the other; --ends-only: the
    // header and the trailer alone.
    let cat: Vec<u8> = ranges
        .iter()
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    let out = run_ok(fsim("fsim-join"), Some(&cat));
    assert!(out.stdout == whole);
    let mut c = fsim("fsim-join");
    c.arg("--ends-only").args(&ranges);
    let ends = String::from_utf8(run_ok(c, None).stdout).unwrap();
    let text = String::from_utf8(whole).unwrap();
    let want: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(ends, format!("{}\n", want.join("\n")));
    // The next stage takes the joined file as the whole one.
    let mut c = fsim("fsim-partition");
    c.args(["-q", "--files"])
        .arg(t.path().join("w/files.tsv"))
        .arg("-o")
        .arg(t.path().join("p.tsv"))
        .arg(t.path().join("joined.tsv"));
    run_ok(c, None);
}

#[test]
fn pairs_parts_sum_their_counts_and_digests() {
    let t = tempfile::tempdir().unwrap();
    let a = pairs_file(&[(1, 2, 100, 100, 90), (1, 3, 100, 200, 60)]);
    let b = pairs_file(&[(4, 5, 50, 50, 50)]);
    let whole = pairs_file(&[
        (1, 2, 100, 100, 90),
        (1, 3, 100, 200, 60),
        (4, 5, 50, 50, 50),
    ]);
    std::fs::write(t.path().join("a.tsv"), a).unwrap();
    std::fs::write(t.path().join("b.tsv"), b).unwrap();
    let mut c = fsim("fsim-join");
    c.arg(t.path().join("a.tsv")).arg(t.path().join("b.tsv"));
    assert!(run_ok(c, None).stdout == whole);
}

#[test]
fn mismatched_headers_are_refused_with_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    let ranges = sorted_and_ranges(t.path());
    // Range 2 from a run with another average chunk size.
    let text = std::fs::read_to_string(&ranges[2]).unwrap();
    assert!(text.contains("\tavg=100\t"), "{text:.200}");
    std::fs::write(&ranges[2], text.replacen("\tavg=100\t", "\tavg=1000\t", 1)).unwrap();
    let out = t.path().join("joined.tsv");
    let mut c = fsim("fsim-join");
    c.arg("-o").arg(&out).args(&ranges);
    let err = run_fail(c, None);
    assert_eq!(
        err.trim_end(),
        format!(
            "fsim-join: {}:1: the header differs from the first part's ({}:1): avg=1000 here but avg=100 before",
            ranges[2].display(),
            ranges[0].display()
        )
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!out.exists(), "a half-written output was left");
    let leftovers = std::fs::read_dir(t.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".tmp")
        })
        .count();
    assert_eq!(leftovers, 0);
    // A part cut short: its trailer is missing.
    let cut = t.path().join("cut.tsv");
    let text = std::fs::read_to_string(&ranges[0]).unwrap();
    let keep: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(&cut, keep).unwrap();
    let mut c = fsim("fsim-join");
    c.arg(&ranges[1]).arg(&cut);
    let err = run_fail(c, None);
    assert!(
        err.contains(&format!("{}:3: no '#end chunks' trailer", cut.display())),
        "{err}"
    );
}

/// The shards' file tables of `fsim-chunk --shard I/N` joined by
/// `fsim-join --shard-tables` are the file table of the unsharded run, byte
/// for byte (what fsim-spark writes as files.tsv); a shard of another run
/// is refused with its file and line, and nothing is written.
#[test]
fn shard_tables_joined_are_the_unsharded_file_table() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    chunk_and_sort(&repo, &t.path().join("w"), &[]);
    let shard = |i: u32, n: u32, extra: &[&str]| {
        let table = t.path().join(format!("files.{i}.{n}.tsv"));
        let mut c = fsim("fsim-chunk");
        c.args(["-q", "-j", "1", "--shard", &format!("{i}/{n}")])
            .args(extra)
            .arg("--files-out")
            .arg(&table)
            .arg("-o")
            .arg(t.path().join(format!("chunks.{i}.{n}.tsv")))
            .arg(&repo);
        run_ok(c, None);
        table
    };
    let tables: Vec<_> = (0..3).map(|i| shard(i, 3, &[])).collect();
    let out = t.path().join("files.tsv");
    let moved = t.path().join("moved.tsv");
    let mut c = fsim("fsim-join");
    c.arg("--shard-tables")
        .arg("--moved")
        .arg(&moved)
        .arg("-o")
        .arg(&out)
        .args(tables.iter().rev());
    run_ok(c, None);
    assert!(std::fs::read(&out).unwrap() == std::fs::read(t.path().join("w/files.tsv")).unwrap());
    assert_eq!(std::fs::read(&moved).unwrap(), b"");
    // Shard 1 of a run with another average chunk size.
    let other = shard(1, 3, &["--avg-size", "1000"]);
    std::fs::remove_file(&out).unwrap();
    let mut c = fsim("fsim-join");
    c.args(["--shard-tables", "-o"])
        .arg(&out)
        .arg(&tables[0])
        .arg(&other)
        .arg(&tables[2]);
    let err = run_fail(c, None);
    assert!(
        err.starts_with(&format!(
            "fsim-join: {}:1: the header differs from {}'s: avg=1000 here but avg=100 before",
            other.display(),
            tables[0].display()
        )),
        "{err}"
    );
    assert!(!out.exists());
}

/// A file that cannot be read (a link to /proc/self/mem followed with
/// -L: an I/O error even for root) keeps its entry at its walk position in
/// the shard that walked it: nothing moves, the joined table is the
/// unsharded run's, `--renumber` with the empty map gives the shards'
/// records unchanged, and a line that is not a record is refused with the
/// file and line.
#[test]
fn unreadable_file_keeps_its_id_across_shards() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    std::os::unix::fs::symlink("/proc/self/mem", repo.join("0-unreadable")).unwrap();
    let chunk = |name: &str, shard: Option<u32>| {
        let mut c = fsim("fsim-chunk");
        c.args(["-q", "-L", "-j", "1"]);
        if let Some(i) = shard {
            c.args(["--shard", &format!("{i}/2")]);
        }
        c.arg("--files-out")
            .arg(t.path().join(format!("files.{name}.tsv")))
            .arg("-o")
            .arg(t.path().join(format!("chunks.{name}.tsv")))
            .arg(&repo);
        run_ok(c, None);
        t.path().join(format!("chunks.{name}.tsv"))
    };
    let whole = std::fs::read_to_string(chunk("whole", None)).unwrap();
    let whole_table = std::fs::read_to_string(t.path().join("files.whole.tsv")).unwrap();
    assert!(
        whole_table.lines().nth(1).unwrap().contains("^error"),
        "{whole_table}"
    );
    let shards = [chunk("0", Some(0)), chunk("1", Some(1))];
    let (moved, joined) = (t.path().join("moved.tsv"), t.path().join("files.tsv"));
    let mut c = fsim("fsim-join");
    c.args(["--shard-tables", "--moved"])
        .arg(&moved)
        .arg("-o")
        .arg(&joined)
        .arg(t.path().join("files.0.tsv"))
        .arg(t.path().join("files.1.tsv"));
    run_ok(c, None);
    assert_eq!(std::fs::read_to_string(&moved).unwrap(), "", "a file moved");
    assert_eq!(std::fs::read_to_string(&joined).unwrap(), whole_table);
    let mut c = fsim("fsim-join");
    c.arg("--renumber").arg(&moved).args(&shards);
    let out = String::from_utf8(run_ok(c, None).stdout).unwrap();
    let (records, _) = out.trim_end().rsplit_once('\n').unwrap();
    let mut got: Vec<&str> = records.lines().collect();
    let mut want: Vec<&str> = whole.lines().filter(|l| !l.starts_with('#')).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
    let bad = t.path().join("bad.tsv");
    std::fs::write(&bad, format!("{}\nnot a record\n", want[0])).unwrap();
    let mut c = fsim("fsim-join");
    c.arg("--renumber").arg(&moved).arg(&bad);
    let err = run_fail(c, None);
    assert!(
        err.starts_with(&format!(
            "fsim-join: {}:2: expected a chunk record",
            bad.display()
        )),
        "{err}"
    );
}

/// Archives in a sharded run: each shard marks its archives
/// `~unlisted` and lists no members; `--shard-tables --unlisted` writes
/// their entries (and alone keeps the mark, which the report gives as a
/// note), `fsim-chunk --members-of`
/// lists their members, `--shard-tables --members` puts them after their
/// archive (the later files moved), `--renumber` gives the shards' and the
/// members' records their ids: the unsharded run's file table and records.
#[test]
fn archive_members_joined_are_the_unsharded_run() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let repo = common::archive_repo::repo(dir);
    let chunk = |name: &str, more: &[&str]| {
        let mut c = fsim("fsim-chunk");
        c.args(["-q", "-j", "1"]).args(more);
        c.arg("--files-out")
            .arg(dir.join(format!("files.{name}.tsv")))
            .arg("-o")
            .arg(dir.join(format!("chunks.{name}.tsv")));
        run_ok(c, None);
        dir.join(format!("chunks.{name}.tsv"))
    };
    let repo_s = repo.to_str().unwrap();
    let whole = std::fs::read_to_string(chunk("whole", &[repo_s])).unwrap();
    let shards: Vec<_> = (0..3)
        .map(|i| chunk(&i.to_string(), &["--shard", &format!("{i}/3"), repo_s]))
        .collect();
    let tables: Vec<_> = (0..3).map(|i| dir.join(format!("files.{i}.tsv"))).collect();
    let list = unlisted_archives_are_marked_and_noted(dir, &tables);
    // The members, from the list on standard input.
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "--members-of", "-", "--files-out"])
        .arg(dir.join("members.tsv"))
        .arg("-o")
        .arg(dir.join("member-records.tsv"));
    run_ok(c, Some(list.as_bytes()));
    let moved = dir.join("moved.tsv");
    let members = dir.join("members.tsv");
    let m: [&std::ffi::OsStr; 2] = ["--members".as_ref(), members.as_ref()];
    run_ok(
        join_tables(
            &tables,
            &[m[0], m[1], "--moved".as_ref(), moved.as_ref()],
            Path::new("/dev/null"),
        ),
        None,
    );
    let mut c = fsim("fsim-join");
    c.arg("--renumber")
        .arg(&moved)
        .args(&shards)
        .arg(dir.join("member-records.tsv"));
    let out = String::from_utf8(run_ok(c, None).stdout).unwrap();
    let (records, last) = out.trim_end().rsplit_once('\n').unwrap();
    let mut got: Vec<&str> = records.lines().collect();
    let mut want: Vec<&str> = whole.lines().filter(|l| !l.starts_with('#')).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert!(
        got == want,
        "the renumbered records differ from the unsharded run's"
    );
    let part = last.strip_prefix("#records\t").unwrap();
    let joined = dir.join("files.tsv");
    run_ok(
        join_tables(
            &tables,
            &[m[0], m[1], "--records".as_ref(), part.as_ref()],
            &joined,
        ),
        None,
    );
    assert!(std::fs::read(&joined).unwrap() == std::fs::read(dir.join("files.whole.tsv")).unwrap());
}

/// `fsim-join --shard-tables` of `tables` with more options, into `out`.
fn join_tables(
    tables: &[std::path::PathBuf],
    more: &[&std::ffi::OsStr],
    out: &Path,
) -> std::process::Command {
    let mut c = fsim("fsim-join");
    c.arg("--shard-tables")
        .args(more)
        .arg("-o")
        .arg(out)
        .args(tables);
    c
}

/// `--shard-tables --unlisted`: the list of the shards' archives, and the
/// table alone keeps their mark, which the report gives as a note.
/// Returns the list.
fn unlisted_archives_are_marked_and_noted(dir: &Path, tables: &[std::path::PathBuf]) -> String {
    let unlisted = dir.join("unlisted.tsv");
    run_ok(
        join_tables(
            tables,
            &["--unlisted".as_ref(), unlisted.as_ref()],
            &dir.join("marked.tsv"),
        ),
        None,
    );
    let list = std::fs::read_to_string(&unlisted).unwrap();
    let names: Vec<&str> = list
        .lines()
        .map(|l| l.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "broken.zip",
            "bundle.zip",
            "copy.tar.gz",
            "deep.zip",
            "sent.eml"
        ]
    );
    let marked = std::fs::read_to_string(dir.join("marked.tsv")).unwrap();
    assert_eq!(marked.matches("~unlisted\t").count(), 5, "{marked}");
    // Such a table's report says each archive's members are missing (no
    // pair needed: the notes come from the table).
    let head = marked.lines().next().unwrap();
    let pairs = format!(
        "{}\n#end pairs\tpairs=0\tdigest={}\n",
        head.replacen("#fsim files v4", "#fsim pairs v1", 1),
        "0".repeat(32)
    );
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", "text", "--files"])
        .arg(dir.join("marked.tsv"))
        .arg("-");
    let txt = String::from_utf8(run_ok(c, Some(pairs.as_bytes())).stdout).unwrap();
    assert_eq!(
        txt.matches("a distributed run's shard chunked it and lists no members")
            .count(),
        5,
        "{txt}"
    );
    list
}

/// What `--members-of` and `--members` refuse, with the file and line, a
/// non-zero exit and no output left: a list entry that is no unlisted
/// archive, a members table cut short, an unlisted archive missing from
/// the members tables, a member record without its archive's position.
#[test]
fn bad_members_inputs_are_refused_with_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let repo = common::archive_repo::repo(dir);
    let tables: Vec<_> = (0..2)
        .map(|i| {
            let p = dir.join(format!("files.{i}.tsv"));
            let mut c = fsim("fsim-chunk");
            c.args([
                "-q",
                "-j",
                "1",
                "--shard",
                &format!("{i}/2"),
                "-o",
                "/dev/null",
            ])
            .arg("--files-out")
            .arg(&p)
            .arg(&repo);
            run_ok(c, None);
            p
        })
        .collect();
    let unlisted = dir.join("unlisted.tsv");
    let mut c = fsim("fsim-join");
    c.args(["--shard-tables", "-o", "/dev/null", "--unlisted"])
        .arg(&unlisted)
        .args(&tables);
    run_ok(c, None);
    let list = std::fs::read_to_string(&unlisted).unwrap();
    let first = list.lines().find(|l| l.ends_with("/bundle.zip")).unwrap();
    let loose = first.replace("~unlisted", "");
    let bad_list = dir.join("bad-list.tsv");
    std::fs::write(&bad_list, format!("{first}\n{loose}\n")).unwrap();
    let (members, records) = (dir.join("members.tsv"), dir.join("records.tsv"));
    let members_of = |list: &Path| {
        let mut c = fsim("fsim-chunk");
        c.args(["-q", "--members-of"])
            .arg(list)
            .arg("--files-out")
            .arg(&members)
            .arg("-o")
            .arg(&records);
        c
    };
    let err = run_fail(members_of(&bad_list), None);
    assert_eq!(
        err,
        format!(
            "fsim-chunk: {}:2: expected the entry of an archive a shard run marked ~unlisted (fsim-join --shard-tables --unlisted)\n",
            bad_list.display()
        )
    );
    assert!(!members.exists() && !records.exists());
    // Only the zip's members: the other archives' are missing.
    let one = dir.join("one.tsv");
    std::fs::write(&one, format!("{first}\n")).unwrap();
    run_ok(members_of(&one), None);
    members_tables_missing_or_cut_are_refused(dir, &tables, &members);
    let rec = std::fs::read_to_string(&records).unwrap();
    let line = rec.lines().next().expect("the zip has members");
    let bad = dir.join("bad-records.tsv");
    std::fs::write(&bad, format!("{line}\n{}\tx\n", &line[..line.len() - 11])).unwrap();
    let mut c = fsim("fsim-join");
    c.args(["--renumber", "/dev/null"]).arg(&bad);
    let err = run_fail(c, None);
    assert!(
        err.starts_with(&format!(
            "fsim-join: {}:2: expected a chunk record",
            bad.display()
        )) && err.lines().count() == 1,
        "{err}"
    );
}

/// `--members` with the members of one archive only (the others'
/// missing), then with its table cut short: refused, nothing written.
fn members_tables_missing_or_cut_are_refused(
    dir: &Path,
    tables: &[std::path::PathBuf],
    members: &Path,
) {
    let out = dir.join("files.tsv");
    let join = |table: &Path| {
        let mut c = fsim("fsim-join");
        c.args(["--shard-tables", "--members"])
            .arg(table)
            .arg("-o")
            .arg(&out)
            .args(tables);
        run_fail(c, None)
    };
    let err = join(members);
    assert!(
        err.starts_with("fsim-join: ")
            && err.contains("is marked ~unlisted by its shard but is in no members table")
            && err.lines().count() == 1,
        "{err}"
    );
    let text = std::fs::read_to_string(members).unwrap();
    let cut = dir.join("cut.tsv");
    let n = text.lines().count();
    std::fs::write(
        &cut,
        text.lines()
            .take(n - 1)
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    assert_eq!(
        join(&cut),
        format!(
            "fsim-join: {}:{}: no '#end files' trailer: the members table is truncated\n",
            cut.display(),
            n - 1
        )
    );
    assert!(!out.exists());
}
