//! What a re-run needs to sort, partition and pack only what changed
//! (docs/pipeline.md, "Re-runs"): the chunks the changed files hold
//! ([`ChangedSet`], `fsim-chunk --changed-out`) and the chunks the earlier
//! partition dropped ([`DroppedList`], `fsim-partition --dropped-out`).
//!
//! Why these two suffice: a pair with a changed file shares only chunks
//! that file holds now, and each of those chunks is in the changed set
//! with every record of it (every file that holds it), so the pairs and
//! figures found from those records alone are the ones found from all
//! records. The chunks outside the set are held by unchanged files only:
//! their degree, and so whether the partition drops them, is what it was
//! at the same limit, which the dropped list records (and, for another
//! limit, the degrees near it); the partition's figures of dropped chunks
//! (what the report's `pruned:` line says) are the earlier ones patched
//! with the chunks of the set. Files added or removed move the ids of the
//! files after them: the set says where each unchanged file's id went
//! ([`Move`]), so that the earlier list's files are found again.

use crate::error::{Error, Result};
use crate::formats::lines::{open_input, Kind, Line, LineReader, Params};
use crate::formats::numbers::{parse_hex128, parse_u64, split_fields, write_hex128, write_u64};
use std::path::Path;

pub use crate::formats::lines::CHANGED_ONLY;

/// The chunks of the files changed since an earlier run: the records the
/// re-chunked files hold now and held then (and the removed files'), which
/// files (this run's ids) were read again, and where the others' ids went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangedSet {
    /// The chunking parameters of the run, its records (`records=`,
    /// `digest=`) and the earlier table (`before-files=`, `before-paths=`).
    pub params: Params,
    /// Ids (this run's) of the files not taken from the earlier run.
    pub files: Vec<u32>,
    /// The files taken from the earlier run: runs of ids, ascending.
    pub moves: Vec<Move>,
    /// Distinct chunk hashes, ascending.
    pub hashes: Vec<u128>,
}

/// `len` files taken from the earlier run, whose ids there were `from..`
/// and are `to..` now (ids are walk positions: a file added or removed
/// before them moves them all by one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    pub from: u32,
    pub to: u32,
    pub len: u32,
}

/// Header keys of a changed set: the earlier run's file count and which
/// path had which id ([`crate::formats::files::path_mix`]), which its
/// dropped list names too (`files=`, `paths=`).
pub const BEFORE_FILES: &str = "before-files";
pub const BEFORE_PATHS: &str = "before-paths";

impl Move {
    /// Runs of (earlier id, id now) pairs given in order of both.
    pub fn push(runs: &mut Vec<Move>, from: u32, to: u32) {
        match runs.last_mut() {
            Some(m)
                if u64::from(m.from) + u64::from(m.len) == u64::from(from)
                    && u64::from(m.to) + u64::from(m.len) == u64::from(to) =>
            {
                m.len += 1
            }
            _ => runs.push(Move { from, to, len: 1 }),
        }
    }
}

