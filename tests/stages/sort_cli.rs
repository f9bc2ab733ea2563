//! fsim-sort end to end: the real binary against `LC_ALL=C sort`.

use fsim::formats::{
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
                fsim::formats::mix128(x as u128)
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

/// Records per run at `--memory 4K`: 4096 / 24 bytes.
const RUN_4K: u64 = 170;

/// Two inputs sorted plainly: the reference output.
fn two_inputs(d: &Path) -> Vec<u8> {
    std::fs::write(d.join("a.tsv"), chunk_file(1000, 11, 100)).unwrap();
    std::fs::write(d.join("b.tsv"), chunk_file(1000, 12, 100)).unwrap();
    let out = run(fsim_sort()
        .current_dir(d)
        .args(["--memory", "4K", "-o", "ref.tsv", "a.tsv", "b.tsv"]));
    assert!(out.status.success());
    std::fs::read(d.join("ref.tsv")).unwrap()
}

/// fsim-sort with `--resume-dir runs` on the two inputs; extra environment.
fn resumable(d: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = fsim_sort();
    c.current_dir(d)
        .args(["--memory", "4K", "--resume-dir", "runs", "-o", "out.tsv"])
        .args(["a.tsv", "b.tsv"]);
    for (k, v) in env {
        c.env(k, v);
    }
    run(&mut c)
}

/// The summary line's counts: (records, sorted, resumed, runs spilled).
fn counts(out: &Output) -> (u64, u64, u64, u64) {
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("fsim-sort: ") && l.contains(" records ("))
        .unwrap_or_else(|| panic!("no summary in {err}"));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    // records, sorted, resumed, header lines, runs spilled, seconds...
    (nums[0], nums[1], nums[2], nums[4])
}

/// Killed after its 8th run (1,360 records, past the end of the first
/// input): the re-run keeps those runs, reads only the rest (seeking into
/// the second input), and writes the bytes of a plain sort. A run file
/// written but never journaled is overwritten; other files in the directory
/// are left alone (and so is the directory).
#[test]
fn a_killed_sort_resumes_after_its_last_finished_run() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let want = two_inputs(d);
    let total = counts(&run(fsim_sort()
        .current_dir(d)
        .args(["--memory", "4K", "-o", "-", "a.tsv", "b.tsv"])))
    .0;
    let first = resumable(d, &[("FSIM_TEST_ABORT_RUN", "fsim-sort:8")]);
    assert!(!first.status.success());
    assert!(!d.join("out.tsv").exists());
    let journal = std::fs::read_to_string(d.join("runs/journal")).unwrap();
    assert_eq!(
        journal.lines().filter(|l| l.starts_with("run\t")).count(),
        8
    );
    assert!(journal.contains("\nat\t1\t"), "{journal}");
    std::fs::write(d.join("runs/run000009.bin"), b"half a run").unwrap();
    std::fs::write(d.join("runs/notes.txt"), b"mine").unwrap();
    let second = resumable(d, &[]);
    assert!(second.status.success());
    let resumed = 8 * RUN_4K;
    assert_eq!(
        counts(&second),
        (
            total,
            total - resumed,
            resumed,
            (total - resumed).div_ceil(RUN_4K)
        )
    );
    assert!(std::fs::read(d.join("out.tsv")).unwrap() == want);
    let left: Vec<_> = std::fs::read_dir(d.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["notes.txt"]);
}

/// Killed while merging (the output half written): every run is kept, the
/// re-run reads no input record and spills nothing, same bytes; the
/// resume directory is gone afterwards.
#[test]
fn a_sort_killed_while_merging_reads_nothing_again() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let want = two_inputs(d);
    let first = resumable(d, &[("FSIM_TEST_ABORT", "fsim-sort:40000")]);
    assert!(!first.status.success());
    assert!(!d.join("out.tsv").exists());
    let second = resumable(d, &[]);
    assert!(second.status.success());
    let (total, sorted, resumed, spilled) = counts(&second);
    assert_eq!((sorted, resumed, spilled), (0, total, 0));
    assert!(std::fs::read(d.join("out.tsv")).unwrap() == want);
    assert!(!d.join("runs").exists());
}

