//! What a pair is, whether it is kept (step 4(c)) and how the pairs file
//! is written: one place for the thresholds both paths apply.

use super::delta::Changed;
use super::{Analysis, LineSource};
use crate::chunking::features;
use crate::error::{Context, Result};
use crate::formats::headers::{AnalysisParams, ChunkParams, LineParams};
use crate::formats::{self, Kind, Params};
use std::io::Write;

pub use crate::formats::pairs::Pair;
pub use crate::formats::PercentOf;

/// The thresholds of step 4(c).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    pub min_bytes: u64,
    pub min_percent: f64,
    pub percent_of: PercentOf,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            min_bytes: 0,
            min_percent: 10.0,
            percent_of: PercentOf::Smaller,
        }
    }
}

impl Thresholds {
    /// Keep a pair with `common` bytes in common? Both paths (in memory and
    /// out of core) and the test model call this one function.
    #[inline]
    pub fn keep(&self, common: u64, size_a: u64, size_b: u64) -> bool {
        if common < self.min_bytes {
            return false;
        }
        let base = self.percent_of.base(size_a, size_b);
        common as f64 * 100.0 >= self.min_percent * base as f64
    }

    /// Whether a pair whose smaller file has `size` bytes may be kept with
    /// at most `most` bytes in common: false only when [`Thresholds::keep`]
    /// rejects every such pair, whichever file the percentage is of (the
    /// smaller size is the least base, and `keep`'s comparison is
    /// monotonic in `common` and in the base, rounding included), so a
    /// pair it rules out is never one `keep` would have kept.
    #[inline]
    pub fn may_keep(&self, most: u64, size: u64) -> bool {
        most >= self.min_bytes && most as f64 * 100.0 >= self.min_percent * size as f64
    }
}

/// The header of the pairs file written from a bins file with header
/// `bins`: its parameters, the thresholds, the estimator of feature
/// methods and the line source's settings (a re-run compares them).
/// Errors (a message for the bins file) on malformed chunking parameters.
pub fn pairs_params(
    bins: &Params,
    th: &Thresholds,
    lines: Option<&LineSource>,
) -> std::result::Result<Params, String> {
    let method = ChunkParams::parse(bins)?.method;
    let analysis = AnalysisParams {
        min_bytes: Some(th.min_bytes),
        min_percent: Some(th.min_percent),
        percent_of: Some(th.percent_of),
        estimate: method
            .and_then(|m| m.parse::<features::FeatureMethod>().ok())
            .map(|m| m.estimator().as_str()),
        lines: lines.map(|l| LineParams {
            below: l.max_size,
            catalogs: l.catalogs,
            min_percent: l.thresholds.min_percent,
            verify_min_percent: (l.verify_floor > 0.0).then_some(l.verify_floor),
        }),
    };
    // Whether the bins were a re-run's changed chunks alone says nothing
    // of the pairs (the same as from every record).
    let bins = Params(
        bins.0
            .iter()
            .filter(|(k, _)| k != crate::formats::changed::CHANGED_ONLY)
            .cloned()
            .collect(),
    );
    Ok(bins.merged(&analysis.to_params()))
}

/// Write a pairs file (header `params`, pair lines in (a, b) order,
/// trailer) and return the number of pairs; with `only`, just the pairs
/// with a changed file.
pub fn write_pairs(
    a: Analysis,
    params: &Params,
    only: Option<&Changed>,
    out: &mut impl Write,
    name: &str,
) -> Result<u64> {
    let mut buf = Vec::with_capacity(1 << 16);
    formats::write_header(Kind::Pairs, params, &mut buf);
    let mut sum = 0u128;
    let mut n = 0u64;
    for p in super::lines::keep_chunk_figures(a.pairs.finish()?) {
        let p = p?;
        if only.is_some_and(|c| !c.any(p.a, p.b)) {
            continue;
        }
        n += 1;
        p.write(&mut buf);
        sum = sum.wrapping_add(p.mix());
        if buf.len() >= 1 << 16 {
            out.write_all(&buf).ctx(|| format!("writing {name}"))?;
            buf.clear();
        }
    }
    let t = Params::new()
        .with("pairs", n)
        .with("digest", formats::hex128(sum));
    formats::write_trailer(Kind::Pairs, &t, &mut buf);
    out.write_all(&buf).ctx(|| format!("writing {name}"))?;
    Ok(n)
}
