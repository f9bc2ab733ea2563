//! End-to-end tests of `fsim-chunk`: run the real binary in a temp dir and
//! check its outputs byte for byte.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fsim-chunk");

/// Deterministic text-like bytes (words from an LCG).
fn text(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(len);
    let words: [&[u8]; 16] = [
        b"the ",
        b"similar ",
        b"files ",
        b"chunk ",
        b"of ",
        b"repository ",
        b"and ",
        b"document ",
        b"hash ",
        b"a ",
        b"version ",
        b"large ",
        b"in ",
        b"to ",
        b"copy\n",
        b"memory ",
    ];
    while out.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let w = words[(x >> 60) as usize];
        out.extend_from_slice(w);
        if (x >> 50) & 3 == 0 {
            out.extend_from_slice(format!("{} ", (x >> 20) & 0xffff).as_bytes());
        }
    }
    out.truncate(len);
    out
}

/// Run the binary in `dir`; on demand print everything when it fails.
fn run(dir: &Path, args: &[&OsStr]) -> Output {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run fsim-chunk");
    out
}

fn ok(dir: &Path, args: &[&str]) -> Output {
    let a: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = run(dir, &a);
    assert!(
        out.status.success(),
        "fsim-chunk {args:?} failed: {:?}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn lines(b: &[u8]) -> Vec<&[u8]> {
    b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).collect()
}

fn data_lines(b: &[u8]) -> Vec<&[u8]> {
    lines(b).into_iter().filter(|l| l[0] != b'#').collect()
}

/// A small repository with nested directories and some shared content.
fn make_tree(root: &Path) {
    for i in 0..40u64 {
        let p = root.join(format!("d{}/sub{}/f{i:02}.txt", i % 3, i % 2));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut t = text(500 + (i as usize * 997) % 30000, i / 2);
        if i % 5 == 0 {
            t.insert(0, b'!');
        }
        fs::write(p, t).unwrap();
    }
    fs::write(root.join("empty"), b"").unwrap();
}

struct FileRow {
    id: String,
    size: u64,
    content: String,
    path: Vec<u8>,
}

fn file_rows(table: &[u8]) -> Vec<FileRow> {
    data_lines(table)
        .into_iter()
        .map(|l| {
            let e = fsim::formats::FileEntry::parse(l).expect("file entry parses");
            FileRow {
                id: fsim::formats::id_string(e.id),
                size: e.size,
                content: fsim::formats::hex128(e.content),
                path: e.path,
            }
        })
        .collect()
}

#[test]
fn output_identical_for_any_jobs() {
    let d = tempfile::tempdir().unwrap();
    make_tree(&d.path().join("t"));
    let mut outs = Vec::new();
    for j in ["1", "2", "4"] {
        let files = format!("files{j}.tsv");
        let o = ok(
            d.path(),
            &[
                "-j",
                j,
                "-q",
                "--avg-size",
                "1000",
                "--files-out",
                &files,
                "t",
            ],
        );
        assert!(o.stderr.is_empty());
        outs.push((o.stdout, fs::read(d.path().join(&files)).unwrap()));
    }
    assert!(data_lines(&outs[0].0).len() > 100);
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
    let table = &outs[0].1;
    assert!(table.starts_with(b"#fsim files v4\tmethod=tttd\tavg=1000\tmin=453\tmax=2759\tdiv=532\tdiv2=266\twindow=64\thash=md5\tcontent=auto\tviews=6\n"));
    assert!(lines(table)
        .last()
        .unwrap()
        .starts_with(b"#end files\tfiles=41\trecords="));
}

#[test]
fn ids_independent_of_creation_order() {
    let d = tempfile::tempdir().unwrap();
    let names = ["b", "a", "c/z", "c/a", "Z", "aa"];
    for (k, order) in [names.to_vec(), names.iter().rev().copied().collect()]
        .into_iter()
        .enumerate()
    {
        let root = d.path().join(format!("r{k}"));
        for n in order {
            let p = root.join("x").join(n);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, n.as_bytes()).unwrap();
        }
    }
    let a = ok(&d.path().join("r0"), &["-q", "x"]);
    let b = ok(&d.path().join("r1"), &["-q", "x"]);
    assert_eq!(a.stdout, b.stdout);
    let ta = fs::read(d.path().join("r0/files.tsv")).unwrap();
    let tb = fs::read(d.path().join("r1/files.tsv")).unwrap();
    let pa: Vec<Vec<u8>> = file_rows(&ta).into_iter().map(|r| r.path).collect();
    let pb: Vec<Vec<u8>> = file_rows(&tb).into_iter().map(|r| r.path).collect();
    assert_eq!(pa, pb);
    let expect: Vec<&[u8]> = vec![b"x/Z", b"x/a", b"x/aa", b"x/b", b"x/c/a", b"x/c/z"];
    assert_eq!(pa, expect);
}