impl ChangedSet {
    /// The file's text: header, `F<TAB>id` lines, `C<TAB>hash` lines,
    /// trailer with both counts.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            16 + self.files.len() * 12 + self.moves.len() * 30 + self.hashes.len() * 35,
        );
        crate::formats::write_header(Kind::Changed, &self.params, &mut out);
        for &f in &self.files {
            out.extend_from_slice(b"F\t");
            write_u64(f as u64, &mut out);
            out.push(b'\n');
        }
        for m in &self.moves {
            out.extend_from_slice(b"M\t");
            for (i, v) in [m.from, m.to, m.len].into_iter().enumerate() {
                if i > 0 {
                    out.push(b'\t');
                }
                write_u64(v as u64, &mut out);
            }
            out.push(b'\n');
        }
        for &h in &self.hashes {
            out.extend_from_slice(b"C\t");
            write_hex128(h, &mut out);
            out.push(b'\n');
        }
        let t = Params::new()
            .with("files", self.files.len().to_string())
            .with("moves", self.moves.len().to_string())
            .with("chunks", self.hashes.len().to_string());
        crate::formats::write_trailer(Kind::Changed, &t, &mut out);
        out
    }

    /// Read and check a changed set (ids, runs and hashes ascending, the
    /// trailer's counts).
    pub fn read(path: &Path) -> Result<ChangedSet> {
        let mut set = ChangedSet::default();
        let (params, trailer) = read_lines(path, Kind::Changed, |d, err| match d {
            [b'F', b'\t', id @ ..] => {
                let id = parse_u64(id)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| err("expected F<TAB>file id".into()))?;
                if set.files.last().is_some_and(|&l| l >= id)
                    || !set.moves.is_empty()
                    || !set.hashes.is_empty()
                {
                    return Err(err(
                        "file ids must increase and come before the runs and chunks".into(),
                    ));
                }
                set.files.push(id);
                Ok(())
            }
            [b'M', b'\t', rest @ ..] => {
                let m = split_fields::<3>(rest)
                    .and_then(|f| {
                        let [from, to, len] =
                            f.map(|v| parse_u64(v).and_then(|v| u32::try_from(v).ok()));
                        Some(Move {
                            from: from?,
                            to: to?,
                            len: len?,
                        })
                        .filter(|m| m.len > 0)
                    })
                    .ok_or_else(|| err("expected M<TAB>earlier id<TAB>id<TAB>files".into()))?;
                let after = |l: &Move| {
                    u64::from(l.from) + u64::from(l.len) <= u64::from(m.from)
                        && u64::from(l.to) + u64::from(l.len) <= u64::from(m.to)
                };
                if !set.moves.last().is_none_or(after) || !set.hashes.is_empty() {
                    return Err(err(
                        "runs of ids must increase and come before the chunks".into()
                    ));
                }
                set.moves.push(m);
                Ok(())
            }
            [b'C', b'\t', h @ ..] => {
                let h =
                    parse_hex128(h).ok_or_else(|| err("expected C<TAB>32 hex digits".into()))?;
                if set.hashes.last().is_some_and(|&l| l >= h) {
                    return Err(err("chunk hashes must increase".into()));
                }
                set.hashes.push(h);
                Ok(())
            }
            _ => Err(err(
                "expected F<TAB>file id, M<TAB>run of ids or C<TAB>chunk hash".into(),
            )),
        })?;
        set.params = params;
        check_count(path, &trailer, "files", set.files.len())?;
        check_count(path, &trailer, "moves", set.moves.len())?;
        check_count(path, &trailer, "chunks", set.hashes.len())?;
        Ok(set)
    }

    /// This run's id of the file whose id was `from` in the earlier run,
    /// if it was taken from there.
    pub fn id_now(&self, from: u32) -> Option<u32> {
        let i = self
            .moves
            .partition_point(|m| m.from <= from)
            .checked_sub(1)?;
        let m = self.moves[i];
        (from - m.from < m.len).then(|| m.to + (from - m.from))
    }

    /// Files taken from the earlier run.
    pub fn moved_files(&self) -> u64 {
        self.moves.iter().map(|m| u64::from(m.len)).sum()
    }
}

/// A chunk the partition dropped: its records and whether a generated
/// site's template rule dropped it (else the degree limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DroppedChunk {
    pub hash: u128,
    pub records: u64,
    pub site: bool,
}

/// Every chunk a partition dropped and the files that hold one (as runs
/// of ids), with what they depend on: the chunking, the limit, the site
/// rule, and the file table (its file count, and which path has which id,
/// which a re-run's changed set names to map the ids); and the
/// degree of every chunk held by at least `near-from=` files, so that a
/// re-run whose file count moved the limit knows which chunks it drops.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DroppedList {
    /// Chunking parameters, `files=`, `paths=`, `limit=`, `site-names=`,
    /// `near-from=`.
    pub params: Params,
    /// By hash, ascending.
    pub chunks: Vec<DroppedChunk>,
    /// (hash, degree) of every chunk, kept or dropped, held by at least
    /// `near-from=` files; by hash, ascending.
    pub near: Vec<(u128, u64)>,
    /// Files holding a dropped chunk: runs `[from, to]` of ids, ascending.
    pub pruned: Vec<(u32, u32)>,
}

/// Header key of a dropped list: the degree from which it lists chunks.
pub const NEAR_FROM: &str = "near-from";

