//! Tests of the controlled experiment's generators and measures.

use super::*;

fn text(len: usize, seed: u64) -> Vec<u8> {
    fsim::chunking::chunker::pseudo_text(len, seed)
}

#[test]
fn insert_exact_count_and_reversible() {
    let doc = text(20_000, 1);
    let e = Edits::plan(&doc, 50, 7);
    assert_eq!(e.inserts.len(), 50);
    let starts: HashSet<usize> = word_starts(&doc).into_iter().collect();
    assert!(e.inserts.iter().all(|p| starts.contains(p)));
    for i in [0, 1, 17, 50] {
        let dup = insert_words(&doc, b"a", &e.inserts[..i]);
        assert_eq!(dup.len(), doc.len() + 2 * i);
        // Removing the inserted "a " at the shifted offsets gives the
        // original back: exactly i insertions, nowhere else.
        let mut p = e.inserts[..i].to_vec();
        p.sort_unstable();
        let mut back = dup.clone();
        for (k, &at) in p.iter().enumerate().rev() {
            let at = at + 2 * k;
            assert_eq!(&back[at..at + 2], b"a ");
            back.drain(at..at + 2);
        }
        assert_eq!(back, doc);
    }
    // Repeated positions are allowed: "a a word".
    assert_eq!(insert_words(b"x y", b"a", &[2, 2, 0]), b"a x a a y");
}

#[test]
fn delete_exact_count() {
    let doc = b"one two  three\nfour five".to_vec();
    let e = Edits::plan(&doc, 3, 1);
    assert_eq!(e.deletes.len(), 3);
    let d: HashSet<_> = e.deletes.iter().collect();
    assert_eq!(d.len(), 3, "distinct words");
    let out = delete_words(&doc, &e.deletes);
    let words = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(words(&out).len(), 2);
    assert_eq!(delete_words(&doc, &[(4, 5)]), b"one three\nfour five");
    // More deletions asked than words: all of them, once.
    let e = Edits::plan(b"a b", 5, 1);
    assert_eq!(e.deletes.len(), 2);
    assert!(delete_words(b"a b", &e.deletes).is_empty());
    assert_eq!(Edits::plan(b"   ", 5, 1).inserts.len(), 0);
}

#[test]
fn edits_are_deterministic() {
    let doc = text(30_000, 2);
    assert_eq!(Edits::plan(&doc, 50, 9), Edits::plan(&doc, 50, 9));
    assert_ne!(Edits::plan(&doc, 50, 9), Edits::plan(&doc, 50, 10));
    // Pinned: the generator must not change silently.
    let e = Edits::plan(b"w0 w1 w2 w3 w4 w5 w6 w7 w8 w9", 4, 2007);
    assert_eq!(e.inserts, [18, 24, 3, 12]);
    assert_eq!(e.deletes, [(6, 3), (18, 3), (15, 3), (27, 2)]);
}

#[test]
fn tttd_similarity_counts_shared_bytes() {
    let m = MethodConf {
        algo: Algo::Tttd(100),
        grid: Grid::Full,
    };
    let a = text(50_000, 3);
    let sa = m.signature(&a);
    assert_eq!(m.similarity(&sa, &sa), 1.0);
    let mut b = a[..25_000].to_vec();
    b.extend_from_slice(&text(25_000, 4));
    let sb = m.signature(&b);
    let s = m.similarity(&sa, &sb);
    assert!((0.45..0.5).contains(&s), "{s}");
    // Repeats count min(occurrences): a doubled file shares one copy.
    let mut aa = a.clone();
    aa.extend_from_slice(&a);
    let s = m.similarity(&sa, &m.signature(&aa));
    assert!(s > 0.99, "{s}");
    assert_eq!(
        shared_chunk_bytes(&[(1, 5), (1, 5), (2, 3)], &[(1, 5), (2, 3), (2, 3)]),
        8
    );
}

#[test]
fn exact_is_jaccard() {
    let m = MethodConf {
        algo: Algo::Exact(4),
        grid: Grid::Full,
    };
    // Windows of "abcdef": abcd bcde cdef; of "abcdxf": abcd bcdx cdxf.
    let s = m.similarity(&m.signature(b"abcdef"), &m.signature(b"abcdxf"));
    assert!((s - 1.0 / 5.0).abs() < 1e-12, "{s}");
}

#[test]
fn method_names() {
    let ms = methods(&[5, 20]);
    let names: Vec<String> = ms.iter().map(|m| m.label()).collect();
    for want in [
        "Mod_100 w=5",
        "BSW_400 w=20",
        "sif_256 w=20",
        "TTTD_100",
        "Sketch_10 w=20",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    assert_eq!(names.len(), ms.len());
    assert!(ms
        .iter()
        .all(|m| (m.window() == 20 || m.method() == "tttd") == (m.grid == Grid::Full)));
}
