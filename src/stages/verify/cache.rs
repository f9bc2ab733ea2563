//! The token cache shared by the workers: tokenized files kept until their
//! last pair, in an LRU bounded by what `--memory` leaves to it (with the
//! workers' working memory and kept buffers reserved in the same budget).

use super::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Largest token buffers kept for reuse: a large file's buffers are freed
/// ([`SPARE_COUNT`] of them per worker, reserved in the cache's budget).
pub(super) const SPARE_MAX: u64 = 1 << 20;

/// Largest file buffer a worker keeps between files.
pub(super) const BUF_KEEP: usize = 8 << 20;

/// Working memory of a worker comparing files of `bytes` bytes together,
/// per byte: the files' bytes (1), the tokens of both (24 bytes per token),
/// the interning table, the pruned sequences, the alignment's per-token
/// arrays (match vectors, prefix counts, matches: ~80 bytes per token of
/// a); about 150 bytes per token in all, so ~6 bytes per byte of catalogs
/// of 25-byte lines and more on shorter lines (tests/stages/verify_cli.rs,
/// `catalogs_stay_within_memory`: 10-byte lines, within --memory + 20 MB
/// at 8, not at 4). The bit-parallel rows are reserved on top
/// ([`crate::align::Lcs::rows_bytes`]). Reserved in the cache's budget
/// while the worker runs the pair, so that the cache shrinks to make room.
pub(super) const WORK_PER_BYTE: u64 = 8;

/// Token buffers kept for reuse (per worker): a pair's two files and one
/// being tokenized, and one more.
pub(super) const SPARE_COUNT: usize = 4;

/// Tokenized files kept for later pairs, shared by the workers (behind a
/// mutex): a file read by one worker is found by the other.
///
/// An LRU bounded in bytes, from which a file is also removed as soon as
/// no later pair needs it ([`Plan::needed_from`]): the cache then holds
/// the files still to be used instead of growing to its budget. Entries
/// removed are handed back to the caller, whose worker frees them outside
/// the lock. An entry is a copy of its file's size, made from the buffers
/// the worker tokenized into, which it keeps for the next file (fresh
/// memory costs a page fault per 4 KiB on first touch: without reuse,
/// allocation and page faults were a fifth of fsim-verify's CPU time);
/// the copies take the blocks freed by earlier copies.
pub(super) struct Cache {
    pub(super) budget: u64,
    pub(super) used: u64,
    /// The workers' working memory, reserved in the budget.
    pub(super) reserved: u64,
    pub(super) clock: u64,
    pub(super) map: HashMap<(u32, Mode), (Arc<Tokens>, u64)>,
    pub(super) order: BTreeMap<u64, (u32, Mode)>,
}

impl Cache {
    pub(super) fn new(budget: u64) -> Cache {
        Cache {
            budget,
            used: 0,
            reserved: 0,
            clock: 0,
            map: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    /// Whether file `id` is held, in either mode.
    pub(super) fn holds(&self, id: u32) -> bool {
        !self.map.is_empty()
            && [Mode::Lines, Mode::Pieces]
                .iter()
                .any(|&m| self.map.contains_key(&(id, m)))
    }

    pub(super) fn get(&mut self, key: (u32, Mode)) -> Option<Arc<Tokens>> {
        let (t, stamp) = self.map.get_mut(&key)?;
        self.order.remove(stamp);
        self.clock += 1;
        *stamp = self.clock;
        self.order.insert(self.clock, key);
        Some(t.clone())
    }

    /// Add a file, evicting the least recently used ones into `gone`.
    pub(super) fn put(&mut self, key: (u32, Mode), t: Arc<Tokens>, gone: &mut Vec<Arc<Tokens>>) {
        if let Some((o, stamp)) = self.map.remove(&key) {
            self.order.remove(&stamp);
            self.used -= o.mem();
            gone.push(o);
        }
        let m = t.mem();
        if m + self.reserved > self.budget {
            return;
        }
        while self.used + m + self.reserved > self.budget {
            let Some((_, old)) = self.order.pop_first() else {
                break;
            };
            if let Some((o, _)) = self.map.remove(&old) {
                self.used -= o.mem();
                gone.push(o);
            }
        }
        self.clock += 1;
        self.order.insert(self.clock, key);
        self.used += m;
        self.map.insert(key, (t, self.clock));
    }

    /// A worker's working memory changes from `old` to `new` bytes: evict
    /// (into `gone`) until the cache and the reservations fit the budget.
    pub(super) fn reserve(&mut self, old: u64, new: u64, gone: &mut Vec<Arc<Tokens>>) {
        self.reserved = self.reserved - old + new;
        while self.used + self.reserved > self.budget {
            let Some((_, key)) = self.order.pop_first() else {
                break;
            };
            if let Some((o, _)) = self.map.remove(&key) {
                self.used -= o.mem();
                gone.push(o);
            }
        }
    }

    /// Remove a file (in both modes) into `gone`.
    pub(super) fn remove(&mut self, id: u32, gone: &mut Vec<Arc<Tokens>>) {
        if self.map.is_empty() {
            return;
        }
        for mode in [Mode::Lines, Mode::Pieces] {
            if let Some((t, stamp)) = self.map.remove(&(id, mode)) {
                self.order.remove(&stamp);
                self.used -= t.mem();
                gone.push(t);
            }
        }
    }

    /// Keep only the files for which `keep(id)` holds.
    pub(super) fn retain(&mut self, keep: impl Fn(u32) -> bool) {
        let mut stamps = Vec::new();
        let mut freed = 0;
        self.map.retain(|&(id, _), (t, stamp)| {
            keep(id) || {
                stamps.push(*stamp);
                freed += t.mem();
                false
            }
        });
        for s in stamps {
            self.order.remove(&s);
        }
        self.used -= freed;
    }
}

/// A shared cache and the means to lock it (a poisoned lock is taken
/// anyway: the cache holds no invariant a panicking worker could break
/// half-way that matters more than the panic itself, which is re-raised).
pub(super) type SharedCache = std::sync::Mutex<Cache>;

pub(super) fn lock(c: &SharedCache) -> std::sync::MutexGuard<'_, Cache> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}
