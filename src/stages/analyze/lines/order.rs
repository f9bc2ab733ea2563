//! The line source's prefix filter, as data: the contents of a set
//! interned, their lines ranked rarest first (by how many contents hold
//! them, ties by hash), each content's prefix under that order, and the
//! postings of the prefixes ([`super`] says why this loses no pair).

use super::read::FileLines;
use super::LineSource;
use crate::io::hashing::MixedMap;

/// Contents being read: their lines interned in the order they come.
#[derive(Default)]
pub(super) struct Interner {
    map: MixedMap<u64, u32>,
    hash: Vec<u64>,
    len: Vec<u32>,
    /// Contents holding each interned line.
    df: Vec<u32>,
    meta: Vec<(u32, u64)>,
    start: Vec<usize>,
    lines: Vec<(u32, u32)>,
}

impl Interner {
    /// Distinct lines of contents held ((content, line) entries).
    pub fn entries(&self) -> u64 {
        self.lines.len() as u64
    }

    /// Contents held.
    pub fn contents(&self) -> u64 {
        self.meta.len() as u64
    }

    /// Adds a content (file id, size) with its counted lines.
    pub fn push(&mut self, id: u32, size: u64, lines: &[(u64, u32, u32)]) {
        self.start.push(self.lines.len());
        self.meta.push((id, size));
        for &(h, len, count) in lines {
            let next = self.len.len() as u32;
            let l = *self.map.entry(h).or_insert(next);
            if l == next {
                self.hash.push(h);
                self.len.push(len);
                self.df.push(0);
            }
            self.df[l as usize] += 1;
            self.lines.push((l, count));
        }
    }

    /// The set, its lines ranked by `key` (their number of contents, or an
    /// estimate of it; ties by hash), with each content's prefix for
    /// `src`; the hash → rank map kept when `map` (to rank the lines of
    /// contents read later).
    pub fn finish(mut self, key: impl Fn(u64, u32) -> u32, src: &LineSource, map: bool) -> Loaded {
        self.by_size();
        let Interner {
            map: ids,
            hash,
            len,
            df,
            meta,
            mut start,
            mut lines,
        } = self;
        let mut order: Vec<u32> = (0..hash.len() as u32).collect();
        order.sort_unstable_by_key(|&l| (key(hash[l as usize], df[l as usize]), hash[l as usize]));
        drop(df);
        let mut rank = vec![0u32; order.len()];
        for (r, &l) in order.iter().enumerate() {
            rank[l as usize] = r as u32;
        }
        let len: Vec<u32> = order.iter().map(|&l| len[l as usize]).collect();
        drop(order);
        let rank_of = map.then(|| {
            let mut ids = ids;
            for v in ids.values_mut() {
                *v = rank[*v as usize];
            }
            ids
        });
        start.push(lines.len());
        for c in 0..meta.len() {
            let own = &mut lines[start[c]..start[c + 1]];
            for e in own.iter_mut() {
                e.0 = rank[e.0 as usize];
            }
            own.sort_unstable();
        }
        let mut set = Loaded {
            meta,
            start,
            lines,
            len,
            prefix: Vec::new(),
            rank_of,
        };
        set.prefix = (0..set.meta.len()).map(|c| set.prefix_of(c, src)).collect();
        set
    }
}

impl Interner {
    /// The contents in (size, id) order, each pair's row its smaller
    /// content: they were read in the order of the files' sizes, which
    /// their payloads' (templates cut out) need not keep.
    fn by_size(&mut self) {
        if self.meta.is_sorted_by_key(|&(id, size)| (size, id)) {
            return;
        }
        let mut order: Vec<usize> = (0..self.meta.len()).collect();
        order.sort_unstable_by_key(|&c| (self.meta[c].1, self.meta[c].0));
        let end = |c: usize| self.start.get(c + 1).copied().unwrap_or(self.lines.len());
        let mut lines = Vec::with_capacity(self.lines.len());
        let mut start = Vec::with_capacity(order.len());
        for &c in &order {
            start.push(lines.len());
            lines.extend_from_slice(&self.lines[self.start[c]..end(c)]);
        }
        self.meta = order.iter().map(|&c| self.meta[c]).collect();
        self.start = start;
        self.lines = lines;
    }
}

/// Contents with their lines ranked ([`Interner::finish`]): rows of the
/// join, each pair found from its smaller content.
pub(super) struct Loaded {
    /// Per content: file id and size (what the thresholds take).
    pub meta: Vec<(u32, u64)>,
    /// Per content: where its lines start in `lines` (and the end).
    start: Vec<usize>,
    /// Each content's distinct lines as (rank, occurrences), by rank.
    lines: Vec<(u32, u32)>,
    /// Length of the line of each rank.
    pub len: Vec<u32>,
    /// Per content: how many of its lines, the first by rank, are its
    /// prefix, and the weight (bytes × occurrences) of the others.
    pub prefix: Vec<(u32, u64)>,
    /// Rank of each line hash, when kept.
    pub rank_of: Option<MixedMap<u64, u32>>,
}

impl Loaded {
    /// Content `c`'s lines, by rank.
    #[inline]
    pub fn lines_of(&self, c: usize) -> &[(u32, u32)] {
        &self.lines[self.start[c]..self.start[c + 1]]
    }

    /// Contents.
    pub fn contents(&self) -> usize {
        self.meta.len()
    }

