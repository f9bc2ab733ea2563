//! The outputs of a run: verified pairs and regions written in input order
//! with their digests, one warning per stale file, and the run's summary.

use super::worker::Outcome;
use super::*;
use crate::error::Result;
use crate::formats::percent;
use crate::formats::{escape_path_string, mix128, write_id, write_u64, Digest};
use crate::io::Output;
use std::collections::HashSet;

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    pub pairs_read: u64,
    pub dropped_ratio: u64,
    pub below_threshold: u64,
    pub verified: u64,
    pub lower_bound: u64,
    pub files_read: u64,
    pub bytes_read: u64,
    pub seconds: f64,
    /// Pairs dropped below the threshold by an upper bound, without a diff.
    pub stopped_early: u64,
    /// Pairs dropped below the threshold by the bound from the LCS length, the
    /// diff stopped as soon as they could not reach it.
    pub stopped_in_diff: u64,
    /// Pairs whose figure came from the earlier run (`None`: no --previous).
    pub reused: Option<u64>,
    /// Of a delta's own pairs, those whose two contents the earlier run
    /// verified under other ids ([`super::by_content`]): figures taken
    /// from it, no file read.
    pub by_content: u64,
}

impl Summary {
    pub fn line(&self) -> String {
        let rate = if self.seconds > 0.0 {
            self.pairs_read as f64 / self.seconds
        } else {
            0.0
        };
        format!(
            "{PROG}: {} pairs read, {} dropped by size ratio, {} verified ({} below the threshold), {} lower-bound only, {} files read, {} bytes read, {:.2} s ({:.0} pairs/s)",
            self.pairs_read,
            self.dropped_ratio,
            self.verified,
            self.below_threshold,
            self.lower_bound,
            self.files_read,
            self.bytes_read,
            self.seconds,
            rate
        ) + &match self.stopped_early {
            0 => String::new(),
            n => format!(", {n} stopped early (an upper bound below the threshold)"),
        } + &match self.stopped_in_diff {
            0 => String::new(),
            n => format!(", {n} stopped in the diff (a bound from the LCS length below the threshold)"),
        } + &match self.reused {
            Some(n) => format!(", {n} reused from the earlier run"),
            None => String::new(),
        } + &match self.by_content {
            0 => String::new(),
            n => format!(", {n} by their contents' earlier figures"),
        }
    }
}

/// Bytes of output text gathered before they are written.
const FLUSH_AT: usize = 1 << 20;

/// Digest contribution of a region.
pub fn region_mix(a: u32, b: u32, r: &Region) -> u128 {
    mix128(
        mix128(((a as u128) << 96) | ((b as u128) << 64) | r.len as u128)
            ^ (((r.off_a as u128) << 64) | r.off_b as u128),
    )
}

/// Digest contribution of a pair (same as fsim-analyze's).
pub fn pair_mix(a: u32, b: u32, common: u64) -> u128 {
    mix128(((a as u128) << 96) | ((b as u128) << 64) | common as u128)
}

/// Outputs and counters of a run.
pub(super) struct Sink {
    pub(super) out: Output,
    pub(super) regions: Option<Output>,
    pub(super) line: Vec<u8>,
    pub(super) written: Digest,
    pub(super) regions_written: Digest,
    pub(super) warned: HashSet<u32>,
    pub(super) summary: Summary,
}

impl Sink {
    pub(super) fn write_batch(
        &mut self,
        batch: &[PairIn],
        outcomes: &[Outcome],
        table: &Table,
        cfg: &Config,
    ) -> Result<()> {
        self.line.clear();
        let mut rl = Vec::new();
        for (p, o) in batch.iter().zip(outcomes) {
            for (id, why) in &o.stale {
                if self.warned.insert(*id) {
                    // One write per line: whole under `make -j`.
                    crate::cli::stderr_line(format_args!(
                        "{PROG}: warning: {}: {why}; pair kept as a lower bound",
                        escape_path_string(&table.entries[*id as usize].path)
                    ));
                }
            }
            if o.exact {
                if percent(o.common, base(p, cfg.percent_of)) < cfg.min_percent {
                    self.summary.below_threshold += 1;
                    self.summary.stopped_early += (o.below && !o.in_diff) as u64;
                    self.summary.stopped_in_diff += o.in_diff as u64;
                    self.summary.verified += 1;
                    continue;
                }
                self.summary.verified += 1;
            } else {
                self.summary.lower_bound += 1;
            }
            // The file ids of the table, not the indexes of the entries held.
            let (a, b) = (table.id(p.a), table.id(p.b));
            let l = &mut self.line;
            write_id(a, l);
            l.push(b'\t');
            write_id(b, l);
            for v in [p.size_a, p.size_b, p.common, p.shared, o.common] {
                l.push(b'\t');
                write_u64(v, l);
            }
            l.extend_from_slice(if o.exact {
                b"\texact\n"
            } else {
                b"\tlower-bound\n"
            });
            self.written.add_mix(pair_mix(a, b, p.common));
            if self.regions.is_some() {
                for r in &o.regions {
                    write_id(a, &mut rl);
                    rl.push(b'\t');
                    write_id(b, &mut rl);
                    for v in [r.off_a, r.off_b, r.len] {
                        rl.push(b'\t');
                        write_u64(v, &mut rl);
                    }
                    rl.push(b'\n');
                    self.regions_written.add_mix(region_mix(a, b, r));
                }
                // Written as it grows: a batch's regions as text were
                // 100+ MB on binary catalogs verified at --min-percent 0.
                if rl.len() >= FLUSH_AT {
                    if let Some(r) = &mut self.regions {
                        r.write_all(&rl)?;
                    }
                    rl.clear();
                }
            }
            if self.line.len() >= FLUSH_AT {
                self.out.write_all(&self.line)?;
                self.line.clear();
            }
        }
        self.out.write_all(&self.line)?;
        if let Some(r) = &mut self.regions {
            r.write_all(&rl)?;
        }
        Ok(())
    }
}
