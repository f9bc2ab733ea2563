//! Hostile input: names no one expected, and things in the tree that are not
//! regular files. Names must go through every stage and come out escaped
//! (never interpreted) in every report; special files must never be opened.

use crate::common;

use common::*;
use fsim::formats::{escape_path_string, unescape_path};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

/// Deterministic text of `len` bytes.
fn text(len: usize, seed: u64) -> Vec<u8> {
    let words = [
        "alpha", "beta", "gamma", "delta", "report", "file", "copy", "of", "the", "and",
    ];
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.extend_from_slice(words[(x >> 33) as usize % words.len()].as_bytes());
        out.push(if (x >> 20).is_multiple_of(13) {
            b'\n'
        } else {
            b' '
        });
    }
    out.truncate(len);
    out
}

const HOSTILE: &[&[u8]] = &[
    b"new\nline.txt",
    b"tab\there.txt",
    b"back\\slash.txt",
    b"-leading-dash.txt",
    b"--files=x.txt",
    b"a=b.txt",
    b"<script>alert(1)<\\script>.txt",
    b"bad\xff\xfeutf8.txt",
    b"\"quoted\" & 'single'.txt",
];

/// The (escaped) paths of a file table, in id order.
fn table_paths(table: &str) -> Vec<&str> {
    table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit('\t').next().unwrap())
        .collect()
}

fn run_report(repo: &Path, work: &Path, format: &str) -> Vec<u8> {
    let mut c = fsim("fsim-report");
    c.args(["-q", "--format", format, "--files"])
        .arg(work.join("files.tsv"))
        .arg(work.join("pairs.tsv"));
    let _ = repo;
    run_ok(c, None).stdout
}

#[test]
fn hostile_names_are_escaped_in_every_report() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    // Names in pairs: one pair identical, the others near-duplicates (a
    // few copies only, so that no chunk is above the degree limit).
    let names: Vec<&[u8]> = HOSTILE.iter().copied().chain([&b"plain.txt"[..]]).collect();
    for (i, name) in names.iter().enumerate() {
        let mut data = text(20_000, 100 + i as u64 / 2);
        if i % 2 == 1 && i > 1 {
            data.extend_from_slice(&text(3_000, 7));
        }
        std::fs::write(repo.join(OsStr::from_bytes(name)), data).unwrap();
    }
    let work = t.path().join("work");
    let json = pipeline(&repo, &work, &[]);
    let prefix = format!("{}/", repo.display());
    let mut seen = Vec::new();
    for set in json["identical_sets"].as_array().unwrap() {
        for f in set["files"].as_array().unwrap() {
            seen.push(f.as_str().unwrap().to_string());
        }
    }
    for c in json["clusters"].as_array().unwrap() {
        for f in c["files"].as_array().unwrap() {
            seen.push(f["path"].as_str().unwrap().to_string());
        }
    }
    for name in HOSTILE {
        let esc = format!("{prefix}{}", escape_path_string(name));
        assert!(seen.contains(&esc), "{esc:?} not in {seen:?}");
        let raw = unescape_path(esc.as_bytes()).unwrap();
        assert!(raw.ends_with(name));
    }
    // The json report writes its files, links and lists itself: its bytes
    // are serde_json's pretty text of its value, closest relatives of a
    // reviewed cluster's files too.
    for extra in [&[][..], &["--review-files", "1"][..]] {
        let mut c = fsim("fsim-report");
        c.args(["-q", "--format", "json", "--files"])
            .arg(work.join("files.tsv"))
            .args(extra)
            .arg(work.join("pairs.tsv"));
        let text = String::from_utf8(run_ok(c, None).stdout).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string_pretty(&value).unwrap() + "\n", text);
        let reviewed = !extra.is_empty();
        assert_eq!(text.contains("\"closest\": ["), reviewed, "{extra:?}");
        assert!(text.contains("\\\"quoted\\\" & 'single'.txt"), "{text}");
    }
    // Text and TSV: one line per path, no raw control bytes, no raw tab in a path.
    for fmt in ["text", "tsv"] {
        let out = run_report(&repo, &work, fmt);
        let s = String::from_utf8(out).expect("reports are UTF-8");
        // The TSV report lists links only (not the identical pair 0-1).
        let skip = if fmt == "tsv" { 2 } else { 0 };
        for name in &HOSTILE[skip..] {
            assert!(
                s.contains(&escape_path_string(name)),
                "{fmt}: {:?} missing",
                escape_path_string(name)
            );
        }
        assert!(!s.contains("new\nline") && !s.contains("tab\there"));
        assert!(!s.bytes().any(|b| b < 0x20 && b != b'\n' && b != b'\t'));
    }
}

