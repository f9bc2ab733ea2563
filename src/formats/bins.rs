//! The `F` lines of the partition and bins files (a file, its component,
//! size and content hash), and the memory model of a bin that fsim-binpack
//! packs by and fsim-analyze checks against its capacity.

use crate::formats::chunks::ChunkRecord;
use crate::formats::numbers::{
    parse_hex128, parse_id, parse_u64, split_fields, write_hex128, write_id, write_u64,
};

/// Bytes per chunk record: one (file, occurrences) entry in the chunk → files
/// array and one (chunk, occurrences) entry in the file → chunks array, 8
/// bytes each. Records of collapsed copies are not stored, so this is an
/// upper bound.
pub const BYTES_PER_RECORD: u64 = 16;

/// Bytes per chunk (hash group): its offset and its length, 4 bytes each.
pub const BYTES_PER_CHUNK: u64 = 8;

/// Bytes per file: id (4), size (8), representative (4), offset and fill
/// cursor in the file → chunks array (8), the content-hash table used to
/// collapse copies (~40 with the hash map's load factor), the index from
/// file id to the bin's file (at most 8: fsim-analyze's
/// `BinFiles::index_ids`), and per thread the bytes (8) and chunks (4)
/// each file shares with the file being compared (budgeted for 8 threads:
/// 96).
pub const BYTES_PER_FILE: u64 = 168;

/// Estimated peak memory of fsim-analyze's in-memory path for a bin (or a
/// component) of `files` files, `records` chunk records and `chunks`
/// distinct chunks. Fixed costs (I/O buffers, ~4 MB) and the pairs found are
/// not included: they do not grow with the bin. Checked against measured
/// peak RSS in docs/performance.md.
pub fn estimate_memory(files: u64, records: u64, chunks: u64) -> u64 {
    files * BYTES_PER_FILE + records * BYTES_PER_RECORD + chunks * BYTES_PER_CHUNK
}

/// One `F` line of a partition or bins file:
/// `F\t<file id>\t<component>\t<size>\t<content hash>[\t<features>]`
/// (the sixth field for feature methods only: the file's distinct features).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLine {
    pub id: u32,
    pub component: u32,
    pub size: u64,
    pub content: u128,
    pub features: Option<u32>,
}

impl FileLine {
    pub const EXPECTED: &'static str =
        "an F line: F, file id, component, size and content hash separated by tabs";

    pub fn parse(line: &[u8]) -> std::result::Result<FileLine, String> {
        let (line, features) = match split_fields::<6>(line) {
            Some(f) => {
                let n = parse_u64(f[5])
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or("expected a feature count in field 6 of the F line")?;
                (&line[..line.len() - f[5].len() - 1], Some(n))
            }
            None => (line, None),
        };
        let [f, id, comp, size, content] =
            split_fields::<5>(line).ok_or_else(|| format!("expected {}", Self::EXPECTED))?;
        if f != b"F" {
            return Err(format!("expected {}", Self::EXPECTED));
        }
        Ok(FileLine {
            id: parse_id(id).ok_or("expected a 10-digit file id in field 2 of the F line")?,
            component: parse_id(comp)
                .ok_or("expected a 10-digit component id in field 3 of the F line")?,
            size: parse_u64(size).ok_or("expected a size in bytes in field 4 of the F line")?,
            content: parse_hex128(content)
                .ok_or("expected a 32-digit lowercase hex content hash in field 5 of the F line")?,
            features,
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"F\t");
        write_id(self.id, out);
        out.push(b'\t');
        write_id(self.component, out);
        out.push(b'\t');
        write_u64(self.size, out);
        out.push(b'\t');
        write_hex128(self.content, out);
        if let Some(n) = self.features {
            out.push(b'\t');
            write_u64(n as u64, out);
        }
        out.push(b'\n');
    }
}

/// One `C` line of a components table (`fsim-partition --merge-forests
/// --components-out`, read by `fsim-binpack --components`):
/// `C\t<id>\t<files>\t<records>\t<chunks>`, the id being the component's
/// smallest file id, records its kept records and chunks its kept chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComponentLine {
    pub id: u32,
    pub files: u64,
    pub records: u64,
    pub chunks: u64,
}

impl ComponentLine {
    pub const EXPECTED: &'static str = "expected C<TAB>id<TAB>files<TAB>records<TAB>chunks";

    pub fn parse(line: &[u8]) -> std::result::Result<ComponentLine, &'static str> {
        let f = split_fields::<5>(line).ok_or(Self::EXPECTED)?;
        let n = |i: usize| parse_u64(f[i]).ok_or(Self::EXPECTED);
        if f[0] != b"C" {
            return Err(Self::EXPECTED);
        }
        Ok(ComponentLine {
            id: u32::try_from(n(1)?).map_err(|_| Self::EXPECTED)?,
            files: n(2)?,
            records: n(3)?,
            chunks: n(4)?,
        })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"C\t");
        for (i, v) in [self.id as u64, self.files, self.records, self.chunks]
            .into_iter()
            .enumerate()
        {
            if i > 0 {
                out.push(b'\t');
            }
            write_u64(v, out);
        }
        out.push(b'\n');
    }
}

/// A chunk record among the `F` lines of a partition or bins file (the
/// message says both are expected).
pub fn parse_record(raw: &[u8]) -> std::result::Result<ChunkRecord, String> {
    ChunkRecord::parse(raw)
        .ok_or_else(|| format!("expected {} or an F line", ChunkRecord::EXPECTED))
}
