//! Tests of fsim-verify's plan, schedule and exact figures on small
//! file sets.

use super::diff::embed;
use super::plan::{Global, NONE};
use super::schedule::units;
use super::*;
use crate::formats::FileType;

fn lines(s: &[u8]) -> Tokens {
    tokenize(s, Mode::Lines, &piece_chunker())
}

/// Reference: weighted LCS of lines by dynamic programming.
fn dp_lcs_bytes(a: &[u8], b: &[u8]) -> u64 {
    let split = |s: &[u8]| -> Vec<Vec<u8>> {
        s.split_inclusive(|&c| c == b'\n')
            .map(|l| l.to_vec())
            .collect()
    };
    let (la, lb) = (split(a), split(b));
    let mut dp = vec![vec![0u64; lb.len() + 1]; la.len() + 1];
    for i in 1..=la.len() {
        for j in 1..=lb.len() {
            dp[i][j] = if la[i - 1] == lb[j - 1] {
                dp[i - 1][j - 1] + la[i - 1].len() as u64
            } else {
                dp[i - 1][j].max(dp[i][j - 1])
            };
        }
    }
    dp[la.len()][lb.len()]
}

#[test]
fn lcs_of_lines_known_answer() {
    let c = compare(&lines(b"a\nb\nc\n"), &lines(b"a\nx\nc\n"), true);
    assert_eq!(c.common, 4);
    assert!(c.exact);
    assert_eq!(
        c.regions,
        vec![
            Region {
                off_a: 0,
                off_b: 0,
                len: 2
            },
            Region {
                off_a: 4,
                off_b: 4,
                len: 2
            }
        ]
    );
}

#[test]
fn regions_merge_runs_and_shift() {
    let a = b"intro\none\ntwo\nthree\nend\n";
    let b = b"new first line\none\ntwo\nthree\nX\nend\n";
    let c = compare(&lines(a), &lines(b), true);
    assert_eq!(c.common, 4 + 4 + 6 + 4);
    assert_eq!(
        c.regions,
        vec![
            Region {
                off_a: 6,
                off_b: 15,
                len: 14
            },
            Region {
                off_a: 20,
                off_b: 31,
                len: 4
            }
        ]
    );
    for r in &c.regions {
        assert_eq!(
            &a[r.off_a as usize..(r.off_a + r.len) as usize],
            &b[r.off_b as usize..(r.off_b + r.len) as usize]
        );
    }
}

#[test]
fn identical_and_disjoint() {
    let a = b"x\ny\nz";
    assert_eq!(compare(&lines(a), &lines(a), false).common, 5);
    assert_eq!(compare(&lines(a), &lines(b"p\nq\n"), false).common, 0);
    assert_eq!(compare(&lines(b""), &lines(a), false).common, 0);
}

#[test]
fn no_newline_last_line_is_a_token() {
    // "c" without newline differs from "c\n".
    let c = compare(&lines(b"a\nc"), &lines(b"a\nc\n"), false);
    assert_eq!(c.common, 2);
    let t = lines(b"no newline at all");
    assert_eq!(t.len(), 1);
    assert_eq!(t.starts, vec![0, 17]);
}

#[test]
fn nul_bytes_are_ordinary_bytes() {
    let a = b"a\0b\nsame\0\n\0\0\0\n";
    let b = b"a\0c\nsame\0\n\0\0\0\n";
    assert_eq!(compare(&lines(a), &lines(b), false).common, 10);
    let pa = tokenize(a, Mode::Pieces, &piece_chunker());
    assert_eq!(pa.starts.last(), Some(&(a.len() as u64)));
}

