//! Synthetic inputs for benchmarks (not committed data: generate, measure,
//! delete). Deterministic for a given seed.
//!
//! `cargo run --release --example sortpart-gen -- chunks N > chunks.tsv`
//!   N unsorted chunk records over N/20 files, ~5% duplicate lines, with
//!   header and trailer.
//! `cargo run --release --example sortpart-gen -- sorted FILES GROUPS FILES.tsv > sorted.tsv`
//!   a sorted chunk stream of GROUPS chunk groups (degree 1..4, a few
//!   ubiquitous ones) over FILES files, and the matching file table.

use fsim::formats::{
    digest_params, write_header, write_trailer, ChunkRecord, Digest, FileEntry, FileType, Kind,
    Params,
};
use std::io::{BufWriter, Write};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
}

/// The parameters fsim-chunk writes for TTTD at 1000 bytes, so that the
/// synthetic files are accepted everywhere (fsim-query checks them).
fn params() -> Params {
    fsim::chunking::chunker::Chunker::new(fsim::chunking::chunker::Method::Tttd, 1000)
        .expect("1000 is a valid average")
        .params()
}

/// Visit the records of the sorted stream in order.
fn sorted_stream(files: u64, groups: u64, mut f: impl FnMut(&ChunkRecord)) {
    let mut rng = Rng(42);
    let step = u128::MAX / (groups as u128 + 1);
    let mut ids = Vec::new();
    for g in 0..groups {
        let hash = step * (g as u128 + 1);
        let r = rng.next();
        let degree = if g % 10_000_000 == 1 {
            files.min(5000)
        } else {
            1 + (r % 4)
        };
        ids.clear();
        for _ in 0..degree {
            ids.push((rng.next() % files) as u32);
        }
        ids.sort_unstable();
        let len = 100 + (r >> 32) as u32 % 2000;
        for &id in &ids {
            f(&ChunkRecord {
                hash,
                file: id,
                len,
            });
        }
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out = std::io::stdout();
    let mut w = BufWriter::with_capacity(1 << 20, out.lock());
    let mut buf = Vec::with_capacity(1 << 16);
    match args.get(1).map(String::as_str) {
        Some("chunks") => {
            let n: u64 = args[2].parse().expect("N");
            let files = (n / 20).max(1);
            let mut rng = Rng(7);
            write_header(Kind::Chunks, &params(), &mut buf);
            let mut d = Digest::default();
            let mut last = None;
            for _ in 0..n {
                let r = match last {
                    Some(r) if rng.next().is_multiple_of(20) => r,
                    _ => {
                        let hash = ((rng.next() as u128) << 64) | rng.next() as u128;
                        // small hash space part: equal hashes with different files
                        let hash = if rng.next().is_multiple_of(4) {
                            hash & 0xffff
                        } else {
                            hash
                        };
                        ChunkRecord {
                            hash,
                            file: (rng.next() % files) as u32,
                            len: (rng.next() % 3000) as u32,
                        }
                    }
                };
                last = Some(r);
                d.add(&r);
                r.write(&mut buf);
                if buf.len() > 60_000 {
                    w.write_all(&buf)?;
                    buf.clear();
                }
            }
            write_trailer(Kind::Chunks, &digest_params(&d, "records"), &mut buf);
            w.write_all(&buf)?;
        }
        Some("sorted") => {
            let files: u64 = args[2].parse().expect("FILES");
            let groups: u64 = args[3].parse().expect("GROUPS");
            let table = &args[4];
            let mut d = Digest::default();
            sorted_stream(files, groups, |r| d.add(r));
            let mut t = BufWriter::with_capacity(1 << 20, std::fs::File::create(table)?);
            let mut tb = Vec::new();
            let mut table_digest = fsim::formats::files::TableDigest::default();
            write_header(Kind::Files, &params(), &mut tb);
            for id in 0..files {
                let e = FileEntry {
                    id: id as u32,
                    size: 1000 + id % 5000,
                    mtime_s: 1_600_000_000,
                    mtime_ns: 0,
                    content: (id as u128) * 0x1234_5678_9abc_def1,
                    ftype: FileType::Text,
                    view: fsim::formats::FileView::raw(1000 + id % 5000),
                    path: format!("repo/dir{}/file{}.html", id % 1000, id).into_bytes(),
                };
                table_digest.write(&e, &mut tb);
                if tb.len() > 60_000 {
                    t.write_all(&tb)?;
                    tb.clear();
                }
            }
            let p = Params::new()
                .with("files", files)
                .with("records", d.count)
                .with("digest", fsim::formats::hex128(d.sum))
                .with("skipped", 0)
                .with(fsim::formats::files::TABLE_DIGEST_KEY, table_digest.hex());
            write_trailer(Kind::Files, &p, &mut tb);
            t.write_all(&tb)?;
            t.flush()?;
            write_header(Kind::Chunks, &params(), &mut buf);
            let mut err = Ok(());
            sorted_stream(files, groups, |r| {
                r.write(&mut buf);
                if buf.len() > 60_000 && err.is_ok() {
                    err = w.write_all(&buf);
                    buf.clear();
                }
            });
            err?;
            write_trailer(Kind::Chunks, &digest_params(&d, "records"), &mut buf);
            w.write_all(&buf)?;
        }
        _ => {
            eprintln!("usage: sortpart-gen chunks N | sortpart-gen sorted FILES GROUPS FILES.tsv");
            std::process::exit(2);
        }
    }
    w.flush()
}
