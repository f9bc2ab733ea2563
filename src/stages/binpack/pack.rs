//! The plan, shared by every mode: components packed into bins
//! (first-fit decreasing), the plan for people and as tsv, and the bins
//! file's `#bin` lines, header parameters and trailer.

use super::{Bin, Component, Config};
use crate::error::Result;
use crate::formats::headers::{BinsHeader, BinsTrailer, PartitionHeader, Pruned};
use crate::formats::{self, Digest, InputCheck};
use crate::io::Output;

/// First-fit decreasing: components by (memory desc, id asc), each into the
/// first bin (in opening order) with room left; a component above the
/// capacity gets a bin of its own, marked oversized. Deterministic, and
/// O(n log n) thanks to a max-tree over the bins' free space.
pub fn pack(comps: &[Component], capacity: u64) -> Vec<Bin> {
    let mut order: Vec<usize> = (0..comps.len()).collect();
    order.sort_unstable_by_key(|&i| (std::cmp::Reverse(comps[i].memory), comps[i].id));
    let leaves = comps.len().max(1).next_power_of_two();
    // tree[leaves + i] = free space of bin i (0 for bins not yet opened and
    // for oversized bins); inner nodes hold the max of their children.
    let mut tree = vec![0u64; 2 * leaves];
    let set = |tree: &mut Vec<u64>, i: usize, v: u64| {
        let mut n = leaves + i;
        tree[n] = v;
        while n > 1 {
            n /= 2;
            tree[n] = tree[2 * n].max(tree[2 * n + 1]);
        }
    };
    let mut bins: Vec<Bin> = Vec::new();
    for i in order {
        let c = &comps[i];
        let need = c.memory.max(1);
        let slot = if need > capacity || tree[1] < need {
            None
        } else {
            let mut n = 1;
            while n < leaves {
                n = if tree[2 * n] >= need {
                    2 * n
                } else {
                    2 * n + 1
                };
            }
            Some(n - leaves)
        };
        let b = match slot {
            Some(b) => b,
            None => {
                bins.push(Bin {
                    oversized: need > capacity,
                    ..Bin::default()
                });
                bins.len() - 1
            }
        };
        let bin = &mut bins[b];
        bin.components.push(i);
        bin.files += c.files;
        bin.records += c.records;
        bin.memory += c.memory;
        let free = if bin.oversized {
            0
        } else {
            capacity - bin.memory
        };
        set(&mut tree, b, free);
    }
    bins
}

/// `1.9 GiB`-style sizes for people.
pub fn human_size(n: u64) -> String {
    match crate::cli::byte_units(n) {
        (_, "B") => format!("{n} B"),
        (v, unit) if v.fract() == 0.0 => format!("{v:.0} {unit}"),
        (v, unit) => format!("{v:.1} {unit}"),
    }
}

/// The plan as a table for people (stderr).
pub fn plan_table(bins: &[Bin], capacity: u64) -> String {
    let mut s = format!(
        "fsim-binpack: {} bins of at most {}\n",
        bins.len(),
        human_size(capacity)
    );
    s += &format!(
        "{:>8} {:>10} {:>10} {:>12} {:>12} {:>9}\n",
        "bin", "components", "files", "records", "memory", "oversized"
    );
    let (mut c, mut f, mut r, mut m, mut o) = (0usize, 0u64, 0u64, 0u64, 0usize);
    for (i, b) in bins.iter().enumerate() {
        s += &format!(
            "{:>8} {:>10} {:>10} {:>12} {:>12} {:>9}\n",
            i + 1,
            b.components.len(),
            b.files,
            b.records,
            human_size(b.memory),
            if b.oversized { "yes" } else { "" }
        );
        c += b.components.len();
        f += b.files;
        r += b.records;
        m += b.memory;
        o += b.oversized as usize;
    }
    s += &format!(
        "{:>8} {:>10} {:>10} {:>12} {:>12} {:>9}\n",
        "total",
        c,
        f,
        r,
        human_size(m),
        o
    );
    s
}

/// The plan as TSV (docs/formats.md, "plan").
pub fn plan_tsv(bins: &[Bin]) -> Vec<u8> {
    let mut s = String::from("bin\tcomponents\tfiles\trecords\tmemory\toversized\n");
    for (i, b) in bins.iter().enumerate() {
        s += &format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            i + 1,
            b.components.len(),
            b.files,
            b.records,
            b.memory,
            b.oversized as u8
        );
    }
    s.into_bytes()
}