#[test]
fn very_long_line_is_cut_into_pieces() {
    let mut x = 12345u64;
    let mut a: Vec<u8> = (0..300_000)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            b'a' + ((x >> 59) as u8 % 26)
        })
        .collect();
    let mut b = a.clone();
    b[150_000] = b'#';
    a.push(b'\n');
    b.push(b'\n');
    let (ta, tb) = (lines(&a), lines(&b));
    assert!(ta.len() > 1000, "the long line is cut: {} tokens", ta.len());
    let c = compare(&ta, &tb, true);
    assert!(c.exact);
    // Only the pieces around the edit differ.
    assert!(c.common > a.len() as u64 - 2000, "{}", c.common);
    assert!(c.common < a.len() as u64);
    for r in &c.regions {
        assert_eq!(
            &a[r.off_a as usize..(r.off_a + r.len) as usize],
            &b[r.off_b as usize..(r.off_b + r.len) as usize]
        );
    }
}

#[test]
fn binary_pair_by_pieces() {
    let mut x = 7u64;
    let a: Vec<u8> = (0..20_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            (x >> 56) as u8
        })
        .collect();
    let mut b = a[..8000].to_vec();
    b.extend_from_slice(b"INSERTED\0\0BYTES");
    b.extend_from_slice(&a[8000..]);
    let p = piece_chunker();
    let (ta, tb) = (
        tokenize(&a, Mode::Pieces, &p),
        tokenize(&b, Mode::Pieces, &p),
    );
    let c = compare(&ta, &tb, true);
    assert!(c.exact);
    assert!(
        c.common >= 20_000 - 1500 && c.common < 20_000,
        "{}",
        c.common
    );
    for r in &c.regions {
        assert_eq!(
            &a[r.off_a as usize..(r.off_a + r.len) as usize],
            &b[r.off_b as usize..(r.off_b + r.len) as usize]
        );
    }
    assert_eq!(Mode::of(FileType::Text, FileType::Binary), Mode::Pieces);
    assert_eq!(Mode::of(FileType::Text, FileType::Empty), Mode::Lines);
}

#[test]
fn differ_reuses_a_across_many_b() {
    let a = b"l1\nl2\nl3\nl4\nl5\n";
    let ta = lines(a);
    let mut d = Differ::new();
    d.set_a(&ta);
    for b in [&b"l1\nl3\nl5\n"[..], b"l5\nl4\n", b"zz\n", a] {
        let c = d.compare(&ta, &lines(b), false);
        assert_eq!(
            c.common,
            dp_lcs_bytes(a, b),
            "{:?}",
            String::from_utf8_lossy(b)
        );
    }
}

#[test]
fn embed_finds_a_subsequence_or_says_there_is_none() {
    let mut out = Vec::new();
    assert!(embed(&[1, 3], &[1, 2, 3, 1, 3], &mut out, false));
    assert_eq!(out, [(0, 0), (1, 2)]);
    assert!(embed(&[1, 3], &[1, 2, 3], &mut out, true));
    assert_eq!(out, [(0, 0), (2, 1)]);
    assert!(!embed(&[3, 1], &[1, 2, 3], &mut out, false));
    assert!(!embed(&[1, 2, 3, 4], &[1, 2, 3], &mut out, false));
    assert!(embed(&[], &[1], &mut out, false) && out.is_empty());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// A file inside another (lines inserted around and between its own),
    /// either way round, and any pair: the figure without regions (where
    /// a contained side is taken whole) is the figure of the alignment.
    #[test]
    fn a_contained_side_gives_the_alignments_figure(
        seed in 0u64..1_000,
        n in 0usize..80,
        alphabet in 1u64..40,
        inserts in proptest::collection::vec((0usize..80, 0u64..1_000), 0..30),
        swap in proptest::bool::ANY,
        unrelated in proptest::bool::ANY,
    ) {
        let a = line_text(seed, n, alphabet);
        let mut b: Vec<&[u8]> = a.split_inclusive(|&c| c == b'\n').collect();
        let extra: Vec<Vec<u8>> = inserts.iter().map(|&(_, s)| line_text(s, 1, alphabet * 3)).collect();
        for ((at, _), line) in inserts.iter().zip(&extra) {
            b.insert((*at).min(b.len()), line);
        }
        let mut b = b.concat();
        if unrelated {
            b = line_text(seed + 1, n, alphabet);
        }
        let (ta, tb) = if swap { (lines(&b), lines(&a)) } else { (lines(&a), lines(&b)) };
        let figure = compare(&ta, &tb, true);
        let fast = compare(&ta, &tb, false);
        proptest::prop_assert_eq!(fast.common, figure.common);
        proptest::prop_assert!(fast.exact);
        if !unrelated {
            proptest::prop_assert_eq!(fast.common, a.len() as u64);
        }
    }
}

