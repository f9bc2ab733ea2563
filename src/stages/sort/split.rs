//! `fsim-sort --split-ranges N`: a chunk file cut into N chunk files, one
//! per equal range of the hash's first 32 bits, records in input order.
//!
//! This is the map side of a sort by files (fsim-spark on a shared work
//! folder, docs/distributed.md): every chunk task splits its records by
//! range, and the task of range r sorts the r-th files of all chunk tasks
//! with `fsim-sort --records-only`. MD5 and the feature hashes are uniform,
//! so equal ranges need no sampling pass, and all records of one hash land
//! in one range: a chunk group never spans two sorted files.
//!
//! Every output is a complete chunk file (the input's header, the range's
//! records, a trailer with their count and digest), so the sort that reads
//! it checks it as any other; the input is checked against its own trailer
//! before any output appears. Memory: one buffer per range, 8 MiB in all
//! (at least 4 KiB each).

use crate::error::{Context, Error, Result};
use crate::formats::{self, open_input, Digest, InputCheck, Kind};
use crate::stages::sort::keys::{parse_chunk_line, ChunkKey};
use crate::stages::sort::lines::FastLines;
use crate::stages::sort::{check_hash_line, inputs_or_stdin, not_a_record};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The range, of `n` equal ranges of the hash's first 32 bits, that a hash
/// falls in: `floor(h32 × n / 2³²)`, as fsim-spark routes records.
#[inline]
pub fn range_of(hash: u128, n: u32) -> u32 {
    (((hash >> 96) as u64 * n as u64) >> 32) as u32
}

/// The file of range `r` for output prefix `prefix`: `PREFIX.r00007`.
pub fn range_path(prefix: &Path, r: u32) -> PathBuf {
    let mut p = prefix.as_os_str().to_owned();
    p.push(format!(".r{r:05}"));
    PathBuf::from(p)
}

/// Bytes buffered for all parts together.
const BUFFERS: usize = 8 << 20;

struct PartOut {
    file: tempfile::NamedTempFile,
    buf: Vec<u8>,
    digest: Digest,
}

/// The `n` output files of a split, written to temporary files beside
/// their names and renamed at the end: none appears unless all do.
struct Parts {
    outs: Vec<PartOut>,
    dir: PathBuf,
    cap: usize,
}

impl Parts {
    fn create(prefix: &Path, n: u32) -> Result<Parts> {
        let dir = match prefix.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let cap = (BUFFERS / n.max(1) as usize).clamp(4 << 10, 64 << 10);
        let mut outs = Vec::with_capacity(n as usize);
        for r in 0..n {
            let target = range_path(prefix, r);
            let file = tempfile::Builder::new()
                .prefix(&format!(
                    ".{}.",
                    target.file_name().unwrap_or_default().to_string_lossy()
                ))
                .suffix(".tmp")
                .permissions(crate::io::output_mode())
                .tempfile_in(&dir)
                .ctx(|| format!("cannot create a temporary file in {}", dir.display()))?;
            outs.push(PartOut {
                file,
                buf: Vec::with_capacity(cap + 64),
                digest: Digest::default(),
            });
        }
        Ok(Parts { outs, dir, cap })
    }

    /// A line (without its newline) to every part.
    fn all(&mut self, line: &[u8]) {
        for o in &mut self.outs {
            o.buf.extend_from_slice(line);
            o.buf.push(b'\n');
        }
    }

    /// A record line (without its newline) to part `p`.
    #[inline]
    fn push(&mut self, p: usize, line: &[u8], k: &ChunkKey) -> Result<()> {
        let o = &mut self.outs[p];
        o.digest.add(&k.record());
        o.buf.extend_from_slice(line);
        o.buf.push(b'\n');
        if o.buf.len() >= self.cap {
            o.file
                .write_all(&o.buf)
                .ctx(|| format!("cannot write to {}", self.dir.display()))?;
            o.buf.clear();
        }
        Ok(())
    }

    /// Each part's trailer (when `trailers`), then every part renamed to
    /// its name; returns the records written.
    fn finish(self, prefix: &Path, trailers: bool) -> Result<u64> {
        let mut records = 0;
        for (r, o) in self.outs.into_iter().enumerate() {
            let target = range_path(prefix, r as u32);
            let name = target.display().to_string();
            let PartOut {
                mut file,
                mut buf,
                digest,
            } = o;
            if trailers {
                formats::write_trailer(
                    Kind::Chunks,
                    &formats::digest_params(&digest, "records"),
                    &mut buf,
                );
            }
            records += digest.count;
            file.write_all(&buf)
                .ctx(|| format!("cannot write {name}"))?;
            file.persist(&target)
                .map_err(|e| e.error)
                .ctx(|| format!("cannot create {name}"))?;
        }
        Ok(records)
    }
}