impl DroppedList {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            64 + (self.chunks.len() + self.near.len()) * 48 + self.pruned.len() * 24,
        );
        crate::formats::write_header(Kind::Dropped, &self.params, &mut out);
        for c in &self.chunks {
            out.extend_from_slice(b"D\t");
            write_hex128(c.hash, &mut out);
            out.push(b'\t');
            write_u64(c.records, &mut out);
            out.extend_from_slice(if c.site { b"\t1\n" } else { b"\t0\n" });
        }
        for &(h, degree) in &self.near {
            out.extend_from_slice(b"N\t");
            write_hex128(h, &mut out);
            out.push(b'\t');
            write_u64(degree, &mut out);
            out.push(b'\n');
        }
        for &(a, b) in &self.pruned {
            out.extend_from_slice(b"P\t");
            write_u64(a as u64, &mut out);
            out.push(b'\t');
            write_u64(b as u64, &mut out);
            out.push(b'\n');
        }
        let t = Params::new()
            .with("chunks", self.chunks.len().to_string())
            .with("near", self.near.len().to_string())
            .with("runs", self.pruned.len().to_string());
        crate::formats::write_trailer(Kind::Dropped, &t, &mut out);
        out
    }

    pub fn read(path: &Path) -> Result<DroppedList> {
        let mut list = DroppedList::default();
        let (params, trailer) = read_lines(path, Kind::Dropped, |d, err| match d {
            [b'D', b'\t', rest @ ..] => {
                let c = split_fields::<3>(rest)
                    .and_then(|[h, r, s]| {
                        Some(DroppedChunk {
                            hash: parse_hex128(h)?,
                            records: parse_u64(r)?,
                            site: match s {
                                b"0" => false,
                                b"1" => true,
                                _ => return None,
                            },
                        })
                    })
                    .ok_or_else(|| err("expected D<TAB>hash<TAB>records<TAB>0 or 1".into()))?;
                if list.chunks.last().is_some_and(|l| l.hash >= c.hash)
                    || !list.near.is_empty()
                    || !list.pruned.is_empty()
                {
                    return Err(err(
                        "dropped chunks must increase and come before the degrees and files".into(),
                    ));
                }
                list.chunks.push(c);
                Ok(())
            }
            [b'N', b'\t', rest @ ..] => {
                let n = split_fields::<2>(rest)
                    .and_then(|[h, d]| Some((parse_hex128(h)?, parse_u64(d)?)))
                    .ok_or_else(|| err("expected N<TAB>hash<TAB>degree".into()))?;
                if list.near.last().is_some_and(|l| l.0 >= n.0) || !list.pruned.is_empty() {
                    return Err(err(
                        "chunk degrees must increase by hash and come before the files".into(),
                    ));
                }
                list.near.push(n);
                Ok(())
            }
            [b'P', b'\t', rest @ ..] => {
                let (a, b) = split_fields::<2>(rest)
                    .and_then(|[a, b]| {
                        let a = u32::try_from(parse_u64(a)?).ok()?;
                        let b = u32::try_from(parse_u64(b)?).ok()?;
                        (a <= b).then_some((a, b))
                    })
                    .ok_or_else(|| err("expected P<TAB>first id<TAB>last id".into()))?;
                if list.pruned.last().is_some_and(|l| l.1 >= a) {
                    return Err(err("runs of file ids must increase".into()));
                }
                list.pruned.push((a, b));
                Ok(())
            }
            _ => Err(err(
                "expected D<TAB>dropped chunk, N<TAB>chunk degree or P<TAB>run of file ids".into(),
            )),
        })?;
        list.params = params;
        check_count(path, &trailer, "chunks", list.chunks.len())?;
        check_count(path, &trailer, "near", list.near.len())?;
        check_count(path, &trailer, "runs", list.pruned.len())?;
        Ok(list)
    }

    /// Files holding a dropped chunk.
    pub fn pruned_files(&self) -> u64 {
        self.pruned.iter().map(|&(a, b)| (b - a) as u64 + 1).sum()
    }
}

/// Read `path`: its header, then each data line into `each` (given the
/// line and a maker of errors at it), then its trailer; the header's and
/// the trailer's parameters. A data line before the header, a second
/// header, or a file without its trailer (truncated) is refused.
fn read_lines(
    path: &Path,
    kind: Kind,
    mut each: impl FnMut(&[u8], &dyn Fn(String) -> Error) -> Result<()>,
) -> Result<(Params, Params)> {
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let (mut header, mut trailer) = (None, None);
    while let Some((line, no)) = r.next_numbered()? {
        let err = |m: String| Error::input(&name, no, m);
        if trailer.is_some() {
            return Err(err(format!(
                "a line after the '#end {}' trailer",
                kind.as_str()
            )));
        }
        match line {
            Line::Header(k, _) | Line::Trailer(k, _) if k != kind => {
                return Err(err(format!(
                    "expected a {} file (written by {}), not {}",
                    kind.as_str(),
                    kind.producer(),
                    k.as_str()
                )))
            }
            Line::Header(_, p) if header.is_none() => header = Some(p),
            Line::Trailer(_, p) => trailer = Some(p),
            Line::Data(d) if header.is_some() => each(d, &err)?,
            Line::Comment(_) => {}
            _ => {
                return Err(err(format!(
                    "expected one '#fsim {} v1' header first (written by {})",
                    kind.as_str(),
                    kind.producer()
                )))
            }
        }
    }
    match (header, trailer) {
        (Some(h), Some(t)) => Ok((h, t)),
        _ => Err(Error::input(
            &name,
            r.line_number(),
            format!("no '#end {}' trailer: the file is truncated", kind.as_str()),
        )),
    }
}

