//! Pair scheduling: a batch cut into units at group boundaries, handed to
//! the workers dynamically, the outcomes put back in input order (so the
//! output does not depend on `-j`).

use super::cache::{lock, SharedCache};
use super::plan::Plan;
use super::worker::{Outcome, Worker};
use super::*;
use crate::formats::FileEntry;
use crate::io::ordered::ordered_map;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Cut a batch into units of work at group boundaries, not before a group
/// whose file a the unit already read (as a b: a version compared with its
/// document, then with the other versions): cut there, the next unit could
/// go to the other worker, which would read the file again.
pub(super) fn units(batch: &[PairIn], plan: &Plan) -> Vec<std::ops::Range<usize>> {
    let mut v = Vec::new();
    let mut start = 0;
    for i in 1..=batch.len() {
        let boundary = i == batch.len()
            || (batch[i].a != batch[i - 1].a
                && i - start >= UNIT_PAIRS
                && !(start as u32..i as u32).contains(&plan.first[batch[i].a as usize]))
            || i - start >= 16 * UNIT_PAIRS;
        if boundary {
            v.push(start..i);
            start = i;
        }
    }
    v
}

/// Verify the pairs of a batch that the earlier run does not give
/// (`reused`, taken), on all workers; outcomes in input order.
pub(super) fn process_batch(
    batch: &[PairIn],
    reused: &mut Vec<Option<Outcome>>,
    workers: &mut [Worker],
    cache: &SharedCache,
    files: &[FileEntry],
    plan: &mut Plan,
    want_regions: bool,
) -> Vec<Outcome> {
    if reused.iter().all(Option::is_none) {
        reused.clear();
        return process(batch, workers, cache, files, plan, want_regions);
    }
    let todo: Vec<PairIn> = batch
        .iter()
        .zip(reused.iter())
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| *p)
        .collect();
    let mut done = process(&todo, workers, cache, files, plan, want_regions).into_iter();
    let out = reused
        .iter_mut()
        .map(|r| {
            r.take()
                .unwrap_or_else(|| done.next().expect("one outcome per pair verified"))
        })
        .collect();
    reused.clear();
    out
}

/// Verify one batch on all workers; outcomes in input order.
pub(super) fn process(
    batch: &[PairIn],
    workers: &mut [Worker],
    cache: &SharedCache,
    files: &[FileEntry],
    plan: &mut Plan,
    want_regions: bool,
) -> Vec<Outcome> {
    plan.set(batch);
    let units = units(batch, plan);
    let mut ahead = Ahead::new(units.len());
    let out = if workers.len() == 1 || units.len() == 1 {
        let mut out = Vec::with_capacity(batch.len());
        for (k, r) in units.iter().enumerate() {
            ahead.starting(k, &units, batch, files, plan, cache);
            out.extend(workers[0].run(
                cache,
                &batch[r.clone()],
                r.start,
                files,
                plan,
                want_regions,
            ));
        }
        out
    } else {
        // Every unit may be in flight: they are in memory already, and an
        // idle worker takes the next one however long the first takes.
        let plan = &*plan;
        let mut out = Vec::with_capacity(batch.len());
        let mut next = units.iter().cloned().enumerate();
        ordered_map::<_, _, _, crate::error::Error>(
            workers,
            units.len(),
            |w, r: std::ops::Range<usize>| {
                w.run(cache, &batch[r.clone()], r.start, files, plan, want_regions)
            },
            || {
                Ok(next.next().map(|(k, r)| {
                    ahead.starting(k, &units, batch, files, plan, cache);
                    r
                }))
            },
            |o| {
                out.extend(o);
                Ok(())
            },
        )
        .expect("neither the units nor the outcomes fail");
        out
    };
    // Files cached for a pair that another worker verified first, or
    // (without the whole input's plan) for this batch only.
    let end = batch.len() as u32;
    lock(cache).retain(|id| plan.keep(id) && plan.needed_from(id, end));
    plan.clear(batch);
    out
}

/// About how many files are read ahead of the unit a worker starts, its
/// own included (at most [`crate::io::prefetch::AHEAD_BYTES`] each).
const AHEAD_FILES: usize = 512;

/// The read-ahead of a batch's files, unit by unit: as each unit starts,
/// the files first used in it and in the units after it, up to
/// [`AHEAD_FILES`] of them, are handed to the read-ahead thread
/// ([`crate::io::prefetch::ahead`]), except those the cache holds (no
/// read) and archive members (no path of their own). On a tree outside the
/// page cache the disk then reads them while the workers compare. It
/// changes no outcome.
pub(super) struct Ahead {
    /// Files handed over for each unit sent.
    counts: Vec<usize>,
    /// Of them, in all units sent.
    sent: usize,
    /// Of them, in the units started: those before the one starting now
    /// (units start in order).
    started: usize,
    /// How many units `started` counts.
    passed: usize,
}

impl Ahead {
    fn new(units: usize) -> Ahead {
        Ahead {
            counts: Vec::with_capacity(units),
            sent: 0,
            started: 0,
            passed: 0,
        }
    }

    /// Unit `k` of `units` is about to start (`k` one more than the last).
    fn starting(
        &mut self,
        k: usize,
        units: &[std::ops::Range<usize>],
        batch: &[PairIn],
        files: &[FileEntry],
        plan: &Plan,
        cache: &SharedCache,
    ) {
        while self.passed < k.min(self.counts.len()) {
            self.started += self.counts[self.passed];
            self.passed += 1;
        }
        while self.counts.len() < units.len() && self.sent - self.started < AHEAD_FILES {
            let r = units[self.counts.len()].clone();
            let c = lock(cache);
            let mut n = 0;
            for (i, p) in batch[r.clone()].iter().enumerate() {
                for f in [p.a, p.b] {
                    let e = &files[f as usize];
                    if plan.first[f as usize] as usize == r.start + i
                        && !e.view.is_member()
                        && !c.holds(f)
                    {
                        crate::io::prefetch::ahead(PathBuf::from(OsStr::from_bytes(&e.path)));
                        n += 1;
                    }
                }
            }
            self.counts.push(n);
            self.sent += n;
        }
    }
}
