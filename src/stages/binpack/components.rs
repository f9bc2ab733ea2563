//! `--components`: the plan of a distributed run, from per-component
//! figures only.

use super::pack::{bin_line, bins_params, bins_trailer, pack, partition_limit, report_plan};
use super::{Bin, Component, Config};
use crate::error::Result;
use crate::formats::bins::{estimate_memory, ComponentLine};
use crate::formats::headers::{PartitionTrailer, Pruned};
use crate::formats::open_input;
use crate::formats::{self, classify_line, Digest, InputCheck, Kind, Line, LineReader};
use crate::io::Output;

/// `--components`: the plan from per-component figures only, for a
/// distributed run (scripts/spark, docs/distributed.md) where the records
/// stay where they are. Input: the partition file's header line, one
/// `C<TAB>id<TAB>files<TAB>records<TAB>chunks` line per component (id: its
/// smallest file id, increasing; records and chunks as fsim-binpack counts
/// them from the partition's records: every kept record, and each kept
/// chunk once) and the partition file's trailer line. Output: the bins
/// file's header line, each bin's `#bin` line followed by `C<TAB>id` for
/// its components (increasing id), and the bins file's trailer: with the
/// bins' `F` lines (files in id order) and records (in partition order)
/// inserted after each `#bin` line, the bins file fsim-binpack writes from
/// the whole partition file. Memory: O(components).
pub fn run_components(cfg: &Config) -> Result<()> {
    let (input, name) = open_input(&cfg.input)?;
    let mut r = LineReader::new(input, name);
    let name = r.name().to_string();
    let mut check = InputCheck::new(Kind::Partition, "records");
    let mut comps: Vec<Component> = Vec::new();
    let mut trailer: Option<PartitionTrailer> = None;
    loop {
        let ln = r.line_number() + 1;
        let raw = match r.next_raw()? {
            None => break,
            Some(raw) => raw,
        };
        let err = |m: String| crate::Error::input(&name, ln, m);
        if raw.first() == Some(&b'#') {
            match classify_line(raw).map_err(|m| err(m.to_string()))? {
                Line::Header(kind, p) => {
                    if check.params.is_some() {
                        return Err(err("a second header".into()));
                    }
                    check.header(kind, p).map_err(err)?;
                }
                Line::Trailer(kind, p) => {
                    if trailer.is_some() {
                        return Err(err("a second trailer".into()));
                    }
                    check.trailer(kind, &p).map_err(err)?;
                    trailer = Some(PartitionTrailer::parse(&p).map_err(err)?);
                }
                Line::Comment(_) | Line::Data(_) => {}
            }
            continue;
        }
        if check.params.is_none() {
            return Err(err("no '#fsim partition v1' header first".into()));
        }
        if trailer.is_some() {
            return Err(err("data after the trailer".into()));
        }
        let mut c = parse_component(raw).map_err(|m| err(m.into()))?;
        if comps.last().is_some_and(|p| p.id >= c.id) {
            return Err(err("components are not in increasing id order".into()));
        }
        if c.files < 2 {
            return Err(err("a component of fewer than 2 files".into()));
        }
        c.memory = estimate_memory(c.files, c.records, c.chunks);
        comps.push(c);
    }
    let t =
        trailer.ok_or_else(|| r.error("no '#end partition' trailer: the table is truncated"))?;
    // The figures must add up to the partition's.
    let files: u64 = comps.iter().map(|c| c.files).sum();
    let records: u64 = comps.iter().map(|c| c.records).sum();
    for (what, got, want) in [
        ("records", records, t.records),
        ("files", files, t.files),
        ("components", comps.len() as u64, t.components),
    ] {
        if want != got {
            return Err(r.error(format!(
                "the components hold {got} {what}, the trailer announced {what}={want}"
            )));
        }
    }
    let bins = pack(&comps, cfg.capacity);
    report_plan(cfg, &comps, &bins)?;
    let limit = partition_limit(&check).map_err(|m| r.error(m))?;
    let pruned = Pruned::of_partition(limit, &t);
    let buf = components_plan(
        &comps,
        &bins,
        &check,
        pruned.as_ref(),
        t.changed_only,
        files,
        cfg.capacity,
    );
    let mut out = Output::create(cfg.output.as_deref())?;
    out.write_all(&buf)?;
    out.finish()?;
    Ok(())
}

/// A `C` line of `--components` ([`ComponentLine`]).
pub(super) fn parse_component(raw: &[u8]) -> std::result::Result<Component, &'static str> {
    let c = ComponentLine::parse(raw)?;
    Ok(Component {
        id: c.id,
        files: c.files,
        records: c.records,
        chunks: c.chunks,
        memory: 0,
    })
}

/// The bins file of `--components`: header, each bin's `#bin` line and its
/// components' `C` lines, trailer (`pruned`: what the partition dropped).
pub(super) fn components_plan(
    comps: &[Component],
    bins: &[Bin],
    check: &InputCheck,
    pruned: Option<&Pruned>,
    changed_only: Option<u64>,
    files: u64,
    capacity: u64,
) -> Vec<u8> {
    let mut buf = Vec::new();
    formats::write_header(
        Kind::Bins,
        &bins_params(
            check.params.as_ref(),
            pruned,
            changed_only,
            bins.len(),
            capacity,
        ),
        &mut buf,
    );
    for (b, bin) in bins.iter().enumerate() {
        buf.extend_from_slice(bin_line(b + 1, bin).as_bytes());
        let mut ids: Vec<u32> = bin.components.iter().map(|&i| comps[i].id).collect();
        ids.sort_unstable();
        for id in ids {
            buf.extend_from_slice(b"C\t");
            formats::write_id(id, &mut buf);
            buf.push(b'\n');
        }
    }
    let seen = Digest {
        count: check.expected.count,
        sum: check.expected.sum,
    };
    let tp = bins_trailer(&seen, bins.len(), files);
    formats::write_trailer(Kind::Bins, &tp, &mut buf);
    buf
}
