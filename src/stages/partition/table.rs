//! The file table as fsim-partition reads it: only its first and last
//! lines up front (parameters, count, digest) when it is a regular file,
//! the whole table once at the end for the `F` lines.

use super::*;
use crate::formats::headers::FilesTrailer;

/// What reading the file table gives.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FileTable {
    pub(super) name: String,
    pub(super) params: Params,
    pub(super) files: u64,
    pub(super) chunk_digest: Digest,
    /// The trailer's digest of the table's own records (`table-digest=`).
    pub(super) table_digest: u128,
}

/// The fields of a file-table line that this stage needs: id, size, content
/// and the (still escaped) path.
pub(super) fn parse_file_line(line: &[u8]) -> std::result::Result<(u32, u64, u128, &[u8]), String> {
    // memchr rather than `split_fields`: this runs for every file and the
    // path is the longest field.
    let bad = || format!("expected {}", crate::formats::FileEntry::EXPECTED);
    // Five tabs in a v2 record, seven in a v3 one (view and raw size
    // before the path, which is last in all), eight in a v4 one (and the
    // view hash).
    let mut tabs = [0usize; 8];
    let mut it = memchr::memchr_iter(b'\t', line);
    let mut n = 0;
    for t in tabs.iter_mut() {
        match it.next() {
            Some(at) => *t = at,
            None => break,
        }
        n += 1;
    }
    if !matches!(n, 5 | 7 | 8) || it.next().is_some() {
        return Err(bad());
    }
    let path = &line[tabs[n - 1] + 1..];
    let id = parse_id(&line[..tabs[0]]).ok_or("expected a 10-digit file id in field 1")?;
    let size =
        parse_u64(&line[tabs[0] + 1..tabs[1]]).ok_or("expected a size in bytes in field 2")?;
    let content = parse_hex128(&line[tabs[2] + 1..tabs[3]])
        .ok_or("expected a 32-digit lowercase hex content hash in field 4")?;
    Ok((id, size, content, path))
}

pub(super) fn is_regular(path: &Path) -> bool {
    path.as_os_str() != "-"
        && std::fs::metadata(path)
            .map(|m| m.is_file())
            .unwrap_or(false)
}

/// The header and trailer of a regular file table without reading its
/// records: its first line and its last line. `None` when they are not a
/// well-formed files header and trailer (the full read then says why).
pub(super) fn peek_file_table(path: &Path) -> Option<FileTable> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut head = vec![0u8; 64 << 10];
    let n = f.read(&mut head).ok()?;
    let first = &head[..memchr::memchr(b'\n', &head[..n])?];
    let Ok(Line::Header(Kind::Files, params)) = classify_line(first) else {
        return None;
    };
    let tail_len = len.min(64 << 10);
    f.seek(SeekFrom::Start(len - tail_len)).ok()?;
    let mut tail = vec![0u8; tail_len as usize];
    f.read_exact(&mut tail).ok()?;
    let body = tail.strip_suffix(b"\n")?;
    let last = &body[memchr::memrchr(b'\n', body)? + 1..];
    let Ok(Line::Trailer(Kind::Files, t)) = classify_line(last) else {
        return None;
    };
    FileTable::from_ends(path.display().to_string(), params, &t)
}

impl FileTable {
    /// The table described by its header and trailer; `None` when the
    /// trailer lacks a field or announces more than 2^32 files.
    pub(super) fn from_ends(name: String, params: Params, t: &Params) -> Option<FileTable> {
        let t = FilesTrailer::parse(t).ok()?;
        let files = t.files?;
        if files > u32::MAX as u64 + 1 {
            return None;
        }
        Some(FileTable {
            name,
            params,
            files,
            chunk_digest: Digest {
                count: t.records?,
                sum: t.digest?,
            },
            table_digest: t.table_digest?,
        })
    }
}