#[test]
fn hostile_names_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    fs::create_dir(&t).unwrap();
    let names: [&[u8]; 4] = [b"new\nline", b"tab\there", b"bad\xffbyte", b"back\\slash"];
    for n in names {
        fs::write(t.join(OsStr::from_bytes(n)), n).unwrap();
    }
    ok(d.path(), &["-q", "-o", "c.tsv", "t"]);
    let rows = file_rows(&fs::read(d.path().join("files.tsv")).unwrap());
    let mut got: Vec<Vec<u8>> = rows.into_iter().map(|r| r.path).collect();
    let mut want: Vec<Vec<u8>> = names
        .iter()
        .map(|n| [b"t/".as_slice(), n].concat())
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn fifo_not_opened_and_symlink_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    fs::create_dir(&t).unwrap();
    fs::write(t.join("real"), b"real content\n").unwrap();
    let st = Command::new("mkfifo")
        .arg(t.join("fifo"))
        .status()
        .expect("mkfifo");
    assert!(st.success());
    std::os::unix::fs::symlink(t.join("real"), t.join("link")).unwrap();
    std::os::unix::fs::symlink(d.path(), t.join("dirlink")).unwrap();
    // If the FIFO were opened, this would block forever: run with a watchdog.
    let mut child = Command::new(BIN)
        .args(["-q", "-o", "c.tsv", "t"])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success());
            break;
        }
        if start.elapsed().as_secs() > 20 {
            child.kill().unwrap();
            panic!("fsim-chunk hung: it opened the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let rows = file_rows(&fs::read(d.path().join("files.tsv")).unwrap());
    let paths: Vec<Vec<u8>> = rows.iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, vec![b"t/real".to_vec()]);
    // With -L a link to a file of the root is not a second file (it is
    // read by its own name); the link up to the root's parent walks the
    // first run's outputs there, but not this run's own (nor their
    // temporary files), and leads back to the root's folder, walked once.
    let o = ok(
        d.path(),
        &["-q", "-L", "-o", "c2.tsv", "--files-out", "f2.tsv", "t"],
    );
    let rows = file_rows(&fs::read(d.path().join("f2.tsv")).unwrap());
    let paths: Vec<Vec<u8>> = rows.iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        vec![
            b"t/dirlink/c.tsv".to_vec(),
            b"t/dirlink/files.tsv".to_vec(),
            b"t/real".to_vec()
        ],
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn closed_pipe_exits_zero_quietly() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    fs::create_dir(&t).unwrap();
    // About 1.7 MB of records: more than the pipe and the output buffer hold.
    for i in 0..300 {
        fs::write(t.join(format!("f{i:03}")), text(100_000, i)).unwrap();
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ '{BIN}' t; echo $? > status; }} | head -1"))
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stdout.starts_with(b"#fsim chunks v1\t"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        fs::read_to_string(d.path().join("status")).unwrap().trim(),
        "0"
    );
    assert!(
        !d.path().join("files.tsv").exists(),
        "no file table after a closed pipe"
    );
}

#[test]
fn chunks_cover_each_file() {
    let d = tempfile::tempdir().unwrap();
    make_tree(&d.path().join("t"));
    let o = ok(d.path(), &["-q", "t"]);
    let rows = file_rows(&fs::read(d.path().join("files.tsv")).unwrap());
    let mut sums = vec![0u64; rows.len()];
    for l in data_lines(&o.stdout) {
        let r = fsim::formats::ChunkRecord::parse(l).unwrap();
        sums[r.file as usize] += r.len as u64;
    }
    for (r, s) in rows.iter().zip(&sums) {
        assert_eq!(r.size, *s, "{}", String::from_utf8_lossy(&r.path));
        assert_eq!(
            fs::metadata(d.path().join(OsStr::from_bytes(&r.path)))
                .unwrap()
                .len(),
            r.size
        );
    }
    // Trailer count and digest agree with the records.
    let mut dg = fsim::formats::Digest::default();
    for l in data_lines(&o.stdout) {
        dg.add(&fsim::formats::ChunkRecord::parse(l).unwrap());
    }
    let last = String::from_utf8(lines(&o.stdout).last().unwrap().to_vec()).unwrap();
    assert_eq!(
        last,
        format!(
            "#end chunks\trecords={}\tdigest={}",
            dg.count,
            fsim::formats::hex128(dg.sum)
        )
    );
}

