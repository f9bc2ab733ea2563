//! Families of folder pairs: sibling folders alike in their boilerplate
//! read as one fact, and the report's pairs regrouped family by family.

use super::FolderPair;
use std::collections::HashMap;

/// Families of more than this many pairs are listed in part by the text
/// report (and the html page folds them): sibling folders alike in their
/// boilerplate, such as the locale folders of every app of a release.
pub const CROWD: usize = 10;

/// A family of folder pairs: the same relation between the same kind of
/// folders, read as one fact (every app's `locale/*/LC_MESSAGES` alike,
/// each release of `corpus/*` a version of the next).
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// The pairs' paths with the one component their folders differ in
    /// written `*` (`django-5.1.4/django/conf/locale/*/LC_MESSAGES`, two
    /// releases `corpus/*`); `.../locale/*/LC_MESSAGES` when its pairs are
    /// under several such parents; else `PARENT_A | PARENT_B`, or
    /// `.../x/a | .../y/b` ([`family_key`]).
    pub label: Vec<u8>,
    /// Its pairs: `first..first + len` of the report's pairs.
    pub first: u32,
    pub len: u32,
    /// The folders its pairs pair, each counted once.
    pub folders: u32,
    pub percent_min: f64,
    pub percent_max: f64,
}

/// The family key and label of two folders. Of the same depth and
/// differing in one component: the key is that component's parent's name,
/// `*` and the components after it (`locale/*/LC_MESSAGES`: the locale
/// folders of every app and release are one family, however many parents
/// they are under), the label the whole path with `*`. Else the key is the
/// last two components of each (`i18n/loading | loading_app/locale`: the
/// same two test folders paired in every release and across releases are
/// one family), the label the folders' two parents.
pub(super) fn family_key(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let (ca, cb): (Vec<&[u8]>, Vec<&[u8]>) = (
        a.split(|&c| c == b'/').collect(),
        b.split(|&c| c == b'/').collect(),
    );
    let differ: Vec<usize> = (0..ca.len().min(cb.len()))
        .filter(|&i| ca[i] != cb[i])
        .collect();
    if ca.len() == cb.len() && differ.len() == 1 {
        let mut parts = ca.clone();
        parts[differ[0]] = b"*";
        let key = parts[differ[0].saturating_sub(1)..].join(&b'/');
        return (key, parts.join(&b'/'));
    }
    let parent = |x: &[u8]| x[..x.iter().rposition(|&c| c == b'/').unwrap_or(0)].to_vec();
    let label = [parent(a), b" | ".to_vec(), parent(b)].concat();
    let tail = |c: &[&[u8]]| c[c.len().saturating_sub(2)..].join(&b'/');
    let (ta, tb) = (tail(&ca), tail(&cb));
    let key = [ta.clone().min(tb.clone()), b" | ".to_vec(), ta.max(tb)].concat();
    (key, label)
}

/// The label of a family whose pairs are under several parents: its key,
/// each side after `.../`.
pub(super) fn mixed_label(key: &[u8]) -> Vec<u8> {
    let sides: Vec<Vec<u8>> = key
        .split(|&c| c == b'|')
        .map(|x| [&b".../"[..], x.trim_ascii()].concat())
        .collect();
    sides.join(&b" | "[..])
}

/// `pairs` (most bytes explained first) regrouped family by family
/// ([`family_key`]), in the order of each family's first pair (the one
/// explaining most bytes: a sum over a family would count a folder of many
/// pairs many times), each family's pairs in their order; and the
/// families. Every format lists the pairs in this order.
pub(super) fn by_family(pairs: Vec<FolderPair>) -> (Vec<FolderPair>, Vec<Family>) {
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut members: Vec<Vec<u32>> = Vec::new();
    let mut labels: Vec<Vec<u8>> = Vec::new();
    for (k, p) in pairs.iter().enumerate() {
        let (key, label) = family_key(&p.a, &p.b);
        if let Some(&i) = index.get(&key) {
            members[i].push(k as u32);
            if labels[i] != label {
                labels[i] = mixed_label(&key);
            }
        } else {
            index.insert(key, members.len());
            members.push(vec![k as u32]);
            labels.push(label);
        }
    }
    drop(index);
    let mut slots: Vec<Option<FolderPair>> = pairs.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    let mut fams = Vec::with_capacity(members.len());
    for (f, (ks, label)) in members.into_iter().zip(labels).enumerate() {
        let first = out.len() as u32;
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        let mut folders: Vec<u32> = Vec::with_capacity(2 * ks.len());
        for &k in &ks {
            let mut p = slots[k as usize].take().expect("a pair is in one family");
            p.family = f as u32;
            lo = lo.min(p.percent());
            hi = hi.max(p.percent());
            folders.extend([p.da, p.db]);
            out.push(p);
        }
        folders.sort_unstable();
        folders.dedup();
        fams.push(Family {
            label,
            first,
            len: ks.len() as u32,
            folders: folders.len() as u32,
            percent_min: lo,
            percent_max: hi,
        });
    }
    (out, fams)
}

