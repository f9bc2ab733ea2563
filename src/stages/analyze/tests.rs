//! Tests of the analysis: bytes in common, thresholds and the line source
//! on small bins.

use super::*;
use crate::formats::bins::FileLine;
use crate::formats::{self, ChunkRecord, Digest, Kind};
use proptest::prelude::*;
use std::collections::HashMap;

/// A file of a test bin: id, size, content hash, chunks as (hash, len)
/// with repeats for chunks occurring more than once.
#[derive(Debug, Clone)]
struct TFile {
    id: u32,
    size: u64,
    content: u128,
    chunks: Vec<(u128, u32)>,
}

/// A bins file with these bins (each a list of files, in any order).
fn bins_text(bins: &[Vec<TFile>], oversized: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let p = Params::new()
        .with("method", "tttd")
        .with("avg", 1000)
        .with("bins", bins.len())
        .with("capacity", 1000);
    formats::write_header(Kind::Bins, &p, &mut out);
    let mut d = Digest::default();
    let mut nfiles = 0;
    for (i, bin) in bins.iter().enumerate() {
        let mut files = bin.clone();
        files.sort_by_key(|f| f.id);
        let mut recs: Vec<ChunkRecord> = files
            .iter()
            .flat_map(|f| {
                f.chunks.iter().map(|&(hash, len)| ChunkRecord {
                    hash,
                    file: f.id,
                    len,
                })
            })
            .collect();
        recs.sort_by_key(|r| (r.hash, r.file, r.len));
        out.extend_from_slice(
            format!(
                "#bin\t{}\tfiles={}\trecords={}\tmemory=100\toversized={}\n",
                i + 1,
                files.len(),
                recs.len(),
                oversized as u8
            )
            .as_bytes(),
        );
        for f in &files {
            FileLine {
                id: f.id,
                component: files[0].id,
                size: f.size,
                content: f.content,
                features: None,
            }
            .write(&mut out);
        }
        for r in &recs {
            r.write(&mut out);
            d.add(r);
        }
        nfiles += files.len();
    }
    let t = formats::digest_params(&d, "records")
        .with("bins", bins.len())
        .with("files", nfiles);
    formats::write_trailer(Kind::Bins, &t, &mut out);
    out
}

