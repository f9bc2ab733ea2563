//! Step 3, likely templates: the 10th percentile and the median of the
//! bytes in common of the clusters that are (nearly) cliques, in one read
//! of the links, held in memory or sorted by cluster when they do not fit.

use super::figures::LinkFigures;
use super::join::NONE;
use super::source::Source;
use crate::error::Result;
use crate::io::sorter::{le_u64, ExternalSorter, FixedRecord, SortOptions, MIN_MEMORY};
use crate::report::model::{median_size, model_bytes, ModelCounts, Report};

/// Step 3, likely templates: the 10th percentile and the median of bytes
/// in common, for the clusters that are (nearly) cliques. One read of the
/// links either way: their bytes in common are held when all the
/// candidates' fit in what the model leaves of `--memory`, else sorted by
/// cluster through the external sorter ([`Templates::sorted`]). Reading
/// them in batches of what fits, and a cluster too large for the budget
/// alone by narrowing a histogram over a few reads, was quadratic when the
/// model left little: more than 20 minutes at a million files and
/// `--memory 128M`.
pub(super) fn likely_templates(
    report: &Report,
    source: &mut Source,
    cluster_of: &[u32],
    members: &[Vec<u32>],
    lf: &LinkFigures,
) -> Result<Vec<Option<u64>>> {
    let k = members.len();
    let min_files = report.config.template_min_files;
    let candidate = |c: usize| {
        let f = members[c].len() as u64;
        f >= min_files.max(3) as u64 && lf.count[c] as u64 * 10 >= f * (f - 1) / 2 * 9
    };
    let mut template: Vec<Option<u64>> = vec![None; k];
    // What is left of --memory beside the model (its build's counters
    // included).
    let budget = {
        let model = model_bytes(&ModelCounts {
            files: &report.files,
            clusters: k,
            clustered: members.iter().map(|m| m.len()).sum(),
            reviewed: lf.in_big as usize,
            identical: &report.identical,
            same_content: &report.same_content,
            best: lf.want_best,
        });
        report.config.memory.saturating_sub(model).max(1)
    };
    // 8 bytes per link, 8 per file (its closest relative), 24 per cluster.
    let need = |c: usize| (lf.count[c] + members[c].len() + 3) as u64 * 8;
    let cands: Vec<usize> = (0..k).filter(|&c| candidate(c)).collect();
    if cands.is_empty() {
        return Ok(template);
    }
    if cands.iter().map(|&c| need(c)).sum::<u64>() > budget {
        let t = Templates {
            cluster_of,
            members,
            lf,
        };
        t.sorted(report, source, &cands, budget, &mut template)?;
        return Ok(template);
    }
    // Each candidate's bytes in common (`commons`, from `first[x].0` on)
    // and each of its files' most bytes in common with another
    // (`closest`, from `first[x].1` on, in the order of its members: by
    // id, as `join` found them): two allocations, exactly what `need`
    // counts, returned whole when freed (a vector a cluster and a map of
    // the files took half as much again, and their freed pieces stayed
    // resident under the links' sorter: 277 MiB at `--memory 256M`).
    let mut slot = vec![NONE; k];
    let mut first = Vec::with_capacity(cands.len());
    let (mut links, mut files) = (0, 0);
    for (x, &c) in cands.iter().enumerate() {
        slot[c] = x as u32;
        first.push((links, files));
        links += lf.count[c];
        files += members[c].len();
    }
    let mut next: Vec<usize> = first.iter().map(|f| f.0).collect();
    let mut commons = vec![0u64; links];
    let mut closest = vec![0u64; files];
    source.kept(&mut |p| {
        let c = cluster_of[p.a as usize] as usize;
        let Some(x) = slot.get(c).filter(|&&x| x != NONE).map(|&x| x as usize) else {
            return;
        };
        commons[next[x]] = p.common;
        next[x] += 1;
        for f in [p.a, p.b] {
            let at = members[c].binary_search(&f).expect("a member");
            let m = &mut closest[first[x].1 + at];
            *m = (*m).max(p.common);
        }
    })?;
    for (x, &c) in cands.iter().enumerate() {
        let (l, f) = first[x];
        template[c] = crate::report::templates::likely_template(
            members[c].len(),
            &commons[l..l + lf.count[c]],
            median_size(&report.sizes, &members[c]),
            min_files,
            &closest[f..f + members[c].len()],
        );
    }
    Ok(template)
}

