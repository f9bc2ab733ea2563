//! A synthetic input for fsim-report at any scale: a file table of FILES
//! text files and a pairs file of about LINKS verified links, in the shape
//! that overwhelms a report: one family holding a tenth of the files with
//! most of the links (each of its files linked to its next K), and many
//! pairs and small groups among the other files.
//!
//!     cargo run --release --example gen_pairs -- FILES LINKS OUT_DIR
//!
//! Writes OUT_DIR/files.tsv and OUT_DIR/verified.tsv (sorted by (a, b), with
//! trailers: fsim-report reads them like a real run's).

use fsim::formats::{self, Digest, FileEntry, FileType, Kind, Params};
use std::io::Write;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: gen_pairs FILES LINKS OUT_DIR");
        std::process::exit(2);
    }
    let files: u32 = args[1].parse().expect("FILES");
    let links: u64 = args[2].parse().expect("LINKS");
    let dir = std::path::PathBuf::from(&args[3]);
    std::fs::create_dir_all(&dir)?;
    let params = Params::new().with("method", "tttd").with("avg", 100);
    let size = |id: u32| 4000 + (id as u64 * 7919) % 8000;

    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("files.tsv"))?);
    let mut buf = Vec::with_capacity(1 << 16);
    formats::write_header(Kind::Files, &params, &mut buf);
    let mut table = formats::files::TableDigest::default();
    for id in 0..files {
        let e = FileEntry {
            id,
            size: size(id),
            mtime_s: 1_700_000_000,
            mtime_ns: 0,
            content: 0x1000_0000_0000_0000 + id as u128,
            ftype: FileType::Text,
            view: formats::FileView::raw(size(id)),
            path: format!("repo/d{:03}/f{id:08}.txt", id % 300).into_bytes(),
        };
        table.write(&e, &mut buf);
        if buf.len() > 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    formats::write_trailer(
        Kind::Files,
        &Params::new()
            .with("files", files)
            .with("records", 0)
            .with("digest", "0")
            .with(formats::files::TABLE_DIGEST_KEY, table.hex()),
        &mut buf,
    );
    out.write_all(&buf)?;
    out.flush()?;

    // The family: ids below files/10, each linked to its next k; k chosen
    // so that the family holds 90% of the links. The rest: pairs (a, a+1).
    let family = (files / 10).max(2);
    let k = ((links * 9 / 10) / family as u64).max(1) as u32;
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("verified.tsv"))?);
    buf.clear();
    let hp = params
        .clone()
        .with("min-bytes", 0)
        .with("min-percent", 10)
        .with("percent-of", "smaller")
        .with("verified", 1);
    formats::write_header(Kind::Pairs, &hp, &mut buf);
    let mut d = Digest::default();
    let mut line = |a: u32, b: u32, buf: &mut Vec<u8>| {
        let (sa, sb) = (size(a), size(b));
        // 55-99% of the smaller file, varied by distance.
        let pct = 99 - ((b - a) as u64 * 44 / k.max(1) as u64).min(44);
        let common = sa.min(sb) * pct / 100;
        // The chunk lower bound, its shared chunks, the exact figure.
        let lower = common * 9 / 10;
        let chunks = lower / 100;
        buf.extend_from_slice(
            format!("{a:010}\t{b:010}\t{sa}\t{sb}\t{lower}\t{chunks}\t{common}\texact\n")
                .as_bytes(),
        );
        d.add_mix(formats::mix128(
            ((a as u128) << 96) | ((b as u128) << 64) | lower as u128,
        ));
    };
    let mut n = 0u64;
    for a in 0..family {
        for b in a + 1..(a + 1 + k).min(family) {
            line(a, b, &mut buf);
            n += 1;
        }
        if buf.len() > 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    let mut a = family;
    while a + 1 < files && n < links {
        line(a, a + 1, &mut buf);
        n += 1;
        a += 3;
        if buf.len() > 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    formats::write_trailer(Kind::Pairs, &formats::digest_params(&d, "pairs"), &mut buf);
    out.write_all(&buf)?;
    out.flush()?;
    eprintln!("gen_pairs: {files} files, {n} links ({family} files in the family, {k} links each)");
    Ok(())
}