#[test]
fn one_chunk_md5_matches_md5sum() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("small.txt"), b"hello, similar world\n").unwrap();
    let o = ok(d.path(), &["-q", "small.txt"]);
    let recs = data_lines(&o.stdout);
    assert_eq!(recs.len(), 1);
    let md5sum = Command::new("md5sum")
        .arg("small.txt")
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(&recs[0][..32], &md5sum.stdout[..32]);
    assert_eq!(&recs[0][32..], b"\t0000000000\t21");
}

#[test]
fn avg_100_gives_about_ten_times_the_records() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("big.txt"), text(2 << 20, 99)).unwrap();
    let a = data_lines(&ok(d.path(), &["-q", "--avg-size", "1000", "big.txt"]).stdout).len() as f64;
    let b = data_lines(
        &ok(
            d.path(),
            &[
                "-q",
                "--avg-size",
                "100",
                "--files-out",
                "f100.tsv",
                "big.txt",
            ],
        )
        .stdout,
    )
    .len() as f64;
    let ratio = b / a;
    assert!((7.0..13.0).contains(&ratio), "ratio {ratio} ({a} vs {b})");
    // Means near the target.
    assert!(((2 << 20) as f64 / a - 1000.0).abs() < 300.0);
    let o = run(
        d.path(),
        &[
            OsStr::new("--avg-size"),
            OsStr::new("31"),
            OsStr::new("big.txt"),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn missing_root_is_exit_2_and_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("a"), b"a").unwrap();
    let o = run(
        d.path(),
        &[
            OsStr::new("-o"),
            OsStr::new("c.tsv"),
            OsStr::new("a"),
            OsStr::new("nope"),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("fsim-chunk: nope: "));
    assert!(!d.path().join("c.tsv").exists());
    assert!(!d.path().join("files.tsv").exists());
}

#[test]
fn files_from_list_with_nul_and_newline() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("one"), b"1").unwrap();
    fs::write(d.path().join(OsStr::from_bytes(b"t\nwo")), b"2").unwrap();
    fs::write(d.path().join("list0"), b"one\0t\nwo\0missing\0").unwrap();
    let o = ok(
        d.path(),
        &["-q", "-0", "--files-from", "list0", "-o", "c.tsv"],
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: missing: "));
    let rows = file_rows(&fs::read(d.path().join("files.tsv")).unwrap());
    // The missing path is listed, with no bytes, for the reports.
    assert_eq!(
        rows.iter().map(|r| r.path.clone()).collect::<Vec<_>>(),
        vec![b"one".to_vec(), b"t\nwo".to_vec(), b"missing".to_vec()]
    );
    fs::write(d.path().join("list"), b"one\n").unwrap();
    ok(d.path(), &["-q", "--files-from", "list", "-o", "c.tsv"]);
    let rows = file_rows(&fs::read(d.path().join("files.tsv")).unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].content.len(), 32);
}

