//! sif's approximate fingerprints (Manber 1994, section 3): fingerprint
//! every window of `w` bytes (default 50) with a Karp-Rabin rolling hash and
//! keep those whose low `bits` bits are zero (1 window in 2^bits, default
//! 256). Selected windows never overlap: after a selection, the next
//! candidate starts where the selected window ends.
//!
//! The anchors variant (`anchors=L`, L > 0): the windows are those that
//! *start* at an anchor, a string of L bytes. Manber's anchors are a fixed
//! set of strings; here the set is every L-byte string whose hash has its
//! low `bits` bits zero — a fixed pseudo-random set of anchors, the hashing
//! variant suggested to Manber by Schroeppel, which needs no tuning to the
//! language. A file shorter than `w` has one window (the whole file).

use super::rolling::{for_each_window, mix64};

/// Seed that separates the anchor hash from the window hash.
const ANCHOR_SEED: u64 = 0x616e_6368_6f72_7321;

pub(super) fn extract(
    data: &[u8],
    w: usize,
    bits: u32,
    anchors: u32,
    push: &mut impl FnMut(u32, u64),
) {
    let mask = (1u64 << bits) - 1;
    let mut next = 0usize;
    if anchors == 0 {
        for_each_window(data, w, |start, fp| {
            if start >= next && fp & mask == 0 {
                push(0, fp);
                next = start + w;
            }
        });
        return;
    }
    // Anchor positions (ascending), then the windows that start there.
    let mut starts = Vec::new();
    let l = anchors as usize;
    if data.len() >= l {
        for_each_window(data, l, |start, fp| {
            if mix64(fp ^ ANCHOR_SEED) & mask == 0 {
                starts.push(start);
            }
        });
    }
    let last = data.len().saturating_sub(w);
    let mut it = starts.into_iter().filter(|&s| s <= last).peekable();
    for_each_window(data, w, |start, fp| {
        while it.peek().is_some_and(|&s| s < start) {
            it.next();
        }
        if it.peek() == Some(&start) {
            it.next();
            if start >= next {
                push(0, fp);
                next = start + w;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::super::rolling::fingerprints;
    use super::super::tests::text;
    use super::*;

    fn run(data: &[u8], w: usize, bits: u32, anchors: u32) -> Vec<u64> {
        let mut v = Vec::new();
        extract(data, w, bits, anchors, &mut |_, x| v.push(x));
        v
    }

    #[test]
    fn selection_and_no_overlap() {
        let d = text(200_000, 9);
        let got = run(&d, 50, 8, 0);
        // Model: scan all fingerprints, skip w after each selection.
        let fps = fingerprints(&d, 50);
        let mut want = Vec::new();
        let mut i = 0;
        while i < fps.len() {
            if fps[i] & 255 == 0 {
                want.push(fps[i]);
                i += 50;
            } else {
                i += 1;
            }
        }
        assert_eq!(got, want);
        // About one per (256 + some skipped) bytes: 200 000 / ~300.
        assert!((500..=900).contains(&got.len()), "{}", got.len());
        // bits=0: every window, non-overlapping: len / w.
        assert_eq!(run(&d[..1000], 50, 0, 0).len(), 20);
    }

    #[test]
    fn anchors_variant() {
        let d = text(200_000, 10);
        let got = run(&d, 50, 8, 4);
        assert!((400..=900).contains(&got.len()), "{}", got.len());
        // Shift-invariant: a prefix changes only the start.
        let mut shifted = b"a new first line\n".to_vec();
        shifted.extend_from_slice(&d);
        let again = run(&shifted, 50, 8, 4);
        let common = got.iter().filter(|f| again.contains(f)).count();
        assert!(common + 3 >= got.len());
        // Known answer: a short text with bits=0 anchors everywhere.
        assert_eq!(
            run(b"abcdefgh", 4, 0, 2),
            fingerprints(b"abcdefgh", 4)[..]
                .iter()
                .step_by(4)
                .copied()
                .collect::<Vec<_>>()
        );
    }
}
