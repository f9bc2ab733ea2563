//! Collections in a file table (`fsim-merge`, paper section 4): one
//! comment line per collection after the header,
//! `#collection<TAB><name><TAB><first id><TAB><files><TAB><escaped source>`,
//! naming which file ids came from which collection.

use crate::error::Result;
use crate::formats::lines::{open_input, LineReader};
use crate::formats::numbers::parse_u64;
use std::path::Path;

/// One collection of a merged file table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collection {
    pub name: String,
    /// First file id and number of files: ids first..first+files.
    pub first: u32,
    pub files: u32,
    /// Where it came from (the input file table, escaped), informational.
    pub source: String,
}

impl Collection {
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(
            format!(
                "#collection\t{}\t{}\t{}\t{}\n",
                self.name, self.first, self.files, self.source
            )
            .as_bytes(),
        );
    }

    pub fn parse(line: &[u8]) -> std::result::Result<Collection, String> {
        let rest = line
            .strip_prefix(b"#collection\t")
            .ok_or("not a collection line")?;
        let f: Vec<&[u8]> = rest.splitn(4, |&c| c == b'\t').collect();
        let bad = || "expected #collection, name, first id, files and source separated by tabs";
        if f.len() != 4 {
            return Err(bad().into());
        }
        let num = |x: &[u8]| parse_u64(x).and_then(|v| u32::try_from(v).ok());
        Ok(Collection {
            name: String::from_utf8(f[0].to_vec()).map_err(|_| bad())?,
            first: num(f[1]).ok_or_else(bad)?,
            files: num(f[2]).ok_or_else(bad)?,
            source: String::from_utf8(f[3].to_vec()).map_err(|_| bad())?,
        })
    }
}

/// Check a collection name: letters, digits, `-`, `_`, `.`; not empty.
pub fn check_name(name: &str) -> std::result::Result<(), String> {
    if !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    {
        Ok(())
    } else {
        Err(format!(
            "collection name {name:?}: use letters, digits, '-', '_' or '.'"
        ))
    }
}

/// The collections recorded in a file table (empty when none). Reads the
/// comment lines only; the table's records are checked by its other reader.
pub fn read(path: &Path) -> Result<Vec<Collection>> {
    if path.as_os_str() == "-" {
        return Ok(Vec::new());
    }
    let (input, name) = open_input(path)?;
    let mut r = LineReader::new(input, name.clone());
    let mut out = Vec::new();
    while let Some(raw) = r.next_raw()? {
        if raw.starts_with(b"#collection\t") {
            let c = Collection::parse(raw).map_err(|m| r.error(m))?;
            out.push(c);
        } else if raw.first() != Some(&b'#') {
            // Collection lines come right after the header.
            break;
        }
    }
    Ok(out)
}

/// Index of each file's collection (0 for all when there are none).
pub fn of_files(cols: &[Collection], files: usize) -> std::result::Result<Vec<usize>, String> {
    let mut v = vec![usize::MAX; files];
    if cols.is_empty() {
        v.fill(0);
        return Ok(v);
    }
    for (i, c) in cols.iter().enumerate() {
        let end = c.first as usize + c.files as usize;
        if end > files {
            return Err(format!(
                "collection {} holds ids up to {} but the file table has {files} files",
                c.name,
                end - 1
            ));
        }
        for slot in &mut v[c.first as usize..end] {
            *slot = i;
        }
    }
    if let Some(id) = v.iter().position(|&c| c == usize::MAX) {
        return Err(format!("file id {id} is in no collection"));
    }
    Ok(v)
}
