//! The file lists' pass: the files of the first [`DETAILED`] pairs, each
//! with its best partner in the other folder, which gives the changed
//! files of their lists ([`PairFiles`], made by relative path) the bytes in
//! common with the file at their path.

use super::records::{Combiner, Detail, Merged};
use super::table::{contains, Dir};
use super::{FolderPair, FolderReport, Folders, PairFiles, DETAILED};
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
        let mut lists: Vec<Lister> = r.pairs[..n].iter_mut().map(Lister::new).collect();
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
    files: PairFiles,
}

impl Lister {
    fn new(p: &mut FolderPair) -> Lister {
        Lister {
            da: p.da,
            files: p.files.take().map(|f| *f).unwrap_or_default(),
        }
    }

    /// File `d.file`'s best partner `d`: the bytes in common of a changed
    /// file whose best partner is the file at its path.
    fn best(&mut self, dirs: &[Dir], dir_of: &[u32], d: Detail) {
        if d.identical || !contains(dirs, self.da, dir_of[d.file as usize]) {
            return;
        }
        let changed = self.files.changed.iter_mut();
        if let Some(c) = changed
            .into_iter()
            .find(|c| (c.0, c.1) == (d.file, d.partner))
        {
            c.2 = Some(d.bytes);
        }
    }

    fn end(self) -> PairFiles {
        self.files
    }
}
