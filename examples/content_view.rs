//! Prints the content view of each file given (docs/documents.md): its
//! kind, its note, its size against the raw size, the time taken, and with
//! `--text` the view itself. For measuring the extractors on real files.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "--text");
    let limits = fsim::content::Limits::default();
    for path in args.iter().filter(|a| *a != "--text") {
        let raw = match std::fs::read(path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let t = Instant::now();
        let v = fsim::content::view(&raw, &limits);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "{path}\t{}\t{} -> {} bytes\t{ms:.1} ms\t{}",
            v.kind.name(),
            raw.len(),
            v.bytes.len(),
            v.note.as_deref().unwrap_or("-")
        );
        if show {
            println!("{}", String::from_utf8_lossy(&v.bytes));
        }
    }
}
