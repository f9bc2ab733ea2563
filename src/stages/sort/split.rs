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
use crate::stages::sort::keys::parse_chunk_line;
use crate::stages::sort::lines::FastLines;
use crate::stages::sort::{check_hash_line, not_a_record};
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

/// Bytes buffered for all ranges together.
const BUFFERS: usize = 8 << 20;

struct RangeOut {
    file: tempfile::NamedTempFile,
    buf: Vec<u8>,
    digest: Digest,
}

/// Split the chunk files `inputs` (concatenated) into `n` chunk files
/// `PREFIX.r00000` ..; returns the records written. Nothing appears when an
/// input is invalid or truncated.
pub fn split(inputs: &[PathBuf], n: u32, prefix: &Path) -> Result<u64> {
    if n == 0 {
        return Err(Error::msg("--split-ranges must be at least 1"));
    }
    let dir = match prefix.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let cap = (BUFFERS / n as usize).clamp(4 << 10, 64 << 10);
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
        outs.push(RangeOut {
            file,
            buf: Vec::with_capacity(cap + 64),
            digest: Digest::default(),
        });
    }
    let mut header: Option<Vec<u8>> = None;
    let mut all = InputCheck::new(Kind::Chunks, "records");
    let default_input = [PathBuf::from("-")];
    let inputs = if inputs.is_empty() {
        &default_input[..]
    } else {
        inputs
    };
    for path in inputs {
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
                let o = &mut outs[range_of(k.hash(), n) as usize];
                o.digest.add(&k.record());
                seen.add(&k.record());
                o.buf.extend_from_slice(line);
                o.buf.push(b'\n');
                if o.buf.len() >= cap {
                    o.file
                        .write_all(&o.buf)
                        .ctx(|| format!("cannot write to {}", dir.display()))?;
                    o.buf.clear();
                }
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
                for o in &mut outs {
                    o.buf.extend_from_slice(&owned);
                    o.buf.push(b'\n');
                }
                header = Some(owned);
            }
        }
        check.finish(&seen, lines.name(), lines.line_number())?;
    }
    let mut records = 0;
    for (r, o) in outs.into_iter().enumerate() {
        let target = range_path(prefix, r as u32);
        let name = target.display().to_string();
        let RangeOut {
            mut file,
            mut buf,
            digest,
        } = o;
        formats::write_trailer(
            Kind::Chunks,
            &formats::digest_params(&digest, "records"),
            &mut buf,
        );
        records += digest.count;
        file.write_all(&buf)
            .ctx(|| format!("cannot write {name}"))?;
        file.persist(&target)
            .map_err(|e| e.error)
            .ctx(|| format!("cannot create {name}"))?;
    }
    Ok(records)
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
            resume_dir: None,
            records_only,
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
    fn range_of_cuts_the_first_32_bits_evenly() {
        assert_eq!(range_of(0, 4), 0);
        assert_eq!(range_of(u128::MAX, 4), 3);
        assert_eq!(range_of(1u128 << 126, 4), 1);
        assert_eq!(range_of((1u128 << 126) - 1, 4), 0);
        assert_eq!(range_of(u128::MAX, 1), 0);
    }
}
