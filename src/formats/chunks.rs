//! Chunk records (`chunks.tsv`, `sorted.tsv`): hash, file id, length; and
//! the order-independent [`Digest`] that every trailer carries.

use crate::formats::numbers::{
    hex128_into, parse_hex128, parse_id, parse_u64, write_hex128, write_id, write_u64, HASH_WIDTH,
    ID_WIDTH,
};

/// One chunk (or feature) of one file: `<hash>\t<file id>\t<length>`.
///
/// `len` is the chunk's byte length for the chunking methods (the weight of
/// the feature for the others). A chunk that occurs twice in a file gives
/// two identical records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkRecord {
    pub hash: u128,
    pub file: u32,
    pub len: u32,
}

/// The chunk records of one file, formatted with the part that is the same
/// for all of them (`\t`, the file id, `\t`) made once: the same bytes as
/// [`ChunkRecord::write`], for the chunk stage's writer.
pub struct ChunkLines {
    mid: [u8; ID_WIDTH + 2],
}

impl ChunkLines {
    pub fn new(file: u32) -> ChunkLines {
        let mut v = Vec::with_capacity(ID_WIDTH + 2);
        v.push(b'\t');
        write_id(file, &mut v);
        v.push(b'\t');
        let mut mid = [0u8; ID_WIDTH + 2];
        mid.copy_from_slice(&v);
        ChunkLines { mid }
    }

    /// Append the record of a chunk of this file.
    #[inline]
    pub fn write(&self, hash: u128, len: u32, out: &mut Vec<u8>) {
        const AT: usize = HASH_WIDTH + ID_WIDTH + 2;
        // Hash, id, at most 10 digits of length, newline.
        let mut line = [0u8; AT + 11];
        let (hex, rest) = line.split_at_mut(HASH_WIDTH);
        hex128_into(hash, hex.try_into().expect("32 bytes"));
        rest[..ID_WIDTH + 2].copy_from_slice(&self.mid);
        let digits = if len < 10 {
            1
        } else if len < 100 {
            2
        } else if len < 1000 {
            3
        } else {
            (len.ilog10() + 1) as usize
        };
        let mut v = len;
        for slot in line[AT..AT + digits].iter_mut().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
        }
        line[AT + digits] = b'\n';
        out.extend_from_slice(&line[..AT + digits + 1]);
    }
}

impl ChunkRecord {
    pub const EXPECTED: &'static str =
        "a chunk record: 32 lowercase hex digits, a tab, a 10-digit file id, a tab, a length";

    #[inline]
    pub fn write(&self, out: &mut Vec<u8>) {
        write_hex128(self.hash, out);
        out.push(b'\t');
        write_id(self.file, out);
        out.push(b'\t');
        write_u64(self.len as u64, out);
        out.push(b'\n');
    }

    /// Parse one line without its newline.
    #[inline]
    pub fn parse(line: &[u8]) -> Option<ChunkRecord> {
        if line.len() < HASH_WIDTH + 1 + ID_WIDTH + 2
            || line[HASH_WIDTH] != b'\t'
            || line[HASH_WIDTH + 1 + ID_WIDTH] != b'\t'
        {
            return None;
        }
        let hash = parse_hex128(&line[..HASH_WIDTH])?;
        let file = parse_id(&line[HASH_WIDTH + 1..HASH_WIDTH + 1 + ID_WIDTH])?;
        let len = parse_u64(&line[HASH_WIDTH + ID_WIDTH + 2..])?;
        Some(ChunkRecord {
            hash,
            file,
            len: u32::try_from(len).ok()?,
        })
    }

    /// The contribution of this record to a stream digest (see [`Digest`]).
    #[inline]
    pub fn mix(&self) -> u128 {
        mix128(self.hash ^ ((self.file as u128) << 96) ^ ((self.len as u128) << 64))
    }
}

/// A cheap bijective mixer so that the digest of a multiset of records is
/// sensitive to each field.
#[inline]
pub fn mix128(x: u128) -> u128 {
    const K1: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;
    const K2: u128 = 0xd6e8_feb8_6659_fd93_a0f4_3b2b_7bd2_2e41;
    let x = x.wrapping_mul(K1);
    let x = x ^ (x >> 67);
    x.wrapping_mul(K2)
}

/// An order-independent digest of a multiset of records (wrapping sum of
/// their mixes) plus their count. A sorted file has the same digest as the
/// unsorted one, so each stage can check that it saw exactly the records its
/// producer wrote, even after `LC_ALL=C sort`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Digest {
    pub count: u64,
    pub sum: u128,
}

impl Digest {
    #[inline]
    pub fn add(&mut self, r: &ChunkRecord) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(r.mix());
    }

    #[inline]
    pub fn add_mix(&mut self, m: u128) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(m);
    }

    pub fn merge(&mut self, o: &Digest) {
        self.count += o.count;
        self.sum = self.sum.wrapping_add(o.sum);
    }
}
