//! What each file is needed for: per batch (first and last pair, reuse
//! across groups) and, when the pairs file can be read twice, over the
//! whole input ([`Global`]), so the cache keeps a file until its last pair.

use super::previous::Previous;
use super::*;
use crate::formats::open_input;
use crate::formats::percent;
use crate::formats::LineReader;

/// What the current batch needs of each file, indexed by file id (kept
/// across batches and reset by visiting the batch's pairs: the cost is per
/// pair, not per file of the table); and, when the pairs could be read
/// twice, what the whole input needs ([`Global`]).
pub(super) struct Plan {
    /// Index in the batch of the last pair that uses the file ([`NONE`]:
    /// not in the batch).
    pub(super) last: Vec<u32>,
    /// Index of the first pair that uses it (valid when `last` is).
    pub(super) first: Vec<u32>,
    /// The group (run of pairs with the same a) that last used the file.
    pub(super) group: Vec<u32>,
    /// Used by more than one group: worth caching. Caching the others only
    /// costs memory (each b of the benchmark is used once).
    pub(super) reuse: Vec<bool>,
    /// Index in the whole input of the batch's first pair.
    pub(super) base: u64,
    pub(super) global: Option<Global>,
}

/// What the whole input needs of each file, from a first reading of the
/// pairs: a file is kept in the cache from batch to batch until its last
/// pair, so that it is read about once, however far apart its pairs are.
pub(super) struct Global {
    /// Index (among the pairs kept by the size-ratio filter) of the last
    /// pair that uses the file, [`NONE`] if none.
    pub(super) last: Vec<u32>,
    /// Used by more than one group of the whole input.
    pub(super) reuse: Vec<bool>,
}

/// No pair of the batch uses the file.
pub(super) const NONE: u32 = u32::MAX;

impl Global {
    /// Fold in the pair at `index` (its group number `group`).
    pub(super) fn add(&mut self, group_of: &mut [u32], index: u32, group: u32, a: u32, b: u32) {
        for f in [a as usize, b as usize] {
            if f >= self.last.len() {
                continue;
            }
            if self.last[f] != NONE && group_of[f] != group {
                self.reuse[f] = true;
            }
            group_of[f] = group;
            self.last[f] = index;
        }
    }
}

impl Plan {
    pub(super) fn new(files: usize) -> Plan {
        Plan {
            last: vec![NONE; files],
            first: vec![0; files],
            group: vec![0; files],
            reuse: vec![false; files],
            base: 0,
            global: None,
        }
    }

    pub(super) fn set(&mut self, batch: &[PairIn]) {
        let mut group = 0u32;
        for (i, p) in batch.iter().enumerate() {
            if i > 0 && batch[i - 1].a != p.a {
                group += 1;
            }
            for f in [p.a as usize, p.b as usize] {
                if self.last[f] == NONE {
                    self.first[f] = i as u32;
                } else if self.group[f] != group {
                    self.reuse[f] = true;
                }
                self.group[f] = group;
                self.last[f] = i as u32;
            }
        }
    }

    /// Forget the batch (whose first pair was at `base`): the next one
    /// starts after it.
    pub(super) fn clear(&mut self, batch: &[PairIn]) {
        for p in batch {
            for f in [p.a as usize, p.b as usize] {
                self.last[f] = NONE;
                self.reuse[f] = false;
            }
        }
        self.base += batch.len() as u64;
    }

    /// Is file `id` used by a pair at index `at` of the batch or later?
    pub(super) fn needed_from(&self, id: u32, at: u32) -> bool {
        match &self.global {
            Some(g) => {
                let l = g.last[id as usize];
                l != NONE && l as u64 >= self.base + at as u64
            }
            None => {
                let l = self.last[id as usize];
                l != NONE && l >= at
            }
        }
    }

    /// Worth caching: more than one group uses the file (of the whole
    /// input when known, else of the batch).
    pub(super) fn keep(&self, id: u32) -> bool {
        match &self.global {
            Some(g) => g.reuse[id as usize],
            None => self.reuse[id as usize],
        }
    }
}

/// The whole input's plan ([`Global`]), from a first reading of the pairs
/// when they are a regular file (standard input or a pipe cannot be read
/// twice: the plan is then per batch). Any error is left to the real
/// reading, which reports it; the plan only decides what is cached, never a
/// figure, so the output is the same with or without it.
pub(super) fn global_plan(
    cfg: &Config,
    table: &Table,
    mut previous: Option<Previous>,
    want_regions: bool,
    known: &dyn Fn(&PairIn) -> bool,
) -> Option<Global> {
    if cfg.pairs.as_os_str() == "-" || !std::fs::metadata(&cfg.pairs).ok()?.is_file() {
        return None;
    }
    let (input, name) = open_input(&cfg.pairs).ok()?;
    let mut r = LineReader::new(input, name);
    let files = table.entries.len();
    let mut g = Global {
        last: vec![NONE; files],
        reuse: vec![false; files],
    };
    let mut group_of = vec![0u32; files];
    let (mut index, mut group, mut prev_a) = (0u32, 0u32, None);
    // Regions read by the lookups, only to be dropped (lookup clears it).
    let mut regions = Vec::new();
    while let Some(raw) = r.next_raw().ok()? {
        if raw.first() == Some(&b'#') {
            continue;
        }
        let p = parse_pair(raw)?;
        // The plan is by entry held ([`Table::to_local`]).
        let (a, b) = (table.local(p.a)?, table.local(p.b)?);
        if percent(p.size_a.min(p.size_b), base(&p, cfg.percent_of)) < cfg.min_percent {
            continue;
        }
        if let Some(pv) = previous.as_mut() {
            // Reused pairs are not verified, so they neither count nor
            // keep their files in the cache.
            if pv
                .lookup(&p, want_regions.then_some(&mut regions))
                .ok()?
                .is_some()
            {
                continue;
            }
        }
        // Nor do those whose figure is known by their contents.
        if known(&p) {
            continue;
        }
        if prev_a.is_some_and(|pa| pa != a) {
            group += 1;
        }
        prev_a = Some(a);
        g.add(&mut group_of, index, group, a, b);
        index = index.checked_add(1).filter(|&i| i != NONE)?;
    }
    Some(g)
}
