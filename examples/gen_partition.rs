//! Synthetic partition file at the paper's scale, for benchmarking
//! fsim-binpack and fsim-analyze (docs/performance.md).
//!
//! `cargo run --release --example gen_partition -- FILES RECORDS SEED > p.tsv`
//! (defaults: 52125 files, 3.8 M records, seed 1). Files come in connected
//! components of mostly 2-3 files (a few up to 150); each chunk is in 2 files
//! (60%), 3 (25%) or 4-10 (15%) files of its component, lengths 100-3000
//! bytes; ~5% of the files are copies of another file of their component and
//! ~1% of the records repeat a chunk within a file.

use fsim::formats::bins::FileLine;
use fsim::formats::{self, ChunkRecord, Digest, Kind, Params};
use std::io::Write;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let nfiles: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(52_125);
    let nrecords: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_800_000);
    let mut rng =
        Rng(0x9e37_79b9_7f4a_7c15 ^ args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1u64));
    let per_file = nrecords as f64 / nfiles as f64;
    let mut recs: Vec<ChunkRecord> = Vec::with_capacity(nrecords as usize + 1000);
    let mut files: Vec<FileLine> = Vec::with_capacity(nfiles as usize);
    let mut next_hash = 1u128;
    let mut id = 0u32;
    while id < nfiles {
        let r = rng.below(100);
        let n = match r {
            0..=69 => 2,
            70..=84 => 3,
            85..=92 => 4 + rng.below(3) as u32,
            93..=97 => 7 + rng.below(14) as u32,
            _ => 21 + rng.below(130) as u32,
        }
        .min(nfiles - id)
        .max(1);
        let first = id;
        // Copies: a later file of the component repeats an earlier one.
        let mut copy_of: Vec<Option<u32>> = vec![None; n as usize];
        for (i, c) in copy_of.iter_mut().enumerate().skip(1) {
            if rng.below(100) < 5 {
                *c = Some(rng.below(i as u64) as u32);
            }
        }
        let originals: Vec<u32> = (0..n).filter(|&i| copy_of[i as usize].is_none()).collect();
        let mut chunks_of: Vec<Vec<(u128, u32)>> = vec![Vec::new(); n as usize];
        if originals.len() >= 2 {
            let target = (per_file * originals.len() as f64) as u64;
            let mut made = 0;
            while made < target {
                let d = match rng.below(100) {
                    0..=59 => 2,
                    60..=84 => 3,
                    _ => 4 + rng.below(7),
                }
                .min(originals.len() as u64) as usize;
                let hash = formats::mix128(next_hash);
                next_hash += 1;
                let len = 100 + rng.below(2900) as u32;
                let mut picked: Vec<u32> = Vec::with_capacity(d);
                while picked.len() < d {
                    let f = originals[rng.below(originals.len() as u64) as usize];
                    if !picked.contains(&f) {
                        picked.push(f);
                    }
                }
                for &f in &picked {
                    chunks_of[f as usize].push((hash, len));
                    if rng.below(100) == 0 {
                        chunks_of[f as usize].push((hash, len));
                    }
                }
                made += d as u64;
            }
        }
        for i in 0..n as usize {
            let src = copy_of[i].map_or(i, |s| {
                let mut s = s as usize;
                while let Some(t) = copy_of[s] {
                    s = t as usize;
                }
                s
            });
            let shared: u64 = chunks_of[src].iter().map(|c| c.1 as u64).sum();
            let size = shared + (formats::mix128(src as u128 + first as u128) as u64 % 20_000);
            let content = formats::mix128(((first as u128) << 64) | src as u128 | (1 << 100));
            files.push(FileLine {
                id: first + i as u32,
                component: first,
                size,
                content,
                features: None,
            });
            for &(hash, len) in &chunks_of[src] {
                recs.push(ChunkRecord {
                    hash,
                    file: first + i as u32,
                    len,
                });
            }
        }
        id += n;
    }
    recs.sort_unstable_by_key(|r| (r.hash, r.file, r.len));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut buf = Vec::with_capacity(1 << 16);
    let p = Params::new()
        .with("method", "tttd")
        .with("avg", 1000)
        .with("files", nfiles)
        .with("limit", nfiles / 2);
    formats::write_header(Kind::Partition, &p, &mut buf);
    let mut d = Digest::default();
    for r in &recs {
        r.write(&mut buf);
        d.add(r);
        if buf.len() > 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    for f in &files {
        f.write(&mut buf);
        if buf.len() > 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    let comps = files.iter().filter(|f| f.id == f.component).count();
    let t = formats::digest_params(&d, "records")
        .with("files", files.len())
        .with("components", comps)
        .with("dropped_chunks", 0)
        .with("dropped_records", 0);
    formats::write_trailer(Kind::Partition, &t, &mut buf);
    out.write_all(&buf)?;
    out.flush()
}
