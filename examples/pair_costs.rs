//! The cost of each candidate pair's exact figure against the time to read
//! its two files (issue 25: "no pair slower than 10× the time to read
//! it"). For every pair of `PAIRS` (fsim-analyze's output) whose files are
//! both text: the two files read from the page cache (each read timed, the
//! best of 3), tokenized and compared as fsim-verify does (timed, best of
//! 3). Prints the distribution of compare ÷ read and the slowest pairs.
//!
//! cargo run --release --example pair_costs -- FILES PAIRS [LIMIT]

use fsim::formats::files::read_file_table;
use fsim::formats::FileType;
use fsim::stages::verify::{compare, piece_chunker, tokenize, Mode};
use std::io::BufRead;
use std::os::unix::ffi::OsStrExt;
use std::time::Instant;

fn best_of_3<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut out = None;
    for _ in 0..3 {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("three runs"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (files, _) = read_file_table(args[1].as_ref()).expect("file table");
    let limit: usize = args
        .get(3)
        .map_or(usize::MAX, |s| s.parse().expect("LIMIT"));
    let pieces = piece_chunker();
    let mut rows = Vec::new();
    let input = std::io::BufReader::new(std::fs::File::open(&args[2]).expect("pairs"));
    for line in input.lines().map(|l| l.expect("line")) {
        if line.starts_with('#') || rows.len() >= limit {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let (a, b) = (
            f[0].parse::<usize>().unwrap(),
            f[1].parse::<usize>().unwrap(),
        );
        let (fa, fb) = (&files[a], &files[b]);
        if fa.ftype != FileType::Text || fb.ftype != FileType::Text {
            continue;
        }
        let path = |p: &[u8]| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(p));
        let (pa, pb) = (path(&fa.path), path(&fb.path));
        let (read, (da, db)) = best_of_3(|| {
            (
                std::fs::read(&pa).expect("a"),
                std::fs::read(&pb).expect("b"),
            )
        });
        let (cmp, common) = best_of_3(|| {
            let ta = tokenize(&da, Mode::Lines, &pieces);
            let tb = tokenize(&db, Mode::Lines, &pieces);
            compare(&ta, &tb, false).common
        });
        rows.push((cmp / read, cmp, read, fa.size + fb.size, common, a, b));
    }
    rows.sort_by(|x, y| x.0.total_cmp(&y.0));
    let q = |p: f64| rows[((rows.len() - 1) as f64 * p) as usize].0;
    println!(
        "pairs {}  compare/read: median {:.2}  p99 {:.2}  max {:.2}",
        rows.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
    let total_cmp: f64 = rows.iter().map(|r| r.1).sum();
    let total_read: f64 = rows.iter().map(|r| r.2).sum();
    println!("total compare {total_cmp:.3} s, read {total_read:.3} s");
    for r in rows.iter().rev().take(5) {
        println!(
            "{:.2}x  compare {:.1} us  read {:.1} us  {} bytes  common {}  pair {}-{}",
            r.0,
            r.1 * 1e6,
            r.2 * 1e6,
            r.3,
            r.4,
            r.5,
            r.6
        );
    }
}
