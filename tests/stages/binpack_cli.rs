//! fsim-binpack end to end on a hand-written partition file.

use crate::common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

const BINPACK: &str = env!("CARGO_BIN_EXE_fsim-binpack");

/// Bins of a bins file: number → (#bin line, F-line ids, record lines).
fn parse_bins(text: &str) -> BTreeMap<u64, (String, Vec<u32>, Vec<String>)> {
    let mut bins = BTreeMap::new();
    let mut cur = 0;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("#bin\t") {
            cur = rest.split('\t').next().unwrap().parse().unwrap();
            bins.insert(cur, (line.to_string(), vec![], vec![]));
        } else if let Some(rest) = line.strip_prefix("F\t") {
            bins.get_mut(&cur)
                .unwrap()
                .1
                .push(rest[..10].parse().unwrap());
        } else if !line.starts_with('#') {
            bins.get_mut(&cur).unwrap().2.push(line.to_string());
        }
    }
    bins
}

#[test]
fn plan_and_bins_at_two_capacities() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.tsv"), example()).unwrap();
    // 1100 bytes: component 6 (864) opens bin 1, component 1 (672) does not
    // fit beside it and opens bin 2, component 3 (416) joins bin 2.
    let out = run(
        BINPACK,
        &[
            "-o",
            "b.tsv",
            "--capacity",
            "1100",
            "--plan",
            "plan.tsv",
            "p.tsv",
        ],
        dir.path(),
        true,
    );
    assert_eq!(read(dir.path(), "plan.tsv"), "bin\tcomponents\tfiles\trecords\tmemory\toversized\n1\t1\t4\t10\t864\t0\n2\t2\t5\t13\t1088\t0\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("total"), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let text = read(dir.path(), "b.tsv");
    assert!(
        text.starts_with("#fsim bins v1\tmethod=tttd\tavg=1000\tdegree-limit=10\tpruned-chunks=1\tbins=2\tcapacity=1100\n"),
        "{text}"
    );
    let bins = parse_bins(&text);
    assert_eq!(
        bins[&1].0,
        "#bin\t1\tfiles=4\trecords=10\tmemory=864\toversized=0"
    );
    assert_eq!(bins[&1].1, vec![6, 7, 8, 9]);
    assert_eq!(
        bins[&2].0,
        "#bin\t2\tfiles=5\trecords=13\tmemory=1088\toversized=0"
    );
    assert_eq!(bins[&2].1, vec![1, 2, 3, 4, 5]);
    // Every file in exactly one bin, records still in hash order, all kept.
    let mut all: Vec<u32> = bins.values().flat_map(|b| b.1.clone()).collect();
    all.sort();
    assert_eq!(all, (1..=9).collect::<Vec<_>>());
    for (_, _, recs) in bins.values() {
        assert!(recs.windows(2).all(|w| w[0] <= w[1]));
    }
    assert_eq!(bins.values().map(|b| b.2.len()).sum::<usize>(), 23);
    assert!(text
        .lines()
        .last()
        .unwrap()
        .starts_with("#end bins\trecords=23\tdigest="));
    assert!(text.ends_with("\tbins=2\tfiles=9\n"));

    // 700 bytes: component 6 is oversized, the others get a bin each.
    let out = run(
        BINPACK,
        &[
            "-o",
            "b2.tsv",
            "--capacity",
            "700",
            "--plan",
            "plan2.tsv",
            "-q",
            "p.tsv",
        ],
        dir.path(),
        true,
    );
    assert_eq!(
        read(dir.path(), "plan2.tsv"),
        "bin\tcomponents\tfiles\trecords\tmemory\toversized\n1\t1\t4\t10\t864\t1\n2\t1\t3\t9\t672\t0\n3\t1\t2\t4\t416\t0\n"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "fsim-binpack: warning: component of file 0000000006: 864 B estimated > capacity 700 B: fsim-analyze will process it out of core\n"
    );
    let bins = parse_bins(&read(dir.path(), "b2.tsv"));
    assert_eq!(bins.len(), 3);
    assert!(bins[&1].0.ends_with("oversized=1"));
    for (head, _, _) in bins.values() {
        let mem: u64 = head
            .split("memory=")
            .nth(1)
            .unwrap()
            .split('\t')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(mem <= 700 || head.ends_with("oversized=1"), "{head}");
    }
}

