//! Near-duplicates: the word starts of a document and the nested edits
//! (insertions of a word, deletions of words) made at them.

use super::*;

/// Start offsets of the words of `doc` (a word: a run of bytes that are not
/// ASCII whitespace).
pub fn word_starts(doc: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut prev_space = true;
    for (i, &b) in doc.iter().enumerate() {
        let space = b.is_ascii_whitespace();
        if prev_space && !space {
            v.push(i);
        }
        prev_space = space;
    }
    v
}

/// The random edits of one document, in the order they are applied: the
/// near-duplicate `i` uses the first `i` of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edits {
    /// Word starts (offsets in the original) before which the word is
    /// inserted; drawn with replacement.
    pub inserts: Vec<usize>,
    /// Words (offset, length including the whitespace that follows) to
    /// delete; distinct.
    pub deletes: Vec<(usize, usize)>,
}

impl Edits {
    /// `max` insertions and deletions for `doc` (fewer deletions if the
    /// document has fewer words; none of either if it has none).
    pub fn plan(doc: &[u8], max: usize, seed: u64) -> Edits {
        let starts = word_starts(doc);
        let mut rng = Rng::new(seed);
        if starts.is_empty() {
            return Edits {
                inserts: Vec::new(),
                deletes: Vec::new(),
            };
        }
        let inserts = (0..max)
            .map(|_| starts[rng.below(starts.len() as u64) as usize])
            .collect();
        // A partial Fisher-Yates shuffle of the word indices.
        let mut idx: Vec<usize> = (0..starts.len()).collect();
        let take = max.min(idx.len());
        for k in 0..take {
            let j = k + rng.below((idx.len() - k) as u64) as usize;
            idx.swap(k, j);
        }
        let deletes = idx[..take]
            .iter()
            .map(|&w| {
                let s = starts[w];
                let end = starts.get(w + 1).copied().unwrap_or(doc.len());
                (s, end - s)
            })
            .collect();
        Edits { inserts, deletes }
    }
}

/// `doc` with `word` and a space inserted before each offset of
/// `positions` (offsets in `doc`, any order, repeats allowed).
pub fn insert_words(doc: &[u8], word: &[u8], positions: &[usize]) -> Vec<u8> {
    let mut p = positions.to_vec();
    p.sort_unstable();
    let mut out = Vec::with_capacity(doc.len() + p.len() * (word.len() + 1));
    let mut last = 0;
    for &at in &p {
        out.extend_from_slice(&doc[last..at]);
        out.extend_from_slice(word);
        out.push(b' ');
        last = at;
    }
    out.extend_from_slice(&doc[last..]);
    out
}

/// `doc` without the byte ranges `(offset, len)` (disjoint, any order).
pub fn delete_words(doc: &[u8], ranges: &[(usize, usize)]) -> Vec<u8> {
    let mut r = ranges.to_vec();
    r.sort_unstable();
    let mut out = Vec::with_capacity(doc.len());
    let mut last = 0;
    for &(at, len) in &r {
        out.extend_from_slice(&doc[last..at]);
        last = at + len;
    }
    out.extend_from_slice(&doc[last..]);
    out
}