#[test]
fn special_files_links_and_empty_files() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let outside = t.path().join("outside.txt");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let body = text(30_000, 7);
    std::fs::write(repo.join("a.txt"), &body).unwrap();
    std::fs::write(&outside, text(5_000, 9)).unwrap();
    // A hard link: one file under two names, reported as such (no
    // identical set, nothing to reclaim).
    std::fs::hard_link(repo.join("a.txt"), repo.join("sub/hardlink.txt")).unwrap();
    std::fs::write(repo.join("empty1"), b"").unwrap();
    std::fs::write(repo.join("sub/empty2"), b"").unwrap();
    // A symlink loop, a link outside the tree, a dangling link.
    std::os::unix::fs::symlink("..", repo.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join("out-link")).unwrap();
    std::os::unix::fs::symlink("nowhere", repo.join("dangling")).unwrap();
    // A FIFO (opening it would block forever) and a socket.
    let st = Command::new("mkfifo")
        .arg(repo.join("fifo"))
        .status()
        .unwrap();
    assert!(st.success());
    let _sock = std::os::unix::net::UnixListener::bind(repo.join("sock")).unwrap();
    let work = t.path().join("work");
    let json = pipeline(&repo, &work, &[]);
    let table = std::fs::read_to_string(work.join("files.tsv")).unwrap();
    let paths = table_paths(&table);
    let p = |s: &str| format!("{}/{s}", repo.display());
    assert_eq!(
        paths,
        [
            p("a.txt"),
            p("empty1"),
            p("sub/empty2"),
            p("sub/hardlink.txt")
        ]
    );
    assert!(table.contains("\t0\t") && table.contains("\tempty\t"));
    assert_eq!(json["identical_sets"], serde_json::json!([]));
    assert_eq!(json["summary"]["overhead_bytes"], 0);
    let names = json["hard_links"][0]["names"].to_string();
    assert!(
        names.contains("hardlink.txt") && names.contains("a.txt"),
        "{names}"
    );
    // Following links (-L): the loop is warned about and skipped, the
    // outside file is read, the run completes.
    let mut c = fsim("fsim-chunk");
    c.args(["-L", "-o", "-", "--files-out"])
        .arg(work.join("fl.tsv"))
        .arg(&repo);
    let out = run_ok(c, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("file system loop"), "{err}");
    let fl = std::fs::read_to_string(work.join("fl.tsv")).unwrap();
    assert!(fl.contains("out-link"));
    // A device given as a root is not opened (it is not a regular file).
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "-o", "-", "--files-out"])
        .arg(work.join("dev.tsv"))
        .arg("/dev/zero");
    run_ok(c, None);
    assert!(std::fs::read_to_string(work.join("dev.tsv"))
        .unwrap()
        .contains("files=0"));
}

/// 100,000 entries in one directory: all chunked, in name order.
#[test]
fn a_directory_with_100000_entries() {
    let t = tempfile::tempdir().unwrap();
    let big = t.path().join("big");
    std::fs::create_dir_all(&big).unwrap();
    // touch through xargs: far fewer syscalls than a write per file.
    let st = Command::new("bash")
        .arg("-c")
        .arg("cd \"$1\" && seq -f 'f%06g' 0 99999 | xargs touch")
        .arg("sh")
        .arg(&big)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(big.join("f050000"), b"not empty").unwrap();
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "-o", "-", "--files-out"])
        .arg(t.path().join("f.tsv"))
        .arg(&big);
    run_ok(c, None);
    let table = std::fs::read_to_string(t.path().join("f.tsv")).unwrap();
    assert!(table.lines().last().unwrap().contains("files=100000"));
    let l = table.lines().nth(50_001).unwrap();
    assert!(
        l.starts_with("0000050000\t9\t") && l.ends_with("/f050000"),
        "{l}"
    );
}