#[test]
fn matches_dp_on_random_texts() {
    // Distinct line lengths per content, so every longest subsequence
    // by count is also longest by bytes only when lengths agree: use
    // lines of equal length to make both definitions coincide.
    let mut x = 99u64;
    let mut rnd = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    for _ in 0..200 {
        let mk = |rnd: &mut dyn FnMut(u64) -> u64| -> Vec<u8> {
            let n = rnd(30);
            let mut v = Vec::new();
            for _ in 0..n {
                v.extend_from_slice(format!("line{}\n", rnd(8)).as_bytes());
            }
            v
        };
        let a = mk(&mut rnd);
        let b = mk(&mut rnd);
        let c = compare(&lines(&a), &lines(&b), true);
        assert_eq!(c.common, dp_lcs_bytes(&a, &b));
        let sum: u64 = c.regions.iter().map(|r| r.len).sum();
        assert_eq!(sum, c.common);
    }
}

/// Tokens `0..n` in the given order, one byte each.
fn ordered(h: impl Iterator<Item = u128>, n: u64) -> Tokens {
    Tokens {
        hashes: h.collect(),
        starts: (0..=n).collect(),
        data: Vec::new(),
    }
}

#[test]
fn cost_guard_gives_a_lower_bound() {
    // Same multiset of tokens in reverse order: the largest D there is.
    // 32,768 tokens, which Myers' guard gave up on, are aligned exactly.
    let n = 1u32 << 15;
    let a = ordered(0..n as u128, n as u64);
    let c = compare(&a, &ordered((0..n as u128).rev(), n as u64), false);
    assert!(c.exact);
    assert_eq!(c.common, 1);
    // 524,288 against 524,288: over the bit-parallel budget and Myers'.
    let big = 1u32 << 19;
    assert!(crate::align::Lcs::cost(big as usize, big as usize) > BIT_BUDGET);
    let ba = ordered(0..big as u128, big as u64);
    let c = compare(&ba, &ordered((0..big as u128).rev(), big as u64), false);
    assert!(!c.exact);
    assert_eq!(c.common, 1);
    // Long but nearly equal: guard lets Myers run.
    let mut h: Vec<u128> = (0..n as u128).collect();
    h.swap(10, 20);
    let b = Tokens {
        hashes: h,
        starts: (0..=n as u64).collect(),
        data: Vec::new(),
    };
    let c = compare(&a, &b, false);
    assert!(c.exact);
    assert_eq!(
        c.common,
        n as u64 - 2,
        "10 and 20 swapped: one of them and 11..19 kept"
    );
}

#[test]
fn lru_cache_stays_in_budget() {
    let t = Arc::new(lines(b"a\nb\n"));
    let m = t.mem();
    let mut c = Cache::new(2 * m);
    let mut gone = Vec::new();
    c.put((1, Mode::Lines), t.clone(), &mut gone);
    c.put((2, Mode::Lines), t.clone(), &mut gone);
    assert!(c.get((1, Mode::Lines)).is_some());
    c.put((3, Mode::Lines), t.clone(), &mut gone);
    assert!(
        c.get((2, Mode::Lines)).is_none(),
        "least recently used evicted"
    );
    assert_eq!(gone.len(), 1, "the evicted entry is handed back");
    assert!(c.get((1, Mode::Lines)).is_some());
    assert!(c.used <= c.budget);
    c.put((1, Mode::Lines), t.clone(), &mut gone);
    assert_eq!(c.used, 2 * m, "replacing an entry is not counted twice");
}

