//! fsim-partition end to end on hand-made file tables and chunk files.

use fsim::formats::{
    classify_line, digest_params, hex128, mix128, write_header, write_trailer, ChunkRecord, Digest,
    FileEntry, FileType, Kind, Line, Params,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn params(avg: u32) -> Params {
    Params::new()
        .with("method", "tttd")
        .with("avg", avg)
        .with("hash", "md5")
}

/// Write `files.tsv` (n files) and `chunks.tsv` (records in the order
/// given), with matching digests.
fn write_inputs(dir: &Path, n: u32, recs: &[(u128, u32, u32)], avg: u32) -> (PathBuf, PathBuf) {
    write_named_inputs(dir, n, recs, avg, |id| format!("dir/file {id}\t.txt"))
}

/// [`write_inputs`] with the path of each file id.
fn write_named_inputs(
    dir: &Path,
    n: u32,
    recs: &[(u128, u32, u32)],
    avg: u32,
    path: impl Fn(u32) -> String,
) -> (PathBuf, PathBuf) {
    let mut d = Digest::default();
    let mut chunks = Vec::new();
    write_header(Kind::Chunks, &params(avg), &mut chunks);
    for &(hash, file, len) in recs {
        let r = ChunkRecord { hash, file, len };
        d.add(&r);
        r.write(&mut chunks);
    }
    write_trailer(Kind::Chunks, &digest_params(&d, "records"), &mut chunks);
    let mut files = Vec::new();
    write_header(Kind::Files, &params(avg), &mut files);
    let mut table = fsim::formats::files::TableDigest::default();
    for id in 0..n {
        let e = FileEntry {
            id,
            size: 100 + id as u64,
            mtime_s: 0,
            mtime_ns: 0,
            content: id as u128 + 0xabc,
            ftype: FileType::Text,
            view: fsim::formats::FileView::raw(100 + id as u64),
            path: path(id).into_bytes(),
        };
        table.write(&e, &mut files);
    }
    let tp = Params::new()
        .with("files", n)
        .with("records", d.count)
        .with("digest", hex128(d.sum))
        .with("skipped", 0)
        .with(fsim::formats::files::TABLE_DIGEST_KEY, table.hex());
    write_trailer(Kind::Files, &tp, &mut files);
    let (f, c) = (dir.join("files.tsv"), dir.join("chunks.tsv"));
    std::fs::write(&f, files).unwrap();
    std::fs::write(&c, chunks).unwrap();
    (f, c)
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run binary");
    eprintln!(
        "{cmd:?}\nstatus {}\nstderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn partition(files: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fsim-partition"));
    c.arg("--files").arg(files);
    c
}

/// fsim-partition with the file table through a pipe (kept in memory
/// instead of read twice) and the chunks on standard input.
fn piped_table(files: &Path, chunks: &Path) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(format!(
        "'{}' --files /dev/fd/3 --degree-floor 0 -q 3< '{}' < '{}'",
        env!("CARGO_BIN_EXE_fsim-partition"),
        files.display(),
        chunks.display()
    ));
    c
}

/// Files 0-1-2 share chunks, 3-4 share one, 5 and 6 are alone; hash 0x50
/// is in every file (degree 8 > limit 4) and must not merge everything.
fn example() -> Vec<(u128, u32, u32)> {
    let mut v = vec![
        (0x10, 0, 100),
        (0x10, 1, 100),
        (0x20, 1, 50),
        (0x20, 2, 50),
        (0x20, 2, 50),
        (0x30, 3, 70),
        (0x30, 4, 70),
        (0x40, 5, 9), // degree 1 (twice in one file): dropped silently
        (0x40, 5, 9),
    ];
    for f in 0..8 {
        v.push((0x50, f, 1203));
    }
    v.push((0x60, 6, 1));
    v
}