/// Paths longer than PATH_MAX (4096 bytes): 20 levels of 250-byte names
/// (one with a tab, `<` and `&` in it), two near-identical files at the
/// bottom and a copy of one near the top. They are chunked (not skipped),
/// found similar and identical by the whole pipeline, verified exactly by
/// fsim-verify (which re-reads them), shown side by side in the HTML
/// report, and printed escaped everywhere.
#[test]
fn paths_longer_than_4096_bytes_are_chunked_found_and_verified() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let mut deep = repo.join("deep");
    for i in 0..20 {
        let head = if i == 10 {
            "10-tab\there<b>&".to_string()
        } else {
            format!("{i:02}-")
        };
        deep.push(format!("{head}{}", "d".repeat(250 - head.len())));
    }
    assert!(deep.as_os_str().len() > 5000);
    fsim::io::longpath::create_dir_all(&deep).unwrap();
    let body = text(20_000, 1);
    let mut near = body.clone();
    near.extend_from_slice(&text(3_000, 2));
    fsim::io::longpath::write(&deep.join("a.txt"), &body).unwrap();
    fsim::io::longpath::write(&deep.join("b.txt"), &near).unwrap();
    std::fs::create_dir(repo.join("top")).unwrap();
    std::fs::write(repo.join("top/copy.txt"), &body).unwrap();
    // Unrelated files, so that chunks in three files stay under the degree
    // limit (half the files).
    std::fs::create_dir(repo.join("other")).unwrap();
    for i in 0..5 {
        std::fs::write(repo.join(format!("other/f{i}")), text(5_000, 100 + i)).unwrap();
    }
    let esc = |p: &Path| escape_path_string(p.as_os_str().as_bytes());
    let (a, b, copy) = (
        esc(&deep.join("a.txt")),
        esc(&deep.join("b.txt")),
        esc(&repo.join("top/copy.txt")),
    );
    assert!(a.contains("10-tab\\there<b>&"));

    let work = t.path().join("work");
    let json = pipeline(&repo, &work, &[]);
    // Chunked, in walk order, none skipped.
    let table = std::fs::read_to_string(work.join("files.tsv")).unwrap();
    let paths = table_paths(&table);
    assert_eq!(
        [paths[0], paths[1], paths[7]],
        [a.as_str(), b.as_str(), copy.as_str()]
    );
    let trailer = table.lines().last().unwrap();
    assert!(
        trailer.starts_with("#end files\tfiles=8\t")
            && trailer.contains("\tskipped=0\ttable-digest="),
        "{trailer}"
    );
    // Identical: the copy near the top and the deep original.
    let sets = json["identical_sets"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "{sets:?}");
    assert_eq!(sets[0]["files"], serde_json::json!([a, copy]));
    // Similar: one cluster of the three, its paths unescaping to the bytes.
    let clusters = json["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{clusters:?}");
    let members: Vec<&str> = clusters[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(members.contains(&a.as_str()) && members.contains(&b.as_str()));
    assert_eq!(
        unescape_path(b.as_bytes()).unwrap(),
        deep.join("b.txt").as_os_str().as_bytes()
    );
    // fsim-verify read both deep files again (the copy is collapsed into
    // its identical set before analysis): exact, not stale.
    let verified =
        String::from_utf8(crate::common::read_records(&work.join("verified.tsv"))).unwrap();
    let rows: Vec<&str> = verified.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rows.len(), 1, "{verified}");
    assert!(
        rows[0].starts_with("0000000000\t0000000001\t20000\t23000\t")
            && rows[0].ends_with("\texact"),
        "{verified}"
    );
    // The text report prints the escaped path; the HTML report's side-by-side
    // views read the deep files.
    let report = String::from_utf8(run_report(&repo, &work, "text")).unwrap();
    assert!(report.contains(&b), "{report}");
    let html = String::from_utf8(run_report(&repo, &work, "html")).unwrap();
    assert!(!html.contains("cannot read the file now"));
    assert!(html.contains("\"status\":\"ok\""));
}

