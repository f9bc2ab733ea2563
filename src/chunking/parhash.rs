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
use md5::{Digest as _, Md5};
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::mpsc::{channel, sync_channel};
use std::sync::Mutex;

/// Bytes read per block (the unit of work of a hasher): large enough that
/// hand-over costs nothing next to ~1.3 ms of MD5 per MiB.
pub const PAR_BLOCK: usize = 1 << 20;

/// A block on its way: sequence number, bytes, chunk (start, len) within
/// them, and the digests once hashed.
struct Block {
    seq: u64,
    buf: Vec<u8>,
    cuts: Vec<(u32, u32)>,
    digests: Vec<u128>,
}

/// Chunk a whole stream like [`crate::chunking::reader::chunk_stream`], hashing the
/// chunks on `hashers` threads while this one reads and cuts. On an error,
/// `pieces` holds a partial list: the caller drops it.
pub fn chunk_stream_par(
    r: &mut impl Read,
    chunker: &Chunker,
    hashers: usize,
    pieces: &mut Vec<Piece>,
    block_done: &mut dyn FnMut(&mut Vec<Piece>) -> io::Result<()>,
) -> io::Result<StreamInfo> {
    let hashers = hashers.max(1);
    let cap = PAR_BLOCK.max(2 * chunker.max_len()) + chunker.max_len();
    let nbufs = 2 * (hashers + 1);
    let (job_tx, job_rx) = sync_channel::<Block>(nbufs);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = channel::<Block>();
    std::thread::scope(|s| {
        for _ in 0..hashers {
            let done_tx = done_tx.clone();
            let job_rx = &job_rx;
            s.spawn(move || loop {
                let job = job_rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
                let Ok(mut b) = job else { return };
                b.digests.clear();
                let buf = &b.buf;
                let msgs = b
                    .cuts
                    .iter()
                    .map(|&(start, len)| &buf[start as usize..start as usize + len as usize]);
                crate::chunking::md5batch::digest_many(msgs, &mut b.digests);
                if done_tx.send(b).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let res = cut_and_collect(
            r,
            chunker,
            (cap, nbufs),
            (&job_tx, &done_rx),
            pieces,
            block_done,
        );
        // Hashers stop when the job channel closes; results still queued
        // are dropped with `done_rx`.
        drop(job_tx);
        res
    })
}

/// The reading and cutting side of [`chunk_stream_par`]: fills blocks, finds
/// their cuts, sends them to the hashers, and appends finished blocks'
/// pieces in order.
fn cut_and_collect(
    r: &mut impl Read,
    chunker: &Chunker,
    (cap, nbufs): (usize, usize),
    (job_tx, done_rx): (
        &std::sync::mpsc::SyncSender<Block>,
        &std::sync::mpsc::Receiver<Block>,
    ),
    pieces: &mut Vec<Piece>,
    block_done: &mut dyn FnMut(&mut Vec<Piece>) -> io::Result<()>,
) -> io::Result<StreamInfo> {
    let mut free: Vec<Block> = Vec::with_capacity(nbufs);
    let mut allocated = 0usize;
    let mut waiting: BTreeMap<u64, Block> = BTreeMap::new();
    let mut next_out = 0u64;
    let mut content = Md5::new();
    let mut size = 0u64;
    let mut ftype = None;
    let mut sent = 0u64;
    // Bytes carried over from the previous block (an unfinished chunk).
    let mut carry: Vec<u8> = Vec::with_capacity(chunker.max_len());

    // Append a hashed block's pieces if it is the next in order, and any
    // that were waiting for it; its buffer becomes free.
    let mut take = |b: Block,
                    waiting: &mut BTreeMap<u64, Block>,
                    free: &mut Vec<Block>,
                    next_out: &mut u64,
                    content: &mut Md5|
     -> io::Result<()> {
        waiting.insert(b.seq, b);
        while let Some(b) = waiting.remove(next_out) {
            for (&d, &(_, len)) in b.digests.iter().zip(&b.cuts) {
                content.update(d.to_be_bytes());
                pieces.push((d, len));
            }
            *next_out += 1;
            free.push(b);
            block_done(pieces)?;
        }
        Ok(())
    };

    let mut eof = false;
    while !eof {
        let mut b = match free.pop() {
            Some(b) => b,
            None if allocated < nbufs => {
                allocated += 1;
                Block {
                    seq: 0,
                    buf: vec![0u8; cap],
                    cuts: Vec::new(),
                    digests: Vec::new(),
                }
            }
            None => {
                let Ok(d) = done_rx.recv() else {
                    return Err(io::Error::other("internal error: a hasher thread stopped"));
                };
                take(d, &mut waiting, &mut free, &mut next_out, &mut content)?;
                continue;
            }
        };
        b.buf[..carry.len()].copy_from_slice(&carry);
        let mut filled = carry.len();
        let want = filled + PAR_BLOCK.min(cap - filled);
        let (n, end) = crate::chunking::stream::fill(r, &mut b.buf[filled..want])?;
        filled += n;
        size += n as u64;
        eof = end;
        if ftype.is_none() {
            ftype = Some(FileType::classify(&b.buf[..filled.min(HEAD)], size));
        }
        b.cuts.clear();
        let mut pos = 0usize;
        while let Some(len) = chunker.cut(&b.buf[pos..filled], eof) {
            b.cuts.push((pos as u32, len as u32));
            pos += len;
        }
        carry.clear();
        carry.extend_from_slice(&b.buf[pos..filled]);
        b.seq = sent;
        sent += 1;
        if job_tx.send(b).is_err() {
            return Err(io::Error::other(
                "internal error: the hasher threads stopped",
            ));
        }
    }
    while next_out < sent {
        let Ok(d) = done_rx.recv() else {
            return Err(io::Error::other("internal error: a hasher thread stopped"));
        };
        take(d, &mut waiting, &mut free, &mut next_out, &mut content)?;
    }
    Ok(StreamInfo::finish(size, content, ftype))
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
