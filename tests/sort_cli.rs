//! fsim-sort end to end: the real binary against `LC_ALL=C sort`.

use fsim::records::{
    digest_params, write_header, write_trailer, ChunkRecord, Digest, Kind, Params,
};
use std::path::Path;
use std::process::{Command, Output};

fn params(avg: u32) -> Params {
    Params::new()
        .with("method", "tttd")
        .with("avg", avg)
        .with("hash", "md5")
}

/// A chunk file with header, trailer, duplicate lines, hash ties with
/// different files and lengths that order differently as text (12 < 119).
fn chunk_file(n: u64, seed: u64, avg: u32) -> Vec<u8> {
    let mut out = Vec::new();
    write_header(Kind::Chunks, &params(avg), &mut out);
    let mut d = Digest::default();
    let mut x = seed;
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = ChunkRecord {
            hash: if i % 3 == 0 {
                (x >> 60) as u128
            } else {
                fsim::records::mix128(x as u128)
            },
            file: ((x >> 20) % 50) as u32,
            len: [12, 119, 120, 1, 0, 1000][(x >> 40) as usize % 6],
        };
        let reps = if i % 17 == 0 { 2 } else { 1 };
        for _ in 0..reps {
            d.add(&r);
            r.write(&mut out);
        }
    }
    write_trailer(Kind::Chunks, &digest_params(&d, "records"), &mut out);
    out
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

fn fsim_sort() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fsim-sort"))
}

fn gnu_sort(input: &Path) -> Vec<u8> {
    let out = run(Command::new("sort").env("LC_ALL", "C").arg(input));
    assert!(out.status.success());
    out.stdout
}

#[test]
fn sort_matches_gnu_sort_in_memory_and_with_spills() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tsv");
    let b = dir.path().join("b.tsv");
    std::fs::write(&a, chunk_file(5000, 1, 1000)).unwrap();
    std::fs::write(&b, chunk_file(3000, 2, 1000)).unwrap();
    let both = dir.path().join("both.tsv");
    std::fs::write(
        &both,
        [std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap()].concat(),
    )
    .unwrap();
    let want = gnu_sort(&both);
    for mem in ["256M", "4K", "64K"] {
        let out_path = dir.path().join(format!("out-{mem}.tsv"));
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let out = run(fsim_sort()
            .args(["--memory", mem, "-o"])
            .arg(&out_path)
            .arg("--tmpdir")
            .arg(&tmp)
            .arg(&a)
            .arg(&b));
        assert!(out.status.success());
        assert_eq!(std::fs::read(&out_path).unwrap(), want, "--memory {mem}");
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "temp dir removed"
        );
        let summary = String::from_utf8_lossy(&out.stderr);
        assert!(summary.starts_with("fsim-sort: 8"), "{summary}");
        if mem == "256M" {
            assert!(summary.contains(" 0 runs spilled"), "{summary}");
        } else {
            assert!(!summary.contains(" 0 runs spilled"), "{summary}");
        }
    }
    // Standard input, standard output, quiet, multi-pass merge.
    let out = run(fsim_sort()
        .args(["-q", "--memory", "4K", "--fan-in", "2", "-"])
        .stdin(std::fs::File::open(&both).unwrap()));
    assert!(out.status.success());
    assert!(out.stderr.is_empty());
    assert_eq!(out.stdout, want);
}

#[test]
fn garbage_line_is_an_error_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.tsv");
    let mut data = chunk_file(10, 3, 1000);
    let text = String::from_utf8(data.clone()).unwrap();
    let third = text.match_indices('\n').nth(2).unwrap().0 + 1;
    data.splice(third..third, b"hello world\n".iter().copied());
    std::fs::write(&input, &data).unwrap();
    let target = dir.path().join("out.tsv");
    let out = run(fsim_sort().arg("-o").arg(&target).arg(&input));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "fsim-sort: {}:4: expected a chunk record: 32 lowercase hex digits, a tab, a 10-digit file id, a tab, a length\n",
            input.display()
        )
    );
    assert!(!target.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp output left"
    );
}

#[test]
fn truncated_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let full = chunk_file(100, 4, 1000);
    let lines: Vec<&[u8]> = full.split_inclusive(|&c| c == b'\n').collect();
    let target = dir.path().join("out.tsv");
    // Last line cut in the middle.
    let cut = dir.path().join("cut.tsv");
    std::fs::write(&cut, &full[..full.len() - 5]).unwrap();
    let out = run(fsim_sort().arg("-o").arg(&target).arg(&cut));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("last line has no newline: the file is truncated"),
        "{err}"
    );
    // A record removed.
    let removed = dir.path().join("removed.tsv");
    std::fs::write(&removed, [&lines[..5], &lines[6..]].concat().concat()).unwrap();
    let out = run(fsim_sort().arg("-o").arg(&target).arg(&removed));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("records read but the trailer announced"),
        "{err}"
    );
    // No trailer at all.
    let no_trailer = dir.path().join("notrailer.tsv");
    std::fs::write(&no_trailer, lines[..lines.len() - 1].concat()).unwrap();
    let out = run(fsim_sort().arg("-o").arg(&target).arg(&no_trailer));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no '#end chunks' trailer"));
    assert!(!target.exists());
}

#[test]
fn mixed_parameters_and_other_kinds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tsv");
    let b = dir.path().join("b.tsv");
    std::fs::write(&a, chunk_file(10, 5, 1000)).unwrap();
    std::fs::write(&b, chunk_file(10, 6, 100)).unwrap();
    let out = run(fsim_sort().arg(&a).arg(&b));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("fsim-sort: {}:1: records from runs with different parameters are mixed: avg=100 here but avg=1000 before\n", b.display())
    );
    let p = dir.path().join("p.tsv");
    std::fs::write(&p, "#fsim pairs v1\n").unwrap();
    let out = run(fsim_sort().arg(&p));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected a chunks file"));
}