/// The copyright-header case: one chunk in every file. Partitioning drops it
/// (degree above the limit) and still splits the files into components.
#[test]
fn a_chunk_in_every_file_is_dropped_and_the_run_finishes() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let header = text(5_000, 100);
    for i in 0..40u64 {
        let mut d = header.clone();
        d.extend_from_slice(b"\n\n=== body ===\n");
        // Pairs of near-duplicates: files 2k and 2k+1 share their body.
        d.extend_from_slice(&text(20_000, 1000 + i / 2));
        d.extend_from_slice(&text(1_000, 5000 + i));
        std::fs::write(repo.join(format!("doc{i:02}.txt")), d).unwrap();
    }
    let work = t.path().join("work");
    let json = pipeline(&repo, &work, &[]);
    // 40 files are far under the degree floor: the header is kept, glues
    // every file into one component, and the report still shows only the
    // 20 planted pairs (the header is under the report's threshold).
    let part = String::from_utf8(read_records(&work.join("partition.tsv"))).unwrap();
    let trailer = part.lines().last().unwrap();
    assert!(
        trailer.contains("components=1\tdropped_chunks=0"),
        "{trailer}"
    );
    assert_eq!(json["clusters"].as_array().unwrap().len(), 20);
    assert_eq!(json["summary"]["pruned_chunks"], 0);
    // The paper's rule alone (no floor): the header is dropped, and the
    // report says so and how many files it touched.
    let json = rest_of_pipeline_with(&work, &["--degree-floor".into(), "0".into()], &[], &[]);
    let part = String::from_utf8(read_records(&work.join("partition.tsv"))).unwrap();
    let trailer = part.lines().last().unwrap();
    assert!(!trailer.contains("dropped_chunks=0"), "{trailer}");
    assert!(trailer.contains("components=20"), "{trailer}");
    assert!(trailer.contains("pruned_files=40"), "{trailer}");
    assert_eq!(json["clusters"].as_array().unwrap().len(), 20);
    assert!(json["summary"]["pruned_chunks"].as_u64().unwrap() > 0);
    assert_eq!(json["summary"]["pruned_files"], 40);
}

/// A sparse file over 4 GiB (zeros with a little text): sizes and lengths
/// past u32, chunked in bounded memory, chunk lengths add up to the size.
#[test]
fn a_sparse_file_over_4_gib() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("big");
    std::fs::create_dir(&dir).unwrap();
    let size: u64 = (4 << 30) + 12_345;
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::File::create(dir.join("sparse.bin")).unwrap();
        f.set_len(size).unwrap();
        for off in [0u64, 1 << 32, size - 100] {
            f.seek(SeekFrom::Start(off)).unwrap();
            f.write_all(b"some text in a sea of zeros\n").unwrap();
        }
    }
    let mut c = fsim("fsim-chunk");
    c.arg("-q")
        .arg("--files-out")
        .arg(t.path().join("f.tsv"))
        .arg("-o")
        .arg(t.path().join("c.tsv"))
        .arg(&dir);
    run_ok(c, None);
    let table = std::fs::read_to_string(t.path().join("f.tsv")).unwrap();
    let line = table.lines().find(|l| !l.starts_with('#')).unwrap();
    assert_eq!(line.split('\t').nth(1).unwrap(), size.to_string());
    let chunks = std::fs::read_to_string(t.path().join("c.tsv")).unwrap();
    let total: u64 = chunks
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.rsplit('\t').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, size);
}