/// The partition file of `n` two-file components, one shared chunk each.
fn two_file_components(n: u32) -> Vec<u8> {
    let mut files = vec![];
    let mut recs = vec![];
    for c in 0..n {
        let (x, y) = (2 * c, 2 * c + 1);
        for id in [x, y] {
            files.push(PFile {
                id,
                comp: x,
                size: 100,
                content: id as u128,
            });
            recs.push((1000 + c as u128, id, 40));
        }
    }
    partition_text(&files, &recs)
}

#[test]
fn more_bins_than_open_files() {
    // 300 two-file components at a capacity that fits one each: several
    // routing passes of at most 256 open bins.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.tsv"), two_file_components(300)).unwrap();
    run(
        BINPACK,
        &["-o", "b.tsv", "--capacity", "300", "-q", "p.tsv"],
        dir.path(),
        true,
    );
    let bins = parse_bins(&read(dir.path(), "b.tsv"));
    assert_eq!(bins.len(), 300);
    for (n, (_, ids, recs)) in &bins {
        // FFD with equal sizes keeps component id order.
        let c = *n as u32 - 1;
        assert_eq!(ids, &vec![2 * c, 2 * c + 1]);
        assert_eq!(recs.len(), 2);
    }
}

/// `--seal`: a slice of consecutive bins becomes a bins file that
/// fsim-analyze accepts (its own header, count and digest), and the slice
/// of every bin gives the bins file back byte for byte.
#[test]
fn sealed_slices_are_bins_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.tsv"), two_file_components(10)).unwrap();
    run(
        BINPACK,
        &["-o", "b.tsv", "--capacity", "300", "-q", "p.tsv"],
        dir.path(),
        true,
    );
    let whole = read(dir.path(), "b.tsv");
    let lines: Vec<&str> = whole.lines().collect();
    let body = |from: usize, to: usize| -> String {
        let mut bin = 0;
        let mut out = String::new();
        for l in &lines[1..lines.len() - 1] {
            bin += l.starts_with("#bin\t") as usize;
            if (from..=to).contains(&bin) {
                out += l;
                out.push('\n');
            }
        }
        out
    };
    std::fs::write(dir.path().join("all.tsv"), body(1, 10)).unwrap();
    run(
        BINPACK,
        &["--seal", "b.tsv", "-o", "s.tsv", "all.tsv"],
        dir.path(),
        true,
    );
    assert_eq!(read(dir.path(), "s.tsv"), whole);

    std::fs::write(dir.path().join("part.tsv"), body(4, 6)).unwrap();
    run(
        BINPACK,
        &["--seal", "b.tsv", "-o", "s.tsv", "part.tsv"],
        dir.path(),
        true,
    );
    let sealed = read(dir.path(), "s.tsv");
    assert!(
        sealed.starts_with(&lines[0].replace("bins=10", "bins=3")),
        "{sealed}"
    );
    assert!(sealed.contains("\tbins=3\tfiles=6\n"), "{sealed}");
    run(
        env!("CARGO_BIN_EXE_fsim-analyze"),
        &["-q", "--no-line-source", "-o", "pairs.tsv", "s.tsv"],
        dir.path(),
        true,
    );
    assert!(read(dir.path(), "pairs.tsv").contains("#end pairs\tpairs=3\t"));

    // A record before any #bin line: the file and line named, no output.
    std::fs::write(
        dir.path().join("bad.tsv"),
        &body(4, 4)[body(4, 4).find('\n').unwrap() + 1..],
    )
    .unwrap();
    let out = run(
        BINPACK,
        &["--seal", "b.tsv", "-o", "t.tsv", "bad.tsv"],
        dir.path(),
        false,
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "fsim-binpack: bad.tsv:1: expected a #bin line before the bin's F lines and records\n"
    );
    assert!(!dir.path().join("t.tsv").exists());
}