/// Warnings for the oversized bins, and the plan (table on stderr unless
/// quiet, TSV with `--plan`).
pub(super) fn report_plan(cfg: &Config, comps: &[Component], bins: &[Bin]) -> Result<()> {
    for b in bins.iter().filter(|b| b.oversized) {
        let c = &comps[b.components[0]];
        crate::cli::stderr_line(format_args!(
            "fsim-binpack: warning: component of file {}: {} estimated > capacity {}: fsim-analyze will process it out of core",
            formats::id_string(c.id),
            human_size(c.memory),
            human_size(cfg.capacity)
        ));
    }
    if !cfg.quiet {
        crate::cli::stderr_line(plan_table(bins, cfg.capacity));
    }
    if let Some(p) = &cfg.plan {
        let mut o = Output::create(Some(p))?;
        o.write_all(&plan_tsv(bins))?;
        o.finish()?;
    }
    Ok(())
}

/// A bin's `#bin` line in the bins file (1-based number).
pub(super) fn bin_line(number: usize, bin: &Bin) -> String {
    format!(
        "#bin\t{number}\tfiles={}\trecords={}\tmemory={}\toversized={}\n",
        bin.files, bin.records, bin.memory, bin.oversized as u8
    )
}

/// The bins file's header parameters: the partition's stage parameters,
/// what it pruned, whether its records are a re-run's changed chunks
/// alone (`changed-only=N`), the number of bins and the capacity.
pub(super) fn bins_params(
    header: Option<&formats::Params>,
    pruned: Option<&Pruned>,
    changed_only: Option<u64>,
    bins: usize,
    capacity: u64,
) -> formats::Params {
    let packing = BinsHeader {
        bins: Some(bins as u64),
        capacity: Some(capacity),
        ..BinsHeader::default()
    };
    header
        .map(formats::stage_params)
        .unwrap_or_default()
        .merged(&pruned.map(Pruned::to_params).unwrap_or_default())
        .merged(&changed_only.map_or_else(formats::Params::new, |n| {
            formats::Params::new().with(formats::changed::CHANGED_ONLY, n)
        }))
        .merged(&packing.packing_params())
}

/// The bins file's trailer: every record's count and digest, the bins and
/// the files.
pub(super) fn bins_trailer(records: &Digest, bins: usize, files: u64) -> formats::Params {
    BinsTrailer {
        records: Some(records.count),
        digest: Some(records.sum),
        bins: Some(bins as u64),
        files,
    }
    .to_params()
}

/// The degree limit a partition file's header names (`limit=`), for
/// what fsim-binpack passes on of the pruning.
pub(super) fn partition_limit(check: &InputCheck) -> std::result::Result<Option<u64>, String> {
    match &check.params {
        Some(p) => Ok(PartitionHeader::parse(p)?.limit),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn comp(id: u32, memory: u64) -> Component {
        Component {
            id,
            files: 2,
            records: 4,
            chunks: 2,
            memory,
        }
    }

    #[test]
    fn first_fit_decreasing_known_answer() {
        let cs = [
            comp(0, 30),
            comp(5, 70),
            comp(9, 50),
            comp(12, 50),
            comp(20, 20),
            comp(30, 150),
        ];
        let bins = pack(&cs, 100);
        let got: Vec<(Vec<usize>, u64, bool)> = bins
            .iter()
            .map(|b| (b.components.clone(), b.memory, b.oversized))
            .collect();
        assert_eq!(
            got,
            vec![
                (vec![5], 150, true),
                (vec![1, 0], 100, false),
                (vec![2, 3], 100, false),
                (vec![4], 20, false)
            ]
        );
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(1 << 30), "1 GiB");
        assert_eq!(human_size(2040 << 20), "2.0 GiB");
        assert_eq!(human_size(1536), "1.5 KiB");
    }

    proptest! {
        #[test]
        fn packing_invariants(mems in proptest::collection::vec(1u64..300, 0..60), cap in 1u64..250) {
            let cs: Vec<Component> = mems.iter().enumerate().map(|(i, &m)| comp(i as u32 * 3, m)).collect();
            let bins = pack(&cs, cap);
            let mut placed = vec![0u32; cs.len()];
            for b in &bins {
                prop_assert!(!b.components.is_empty());
                prop_assert_eq!(b.memory, b.components.iter().map(|&i| cs[i].memory).sum::<u64>());
                if b.oversized {
                    prop_assert_eq!(b.components.len(), 1);
                    prop_assert!(b.memory > cap);
                } else {
                    prop_assert!(b.memory <= cap);
                }
                for &i in &b.components {
                    placed[i] += 1;
                }
            }
            prop_assert!(placed.iter().all(|&n| n == 1));
            // First fit: no component of a later bin would have fitted an earlier one
            // at the time it was placed; weaker check: no two non-oversized bins
            // could be merged when both are at most half full.
            let halves = bins.iter().filter(|b| !b.oversized && b.memory * 2 <= cap).count();
            prop_assert!(halves <= 1);
            // Same input, same plan.
            prop_assert_eq!(pack(&cs, cap), bins);
        }
    }
}