fn lines(data: &[u8]) -> Vec<String> {
    String::from_utf8(data.to_vec())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn expected() -> Vec<String> {
    let h = hex128;
    vec![
        "#fsim partition v1\tmethod=tttd\tavg=1000\thash=md5\tfiles=8\tlimit=4".to_string(),
        format!("{}\t0000000000\t100", h(0x10)),
        format!("{}\t0000000001\t100", h(0x10)),
        format!("{}\t0000000001\t50", h(0x20)),
        format!("{}\t0000000002\t50", h(0x20)),
        format!("{}\t0000000002\t50", h(0x20)),
        format!("{}\t0000000003\t70", h(0x30)),
        format!("{}\t0000000004\t70", h(0x30)),
        format!("F\t0000000000\t0000000000\t100\t{}", h(0xabc)),
        format!("F\t0000000001\t0000000000\t101\t{}", h(0xabd)),
        format!("F\t0000000002\t0000000000\t102\t{}", h(0xabe)),
        format!("F\t0000000003\t0000000003\t103\t{}", h(0xabf)),
        format!("F\t0000000004\t0000000003\t104\t{}", h(0xac0)),
        format!("#dropped\t{}\t8\t1203\t0000000000", h(0x50)),
    ]
}

#[test]
fn components_and_dropped_ubiquitous_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let (files, chunks) = write_inputs(dir.path(), 8, &example(), 1000);
    let out_path = dir.path().join("part.tsv");
    // The paper's rule alone: 8 files are far under the degree floor.
    let out = run(partition(&files)
        .args(["--degree-floor", "0", "-o"])
        .arg(&out_path)
        .arg(&chunks));
    assert!(out.status.success());
    let got = lines(&std::fs::read(&out_path).unwrap());
    let want = expected();
    assert_eq!(got[..want.len()], want[..]);
    assert_eq!(got.len(), want.len() + 1);
    // The trailer's digest is the digest of the kept records.
    let mut d = Digest::default();
    for l in &got[1..8] {
        d.add(&ChunkRecord::parse(l.as_bytes()).unwrap());
    }
    // The dropped chunk (0x50) is named by its mix in dropped_digest.
    let trailer = got.last().unwrap();
    assert_eq!(
        *trailer,
        format!(
            "#end partition\trecords=7\tdigest={}\tfiles=5\tcomponents=2\tdropped_chunks=1\tdropped_records=8\tpruned_files=8\tdropped_digest={}",
            hex128(d.sum),
            hex128(mix128(0x50))
        )
    );
    match classify_line(trailer.as_bytes()).unwrap() {
        Line::Trailer(Kind::Partition, p) => assert_eq!(p.get_u128_hex("digest"), Some(d.sum)),
        other => panic!("{other:?}"),
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dropped 1 chunks above degree 4 (8 records, in 8 files whose similarity is now a lower bound); highest: degree 8, 1203 bytes, e.g. dir/file 0\\t.txt"),
        "{err}"
    );
    assert!(
        err.contains("2 components of 2 or more files holding 5 files"),
        "{err}"
    );

    // A higher limit keeps the ubiquitous chunk: one component.
    let out = run(partition(&files)
        .args(["--max-degree", "8", "-q"])
        .arg(&chunks));
    assert!(out.status.success());
    assert!(out.stderr.is_empty());
    let got = lines(&out.stdout);
    assert!(
        got.last()
            .unwrap()
            .contains("files=8\tcomponents=1\tdropped_chunks=0"),
        "{got:?}"
    );

    // The file table through a pipe (kept in memory instead of read twice),
    // the chunks from standard input.
    let out = run(&mut piped_table(&files, &chunks));
    assert!(out.status.success());
    assert_eq!(lines(&out.stdout)[..want.len()], want[..]);
}

#[test]
fn unsorted_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut recs = example();
    recs.swap(2, 6); // line 4 holds hash 0x30, line 5 hash 0x20
    let (files, chunks) = write_inputs(dir.path(), 8, &recs, 1000);
    let target = dir.path().join("part.tsv");
    let out = run(partition(&files).arg("-o").arg(&target).arg(&chunks));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("fsim-partition: {}:5: input is not sorted by hash: run fsim-sort or LC_ALL=C sort first\n", chunks.display())
    );
    assert!(!target.exists());
}