#[test]
fn records_after_files_table_and_files_from_stdin() {
    let d = tempfile::tempdir().unwrap();
    make_tree(&d.path().join("t"));
    fs::create_dir(d.path().join("out")).unwrap();
    let mut child = Command::new(BIN)
        .args([
            "-q",
            "--files-from",
            "-",
            "-o",
            "out/c.tsv",
            "--files-out",
            "out/f.tsv",
        ])
        .current_dir(d.path())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut i = child.stdin.take().unwrap();
        i.write_all(b"t/empty\nt/d0\n").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let names: Vec<PathBuf> = fs::read_dir(d.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(names.len(), 2, "no temp files left: {names:?}");
    let rows = file_rows(&fs::read(d.path().join("out/f.tsv")).unwrap());
    assert_eq!(rows[0].path, b"t/empty");
    assert_eq!(rows[0].content, "d41d8cd98f00b204e9800998ecf8427e");
    assert!(rows[1..].iter().all(|r| r.path.starts_with(b"t/d0/")));
}

#[test]
fn read_error_mid_file_lists_it_without_records() {
    // Reading /proc/self/mem at offset 0 fails with EIO: a read error after
    // a successful open, even for root.
    if !Path::new("/proc/self/mem").exists() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join("a"), b"aaa").unwrap();
    fs::write(d.path().join("b"), b"bbb").unwrap();
    let o = ok(d.path(), &["-o", "c.tsv", "a", "/proc/self/mem", "b"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("fsim-chunk: warning: /proc/self/mem: "),
        "{err}"
    );
    assert!(
        err.contains("3 files, 6 bytes, 2 chunks, 1 skipped"),
        "{err}"
    );
    let table = fs::read(d.path().join("files.tsv")).unwrap();
    let rows = file_rows(&table);
    assert_eq!(
        rows.iter()
            .map(|r| (r.id.as_str(), r.size, r.path.clone()))
            .collect::<Vec<_>>(),
        [
            ("0000000000", 3, b"a".to_vec()),
            ("0000000001", 0, b"/proc/self/mem".to_vec()),
            ("0000000002", 3, b"b".to_vec())
        ]
    );
    assert!(String::from_utf8_lossy(&table).contains("\traw^error\t"));
    let recs = fs::read(d.path().join("c.tsv")).unwrap();
    assert_eq!(data_lines(&recs).len(), 2);
}

/// `--consume-previous`: the earlier chunk file goes as it is read (this
/// run's records to standard output: none compared with it), and the
/// records are those of a run that only read it; a chunk file with
/// another name (a hard link) is only read; a run killed once it began
/// has no earlier file left, and the next, reading every file, writes a
/// fresh run's records.
#[test]
fn consume_previous_frees_the_earlier_records_and_writes_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    make_tree(&d.join("r"));
    ok(d, &["-q", "--files-out", "f0.tsv", "-o", "c0.tsv", "r"]);
    fs::write(d.join("r/d0/sub0/f00.txt"), text(7000, 99)).unwrap();
    let prev = ["--previous", "f0.tsv", "--previous-chunks"];
    let read_only = ok(
        d,
        &[
            &["-q"][..],
            &prev,
            &["c0.tsv", "--files-out", "f1.tsv", "-o", "-", "r"],
        ]
        .concat(),
    );
    let fresh = ok(d, &["-q", "--files-out", "f2.tsv", "-o", "-", "r"]);
    assert_eq!(read_only.stdout, fresh.stdout);
    assert!(d.join("c0.tsv").is_file(), "read without the flag: kept");

    // Another name: read, kept.
    fs::hard_link(d.join("c0.tsv"), d.join("linked.tsv")).unwrap();
    let consume = |chunks: &str, files_out: &str| {
        ok(
            d,
            &[
                &["-q", "--consume-previous"][..],
                &prev,
                &[chunks, "--files-out", files_out, "-o", "-", "r"],
            ]
            .concat(),
        )
    };
    assert_eq!(consume("c0.tsv", "f3.tsv").stdout, fresh.stdout);
    assert!(d.join("c0.tsv").is_file() && d.join("linked.tsv").is_file());
    fs::remove_file(d.join("linked.tsv")).unwrap();

    // One name: consumed, the same records.
    let said = consume("c0.tsv", "f4.tsv");
    assert_eq!(said.stdout, fresh.stdout);
    assert!(
        !d.join("c0.tsv").exists(),
        "the earlier records are still there"
    );

    // Killed after it began: no earlier file, and the redo of the same
    // command refuses it by name; without it every file is read.
    ok(d, &["-q", "--files-out", "f0.tsv", "-o", "c0.tsv", "r"]);
    fs::write(d.join("r/d1/sub1/f01.txt"), text(5000, 98)).unwrap();
    let args: Vec<&OsStr> = [&["-q", "--consume-previous"][..], &prev]
        .concat()
        .into_iter()
        .chain(["c0.tsv", "--files-out", "f5.tsv", "-o", "-", "r"])
        .map(OsStr::new)
        .collect();
    let killed = Command::new(BIN)
        .args(&args)
        .current_dir(d)
        .env("FSIM_TEST_ABORT", "fsim-chunk:2000")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!killed.status.success(), "not killed");
    assert!(
        !d.join("c0.tsv").exists(),
        "the earlier records outlived the kill"
    );
    let again = run(d, &args);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("c0.tsv"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let redo = ok(d, &["-q", "--files-out", "f6.tsv", "-o", "-", "r"]);
    let fresh = ok(d, &["-q", "--files-out", "f7.tsv", "-o", "-", "r"]);
    assert_eq!(redo.stdout, fresh.stdout);
}