#[test]
fn cache_removes_and_workers_free_or_recycle() {
    let mut c = Cache::new(1 << 20);
    let mut w = Worker::new();
    for id in 0..4 {
        c.put((id, Mode::Lines), Arc::new(lines(b"x\ny\n")), &mut w.gone);
    }
    c.put((1, Mode::Pieces), Arc::new(lines(b"x\ny\n")), &mut w.gone);
    c.remove(1, &mut w.gone);
    assert!(c.get((1, Mode::Lines)).is_none() && c.get((1, Mode::Pieces)).is_none());
    assert_eq!(w.gone.len(), 2);
    w.free_gone();
    assert!(w.gone.is_empty());
    assert!(w.spare.is_empty(), "removed entries are freed, not kept");
    let held = c.get((2, Mode::Lines)).unwrap();
    c.retain(|id| id == 3);
    assert_eq!(c.map.len(), 1);
    assert_eq!(c.order.len(), 1);
    w.recycle(held);
    assert_eq!(w.spare.len(), 1, "a worker's last hold is recycled");
    let mut t = w.spare.pop().unwrap();
    tokenize_into(b"p\nq\nr", Mode::Lines, &piece_chunker(), &mut t);
    assert_eq!(t, lines(b"p\nq\nr"), "recycled buffers hold no old tokens");
    assert_eq!(c.used, c.map.values().map(|(t, _)| t.mem()).sum::<u64>());
}

#[test]
fn global_plan_keeps_files_across_batches() {
    let mut g = Global {
        last: vec![NONE; 6],
        reuse: vec![false; 6],
    };
    let mut group_of = vec![0; 6];
    // Groups: a=0 {(0,1),(0,2)}, a=1 {(1,2)}, a=3 {(3,4)}.
    for (i, (group, a, b)) in [(0, 0, 1), (0, 0, 2), (1, 1, 2), (2, 3, 4)]
        .into_iter()
        .enumerate()
    {
        g.add(&mut group_of, i as u32, group, a, b);
    }
    assert_eq!(&g.reuse[..5], &[false, true, true, false, false]);
    assert_eq!(&g.last[..], &[1, 2, 2, 3, 3, NONE]);
    let mut p = Plan::new(6);
    p.global = Some(g);
    // A second batch starting at pair 2: file 2 is still needed there.
    p.base = 2;
    assert!(p.needed_from(2, 0) && !p.needed_from(2, 1) && !p.needed_from(0, 0));
    assert!(p.keep(1) && !p.keep(0));
}

#[test]
fn plan_marks_reuse_and_last_use() {
    let mk = |a, b| PairIn {
        a,
        b,
        size_a: 1,
        size_b: 1,
        common: 1,
        shared: 1,
    };
    let batch = [mk(0, 1), mk(0, 2), mk(1, 2), mk(3, 4)];
    let mut p = Plan::new(6);
    p.set(&batch);
    assert_eq!(&p.reuse[..5], &[false, true, true, false, false]);
    assert_eq!(&p.last[..5], &[1, 2, 2, 3, 3]);
    assert_eq!(p.last[5], NONE);
    assert!(p.needed_from(1, 2) && !p.needed_from(1, 3) && !p.needed_from(5, 0));
    p.clear(&batch);
    assert!(p.last.iter().all(|&l| l == NONE) && p.reuse.iter().all(|&r| !r));
}

#[test]
fn units_cut_at_group_boundaries() {
    let mk = |a, b| PairIn {
        a,
        b,
        size_a: 1,
        size_b: 1,
        common: 1,
        shared: 1,
    };
    let cut = |batch: &[PairIn]| {
        let mut plan = Plan::new(2000);
        plan.set(batch);
        units(batch, &plan)
    };
    let batch: Vec<PairIn> = (0..250).map(|i| mk(i / 50, 1000 + i)).collect();
    assert_eq!(cut(&batch), vec![0..100, 100..200, 200..250]);
    // Group 4's a is a b of the unit that starts at 100: not cut there.
    let mut chained = batch.clone();
    chained[160].b = 4;
    assert_eq!(cut(&chained), vec![0..100, 100..250]);
    // Unless an earlier unit read it first.
    chained[10].b = 4;
    assert_eq!(cut(&chained), vec![0..100, 100..200, 200..250]);
}

