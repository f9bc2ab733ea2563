//! Throughput of MD5 over many chunks: one at a time (`md-5`) against
//! `fsim::chunking::md5batch::digest_many` (16 lanes with AVX-512, 8 with AVX2), on one core.
//!
//! `cargo run --release --example md5batch-speed FILE` (e.g. the bench's
//! bench-work/big.txt; read into memory whole).

use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: md5batch-speed FILE");
    let data = std::fs::read(&path).expect("readable FILE");
    for avg in [1000usize, 100] {
        // Chunk lengths spread like TTTD's: avg/2 .. 3avg/2.
        let mut cuts = Vec::new();
        let (mut pos, mut x) = (0usize, 12345u64);
        while pos < data.len() {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (avg / 2 + (x >> 33) as usize % avg).min(data.len() - pos);
            cuts.push((pos, len));
            pos += len;
        }
        let t = Instant::now();
        let one: Vec<u128> = cuts
            .iter()
            .map(|&(p, l)| fsim::chunking::md5batch::digest_one(&data[p..p + l]))
            .collect();
        let t1 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut many = Vec::with_capacity(cuts.len());
        for block in cuts.chunks(4096) {
            fsim::chunking::md5batch::digest_many(
                block.iter().map(|&(p, l)| &data[p..p + l]),
                &mut many,
            );
        }
        let t2 = t.elapsed().as_secs_f64();
        assert_eq!(one, many);
        let mb = data.len() as f64 / 1e6;
        println!(
            "avg {avg}: one at a time {:.0} MB/s, batched {:.0} MB/s ({:.1}x)",
            mb / t1,
            mb / t2,
            t1 / t2
        );
    }
}
