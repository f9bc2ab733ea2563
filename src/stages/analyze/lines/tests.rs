//! The line source's tests: its pairs against a brute-force overlap of
//! every pair (in one set and in groups, from scratch and in re-runs), the
//! merge, the least overlap, the streamed reading, and the rules kept
//! from before (catalogs, long lines, fsim-verify's threshold).

use super::cache::Pass;
use super::exclude::Exclude;
use super::join::overlap;
use super::order::{kept, least_kept};
use super::read::{file_lines_by, lines, window_lines, windows};
use super::*;
use crate::formats::PercentOf;
use crate::stages::analyze::Changed;
use crate::stages::verify::{for_each_line_token, LONG_LINE};
use proptest::prelude::*;
use std::collections::HashMap;
use std::path::Path;

fn pair(a: u32, b: u32, common: u64) -> Pair {
    Pair {
        a,
        b,
        size_a: 10,
        size_b: 10,
        common,
        shared: u32::from(common > 0),
    }
}

#[test]
fn merge_keeps_chunk_figures_and_order() {
    let mut store = crate::stages::analyze::PairStore::new(1 << 20, None);
    for p in [pair(0, 2, 7), pair(1, 3, 5)] {
        store.push(p).unwrap();
    }
    store
        .extend(&[pair(0, 1, 0), pair(0, 2, 0), pair(2, 3, 0)])
        .unwrap();
    let c: Vec<Pair> = keep_chunk_figures(store.finish().unwrap())
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        c,
        vec![pair(0, 1, 0), pair(0, 2, 7), pair(1, 3, 5), pair(2, 3, 0)]
    );
}

pub(super) fn source(
    max_size: Option<u64>,
    catalogs: bool,
    min_percent: f64,
    floor: f64,
) -> LineSource {
    LineSource {
        max_size,
        catalogs,
        thresholds: Thresholds {
            min_bytes: 0,
            min_percent,
            percent_of: PercentOf::Smaller,
        },
        verify_floor: floor,
        site_names: 0,
    }
}

/// Files `fNN.EXT` written to a temporary folder, as the file table
/// has them.
pub(super) fn table(dir: &Path, ext: &str, texts: &[Vec<u8>]) -> Vec<FileEntry> {
    texts
        .iter()
        .enumerate()
        .map(|(f, text)| {
            let path = dir.join(format!("f{f:02}.{ext}"));
            std::fs::write(&path, text).unwrap();
            entry_at(f as u32, &path)
        })
        .collect()
}

/// File `id`, written at `path`, as the file table has it (content `id + 1`).
pub(super) fn entry_at(id: u32, path: &Path) -> FileEntry {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    FileEntry {
        id,
        size: m.len(),
        mtime_s: m.mtime(),
        mtime_ns: m.mtime_nsec() as u32,
        content: u128::from(id) + 1,
        ftype: FileType::Text,
        view: crate::formats::FileView::raw(m.len()),
        path: path.as_os_str().as_encoded_bytes().to_vec(),
    }
}

/// The pairs `src` keeps of `files` and the run's counts.
fn run_with(
    files: &[FileEntry],
    src: &LineSource,
    only: Option<&Changed>,
    memory: u64,
    threads: usize,
) -> (LineStats, Vec<(u32, u32)>) {
    let mut store = crate::stages::analyze::PairStore::new(1 << 20, None);
    let rows = LineFiles::of(files, src);
    let reuse = Reuse {
        only,
        ..Reuse::default()
    };
    let st = line_pairs(&rows, src, None, threads, memory, &reuse, &mut store).unwrap();
    let pairs = keep_chunk_figures(store.finish().unwrap())
        .map(|p| p.map(|p| (p.a, p.b)).unwrap())
        .collect();
    (st, pairs)
}

fn kept_with(
    files: &[FileEntry],
    src: &LineSource,
    only: Option<&Changed>,
    memory: u64,
) -> Vec<(u32, u32)> {
    run_with(files, src, only, memory, 2).1
}