// The byte measure of binary pairs.

fn pieces(s: &[u8]) -> Tokens {
    tokenize(s, Mode::Pieces, &piece_chunker())
}

/// The byte measure of a binary pair, its runs checked as a reviewer
/// would ([`extend::check_runs`]).
fn byte_measure(a: &[u8], b: &[u8]) -> (u64, Vec<Region>) {
    let mut c = compare(&pieces(a), &pieces(b), true);
    assert!(c.exact);
    let piece_lcs = c.common;
    let total = extend_runs(&mut c.regions, a, b);
    assert_eq!(extend::check_runs(&c.regions, a, b), Ok(total));
    assert!(total >= piece_lcs, "{total} < {piece_lcs}");
    (total, c.regions)
}

/// Reference: LCS of bytes by dynamic programming (an upper bound of the
/// measure: its runs are a common subsequence).
fn dp_lcs_of_bytes(a: &[u8], b: &[u8]) -> u64 {
    let mut prev = vec![0u32; b.len() + 1];
    let mut cur = vec![0u32; b.len() + 1];
    for &x in a {
        for j in 1..=b.len() {
            cur[j] = if x == b[j - 1] {
                prev[j - 1] + 1
            } else {
                prev[j].max(cur[j - 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()] as u64
}

/// Binary-looking bytes: a quarter NULs, the rest random.
fn binary(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 33) as u8;
            if v < 64 {
                0
            } else {
                v
            }
        })
        .collect()
}

#[test]
fn byte_measure_one_byte_inserted_every_200_bytes() {
    let a = binary(1, 100_000);
    let mut b = Vec::new();
    let mut inserted = 0;
    for (k, part) in a.chunks(200).enumerate() {
        if k > 0 {
            // A byte unlike both of its neighbours in a, so that no run can
            // grow through it.
            let (before, after) = (*b.last().unwrap(), part[0]);
            let x = (0u8..=255).find(|x| *x != before && *x != after).unwrap();
            b.push(x);
            inserted += 1;
        }
        b.extend_from_slice(part);
    }
    assert_eq!(b.len(), a.len() + inserted);
    let (common, runs) = byte_measure(&a, &b);
    // Every byte of a is in common (a is a subsequence of b), one run per
    // 200 bytes; the piece LCS alone loses the pieces around each insertion.
    assert_eq!(common, a.len() as u64);
    assert_eq!(runs.len(), 500);
    assert!(compare(&pieces(&a), &pieces(&b), false).common < a.len() as u64 * 9 / 10);
}

#[test]
fn byte_measure_one_kilobyte_block_replaced() {
    let a = binary(2, 50_000);
    let mut b = a.clone();
    // Every byte of the block differs (what `cmp -l a b | wc -l` counts).
    for x in &mut b[20_000..21_024] {
        *x ^= 0xff;
    }
    let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count() as u64;
    assert_eq!(differing, 1024);
    let (common, runs) = byte_measure(&a, &b);
    assert_eq!(common, a.len() as u64 - differing);
    assert_eq!(
        runs,
        vec![
            Region {
                off_a: 0,
                off_b: 0,
                len: 20_000
            },
            Region {
                off_a: 21_024,
                off_b: 21_024,
                len: 50_000 - 21_024
            }
        ]
    );
}

#[test]
fn byte_measure_small_and_empty_files() {
    // Shorter than a piece: the common prefix and suffix still count.
    assert_eq!(
        byte_measure(b"\0\x01\x02XY\x03\0", b"\0\x01\x02Z\x03\0").0,
        5
    );
    assert_eq!(byte_measure(b"", b"\0\0").0, 0);
    assert_eq!(byte_measure(b"\0\0\0", b"\0\0\0").0, 3);
    assert_eq!(byte_measure(b"\x01\x02", b"\x03\x04").0, 0);
}

/// A GNU .mo catalog: header, the tables of original and translated
/// strings (length, offset), then the strings, NUL-terminated.
fn mo_file(msgs: &[(&str, &str)]) -> Vec<u8> {
    let n = msgs.len() as u32;
    let tables = 28 + 16 * n;
    let mut strings = Vec::new();
    let mut orig = Vec::new();
    let mut trans = Vec::new();
    for (o, _) in msgs {
        orig.push((o.len() as u32, tables + strings.len() as u32));
        strings.extend_from_slice(o.as_bytes());
        strings.push(0);
    }
    for (_, t) in msgs {
        trans.push((t.len() as u32, tables + strings.len() as u32));
        strings.extend_from_slice(t.as_bytes());
        strings.push(0);
    }
    let mut v = Vec::new();
    for w in [0x950412de, 0, n, 28, 28 + 8 * n, 0, tables] {
        v.extend_from_slice(&u32::to_le_bytes(w));
    }
    for (len, off) in orig.into_iter().chain(trans) {
        v.extend_from_slice(&len.to_le_bytes());
        v.extend_from_slice(&off.to_le_bytes());
    }
    v.extend_from_slice(&strings);
    v
}

fn mo_messages(edit: Option<(usize, &str)>) -> Vec<(String, String)> {
    (0..150)
        .map(|k| {
            let o = format!("Message number {k}: file {} could not be opened", k * 7);
            let t = match edit {
                Some((e, s)) if e == k => s.to_string(),
                _ => format!(
                    "Meldung Nummer {k}: Datei {} konnte nicht geöffnet werden",
                    k * 7
                ),
            };
            (o, t)
        })
        .collect()
}

fn mo_of(m: &[(String, String)]) -> Vec<u8> {
    let r: Vec<(&str, &str)> = m.iter().map(|(o, t)| (o.as_str(), t.as_str())).collect();
    mo_file(&r)
}

#[test]
fn byte_measure_mo_catalogs() {
    let a = mo_of(&mo_messages(None));
    // A translation edited in place, same length: one byte differs.
    let same_len = mo_of(&mo_messages(Some((
        70,
        "Meldung Nummer 70: Datei 490 konnte nicht geöffnet werdeN",
    ))));
    assert_eq!(a.len(), same_len.len());
    assert_eq!(byte_measure(&a, &same_len).0, a.len() as u64 - 1);
    // A longer translation: its length and the offsets of the 79 strings
    // after it change in the tables (little-endian: the low byte, or two
    // where it carries), and the string itself differs.
    let longer = mo_of(&mo_messages(Some((
        70,
        "Meldung Nummer 70: Datei 490 konnte leider nicht geöffnet werden",
    ))));
    assert_eq!(longer.len(), a.len() + 7);
    let (common, _) = byte_measure(&a, &longer);
    assert!(common <= dp_lcs_of_bytes(&a, &longer));
    // Lost: the bytes that differ in the tables (the header and tables
    // keep their size: a substitution), none of the strings' (a's string
    // is in b's, 7 bytes inserted).
    let tables = 28 + 16 * 150;
    let differing = a[..tables]
        .iter()
        .zip(&longer[..tables])
        .filter(|(x, y)| x != y)
        .count() as u64;
    assert!((80..90).contains(&differing), "{differing}");
    assert_eq!(common, a.len() as u64 - differing);
}

#[test]
fn byte_measure_unrelated_binaries() {
    let a = binary(3, 5_000);
    let b = binary(4, 5_000);
    let (common, _) = byte_measure(&a, &b);
    // A few coincidental bytes at most, where the byte LCS finds ~a third.
    assert!(common < 10, "{common}");
    assert!(dp_lcs_of_bytes(&a, &b) > 1_000);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Any pair of binary files with edits: the runs are a valid chain
    /// (checked in [`byte_measure`]), at least the piece LCS, at most the
    /// LCS of bytes.
    #[test]
    fn byte_measure_is_a_checked_chain(
        seed in 0u64..1_000,
        len in 0usize..3_000,
        edits in proptest::collection::vec((0usize..3_000, 0u8..3, proptest::num::u8::ANY), 0..12),
    ) {
        let a = binary(seed, len);
        let mut b = a.clone();
        for (at, kind, byte) in edits {
            let at = at.min(b.len());
            match kind {
                0 => b.insert(at, byte),
                1 if at < b.len() => { b.remove(at); }
                _ if at < b.len() => b[at] = byte,
                _ => {}
            }
        }
        let (common, _) = byte_measure(&a, &b);
        proptest::prop_assert!(common <= dp_lcs_of_bytes(&a, &b));
    }
}

// The bound from the LCS length, before the traceback.

/// Lines from a small alphabet of varied lengths, so that pairs range from
/// near copies to unrelated.
fn line_text(seed: u64, n: usize, alphabet: u64) -> Vec<u8> {
    let mut x = seed;
    let mut v = Vec::new();
    for _ in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let w = (x >> 33) % alphabet;
        v.extend_from_slice(format!("{}{w}\n", "-".repeat((w % 7) as usize * 5)).as_bytes());
    }
    v
}