#[test]
fn truncated_input_names_file_and_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let text = example();
    // Cut in the middle of the 5th line (the 4th record).
    let starts: Vec<usize> = text
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    std::fs::write(dir.path().join("p.tsv"), &text[..starts[3] + 20]).unwrap();
    let out = run(BINPACK, &["-o", "b.tsv", "p.tsv"], dir.path(), false);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("fsim-binpack: p.tsv:5: "), "{err}");
    assert!(!dir.path().join("b.tsv").exists());
    // Whole lines but no trailer.
    std::fs::write(dir.path().join("p.tsv"), &text[..starts[10]]).unwrap();
    let out = run(BINPACK, &["-o", "b.tsv", "p.tsv"], dir.path(), false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("fsim-binpack: p.tsv:11: no '#end partition' trailer"),
        "{err}"
    );
    assert!(!dir.path().join("b.tsv").exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp file left"
    );
}

#[test]
fn wrong_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.tsv"), "#fsim chunks v1\tmethod=tttd\n#end chunks\trecords=0\tdigest=00000000000000000000000000000000\n").unwrap();
    let out = run(BINPACK, &["c.tsv"], dir.path(), false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("c.tsv:1: this is a chunks file"), "{err}");
}

#[test]
fn chunk_across_components_is_refused() {
    let files = [
        PFile {
            id: 1,
            comp: 1,
            size: 100,
            content: 1,
        },
        PFile {
            id: 2,
            comp: 1,
            size: 100,
            content: 2,
        },
        PFile {
            id: 3,
            comp: 3,
            size: 100,
            content: 3,
        },
        PFile {
            id: 4,
            comp: 3,
            size: 100,
            content: 4,
        },
    ];
    let recs = [
        (5, 1, 40),
        (5, 2, 40),
        (6, 2, 40),
        (6, 3, 40),
        (7, 3, 40),
        (7, 4, 40),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.tsv"), partition_text(&files, &recs)).unwrap();
    let out = run(
        BINPACK,
        &["-o", "b.tsv", "--capacity", "500", "-q", "p.tsv"],
        dir.path(),
        false,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("chunk 00000000000000000000000000000006 is in files 0000000002 and 0000000003 of different components"),
        "{err}"
    );
    assert!(!dir.path().join("b.tsv").exists());
}

/// The distributed plan (scripts/spark): `fsim-partition --emit-forest
/// --kept-counts` on two hash ranges of the sorted records, the `K` lines
/// summed per component, `fsim-binpack --components` on those figures: the
/// same plan, and with each bin's F lines and records put back after its
/// `#bin` line, the same bins file as fsim-binpack on the whole partition
/// file.
#[test]
fn components_table_gives_the_bins_of_the_partition_file() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let w = t.path().join("w");
    chunk_and_sort(&repo, &w, &[]);
    let mut c = fsim("fsim-partition");
    c.args(["-q", "--files"])
        .arg(w.join("files.tsv"))
        .arg("-o")
        .arg(w.join("partition.tsv"))
        .arg(w.join("sorted.tsv"));
    run_ok(c, None);
    let cap = ["--capacity", "64K"];
    let wd = w.to_str().unwrap();
    run(
        BINPACK,
        &[
            &cap[..],
            &[
                "-q",
                "--plan",
                "plan.tsv",
                "-o",
                "bins.tsv",
                "partition.tsv",
            ],
        ]
        .concat(),
        &w,
        true,
    );
    let k = kept_counts_of_two_ranges(&w);
    let part = read(&w, "partition.tsv");
    let (table, comps, comp_of) = components_of(&part, &k);
    std::fs::write(w.join("comps.tsv"), &table).unwrap();
    run(
        BINPACK,
        &[
            &cap[..],
            &[
                "-q",
                "--components",
                "--plan",
                "plan2.tsv",
                "-o",
                "skel.tsv",
                "comps.tsv",
            ],
        ]
        .concat(),
        &w,
        true,
    );
    assert_eq!(read(&w, "plan2.tsv"), read(&w, "plan.tsv"));
    let skel = read(&w, "skel.tsv");
    let nbins = skel.lines().filter(|l| l.starts_with("#bin\t")).count();
    assert!(nbins >= 2, "expected several bins at 64K: {skel}");
    let rebuilt = bins_from_skeleton(&skel, &part, &comp_of);
    assert_eq!(rebuilt, read(&w, "bins.tsv"), "in {wd}");
    // Figures that do not add up to the partition's trailer are refused.
    let first = comps.keys().next().unwrap();
    let bad = table.replace(&format!("C\t{first}\t"), &format!("C\t{first}\t1"));
    std::fs::write(w.join("bad.tsv"), bad).unwrap();
    let out = run(BINPACK, &["-q", "--components", "bad.tsv"], &w, false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the trailer announced files="), "{err}");
}

/// `fsim-partition --emit-forest --kept-counts` on two ranges of w's
/// sorted.tsv, cut between two chunk groups: each file's kept records and
/// chunks (its `K` lines), summed over the ranges.
fn kept_counts_of_two_ranges(w: &Path) -> BTreeMap<u32, (u64, u64)> {
    let nfiles = read(w, "files.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    // Two ranges, cut between two chunk groups.
    let sorted = read(w, "sorted.tsv");
    let recs: Vec<&str> = sorted.lines().filter(|l| !l.starts_with('#')).collect();
    let mut cut = recs.len() / 2;
    while recs[cut][..32] == recs[cut - 1][..32] {
        cut += 1;
    }
    let mut k: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for (i, part) in [&recs[..cut], &recs[cut..]].iter().enumerate() {
        let name = format!("range{i}.tsv");
        std::fs::write(w.join(&name), part.join("\n") + "\n").unwrap();
        let n = nfiles.to_string();
        let out = run(
            env!("CARGO_BIN_EXE_fsim-partition"),
            &[
                "-q",
                "--emit-forest",
                "--kept-counts",
                "--files-count",
                &n,
                "-o",
                "-",
                &name,
            ],
            w,
            true,
        );
        for l in String::from_utf8(out.stdout).unwrap().lines() {
            if let Some(rest) = l.strip_prefix("K\t") {
                let f: Vec<u64> = rest.split('\t').map(|x| x.parse().unwrap()).collect();
                let e = k.entry(f[0] as u32).or_default();
                e.0 += f[1];
                e.1 += f[2];
            }
        }
    }
    k
}

/// A components table, each component's figures and each file's component.
type Components = (String, BTreeMap<u32, (u64, u64, u64)>, BTreeMap<u32, u32>);

/// Components from the F lines of `part`; their figures from the K lines:
/// the components table (header, `C` lines, trailer), the figures and
/// each file's component.
fn components_of(part: &str, k: &BTreeMap<u32, (u64, u64)>) -> Components {
    let mut comps: BTreeMap<u32, (u64, u64, u64)> = BTreeMap::new();
    let mut comp_of = BTreeMap::new();
    for l in part.lines().filter(|l| l.starts_with("F\t")) {
        let id: u32 = l[2..12].parse().unwrap();
        let comp: u32 = l[13..23].parse().unwrap();
        comp_of.insert(id, comp);
        let (r, ch) = k.get(&id).copied().unwrap_or_default();
        let e = comps.entry(comp).or_default();
        e.0 += 1;
        e.1 += r;
        e.2 += ch;
    }
    assert!(comps.len() >= 2, "expected several components");
    let lines: Vec<&str> = part.lines().collect();
    let mut table = format!("{}\n", lines[0]);
    for (id, (f, r, ch)) in &comps {
        table += &format!("C\t{id}\t{f}\t{r}\t{ch}\n");
    }
    table += &format!("{}\n", lines.last().unwrap());
    (table, comps, comp_of)
}

/// Rebuild the bins file: after each #bin line of the skeleton, the F
/// lines of its components' files (id order), then their records
/// (partition order).
fn bins_from_skeleton(skel: &str, part: &str, comp_of: &BTreeMap<u32, u32>) -> String {
    let lines: Vec<&str> = part.lines().collect();
    let mut bin_comps: Vec<Vec<u32>> = Vec::new();
    let mut rebuilt = String::new();
    let mut pending: Option<String> = None;
    let flush = |rebuilt: &mut String, comps: &[u32]| {
        for l in lines.iter().filter(|l| l.starts_with("F\t")) {
            if comps.contains(&comp_of[&l[2..12].parse::<u32>().unwrap()]) {
                *rebuilt += l;
                rebuilt.push('\n');
            }
        }
        for l in lines.iter().filter(|l| !l.starts_with(['#', 'F'])) {
            if comps.contains(&comp_of[&l[33..43].parse::<u32>().unwrap()]) {
                *rebuilt += l;
                rebuilt.push('\n');
            }
        }
    };
    for l in skel.lines() {
        if let Some(id) = l.strip_prefix("C\t") {
            bin_comps.last_mut().unwrap().push(id.parse().unwrap());
            continue;
        }
        if let Some(c) = pending.take() {
            rebuilt += &c;
            flush(&mut rebuilt, bin_comps.last().unwrap());
        }
        if l.starts_with("#bin\t") {
            bin_comps.push(Vec::new());
            pending = Some(format!("{l}\n"));
        } else {
            rebuilt += l;
            rebuilt.push('\n');
        }
    }
    rebuilt
}

/// The reduce side of a distributed partition (scripts/spark):
/// `fsim-partition --emit-forest` on three hash ranges of the sorted
/// records, then `--merge-forests` on their forest lines, with the
/// ranges' kept records put between its header and the rest: the very
/// partition file of one `fsim-partition` run, dropped chunks (a degree
/// limit of 3) and pruned files included. Without one range, the merge
/// is refused and writes nothing.
#[test]
fn merged_forests_give_the_partition_file() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let w = t.path().join("w");
    chunk_and_sort(&repo, &w, &[]);
    let limit = ["--max-degree", "3"];
    let mut c = fsim("fsim-partition");
    c.args(["-q", "--files"])
        .arg(w.join("files.tsv"))
        .args(limit)
        .arg("-o")
        .arg(w.join("partition.tsv"))
        .arg(w.join("sorted.tsv"));
    run_ok(c, None);
    let part = read(&w, "partition.tsv");
    assert!(
        part.contains("#dropped\t"),
        "expected dropped chunks: {part}"
    );
    let nfiles = read(&w, "files.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    let sorted = read(&w, "sorted.tsv");
    let recs: Vec<&str> = sorted.lines().filter(|l| !l.starts_with('#')).collect();
    // Three ranges by the hash's first hex digit: a chunk group never
    // spans two.
    let ranges: Vec<Vec<&str>> = ["0123", "456789a", "bcdef"]
        .iter()
        .map(|d| {
            recs.iter()
                .copied()
                .filter(|r| d.contains(&r[..1]))
                .collect()
        })
        .collect();
    let (mut kept, mut forests) = (String::new(), Vec::new());
    for (i, range) in ranges.iter().enumerate() {
        let name = format!("range{i}.tsv");
        std::fs::write(w.join(&name), range.join("\n") + "\n").unwrap();
        let n = nfiles.to_string();
        let args = [
            &["-q", "--emit-forest", "--files-count", &n][..],
            &limit,
            &["-o", "-", &name],
        ]
        .concat();
        let out = run(env!("CARGO_BIN_EXE_fsim-partition"), &args, &w, true);
        let (mut meta, text) = (String::new(), String::from_utf8(out.stdout).unwrap());
        for l in text.lines() {
            let s = if l.starts_with(|c: char| matches!(c, '0'..='9' | 'a'..='f')) {
                &mut kept
            } else {
                &mut meta
            };
            *s += l;
            s.push('\n');
        }
        let fname = format!("forest{i}.tsv");
        std::fs::write(w.join(&fname), meta).unwrap();
        forests.push(fname);
    }
    let merge = |names: &[String], ok: bool| {
        let args = [
            &["--merge-forests", "--files", "files.tsv", "-o", "ends.tsv"][..],
            &names.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        ]
        .concat();
        run(env!("CARGO_BIN_EXE_fsim-partition"), &args, &w, ok)
    };
    merge(&forests, true);
    let ends = read(&w, "ends.tsv");
    let (head, rest) = ends.split_once('\n').unwrap();
    let merged = format!("{head}\n{kept}{rest}");
    let first_difference = merged.lines().zip(part.lines()).find(|(m, p)| m != p);
    assert_eq!(first_difference, None, "merged vs single run");
    assert_eq!(merged.len(), part.len());
    std::fs::remove_file(w.join("ends.tsv")).unwrap();
    let out = merge(&forests[..2], false);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the forests hold")
            && err.contains("a range is missing, repeated or of another run"),
        "{err}"
    );
    assert!(!w.join("ends.tsv").exists());
}

/// A partition file whose graph fits one bin has its records copied from
/// the file as they are, where a pipe's are spooled, parsed and written
/// again: the bins must be the same bytes either way. Also when a record
/// is not written as fsim-binpack writes it (a length with a leading
/// zero), when a comment falls among the records, and when the header
/// announces fewer files than the file holds, so that the records are
/// left in the file and then more than one bin needs them.
#[test]
fn a_partition_file_gives_the_bins_of_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(example()).unwrap();
    let padded = text.replacen("\t100\n", "\t0100\n", 1);
    assert_ne!(padded, text);
    let third = text.match_indices('\n').nth(3).unwrap().0 + 1;
    let commented = format!("{}# a comment\n{}", &text[..third], &text[third..]);
    let few_files = text.replacen("\tfiles=20\t", "\tfiles=0\t", 1);
    assert_ne!(few_files, text);
    let cases: [(&str, &str, &[&str]); 5] = [
        ("plain", &text, &[]),
        ("padded", &padded, &[]),
        ("commented", &commented, &[]),
        ("few files, two bins", &few_files, &["--capacity", "1100"]),
        ("small capacity", &text, &["--capacity", "1100"]),
    ];
    for (what, input, extra) in cases {
        let p = dir.path().join("p.tsv");
        std::fs::write(&p, input).unwrap();
        let mut args = vec!["-q", "-o", "from-file.tsv"];
        args.extend_from_slice(extra);
        args.push("p.tsv");
        run(BINPACK, &args, dir.path(), true);
        let mut cmd = std::process::Command::new(BINPACK);
        cmd.current_dir(dir.path())
            .args(["-q", "-o", "from-pipe.tsv"])
            .args(extra)
            .arg("-");
        let out = run_raw(cmd, Some(input.as_bytes()));
        assert!(out.status.success(), "{what}: {out:?}");
        let (file, pipe) = (
            read(dir.path(), "from-file.tsv"),
            read(dir.path(), "from-pipe.tsv"),
        );
        assert_eq!(file, pipe, "{what}");
        let bins = parse_bins(&file);
        assert_eq!(bins.len(), if extra.is_empty() { 1 } else { 2 }, "{what}");
        let records: usize = bins.values().map(|b| b.2.len()).sum();
        assert_eq!(records, 23, "{what}");
        assert!(
            !file.contains("\t0100\n"),
            "{what}: a record as the input wrote it"
        );
    }
}