fn kept_pairs(files: &[FileEntry], src: &LineSource) -> Vec<(u32, u32)> {
    kept_with(files, src, None, 1 << 30)
}

/// Catalog-like files (the same msgids, msgstrs of their own): joined in
/// groups to stay within a small budget, the line source keeps the same
/// pairs as in one set, and reads each file at most twice (the attempt in
/// one set, and the count that spills the lines), however many groups.
#[test]
fn groups_within_memory_keep_the_same_pairs() {
    let t = tempfile::tempdir().unwrap();
    let texts: Vec<Vec<u8>> = (0..12u32)
        .map(|f| {
            let mut text = String::new();
            for m in 0..200 {
                text.push_str(&format!("msgid \"message {m}\"\n"));
                // Files 0-5 share their translations, 6-11 have their own.
                let lang = if f < 6 { 0 } else { f };
                text.push_str(&format!("msgstr \"traduction {m} {lang}\"\n\n"));
            }
            text.into_bytes()
        })
        .collect();
    let files = table(t.path(), "po", &texts);
    let src = source(Some(0), true, 60.0, 0.0);
    let (one, all) = run_with(&files, &src, None, 1 << 30, 2);
    // The 15 pairs among files 0-5 share all their lines; msgids alone
    // are under 60 %.
    let want: Vec<(u32, u32)> = (0..6u32)
        .flat_map(|a| (a + 1..6).map(move |b| (a, b)))
        .collect();
    assert_eq!(all, want);
    assert_eq!((one.contents, one.passes, one.read), (12, 1, 12));
    // ~400 distinct lines a file, 56 bytes each: 12 contents do not fit
    // in 256 KiB; groups of ~6 do.
    let (split, some) = run_with(&files, &src, None, 256 << 10, 2);
    assert_eq!(split.contents, 12);
    assert!((2..12).contains(&split.passes), "{split:?}");
    assert!(split.read <= 24, "{split:?}");
    // Files 6-11's 200 translations each are theirs alone: left out of
    // the groups (a few may be kept by the filter's false positives).
    assert!((1100..=1200).contains(&split.single), "{split:?}");
    assert_eq!(some, want);
    let (tiny, each) = run_with(&files, &src, None, 1, 3);
    assert_eq!(tiny.passes, 12, "one content a group");
    // Each file twice: the attempt reads the first window of files (all
    // 12 here) before it finds they do not fit, and the count reads each;
    // not once more for every group before it (66 more reads).
    assert_eq!(tiny.read, 24, "{tiny:?}");
    assert!((1100..=1200).contains(&tiny.single), "{tiny:?}");
    assert_eq!(each, want);
}

#[test]
fn workers_read_the_files_in_their_order_and_count_each_line() {
    let t = tempfile::tempdir().unwrap();
    let texts: Vec<Vec<u8>> = (0..11)
        .map(|f| format!("same\nline {f}\nsame\n{}", "x\n".repeat(f)).into_bytes())
        .collect();
    let mut files = table(t.path(), "txt", &texts);
    // A changed file is left out in its place.
    files[4].size += 1;
    let reps: Vec<usize> = (0..files.len()).collect();
    let none = Exclude::default();
    let files = LineFiles::of(&files, &source(None, false, 30.0, 0.0));
    let one = window_lines(&files, &reps, 1, &none, &mut Pass::none());
    assert!(one[4].is_none() && one.iter().filter(|l| l.is_none()).count() == 1);
    let lines = one[7].clone().unwrap();
    let counts: Vec<u32> = lines.lines.iter().map(|&(_, _, c)| c).collect();
    assert_eq!(counts.iter().sum::<u32>(), 10, "3 lines and 7 of x");
    assert_eq!(counts.len(), 3, "same, line 7, x");
    for threads in [2, 3, 16] {
        assert_eq!(
            window_lines(&files, &reps, threads, &none, &mut Pass::none()),
            one,
            "{threads}"
        );
    }
}

