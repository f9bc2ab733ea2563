//! Step 2, the link figures: one read of the kept links for each
//! cluster's count and similarity, each file's reclaimable bytes and best
//! share, and the review (sub-clusters, closest relatives) of the large
//! clusters.

use super::join::{find, NONE};
use super::source::Source;
use crate::error::Result;
use crate::formats::{percent, symmetric};
use crate::report::model::{Cluster, Format, Hubs, Pair, Report, Review, CLOSEST, REVIEW_LEVELS};
use std::collections::BTreeSet;

/// Step 2's figures: per cluster its links and similarity; per file the
/// most bytes it shares with one larger file of its cluster (what could be
/// removed) and, for html and xlsx, the largest share of it in one link;
/// the sub-clusters and closest relatives of the large clusters.
pub(super) struct LinkFigures {
    pub(super) count: Vec<usize>,
    pub(super) sum: Vec<f64>,
    pub(super) first: Vec<Option<Pair>>,
    max_common: Vec<u64>,
    pub(super) covered: Vec<u64>,
    pub(super) want_best: bool,
    pub(super) best: Vec<f64>,
    pub(super) facts: BTreeSet<(u32, usize)>,
    /// Clusters reviewed as sub-clusters and closest relatives (all
    /// formats but tsv, over `--review-files` files).
    pub(super) big: Vec<bool>,
    /// Each file's slot among the files of the big clusters.
    slot: Vec<u32>,
    /// Files in the big clusters.
    pub(super) in_big: u32,
    /// A union-find over the slots per review level.
    level_parent: Vec<Vec<u32>>,
    /// The `CLOSEST` closest relatives of each slot.
    closest: Vec<Vec<(f64, Pair)>>,
    /// Each slot's links in its cluster, and whether it is a hub of it
    /// ([`Hubs::is_hub`]).
    links: Vec<u32>,
    hub: Vec<bool>,
    /// A union-find over the slots by the links between two files that
    /// are not hubs: the cluster without its hubs.
    apart: Vec<u32>,
}

impl LinkFigures {
    fn new(report: &Report, members: &[Vec<u32>], degree: &[u32]) -> LinkFigures {
        let (n, k) = (report.files.len(), members.len());
        // Computed when a report asked for uses them; the others ignore them.
        let want_best = report.config.writes(&[Format::Html, Format::Xlsx]);
        let review = report.config.writes(&[
            Format::Text,
            Format::Json,
            Format::Html,
            Format::Xlsx,
            Format::Sh,
        ]);
        let big: Vec<bool> = members
            .iter()
            .map(|m| review && m.len() > report.config.review_files)
            .collect();
        // The files of the large clusters get consecutive slots, so their
        // union-finds and closest relatives take memory for them alone.
        let mut slot = vec![NONE; if big.iter().any(|&b| b) { n } else { 0 }];
        let mut in_big = 0u32;
        let (mut links, mut hub) = (Vec::new(), Vec::new());
        for (c, m) in members.iter().enumerate() {
            if big[c] {
                for &f in m {
                    slot[f as usize] = in_big;
                    in_big += 1;
                    links.push(degree[f as usize]);
                    hub.push(Hubs::is_hub(degree[f as usize], m.len()));
                }
            }
        }
        LinkFigures {
            count: vec![0; k],
            sum: vec![0.0; k],
            first: vec![None; k],
            max_common: vec![0; k],
            covered: vec![0; n],
            want_best,
            best: vec![0.0; if want_best { n } else { 0 }],
            facts: BTreeSet::new(),
            big,
            slot,
            in_big,
            level_parent: REVIEW_LEVELS
                .iter()
                .map(|_| (0..in_big).collect())
                .collect(),
            closest: vec![Vec::new(); in_big as usize],
            links,
            hub,
            apart: (0..in_big).collect(),
        }
    }

    /// Count link `p` of cluster `c`.
    #[inline]
    fn add(&mut self, report: &Report, c: usize, p: Pair) {
        let sizes = &report.sizes;
        self.count[c] += 1;
        let (sa, sb) = (sizes[p.a as usize], sizes[p.b as usize]);
        // The smaller file (size, then the larger id) is covered.
        let small = if (std::cmp::Reverse(sa), p.a) < (std::cmp::Reverse(sb), p.b) {
            p.b
        } else {
            p.a
        };
        let cov = &mut self.covered[small as usize];
        *cov = (*cov).max(p.common);
        if self.want_best {
            for (f, s) in [(p.a, sa), (p.b, sb)] {
                let x = &mut self.best[f as usize];
                *x = x.max(percent(p.common, s));
            }
        }
        crate::report::collections::add_similar(report, &mut self.facts, &p);
        let sim = symmetric(p.common, sa, sb);
        self.sum[c] += sim;
        self.first[c].get_or_insert(p);
        self.max_common[c] = self.max_common[c].max(p.common);
        if self.big[c] {
            self.review(p, sim);
        }
    }

