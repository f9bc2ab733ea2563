//! What a re-run's changed set is made of (`--changed-out`): the files
//! read again and their chunks' hashes, where the other files' ids went,
//! and the set written when the run ends (or removed, so that the next
//! stage sorts every record).

use super::write::Written;
use super::Stale;
use crate::chunking::reader::FileResult;
use crate::error::Result;
use crate::formats::changed::{Move, BEFORE_FILES, BEFORE_PATHS};
use crate::formats::{self, Digest, FileEntry, Params};
use crate::stages::reuse::{Before, ChangedHashes, Found};
use std::collections::VecDeque;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::mpsc::Receiver;

/// What a re-run read of the earlier run: its table's figures, the
/// count and digest of its records, the hashes of those not taken.
pub(super) struct Earlier {
    pub(super) files: Option<Before>,
    pub(super) records: Digest,
    pub(super) skipped: Option<ChangedHashes>,
}

/// Write the changed set (`--changed-out`) of a run that wrote `w`, with
/// the chunking parameters `chunk`.
pub(super) fn settle_changed(
    path: &Path,
    chunk: Params,
    w: &mut Written,
    earlier: Earlier,
) -> Result<()> {
    // The same records as before. With the same table but for its
    // times (files only touched, or nothing changed), the changed set
    // is empty: the stages after sort, partition and pack nothing, and
    // the analysis and verification take every pair from the earlier
    // run (its sorted records and partition are gone by then). With
    // another table (a file renamed in place, a document whose view
    // kept its text), every record is sorted again.
    let same = w.digest == earlier.records;
    let untouched = same
        && earlier
            .files
            .is_some_and(|b| b.untimed == Some(w.untimed.0));
    // Unmapped twice: the written set's ids may not map (an earlier run
    // in shards: no untouched set either), and the untouched set's may
    // not (more than 2^32 files).
    let changed = match w.changed.take().filter(|c| !c.unmapped) {
        Some(_) if untouched => Some(ChangedFiles::untouched(w.summary.files)),
        c => c.filter(|_| !same),
    }
    .filter(|c| !c.unmapped);
    // The set names the records it was written with (fsim-sort checks)
    // and the earlier table (the partition finds its dropped list).
    let mut params = chunk.merged(&formats::digest_params(&w.digest, "records"));
    let changed = match earlier.files {
        Some(Before {
            files: Some(n),
            paths: Some(p),
            ..
        }) => {
            params.set(BEFORE_FILES, n);
            params.set(BEFORE_PATHS, formats::hex128(p));
            changed
        }
        _ => None,
    };
    write_changed(path, &params, changed, earlier.skipped.filter(|_| !same))
}

/// Write the changed set (`--changed-out`): the files read again and the
/// chunks they hold now or held before (and those of the files gone),
/// and where the other files' ids went; or, when those chunks are more
/// than [`ChangedHashes::MAX`], or when the records are the earlier ones
/// under another table or the ids cannot be mapped (`written` none),
/// remove the file, so that the re-run sorts every record.
pub(super) fn write_changed(
    path: &Path,
    params: &Params,
    written: Option<ChangedFiles>,
    skipped: Option<ChangedHashes>,
) -> Result<()> {
    let set = written.and_then(|c| {
        let mut hashes = c.hashes;
        if let Some(s) = skipped {
            hashes.absorb(s);
        }
        Some(crate::formats::changed::ChangedSet {
            params: params.clone(),
            files: c.ids,
            moves: c.moves,
            hashes: hashes.finish()?,
        })
    });
    crate::stages::reuse::write_changed_set(path, set.as_ref())
}