/// A file streamed in blocks of any size has the lines of the whole
/// file, long lines cut across blocks included; a file whose length
/// changed is left out.
#[test]
fn streamed_lines_are_the_whole_files() {
    let t = tempfile::tempdir().unwrap();
    let long: String = (0..300)
        .map(|i| format!("<e id=\"{i}\">{i}</e>, "))
        .collect();
    let text = format!("a\n\nb\n{long}\nb\na\n{long}tail without newline");
    let files = table(t.path(), "txt", &[text.clone().into_bytes()]);
    let mut want: Vec<(u64, u32, u32)> = lines(text.as_bytes())
        .into_iter()
        .map(|(h, n)| (h, n, 1))
        .collect();
    want.sort_unstable();
    want.dedup_by(|l, k| {
        let same = l.0 == k.0;
        k.2 += u32::from(same);
        same
    });
    assert!(want.len() > 20, "long lines cut into pieces");
    let none = Exclude::default();
    for block in [1, 2, 7, 100, LONG_LINE, 1 << 20] {
        assert_eq!(
            file_lines_by(&files[0], block, &none).map(|l| l.lines),
            Some(want.clone()),
            "{block}"
        );
    }
    let mut changed = files[0].clone();
    changed.size -= 1;
    assert_eq!(file_lines_by(&changed, 7, &none), None);
}

/// A window closes at 256 files or at 4 MiB of them, and a file
/// larger than that is a window alone: every file once, in order.
#[test]
fn windows_are_bounded_by_files_and_by_bytes() {
    let t = tempfile::tempdir().unwrap();
    let mut files = table(t.path(), "txt", &vec![b"x\n".to_vec(); 600]);
    for (i, e) in files.iter_mut().enumerate() {
        e.size = match i {
            0..=299 => 10,
            300 => 9 << 20,
            _ => 1 << 20,
        };
    }
    let reps: Vec<usize> = (0..files.len()).collect();
    let files = LineFiles::of(&files, &source(None, false, 30.0, 0.0));
    let sizes: Vec<usize> = windows(&files, &reps).map(|w| w.len()).collect();
    assert_eq!(&sizes[..4], &[256, 44, 1, 4]);
    assert_eq!(sizes.iter().sum::<usize>(), 600);
    let order: Vec<usize> = windows(&files, &reps).flatten().copied().collect();
    assert_eq!(order, reps);
}