/// The trailer's count `key` against the lines read; a key an earlier
/// writer did not write counts none (its header then differs, and a
/// re-run refuses the file for that).
fn check_count(path: &Path, trailer: &Params, key: &str, n: usize) -> Result<()> {
    match trailer.get(key).map(|v| v.parse::<usize>().ok()) {
        Some(Some(t)) if t == n => Ok(()),
        None if n == 0 => Ok(()),
        t => Err(Error::msg(format!(
            "{}: the trailer says {key}={} but the file holds {n}: a damaged file",
            path.display(),
            t.flatten().map_or("?".into(), |t| t.to_string())
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::numbers::hex128;

    fn roundtrip_file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), bytes).unwrap();
        f
    }

    #[test]
    fn a_changed_set_reads_back_as_written() {
        let set = ChangedSet {
            params: Params::new().with("method", "tttd"),
            files: vec![3, 9],
            moves: vec![
                Move {
                    from: 0,
                    to: 0,
                    len: 3,
                },
                Move {
                    from: 5,
                    to: 4,
                    len: 5,
                },
            ],
            hashes: vec![1, 0xffff_0000_0000_0000_0000_0000_0000_0001],
        };
        let f = roundtrip_file(&set.to_bytes());
        let back = ChangedSet::read(f.path()).unwrap();
        assert_eq!(back, set);
        // Files 3 and 4 were removed (ids 3, 4 then), file 3 is new, file 9
        // was re-chunked.
        let now: Vec<Option<u32>> = (0..11).map(|f| back.id_now(f)).collect();
        let some = |v: &[u32]| v.iter().map(|&v| Some(v)).collect::<Vec<_>>();
        assert_eq!(now[..3], some(&[0, 1, 2])[..]);
        assert_eq!(now[3..5], [None, None]);
        assert_eq!(now[5..10], some(&[4, 5, 6, 7, 8])[..]);
        assert_eq!(now[10], None);
        assert_eq!(back.moved_files(), 8);
        let mut runs = Vec::new();
        for (a, b) in [(0, 0), (1, 1), (2, 2), (5, 4), (6, 5), (9, 7)] {
            Move::push(&mut runs, a, b);
        }
        assert_eq!(runs.len(), 3);
        assert_eq!(
            runs[1],
            Move {
                from: 5,
                to: 4,
                len: 2
            }
        );
    }

    #[test]
    fn a_truncated_or_unordered_changed_set_is_refused() {
        let set = ChangedSet {
            params: Params::new().with("method", "tttd"),
            files: vec![3],
            moves: vec![],
            hashes: vec![5, 7],
        };
        let bytes = set.to_bytes();
        // Cut inside its last line, or after the line before it.
        let f = roundtrip_file(&bytes[..bytes.len() - 20]);
        let e = ChangedSet::read(f.path()).unwrap_err().to_string();
        assert!(e.contains(":5: last line has no newline"), "{e}");
        let before_trailer = bytes[..bytes.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap();
        let f = roundtrip_file(&bytes[..=before_trailer]);
        let e = ChangedSet::read(f.path()).unwrap_err().to_string();
        assert!(e.contains("no '#end changed' trailer"), "{e}");
        let text = String::from_utf8(bytes).unwrap();
        let swapped = text
            .replace(&hex128(5), "x")
            .replace(&hex128(7), &hex128(5))
            .replace('x', &hex128(7));
        let f = roundtrip_file(swapped.as_bytes());
        let e = ChangedSet::read(f.path()).unwrap_err().to_string();
        assert!(e.contains(":4: chunk hashes must increase"), "{e}");
    }

    #[test]
    fn a_dropped_list_reads_back_and_counts_its_files() {
        let list = DroppedList {
            params: Params::new().with("files", 10),
            chunks: vec![
                DroppedChunk {
                    hash: 2,
                    records: 5,
                    site: false,
                },
                DroppedChunk {
                    hash: 8,
                    records: 3,
                    site: true,
                },
            ],
            near: vec![(2, 900), (5, 880)],
            pruned: vec![(0, 3), (7, 7)],
        };
        let f = roundtrip_file(&list.to_bytes());
        let back = DroppedList::read(f.path()).unwrap();
        assert_eq!(back, list);
        // An earlier writer's list (no N lines, no near= count) reads too.
        let text = String::from_utf8(list.to_bytes()).unwrap();
        let old: String = text
            .lines()
            .filter(|l| !l.starts_with("N\t"))
            .map(|l| l.replace("\tnear=2", "") + "\n")
            .collect();
        let f2 = roundtrip_file(old.as_bytes());
        assert_eq!(DroppedList::read(f2.path()).unwrap().near, vec![]);
        assert_eq!(back.pruned_files(), 5);
        let e = ChangedSet::read(f.path()).unwrap_err().to_string();
        assert!(e.contains("expected a changed file"), "{e}");
    }
}