    /// Join link `p` (similarity `sim`) at each review level it reaches,
    /// and keep it among its files' closest relatives if it is one.
    #[inline]
    fn review(&mut self, p: Pair, sim: f64) {
        let (xa, xb) = (self.slot[p.a as usize], self.slot[p.b as usize]);
        for (l, parent) in REVIEW_LEVELS.iter().zip(self.level_parent.iter_mut()) {
            if sim >= *l {
                let (ra, rb) = (find(parent, xa), find(parent, xb));
                if ra != rb {
                    parent[ra.max(rb) as usize] = ra.min(rb);
                }
            }
        }
        if !self.hub[xa as usize] && !self.hub[xb as usize] {
            let (ra, rb) = (find(&mut self.apart, xa), find(&mut self.apart, xb));
            if ra != rb {
                self.apart[ra.max(rb) as usize] = ra.min(rb);
            }
        }
        for (me, x) in [(p.a, xa), (p.b, xb)] {
            let top = &mut self.closest[x as usize];
            let key = |x: &(f64, Pair)| {
                let o = if x.1.a == me { x.1.b } else { x.1.a };
                // Similarities are >= 0: their bits order them.
                (std::cmp::Reverse(x.0.to_bits()), o)
            };
            let new = (sim, p);
            if top.len() < CLOSEST || key(&new) < key(top.last().unwrap()) {
                let at = top.partition_point(|x| key(x) < key(&new));
                top.insert(at, new);
                top.truncate(CLOSEST);
            }
        }
    }

    /// The sub-clusters at each review level and the closest relatives of
    /// each file of `cl`, a big cluster (its relatives are taken).
    pub(super) fn review_of(&mut self, cl: &Cluster) -> Review {
        let slot = &self.slot;
        let mut sub = vec![[0u32; 3]; cl.files.len()];
        let levels = self
            .level_parent
            .iter_mut()
            .enumerate()
            .map(|(l, parent)| {
                // Sub-clusters numbered by their first (largest) file.
                let mut label: std::collections::HashMap<u32, u32> = Default::default();
                let mut sizes: Vec<usize> = Vec::new();
                for (i, &f) in cl.files.iter().enumerate() {
                    let next = label.len() as u32 + 1;
                    let x = *label.entry(find(parent, slot[f as usize])).or_insert(next);
                    if x as usize > sizes.len() {
                        sizes.push(0);
                    }
                    sizes[x as usize - 1] += 1;
                    sub[i][l] = x;
                }
                (sizes.len(), sizes.iter().copied().max().unwrap_or(0))
            })
            .collect();
        let closest = cl
            .files
            .iter()
            .map(|&f| {
                std::mem::take(&mut self.closest[slot[f as usize] as usize])
                    .into_iter()
                    .map(|x| x.1)
                    .collect()
            })
            .collect();
        Review {
            levels,
            sub,
            closest,
            hubs: self.hubs_of(cl),
        }
    }

    /// The hubs of `cl`, a big cluster, if they hold it together.
    fn hubs_of(&mut self, cl: &Cluster) -> Option<Hubs> {
        let mut hubs = Vec::new();
        let mut sizes: std::collections::HashMap<u32, usize> = Default::default();
        for &f in &cl.files {
            let x = self.slot[f as usize];
            if self.hub[x as usize] {
                hubs.push((f, self.links[x as usize]));
            } else {
                *sizes.entry(find(&mut self.apart, x)).or_default() += 1;
            }
        }
        hubs.sort_by_key(|&(f, links)| (std::cmp::Reverse(links), f));
        let largest = sizes.values().copied().max().unwrap_or(0);
        Hubs::marked(hubs, cl.files.len(), sizes.len(), largest)
    }
}

/// Step 2: read the kept links once for their [`LinkFigures`].
pub(super) fn link_figures(
    report: &Report,
    source: &mut Source,
    cluster_of: &[u32],
    members: &[Vec<u32>],
    degree: &[u32],
) -> Result<LinkFigures> {
    let mut lf = LinkFigures::new(report, members, degree);
    source.kept(&mut |p| lf.add(report, cluster_of[p.a as usize] as usize, p))?;
    Ok(lf)
}