/// A figure of a likely-template candidate, sorted by cluster
/// ([`Templates::sorted`]): `key` is the cluster's index `<< 32`, plus 0
/// for a link's bytes in common, or plus a file's id + 1 for that file's
/// most bytes in common with another file of the cluster. A cluster's
/// links come first, by bytes in common (its percentiles are read at
/// their ranks), then its files, each once (the sorter keeps the last,
/// the greatest, of a file's figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TemplateFigure {
    key: u64,
    common: u64,
}

impl FixedRecord for TemplateFigure {
    const SIZE: usize = 16;
    fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.key.to_le_bytes());
        out[8..16].copy_from_slice(&self.common.to_le_bytes());
    }
    fn decode(b: &[u8]) -> Self {
        TemplateFigure {
            key: le_u64(b, 0),
            common: le_u64(b, 8),
        }
    }
}

/// What the sorted test of the likely templates reads.
struct Templates<'a> {
    cluster_of: &'a [u32],
    members: &'a [Vec<u32>],
    lf: &'a LinkFigures,
}

impl Templates<'_> {
    /// The likely-template test of the candidates `cands` in one read of
    /// the links: each link's bytes in common and its files' figures go
    /// through the external sorter (`budget` bytes of buffer, runs in
    /// `--tmpdir`), and each cluster's percentiles and closer relatives
    /// are counted as its sorted figures come: the same figures as
    /// [`crate::report::templates::likely_template`] on them all.
    fn sorted(
        &self,
        report: &Report,
        source: &mut Source,
        cands: &[usize],
        budget: u64,
        template: &mut [Option<u64>],
    ) -> Result<()> {
        let mut is_cand = vec![false; self.members.len()];
        for &c in cands {
            is_cand[c] = true;
        }
        let mut opts = SortOptions::with_memory(budget.max(MIN_MEMORY));
        opts.tmpdir = report.config.tmpdir.clone();
        // A file's figures are one group; links' (low word 0) are not.
        let same: fn(&TemplateFigure, &TemplateFigure) -> bool =
            |x, y| x.key == y.key && x.key as u32 != 0;
        let mut sorter = ExternalSorter::new(opts).keep_last_of(same);
        let (mut err, mut run) = (None, None::<TemplateFigure>);
        let cluster_of = self.cluster_of;
        source.kept(&mut |p| {
            let c = cluster_of[p.a as usize];
            if err.is_some() || !is_cand[c as usize] {
                return;
            }
            let key = |f: u32| u64::from(c) << 32 | (u64::from(f) + 1);
            let figure = |key| TemplateFigure {
                key,
                common: p.common,
            };
            let mut out = [
                Some(figure(u64::from(c) << 32)),
                Some(figure(key(p.b))),
                None,
            ];
            // File a's links come together (the pairs' order): combined
            // here, one figure a file instead of one a link.
            match &mut run {
                Some(r) if r.key == key(p.a) => r.common = r.common.max(p.common),
                _ => out[2] = run.replace(figure(key(p.a))),
            }
            for f in out.into_iter().flatten() {
                if let Err(e) = sorter.push(f) {
                    err = Some(e);
                }
            }
        })?;
        if let Some(r) = run {
            sorter.push(r)?;
        }
        err.map_or(Ok(()), Err)?;
        let mut sorted = sorter.finish()?;
        let mut next = sorted.next_item()?;
        while let Some(first) = next {
            let c = (first.key >> 32) as usize;
            let len = self.lf.count[c] as u64;
            let (mut i, mut p10, mut median) = (0u64, 0, 0);
            while let Some(f) = next.filter(|f| f.key == first.key & !0xffff_ffff) {
                if i == len / 10 {
                    p10 = f.common;
                }
                if i == len / 2 {
                    median = f.common;
                }
                i += 1;
                next = sorted.next_item()?;
            }
            let mut closer = 0;
            while let Some(f) = next.filter(|f| f.key >> 32 == c as u64) {
                closer += usize::from(f.common * 8 >= p10 * 9);
                next = sorted.next_item()?;
            }
            template[c] = crate::report::templates::uniform_template_of(
                p10,
                median,
                median_size(&report.sizes, &self.members[c]),
                closer,
                self.members[c].len(),
            );
        }
        Ok(())
    }
}
