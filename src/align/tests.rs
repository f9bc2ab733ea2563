//! Tests of the line and byte alignments against the textbook dynamic
//! programme and on hard inputs.

use super::*;

/// The textbook dynamic programme: LCS length.
fn dp_length(a: &[u32], b: &[u32]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    for &x in a {
        for (j, &y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u32 {
        (self.next() % n) as u32
    }
}

/// `b` is `a` with about `rate` of its tokens replaced, deleted or
/// followed by an insertion, over `alphabet` ids.
fn edited(rng: &mut Rng, a: &[u32], rate: u64, alphabet: u64) -> Vec<u32> {
    let mut b = Vec::new();
    for &t in a {
        match rng.below(100) as u64 {
            r if r < rate / 3 => {}
            r if r < 2 * rate / 3 => b.push(rng.below(alphabet)),
            r if r < rate => {
                b.push(t);
                b.push(rng.below(alphabet));
            }
            _ => b.push(t),
        }
    }
    b
}

fn check(lcs: &mut Lcs, a: &[u32], b: &[u32], ids: usize) {
    let want = dp_length(a, b);
    assert_eq!(lcs.length(a, b, ids), want, "length");
    let mut m = Vec::new();
    lcs.matches(a, b, ids, &mut m);
    assert_eq!(m.len(), want, "matches of {a:?} / {b:?}");
    for w in m.windows(2) {
        assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1, "not increasing: {w:?}");
    }
    for &(i, j) in &m {
        assert_eq!(a[i as usize], b[j as usize], "unequal tokens matched");
    }
}

#[test]
fn small_cases_match_the_dynamic_programme() {
    let mut lcs = Lcs::new();
    check(&mut lcs, &[], &[1, 2], 3);
    check(&mut lcs, &[1, 2], &[], 3);
    check(&mut lcs, &[1, 2, 3], &[1, 2, 3], 4);
    check(&mut lcs, &[1, 2, 3], &[3, 2, 1], 4);
    check(&mut lcs, &[0, 0, 0, 0], &[0, 0], 1);
    check(&mut lcs, &[1, 0, 1, 0, 1], &[0, 1, 0, 1, 0], 2);
}

#[test]
fn random_pairs_across_word_boundaries_and_alphabets() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut lcs = Lcs::new();
    for round in 0..300 {
        let n = 1 + rng.below(300) as usize;
        // Small alphabets make frequent tokens (dense vectors), large ones
        // rare tokens (set per step).
        let alphabet = [2u64, 5, 40, 1000][round % 4];
        let a: Vec<u32> = (0..n).map(|_| rng.below(alphabet)).collect();
        let rate = [5u64, 30, 60, 100][(round / 4) % 4];
        let b = edited(&mut rng, &a, rate, alphabet);
        check(&mut lcs, &a, &b, alphabet as usize);
        check(&mut lcs, &b, &a, alphabet as usize);
    }
}

#[test]
fn split_problems_give_an_lcs_too() {
    let mut rng = Rng(42);
    let mut lcs = Lcs::new();
    lcs.block = 4;
    for round in 0..60 {
        let n = 1 + rng.below(700) as usize;
        let alphabet = [3u64, 50, 5000][round % 3];
        let a: Vec<u32> = (0..n).map(|_| rng.below(alphabet)).collect();
        let b = edited(&mut rng, &a, 50, alphabet);
        check(&mut lcs, &a, &b, alphabet as usize);
    }
}

#[test]
fn the_chosen_subsequence_does_not_depend_on_reuse() {
    // Same inputs, fresh state or state left by other pairs: same answer.
    let a: Vec<u32> = (0..500).map(|i| (i * 7 % 13) as u32).collect();
    let b: Vec<u32> = (0..450).map(|i| (i * 5 % 13) as u32).collect();
    let mut fresh = Vec::new();
    Lcs::new().matches(&a, &b, 13, &mut fresh);
    let mut used = Lcs::new();
    let mut junk = Vec::new();
    used.matches(&b, &a[..100], 13, &mut junk);
    let mut again = Vec::new();
    used.matches(&a, &b, 13, &mut again);
    assert_eq!(fresh, again);
}

/// The row step against the textbook one word at a time: random rows and
/// rows whose carry runs through every word (all ones), for lengths that
/// fill the four-word turns and leave each remainder.
#[test]
fn the_step_carries_across_every_word() {
    fn textbook(v: &mut [u64], m: &[u64]) {
        let mut carry = 0u128;
        for (x, &mw) in v.iter_mut().zip(m) {
            let s = *x as u128 + (*x & mw) as u128 + carry;
            carry = s >> 64;
            *x = s as u64 | (*x & !mw);
        }
    }
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for words in 1..=13 {
        for round in 0..200 {
            let (v, m): (Vec<u64>, Vec<u64>) = match round % 3 {
                0 => (0..words).map(|_| (rng.next(), rng.next())).unzip(),
                1 => (
                    vec![!0; words],
                    (0..words).map(|k| (k == 0) as u64).collect(),
                ),
                _ => (0..words).map(|_| (!0, rng.next() & rng.next())).unzip(),
            };
            let (mut got, mut want) = (v.clone(), v.clone());
            step(&mut got, &m);
            textbook(&mut want, &m);
            assert_eq!(got, want, "{words} words, v {v:x?}, m {m:x?}");
        }
    }
}