/// The bounded diff gives the full diff's verdict at every floor: the same
/// comparison when the pair can reach the floor, else a stop with an upper
/// bound below the floor (and the full figure is below it too).
fn same_verdict(a: &[u8], b: &[u8], floor: u64) -> bool {
    let (ta, tb) = (lines(a), lines(b));
    let full = compare(&ta, &tb, true);
    let mut d = Differ::new();
    d.set_a(&ta);
    d.floor = floor;
    let c = d.compare(&ta, &tb, true);
    if c.below {
        assert!(
            full.common < floor,
            "stopped, yet the LCS reaches the floor"
        );
        assert!(c.common >= full.common && c.common < floor);
        c.in_diff
    } else {
        assert_eq!(c, full);
        false
    }
}

#[test]
fn diff_stops_below_the_threshold() {
    // Unrelated texts sharing every line: the token bound before the diff
    // cannot drop them, the edit distance does. Lines of one length, so
    // that the bound is exact once the edit distance is known.
    let fixed = |t: Vec<u8>| -> Vec<u8> {
        t.split_inclusive(|&c| c == b'\n')
            .flat_map(|l| {
                format!("{:>6}", String::from_utf8_lossy(l).trim_start_matches('-')).into_bytes()
            })
            .collect()
    };
    let a = fixed(line_text(1, 2_000, 40));
    let b = fixed(line_text(2, 2_000, 40));
    assert_eq!(a.len(), 2_000 * 6);
    let full = compare(&lines(&a), &lines(&b), false).common;
    assert!(same_verdict(&a, &b, full + 1));
    assert!(same_verdict(&a, &b, a.len() as u64 / 2));
    // At or under the figure, the diff runs to the end.
    assert!(!same_verdict(&a, &b, full));
    assert!(!same_verdict(&a, &b, 1));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    #[test]
    fn bounded_diff_gives_the_full_diffs_verdict(
        sa in 0u64..1_000,
        sb in 0u64..1_000,
        na in 0usize..120,
        nb in 0usize..120,
        alphabet in 1u64..30,
        copy in 0usize..120,
        floor_pct in 0u64..=100,
    ) {
        let a = line_text(sa, na, alphabet);
        // b: a prefix of a's lines, then its own.
        let keep: usize = a.split_inclusive(|&c| c == b'\n').take(copy).map(|l| l.len()).sum();
        let mut b = a[..keep].to_vec();
        b.extend_from_slice(&line_text(sb, nb, alphabet));
        let floor = (a.len().min(b.len()) as u64 * floor_pct).div_ceil(100);
        same_verdict(&a, &b, floor);
    }
}

