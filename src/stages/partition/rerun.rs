//! A re-run's partition of the changed chunks only (fsim-sort --changed):
//! its kept records and components are those of the changed chunks, and
//! what it says it dropped (the trailer's figures, carried into every
//! report's `pruned:` line) is the whole tree's, patched from the earlier
//! run's dropped list ([`crate::formats::changed`] says why that is
//! exact). Files added or removed move the ids after them: the changed
//! set maps the earlier ids to this run's, and a file count that moved
//! the limit (half the files by default) is exact when no chunk held only
//! by unchanged files has a degree between the two limits, which the
//! list's degrees near the limit tell.
//!
//! It refuses ([`Error::NeedsAll`]) whenever it cannot stand for a
//! partition of every record: no earlier list, another chunking or site
//! rule, a list of another table than the one the changed set maps from,
//! templates (payloads need every record of a file), feature methods
//! (counts per file), a chunk dropped then and not now or the other way
//! round (the analysis would have to start over anyway), or a limit moved
//! below the degrees the list gives. The caller then partitions every
//! record.

use super::{FileBits, Limit};
use crate::error::{Error, Result};
use crate::formats::changed::{
    ChangedSet, DroppedChunk, DroppedList, BEFORE_FILES, BEFORE_PATHS, NEAR_FROM,
};
use crate::formats::{hex128, Params};
use std::path::Path;

/// What was dropped, as the trailer and the dropped list say it.
#[derive(Debug, Clone)]
pub(super) struct DroppedFigures {
    /// By hash.
    pub(super) chunks: Vec<DroppedChunk>,
    pub(super) pruned: FileBits,
    /// Every chunk held by at least `near_from` files, with its degree.
    pub(super) near: Vec<(u128, u64)>,
    pub(super) near_from: u64,
}

impl DroppedFigures {
    /// A grouper's own figures, taken from it.
    pub(super) fn take(g: &mut super::Grouper) -> DroppedFigures {
        DroppedFigures {
            chunks: std::mem::take(&mut g.dropped),
            pruned: std::mem::take(&mut g.pruned),
            near: std::mem::take(&mut g.near),
            near_from: g.near_from,
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
            params: params.with(NEAR_FROM, self.near_from),
            chunks: self.chunks.clone(),
            near: self.near.clone(),
            pruned: runs(&self.pruned),
        }
    }
}

/// The degree from which a partition lists its chunks' degrees: for the
/// default limit (a fraction of the files), an eighth below it, so that a
/// re-run with up to an eighth fewer files knows which chunks it drops
/// (more files raise the limit: the dropped chunks are listed). A fixed
/// limit does not move: only the dropped chunks are listed.
pub(super) fn near_from(rule: Limit, limit: u64) -> u64 {
    match rule {
        Limit::Absolute(_) => limit.saturating_add(1),
        Limit::Fraction { .. } => (limit - limit / 8).max(2),
    }
}

/// Keys of a dropped list's header that name its run, not its rules.
const RUN_KEYS: &[&str] = &["files", "paths", "limit", NEAR_FROM];