/// A re-run's line source (`only`: the changed files) finds exactly
/// the pairs with a changed file that a full run finds, whichever files
/// changed (first, last, neighbours, none, all), in one set or in groups.
#[test]
fn a_rerun_finds_the_pairs_of_its_changed_files_and_no_other() {
    let t = tempfile::tempdir().unwrap();
    // Every file shares lines with several others: 40 lines from a
    // pool of 60, drawn by the file's number.
    let texts: Vec<Vec<u8>> = (0..14u64)
        .map(|f| {
            (0..40u64)
                .map(|i| format!("pool line {:03}\n", (i * (f % 5 + 1) + f) % 60))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    let files = table(t.path(), "txt", &texts);
    let src = source(Some(1 << 20), false, 20.0, 0.0);
    for memory in [1 << 30, 16 << 10] {
        let all = kept_with(&files, &src, None, memory);
        assert!(all.len() > 30, "{}", all.len());
        for changed in [vec![0], vec![13], vec![5, 6], vec![], (0..14).collect()] {
            let c = changed_of(files.len(), &changed);
            let want: Vec<(u32, u32)> = all.iter().copied().filter(|&(a, b)| c.any(a, b)).collect();
            let got = kept_with(&files, &src, Some(&c), memory);
            assert_eq!(got, want, "changed {changed:?}, memory {memory}");
        }
    }
}

/// A re-run with few changed files interns, of the unchanged contents,
/// only the lines a changed one holds, and finds the same pairs: here
/// each file has 20 lines of its own beside the shared ones, so one
/// changed file of 14 leaves most entries out.
#[test]
fn a_rerun_interns_only_the_lines_its_changed_contents_hold() {
    let t = tempfile::tempdir().unwrap();
    let texts: Vec<Vec<u8>> = (0..14u64)
        .map(|f| {
            let shared =
                (0..20u64).map(|i| format!("pool line {:03}\n", (i * (f % 3 + 1) + f) % 30));
            let own = (0..20u64).map(|i| format!("file {f} line {i}\n"));
            shared.chain(own).collect::<String>().into_bytes()
        })
        .collect();
    let files = table(t.path(), "txt", &texts);
    let src = source(Some(1 << 20), false, 20.0, 0.0);
    let (whole, all) = run_with(&files, &src, None, 1 << 30, 2);
    for changed in [vec![0], vec![7], vec![3, 11]] {
        let c = changed_of(files.len(), &changed);
        let (st, got) = run_with(&files, &src, Some(&c), 1 << 30, 2);
        let want: Vec<(u32, u32)> = all.iter().copied().filter(|&(a, b)| c.any(a, b)).collect();
        assert!(!want.is_empty(), "changed {changed:?}");
        assert_eq!(got, want, "changed {changed:?}");
        // The changed files' 40 lines each, and at most 20 shared lines of
        // each other content.
        assert!(
            st.interned <= 40 * changed.len() as u64 + 20 * 14,
            "{} of {}",
            st.interned,
            whole.interned
        );
        assert!(
            st.interned * 2 < whole.interned,
            "{} of {}",
            st.interned,
            whole.interned
        );
    }
    // A file the pass cannot read leaves the filter out: all interned.
    let c = changed_of(files.len(), &[5]);
    std::fs::remove_file(t.path().join("f05.txt")).unwrap();
    let (st, _) = run_with(&files, &src, Some(&c), 1 << 30, 2);
    assert!(st.interned > 20 * 13, "{}", st.interned);
}

fn changed_of(n: usize, changed: &[usize]) -> Changed {
    let mut flags = vec![false; n];
    changed.iter().for_each(|&f| flags[f] = true);
    Changed {
        count: changed.len() as u64,
        flags,
    }
}

/// A pair whose overlap is under fsim-verify's threshold is not a
/// candidate (fsim-verify would drop it); long lines count by the
/// pieces fsim-verify compares, so two versions of a one-line file
/// are a candidate where their only lines differ.
#[test]
fn pairs_under_the_verify_threshold_are_cut_and_long_lines_count_by_pieces() {
    let t = tempfile::tempdir().unwrap();
    let shared: Vec<u8> = (0..100)
        .flat_map(|i| format!("shared line number {i:04}\n").into_bytes())
        .collect();
    let own = |tag: &str| -> Vec<u8> {
        (0..150)
            .flat_map(|i| format!("{tag} line of its own {i:04}\n").into_bytes())
            .collect()
    };
    // 40 % of each file in common.
    let a = [shared.clone(), own("first")].concat();
    let b = [shared.clone(), own("second")].concat();
    // One-line XML, one attribute changed.
    let xml = |v: &str| -> Vec<u8> {
        let mut l: Vec<u8> = (0..200)
            .flat_map(|i| format!("<e id=\"{i}\" k=\"{}\">text {i}</e>", i * 37 % 101).into_bytes())
            .collect();
        l.splice(4000..4000, v.bytes());
        l
    };
    let files = table(t.path(), "txt", &[a, b, xml(" x=\"1\""), xml(" x=\"2\"")]);
    assert!(files[2].size as usize > LONG_LINE);
    let src = |cut: f64| source(None, false, 30.0, cut);
    let p01 = percent(shared.len() as u64, files[0].size.min(files[1].size));
    assert!((35.0..45.0).contains(&p01), "{p01}");
    assert_eq!(kept_pairs(&files, &src(0.0)), vec![(0, 1), (2, 3)]);
    // At the overlap: kept; just above: cut.
    assert_eq!(kept_pairs(&files, &src(p01)), vec![(0, 1), (2, 3)]);
    assert_eq!(kept_pairs(&files, &src(p01 + 0.1)), vec![(2, 3)]);
    assert_eq!(kept_pairs(&files, &src(98.0)), vec![(2, 3)]);
    assert_eq!(kept_pairs(&files, &src(100.0)), vec![]);
    // Under a size limit, only the small files are compared.
    let xml_size = files[2].size.max(files[3].size);
    assert!(xml_size < files[0].size.min(files[1].size));
    let under = source(Some(xml_size), false, 30.0, 0.0);
    assert_eq!(kept_pairs(&files, &under), vec![(2, 3)]);
    assert_eq!(
        kept_pairs(&files, &source(Some(0), false, 30.0, 0.0)),
        vec![]
    );
}

#[test]
fn catalogs_by_name_or_compiled_by_their_bytes() {
    let entry = |path: &str, kind: ViewKind| FileEntry {
        id: 0,
        size: 10,
        mtime_s: 0,
        mtime_ns: 0,
        content: 1,
        ftype: FileType::Text,
        view: crate::formats::FileView {
            kind,
            ..crate::formats::FileView::raw(10)
        },
        path: path.as_bytes().to_vec(),
    };
    assert!(is_catalog(&entry(
        "locale/fr/LC_MESSAGES/django.po",
        ViewKind::Raw
    )));
    assert!(is_catalog(&entry("messages.pot", ViewKind::Raw)));
    assert!(is_catalog(&entry("django.mo.bak", ViewKind::Mo)));
    assert!(!is_catalog(&entry("django.mo", ViewKind::Raw)));
    assert!(!is_catalog(&entry("report.pdf", ViewKind::Pdf)));
}

#[test]
fn lines_keep_their_newline() {
    let v: Vec<u32> = lines(b"ab\n\ncd").iter().map(|&(_, n)| n).collect();
    assert_eq!(v, vec![3, 1, 2]);
    let long = [vec![b'x'; LONG_LINE], b", y\n".to_vec()].concat();
    let v: Vec<u32> = lines(&long).iter().map(|&(_, n)| n).collect();
    assert!(v.len() > 1 && v.iter().sum::<u32>() as usize == long.len());
}

/// Lines of the random trees: four frequent ones (a blank line, `}`,
/// ...), pool lines of several lengths, and a long line cut into pieces.
fn pool_line(k: usize) -> String {
    match k {
        0 => "\n".into(),
        1 => "}\n".into(),
        2 => "    pass\n".into(),
        3 => "import os\n".into(),
        4 => (0..80).map(|i| format!("{i}, ")).collect::<String>() + "\n",
        k => format!("pool line {k} {}\n", "x".repeat(k % 7 * 9)),
    }
}

/// Every pair of `texts` (by number) kept by `src`, from the overlap of
/// their tokens counted by their bytes: the definition, pair by pair.
fn brute_force(texts: &[Vec<u8>], src: &LineSource) -> Vec<(u32, u32)> {
    let bags: Vec<HashMap<&[u8], u64>> = texts
        .iter()
        .map(|t| {
            let mut bag = HashMap::new();
            for_each_line_token(t, |s, e| *bag.entry(&t[s..e]).or_insert(0) += 1);
            bag
        })
        .collect();
    let mut out = Vec::new();
    for a in 0..texts.len() {
        for b in a + 1..texts.len() {
            let (sa, sb) = (texts[a].len() as u64, texts[b].len() as u64);
            if sa == 0 || sb == 0 {
                continue;
            }
            let common: u64 = bags[a]
                .iter()
                .map(|(l, &n)| n.min(bags[b].get(l).copied().unwrap_or(0)) * l.len() as u64)
                .sum();
            if kept(common, sa, sb, src) {
                out.push((a as u32, b as u32));
            }
        }
    }
    out
}

fn arb_thresholds() -> impl Strategy<Value = LineSource> {
    (
        prop::sample::select(vec![0u64, 20, 200]),
        prop::sample::select(vec![0.0, 10.0, 30.0, 50.0, 80.0]),
        prop::bool::ANY,
        prop::sample::select(vec![0.0, 30.0, 50.0, 75.0]),
    )
        .prop_map(|(min_bytes, min_percent, larger, floor)| LineSource {
            max_size: None,
            catalogs: false,
            thresholds: Thresholds {
                min_bytes,
                min_percent,
                percent_of: if larger {
                    PercentOf::Larger
                } else {
                    PercentOf::Smaller
                },
            },
            verify_floor: floor,
            site_names: 0,
        })
}

fn arb_texts() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let line = prop_oneof![3 => 0usize..4, 2 => 4usize..30];
    let text = (prop::collection::vec(line, 0..40), prop::bool::ANY).prop_map(|(ls, cut)| {
        let mut t: String = ls.into_iter().map(pool_line).collect();
        if cut && t.ends_with('\n') {
            t.pop();
        }
        t.into_bytes()
    });
    prop::collection::vec(text, 2..14)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The prefix-filtered pairs are exactly the brute force's, in one
    /// set or in groups, on any number of threads, and a re-run's are
    /// those with a changed file.
    #[test]
    fn prefix_filter_equals_brute_force(
        texts in arb_texts(),
        src in arb_thresholds(),
        small in prop::bool::ANY,
        threads in 1usize..4,
        changed in prop::collection::vec(prop::bool::ANY, 14),
    ) {
        let t = tempfile::tempdir().unwrap();
        let files = table(t.path(), "txt", &texts);
        let want = brute_force(&texts, &src);
        let memory = if small { 2 << 10 } else { 1 << 30 };
        let (st, got) = run_with(&files, &src, None, memory, threads);
        prop_assert_eq!(&got, &want);
        prop_assert!(st.candidates >= st.pairs && st.pairs == want.len() as u64);
        let which: Vec<usize> = (0..files.len()).filter(|&f| changed[f]).collect();
        let c = changed_of(files.len(), &which);
        let (_, rerun) = run_with(&files, &src, Some(&c), memory, threads);
        let few = changed_of(files.len(), &which[..which.len().min(files.len() / 4)]);
        let (_, rerun_few) = run_with(&files, &src, Some(&few), memory, threads);
        prop_assert_eq!(rerun_few, want.iter().copied().filter(|&(a, b)| few.any(a, b)).collect::<Vec<_>>());
        let want: Vec<(u32, u32)> = want.into_iter().filter(|&(a, b)| c.any(a, b)).collect();
        prop_assert_eq!(rerun, want);
    }

    /// The galloping merge is the plain one.
    #[test]
    fn overlap_is_the_plain_merge(
        a in prop::collection::btree_map(0u32..300, 1u32..4, 0..80),
        b in prop::collection::btree_map(0u32..300, 1u32..4, 0..200),
    ) {
        let len: Vec<u32> = (0..300).map(|r| r % 13 + 1).collect();
        let want: u64 = a
            .iter()
            .filter_map(|(r, &n)| b.get(r).map(|&m| n.min(m) as u64 * len[*r as usize] as u64))
            .sum();
        let a: Vec<(u32, u32)> = a.into_iter().collect();
        let b: Vec<(u32, u32)> = b.into_iter().collect();
        prop_assert_eq!(overlap(&a, &b, &len), want);
        prop_assert_eq!(overlap(&b, &a, &len), want);
    }

    /// The least overlap kept is kept, and one byte less is not.
    #[test]
    fn least_kept_is_the_least(src in arb_thresholds(), size in 1u64..100_000) {
        let t = least_kept(size, size, &src);
        prop_assert!(t >= 1);
        if t <= size {
            prop_assert!(kept(t, size, size, &src));
        }
        prop_assert!(t == 1 || !kept(t - 1, size, size, &src));
    }
}
