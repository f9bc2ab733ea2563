//! Tokens: how a pair's files are cut (lines, long lines cut in pieces
//! ([`long_lines`]), or content-defined pieces for binary files), each token kept as its hash and
//! start offset so that a cached file costs 24 bytes per token.

use super::*;
use crate::chunking::chunker::{Chunker, Cut, Method};
use crate::formats::FileType;
use long_lines::for_each_line_token;

/// How a pair's files are cut into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Lines (long lines cut into pieces, [`long_lines`]).
    Lines,
    /// Content-defined pieces of the whole file.
    Pieces,
}

impl Mode {
    /// Lines when both files are text (or empty), pieces otherwise: both
    /// files of a pair must be cut the same way.
    pub fn of(a: FileType, b: FileType) -> Mode {
        let text = |t| matches!(t, FileType::Text | FileType::Empty);
        if text(a) && text(b) {
            Mode::Lines
        } else {
            Mode::Pieces
        }
    }
}

/// A file cut into tokens: the hash of each token and where it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokens {
    pub hashes: Vec<u128>,
    /// Start offset of each token, plus the file size at the end.
    pub starts: Vec<u64>,
    /// The bytes themselves, for binary files only (pieces): the byte
    /// measure extends matched pieces into them, and keeping them with the
    /// tokens spares a second read of a cached file.
    pub data: Vec<u8>,
}

impl Tokens {
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Bytes of tokens `i..i + n`.
    #[inline]
    pub fn bytes(&self, i: usize, n: usize) -> u64 {
        self.starts[i + n] - self.starts[i]
    }

    /// Approximate heap bytes, for the cache budget.
    pub fn mem(&self) -> u64 {
        (self.hashes.capacity() * 16 + self.starts.capacity() * 8 + self.data.capacity() + 64)
            as u64
    }

    pub(super) fn push(&mut self, data: &[u8], start: usize, end: usize) {
        self.hashes
            .push(xxhash_rust::xxh3::xxh3_128(&data[start..end]));
        self.starts.push(end as u64);
    }
}

/// The piece chunker (TTTD, average [`PIECE_AVG`]).
pub fn piece_chunker() -> Chunker {
    Chunker::new(Method::Tttd, PIECE_AVG).expect("PIECE_AVG is a valid average")
}

/// Cut `data` into tokens for `mode`.
pub fn tokenize(data: &[u8], mode: Mode, pieces: &Chunker) -> Tokens {
    let mut t = Tokens::default();
    tokenize_into(data, mode, pieces, &mut t);
    t
}

/// [`tokenize`] into `t`, reusing its buffers: the workers tokenize every
/// file into recycled [`Tokens`], so the hot loop allocates nothing once
/// the buffers have grown to the largest file seen.
pub fn tokenize_into(data: &[u8], mode: Mode, pieces: &Chunker, t: &mut Tokens) {
    t.hashes.clear();
    t.starts.clear();
    t.starts.push(0);
    t.data.clear();
    match mode {
        Mode::Pieces => {
            t.data.extend_from_slice(data);
            t.hashes.reserve(data.len() / PIECE_AVG + 1);
            t.starts.reserve(data.len() / PIECE_AVG + 1);
            for c in pieces.chunks(data) {
                t.push(data, c.offset, c.offset + c.len);
            }
        }
        Mode::Lines => {
            t.hashes.reserve(data.len() / 32 + 1);
            t.starts.reserve(data.len() / 32 + 1);
            for_each_line_token(data, |s, e| t.push(data, s, e));
        }
    }
}