/// The header of a dropped list (without `near-from=`, which the figures
/// add): the chunking, the file table (its count, and which path has which
/// id: [`crate::formats::files::path_mix`]), the limit and the site rule.
pub(super) fn list_params(
    chunk: &Params,
    files: u64,
    paths: u128,
    limit: u64,
    site: u64,
) -> Params {
    chunk
        .clone()
        .with("files", files)
        .with("paths", hex128(paths))
        .with("limit", limit)
        .with("site-names", site)
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
/// dropped, their degrees near the limit and the files holding a dropped
/// one (only right for the changed files).
pub(super) struct Restricted<'a> {
    /// This run's dropped list header ([`list_params`]).
    pub(super) params: &'a Params,
    pub(super) figures: &'a DroppedFigures,
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
            figures: &mine.figures,
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
/// and the changed files' taken from this run, the others' ids mapped.
/// `Err(NeedsAll)` when this run cannot stand for a full one.
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
    if let Some(d) = without(now.params).difference(&without(&before.params)) {
        return Err(whole(format!("the earlier run differs: {d}")));
    }
    let (then_files, then_paths) = (before.params.get("files"), before.params.get("paths"));
    if then_files != set.params.get(BEFORE_FILES) || then_paths != set.params.get(BEFORE_PATHS) {
        return Err(whole(format!(
            "{} is the list of another file table (files={} paths={}) than the one {} maps ids from",
            dropped.display(),
            then_files.unwrap_or("?"),
            then_paths.unwrap_or("?"),
            changed.display()
        )));
    }
    let in_set = |h: u128| set.hashes.binary_search(&h).is_ok();
    same_limit_decisions(&before, now, &in_set).map_err(whole)?;
    let mine = now.figures;
    // The chunks of the set dropped then, and those dropped now: the same.
    let then: Vec<&DroppedChunk> = before.chunks.iter().filter(|c| in_set(c.hash)).collect();
    if then.len() != mine.chunks.len()
        || then
            .iter()
            .zip(&mine.chunks)
            .any(|(a, b)| a.hash != b.hash || a.site != b.site)
    {
        return Err(whole(format!(
            "the chunks dropped changed ({} of the changed chunks dropped then, {} now)",
            then.len(),
            mine.chunks.len()
        )));
    }
    if let Some(c) = mine.chunks.iter().find(|c| !in_set(c.hash)) {
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
            |c| match mine.chunks.binary_search_by_key(&c.hash, |d| d.hash) {
                Ok(i) => mine.chunks[i],
                Err(_) => *c,
            },
        )
        .collect();
    // Degrees: complete from the higher of the two bounds.
    let near_from = mine.near_from.max(before_near_from(&before));
    let mut near: Vec<(u128, u64)> = before
        .near
        .iter()
        .filter(|n| !in_set(n.0))
        .chain(&mine.near)
        .filter(|n| n.1 >= near_from)
        .copied()
        .collect();
    near.sort_unstable();
    let pruned = patch_pruned(&before, &set, now, (dropped, changed))?;
    Ok(DroppedFigures {
        chunks,
        pruned,
        near,
        near_from,
    })
}

/// `p` without the keys that name its run.
fn without(p: &Params) -> Params {
    Params(
        p.0.iter()
            .filter(|(k, _)| !RUN_KEYS.contains(&k.as_str()))
            .cloned()
            .collect(),
    )
}

/// The degree from which `list` gives every chunk's (none: no degrees).
fn before_near_from(list: &DroppedList) -> u64 {
    list.params.get_u64(NEAR_FROM).unwrap_or(u64::MAX)
}

/// Whether each chunk outside the set (held by unchanged files only, so
/// of the same degree) is dropped or kept as before, when the file count
/// moved the limit: no such chunk has a degree between the two limits.
fn same_limit_decisions(
    before: &DroppedList,
    now: &Restricted,
    in_set: &dyn Fn(u128) -> bool,
) -> std::result::Result<(), String> {
    let (then, limit) = (before.params.get_u64("limit"), now.params.get_u64("limit"));
    let (Some(then), Some(limit)) = (then, limit) else {
        return Err("the earlier dropped list names no limit".into());
    };
    if then == limit {
        return Ok(());
    }
    let (lo, hi) = (then.min(limit), then.max(limit));
    let from = before_near_from(before);
    if from > lo + 1 {
        return Err(format!(
            "the degree limit moved from {then} to {limit} files, and the earlier run listed degrees only from {from}"
        ));
    }
    match before
        .near
        .iter()
        .find(|&&(h, d)| d > lo && d <= hi && !in_set(h))
    {
        Some(&(h, d)) => Err(format!(
            "chunk {} held by {d} files is dropped at a limit of {hi} files and kept at {lo}",
            hex128(h)
        )),
        None => Ok(()),
    }
}

