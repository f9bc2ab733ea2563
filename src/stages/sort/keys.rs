//! What the external sort orders: fixed-size binary records
//! ([`FixedRecord`]: chunk keys, pair records), and the fast conversion of
//! a canonical chunk record line to a key and back. The sorter
//! (`super`) and its resume journal ([`super::resume`]) both use these.

use crate::formats::{ChunkRecord, HASH_WIDTH, ID_WIDTH};
use std::cmp::Ordering;

// ---------------------------------------------------------------------------
// Fixed-size records
// ---------------------------------------------------------------------------

pub use crate::io::sorter::FixedRecord;
use crate::io::sorter::{le_u32, le_u64};

/// A chunk record as the sort sees it: 24 bytes (a `u128` field would align
/// to 16 and take 32), ordered exactly as `LC_ALL=C sort` orders the text
/// line: hash, file id (both fixed width, so numeric order is byte order),
/// then the length compared **as a decimal string** ("12" < "119" < "12x").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkKey {
    pub hi: u64,
    pub lo: u64,
    pub file: u32,
    pub len: u32,
}

impl ChunkKey {
    #[inline]
    pub fn hash(&self) -> u128 {
        ((self.hi as u128) << 64) | self.lo as u128
    }

    #[inline]
    pub fn record(&self) -> ChunkRecord {
        ChunkRecord {
            hash: self.hash(),
            file: self.file,
            len: self.len,
        }
    }
}

impl From<ChunkRecord> for ChunkKey {
    #[inline]
    fn from(r: ChunkRecord) -> Self {
        ChunkKey {
            hi: (r.hash >> 64) as u64,
            lo: r.hash as u64,
            file: r.file,
            len: r.len,
        }
    }
}

/// Compare two numbers as their decimal strings compare bytewise.
#[inline]
pub fn cmp_decimal_strings(a: u32, b: u32) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let da = decimal_digits(a);
    let db = decimal_digits(b);
    let n = da.max(db);
    let sa = a as u64 * 10u64.pow(n - da);
    let sb = b as u64 * 10u64.pow(n - db);
    // Equal after padding: one is a prefix of the other, the shorter first.
    sa.cmp(&sb).then(da.cmp(&db))
}

#[inline]
fn decimal_digits(v: u32) -> u32 {
    if v == 0 {
        1
    } else {
        v.ilog10() + 1
    }
}

impl Ord for ChunkKey {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        (self.hi, self.lo, self.file)
            .cmp(&(o.hi, o.lo, o.file))
            .then_with(|| cmp_decimal_strings(self.len, o.len))
    }
}

impl PartialOrd for ChunkKey {
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl FixedRecord for ChunkKey {
    const SIZE: usize = 24;
    #[inline]
    fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.hi.to_le_bytes());
        out[8..16].copy_from_slice(&self.lo.to_le_bytes());
        out[16..20].copy_from_slice(&self.file.to_le_bytes());
        out[20..24].copy_from_slice(&self.len.to_le_bytes());
    }
    #[inline]
    fn decode(b: &[u8]) -> Self {
        ChunkKey {
            hi: le_u64(b, 0),
            lo: le_u64(b, 8),
            file: le_u32(b, 16),
            len: le_u32(b, 20),
        }
    }
}

/// A file pair with a byte count (16 bytes), ordered by (a, b, bytes): the
/// record `fsim-analyze` sorts out of core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PairRecord {
    pub a: u32,
    pub b: u32,
    pub bytes: u64,
}

impl FixedRecord for PairRecord {
    const SIZE: usize = 16;
    #[inline]
    fn encode(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.a.to_le_bytes());
        out[4..8].copy_from_slice(&self.b.to_le_bytes());
        out[8..16].copy_from_slice(&self.bytes.to_le_bytes());
    }
    #[inline]
    fn decode(b: &[u8]) -> Self {
        PairRecord {
            a: le_u32(b, 0),
            b: le_u32(b, 4),
            bytes: le_u64(b, 8),
        }
    }
}

// ---------------------------------------------------------------------------
// Fast text conversion
// ---------------------------------------------------------------------------

/// Parse a chunk record line (without newline) into a [`ChunkKey`], only
/// when it is in canonical form (the form [`ChunkRecord::write`] writes:
/// lowercase hex, 10-digit id, length without leading zeros), so that
/// formatting the key gives back the very same bytes.
#[inline]
pub fn parse_chunk_line(line: &[u8]) -> Option<ChunkKey> {
    const ID_AT: usize = HASH_WIDTH + 1;
    const LEN_AT: usize = HASH_WIDTH + ID_WIDTH + 2;
    if line.len() < LEN_AT + 1
        || line.len() > LEN_AT + 10
        || line[HASH_WIDTH] != b'\t'
        || line[LEN_AT - 1] != b'\t'
    {
        return None;
    }
    let hash = crate::formats::parse_hex128(&line[..HASH_WIDTH])?;
    let file = crate::formats::parse_id(&line[ID_AT..ID_AT + ID_WIDTH])?;
    let lens = &line[LEN_AT..];
    if lens[0] == b'0' && lens.len() > 1 {
        return None;
    }
    let mut len = 0u64;
    for &c in lens {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        len = len * 10 + d as u64;
    }
    Some(ChunkKey {
        hi: (hash >> 64) as u64,
        lo: hash as u64,
        file,
        len: u32::try_from(len).ok()?,
    })
}

/// Longest formatted chunk line: 32 + 1 + 10 + 1 + 10 + newline.
pub const MAX_CHUNK_LINE: usize = 55;

/// Format a key as its text line (with newline) into `out`; returns the
/// length. The inverse of [`parse_chunk_line`]; same bytes as
/// [`ChunkRecord::write`], without bounds-checked pushes.
#[inline]
pub fn format_chunk_line(k: &ChunkKey, out: &mut [u8; 64]) -> usize {
    let hb = k.hi.to_be_bytes();
    let lb = k.lo.to_be_bytes();
    for i in 0..8 {
        out[2 * i..2 * i + 2].copy_from_slice(&crate::formats::HEX_PAIRS[hb[i] as usize]);
        out[16 + 2 * i..16 + 2 * i + 2].copy_from_slice(&crate::formats::HEX_PAIRS[lb[i] as usize]);
    }
    out[32] = b'\t';
    let mut f = k.file;
    for i in (0..5).rev() {
        out[33 + 2 * i..35 + 2 * i].copy_from_slice(&crate::formats::DEC_PAIRS[(f % 100) as usize]);
        f /= 100;
    }
    out[43] = b'\t';
    let n = decimal_digits(k.len) as usize;
    let mut v = k.len;
    let mut i = 44 + n;
    while v >= 100 {
        i -= 2;
        out[i..i + 2].copy_from_slice(&crate::formats::DEC_PAIRS[(v % 100) as usize]);
        v /= 100;
    }
    if v >= 10 {
        i -= 2;
        out[i..i + 2].copy_from_slice(&crate::formats::DEC_PAIRS[v as usize]);
    } else {
        i -= 1;
        out[i] = b'0' + v as u8;
    }
    debug_assert_eq!(i, 44);
    out[44 + n] = b'\n';
    45 + n
}