/// Split the chunk files `inputs` (concatenated) into `n` chunk files
/// `PREFIX.r00000` ..; returns the records written. Nothing appears when an
/// input is invalid or truncated.
pub fn split(inputs: &[PathBuf], n: u32, prefix: &Path) -> Result<u64> {
    if n == 0 {
        return Err(Error::msg("--split-ranges must be at least 1"));
    }
    let mut parts = Parts::create(prefix, n)?;
    let mut header: Option<Vec<u8>> = None;
    let mut all = InputCheck::new(Kind::Chunks, "records");
    for path in &inputs_or_stdin(inputs) {
        let (reader, name) = open_input(path)?;
        let mut lines = FastLines::new(reader, name);
        let mut check = InputCheck::new(Kind::Chunks, "records");
        let mut seen = Digest::default();
        while let Some(line) = lines.next_line()? {
            if let Some(k) = parse_chunk_line(line) {
                if header.is_none() {
                    return Err(lines.error(
                        "a record before the '#fsim chunks v1' header: expected a chunk file written by fsim-chunk",
                    ));
                }
                seen.add(&k.record());
                parts.push(range_of(k.hash(), n) as usize, line, &k)?;
                continue;
            }
            if line.first() != Some(&b'#') {
                let why = not_a_record(line);
                return Err(lines.error(why));
            }
            let owned = line.to_vec();
            let is_header =
                check_hash_line(&owned, &mut check, &mut all).map_err(|m| lines.error(m))?;
            if is_header && header.is_none() {
                // Every output opens with the first input's header.
                parts.all(&owned);
                header = Some(owned);
            }
        }
        check.finish(&seen, lines.name(), lines.line_number())?;
    }
    parts.finish(prefix, true)
}

/// Split record lines (bare: no header or trailer, as fsim-partition's
/// kept records) by their file: `map` gives the part of each file id
/// (`u32::MAX`: none, an error). Parts `PREFIX.r00000` .. for 0 .. n−1,
/// records in input order, bare; returns the records written.
pub fn split_by_file(inputs: &[PathBuf], map: &[u32], n: u32, prefix: &Path) -> Result<u64> {
    let mut parts = Parts::create(prefix, n)?;
    for path in &inputs_or_stdin(inputs) {
        let (reader, name) = open_input(path)?;
        let mut lines = FastLines::new(reader, name);
        while let Some(line) = lines.next_line()? {
            let Some(k) = parse_chunk_line(line) else {
                let why = not_a_record(line);
                return Err(lines.error(why));
            };
            match map.get(k.file as usize) {
                Some(&p) if p < n => parts.push(p as usize, line, &k)?,
                _ => {
                    let why = format!("file {} has no part in the map", k.file);
                    return Err(lines.error(why));
                }
            }
        }
    }
    parts.finish(prefix, false)
}

