//! A re-run's partition of the changed chunks only (fsim-sort --changed):
//! its kept records and components are those of the changed chunks, and
//! what it says it dropped (the trailer's figures, carried into every
//! report's `pruned:` line) is the whole tree's, patched from the earlier
//! run's dropped list ([`crate::formats::changed`] says why that is
//! exact). It refuses ([`Error::NeedsAll`]) whenever it cannot stand for a
//! partition of every record: no earlier list, another chunking, file
//! count, limit or site rule, other paths for the ids, templates (payloads
//! need every record of a file), feature methods (counts per file), or a
//! chunk dropped then and not now or the other way round (the analysis
//! would have to start over anyway). The caller then partitions every
//! record.

use super::FileBits;
use crate::error::{Error, Result};
use crate::formats::changed::{ChangedSet, DroppedChunk, DroppedList};
use crate::formats::{hex128, Params};
use std::path::Path;

/// What was dropped, as the trailer and the dropped list say it.
#[derive(Debug, Clone)]
pub(super) struct DroppedFigures {
    /// By hash.
    pub(super) chunks: Vec<DroppedChunk>,
    pub(super) pruned: FileBits,
}

impl DroppedFigures {
    /// A grouper's own figures, taken from it.
    pub(super) fn take(g: &mut super::Grouper) -> DroppedFigures {
        DroppedFigures {
            chunks: std::mem::take(&mut g.dropped),
            pruned: std::mem::take(&mut g.pruned),
        }
    }

    pub(super) fn records(&self) -> u64 {
        self.chunks.iter().map(|c| c.records).sum()
    }

    pub(super) fn digest(&self) -> u128 {
        self.chunks
            .iter()
            .fold(0u128, |s, c| s.wrapping_add(crate::formats::mix128(c.hash)))
    }

    pub(super) fn site_chunks(&self) -> u64 {
        self.chunks.iter().filter(|c| c.site).count() as u64
    }

    /// The dropped list to write, headed by `params`.
    pub(super) fn list(&self, params: Params) -> DroppedList {
        DroppedList {
            params,
            chunks: self.chunks.clone(),
            pruned: runs(&self.pruned),
        }
    }
}

/// The header of a dropped list: the chunking, the file count, the
/// limit, the site rule and the paths' identity, all a re-run must share.
pub(super) fn list_params(
    chunk: &Params,
    files: u64,
    limit: u64,
    site: u64,
    paths: u128,
) -> Params {
    chunk
        .clone()
        .with("files", files)
        .with("limit", limit)
        .with("site-names", site)
        .with("paths", hex128(paths))
}

/// Runs of set bits, as `[from, to]` ids.
fn runs(bits: &FileBits) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (w, &word) in bits.words().iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            let id = (w * 64) as u32 + rest.trailing_zeros();
            rest &= rest - 1;
            match out.last_mut() {
                Some(last) if last.1 + 1 == id => last.1 = id,
                _ => out.push((id, id)),
            }
        }
    }
    out
}

/// The earlier run's list and this run's changed set, as given.
pub(super) struct Earlier<'a> {
    pub(super) dropped: Option<&'a Path>,
    pub(super) changed: Option<&'a Path>,
}

/// This run's own figures from the changed chunks' records: the chunks it
/// dropped and the files holding one (only right for the changed files).
pub(super) struct Restricted<'a> {
    pub(super) params: &'a Params,
    pub(super) dropped: &'a [DroppedChunk],
    pub(super) pruned: &'a FileBits,
    pub(super) files: u64,
}

/// This run's own dropped figures and what it knows of its table.
pub(super) struct Mine<'a> {
    pub(super) figures: DroppedFigures,
    /// The dropped list's header (none when the table came from a pipe).
    pub(super) list: Option<Params>,
    /// Templates or a feature method: the `F` lines need every record of
    /// a file.
    pub(super) per_file_records: bool,
    pub(super) files: u64,
    pub(super) table: &'a str,
}