/// A journal that does not fit (an input changed, another --memory) is
/// not used: one warning, everything sorted again, same bytes. Standard
/// input cannot be resumed.
#[test]
fn a_journal_that_does_not_fit_is_not_used() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let want = two_inputs(d);
    assert!(!resumable(d, &[("FSIM_TEST_ABORT_RUN", "fsim-sort:3")])
        .status
        .success());
    let f = std::fs::File::options()
        .write(true)
        .open(d.join("b.tsv"))
        .unwrap();
    f.set_modified(std::time::SystemTime::UNIX_EPOCH).unwrap();
    drop(f);
    let again = resumable(d, &[]);
    assert!(again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.starts_with(
        "fsim-sort: warning: runs/journal: written for other inputs, or an input changed since (size or mtime): sorting from the start\n"
    ), "{err}");
    assert_eq!(counts(&again).2, 0);
    assert!(std::fs::read(d.join("out.tsv")).unwrap() == want);

    assert!(!resumable(d, &[("FSIM_TEST_ABORT_RUN", "fsim-sort:3")])
        .status
        .success());
    let other = run(fsim_sort().current_dir(d).args([
        "--memory",
        "8K",
        "--resume-dir",
        "runs",
        "-o",
        "out.tsv",
        "a.tsv",
        "b.tsv",
    ]));
    assert!(String::from_utf8_lossy(&other.stderr)
        .contains("runs/journal: written with --memory 4096, this sort has 8192"));
    assert_eq!(counts(&other).2, 0);
    assert!(std::fs::read(d.join("out.tsv")).unwrap() == want);

    let stdin = run(fsim_sort()
        .current_dir(d)
        .args(["--resume-dir", "runs", "-o", "x.tsv"])
        .stdin(std::process::Stdio::null()));
    assert_eq!(stdin.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&stdin.stderr),
        "fsim-sort: --resume-dir needs input files: standard input cannot be read again\n"
    );
}

/// `--changed`: the records of the set's chunks, every file's, in the
/// order `LC_ALL=C sort` gives them, the trailer counting those kept and
/// every record read; a set written with other records is refused,
/// nothing written.
#[test]
fn changed_keeps_the_records_of_the_set_and_refuses_another_runs_set() {
    use fsim::formats::changed::ChangedSet;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("chunks.tsv");
    let data = chunk_file(2000, 7, 100);
    std::fs::write(&input, &data).unwrap();
    let text = String::from_utf8(data.clone()).unwrap();
    let records: Vec<ChunkRecord> = text
        .lines()
        .filter_map(|l| ChunkRecord::parse(l.as_bytes()))
        .collect();
    let mut all = Digest::default();
    records.iter().for_each(|r| all.add(r));
    // Every fifth distinct hash is a changed chunk.
    let mut hashes: Vec<u128> = records.iter().map(|r| r.hash).collect();
    hashes.sort_unstable();
    hashes.dedup();
    let hashes: Vec<u128> = hashes.into_iter().step_by(5).collect();
    let set = |of: &Digest| ChangedSet {
        params: params(100).merged(&digest_params(of, "records")),
        files: vec![1],
        moves: vec![],
        hashes: hashes.clone(),
    };
    let changed = dir.path().join("changed.tsv");
    std::fs::write(&changed, set(&all).to_bytes()).unwrap();
    let out = dir.path().join("sorted.tsv");
    let o = run(fsim_sort()
        .args(["-q", "--changed"])
        .arg(&changed)
        .arg("-o")
        .arg(&out)
        .arg(&input));
    assert!(o.status.success());
    let got = String::from_utf8(std::fs::read(&out).unwrap()).unwrap();
    let mut want: Vec<String> = text
        .lines()
        .filter(|l| {
            ChunkRecord::parse(l.as_bytes()).is_some_and(|r| hashes.binary_search(&r.hash).is_ok())
        })
        .map(String::from)
        .collect();
    want.sort();
    let kept: Vec<&str> = got.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(kept, want);
    assert!(!kept.is_empty() && kept.len() < records.len());
    let trailer = got.lines().find(|l| l.starts_with("#end chunks")).unwrap();
    assert!(
        trailer.contains(&format!("\trecords={}\t", kept.len())),
        "{trailer}"
    );
    assert!(
        trailer.contains(&format!("\tall-records={}\t", records.len())),
        "{trailer}"
    );
    let header = got.lines().find(|l| l.starts_with("#fsim chunks")).unwrap();
    assert!(
        header.ends_with(&format!("\tchanged-only={}", hashes.len())),
        "{header}"
    );
    // A set of other records: refused, nothing written.
    std::fs::remove_file(&out).unwrap();
    let other = Digest {
        count: all.count,
        sum: all.sum ^ 1,
    };
    std::fs::write(&changed, set(&other).to_bytes()).unwrap();
    let o = run(fsim_sort()
        .arg("--changed")
        .arg(&changed)
        .arg("-o")
        .arg(&out)
        .arg(&input));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("a changed set of another run"), "{err}");
    assert!(!out.exists());
}
