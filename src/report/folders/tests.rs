//! Tests of the folder pairs: the table, the credits, the figures and the
//! families on small file tables.

use super::credits::NO_ALIAS;
use super::*;
use crate::formats::files::FileEntry;
use crate::formats::views::FileType;
use std::collections::BTreeMap;

/// A table of (path, size, content) and its identical sets.
fn table(files: &[(&str, u64, u128)]) -> (CompactTable, Vec<Set>, HashMap<u32, usize>) {
    let mut t = CompactTable::default();
    for (i, &(p, size, content)) in files.iter().enumerate() {
        t.push(&FileEntry {
            id: i as u32,
            size,
            content,
            ftype: FileType::Text,
            view: crate::formats::FileView::raw(size),
            path: p.as_bytes().to_vec(),
            mtime_s: 0,
            mtime_ns: 0,
        });
    }
    let mut by: BTreeMap<u128, Vec<u32>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        by.entry(f.2).or_default().push(i as u32);
    }
    let mut sets = Vec::new();
    let mut set_of = HashMap::new();
    for v in by.into_values() {
        if v.len() > 1 {
            set_of.insert(v[0], sets.len());
            sets.push(Set {
                size: files[v[0] as usize].1,
                files: v,
            });
        }
    }
    (t, sets, set_of)
}

struct Set {
    size: u64,
    files: Vec<u32>,
}

/// [`table`] of files whose paths are owned (made in a loop).
fn owned_table(files: &[(String, u64, u128)]) -> (CompactTable, Vec<Set>, HashMap<u32, usize>) {
    let refs: Vec<(&str, u64, u128)> = files.iter().map(|(p, s, c)| (p.as_str(), *s, *c)).collect();
    table(&refs)
}

fn set_refs(sets: &[Set]) -> Vec<SetRef<'_>> {
    sets.iter()
        .map(|s| SetRef {
            size: s.size,
            files: &s.files,
        })
        .collect()
}

/// A budget small enough that a few credits spill to disk.
fn sort() -> SortOptions {
    SortOptions::with_memory(crate::io::sorter::MIN_MEMORY)
}

fn paths(r: &FolderReport) -> Vec<(String, String)> {
    r.pairs
        .iter()
        .map(|p| {
            (
                String::from_utf8_lossy(&p.a).into_owned(),
                String::from_utf8_lossy(&p.b).into_owned(),
            )
        })
        .collect()
}