/// What the trailer says was dropped: this run's own figures, or, from
/// the changed chunks' records alone (`changed_only`), the earlier run's
/// patched ([`patch`]); the dropped list written (`--dropped-out`).
pub(super) fn settle(
    cfg: &super::Config,
    mine: Mine,
    changed_only: bool,
) -> Result<DroppedFigures> {
    let figures = if changed_only {
        let Some(params) = &mine.list else {
            return Err(Error::NeedsAll(format!(
                "{}: a re-run of the changed chunks alone needs the file table as a file, not a pipe",
                mine.table
            )));
        };
        if mine.per_file_records {
            return Err(Error::NeedsAll(
                "the changed chunks alone are not enough with templates or a feature method (sizes and counts need every record of a file)".into(),
            ));
        }
        let earlier = Earlier {
            dropped: cfg.previous_dropped.as_deref(),
            changed: cfg.changed.as_deref(),
        };
        let now = Restricted {
            params,
            dropped: &mine.figures.chunks,
            pruned: &mine.figures.pruned,
            files: mine.files,
        };
        patch(&earlier, &now)?
    } else {
        mine.figures
    };
    if let (Some(path), Some(params)) = (&cfg.dropped_out, mine.list) {
        let mut out = crate::io::Output::create(Some(path))?;
        out.write_all(&figures.list(params).to_bytes())?;
        out.finish()?;
    }
    Ok(figures)
}

