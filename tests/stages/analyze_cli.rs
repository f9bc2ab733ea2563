//! fsim-analyze end to end: hand-written partition → fsim-binpack →
//! fsim-analyze, in memory and out of core. The chunk analysis alone
//! (`--no-line-source`: the partitions have no file table; the line source
//! is tests/stages/line_source.rs).

use crate::common;
use common::*;
use fsim::formats;

const BINPACK: &str = env!("CARGO_BIN_EXE_fsim-binpack");
const ANALYZE: &str = env!("CARGO_BIN_EXE_fsim-analyze");

/// The pairs of the example (see common::example), computed by hand:
/// 1-2: A 100 + B 200 + C min(2,1)×50 = 350 in 3 chunks (5 is a copy of 1,
/// collapsed); 3-4: D 300 + E 100; in component 6, F (500) links all, G, H
/// and I add to 6-7, 8-9 and 7-8.
const PAIRS: &[(u32, u32, u64, u64, u64, u32)] = &[
    (1, 2, 1000, 800, 350, 3),
    (3, 4, 500, 600, 400, 2),
    (6, 7, 2000, 2000, 900, 2),
    (6, 8, 2000, 2000, 500, 1),
    (6, 9, 2000, 2000, 500, 1),
    (7, 8, 2000, 2000, 750, 2),
    (7, 9, 2000, 2000, 500, 1),
    (8, 9, 2000, 2000, 800, 2),
];

fn expected(pairs: &[(u32, u32, u64, u64, u64, u32)], header: &str) -> String {
    let mut s = format!("{header}\n");
    let mut d = 0u128;
    for &(a, b, sa, sb, c, n) in pairs {
        s += &format!(
            "{}\t{}\t{sa}\t{sb}\t{c}\t{n}\n",
            formats::id_string(a),
            formats::id_string(b)
        );
        d = d.wrapping_add(formats::mix128(
            ((a as u128) << 96) | ((b as u128) << 64) | c as u128,
        ));
    }
    s + &format!(
        "#end pairs\tpairs={}\tdigest={}\n",
        pairs.len(),
        formats::hex128(d)
    )
}

const HEADER: &str =
    "#fsim pairs v1\tmethod=tttd\tavg=1000\tdegree-limit=10\tpruned-chunks=1\tmin-bytes=0\tmin-percent=10\tpercent-of=smaller";

#[test]
fn exact_pairs_in_memory_oversized_and_forced_spill() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.tsv"), example()).unwrap();
    run(
        BINPACK,
        &["-o", "b1100.tsv", "--capacity", "1100", "-q", "p.tsv"],
        d,
        true,
    );
    run(
        BINPACK,
        &["-o", "b700.tsv", "--capacity", "700", "-q", "p.tsv"],
        d,
        true,
    );
    let want = expected(PAIRS, HEADER);

    let out = run(
        ANALYZE,
        &["--no-line-source", "-o", "pairs.tsv", "b1100.tsv"],
        d,
        true,
    );
    assert_eq!(read(d, "pairs.tsv"), want);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "2 bins (0 out of core), 9 files, 23 records, 1 identical files collapsed, 8 pairs"
        ),
        "{err}"
    );

    // The oversized component (bin 1 at capacity 700) is analysed out of core.
    let out = run(
        ANALYZE,
        &[
            "--no-line-source",
            "-o",
            "pairs700.tsv",
            "--capacity",
            "700",
            "-j",
            "1",
            "b700.tsv",
        ],
        d,
        true,
    );
    assert_eq!(read(d, "pairs700.tsv"), want);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("3 bins (1 out of core)"), "{err}");

    for args in [
        &["--force-spill", "-j", "2"][..],
        &["-j", "4"][..],
        &["--capacity", "1", "-j", "1"][..],
    ] {
        let mut a = args.to_vec();
        a.extend(["-q", "--no-line-source", "b1100.tsv"]);
        let out = run(ANALYZE, &a, d, true);
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{args:?}");
        assert!(out.stderr.is_empty());
    }

    // Standard input in, standard output out.
    let out = std::process::Command::new(ANALYZE)
        .args(["-q", "--no-line-source", "--force-spill"])
        .stdin(std::fs::File::open(d.join("b700.tsv")).unwrap())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
}

#[test]
fn thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.tsv"), example()).unwrap();
    run(BINPACK, &["-o", "b.tsv", "-q", "p.tsv"], d, true);
    // At least 40% of the smaller file: 350/800 = 43.75% kept, 400/500 kept,
    // 900 and 800 of 2000 kept, 750 and 500 of 2000 not.
    let out = run(
        ANALYZE,
        &["--no-line-source", "-q", "--min-percent", "40", "b.tsv"],
        d,
        true,
    );
    let keep: Vec<_> = PAIRS
        .iter()
        .copied()
        .filter(|p| p.4 * 100 >= 40 * p.2.min(p.3))
        .collect();
    assert_eq!(keep.len(), 4);
    let h = HEADER.replace("min-percent=10", "min-percent=40");
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected(&keep, &h));
    // Of the larger file: 350/1000 < 40%, 400/600 kept, 900 and 800 of 2000 kept.
    let out = run(
        ANALYZE,
        &[
            "--no-line-source",
            "-q",
            "--min-percent",
            "40",
            "--percent-of",
            "larger",
            "b.tsv",
        ],
        d,
        true,
    );
    let keep: Vec<_> = PAIRS
        .iter()
        .copied()
        .filter(|p| p.4 * 100 >= 40 * p.2.max(p.3))
        .collect();
    assert_eq!(keep.len(), 3);
    let h = h.replace("smaller", "larger");
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected(&keep, &h));
    // Bytes: at least 750.
    let out = run(
        ANALYZE,
        &[
            "--no-line-source",
            "-q",
            "--min-bytes",
            "750",
            "--min-percent",
            "0",
            "b.tsv",
        ],
        d,
        true,
    );
    let keep: Vec<_> = PAIRS.iter().copied().filter(|p| p.4 >= 750).collect();
    let h = HEADER.replace(
        "min-bytes=0\tmin-percent=10",
        "min-bytes=750\tmin-percent=0",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected(&keep, &h));
}