/// The pairs a reader is shown first, across all families: most bytes
/// explained (found in each other) first, an identical tree before a
/// version of as many bytes, then in the report's order; at most `n`. Two
/// releases 99.5 % alike are among them even when they are one of 28 pairs
/// of a family of releases, and a crowd of sibling locale folders is not,
/// unless its pairs are as big. Bytes come before identity: on the
/// releases of Django, moment and bash, identical trees first would open
/// the report with two locale folders of 1.1 KiB and two template folders
/// of 54 B, ahead of two releases of 42 MiB 97 % alike.
pub fn best(pairs: &[FolderPair], n: usize) -> Vec<u32> {
    let key = |k: u32| {
        let p = &pairs[k as usize];
        (
            std::cmp::Reverse((p.a_in_b + p.b_in_a, p.tree.is_some())),
            k,
        )
    };
    let mut ks: Vec<u32> = (0..pairs.len() as u32).collect();
    if ks.len() > n {
        ks.select_nth_unstable_by_key(n, |&k| key(k));
        ks.truncate(n);
    }
    ks.sort_unstable_by_key(|&k| key(k));
    ks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(a: &str, b: &str) -> (String, String) {
        let (k, l) = family_key(a.as_bytes(), b.as_bytes());
        (String::from_utf8(k).unwrap(), String::from_utf8(l).unwrap())
    }

    #[test]
    fn family_keys_name_the_differing_component_or_the_folders_names() {
        let sib = key("c/d-1/conf/locale/de/LC", "c/d-1/conf/locale/fr/LC");
        assert_eq!(sib, ("locale/*/LC".into(), "c/d-1/conf/locale/*/LC".into()));
        assert_eq!(key("c/d-1", "c/d-2"), ("c/*".into(), "c/*".into()));
        // Two test folders, in one release or across two: one key.
        let (k1, l1) = key("c/d-1/t/loading", "c/d-1/t/x/loading_app/locale");
        let (k2, _) = key("c/d-1/t/x/loading_app/locale", "c/d-2/t/loading");
        assert_eq!(k1, "loading_app/locale | t/loading");
        assert_eq!(k1, k2);
        assert_eq!(l1, "c/d-1/t | c/d-1/t/x/loading_app");
        assert_eq!(
            String::from_utf8(mixed_label(k1.as_bytes())).unwrap(),
            ".../loading_app/locale | .../t/loading"
        );
    }

    fn pair(a: &str, b: &str, bytes: u64, ids: (u32, u32)) -> FolderPair {
        FolderPair {
            a: a.into(),
            b: b.into(),
            files_a: 1,
            bytes_a: 1000,
            files_b: 1,
            bytes_b: 1000,
            a_in_b: bytes,
            b_in_a: bytes,
            same: 0,
            changed: 2,
            only_a: 0,
            only_b: 0,
            tree: None,
            files: None,
            children: Vec::new(),
            children_left_out: 0,
            family: 0,
            da: ids.0,
            db: ids.1,
            parent: None,
            nested: (0, 0),
        }
    }

    #[test]
    fn pairs_are_regrouped_by_family_in_the_order_of_its_first_pair() {
        // Most bytes first: two releases, a locale pair of release 1, two
        // test folders, a locale pair of release 2.
        let pairs = vec![
            pair("c/r1", "c/r2", 900, (0, 1)),
            pair("c/r1/l/de/M", "c/r1/l/fr/M", 600, (2, 3)),
            pair("c/r1/x", "c/r1/y", 550, (4, 5)),
            pair("c/r2/l/de/M", "c/r2/l/it/M", 500, (6, 7)),
        ];
        let (out, fams) = by_family(pairs);
        let order: Vec<(&[u8], u32)> = out.iter().map(|p| (&p.a[..], p.family)).collect();
        assert_eq!(
            order,
            [
                (&b"c/r1"[..], 0),
                (b"c/r1/l/de/M", 1),
                (b"c/r2/l/de/M", 1),
                (b"c/r1/x", 2)
            ]
        );
        let f = &fams[1];
        assert_eq!(
            (&f.label[..], f.first, f.len, f.folders),
            (&b".../l/*/M"[..], 1, 2, 4)
        );
        assert_eq!((f.percent_min, f.percent_max), (50.0, 60.0));
        assert_eq!(fams[0].label, b"c/*");
        assert_eq!(fams[2].label, b"c/r1/*");
    }
}