/// Check a chunk run's outputs are consistent: every file's size in the
/// table equals the sum of its chunk lengths. Returns (paths, sizes).
fn consistent_outputs(files: &Path, chunks: &Path) -> Vec<(String, u64)> {
    let table = std::fs::read_to_string(files).unwrap();
    let mut sizes: Vec<(String, u64)> = Vec::new();
    for l in table.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = l.split('\t').collect();
        sizes.push((f[f.len() - 1].to_string(), f[1].parse().unwrap()));
    }
    let mut sums = vec![0u64; sizes.len()];
    for l in std::fs::read_to_string(chunks)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let f: Vec<&str> = l.split('\t').collect();
        sums[f[1].parse::<usize>().unwrap()] += f[2].parse::<u64>().unwrap();
    }
    for (i, (p, s)) in sizes.iter().enumerate() {
        assert_eq!(*s, sums[i], "{p}: size in the table vs its chunks");
    }
    sizes
}

/// Files truncated, grown and deleted, and a directory removed, while
/// fsim-chunk runs (timing is the machine's; the assertions hold whatever
/// the interleaving): the run completes, what was read is recorded
/// consistently, what vanished is warned about and counted.
#[test]
fn files_and_directories_changing_during_the_run() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(repo.join("a-big")).unwrap();
    let big = vec![b'x'; 64 << 20];
    let mut chunky = text(64 << 20, 3);
    chunky.extend_from_slice(&big[..1024]);
    std::fs::write(repo.join("a-big/shrinks.txt"), &chunky).unwrap();
    std::fs::write(repo.join("a-big/grows.txt"), &chunky).unwrap();
    for d in 0..4 {
        std::fs::create_dir_all(repo.join(format!("d{d}"))).unwrap();
        for i in 0..500 {
            std::fs::write(
                repo.join(format!("d{d}/f{i:03}.txt")),
                text(2000, (d * 1000 + i) as u64),
            )
            .unwrap();
        }
    }
    let mut c = std::process::Command::new(bin("fsim-chunk"));
    c.args(["-j", "1", "--files-out"])
        .arg(t.path().join("f.tsv"))
        .arg("-o")
        .arg(t.path().join("c.tsv"))
        .arg(&repo)
        .stderr(std::process::Stdio::piped());
    let child = c.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    // While it runs: shrink one big file, grow the other, delete files,
    // remove a whole directory.
    std::fs::OpenOptions::new()
        .write(true)
        .open(repo.join("a-big/shrinks.txt"))
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(repo.join("a-big/grows.txt"))
            .unwrap();
        f.write_all(&text(1 << 20, 9)).unwrap();
    }
    for i in (0..500).step_by(2) {
        let _ = std::fs::remove_file(repo.join(format!("d2/f{i:03}.txt")));
    }
    let _ = std::fs::remove_dir_all(repo.join("d3"));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let sizes = consistent_outputs(&t.path().join("f.tsv"), &t.path().join("c.tsv"));
    // Every file in the table was read whole as it was at that moment.
    for (p, s) in &sizes {
        if p.ends_with("shrinks.txt") {
            assert!(
                *s == chunky.len() as u64 || *s <= chunky.len() as u64,
                "{p} {s}"
            );
        } else if p.ends_with("grows.txt") {
            assert!(
                *s >= chunky.len() as u64 && *s <= chunky.len() as u64 + (1 << 20),
                "{p} {s}"
            );
        } else if *s == 0 {
            // Gone between the walk and the read: listed with no bytes.
            let table = std::fs::read_to_string(t.path().join("f.tsv")).unwrap();
            let line = table
                .lines()
                .find(|l| l.ends_with(&format!("\t{p}")))
                .unwrap();
            assert!(line.contains("\traw^"), "{line}");
        } else {
            assert_eq!(*s, 2000, "{p}");
        }
    }
    // What vanished between the walk and the read is warned about and
    // counted; the summary's skipped count matches the warnings.
    let warnings = stderr.lines().filter(|l| l.contains(": warning: ")).count();
    let summary = stderr.lines().last().unwrap_or_default();
    assert!(
        summary.contains(&format!(" {warnings} skipped")),
        "{stderr}"
    );
    let listed: std::collections::HashSet<&str> = sizes.iter().map(|(p, _)| p.as_str()).collect();
    for d in 0..2 {
        for i in 0..500 {
            let p = repo.join(format!("d{d}/f{i:03}.txt"));
            assert!(
                listed.contains(p.to_str().unwrap()),
                "{} missing",
                p.display()
            );
        }
    }
}