/// A map of file ids to parts: lines `FILE ID<TAB>PART`; returns it as a
/// dense table (`u32::MAX` for ids not listed) and the number of parts
/// (the largest + 1).
pub fn read_file_map(path: &Path) -> Result<(Vec<u32>, u32)> {
    let (reader, name) = open_input(path)?;
    let mut lines = FastLines::new(reader, name);
    let (mut map, mut n) = (Vec::new(), 0u32);
    while let Some(line) = lines.next_line()? {
        let mut f = line.split(|&c| c == b'\t');
        let parsed = match (f.next(), f.next(), f.next()) {
            (Some(id), Some(part), None) => formats::parse_u64(id)
                .and_then(|i| u32::try_from(i).ok())
                .zip(formats::parse_u64(part).and_then(|p| u32::try_from(p).ok())),
            _ => None,
        };
        let Some((id, part)) = parsed.filter(|&(_, p)| p < u32::MAX) else {
            return Err(lines.error("expected a file id and a part number, separated by a tab"));
        };
        if map.len() <= id as usize {
            map.resize(id as usize + 1, u32::MAX);
        }
        map[id as usize] = part;
        n = n.max(part + 1);
    }
    Ok((map, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::sort::{run, Config};

    fn chunk_file(dir: &Path, name: &str, recs: &[(u128, u32, u32)]) -> PathBuf {
        let mut d = Digest::default();
        let mut body = b"#fsim chunks v1\tmethod=tttd\tavg=100\n".to_vec();
        for &(hash, file, len) in recs {
            let r = crate::formats::ChunkRecord { hash, file, len };
            r.write(&mut body);
            d.add(&r);
        }
        formats::write_trailer(
            Kind::Chunks,
            &formats::digest_params(&d, "records"),
            &mut body,
        );
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    fn sort(inputs: Vec<PathBuf>, out: &Path, records_only: bool) -> Vec<u8> {
        run(&Config {
            inputs,
            output: Some(out.to_path_buf()),
            memory: 1 << 20,
            tmpdir: None,
            threads: 1,
            fan_in: 4,
            quiet: true,
            compress: false,
            resume_dir: None,
            records_only,
            changed: None,
        })
        .unwrap();
        std::fs::read(out).unwrap()
    }

    #[test]
    fn ranges_sorted_and_concatenated_are_the_sort() {
        let dir = tempfile::tempdir().unwrap();
        let recs = |seed: u128| -> Vec<(u128, u32, u32)> {
            (0..500u128)
                .map(|i| {
                    (
                        crate::formats::mix128(i % 170 + seed),
                        (i % 9) as u32,
                        (i % 50) as u32 + 1,
                    )
                })
                .collect()
        };
        let a = chunk_file(dir.path(), "a.tsv", &recs(0));
        let b = chunk_file(dir.path(), "b.tsv", &recs(60));
        let n = 5;
        assert_eq!(
            split(std::slice::from_ref(&a), n, &dir.path().join("a")).unwrap(),
            500
        );
        assert_eq!(
            split(std::slice::from_ref(&b), n, &dir.path().join("b")).unwrap(),
            500
        );
        let whole = sort(vec![a, b], &dir.path().join("whole"), false);
        // The '#' lines of the whole sort (both trailers, one header each).
        let mut got: Vec<u8> = whole
            .split_inclusive(|&c| c == b'\n')
            .take_while(|l| l[0] == b'#')
            .flatten()
            .copied()
            .collect();
        let mut last = None;
        for r in 0..n {
            let part = sort(
                vec![
                    range_path(&dir.path().join("a"), r),
                    range_path(&dir.path().join("b"), r),
                ],
                &dir.path().join(format!("sorted.{r}")),
                true,
            );
            assert!(!part.starts_with(b"#"), "range {r} has # lines");
            if let Some(first) = part.split(|&c| c == b'\n').next().filter(|l| !l.is_empty()) {
                let k = parse_chunk_line(first).unwrap();
                assert_eq!(range_of(k.hash(), n), r);
                assert!(last <= Some(r));
                last = Some(r);
            }
            got.extend_from_slice(&part);
        }
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(whole).unwrap()
        );
    }

    #[test]
    fn a_truncated_input_writes_no_range() {
        let dir = tempfile::tempdir().unwrap();
        let a = chunk_file(dir.path(), "a.tsv", &[(1 << 100, 0, 10), (3 << 126, 1, 20)]);
        let text = std::fs::read_to_string(&a).unwrap();
        let cut: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
        std::fs::write(&a, cut).unwrap();
        let e = split(std::slice::from_ref(&a), 2, &dir.path().join("s"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a.tsv:2: no '#end chunks' trailer"), "{e}");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn split_by_file_keeps_each_file_in_its_part_in_input_order() {
        let dir = tempfile::tempdir().unwrap();
        let recs: Vec<ChunkKey> = (0..300u32)
            .map(|i| {
                ChunkKey::from(crate::formats::ChunkRecord {
                    hash: crate::formats::mix128(i as u128),
                    file: i % 7,
                    len: 10 + i,
                })
            })
            .collect();
        let mut sorted = recs.clone();
        sorted.sort();
        let mut body = Vec::new();
        for k in &sorted {
            k.record().write(&mut body);
        }
        let input = dir.path().join("kept");
        std::fs::write(&input, &body).unwrap();
        let map_file = dir.path().join("map");
        // Files 0..7 to parts 2, 0, 1, 2, 0, 1, 2; part 3 empty.
        let map_text: String = (0..7)
            .map(|f| format!("{f:010}\t{}\n", (f + 2) % 3))
            .collect();
        std::fs::write(&map_file, format!("{map_text}0000000009\t3\n")).unwrap();
        let (map, n) = read_file_map(&map_file).unwrap();
        assert_eq!(n, 4);
        let prefix = dir.path().join("t");
        assert_eq!(
            split_by_file(std::slice::from_ref(&input), &map, n, &prefix).unwrap(),
            300
        );
        for p in 0..n {
            let got = std::fs::read(range_path(&prefix, p)).unwrap();
            let mut want = Vec::new();
            for k in sorted.iter().filter(|k| map[k.file as usize] == p) {
                k.record().write(&mut want);
            }
            assert_eq!(got, want, "part {p}");
        }
        // A file the map does not list: an error naming the line, no part.
        std::fs::write(&map_file, "0000000000\t0\n").unwrap();
        let (map, n) = read_file_map(&map_file).unwrap();
        let e = split_by_file(&[input], &map, n, &dir.path().join("u"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no part in the map"), "{e}");
        assert!(!range_path(&dir.path().join("u"), 0).exists());
        std::fs::write(&map_file, "12 0\n").unwrap();
        let e = read_file_map(&map_file).unwrap_err().to_string();
        assert!(
            e.contains("map:1: expected a file id and a part number"),
            "{e}"
        );
    }

    #[test]
    fn range_of_cuts_the_first_32_bits_evenly() {
        assert_eq!(range_of(0, 4), 0);
        assert_eq!(range_of(u128::MAX, 4), 3);
        assert_eq!(range_of(1u128 << 126, 4), 1);
        assert_eq!(range_of((1u128 << 126) - 1, 4), 0);
        assert_eq!(range_of(u128::MAX, 1), 0);
    }
}