#[test]
fn mismatched_file_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (files, chunks) = write_inputs(dir.path(), 8, &example(), 1000);
    // Another run's chunks (one record less) with this file table.
    let other = tempfile::tempdir().unwrap();
    let mut recs = example();
    recs.pop();
    let (_, chunks2) = write_inputs(other.path(), 8, &recs, 1000);
    let target = dir.path().join("part.tsv");
    let out = run(partition(&files).arg("-o").arg(&target).arg(&chunks2));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not belong to the file table") && err.contains("stale or foreign"),
        "{err}"
    );
    assert!(!target.exists());
    // Different chunking parameters.
    let third = tempfile::tempdir().unwrap();
    let (_, chunks3) = write_inputs(third.path(), 8, &example(), 100);
    let out = run(partition(&files).arg(&chunks3));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "fsim-partition: {}:1: chunking parameters differ from the file table {}: avg=100 here but avg=1000 before (in the file table)\n",
            chunks3.display(),
            files.display()
        )
    );
    // A file id beyond the table.
    let (small_files, _) = write_inputs(third.path(), 4, &example(), 1000);
    let out = run(partition(&small_files).arg(&chunks));
    assert!(String::from_utf8_lossy(&out.stderr).contains("file id 4 is not in the file table"));
}

/// A file table of several MiB is read back in blocks on two threads: the
/// F lines are those of the serial read of a pipe, in order, and a damaged
/// line far into it is named with its line number.
#[test]
fn large_file_table_blocks_match_the_serial_read() {
    let dir = tempfile::tempdir().unwrap();
    let n = 60_000u32;
    // Files 2i and 2i+1 share a chunk for i not a multiple of 3; a chunk in
    // files 0..5 links the first six; the rest stay alone.
    let mut recs: Vec<(u128, u32, u32)> = Vec::new();
    for i in 0..n / 2 {
        if i % 3 != 0 {
            let h = 0x1000 + i as u128;
            recs.push((h, 2 * i, 64));
            recs.push((h, 2 * i + 1, 64));
        }
    }
    for f in 0..6 {
        recs.push((0x10, f, 80));
    }
    recs.sort();
    let (files, chunks) = write_inputs(dir.path(), n, &recs, 1000);
    assert!(std::fs::metadata(&files).unwrap().len() > 3 << 20);
    let target = dir.path().join("part.tsv");
    let out = run(partition(&files)
        .arg("-q")
        .arg("-o")
        .arg(&target)
        .arg(&chunks));
    assert!(out.status.success());
    let got = std::fs::read(&target).unwrap();
    let piped = run(&mut piped_table(&files, &chunks));
    assert!(piped.status.success());
    assert_eq!(got, piped.stdout);
    let f_lines: Vec<&str> = std::str::from_utf8(&got)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("F\t"))
        .collect();
    // 6 + 2 per linked pair beyond the first three files' pairs.
    let linked = (0..n / 2).filter(|i| i % 3 != 0 && *i >= 3).count();
    assert_eq!(f_lines.len(), 6 + 2 * linked);
    assert_eq!(
        f_lines[0],
        "F\t0000000000\t0000000000\t100\t00000000000000000000000000000abc"
    );
    assert_eq!(
        f_lines.last().unwrap(),
        &format!(
            "F\t{:010}\t{:010}\t{}\t{:032x}",
            n - 1,
            n - 2,
            100 + n - 1,
            n - 1 + 0xabc
        )
    );

    // Damage a record in the third MiB: the error names that line.
    let table = std::fs::read_to_string(&files).unwrap();
    let mut lines: Vec<&str> = table.lines().collect();
    let at = lines.len() * 3 / 4;
    lines[at] = "0000049999\tnot a size";
    let bad = dir.path().join("bad.tsv");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let out = run(partition(&bad)
        .arg("-q")
        .arg("-o")
        .arg(&target)
        .arg(&chunks));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "fsim-partition: {}:{}: expected a file record: id, size, mtime, content hash, type, view, raw size, view hash and path separated by tabs\n",
            bad.display(),
            at + 1
        )
    );
}