// Which algorithm aligns a pair, and which subsequence ties give.

#[test]
fn near_copies_take_myers_and_distant_pairs_the_bit_parallel_lcs() {
    use super::diff::{choose, Align, Lis};
    let n = 20_000u32;
    let a: Vec<u32> = (0..n).collect();
    // Ten scattered lines replaced: D = 20, Myers' (n+m)·D far below
    // ⌈n/64⌉·m.
    let mut b = a.clone();
    for k in 0..10 {
        b[(k * 1_999 + 7) as usize] = n + k;
    }
    let mut lis = Lis::default();
    assert_eq!(choose(&a, &b, (n + 10) as usize, &mut lis), Align::Myers);
    // Every other line differs: D = n, the bit-parallel pass is cheaper.
    let c: Vec<u32> = (0..n).map(|i| if i % 2 == 0 { i } else { n + i }).collect();
    assert_eq!(
        choose(&a, &c, (2 * n) as usize, &mut lis),
        Align::BitParallel
    );
    // Small pairs go bit-parallel without a look at the anchors.
    assert_eq!(
        choose(&a[..100], &b[..100], (n + 10) as usize, &mut lis),
        Align::BitParallel
    );
    // Both paths give the LCS: the same figure as the dynamic programme
    // on lines of one length.
    let text = |ids: &[u32]| -> Vec<u8> {
        ids.iter()
            .flat_map(|i| format!("{i:>8}\n").into_bytes())
            .collect()
    };
    for other in [&b, &c] {
        let (ta, tb) = (text(&a[..3_000]), text(&other[..3_000]));
        assert_eq!(
            compare(&lines(&ta), &lines(&tb), false).common,
            dp_lcs_bytes(&ta, &tb)
        );
    }
    let (ta, tb) = (text(&a), text(&b));
    let got = compare(&lines(&ta), &lines(&tb), true);
    assert!(got.exact);
    assert_eq!(got.common, (n as u64 - 10) * 9);
    assert_eq!(
        got.regions.len(),
        11,
        "ten replaced lines cut the file in 11 runs"
    );
}

