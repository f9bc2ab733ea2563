//! Legacy binary Office documents (.doc, .xls, .ppt, and their templates
//! .dot, .xlt, .pot): an OLE2 compound file (CFB) whose root storage holds
//! a `WordDocument`, `Workbook` (or `Book`) or `PowerPoint Document`
//! stream. Their text is read by catdoc's programs (Debian's `catdoc`
//! package: `catdoc`, `xls2csv`, `catppt`; GPL, run as programs, not
//! linked), each run as a separate process under the limits of the PDF
//! extractor ([`super::pdf::run_program`]): these formats are decades of
//! binary records, and a parser of them belongs in a process that may
//! crash. Where the program is missing the file keeps its raw view with a
//! note saying which program would read it.
//!
//! Detection reads the compound file's header and its directory (at most
//! [`MAX_DIR_SECTORS`] sectors), never the streams.

use std::ffi::OsStr;
use std::io::{Read, SeekFrom};
use std::path::{Path, PathBuf};

use super::pdf::input_file;
use super::{Budget, Fail, Kind, Source};

/// The magic number of a compound file.
pub(super) const MAGIC: [u8; 8] = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

/// Most directory sectors read to find the root storage's streams.
const MAX_DIR_SECTORS: usize = 64;

/// The kind of a compound file whose first bytes are `head`, by the
/// streams of its root storage; `None` for any other compound file (an
/// installer, a mail message, a thumbnail cache) or a damaged one.
pub(super) fn kind(head: &[u8], src: &mut dyn Source) -> Option<Kind> {
    if !head.starts_with(&MAGIC) {
        return None;
    }
    let u16_at = |i: usize| head.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |i: usize| {
        head.get(i..i + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let shift = u16_at(0x1e)?;
    if shift != 9 && shift != 12 {
        return None;
    }
    let size = 1usize << shift;
    // The first 109 sectors of the allocation table are listed in the
    // header; a directory whose chain needs a later one is not followed.
    let fat: Vec<u32> = (0..109).filter_map(|i| u32_at(0x4c + 4 * i)).collect();
    let mut read_sector = |n: u32| -> Option<Vec<u8>> {
        let at = (n as u64 + 1).checked_mul(size as u64)?;
        src.seek(SeekFrom::Start(at)).ok()?;
        let mut buf = Vec::with_capacity(size);
        Read::take(&mut *src, size as u64)
            .read_to_end(&mut buf)
            .ok()?;
        (buf.len() == size).then_some(buf)
    };
    let mut dir = Vec::new();
    let mut sector = u32_at(0x30)?;
    for _ in 0..MAX_DIR_SECTORS {
        if sector >= 0xffff_fffa {
            break;
        }
        dir.extend(read_sector(sector)?);
        let per = (size / 4) as u32;
        let fat_sector = *fat.get((sector / per) as usize)?;
        let table = read_sector(fat_sector)?;
        let i = (sector % per) as usize * 4;
        sector = u32::from_le_bytes(table.get(i..i + 4)?.try_into().ok()?);
    }
    root_streams_kind(&dir)
}

/// The kind named by the streams of the root storage in directory `dir`
/// (entries of 128 bytes, entry 0 the root; its children a tree of left
/// and right siblings).
pub(super) fn root_streams_kind(dir: &[u8]) -> Option<Kind> {
    let entry = |i: u32| dir.get(i as usize * 128..i as usize * 128 + 128);
    let u32_in = |e: &[u8], at: usize| u32::from_le_bytes(e[at..at + 4].try_into().unwrap());
    let root = entry(0)?;
    let mut stack = vec![u32_in(root, 0x4c)];
    let (mut word, mut book, mut slides) = (false, false, false);
    let mut seen = 0;
    while let Some(i) = stack.pop() {
        seen += 1;
        let Some(e) = entry(i).filter(|_| seen <= 4096) else {
            continue;
        };
        let len = (u16::from_le_bytes([e[0x40], e[0x41]]) as usize).min(64);
        let name: Vec<u16> = e[..len]
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .take_while(|&c| c != 0)
            .collect();
        if e[0x42] == 2 {
            match String::from_utf16_lossy(&name).as_str() {
                "WordDocument" => word = true,
                "Workbook" | "Book" => book = true,
                "PowerPoint Document" => slides = true,
                _ => {}
            }
        }
        stack.extend(
            [u32_in(e, 0x44), u32_in(e, 0x48)]
                .into_iter()
                .filter(|&s| s < 0xffff_fffa),
        );
    }
    match (word, slides, book) {
        (true, _, _) => Some(Kind::Doc),
        (_, true, _) => Some(Kind::Ppt),
        (_, _, true) => Some(Kind::Xls),
        _ => None,
    }
}

/// The program that prints the text of `kind`, and its arguments before
/// the file's path.
fn program(kind: Kind) -> (&'static str, &'static [&'static str]) {
    match kind {
        Kind::Doc => ("catdoc", &["-w", "-d", "utf-8"]),
        Kind::Xls => ("xls2csv", &["-q", "0", "-c", "\t", "-d", "utf-8"]),
        _ => ("catppt", &["-d", "utf-8"]),
    }
}

/// The text of a legacy document of kind `kind`: its program's output,
/// one line per paragraph or row (cells separated by tabs), lines
/// trimmed and empty lines left out.
pub(super) fn extract(
    kind: Kind,
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    extract_with(kind, find(program(kind).0).as_deref(), src, path, budget)
}

/// [`extract`] with the program `exe` (`None`: not installed).
pub(super) fn extract_with(
    kind: Kind,
    exe: Option<&Path>,
    src: &mut dyn Source,
    path: Option<&Path>,
    budget: &Budget,
) -> Result<Vec<u8>, Fail> {
    let (name, args) = program(kind);
    let exe = exe.ok_or_else(|| {
        format!("no text extractor: {name} (Debian's catdoc package) is not installed")
    })?;
    let (input, tmp) = input_file(src, path, budget)?;
    let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    all.push(input.as_os_str());
    let text = super::pdf::run_program(name, exe, &all, budget);
    drop(tmp);
    Ok(super::pdf::page_lines(&text?))
}

/// catdoc's programs, one per legacy kind.
const PROGRAMS: [&str; 3] = ["catdoc", "xls2csv", "catppt"];

/// The `office=` chunking parameter: `None` when catdoc's three programs
/// are on PATH (every legacy document can be read by its text), else
/// those found joined by `+`, or `none`. Records of a run that lacked one
/// are then not reused by a run that has it.
pub fn extractor_param() -> Option<String> {
    let found: Vec<&str> = PROGRAMS.into_iter().filter(|p| find(p).is_some()).collect();
    match found.len() {
        3 => None,
        0 => Some("none".into()),
        _ => Some(found.join("+")),
    }
}

/// `name` on PATH.
fn find(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
