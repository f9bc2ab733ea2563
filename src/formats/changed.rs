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
//! (same file count, same limit), which the dropped list records; the
//! partition's figures of dropped chunks (what the report's `pruned:`
//! line says) are the earlier ones patched with the chunks of the set.

use crate::error::{Error, Result};
use crate::formats::lines::{open_input, Kind, Line, LineReader, Params};
use crate::formats::numbers::{parse_hex128, parse_u64, split_fields, write_hex128, write_u64};
use std::path::Path;

pub use crate::formats::lines::CHANGED_ONLY;

/// The chunks of the files changed since an earlier run: the records the
/// re-chunked files hold now and held then (and the removed files'), and
/// which files (this run's ids) were read again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangedSet {
    /// The chunking parameters of the run.
    pub params: Params,
    /// Ids (this run's) of the files not taken from the earlier run.
    pub files: Vec<u32>,
    /// Distinct chunk hashes, ascending.
    pub hashes: Vec<u128>,
}

impl ChangedSet {
    /// The file's text: header, `F<TAB>id` lines, `C<TAB>hash` lines,
    /// trailer with both counts.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.files.len() * 12 + self.hashes.len() * 35);
        crate::formats::write_header(Kind::Changed, &self.params, &mut out);
        for &f in &self.files {
            out.extend_from_slice(b"F\t");
            write_u64(f as u64, &mut out);
            out.push(b'\n');
        }
        for &h in &self.hashes {
            out.extend_from_slice(b"C\t");
            write_hex128(h, &mut out);
            out.push(b'\n');
        }
        let t = Params::new()
            .with("files", self.files.len().to_string())
            .with("chunks", self.hashes.len().to_string());
        crate::formats::write_trailer(Kind::Changed, &t, &mut out);
        out
    }

    /// Read and check a changed set (ids and hashes ascending, the
    /// trailer's counts).
    pub fn read(path: &Path) -> Result<ChangedSet> {
        let mut set = ChangedSet::default();
        let (params, trailer) = read_lines(path, Kind::Changed, |d, err| match d {
            [b'F', b'\t', id @ ..] => {
                let id = parse_u64(id)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| err("expected F<TAB>file id".into()))?;
                if set.files.last().is_some_and(|&l| l >= id) || !set.hashes.is_empty() {
                    return Err(err(
                        "file ids must increase and come before the chunks".into()
                    ));
                }
                set.files.push(id);
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
            _ => Err(err("expected F<TAB>file id or C<TAB>chunk hash".into())),
        })?;
        set.params = params;
        check_count(path, &trailer, "files", set.files.len())?;
        check_count(path, &trailer, "chunks", set.hashes.len())?;
        Ok(set)
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
/// of ids), with what they depend on: the file count, the limit, the site
/// rule and the file table's paths (a re-run's ids are the earlier ones
/// only when the paths are the same, in the same order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DroppedList {
    /// Chunking parameters, `files=`, `limit=`, `site-names=`, `paths=`.
    pub params: Params,
    /// By hash, ascending.
    pub chunks: Vec<DroppedChunk>,
    /// Files holding a dropped chunk: runs `[from, to]` of ids, ascending.
    pub pruned: Vec<(u32, u32)>,
}

impl DroppedList {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.chunks.len() * 48 + self.pruned.len() * 24);
        crate::formats::write_header(Kind::Dropped, &self.params, &mut out);
        for c in &self.chunks {
            out.extend_from_slice(b"D\t");
            write_hex128(c.hash, &mut out);
            out.push(b'\t');
            write_u64(c.records, &mut out);
            out.extend_from_slice(if c.site { b"\t1\n" } else { b"\t0\n" });
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
                if list.chunks.last().is_some_and(|l| l.hash >= c.hash) || !list.pruned.is_empty() {
                    return Err(err(
                        "dropped chunks must increase and come before the files".into(),
                    ));
                }
                list.chunks.push(c);
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
                "expected D<TAB>dropped chunk or P<TAB>run of file ids".into()
            )),
        })?;
        list.params = params;
        check_count(path, &trailer, "chunks", list.chunks.len())?;
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

fn check_count(path: &Path, trailer: &Params, key: &str, n: usize) -> Result<()> {
    match trailer.get(key).and_then(|v| v.parse::<usize>().ok()) {
        Some(t) if t == n => Ok(()),
        t => Err(Error::msg(format!(
            "{}: the trailer says {key}={} but the file holds {n}: a damaged file",
            path.display(),
            t.map_or("?".into(), |t| t.to_string())
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
            hashes: vec![1, 0xffff_0000_0000_0000_0000_0000_0000_0001],
        };
        let f = roundtrip_file(&set.to_bytes());
        assert_eq!(ChangedSet::read(f.path()).unwrap(), set);
    }

    #[test]
    fn a_truncated_or_unordered_changed_set_is_refused() {
        let set = ChangedSet {
            params: Params::new().with("method", "tttd"),
            files: vec![3],
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
            pruned: vec![(0, 3), (7, 7)],
        };
        let f = roundtrip_file(&list.to_bytes());
        let back = DroppedList::read(f.path()).unwrap();
        assert_eq!(back, list);
        assert_eq!(back.pruned_files(), 5);
        let e = ChangedSet::read(f.path()).unwrap_err().to_string();
        assert!(e.contains("expected a changed file"), "{e}");
    }
}
