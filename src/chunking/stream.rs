//! The stream types every chunking method shares: [`Piece`] (a chunk's
//! MD5 and length, before the file has an id), [`StreamInfo`] (what reading
//! a stream gave: size, content hash, type), [`fill`] and the buffer sizes.
//! The chunkers, the feature methods, the parallel hashing
//! ([`crate::chunking::parhash`]) and the reader ([`crate::chunking::reader`])
//! all take them from here.

use crate::formats::{self, FileType};
use md5::{Digest as _, Md5};
use std::io::{self, Read};

/// Bytes read per `read` call at most (and the minimum buffer size).
pub const BLOCK: usize = 1 << 20;

/// Bytes of the start of a file used to classify it.
pub const HEAD: usize = 8 << 10;

/// One chunk of a file before it has an id: (MD5 as u128, length).
pub type Piece = (u128, u32);

/// What reading one stream gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamInfo {
    /// Bytes read.
    pub size: u64,
    /// MD5 over the concatenated chunk digests.
    pub content: u128,
    pub ftype: FileType,
}

/// Read into `buf` until it is full or the stream ends: (bytes read, end
/// reached). Short reads and EINTR are retried, so a block boundary never
/// depends on how the kernel split the reads.
pub(crate) fn fill(r: &mut impl Read, buf: &mut [u8]) -> io::Result<(usize, bool)> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => return Ok((filled, true)),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((filled, false))
}

impl StreamInfo {
    /// The info of a stream read to its end: `size` bytes, the MD5 over its
    /// chunk digests, the type seen in its first block (none: empty).
    pub(crate) fn finish(size: u64, content: Md5, ftype: Option<FileType>) -> StreamInfo {
        let ftype = if size == 0 {
            FileType::Empty
        } else {
            ftype.unwrap_or(FileType::Binary)
        };
        StreamInfo {
            size,
            content: formats::digest_to_u128(&content.finalize()),
            ftype,
        }
    }
}