/// The files of a changed set as the writer writes them: the ids of the
/// files not taken from the previous run and the hashes of their records;
/// where the ids of the others went (runs of a single previous source:
/// a shard's ids are walk positions, and several sources give no map).
#[derive(Default)]
pub(super) struct ChangedFiles {
    pub(super) ids: Vec<u32>,
    pub(super) hashes: ChangedHashes,
    pub(super) moves: Vec<Move>,
    pub(super) unmapped: bool,
    /// The earlier entries of the files read again, in walk order, and
    /// the next one not yet compared.
    pub(super) stale: Option<Receiver<Stale>>,
    pub(super) next_stale: Option<Stale>,
    /// The earlier entries of the members of an archive found only
    /// touched, which are written next, in this order.
    pub(super) members_left: VecDeque<Found>,
}

impl ChangedFiles {
    /// The earlier entry of file `f`, read again, when what it read is
    /// that entry but for its time (a file only touched): its records are
    /// the earlier ones, so it is moved, not changed. Not for a file whose
    /// view or link changed. An archive is touched when its members are
    /// the earlier ones too, one for one; they are then the next files
    /// written, each moved onto its earlier entry ([`Self::members_left`]).
    pub(super) fn touched(&mut self, f: &FileResult) -> Option<Found> {
        let rx = self.stale.as_ref()?;
        loop {
            if self.next_stale.is_none() {
                self.next_stale = rx.try_recv().ok();
            }
            match &self.next_stale {
                Some(s) if s.pos < f.pos => self.next_stale = None,
                Some(s) if s.pos == f.pos => break,
                _ => return None,
            }
        }
        let mut old = self.next_stale.take()?.found;
        let members = f.members.as_deref().map_or(&[][..], |m| &m.files[..]);
        let same = same_but_time(&old.entry, f)
            && old.members.len() == members.len()
            && old.members.iter().zip(members).all(|(o, m)| {
                m.members.is_none()
                    && o.entry.path == m.path.as_os_str().as_bytes()
                    && same_but_time(&o.entry, m)
            });
        if !same {
            return None;
        }
        self.members_left.extend(old.members.drain(..));
        Some(old)
    }

    /// The earlier entry of member `f` of an archive found only touched
    /// (written right after it, in its earlier order).
    pub(super) fn member_left(&mut self, f: &FileResult) -> Option<Found> {
        let m = self.members_left.pop_front()?;
        debug_assert_eq!(m.entry.path, f.path.as_os_str().as_bytes());
        Some(m)
    }

    /// File `f`, written with `id`, in the set: where its chunks' hashes
    /// go (a file read again), or its earlier id moved (a file reused,
    /// or read again and found only touched: its earlier entry returned,
    /// whose records are passed over).
    pub(super) fn file(
        &mut self,
        f: &FileResult,
        id: u32,
        shard: bool,
    ) -> (Option<&mut ChangedHashes>, Option<Found>) {
        let (from, touched) = match f.reused {
            Some(from) => ((from.source as usize, from.id), None),
            None => match self.member_left(f).or_else(|| self.touched(f)) {
                Some(old) => ((old.source, old.entry.id), Some(old)),
                None => {
                    self.ids.push(id);
                    return (Some(&mut self.hashes), None);
                }
            },
        };
        self.unmapped |= from.0 != 0 || shard;
        Move::push(&mut self.moves, from.1, id);
        (None, touched)
    }

    /// The changed set of a re-run whose `files` files are all the
    /// earlier run's, at the same ids: none read, none moved.
    pub(super) fn untouched(files: u64) -> ChangedFiles {
        let len = u32::try_from(files);
        ChangedFiles {
            moves: match len {
                Ok(len) if len > 0 => vec![Move {
                    from: 0,
                    to: 0,
                    len,
                }],
                _ => Vec::new(),
            },
            unmapped: len.is_err(),
            ..ChangedFiles::default()
        }
    }
}

/// Whether `f`, as read now, is earlier entry `e` but for its time: the
/// same size, content, type and view (a hard link's identity included).
pub(super) fn same_but_time(e: &FileEntry, f: &FileResult) -> bool {
    !f.content_pending
        && (e.size, e.content, e.ftype, e.view)
            == (f.info.size, f.info.content, f.info.ftype, f.view)
}