#[test]
fn truncated_input_names_file_and_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.tsv"), example()).unwrap();
    run(
        BINPACK,
        &["-o", "b.tsv", "--capacity", "800", "-q", "p.tsv"],
        d,
        true,
    );
    let text = std::fs::read(d.join("b.tsv")).unwrap();
    let starts: Vec<usize> = text
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    // Cut inside line 7.
    std::fs::write(d.join("cut.tsv"), &text[..starts[5] + 30]).unwrap();
    let out = run(
        ANALYZE,
        &["--no-line-source", "-o", "pairs.tsv", "cut.tsv"],
        d,
        false,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "fsim-analyze: cut.tsv:7: last line has no newline: the file is truncated\n"
    );
    assert!(!d.join("pairs.tsv").exists());
    // Cut after a whole line, in the middle of bin 1.
    std::fs::write(d.join("cut.tsv"), &text[..starts[8]]).unwrap();
    let out = run(
        ANALYZE,
        &["--no-line-source", "-o", "pairs.tsv", "cut.tsv"],
        d,
        false,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("fsim-analyze: cut.tsv:9: bin 1 (line 2) announced records=10 but has 3"),
        "{err}"
    );
    assert!(!d.join("pairs.tsv").exists());
    // A record edited: the digest does not match.
    let s = String::from_utf8(text)
        .unwrap()
        .replacen("\t500\n", "\t501\n", 4);
    std::fs::write(d.join("edit.tsv"), s).unwrap();
    let out = run(
        ANALYZE,
        &["--no-line-source", "-o", "pairs.tsv", "edit.tsv"],
        d,
        false,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("edit.tsv:") && err.contains("digest"), "{err}");
    assert!(!d.join("pairs.tsv").exists());
}

/// A header value that is not what its key holds stops the reader with the
/// file, the line, the key and what was expected (typed header parameters,
/// src/formats/headers.rs), instead of reading as absent.
#[test]
fn malformed_header_value_names_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("p.tsv"), example()).unwrap();
    run(
        BINPACK,
        &["-o", "b.tsv", "--capacity", "800", "-q", "p.tsv"],
        d,
        true,
    );
    let text = std::fs::read_to_string(d.join("b.tsv")).unwrap();
    assert!(text.contains("\tcapacity=800\t") || text.contains("\tcapacity=800\n"));
    std::fs::write(
        d.join("bad.tsv"),
        text.replacen("capacity=800", "capacity=8x", 1),
    )
    .unwrap();
    let out = run(
        ANALYZE,
        &["--no-line-source", "-o", "pairs.tsv", "bad.tsv"],
        d,
        false,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "fsim-analyze: bad.tsv:1: header parameter capacity=\"8x\": expected a whole number\n"
    );
    assert!(!d.join("pairs.tsv").exists());
}

/// A component whose 2,000 files all share one chunk gives 1,999,000 pairs
/// (80 MB as in-memory pairs): with `--capacity 8M`, fsim-analyze keeps
/// 2 MB of them and spills the rest, so its peak RSS stays small, and the
/// pairs file still holds every pair, in order.
#[test]
fn pairs_beyond_the_capacity_spill_and_memory_stays_bounded() {
    if !own_process(
        module_path!(),
        "pairs_beyond_the_capacity_spill_and_memory_stays_bounded",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    const N: u32 = 2000;
    let files: Vec<PFile> = (0..N)
        .map(|id| PFile {
            id,
            comp: 0,
            size: 1000,
            content: 0x1000 + id as u128,
        })
        .collect();
    let mut recs: Vec<(u128, u32, u32)> = (0..N).map(|f| (7, f, 100)).collect();
    recs.extend((0..N).map(|f| (0x10_0000 + f as u128, f, 900)));
    std::fs::write(d.join("p.tsv"), partition_text(&files, &recs)).unwrap();
    run(BINPACK, &["-o", "b.tsv", "-q", "p.tsv"], d, true);
    let mut c = std::process::Command::new(ANALYZE);
    c.current_dir(d).args([
        "-q",
        "--no-line-source",
        "--capacity",
        "8M",
        "--tmpdir",
        ".",
        "-j",
        "2",
        "--min-percent",
        "10",
        "b.tsv",
    ]);
    let (ok, rss_kib) = run_rss(c, &d.join("pairs.tsv"));
    assert!(ok);
    assert!(rss_kib < 40 * 1024, "fsim-analyze peak RSS {rss_kib} KiB");
    let text = String::from_utf8(crate::common::read_records(&d.join("pairs.tsv"))).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len() as u32, N * (N - 1) / 2);
    assert_eq!(lines[0], "0000000000\t0000000001\t1000\t1000\t100\t1");
    assert_eq!(lines[1], "0000000000\t0000000002\t1000\t1000\t100\t1");
    assert_eq!(
        *lines.last().unwrap(),
        "0000001998\t0000001999\t1000\t1000\t100\t1"
    );
    assert!(lines.windows(2).all(|w| w[0] < w[1]), "pairs out of order");
    assert!(text.contains(&format!("#end pairs\tpairs={}\t", N * (N - 1) / 2)));
}
