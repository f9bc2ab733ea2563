//! Prints the content view of each file given (docs/documents.md): its
//! kind, its note, its size against the raw size, the time taken, and with
//! `--text` the view itself. For measuring the extractors on real files:
//! `cargo run --release --example content_view -- [--text] FILE...`.

use std::io::Write;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "--text");
    let limits = fsim::content::Limits::default();
    let mut out = std::io::stdout().lock();
    for path in args.iter().filter(|a| *a != "--text") {
        let raw = match std::fs::read(path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("content_view: {path}: {e}");
                continue;
            }
        };
        let t = Instant::now();
        let v = fsim::content::view(&raw, &limits);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let line = format!(
            "{path}\t{}\t{} -> {} bytes\t{ms:.1} ms\t{}\n",
            v.kind.name(),
            raw.len(),
            v.bytes.len(),
            v.note.as_deref().unwrap_or("-")
        );
        let written = out.write_all(line.as_bytes()).and_then(|_| {
            if show {
                out.write_all(&v.bytes)
            } else {
                Ok(())
            }
        });
        // A closed pipe (`| head`) ends the listing quietly.
        if written.is_err() {
            return;
        }
    }
}