#[test]
fn ties_between_equally_long_subsequences_are_broken_from_the_end() {
    // a = "yyyy" "x", b = "x" "x" "yyyy": either "x" or "yyyy" alone is a
    // longest common subsequence (one line). The bit-parallel traceback
    // walks back from the last lines and leaves a line of a out only while
    // that keeps the length: it keeps "yyyy" (a's first line with b's
    // last), 5 bytes; Myers (similar) would keep the first "x" of b,
    // 2 bytes. docs/formats.md
    // ("Ties") says so.
    let (a, b) = (b"yyyy\nx\n".to_vec(), b"x\nx\nyyyy\n".to_vec());
    let c = compare(&lines(&a), &lines(&b), true);
    assert!(c.exact);
    assert_eq!(c.common, 5);
    assert_eq!(
        c.regions,
        vec![Region {
            off_a: 0,
            off_b: 4,
            len: 5
        }]
    );
    struct Matches(Vec<(usize, usize)>);
    impl similar::algorithms::DiffHook for Matches {
        type Error = ();
        fn equal(&mut self, o: usize, n: usize, l: usize) -> std::result::Result<(), ()> {
            self.0.extend((0..l).map(|k| (o + k, n + k)));
            Ok(())
        }
    }
    let mut m = Matches(Vec::new());
    let (ia, ib) = ([1u32, 0], [0u32, 0, 1]);
    let _ = similar::algorithms::myers::diff(&mut m, &ia[..], 0..2, &ib[..], 0..3);
    assert_eq!(m.0, vec![(1, 1)], "Myers keeps an \"x\"");
}

#[test]
fn an_id_set_holds_what_was_inserted_and_pages_only_what_it_met() {
    let mut s = super::table::IdSet::default();
    for id in [0, 63, 64, 65_535, 65_536, 1_000_000] {
        s.insert(id);
    }
    for id in [0, 63, 64, 65_535, 65_536, 1_000_000] {
        assert!(s.contains(id), "{id}");
    }
    for id in [1, 62, 65, 65_534, 65_537, 999_999, 1_000_001, u32::MAX] {
        assert!(!s.contains(id), "{id}");
    }
    // A hostile id near 2^32: one more page and the page list, not
    // half a GiB of bits.
    s.insert(u32::MAX);
    assert!(s.contains(u32::MAX) && !s.contains(u32::MAX - 1));
    assert!(s.bytes() < 1 << 20, "{} bytes", s.bytes());
}
