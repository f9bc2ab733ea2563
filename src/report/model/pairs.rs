//! Reading the analysis' pairs: checked against the file table and the
//! threshold fsim-verify used, then each link's thresholds and filters,
//! and the report's parameters that result.

use super::{Config, Pair};
use crate::error::{Error, Result};
use crate::formats::files::CompactTable;
use crate::formats::headers::{PairsHeader, ReportParams};
use crate::formats::open_input;
use crate::formats::{
    pairs, percent, Digest, InputCheck, Kind, Line, LineReader, Params, PercentOf,
};
use std::path::Path;

/// fsim-verify drops the pairs under its `--min-percent` (the Makefile
/// gives it the report's): a report with a lower threshold, or one that
/// the dropped pairs could pass, would miss links without saying so, so it
/// is refused, naming the threshold to verify with.
pub(crate) fn check_verify_threshold(params: &Params, config: &Config, name: &str) -> Result<()> {
    let header = PairsHeader::parse(params).map_err(|m| Error::input(name, 1, m))?;
    if header.delta.is_some() {
        return Err(Error::input(
            name,
            1,
            "these pairs are only those of the files changed since an earlier run (delta=1, from fsim-analyze --previous-files): report on fsim-verify --previous's output",
        ));
    }
    let Some(verify) = header.verify else {
        return Ok(());
    };
    let Some(v) = verify.min_percent.filter(|&v| v > 0.0) else {
        return Ok(());
    };
    let of = verify.percent_of();
    // A share of the larger file is never above the share of the smaller:
    // links kept at >= X % of the larger are >= X % of the smaller.
    let covered = config.min_percent >= v && (of == config.percent_of || of == PercentOf::Smaller);
    if covered {
        return Ok(());
    }
    let of = of.as_str();
    Err(Error::input(
        name,
        1,
        format!(
            "verified with --min-percent {v} of the {of} file, so the links under it are not here: --min-percent {} of the {} file needs fsim-verify --min-percent {} --percent-of {} (make MIN_PERCENT={} verifies again)",
            config.min_percent,
            config.percent_of.as_str(),
            config.min_percent,
            config.percent_of.as_str(),
            config.min_percent
        ),
    ))
}

/// Read the analysis' pairs, check them against the file table, and hand
/// each to `each` in file order; the sizes the percentages use are set in
/// `sizes` (and handed to `each` with the pair). Returns the pairs' header
/// parameters.
pub(crate) fn scan_pairs(
    path: &Path,
    files: &CompactTable,
    table_params: &Params,
    files_name: &str,
    sizes: &mut [u64],
    each: &mut dyn FnMut(Pair, &[u64]),
) -> Result<Params> {
    let mut payloads = false;
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let mut check = InputCheck::new(Kind::Pairs, "pairs");
    let mut seen = Digest::default();
    while let Some((line, line_no)) = r.next_numbered()? {
        let err = |m: String| Error::input(&name, line_no, m);
        match line {
            Line::Header(k, p) => {
                check.header(k, p.clone()).map_err(err)?;
                // Read typed here so that `Report::header` always parses.
                payloads |= PairsHeader::parse(&p).map_err(err)?.templates.is_some();
                if let Some(d) = p.chunking_difference(table_params) {
                    return Err(Error::input(
                        &name,
                        line_no,
                        format!("pairs and file table {files_name} come from runs with different parameters: {d}"),
                    ));
                }
            }
            Line::Trailer(k, p) => check.trailer(k, &p).map_err(err)?,
            Line::Comment(_) => {}
            Line::Data(d) => {
                // 6 fields from fsim-analyze, 8 from fsim-verify (exact
                // figure and status appended).
                let (p, figure) = pairs::parse_line(d).map_err(|e| err(e.message()))?;
                let (a, b, sa, sb, common) = (p.a, p.b, p.size_a, p.size_b, p.common);
                let shared = u64::from(p.shared);
                // The exact figure replaces the chunk lower bound; a
                // lower-bound line keeps the better of its two lower bounds.
                let (best, exact) = match figure {
                    None => (common, false),
                    Some(f) if f.exact => (f.bytes, true),
                    Some(f) => (f.bytes.max(common), false),
                };
                // Sizes only (`CompactTable::get` also finds the path and archive).
                let size = |id: u32| ((id as usize) < files.len()).then(|| files.size(id));
                let (fa, fb) = (size(a), size(b));
                // With templates the pairs carry payload sizes.
                let fits = |f: u64, s: u64| f == s || (payloads && f > s);
                match (fa, fb) {
                    (Some(fa), Some(fb)) if fits(fa, sa) && fits(fb, sb) && a < b => {
                        sizes[a as usize] = sa;
                        sizes[b as usize] = sb;
                    }
                    _ => {
                        return Err(err(format!(
                            "pair {a}-{b} does not match the file table {files_name} (unknown id or other size): pairs from another run?"
                        )))
                    }
                }
                seen.add_mix(p.mix());
                each(
                    Pair {
                        a,
                        b,
                        common: best,
                        shared_chunks: shared,
                        exact,
                    },
                    sizes,
                );
            }
        }
    }
    check.finish(&seen, &name, r.line_number())?;
    Ok(check.params.unwrap_or_default())
}

/// Does a link pass the thresholds?
pub(crate) fn keep_link(config: &Config, sizes: &[u64], p: &Pair) -> bool {
    let (sa, sb) = (sizes[p.a as usize], sizes[p.b as usize]);
    let base = config.percent_of.base(sa, sb);
    p.common >= config.min_bytes && p.common > 0 && percent(p.common, base) >= config.min_percent
}

/// Does a link (above the thresholds) pass the filters?
pub(crate) fn pass_link(
    config: &Config,
    files: &CompactTable,
    sizes: &[u64],
    path_ok: &[bool],
    coll: &[usize],
    p: &Pair,
) -> bool {
    let (a, b) = (p.a as usize, p.b as usize);
    path_ok[a]
        && path_ok[b]
        && config
            .filters
            .link_ok(files, (p.a, p.b), sizes[a], sizes[b], coll[a], coll[b])
}

/// The report's parameters: the pairs' plus the report's own.
pub(crate) fn report_params(pair_params: Params, config: &Config) -> Params {
    let own = ReportParams {
        min_percent: config.min_percent,
        min_bytes: config.min_bytes,
        percent_of: config.percent_of,
        filters: config.filters.describe(),
    };
    pair_params.merged(&own.to_params())
}