/// Read the whole file table: header, ids 0..N in order, trailer; `each`
/// sees every record's (id, size, content, escaped path).
pub(super) fn read_file_table(
    path: &Path,
    mut each: impl FnMut(u32, u64, u128, &[u8]) -> Result<()>,
) -> Result<FileTable> {
    let (r, name) = open_input(path)?;
    let mut lines = FastLines::new(r, name);
    let mut params = None;
    let mut files = 0u64;
    let mut trailer = None;
    let (mut table, mut trailer_at) = (TableDigest::default(), 0u64);
    while let Some((line, at)) = lines.next_line_at()? {
        if line.first() == Some(&b'#') {
            match classify_line(line).map_err(|m| at.error(m))? {
                Line::Header(Kind::Files, p) if params.is_none() && files == 0 => params = Some(p),
                Line::Header(Kind::Files, _) => {
                    return Err(lines.error("a second file-table header: one file table expected"))
                }
                Line::Header(k, _) => {
                    return Err(lines.error(format!(
                        "this is a {} file (written by {}), expected a files table (written by {})",
                        k.as_str(),
                        k.producer(),
                        Kind::Files.producer()
                    )))
                }
                Line::Trailer(Kind::Files, p) => {
                    trailer = Some(p);
                    trailer_at = lines.line_number();
                }
                Line::Trailer(k, _) => {
                    return Err(
                        lines.error(format!("trailer of a {} file in a files table", k.as_str()))
                    )
                }
                _ => {}
            }
            continue;
        }
        if params.is_none() {
            return Err(lines.error("no '#fsim files v4' header: expected a file table written by fsim-chunk --files-out"));
        }
        if trailer.is_some() {
            return Err(lines.error("record after the trailer"));
        }
        table.add_line(line);
        let (id, size, content, path) = parse_file_line(line).map_err(|m| at.error(m))?;
        if id as u64 != files {
            return Err(lines.error(format!(
                "file id {id} out of order: expected {files} (ids are 0, 1, 2... in order)"
            )));
        }
        each(id, size, content, path)?;
        files += 1;
    }
    let line = lines.line_number();
    let name = lines.name().to_string();
    let params = params.ok_or_else(|| {
        Error::input(
            &name,
            line,
            "no '#fsim files v4' header: expected a file table written by fsim-chunk --files-out",
        )
    })?;
    let t = trailer.ok_or_else(|| {
        Error::input(
            &name,
            line,
            "no '#end files' trailer: the file table is truncated",
        )
    })?;
    let ends = FilesTrailer::parse(&t).map_err(|m| Error::input(&name, trailer_at, m))?;
    if ends.files != Some(files) {
        return Err(Error::input(&name, line, format!("{files} files read but the trailer announced {}: the file table is truncated or was edited", ends.files.map_or("none".into(), |n| n.to_string()))));
    }
    let count = ends
        .records
        .ok_or_else(|| Error::input(&name, line, "trailer without records="))?;
    let sum = ends
        .digest
        .ok_or_else(|| Error::input(&name, line, "trailer without digest="))?;
    if files > u32::MAX as u64 + 1 {
        return Err(Error::input(&name, line, "more than 2^32 files"));
    }
    table
        .check(&t)
        .map_err(|m| Error::input(&name, trailer_at, m))?;
    Ok(FileTable {
        name,
        params,
        files,
        chunk_digest: Digest { count, sum },
        table_digest: table.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The path is the last field of a v2 (six fields), a v3 (eight) and a
    /// v4 (nine) record; any other count is refused.
    #[test]
    fn file_lines_of_v2_v3_and_v4() {
        let h = "d41d8cd98f00b204e9800998ecf8427e";
        let v2 = format!("0000000007\t5\t1.000000000\t{h}\ttext\ta b.txt");
        let v3 = format!("0000000007\t5\t1.000000000\t{h}\ttext\tgzip\t40\ta b.txt");
        let v4 = format!("0000000007\t5\t1.000000000\t{h}\ttext\tgzip\t40\t{h}\ta b.txt");
        for l in [v2, v3, v4] {
            let (id, size, content, path) = parse_file_line(l.as_bytes()).unwrap();
            assert_eq!((id, size, path), (7, 5, &b"a b.txt"[..]));
            assert_eq!(content, 0xd41d8cd98f00b204e9800998ecf8427e);
        }
        let seven = format!("0000000007\t5\t1.000000000\t{h}\ttext\tgzip\ta.txt");
        assert!(parse_file_line(seven.as_bytes()).is_err());
    }
}