/// A chunk in web pages of 10 names is a site's template, dropped and
/// counted, whether the file table is a regular file or a pipe (read once:
/// the page names come from that read); one in 10 releases of one page, or
/// in 10 files that are not pages, links them; `--site-names 0` keeps all.
#[test]
fn chunks_of_web_pages_of_many_names_are_a_sites_template() {
    let dir = tempfile::tempdir().unwrap();
    // Files 0-9: pages of ten names; 10-19: one page in ten releases;
    // 20-29: text files of ten names.
    let path = |id: u32| match id / 10 {
        0 => format!("site/topics/{}.html", char::from(b'a' + id as u8)),
        1 => format!("site-{id}/topics/intro.html"),
        _ => format!("src/{}.txt", char::from(b'a' + (id % 10) as u8)),
    };
    let mut recs = Vec::new();
    for (hash, files) in [(0x10u128, 0..10u32), (0x20, 10..20), (0x30, 20..30)] {
        recs.extend(files.map(|f| (hash, f, 100)));
    }
    let (files, chunks) = write_named_inputs(dir.path(), 30, &recs, 1000, path);
    let trailer_of = |out: &Output| lines(&out.stdout).last().unwrap().clone();
    let regular = run(partition(&files)
        .args(["--degree-floor", "0", "-q"])
        .arg(&chunks));
    assert!(regular.status.success());
    let kept: Vec<String> = lines(&regular.stdout)
        .into_iter()
        .filter(|l| !l.starts_with('#') && !l.starts_with('F'))
        .collect();
    assert_eq!(kept.len(), 20, "{kept:?}");
    assert!(
        kept.iter().all(|l| !l.starts_with(&hex128(0x10))),
        "{kept:?}"
    );
    let t = trailer_of(&regular);
    assert!(t.contains("\tdropped_chunks=1\t"), "{t}");
    assert!(t.contains("\tsite_chunks=1\tsite_names=10"), "{t}");
    assert!(t.contains("\tpruned_files=10\t"), "{t}");
    let piped = run(&mut piped_table(&files, &chunks));
    assert_eq!(
        piped.stdout, regular.stdout,
        "a pipe gives the same partition"
    );
    let off = run(partition(&files)
        .args(["--site-names", "0", "--degree-floor", "0", "-q"])
        .arg(&chunks));
    let t = trailer_of(&off);
    assert!(
        t.contains("\tdropped_chunks=0\t") && !t.contains("site_chunks"),
        "{t}"
    );
}

fn succeeds(cmd: &mut Command) {
    let out = run(cmd);
    assert!(out.status.success(), "{cmd:?} failed");
}

/// Lines of text, the same for the same `seed` (no two seeds share one).
fn block(seed: u32, lines: u32) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "line {i} of block {seed}: {}\n",
                (seed * 7919 + i * 104_729) % 1_000_003
            )
        })
        .collect()
}

/// One run of the pipeline's first stages on `repo` into `work`: the
/// file table and records (from `prev`'s, with the changed set), every
/// record sorted and partitioned (`partition.tsv`, `dropped.tsv`), and,
/// with `prev`, the changed chunks' records partitioned from its dropped
/// list (`partition-c.tsv`): its output, or why it refused.
fn limit_round(repo: &Path, work: &Path, prev: Option<&Path>) -> Option<Output> {
    std::fs::create_dir_all(work).unwrap();
    let limit = ["--max-degree-fraction", "0.5", "--degree-floor", "2"];
    let mut c = Command::new(env!("CARGO_BIN_EXE_fsim-chunk"));
    c.args(["-q", "--files-out"]).arg(work.join("files.tsv"));
    c.arg("-o").arg(work.join("chunks.tsv"));
    if let Some(p) = prev {
        c.arg("--previous").arg(p.join("files.tsv"));
        c.arg("--previous-chunks").arg(p.join("chunks.tsv"));
        c.arg("--changed-out").arg(work.join("changed.tsv"));
    }
    succeeds(c.arg(repo));
    let sort = |out: &str, changed: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fsim-sort"));
        c.args(["-q", "-o"]).arg(work.join(out));
        if changed {
            c.arg("--changed").arg(work.join("changed.tsv"));
        }
        succeeds(c.arg(work.join("chunks.tsv")));
    };
    // Every record, or the changed chunks' from the earlier list.
    let part = |sorted: &str, out: &str, earlier: Option<&Path>| {
        let mut c = partition(&work.join("files.tsv"));
        c.args(limit);
        if let Some(p) = earlier {
            c.arg("--previous-dropped").arg(p.join("dropped.tsv"));
            c.arg("--changed").arg(work.join("changed.tsv"));
        }
        let dropped = if earlier.is_some() {
            "dropped-c.tsv"
        } else {
            "dropped.tsv"
        };
        c.arg("--dropped-out").arg(work.join(dropped));
        c.arg("-o").arg(work.join(out)).arg(work.join(sorted));
        c
    };
    sort("sorted.tsv", false);
    succeeds(&mut part("sorted.tsv", "partition.tsv", None));
    let p = prev?;
    assert!(
        work.join("changed.tsv").exists(),
        "no changed set in {}",
        work.display()
    );
    sort("sorted-c.tsv", true);
    Some(
        part("sorted-c.tsv", "partition-c.tsv", Some(p))
            .output()
            .unwrap(),
    )
}