#[test]
fn two_folders_of_two_files() {
    // r/A/x = r/B/x; r/A/y and r/B/y share 600 of 1,000 bytes.
    let (t, sets, set_of) = table(&[
        ("r/A/x", 400, 1),
        ("r/A/y", 1000, 2),
        ("r/B/x", 400, 1),
        ("r/B/y", 1000, 3),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f.figure(50.0, &[], |f| f.link(1, 3, 600)).unwrap();
    assert_eq!(paths(&r), [("r/A".into(), "r/B".into())]);
    let p = &r.pairs[0];
    assert_eq!((p.a_in_b, p.b_in_a), (1000, 1000));
    // By relative path: x the same, y changed; each pair of files once.
    assert_eq!((p.same, p.changed, p.only_a, p.only_b), (1, 1, 0, 0));
    assert_eq!((p.files_a, p.bytes_a), (2, 1400));
    assert!((p.percent() - 1000.0 / 14.0).abs() < 1e-9);
}

#[test]
fn a_sub_folder_pair_under_a_reported_pair_is_not_listed() {
    // (p1, p2) at 75 %; (p1/x, p2/x) at 9 %; (p1/x/sub, p2/x/sub) at
    // 100 %, yet inside the reported (p1, p2).
    let (t, sets, set_of) = table(&[
        ("w/p1/x/sub/a", 100, 1),
        ("w/p1/x/big", 1000, 2),
        ("w/p1/y/c", 3000, 3),
        ("w/p2/x/sub/a", 100, 1),
        ("w/p2/x/big", 1000, 4),
        ("w/p2/y/c", 3000, 3),
    ]);
    let sr = set_refs(&sets);
    let r = Folders::new(&t, &sr, &set_of, sort())
        .unwrap()
        .figure(50.0, &[], |_| Ok(()))
        .unwrap();
    assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
}

#[test]
fn a_pair_under_a_top_that_is_not_kept_is_found_in_the_second_pass() {
    // (p1, p2) at 18 %: their x/ folders are copies (100 %), and x/sub
    // too, inside the reported x/ pair.
    let (t, sets, set_of) = table(&[
        ("w/p1/x/a", 1000, 1),
        ("w/p1/x/sub/s", 100, 4),
        ("w/p1/y/big", 5000, 2),
        ("w/p2/x/a", 1000, 1),
        ("w/p2/x/sub/s", 100, 4),
        ("w/p2/y/big", 5000, 3),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f.figure(50.0, &[], |f| f.link(2, 5, 100)).unwrap();
    assert_eq!(paths(&r), [("w/p1/x".into(), "w/p2/x".into())]);
    let p = &r.pairs[0];
    assert_eq!((p.a_in_b, p.b_in_a, p.same), (1100, 1100, 2));
    let r = Folders::new(&t, &sr, &set_of, sort())
        .unwrap()
        .figure(10.0, &[], |f| f.link(2, 5, 100))
        .unwrap();
    assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
    assert_eq!((r.pairs[0].a_in_b, r.pairs[0].changed), (1200, 1));
}

#[test]
fn groups_inside_a_pair_are_explained_by_it() {
    let (t, sets, set_of) = table(&[
        ("w/p1/src/a", 500, 1),
        ("w/p1/src/b", 500, 2),
        ("w/p2/src/a", 500, 1),
        ("w/p2/src/b", 500, 4),
        ("w/x/c", 500, 5),
        ("w/y/c", 500, 6),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    // The set {0, 2} and the link {1, 3} are inside p1/p2's pair; the
    // link {4, 5} is between folders of no pair; {0, 4} spans both.
    let groups: [&[u32]; 4] = [&[0, 2], &[1, 3], &[4, 5], &[0, 4]];
    let r = f
        .figure(50.0, &groups, |f| {
            f.link(1, 3, 450)?;
            f.link(4, 5, 100)
        })
        .unwrap();
    assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
    assert_eq!(r.explains, [Some(0), Some(0), None, None]);
}

#[test]
fn copied_trees_report_their_top_folders_only() {
    // Two copies of a project with two sub-folders, one file edited,
    // one file only in the copy.
    let (t, sets, set_of) = table(&[
        ("w/p1/src/a", 500, 1),
        ("w/p1/src/b", 500, 2),
        ("w/p1/doc/c", 500, 3),
        ("w/p2/src/a", 500, 1),
        ("w/p2/src/b", 500, 4),
        ("w/p2/doc/c", 500, 3),
        ("w/p2/doc/new", 300, 5),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f.figure(50.0, &[], |f| f.link(1, 4, 450)).unwrap();
    assert_eq!(paths(&r), [("w/p1".into(), "w/p2".into())]);
    let p = &r.pairs[0];
    assert_eq!((p.a_in_b, p.b_in_a), (1450, 1450));
    assert_eq!((p.same, p.changed, p.only_a, p.only_b), (2, 1, 0, 1));
}

#[test]
fn the_second_pass_lists_a_pairs_files_and_finds_identical_trees() {
    let (t, sets, set_of) = table(&[
        ("w/p1/src/a", 500, 1),
        ("w/p1/src/b", 500, 2),
        ("w/p1/doc/c", 500, 3),
        ("w/p2/src/a", 500, 1),
        ("w/p2/src/b", 500, 4),
        ("w/p2/doc/c", 500, 3),
        ("w/p2/doc/new", 300, 5),
        ("v/q1/x", 200, 6),
        ("v/q1/s/y", 0, 0),
        ("v/q2/x", 200, 6),
        ("v/q2/s/y", 0, 0),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let mut r = f.figure(50.0, &[], |f| f.link(1, 4, 450)).unwrap();
    f.start_details(&r).unwrap();
    f.link(1, 4, 450).unwrap();
    f.finish_details(&mut r).unwrap();
    assert_eq!(
        paths(&r),
        [
            ("w/p1".into(), "w/p2".into()),
            ("v/q1".into(), "v/q2".into())
        ]
    );
    let l = r.pairs[0].files.as_deref().unwrap();
    assert_eq!((&l.same[..], l.same_count), (&[(0, 3), (2, 5)][..], 2));
    assert_eq!(
        (&l.changed[..], l.changed_count),
        (&[(1, 4, Some(450))][..], 1)
    );
    assert_eq!((&l.only_a[..], &l.only_b[..]), (&[][..], &[6][..]));
    assert!(l.only_listed && r.pairs[0].tree.is_none());
    // q1 and q2: the same paths and contents, an empty file included.
    let want = TreeCopy {
        first_a: 7,
        first_b: 9,
        files: 2,
    };
    assert_eq!(r.pairs[1].tree, Some(want));
    // The empty file at the same path is the same in both.
    let l = r.pairs[1].files.as_deref().unwrap();
    assert_eq!(
        (&l.same[..], &l.only_a[..], &l.only_b[..]),
        (&[(7, 9), (8, 10)][..], &[][..], &[][..])
    );
}

#[test]
fn unrelated_folders_and_nested_copies_are_not_paired() {
    // A folder and a copy of it inside itself: not a pair; unrelated
    // folders sharing one small file of many: under the threshold.
    let (t, sets, set_of) = table(&[
        ("r/A/x", 400, 1),
        ("r/A/old/x", 400, 1),
        ("r/C/lic", 100, 7),
        ("r/C/big", 9000, 8),
        ("r/D/lic", 100, 7),
        ("r/D/other", 9000, 9),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f.figure(50.0, &[], |_| Ok(())).unwrap();
    assert!(r.pairs.is_empty(), "{:?}", paths(&r));
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f.figure(0.0, &[], |_| Ok(())).unwrap();
    assert_eq!(paths(&r), [("r/C".into(), "r/D".into())]);
}

#[test]
fn a_file_with_many_partners_counts_once() {
    // A/x matches three files of B: A's figure is x's size at most.
    let (t, sets, set_of) = table(&[
        ("r/A/x", 1000, 1),
        ("r/B/y1", 1000, 2),
        ("r/B/y2", 1000, 3),
        ("r/B/y3", 1000, 4),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f
        .figure(0.0, &[], |f| {
            (1..4).try_for_each(|y| f.link(0, y, 900 + y as u64))
        })
        .unwrap();
    let p = &r.pairs[0];
    assert_eq!(p.a_in_b, 903);
    assert_eq!(p.b_in_a, 901 + 902 + 903);
}

#[test]
fn identical_sets_in_too_many_folders_propose_nothing_and_count_by_folder() {
    // A LICENSE in more than SET_FOLDERS folders, each with a main file of
    // its own; d0 and d1 also share a copy of a third file.
    let mut files: Vec<(String, u64, u128)> = Vec::new();
    for k in 0..=SET_FOLDERS {
        files.push((format!("r/d{k}/LICENSE"), 1000, 1));
        files.push((format!("r/d{k}/main"), 1000, 100 + k as u128));
    }
    files.push(("r/d0/third".into(), 3000, 2));
    files.push(("r/d1/third".into(), 3000, 2));
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let r = Folders::new(&t, &sr, &set_of, sort())
        .unwrap()
        .figure(0.0, &[], |_| Ok(()))
        .unwrap();
    assert_eq!(paths(&r), [("r/d0".into(), "r/d1".into())]);
    assert_eq!(r.wide_sets, 1);
    // Its LICENSE counts in the pair the third file proposed.
    let p = &r.pairs[0];
    assert_eq!((p.a_in_b, p.b_in_a, p.bytes_a), (4000, 4000, 5000));
    assert_eq!((p.same, p.changed, p.only_a, p.only_b), (2, 1, 0, 0));
    // Before the threshold: 80 % with it, 60 % without.
    let r = Folders::new(&t, &sr, &set_of, sort())
        .unwrap()
        .figure(70.0, &[], |_| Ok(()))
        .unwrap();
    assert_eq!(paths(&r), [("r/d0".into(), "r/d1".into())]);
}

#[test]
fn a_wide_set_counts_in_the_pairs_of_every_height_that_hold_it() {
    // The licence one folder down (r/dK/legal/LICENSE) and in a folder of
    // its own under the root: (r/d0, r/d1) counts it, the folders that
    // hold none of it ((r/d0/src, r/d1/src)) do not.
    let mut files: Vec<(String, u64, u128)> = Vec::new();
    for k in 0..=SET_FOLDERS {
        files.push((format!("r/d{k}/legal/LICENSE"), 1000, 1));
        files.push((format!("r/d{k}/main"), 1000, 100 + k as u128));
    }
    files.push(("LICENSE".into(), 1000, 1));
    files.push(("r/d0/src/third".into(), 3000, 2));
    files.push(("r/d1/src/third".into(), 3000, 2));
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let r = Folders::new(&t, &sr, &set_of, sort())
        .unwrap()
        .figure(70.0, &[], |_| Ok(()))
        .unwrap();
    assert_eq!(paths(&r), [("r/d0".into(), "r/d1".into())]);
    assert_eq!((r.pairs[0].a_in_b, r.pairs[0].b_in_a), (4000, 4000));
    let top = r.listed(0, None).unwrap();
    assert_eq!(kids(&top), [("src".into(), "src".into())]);
    let src = &top.children[0];
    assert_eq!((src.a_in_b, src.b_in_a, src.bytes_a), (3000, 3000, 3000));
}

#[test]
fn a_wide_identical_set_proposes_its_pairs_folder_by_folder() {
    // 100 copies of a folder of three files (sets of 100 files), and an
    // empty file in each (which pairs nothing by itself).
    let mut files: Vec<(String, u64, u128)> = Vec::new();
    for k in 0..100 {
        for i in 0..3u128 {
            files.push((format!("many/copy-{k:03}/part-{i}"), 500, 10 + i));
        }
        files.push((format!("many/copy-{k:03}/empty"), 0, 0));
    }
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let mut r = f.figure(50.0, &[], |_| Ok(())).unwrap();
    f.start_details(&r).unwrap();
    f.finish_details(&mut r).unwrap();
    assert_eq!((r.pairs.len(), r.families.len(), r.wide_sets), (4950, 1, 0));
    assert_eq!(r.families[0].label, b"many/*");
    assert_eq!(r.families[0].folders, 100);
    for p in &r.pairs {
        assert!(p.tree.is_some(), "{p:?}");
        assert_eq!((p.a_in_b, p.b_in_a), (1500, 1500));
        assert_eq!((p.same, p.changed, p.only_a, p.only_b), (4, 0, 0, 0));
    }
    let l = r.pairs[0].files.as_deref().unwrap();
    assert_eq!((l.same.len(), l.same_count), (4, 4));
}

/// `copies` copies of a project of 3 folders × 10 files (path, size,
/// content); in copy k, file k of each folder `edited` names has a new
/// content of its own (1000 + k, the same in its folders).
fn copied_projects(copies: u128, edited: impl Fn(&str) -> bool) -> Vec<(String, u64, u128)> {
    let mut files = Vec::new();
    for k in 0..copies {
        for (s, sub) in ["src", "doc", "test"].into_iter().enumerate() {
            for i in 0..10u128 {
                let content = if edited(sub) && i == k % 10 {
                    1000 + k
                } else {
                    i * 10 + s as u128
                };
                files.push((format!("w/p{k:02}/{sub}/f{i}"), 100 + i as u64, content));
            }
        }
    }
    files
}

#[test]
fn twenty_copied_projects_spill_and_pair_at_their_tops() {
    // 20 copies of a project of 3 folders × 10 files; in copy k, file
    // k of src/ is edited (a new content, linked to the others).
    let files = copied_projects(20, |sub| sub == "src");
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let run = |sort: SortOptions| {
        let mut f = Folders::new(&t, &sr, &set_of, sort).unwrap();
        f.figure(50.0, &[], |f| {
            for (x, fx) in files.iter().enumerate() {
                for (y, fy) in files.iter().enumerate().skip(x + 1) {
                    if fx.2 >= 1000 && fy.2 >= 1000 && fx.0.ends_with(&fy.0[7..]) {
                        f.link(x as u32, y as u32, 90)?;
                    }
                }
            }
            Ok(())
        })
        .unwrap()
    };
    let small = run(sort());
    assert_eq!(small.pairs, run(SortOptions::with_memory(64 << 20)).pairs);
    assert_eq!(small.pairs.len(), 20 * 19 / 2);
    assert!(small.pairs.iter().all(|p| p.a.len() == 5 && p.b.len() == 5));
    let p = &small.pairs[0];
    assert_eq!((p.files_a, p.files_b, p.only_a, p.only_b), (30, 30, 0, 0));
}

/// Credited by one, two or three workers, in memory or spilled, the
/// pairs, their figures and their file lists are the same: enough
/// matches (the identical sets of 40 copies of a project) that the
/// batches are shared between threads.
#[test]
fn the_figures_do_not_depend_on_the_number_of_workers() {
    let files = copied_projects(40, |sub| sub != "doc");
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let links = |f: &mut Folders| -> Result<()> {
        for (x, fx) in files.iter().enumerate() {
            for (y, fy) in files.iter().enumerate().skip(x + 1) {
                if fx.2 >= 1000 && fy.2 >= 1000 && fx.0.ends_with(&fy.0[7..]) {
                    f.link(x as u32, y as u32, 60 + (x * y % 40) as u64)?;
                }
            }
        }
        Ok(())
    };
    let run = |threads: usize, memory: u64| {
        let mut opts = SortOptions::with_memory(memory);
        opts.threads = threads;
        let mut f = Folders::new(&t, &sr, &set_of, opts).unwrap();
        assert_eq!(f.workers.len(), threads);
        let mut r = f.figure(50.0, &[], links).unwrap();
        f.start_details(&r).unwrap();
        links(&mut f).unwrap();
        f.finish_details(&mut r).unwrap();
        r
    };
    let one = run(1, 64 << 20);
    assert_eq!(one.pairs.len(), 40 * 39 / 2);
    assert!(one.pairs[0]
        .files
        .as_ref()
        .is_some_and(|l| l.same_count > 0));
    for (threads, memory) in [
        (2, 64 << 20),
        (3, 64 << 20),
        (2, MIN_MEMORY),
        (3, MIN_MEMORY),
    ] {
        let r = run(threads, memory);
        assert_eq!(r.pairs, one.pairs, "{threads} workers, {memory} bytes");
        assert_eq!(r.families, one.families);
        for k in 0..r.pairs.len() {
            assert_eq!(r.listed(k, None).unwrap(), one.listed(k, None).unwrap());
        }
    }
}

#[test]
fn ten_thousand_copies_of_a_file_are_credited_by_folder() {
    // 10,000 copies in 100 folders: 4,950 pairs of folders, each credited
    // once a height (not 5 × 10^7 pairs of files).
    let mut files: Vec<(String, u64, u128)> = Vec::new();
    for d in 0..100 {
        for i in 0..100 {
            files.push((format!("w/d{d:03}/f{i:03}"), 10, 7));
        }
    }
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let r = Folders::new(&t, &sr, &set_of, sort())
        .unwrap()
        .figure(50.0, &[], |_| Ok(()))
        .unwrap();
    assert_eq!((r.pairs.len(), r.families.len(), r.wide_sets), (4950, 1, 0));
    let p = &r.pairs[0];
    assert_eq!((p.a_in_b, p.same, p.only_a), (1000, 100, 0));
    // 10,000 copies in 10,000 folders: no pair proposed.
    let files: Vec<(String, u64, u128)> = (0..10_000)
        .map(|d| (format!("w/d{d:05}/f"), 10, 7))
        .collect();
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let r = Folders::new(&t, &sr, &set_of, sort())
        .unwrap()
        .figure(50.0, &[], |_| Ok(()))
        .unwrap();
    assert_eq!((r.pairs.len(), r.wide_sets), (0, 1));
}

/// The last components of the folders of `p`'s child pairs, in order.
fn kids(p: &FolderPair) -> Vec<(String, String)> {
    let tail =
        |x: &[u8]| String::from_utf8_lossy(x.rsplit(|&c| c == b'/').next().unwrap()).into_owned();
    p.children
        .iter()
        .map(|c| (tail(&c.a), tail(&c.b)))
        .collect()
}

#[test]
fn child_pairs_are_bounded_identical_first_then_by_bytes() {
    // 25 identical sub-folders s00..s24 (s24 the largest), t/ a version
    // (99.5 %, more bytes than any s), own/ different: the pair is not
    // identical; 26 child pairs, 20 listed.
    let mut files: Vec<(String, u64, u128)> = Vec::new();
    for side in ["P", "Q"] {
        for k in 0..25u64 {
            files.push((format!("w/{side}/s{k:02}/f"), 100 + k, u128::from(k) + 1));
        }
        files.push((
            format!("w/{side}/t/a"),
            2000,
            if side == "P" { 200 } else { 201 },
        ));
        files.push((
            format!("w/{side}/z/own"),
            1000,
            if side == "P" { 300 } else { 301 },
        ));
    }
    files.sort();
    let (t, sets, set_of) = owned_table(&files);
    let sr = set_refs(&sets);
    let ta = files.iter().position(|f| f.0 == "w/P/t/a").unwrap() as u32;
    let tb = files.iter().position(|f| f.0 == "w/Q/t/a").unwrap() as u32;
    let run = |sort: SortOptions| {
        let mut f = Folders::new(&t, &sr, &set_of, sort).unwrap();
        f.figure(50.0, &[], |f| f.link(ta, tb, 1990)).unwrap()
    };
    let r = run(sort());
    assert_eq!(paths(&r), [("w/P".into(), "w/Q".into())]);
    let p = &r.listed(0, Some(CHILDREN)).unwrap();
    assert!(!p.identical() && (p.percent() - 100.0 * 9580.0 / 11600.0).abs() < 1e-9);
    let want: Vec<(String, String)> = (5..25)
        .rev()
        .map(|k| (format!("s{k:02}"), format!("s{k:02}")))
        .collect();
    assert_eq!(kids(p), want);
    assert_eq!(p.children.len(), CHILDREN);
    assert_eq!(p.children_left_out, 6);
    assert!(p.children.iter().all(|c| c.identical() && c.tree.is_some()));
    // Unbounded (json, tsv): every child pair, t/ after the identical.
    let all = r.listed(0, None).unwrap();
    assert_eq!((all.children.len(), all.children_left_out), (26, 0));
    assert_eq!(kids(&all)[..CHILDREN], want[..]);
    assert_eq!(kids(&all)[25], ("t".into(), "t".into()));
    // The same in memory.
    let m = run(SortOptions::with_memory(64 << 20));
    assert_eq!(m.pairs, r.pairs);
    assert_eq!(m.listed(0, None).unwrap(), all);
}

#[test]
fn child_pairs_nest_and_none_is_listed_inside_identical_folders() {
    // (P, Q) at 37.5 %; t/ a version at 60 %, closer: listed, and its
    // identical u/ under it; c/ identical: listed, c/d/ inside it not.
    let (t, sets, set_of) = table(&[
        ("w/P/c/d/y", 300, 4),
        ("w/P/own", 2000, 5),
        ("w/P/t/a", 2000, 1),
        ("w/P/t/u/x", 500, 3),
        ("w/Q/c/d/y", 300, 4),
        ("w/Q/own", 2000, 6),
        ("w/Q/t/a", 2000, 2),
        ("w/Q/t/u/x", 500, 3),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f.figure(30.0, &[], |f| f.link(2, 6, 1000)).unwrap();
    assert_eq!(paths(&r), [("w/P".into(), "w/Q".into())]);
    let p = &r.listed(0, None).unwrap();
    assert_eq!(
        kids(p),
        [("c".into(), "c".into()), ("t".into(), "t".into())]
    );
    assert!(p.children[0].children.is_empty());
    let t_pair = &p.children[1];
    assert!((t_pair.percent() - 60.0).abs() < 1e-9);
    assert_eq!(kids(t_pair), [("u".into(), "u".into())]);
    let depths: Vec<usize> = p.with_children().iter().map(|(d, _)| *d).collect();
    assert_eq!(depths, [0, 1, 1, 2]);
    assert_eq!(p.tsv().lines().count(), 4);
    assert!(p.tsv().contains("\tfolder-child-2\t"));
}

#[test]
fn a_renamed_folder_is_listed_but_not_a_sibling_of_another_name() {
    // x/ became y/ (60 %, less than the pair's 80 %): a rename. s/ at
    // 60 %: the same name, not closer. de/ and es/ at 60 %: each side has
    // both names, so no rename.
    let (t, sets, set_of) = table(&[
        ("w/P/big/f", 4000, 1),
        ("w/P/de/a", 1000, 6),
        ("w/P/es/b", 1000, 8),
        ("w/P/s/a", 1000, 4),
        ("w/P/x/a", 1000, 2),
        ("w/Q/big/f", 4000, 1),
        ("w/Q/de/b", 1000, 9),
        ("w/Q/es/a", 1000, 7),
        ("w/Q/s/a", 1000, 5),
        ("w/Q/y/a", 1000, 3),
    ]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f
        .figure(50.0, &[], |f| {
            f.link(1, 7, 600)?;
            f.link(2, 6, 600)?;
            f.link(3, 8, 600)?;
            f.link(4, 9, 600)
        })
        .unwrap();
    assert_eq!(paths(&r), [("w/P".into(), "w/Q".into())]);
    let p = &r.listed(0, Some(CHILDREN)).unwrap();
    assert!((p.percent() - 80.0).abs() < 1e-9);
    assert_eq!(
        kids(p),
        [("big".into(), "big".into()), ("x".into(), "y".into())]
    );
}

#[test]
fn every_folder_is_found_once_its_path_read_from_its_first_file() {
    let (t, _, _) = table(&[
        ("r/a/x", 10, 1),
        ("r/b/y", 20, 2),
        ("r/a/c/z", 5, 3),
        ("top", 1, 4),
        ("r/a/w", 2, 5),
    ]);
    let (dirs, dir_of) = table::directories(&t);
    let paths: Vec<&[u8]> = dirs.iter().map(|d| d.path(&t)).collect();
    assert_eq!(paths, [&b"r"[..], b"r/a", b"r/b", b"r/a/c"]);
    assert_eq!(dir_of, [1, 2, 3, table::ROOT, 1]);
    let figures: Vec<(u32, u32, u64, u64)> = dirs
        .iter()
        .map(|d| (d.parent, d.depth, d.files, d.bytes))
        .collect();
    assert_eq!(
        figures,
        [
            (table::ROOT, 0, 4, 37),
            (0, 1, 3, 17),
            (0, 1, 1, 20),
            (1, 2, 1, 5)
        ]
    );
    // No copy of a path: a folder is its fixed-size record.
    assert_eq!(
        table::table_bytes(&dirs, &dir_of),
        (dirs.capacity() * std::mem::size_of::<table::Dir>() + dir_of.capacity() * 4) as u64
    );
}

#[test]
fn names_of_one_file_pair_no_folders_and_a_name_outside_pairs_like_any_file() {
    // r/A/x and r/B/x are two names of one file (inode 7); r/C/x has the
    // same bytes and another name outside the table (inode 9); r/D/x is
    // a plain copy, linked to r/E/y by 600 bytes.
    let files = [
        ("r/A/x", Some(7)),
        ("r/B/x", Some(7)),
        ("r/C/x", Some(9)),
        ("r/D/x", None),
        ("r/E/y", None),
    ];
    let mut t = CompactTable::default();
    for (i, &(p, inode)) in files.iter().enumerate() {
        let mut view = crate::formats::FileView::raw(1000);
        view.link = inode.map(|n| (1, n));
        t.push(&FileEntry {
            id: i as u32,
            size: 1000,
            content: if i < 4 { 1 } else { 2 },
            ftype: FileType::Text,
            view,
            path: p.as_bytes().to_vec(),
            mtime_s: 0,
            mtime_ns: 0,
        });
    }
    let alias = aliases(&t);
    assert_eq!(alias, [0, 0, NO_ALIAS, NO_ALIAS, NO_ALIAS]);
    let sets = [Set {
        size: 1000,
        files: vec![0, 1, 2, 3],
    }];
    let set_of = HashMap::from([(0, 0)]);
    let sr = set_refs(&sets);
    let mut f = Folders::new(&t, &sr, &set_of, sort()).unwrap();
    let r = f.figure(50.0, &[], |f| f.link(3, 4, 600)).unwrap();
    let mut found = paths(&r);
    found.sort();
    let want: Vec<(String, String)> = [
        ("r/A", "r/C"),
        ("r/A", "r/D"),
        ("r/B", "r/C"),
        ("r/B", "r/D"),
        ("r/C", "r/D"),
        ("r/D", "r/E"),
    ]
    .iter()
    .map(|&(a, b)| (a.into(), b.into()))
    .collect();
    assert_eq!(found, want);
}
