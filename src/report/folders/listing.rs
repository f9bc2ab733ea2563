//! The file lists' pass: the files of the first [`DETAILED`] pairs, each
//! with its best partner in the other folder ([`PairFiles`]).

use super::records::{Combiner, Detail, Merged};
use super::table::{contains, Dir};
use super::{FolderPair, FolderReport, Folders, PairFiles, DETAILED, LISTED};
use crate::error::Result;
use crate::io::sorter::ExternalSorter;

impl Folders<'_> {
    /// Start the second pass, which lists the files of the first
    /// [`DETAILED`] pairs of `r`: the identical sets propose again; the
    /// caller gives the kept links again ([`Folders::link`]) and calls
    /// [`Folders::finish_details`].
    pub fn start_details(&mut self, r: &FolderReport) -> Result<()> {
        let shape = &mut self.shape;
        shape.wanted = r
            .pairs
            .iter()
            .take(DETAILED)
            .enumerate()
            .map(|(k, p)| ((p.da, p.db), k as u32))
            .collect();
        shape.wanted_da = vec![false; shape.dirs.len()];
        for &(da, _) in shape.wanted.keys() {
            shape.wanted_da[da as usize] = true;
        }
        let same = |a: &Detail, b: &Detail| (a.k, a.file) == (b.k, b.file);
        for w in &mut self.workers {
            w.details = Some(ExternalSorter::new(self.sort.clone()).keep_last_of(same));
        }
        self.propose_sets()?;
        Ok(())
    }

    /// The file lists of the pairs [`Folders::start_details`] chose, into
    /// `r`.
    pub fn finish_details(&mut self, r: &mut FolderReport) -> Result<()> {
        if self.workers[0].details.is_none() {
            return Ok(());
        }
        self.flush()?;
        let mut streams = Vec::with_capacity(self.workers.len());
        for w in &mut self.workers {
            let mut details = w.details.take().expect("details started");
            for d in w.detail_combiner.drain() {
                details.push(d)?;
            }
            w.detail_combiner = Combiner::new(0);
            streams.push(details.finish()?);
        }
        let n = self.shape.wanted.len();
        let mut lists: Vec<Lister> = r.pairs[..n]
            .iter()
            .map(|p| Lister::new(&self.shape.dirs, p))
            .collect();
        let mut sorted = Merged::new(streams)?;
        let mut last: Option<Detail> = None;
        while let Some(d) = sorted.next_item()? {
            if let Some(l) = last.filter(|l| (l.k, l.file) != (d.k, d.file)) {
                lists[l.k as usize].best(&self.shape.dirs, &self.shape.dir_of, l);
            }
            last = Some(d);
        }
        if let Some(l) = last {
            lists[l.k as usize].best(&self.shape.dirs, &self.shape.dir_of, l);
        }
        for (p, l) in r.pairs.iter_mut().zip(lists) {
            p.files = Some(Box::new(l.end()));
        }
        self.shape.wanted.clear();
        Ok(())
    }
}

/// The file lists of one pair as its files' best partners come, in file
/// id order.
pub(super) struct Lister {
    da: u32,
    /// The folders' runs of ids (none when their files are not one run)
    /// and the next id of each not yet seen.
    runs: Option<[std::ops::RangeInclusive<u32>; 2]>,
    next: [u32; 2],
    files: PairFiles,
}

impl Lister {
    fn new(dirs: &[Dir], p: &FolderPair) -> Lister {
        let (a, b) = (&dirs[p.da as usize], &dirs[p.db as usize]);
        let runs = a.run().zip(b.run()).map(|(x, y)| [x, y]);
        Lister {
            da: p.da,
            next: [a.first, b.first],
            files: PairFiles {
                only_listed: runs.is_some(),
                ..PairFiles::default()
            },
            runs,
        }
    }

    /// The files from `next` up to `to` (excluded) on `side` have no
    /// partner: listed while the list has room.
    fn skip_to(&mut self, side: usize, to: u32) {
        let Some(runs) = &self.runs else { return };
        let list = if side == 0 {
            &mut self.files.only_a
        } else {
            &mut self.files.only_b
        };
        let end = to.min(runs[side].end().saturating_add(1));
        let room = LISTED.saturating_sub(list.len()) as u32;
        let from = self.next[side];
        list.extend(from..end.min(from.saturating_add(room)).max(from));
        self.next[side] = self.next[side].max(to);
    }

    /// File `d.file`'s best partner `d`.
    fn best(&mut self, dirs: &[Dir], dir_of: &[u32], d: Detail) {
        let side = usize::from(!contains(dirs, self.da, dir_of[d.file as usize]));
        self.skip_to(side, d.file);
        self.next[side] = self.next[side].max(d.file + 1);
        if side == 1 {
            return;
        }
        let f = &mut self.files;
        if d.identical {
            f.same_count += 1;
            if f.same.len() < LISTED {
                f.same.push((d.file, d.partner));
            }
        } else {
            f.changed_count += 1;
            if f.changed.len() < LISTED {
                f.changed.push((d.file, d.partner, d.bytes));
            }
        }
    }

    fn end(mut self) -> PairFiles {
        if let Some([a, b]) = self.runs.clone() {
            self.skip_to(0, a.end() + 1);
            self.skip_to(1, b.end() + 1);
        }
        self.files
    }
}