/// Trivially correct model: hash maps, every pair of representatives.
fn model(bins: &[Vec<TFile>], th: &Thresholds) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for bin in bins {
        let mut files = bin.clone();
        files.sort_by_key(|f| f.id);
        let mut seen = std::collections::HashSet::new();
        let reps: Vec<&TFile> = files.iter().filter(|f| seen.insert(f.content)).collect();
        let maps: Vec<HashMap<u128, (u64, u64)>> = reps
            .iter()
            .map(|f| {
                let mut m = HashMap::new();
                for &(h, l) in &f.chunks {
                    m.entry(h).or_insert((0, l as u64)).0 += 1;
                }
                m
            })
            .collect();
        for i in 0..reps.len() {
            for j in i + 1..reps.len() {
                let (mut common, mut shared) = (0u64, 0u32);
                for (h, &(oa, len)) in &maps[i] {
                    if let Some(&(ob, _)) = maps[j].get(h) {
                        common += oa.min(ob) * len;
                        shared += 1;
                    }
                }
                let (a, b) = (reps[i], reps[j]);
                if shared > 0 && th.keep(common, a.size, b.size) {
                    pairs.push(Pair {
                        a: a.id,
                        b: b.id,
                        size_a: a.size,
                        size_b: b.size,
                        common,
                        shared,
                    });
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// An analysis with its pairs read back into memory.
struct Ran {
    pairs: Vec<Pair>,
    collapsed: u64,
    spilled_bins: u64,
    spilled_records: u64,
}

impl From<Analysis> for Ran {
    fn from(a: Analysis) -> Ran {
        Ran {
            collapsed: a.collapsed,
            spilled_bins: a.spilled_bins,
            spilled_records: a.spilled_records,
            pairs: a.pairs.into_vec(),
        }
    }
}

fn run_on(text: &[u8], th: Thresholds, threads: usize, force_spill: bool) -> Ran {
    let opts = Options {
        thresholds: th,
        capacity: 1 << 30,
        threads,
        tmpdir: None,
        force_spill,
        only: None,
        defer_from: DEFER_FROM,
    };
    analyze_reader(text, "test.bins", &opts).unwrap().into()
}

fn f(id: u32, size: u64, chunks: &[(u128, u32)]) -> TFile {
    TFile {
        id,
        size,
        content: 0x1000 + id as u128,
        chunks: chunks.to_vec(),
    }
}

const ALL: Thresholds = Thresholds {
    min_bytes: 0,
    min_percent: 0.0,
    percent_of: PercentOf::Smaller,
};

#[test]
fn chunk_twice_in_one_file_once_in_other_counts_once() {
    let bins = vec![vec![
        f(1, 1000, &[(7, 100), (7, 100), (8, 50)]),
        f(2, 500, &[(7, 100), (9, 30)]),
    ]];
    let a = run_on(&bins_text(&bins, false), ALL, 1, false);
    assert_eq!(
        a.pairs,
        vec![Pair {
            a: 1,
            b: 2,
            size_a: 1000,
            size_b: 500,
            common: 100,
            shared: 1
        }]
    );
}

#[test]
fn chunk_twice_in_both_counts_twice() {
    let bins = vec![vec![
        f(1, 1000, &[(7, 100), (7, 100), (8, 50)]),
        f(2, 500, &[(7, 100), (8, 50), (7, 100)]),
    ]];
    let a = run_on(&bins_text(&bins, false), ALL, 1, false);
    assert_eq!(
        a.pairs,
        vec![Pair {
            a: 1,
            b: 2,
            size_a: 1000,
            size_b: 500,
            common: 250,
            shared: 2
        }]
    );
    let mut out = Vec::new();
    let opts = Options {
        thresholds: ALL,
        ..Options::default()
    };
    let again = analyze_reader(&bins_text(&bins, false)[..], "test.bins", &opts).unwrap();
    let params = pairs_params(&again.params, &ALL, None).unwrap();
    assert_eq!(
        write_pairs(again, &params, None, &mut out, "test").unwrap(),
        1
    );
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with(
        "#fsim pairs v1\tmethod=tttd\tavg=1000\tmin-bytes=0\tmin-percent=0\tpercent-of=smaller\n"
    ));
    assert!(text.contains("\n0000000001\t0000000002\t1000\t500\t250\t2\n"));
    let d = formats::mix128((1u128 << 96) | (2u128 << 64) | 250);
    assert!(text.ends_with(&format!(
        "#end pairs\tpairs=1\tdigest={}\n",
        formats::hex128(d)
    )));
}

#[test]
fn percent_of_smaller_vs_larger() {
    // 100 bytes in common: 50% of the smaller (200), 10% of the larger (1000).
    let bins = vec![vec![f(3, 200, &[(1, 100)]), f(4, 1000, &[(1, 100)])]];
    let text = bins_text(&bins, false);
    let th = |p, of| Thresholds {
        min_bytes: 0,
        min_percent: p,
        percent_of: of,
    };
    assert_eq!(
        run_on(&text, th(50.0, PercentOf::Smaller), 1, false)
            .pairs
            .len(),
        1
    );
    assert_eq!(
        run_on(&text, th(50.1, PercentOf::Smaller), 1, false)
            .pairs
            .len(),
        0
    );
    assert_eq!(
        run_on(&text, th(10.0, PercentOf::Larger), 1, false)
            .pairs
            .len(),
        1
    );
    assert_eq!(
        run_on(&text, th(11.0, PercentOf::Larger), 1, false)
            .pairs
            .len(),
        0
    );
    let mb = |n| Thresholds {
        min_bytes: n,
        ..ALL
    };
    assert_eq!(run_on(&text, mb(100), 1, false).pairs.len(), 1);
    assert_eq!(run_on(&text, mb(101), 1, false).pairs.len(), 0);
}

#[test]
fn identical_files_collapse_to_smallest_id() {
    let mut a = f(5, 300, &[(1, 100), (2, 100), (3, 100)]);
    let mut b = f(2, 300, &[(1, 100), (2, 100), (3, 100)]);
    let mut c = f(9, 300, &[(1, 100), (2, 100), (3, 100)]);
    a.content = 77;
    b.content = 77;
    c.content = 77;
    let d = f(7, 250, &[(1, 100), (3, 100), (4, 50)]);
    let bins = vec![vec![a, b, c, d]];
    for spill in [false, true] {
        let r = run_on(&bins_text(&bins, false), ALL, 1, spill);
        assert_eq!(r.collapsed, 2);
        assert_eq!(
            r.pairs,
            vec![Pair {
                a: 2,
                b: 7,
                size_a: 300,
                size_b: 250,
                common: 200,
                shared: 2
            }]
        );
    }
}

#[test]
fn pairs_sorted_across_bins() {
    let bins = vec![
        vec![f(1, 100, &[(1, 60)]), f(8, 100, &[(1, 60)])],
        vec![
            f(3, 100, &[(2, 60)]),
            f(4, 100, &[(2, 60)]),
            f(0, 100, &[(2, 60)]),
        ],
    ];
    let r = run_on(&bins_text(&bins, false), ALL, 1, false);
    let ab: Vec<(u32, u32)> = r.pairs.iter().map(|p| (p.a, p.b)).collect();
    assert_eq!(ab, vec![(0, 3), (0, 4), (1, 8), (3, 4)]);
}

#[test]
fn bad_inputs_name_the_line() {
    let bins = vec![vec![f(1, 100, &[(1, 60)]), f(8, 100, &[(1, 60)])]];
    let text = bins_text(&bins, false);
    let opts = Options::default();
    // Truncated: drop the trailer.
    let trailer_at = text[..text.len() - 1]
        .iter()
        .rposition(|&c| c == b'\n')
        .unwrap()
        + 1;
    let cut = &text[..trailer_at];
    let e = analyze_reader(cut, "x.bins", &opts)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("x.bins:6: no '#end bins' trailer"), "{e}");
    // Unsorted records.
    let s = String::from_utf8(text.clone()).unwrap().replace(
        "00000000000000000000000000000001\t0000000008",
        "00000000000000000000000000000000\t0000000008",
    );
    let e = analyze_reader(s.as_bytes(), "x.bins", &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("x.bins:6: chunk records of a bin are not sorted"),
        "{e}"
    );
    // Same hash, two lengths.
    let s = String::from_utf8(text)
        .unwrap()
        .replace("0000000008\t60", "0000000008\t61");
    let e = analyze_reader(s.as_bytes(), "x.bins", &opts)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.bins:6: chunk 00000000000000000000000000000001 has two lengths"),
        "{e}"
    );
}

fn arb_bins() -> impl Strategy<Value = (Vec<Vec<TFile>>, Thresholds)> {
    let file = (1u64..400, 0u8..6, proptest::collection::vec(0u8..10, 0..10));
    (
        proptest::collection::vec(proptest::collection::vec(file, 2..9), 1..4),
        0u64..120,
        0u32..60,
        any::<bool>(),
    )
        .prop_map(|(bins, min_bytes, pct, larger)| {
            let mut id = 0u32;
            let bins = bins
                .into_iter()
                .enumerate()
                .map(|(bi, files)| {
                    files
                        .into_iter()
                        .map(|(size, content, chunks)| {
                            id += 1;
                            // Interleave ids across bins; contents may repeat (copies).
                            let fid = id * 3 + bi as u32;
                            let content = if content < 2 {
                                content as u128
                            } else {
                                1000 + fid as u128
                            };
                            TFile {
                                id: fid,
                                size,
                                content,
                                chunks: chunks
                                    .iter()
                                    .map(|&c| (c as u128 * 0x1234_5678_9abc, 10 + c as u32 * 7))
                                    .collect(),
                            }
                        })
                        .collect()
                })
                .collect();
            let of = if larger {
                PercentOf::Larger
            } else {
                PercentOf::Smaller
            };
            (
                bins,
                Thresholds {
                    min_bytes,
                    min_percent: pct as f64,
                    percent_of: of,
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn memory_equals_out_of_core_equals_model((bins, th) in arb_bins()) {
        let text = bins_text(&bins, false);
        let want = model(&bins, &th);
        let mem = run_on(&text, th, 1, false);
        prop_assert_eq!(&mem.pairs, &want);
        let spill = run_on(&text, th, 1, true);
        prop_assert_eq!(&spill.pairs, &want);
        // Every group a chunk cannot make a pair of alone deferred: the
        // same pairs and figures.
        let opts = Options { thresholds: th, defer_from: 2, ..Options::default() };
        let deferred = Ran::from(analyze_reader(&text[..], "t", &opts).unwrap());
        prop_assert_eq!(&deferred.pairs, &want);
        // Oversized bins marked by fsim-binpack take the out-of-core path too.
        let over = run_on(&bins_text(&bins, true), th, 2, false);
        prop_assert_eq!(over.spilled_bins, bins.len() as u64);
        prop_assert_eq!(&over.pairs, &want);
    }
}

/// A bin big enough for several threads and for several spilled runs
/// and merge passes (tiny capacity).
#[test]
fn threads_and_spill_runs_give_identical_output() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let files: Vec<TFile> = (0..3000u32)
        .map(|i| {
            let chunks = (0..12)
                .map(|_| (next(9000) as u128, 50))
                .collect::<Vec<_>>();
            TFile {
                id: i,
                size: 400 + next(400),
                content: if i % 50 == 7 { 5 } else { 100 + i as u128 },
                chunks,
            }
        })
        .collect();
    let bins = vec![files];
    let text = bins_text(&bins, false);
    let th = Thresholds {
        min_bytes: 0,
        min_percent: 5.0,
        percent_of: PercentOf::Smaller,
    };
    let one = run_on(&text, th, 1, false);
    assert!(one.pairs.len() > 1000, "{}", one.pairs.len());
    assert_eq!(one.pairs, model(&bins, &th));
    assert_eq!(run_on(&text, th, 4, false).pairs, one.pairs);
    let opts = Options {
        thresholds: th,
        capacity: 16 * 1024,
        threads: 1,
        tmpdir: None,
        force_spill: true,
        only: None,
        defer_from: DEFER_FROM,
    };
    let spill = analyze_reader(&text[..], "t", &opts).unwrap();
    // A 4 KiB share of the capacity for the pairs: they spill too.
    assert!(spill.pairs.runs_spilled() > 1, "{:?}", spill.pairs);
    let spill = Ran::from(spill);
    assert_eq!(spill.pairs, one.pairs);
    // A re-run with every 7th file changed: just the pairs with one of
    // them, in memory and out of core.
    let max_id = one.pairs.iter().map(|p| p.b).max().unwrap() as usize;
    let flags: Vec<bool> = (0..=max_id).map(|i| i % 7 == 3).collect();
    let count = flags.iter().filter(|&&c| c).count() as u64;
    let changed = std::sync::Arc::new(Changed { flags, count });
    let want: Vec<Pair> = one
        .pairs
        .iter()
        .filter(|p| changed.any(p.a, p.b))
        .copied()
        .collect();
    assert!(!want.is_empty() && want.len() < one.pairs.len());
    for force_spill in [false, true] {
        let opts = Options {
            force_spill,
            only: Some(changed.clone()),
            ..opts.clone()
        };
        let got = Ran::from(analyze_reader(&text[..], "t", &opts).unwrap());
        assert_eq!(got.pairs, want, "force_spill {force_spill}");
    }
    // In memory (memory=100 fits) on 4 threads, pairs spilled from each
    // thread's batches: the same pairs, in order.
    let threads = Options {
        capacity: 64 * 1024,
        threads: 4,
        force_spill: false,
        ..opts
    };
    let a = analyze_reader(&text[..], "t", &threads).unwrap();
    assert_eq!(a.spilled_bins, 0);
    assert!(a.pairs.runs_spilled() > 1, "{:?}", a.pairs);
    assert_eq!(Ran::from(a).pairs, one.pairs);
    // 16 KiB budget: 512-record runs, so more runs than the merge fan-in.
    assert!(
        spill.spilled_records > 512 * crate::stages::sort::DEFAULT_FAN_IN as u64,
        "{}",
        spill.spilled_records
    );
}

/// A bin's file ids are found by their index when dense and by a search
/// when sparse, with the same answers: the local index of an id in the
/// bin, none for an id between, below or above them.
#[test]
fn a_bins_file_ids_are_found_dense_or_sparse() {
    use super::files::BinFiles;
    for ids in [
        vec![5u32, 6, 7, 9, 10],
        vec![0, 1, 2, 3],
        vec![3, 1000, 70_000],
        vec![42],
        vec![],
    ] {
        let mut f = BinFiles {
            ids: ids.clone(),
            ..BinFiles::default()
        };
        f.index_ids();
        let dense = ids
            .last()
            .is_some_and(|&hi| ((hi - ids[0]) as usize) < 2 * ids.len());
        assert_eq!(!f.local_of.is_empty(), dense, "{ids:?}");
        for probe in 0..71_000u32 {
            assert_eq!(
                f.local(probe),
                ids.binary_search(&probe).ok(),
                "{ids:?} {probe}"
            );
        }
    }
}

/// Files that share only their last byte (a newline, as the ends of
/// files cut by the chunker) cost no visit of that chunk's group, and the
/// pairs other chunks make still count it: the same pairs and figures as
/// walking every group, for a fraction of the visits.
#[test]
fn a_large_group_of_a_tiny_chunk_costs_no_visits() {
    const NEWLINE: u128 = 0x0a0a;
    let n = 400u32;
    let mut files: Vec<TFile> = (1..=n)
        .map(|id| {
            f(
                id,
                200 + (id % 50) as u64,
                &[(1_000 + id as u128, 150), (NEWLINE, 1)],
            )
        })
        .collect();
    // Two pairs through a long chunk, one of two light files (the newline
    // adds to it), one of a light file and a heavy one: a file of 5 bytes
    // whose newline is a fifth of it.
    files[10].chunks.push((77, 60));
    files[20].chunks.push((77, 60));
    files[30].chunks.push((88, 4));
    files.push(f(n + 1, 5, &[(88, 4), (NEWLINE, 1)]));
    let bins = vec![files];
    let th = Thresholds::default();
    let text = bins_text(&bins, false);
    let want = model(&bins, &th);
    let opts = |defer_from| Options {
        thresholds: th,
        defer_from,
        ..Options::default()
    };
    let walked = analyze_reader(&text[..], "t", &opts(usize::MAX)).unwrap();
    let deferred = analyze_reader(&text[..], "t", &opts(DEFER_FROM)).unwrap();
    let all = (n as u64 + 1) * n as u64 / 2;
    assert!(walked.visits >= all, "{}", walked.visits);
    // The heavy 5-byte file's walk of the newline's group, and the long chunks.
    assert!(deferred.visits <= n as u64 + 10, "{}", deferred.visits);
    assert_eq!(Ran::from(walked).pairs, want);
    let pairs = Ran::from(deferred).pairs;
    assert_eq!(pairs, want);
    // The heavy file makes a pair with each file through the newline
    // alone (a fifth of it), and the long chunk's pair counts it too.
    let figures = |a, b| {
        let p = pairs.iter().find(|p| (p.a, p.b) == (a, b)).unwrap();
        (p.common, p.shared)
    };
    assert_eq!(pairs.len(), n as usize + 1);
    assert_eq!(figures(11, 21), (61, 2));
    assert_eq!(figures(31, n + 1), (5, 2));
    assert_eq!(figures(1, n + 1), (1, 1));
    // A re-run with one file in ten changed: their pairs, the same way.
    let flags: Vec<bool> = (0..=n + 1).map(|i| i % 10 == 1 && i <= n).collect();
    let count = flags.iter().filter(|&&c| c).count() as u64;
    let changed = std::sync::Arc::new(Changed { flags, count });
    let rerun = |defer_from| {
        let o = Options {
            only: Some(changed.clone()),
            ..opts(defer_from)
        };
        analyze_reader(&text[..], "t", &o).unwrap()
    };
    let want: Vec<Pair> = want.into_iter().filter(|p| changed.any(p.a, p.b)).collect();
    assert_eq!(want.len(), count as usize + 1);
    let (walked, deferred) = (rerun(usize::MAX), rerun(DEFER_FROM));
    assert!(walked.visits >= count * n as u64, "{}", walked.visits);
    assert!(deferred.visits <= 3 * count, "{}", deferred.visits);
    assert_eq!(Ran::from(walked).pairs, want);
    assert_eq!(Ran::from(deferred).pairs, want);
}

/// The line source's memory gives up what its file table holds, and a
/// table over half of it leaves the lines that half (over the model,
/// which stderr says).
#[test]
fn the_line_source_counts_its_file_table() {
    let entries: Vec<crate::formats::FileEntry> = (0..1000u32)
        .map(|id| crate::formats::FileEntry {
            id,
            size: 200,
            mtime_s: 0,
            mtime_ns: 0,
            content: u128::from(id),
            ftype: crate::formats::FileType::Text,
            view: crate::formats::FileView::raw(200),
            path: format!("tree/d{:03}/f{id:06}.txt", id / 100).into_bytes(),
        })
        .collect();
    let src = LineSource {
        max_size: None,
        catalogs: true,
        thresholds: Thresholds::default(),
        verify_floor: 50.0,
        site_names: 0,
    };
    let table = LineFiles::of(&entries, &src);
    assert!(table.heap_bytes() >= 1000 * 41, "{}", table.heap_bytes());
    // Every file is compared: BYTES_PER_REP bytes each besides the table.
    let held = table.heap_bytes() + 1000 * super::lines::BYTES_PER_REP;
    let capacity = 1 << 20;
    assert_eq!(line_memory(capacity, &table), capacity * 3 / 4 - held);
    // A table of over half the share still leaves the rest to the lines:
    // the peak stays within the capacity.
    let tight = held * 2;
    assert_eq!(line_memory(tight, &table), tight - tight / 4 - held);
    // Only one that leaves them less than an eighth is over it.
    let small = held + held / 8;
    assert_eq!(line_memory(small, &table), (small - small / 4) / 8);
}