    /// The prefix of content `c`: its lines by rank until the weight of
    /// the rest is under the least overlap a pair needs when `c` is its
    /// smaller content ([`least_kept`]).
    fn prefix_of(&self, c: usize, src: &LineSource) -> (u32, u64) {
        let lines = self.lines_of(c);
        let weight = |&(r, n): &(u32, u32)| self.len[r as usize] as u64 * n as u64;
        let mut rest: u64 = lines.iter().map(weight).sum();
        let need = least_kept(self.meta[c].1, rest, src);
        let mut k = 0;
        while k < lines.len() && rest >= need {
            rest -= weight(&lines[k]);
            k += 1;
        }
        (k as u32, rest)
    }

    /// A content read later as a partner: its lines that this set holds,
    /// ranked, by rank.
    pub fn rank(&self, lines: &[(u64, u32, u32)]) -> Vec<(u32, u32)> {
        let map = self
            .rank_of
            .as_ref()
            .expect("ranks kept for partners read later");
        let mut v: Vec<(u32, u32)> = lines
            .iter()
            .filter_map(|&(h, _, n)| map.get(&h).map(|&r| (r, n)))
            .collect();
        v.sort_unstable();
        v
    }
}

/// Whether a pair with `common` bytes of line overlap is kept: some
/// overlap, the analysis thresholds, and fsim-verify's ([`super::reaches`]).
#[inline]
pub(super) fn kept(common: u64, sa: u64, sb: u64, src: &LineSource) -> bool {
    common > 0
        && src.thresholds.keep(common, sa, sb)
        && super::reaches(common, sa, sb, src.verify_floor)
}

/// The least overlap a pair whose smaller content has `size` bytes (and
/// lines of `weight`) can be kept with, `weight + 1` when none: a pair
/// kept with a larger or equal content is kept with an equal one (the
/// percentages are of the smaller file or of a larger one, and both
/// thresholds grow with the overlap), so this bounds every pair of
/// `size` from below. Found by bisection on [`kept`] itself, so float
/// rounding cannot make it too high.
pub(super) fn least_kept(size: u64, weight: u64, src: &LineSource) -> u64 {
    let (mut lo, mut hi) = (1u64, weight + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if kept(mid, size, size, src) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The prefix entries of some contents, by line: (content, occurrences),
/// contents increasing.
pub(super) struct Postings {
    start: Vec<usize>,
    entries: Vec<(u32, u32)>,
}

impl Postings {
    /// The prefixes of the contents of `set` that `take` admits.
    pub fn of_prefixes(set: &Loaded, take: impl Fn(usize) -> bool) -> Postings {
        let mut start = vec![0usize; set.len.len() + 1];
        let prefix = |c: usize| &set.lines_of(c)[..set.prefix[c].0 as usize];
        for c in (0..set.contents()).filter(|&c| take(c)) {
            for &(r, _) in prefix(c) {
                start[r as usize + 1] += 1;
            }
        }
        for r in 0..set.len.len() {
            start[r + 1] += start[r];
        }
        let mut fill = start.clone();
        let mut entries = vec![(0u32, 0u32); start[set.len.len()]];
        for c in (0..set.contents()).filter(|&c| take(c)) {
            for &(r, n) in prefix(c) {
                entries[fill[r as usize]] = (c as u32, n);
                fill[r as usize] += 1;
            }
        }
        Postings { start, entries }
    }

    /// The contents whose prefix holds the line of rank `r`.
    #[inline]
    pub fn of(&self, r: u32) -> &[(u32, u32)] {
        &self.entries[self.start[r as usize]..self.start[r as usize + 1]]
    }
}

/// How many contents hold each line, estimated in a fixed memory (a
/// count-min sketch: four rows of counters, a line counted in one counter
/// of each, the least of its four read back): never under the true count,
/// over it by collisions only. Orders the lines when the contents are
/// ranked in groups ([`super::line_pairs`]); the order decides the cost,
/// never which pairs are found.
pub(super) struct Sketch {
    counters: Vec<u32>,
    bits: u32,
}

/// Odd multipliers, one per row.
const ROWS: [u64; 4] = [
    0x9e37_79b9_7f4a_7c15,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
    0xd6e8_feb8_6659_fd93,
];

impl Sketch {
    /// A sketch of at most `bytes` (at least 4 KiB).
    pub fn new(bytes: u64) -> Sketch {
        let per_row = (bytes / 16).max(1 << 10);
        let bits = 63 - per_row.leading_zeros();
        Sketch {
            counters: vec![0; 4 << bits],
            bits,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.counters.len() as u64 * 4
    }

    #[inline]
    fn slot(&self, row: usize, h: u64) -> usize {
        (row << self.bits) | (h.wrapping_mul(ROWS[row]) >> (64 - self.bits)) as usize
    }

    /// Counts one content's lines.
    pub fn add(&mut self, lines: &FileLines) {
        for &(h, _, _) in lines.iter().flat_map(|l| l.lines.iter()) {
            for row in 0..4 {
                let s = self.slot(row, h);
                self.counters[s] = self.counters[s].saturating_add(1);
            }
        }
    }

    /// At least the number of contents counted that hold `h`.
    #[inline]
    pub fn get(&self, h: u64) -> u32 {
        (0..4)
            .map(|row| self.counters[self.slot(row, h)])
            .min()
            .unwrap_or(0)
    }
}