/// The files holding a dropped chunk: the earlier ones moved to this
/// run's ids (through the set's runs), the changed files' from this run.
fn patch_pruned(
    before: &DroppedList,
    set: &ChangedSet,
    now: &Restricted,
    (dropped, changed): (&Path, &Path),
) -> Result<FileBits> {
    let taken = set.moved_files() + set.files.len() as u64;
    let past = set
        .moves
        .last()
        .map_or(0, |m| u64::from(m.to) + u64::from(m.len));
    if taken != now.files || past > now.files {
        return Err(Error::msg(format!(
            "{}: it names {taken} files, the table has {}: the changed set of another run",
            changed.display(),
            now.files
        )));
    }
    if let Some(&(_, b)) = before.pruned.last() {
        let then = before.params.get_u64("files").unwrap_or(0);
        if u64::from(b) >= then {
            return Err(Error::msg(format!(
                "{}: file id {b} is past the {then} files of its table",
                dropped.display()
            )));
        }
    }
    let mut pruned = FileBits::new(now.files);
    let mut moves = set.moves.iter().peekable();
    for &(a, b) in &before.pruned {
        for f in a..=b {
            while moves
                .next_if(|m| u64::from(m.from) + u64::from(m.len) <= u64::from(f))
                .is_some()
            {}
            match moves.peek() {
                Some(m) if m.from <= f => pruned.set(m.to + (f - m.from)),
                _ => {}
            }
        }
    }
    for &f in &set.files {
        if f as u64 >= now.files {
            return Err(Error::msg(format!(
                "{}: file id {f} is past the {} files of the table",
                changed.display(),
                now.files
            )));
        }
        pruned.put(f, now.figures.pruned.get(f));
    }
    Ok(pruned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::changed::Move;

    fn chunk(hash: u128, records: u64, site: bool) -> DroppedChunk {
        DroppedChunk {
            hash,
            records,
            site,
        }
    }

    fn figures(chunks: Vec<DroppedChunk>, pruned: &[u32], files: u64) -> DroppedFigures {
        let mut bits = FileBits::new(files);
        pruned.iter().for_each(|&f| bits.set(f));
        DroppedFigures {
            chunks,
            pruned: bits,
            near: vec![],
            near_from: 900,
        }
    }

    /// The earlier list of 10 files (files 0-3 and 7 hold a dropped chunk:
    /// 1 by the limit, 2 by the site rule; chunk 4 is held by 950 files)
    /// and a changed set (files 2 and 7 re-chunked, chunks 2 and 9), with
    /// `moves` for the others, written to files.
    fn earlier(
        dir: &Path,
        limit: u64,
        moves: Vec<Move>,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let list = DroppedList {
            params: list_params(&Params::new(), 10, 0xab, limit, 10).with(NEAR_FROM, 900),
            chunks: vec![chunk(1, 5, false), chunk(2, 3, true)],
            near: vec![(1, 1500), (4, 950)],
            pruned: vec![(0, 3), (7, 7)],
        };
        let set = ChangedSet {
            params: Params::new()
                .with(BEFORE_FILES, 10)
                .with(BEFORE_PATHS, hex128(0xab)),
            files: vec![2, 7],
            moves,
            hashes: vec![2, 9],
        };
        let (d, c) = (dir.join("dropped.tsv"), dir.join("changed.tsv"));
        std::fs::write(&d, list.to_bytes()).unwrap();
        std::fs::write(&c, set.to_bytes()).unwrap();
        (d, c)
    }

    fn same_ids() -> Vec<Move> {
        vec![
            Move {
                from: 0,
                to: 0,
                len: 2,
            },
            Move {
                from: 3,
                to: 3,
                len: 4,
            },
            Move {
                from: 8,
                to: 8,
                len: 2,
            },
        ]
    }

    #[test]
    fn a_rerun_patches_the_changed_chunks_and_files_into_the_earlier_figures() {
        let t = tempfile::tempdir().unwrap();
        let (d, c) = earlier(t.path(), 1000, same_ids());
        let earlier = Earlier {
            dropped: Some(&d),
            changed: Some(&c),
        };
        let params = list_params(&Params::new(), 10, 0xcd, 1000, 10);
        // Now: chunk 2 has 4 records; file 2 holds it, file 7 no longer.
        let mine = figures(vec![chunk(2, 4, true)], &[2], 10);
        let now = Restricted {
            params: &params,
            figures: &mine,
            files: 10,
        };
        let f = patch(&earlier, &now).unwrap();
        assert_eq!(f.chunks, vec![chunk(1, 5, false), chunk(2, 4, true)]);
        assert_eq!(runs(&f.pruned), vec![(0, 3)]);
        assert_eq!((f.records(), f.site_chunks()), (9, 1));
        assert_eq!(
            (f.near_from, f.near.clone()),
            (900, vec![(1, 1500), (4, 950)])
        );
        let sum = crate::formats::mix128(1).wrapping_add(crate::formats::mix128(2));
        assert_eq!(f.digest(), sum);
        // Chunk 2 no longer dropped: the analysis would start over.
        let none = figures(vec![], &[], 10);
        let e = patch(
            &earlier,
            &Restricted {
                figures: &none,
                ..now
            },
        )
        .unwrap_err();
        assert!(matches!(e, Error::NeedsAll(_)), "{e}");
        assert!(
            e.to_string().contains(
                "the chunks dropped changed (1 of the changed chunks dropped then, 0 now)"
            ),
            "{e}"
        );
        // Another site rule: refused, saying what differs.
        let other = list_params(&Params::new(), 10, 0xcd, 1000, 3);
        let e = patch(
            &earlier,
            &Restricted {
                params: &other,
                ..now
            },
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("site-names=3 here but site-names=10 before"),
            "{e}"
        );
        // A set that maps from another table than the list's: refused.
        let list = DroppedList::read(&d).unwrap();
        let mut o = list.clone();
        o.params.set("paths", hex128(0xef));
        std::fs::write(&d, o.to_bytes()).unwrap();
        let e = patch(&earlier, &now).unwrap_err();
        assert!(matches!(e, Error::NeedsAll(_)), "{e}");
        assert!(
            e.to_string()
                .contains("the list of another file table (files=10 paths="),
            "{e}"
        );
        std::fs::write(&d, list.to_bytes()).unwrap();
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
    fn files_added_and_removed_move_the_earlier_files_to_their_ids_now() {
        // File 1 removed, a file added after file 5 (id 5 now), file 9
        // removed: 9 files now, 0 and 2-8 then are 0 and 1-4, 6-8 now.
        let t = tempfile::tempdir().unwrap();
        let moves = vec![
            Move {
                from: 0,
                to: 0,
                len: 1,
            },
            Move {
                from: 3,
                to: 2,
                len: 3,
            },
            Move {
                from: 8,
                to: 7,
                len: 1,
            },
        ];
        let (d, c) = earlier(t.path(), 1000, moves);
        // Re-chunked now: files 1 (2 then), 5 (added) and 6 (7 then).
        let mut set = ChangedSet::read(&c).unwrap();
        set.files = vec![1, 5, 6];
        std::fs::write(&c, set.to_bytes()).unwrap();
        let params = list_params(&Params::new(), 8, 0xcd, 1000, 10);
        let mine = figures(vec![chunk(2, 3, true)], &[1, 5], 8);
        let now = Restricted {
            params: &params,
            figures: &mine,
            files: 8,
        };
        let earlier = Earlier {
            dropped: Some(&d),
            changed: Some(&c),
        };
        let f = patch(&earlier, &now).unwrap();
        // Then 0, 3 (moved to 0, 2), 1 gone, 2 and 7 re-chunked: 1 and 5 now.
        assert_eq!(runs(&f.pruned), vec![(0, 2), (5, 5)]);
        // A set that does not cover the table is another run's.
        let e = patch(&earlier, &Restricted { files: 9, ..now }).unwrap_err();
        assert!(
            e.to_string().contains("it names 8 files, the table has 9"),
            "{e}"
        );
    }

    #[test]
    fn another_limit_is_exact_unless_a_chunk_outside_the_set_lies_between() {
        let t = tempfile::tempdir().unwrap();
        let (d, c) = earlier(t.path(), 1000, same_ids());
        let earlier = Earlier {
            dropped: Some(&d),
            changed: Some(&c),
        };
        let mine = figures(vec![chunk(2, 3, true)], &[2, 7], 10);
        let at = |limit: u64| list_params(&Params::new(), 10, 0xcd, limit, 10);
        let patch_at = |limit: u64| {
            let params = at(limit);
            let now = Restricted {
                params: &params,
                figures: &mine,
                files: 10,
            };
            patch(&earlier, &now)
        };
        // 1000 -> 1200 or 960: no listed degree in between.
        assert!(patch_at(1200).is_ok());
        assert!(patch_at(960).is_ok());
        // 1000 -> 1600: chunk 1 (1500 files) would be kept now.
        let e = patch_at(1600).unwrap_err();
        assert!(matches!(e, Error::NeedsAll(_)), "{e}");
        assert!(
            e.to_string().contains(
                "held by 1500 files is dropped at a limit of 1600 files and kept at 1000"
            ),
            "{e}"
        );
        // 1000 -> 940: chunk 4 (950 files) would be dropped now.
        let e = patch_at(940).unwrap_err();
        assert!(e.to_string().contains("held by 950 files"), "{e}");
        // 1000 -> 800: below the degrees listed (from 900).
        let e = patch_at(800).unwrap_err();
        assert!(
            e.to_string().contains("listed degrees only from 900"),
            "{e}"
        );
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
