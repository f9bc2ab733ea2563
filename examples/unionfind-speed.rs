//! Union-find throughput on random pairs, the access pattern of
//! fsim-partition on a large repository (docs/measurements/2026-11-22-chunk-sort-partition-internals.md):
//! 37 M unions over 15 M elements, plain `UnionFind::union` against
//! `QueuedUnions` (prefetched two stages ahead).
//!
//! `cargo run --release --example unionfind-speed -- plain|queued`
use fsim::stages::partition::unionfind::{QueuedUnions, UnionFind};
use std::time::Instant;
fn main() {
    let n: u32 = 15_000_000;
    let pairs = 37_000_000u64;
    let mode = std::env::args().nth(1).unwrap_or_default();
    let mut r = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        (r % n as u64) as u32
    };
    let v: Vec<(u32, u32)> = (0..pairs).map(|_| (next(), next())).collect();
    let t = Instant::now();
    let c = if mode == "plain" {
        let mut u = UnionFind::new(n as usize);
        for &(a, b) in &v {
            u.union(a, b);
        }
        u.into_components()
    } else {
        let mut u = QueuedUnions::new(n as usize);
        for &(a, b) in &v {
            u.queue(a, b);
        }
        u.into_components()
    };
    eprintln!(
        "{mode}: {:?} {:.2} s",
        c.multi_counts(),
        t.elapsed().as_secs_f64()
    );
}