/// The whole tree's figures: the earlier ones with the changed chunks'
/// and the changed files' taken from this run. `Err(NeedsAll)` when this
/// run cannot stand for a full one.
pub(super) fn patch(earlier: &Earlier, now: &Restricted) -> Result<DroppedFigures> {
    let whole =
        |why: String| Error::NeedsAll(format!("the changed chunks alone are not enough: {why}"));
    let (Some(dropped), Some(changed)) = (earlier.dropped, earlier.changed) else {
        return Err(whole(
            "give the earlier run's dropped list (--previous-dropped) and the changed set (--changed)".into(),
        ));
    };
    if !dropped.exists() {
        return Err(whole(format!("{} does not exist", dropped.display())));
    }
    let before = DroppedList::read(dropped)?;
    let set = ChangedSet::read(changed)?;
    if let Some(d) = now.params.difference(&before.params) {
        return Err(whole(format!("the earlier run differs: {d}")));
    }
    let in_set = |h: u128| set.hashes.binary_search(&h).is_ok();
    // The chunks of the set dropped then, and those dropped now: the same.
    let then: Vec<&DroppedChunk> = before.chunks.iter().filter(|c| in_set(c.hash)).collect();
    if then.len() != now.dropped.len()
        || then
            .iter()
            .zip(now.dropped)
            .any(|(a, b)| a.hash != b.hash || a.site != b.site)
    {
        return Err(whole(format!(
            "the chunks dropped changed ({} of the changed chunks dropped then, {} now)",
            then.len(),
            now.dropped.len()
        )));
    }
    if let Some(c) = now.dropped.iter().find(|c| !in_set(c.hash)) {
        return Err(Error::msg(format!(
            "{}: chunk {} was dropped but is not in the changed set: the sorted records are not those of this set",
            changed.display(),
            hex128(c.hash)
        )));
    }
    // Their records now, the others' as they were.
    let chunks = before
        .chunks
        .iter()
        .map(
            |c| match now.dropped.binary_search_by_key(&c.hash, |d| d.hash) {
                Ok(i) => now.dropped[i],
                Err(_) => *c,
            },
        )
        .collect();
    let mut pruned = FileBits::new(now.files);
    for &(a, b) in &before.pruned {
        if b as u64 >= now.files {
            return Err(Error::msg(format!(
                "{}: file id {b} is past the {} files of the table",
                dropped.display(),
                now.files
            )));
        }
        (a..=b).for_each(|f| pruned.set(f));
    }
    for &f in &set.files {
        if f as u64 >= now.files {
            return Err(Error::msg(format!(
                "{}: file id {f} is past the {} files of the table",
                changed.display(),
                now.files
            )));
        }
        pruned.put(f, now.pruned.get(f));
    }
    Ok(DroppedFigures { chunks, pruned })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(hash: u128, records: u64, site: bool) -> DroppedChunk {
        DroppedChunk {
            hash,
            records,
            site,
        }
    }

    /// The earlier list (files 0-3 and 7 hold a dropped chunk: 1 by the
    /// limit, 2 by the site rule) and a changed set (files 2 and 7, chunks
    /// 2 and 9), written to files.
    fn earlier(dir: &Path, params: &Params) -> (std::path::PathBuf, std::path::PathBuf) {
        let list = DroppedList {
            params: params.clone(),
            chunks: vec![chunk(1, 5, false), chunk(2, 3, true)],
            pruned: vec![(0, 3), (7, 7)],
        };
        let set = ChangedSet {
            params: Params::new(),
            files: vec![2, 7],
            hashes: vec![2, 9],
        };
        let (d, c) = (dir.join("dropped.tsv"), dir.join("changed.tsv"));
        std::fs::write(&d, list.to_bytes()).unwrap();
        std::fs::write(&c, set.to_bytes()).unwrap();
        (d, c)
    }

    #[test]
    fn a_rerun_patches_the_changed_chunks_and_files_into_the_earlier_figures() {
        let t = tempfile::tempdir().unwrap();
        let params = list_params(&Params::new(), 10, 1000, 10, 42);
        let (d, c) = earlier(t.path(), &params);
        let earlier = Earlier {
            dropped: Some(&d),
            changed: Some(&c),
        };
        // Now: chunk 2 has 4 records; file 2 holds it, file 7 no longer.
        let mut pruned = FileBits::new(10);
        pruned.set(2);
        let now = Restricted {
            params: &params,
            dropped: &[chunk(2, 4, true)],
            pruned: &pruned,
            files: 10,
        };
        let f = patch(&earlier, &now).unwrap();
        assert_eq!(f.chunks, vec![chunk(1, 5, false), chunk(2, 4, true)]);
        assert_eq!(runs(&f.pruned), vec![(0, 3)]);
        assert_eq!((f.records(), f.site_chunks()), (9, 1));
        let sum = crate::formats::mix128(1).wrapping_add(crate::formats::mix128(2));
        assert_eq!(f.digest(), sum);
        // Chunk 2 no longer dropped: the analysis would start over.
        let none = Restricted {
            dropped: &[],
            ..now
        };
        let e = patch(&earlier, &none).unwrap_err();
        assert!(matches!(e, Error::NeedsAll(_)), "{e}");
        assert!(
            e.to_string().contains(
                "the chunks dropped changed (1 of the changed chunks dropped then, 0 now)"
            ),
            "{e}"
        );
        // Another file count (ids shifted): refused, saying what differs.
        let other = list_params(&Params::new(), 11, 1000, 10, 42);
        let e = patch(
            &earlier,
            &Restricted {
                params: &other,
                files: 11,
                ..now
            },
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("files=11 here but files=10 before"),
            "{e}"
        );
        // No earlier list: refused too.
        let e = patch(
            &Earlier {
                dropped: None,
                changed: Some(&c),
            },
            &now,
        )
        .unwrap_err();
        assert!(matches!(e, Error::NeedsAll(_)), "{e}");
    }

    #[test]
    fn runs_join_consecutive_ids() {
        let mut b = FileBits::new(200);
        for f in [0, 1, 2, 63, 64, 65, 130, 199] {
            b.set(f);
        }
        assert_eq!(runs(&b), vec![(0, 2), (63, 65), (130, 130), (199, 199)]);
    }
}
