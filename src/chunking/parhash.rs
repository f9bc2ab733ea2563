//! Chunking one large stream on several cores (used by `fsim-chunk` for
//! large files): MD5 (~760 MB/s per core) costs four times the boundary
//! search (~3 GB/s), so one thread reads and cuts while `hashers` threads
//! hash the chunks, block by block, and the results are put back in order.
//! The output is exactly that of [`crate::chunking::reader::chunk_stream`]: the cut
//! points do not depend on the buffering, and the pieces and the content
//! hash are assembled in stream order.
//!
//! # Memory
//!
//! `2 × (hashers + 1)` blocks of [`PAR_BLOCK`] bytes (plus one maximal
//! chunk carried over from block to block) are in flight at most: about
//! 12 MiB with two hashers. Buffers and cut lists are reused, not allocated
//! per block.

use crate::chunking::chunker::{Chunker, Cut};
use crate::chunking::stream::{Piece, StreamInfo, HEAD};
use crate::formats::FileType;
use crate::io::ordered::ordered_map;
use md5::{Digest as _, Md5};
use std::cell::RefCell;
use std::io::{self, Read};

/// Bytes read per block (the unit of work of a hasher): large enough that
/// hand-over costs nothing next to ~1.3 ms of MD5 per MiB.
pub const PAR_BLOCK: usize = 1 << 20;

/// A block on its way: bytes, chunk (start, len) within them, and the
/// digests once hashed.
struct Block {
    buf: Vec<u8>,
    cuts: Vec<(u32, u32)>,
    digests: Vec<u128>,
}

/// Chunk a whole stream like [`crate::chunking::reader::chunk_stream`], hashing the
/// chunks on `hashers` threads while this one reads and cuts: the ordered
/// work queue of [`crate::io::ordered`], with `2 × (hashers + 1)` blocks in
/// flight, whose buffers go back to a free list once their pieces are
/// appended. On an error, `pieces` holds a partial list: the caller drops
/// it.
pub fn chunk_stream_par(
    r: &mut impl Read,
    chunker: &Chunker,
    hashers: usize,
    pieces: &mut Vec<Piece>,
    block_done: &mut dyn FnMut(&mut Vec<Piece>) -> io::Result<()>,
) -> io::Result<StreamInfo> {
    let mut states = vec![(); hashers.max(1)];
    let window = 2 * (states.len() + 1);
    let free = RefCell::new(Vec::<Block>::with_capacity(window));
    let mut cutter = Cutter::new(chunker);
    let mut content = Md5::new();
    ordered_map(
        &mut states,
        window,
        |_, mut b: Block| {
            b.digests.clear();
            let buf = &b.buf;
            let msgs = b
                .cuts
                .iter()
                .map(|&(start, len)| &buf[start as usize..start as usize + len as usize]);
            crate::chunking::md5batch::digest_many(msgs, &mut b.digests);
            b
        },
        || {
            // At most `window` blocks exist: one is free, or fewer than
            // `window` are in flight and a new one may be made.
            let b = free.borrow_mut().pop();
            cutter.next_block(r, b)
        },
        |b: Block| {
            for (&d, &(_, len)) in b.digests.iter().zip(&b.cuts) {
                content.update(d.to_be_bytes());
                pieces.push((d, len));
            }
            free.borrow_mut().push(b);
            block_done(pieces)
        },
    )?;
    Ok(StreamInfo::finish(cutter.size, content, cutter.ftype))
}

/// The reading and cutting side of [`chunk_stream_par`]: fills blocks and
/// finds their cuts, carrying an unfinished chunk over to the next block.
struct Cutter<'a> {
    chunker: &'a Chunker,
    /// A block's buffer: one [`PAR_BLOCK`] and a carried-over chunk.
    cap: usize,
    size: u64,
    ftype: Option<FileType>,
    eof: bool,
    /// Bytes carried over from the previous block (an unfinished chunk).
    carry: Vec<u8>,
}

impl<'a> Cutter<'a> {
    fn new(chunker: &'a Chunker) -> Self {
        Cutter {
            chunker,
            cap: PAR_BLOCK.max(2 * chunker.max_len()) + chunker.max_len(),
            size: 0,
            ftype: None,
            eof: false,
            carry: Vec::with_capacity(chunker.max_len()),
        }
    }

    /// The next block of the stream, read into `reuse` (or a new buffer),
    /// with its cuts; `None` after the last.
    fn next_block(&mut self, r: &mut impl Read, reuse: Option<Block>) -> io::Result<Option<Block>> {
        if self.eof {
            return Ok(None);
        }
        let mut b = reuse.unwrap_or_else(|| Block {
            buf: vec![0u8; self.cap],
            cuts: Vec::new(),
            digests: Vec::new(),
        });
        b.buf[..self.carry.len()].copy_from_slice(&self.carry);
        let mut filled = self.carry.len();
        let want = filled + PAR_BLOCK.min(self.cap - filled);
        let (n, end) = crate::chunking::stream::fill(r, &mut b.buf[filled..want])?;
        filled += n;
        self.size += n as u64;
        self.eof = end;
        if self.ftype.is_none() {
            self.ftype = Some(FileType::classify(&b.buf[..filled.min(HEAD)], self.size));
        }
        b.cuts.clear();
        let mut pos = 0usize;
        while let Some(len) = self.chunker.cut(&b.buf[pos..filled], self.eof) {
            b.cuts.push((pos as u32, len as u32));
            pos += len;
        }
        self.carry.clear();
        self.carry.extend_from_slice(&b.buf[pos..filled]);
        Ok(Some(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunking::chunker::Method;
    use crate::chunking::reader::chunk_stream;
    use crate::chunking::reader::read_buffer;

    /// A reader that returns odd-sized pieces.
    struct Odd<'a>(&'a [u8], usize);
    impl Read for Odd<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.1 = (self.1 * 7 + 3) % 70000 + 1;
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn same_pieces_as_one_thread() {
        for (method, avg, len) in [
            (Method::Tttd, 1000, 5 << 20),
            (Method::Tttd, 100, 3 << 20),
            (Method::Bsw, 1000, (2 << 20) + 17),
            (Method::Tttd, 1000, 10),
            (Method::Tttd, 1000, 0),
        ] {
            let data = crate::chunking::chunker::pseudo_text(len, 5);
            let c = Chunker::new(method, avg).unwrap();
            let mut buf = read_buffer(&c);
            let mut want = Vec::new();
            let wi = chunk_stream(&mut &data[..], &c, &mut buf, &mut want).unwrap();
            for hashers in [1, 3] {
                let mut got = Vec::new();
                let gi =
                    chunk_stream_par(&mut Odd(&data, 1), &c, hashers, &mut got, &mut |_| Ok(()))
                        .unwrap();
                assert_eq!(got, want, "{method} {avg} {len} {hashers}");
                assert_eq!(gi, wi);
            }
        }
    }

    #[test]
    fn read_error_is_returned() {
        struct Fails(usize);
        impl Read for Fails {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("boom"));
                }
                self.0 -= 1;
                let n = out.len().min(100_000);
                out[..n].fill(b'a');
                Ok(n)
            }
        }
        let c = Chunker::new(Method::Tttd, 1000).unwrap();
        let mut got = Vec::new();
        let e = chunk_stream_par(&mut Fails(50), &c, 2, &mut got, &mut |_| Ok(())).unwrap_err();
        assert_eq!(e.to_string(), "boom");
    }
}
