//! A file table and pairs file of projects of several releases, written
//! directly (tests/heavy/report_memory.rs, examples/gen_folders.rs): about FILES
//! text files, `repo/pNNNN/vNN/aN/bN/fNNNNNNNN.txt` (5 × 5 folders of 4
//! files a release), each linked to the same file of every other release
//! of its project (55-93 % in common, less the farther apart the releases
//! are): FILES × (VERSIONS - 1) / 2 verified links. Every link is credited
//! at three heights and every sub-folder pair of two releases is at the
//! threshold, though only the releases' pair is reported (the topmost).

use fsim::formats::{self, Digest, FileEntry, FileType, Kind, Params};
use std::io::Write;

/// Files of one release: 5 folders `aN` of 5 folders `bN` of 4 files.
pub const PER_RELEASE: u32 = 100;

/// The size of file `id`: that of its place in a release, a few bytes more
/// in each later release.
fn size(id: u32, versions: u32) -> u64 {
    let (r, v) = (id % PER_RELEASE, id / PER_RELEASE % versions);
    let project = id / (versions * PER_RELEASE);
    4000 + (r as u64 * 7919 + project as u64 * 31) % 8000 + 10 * v as u64
}

/// The path of file `id` of a table of projects of `versions` releases.
fn path(id: u32, versions: u32) -> Vec<u8> {
    let project = id / (versions * PER_RELEASE);
    let v = id / PER_RELEASE % versions;
    let r = id % PER_RELEASE;
    format!(
        "repo/p{project:04}/v{v:02}/a{}/b{}/f{id:08}.txt",
        r / 20,
        r / 4 % 5
    )
    .into_bytes()
}

/// Flush `buf` into `out` when it holds more than 64 KiB.
fn spill(buf: &mut Vec<u8>, out: &mut impl Write) -> std::io::Result<()> {
    if buf.len() > 1 << 16 {
        out.write_all(buf)?;
        buf.clear();
    }
    Ok(())
}

fn write_files(dir: &std::path::Path, files: u32, versions: u32) -> std::io::Result<()> {
    let params = Params::new().with("method", "tttd").with("avg", 100);
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("files.tsv"))?);
    let mut buf = Vec::with_capacity(1 << 17);
    formats::write_header(Kind::Files, &params, &mut buf);
    let mut table = formats::files::TableDigest::default();
    for id in 0..files {
        let e = FileEntry {
            id,
            size: size(id, versions),
            mtime_s: 1_700_000_000,
            mtime_ns: 0,
            content: 0x2000_0000_0000_0000 + id as u128,
            ftype: FileType::Text,
            view: formats::FileView::raw(size(id, versions)),
            path: path(id, versions),
        };
        table.write(&e, &mut buf);
        spill(&mut buf, &mut out)?;
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
    out.flush()
}

/// Each file linked to the same file of the later releases of its project.
fn write_links(dir: &std::path::Path, files: u32, versions: u32) -> std::io::Result<u64> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("verified.tsv"))?);
    let mut buf = Vec::with_capacity(1 << 17);
    let hp = Params::new()
        .with("method", "tttd")
        .with("avg", 100)
        .with("min-bytes", 0)
        .with("min-percent", 10)
        .with("percent-of", "smaller")
        .with("verified", 1);
    formats::write_header(Kind::Pairs, &hp, &mut buf);
    let mut d = Digest::default();
    let mut n = 0u64;
    for a in 0..files {
        let v = a / PER_RELEASE % versions;
        for w in v + 1..versions {
            let b = a + (w - v) * PER_RELEASE;
            if b >= files {
                break;
            }
            let (sa, sb) = (size(a, versions), size(b, versions));
            let common = sa.min(sb) * (95 - 2 * (w - v) as u64).max(55) / 100;
            let lower = common * 9 / 10;
            let chunks = lower / 100;
            writeln!(
                buf,
                "{a:010}\t{b:010}\t{sa}\t{sb}\t{lower}\t{chunks}\t{common}\texact"
            )?;
            d.add_mix(formats::mix128(
                ((a as u128) << 96) | ((b as u128) << 64) | lower as u128,
            ));
            n += 1;
        }
        spill(&mut buf, &mut out)?;
    }
    formats::write_trailer(Kind::Pairs, &formats::digest_params(&d, "pairs"), &mut buf);
    out.write_all(&buf)?;
    out.flush()?;
    Ok(n)
}

/// Write DIR/files.tsv and DIR/verified.tsv (sorted by (a, b), with
/// trailers: fsim-report reads them like a real run's) for whole projects
/// of about `files` files; (files, links) written.
pub fn write(dir: &std::path::Path, files: u32, versions: u32) -> std::io::Result<(u32, u64)> {
    let project = versions * PER_RELEASE;
    let files = files / project * project;
    std::fs::create_dir_all(dir)?;
    write_files(dir, files, versions)?;
    let links = write_links(dir, files, versions)?;
    Ok((files, links))
}