/// The trailer's figures of what was dropped.
fn dropped_figures(partition: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(partition).unwrap();
    let trailer = text.lines().last().unwrap().to_string();
    trailer
        .split('\t')
        .filter(|kv| {
            ["dropped_", "pruned_files", "site_"]
                .iter()
                .any(|k| kv.starts_with(k))
        })
        .map(String::from)
        .collect()
}

/// Files added (one before every other, so every id moves) and removed
/// move the default limit (half the files) of a re-run of the changed
/// chunks alone: its dropped figures and list are a full partition's
/// while no chunk held by unchanged files lies between the two limits,
/// and it refuses with 3, naming the chunk, when one does.
#[test]
fn a_rerun_whose_file_count_moved_the_limit_is_exact_or_refused() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    // 20 files: each its own text, a block all hold (dropped at the limit
    // of 10) and, for the first 10, a block of their own (kept: 10 files).
    let common = block(1, 120);
    let shared = block(2, 120);
    for f in 0..20 {
        let own = block(100 + f, 60);
        let mid = if f < 10 { &shared[..] } else { "" };
        let text = format!("{own}{common}{mid}{}", block(200 + f, 60));
        std::fs::write(repo.join(format!("f{f:02}.txt")), text).unwrap();
    }
    let w0 = t.path().join("w0");
    assert!(limit_round(&repo, &w0, None).is_none());
    // 23 files: the limit is 11, nothing held by 10 or 11 files outside
    // the changed chunks.
    for name in ["0 first.txt", "g1.txt", "g2.txt"] {
        let text = format!("{}{common}", block(300 + u32::from(name.as_bytes()[1]), 60));
        std::fs::write(repo.join(name), text).unwrap();
    }
    let w1 = t.path().join("w1");
    let out = limit_round(&repo, &w1, Some(&w0)).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (full, mine) = (w1.join("partition.tsv"), w1.join("partition-c.tsv"));
    assert!(!dropped_figures(&full).is_empty());
    assert_eq!(dropped_figures(&mine), dropped_figures(&full));
    let dp = |name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(w1.join(name)).unwrap();
        text.lines()
            .filter(|l| l.starts_with("D\t") || l.starts_with("P\t"))
            .map(String::from)
            .collect()
    };
    assert_eq!(dp("dropped-c.tsv"), dp("dropped.tsv"));
    // 18 files: the limit is 9, and the shared block (10 files, none
    // changed) is dropped now: refused, naming a chunk of it.
    for f in 15..20 {
        std::fs::remove_file(repo.join(format!("f{f:02}.txt"))).unwrap();
    }
    let w2 = t.path().join("w2");
    let out = limit_round(&repo, &w2, Some(&w1)).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("held by 10 files is dropped at a limit of 11 files and kept at 9"),
        "{err}"
    );
    assert!(!w2.join("partition-c.tsv").exists());
    assert!(dropped_figures(&w2.join("partition.tsv"))
        .iter()
        .any(|f| f.starts_with("dropped_chunks=")));
}
