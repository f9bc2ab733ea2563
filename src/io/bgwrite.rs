//! Writing an [`Output`] on a background thread, so that formatting the
//! next block overlaps the `write` system call (a kernel copy of every byte)
//! of the previous one. Used where a stage produces its output in a tight
//! loop: the final merge of `fsim-sort`, the kept records of
//! `fsim-partition`.
//!
//! Blocks of [`BLOCK`] bytes are filled by the caller and handed over; at
//! most [`BLOCKS`] are in flight (a few MiB), and emptied blocks come back
//! for reuse, so nothing is allocated per block once running. The bytes
//! written are the same as with the [`Output`] alone, in the same order; a
//! write error is reported by the next hand-over or by [`BgWriter::finish`].
//!
//! [`BgWriter::framed`]: each block is a zstd frame of its own, compressed
//! by the writer thread, and the caller ends frames where it chooses
//! ([`BgWriter::end_frame`]) or hands over a frame compressed already
//! ([`BgWriter::copy_frame`]): fsim-chunk's records ([`super::frames`]).

use crate::error::{Error, Result};
use crate::io::Output;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes per block handed to the writer thread.
pub const BLOCK: usize = 1 << 20;

/// Blocks in flight at most (including the one being filled).
pub const BLOCKS: usize = 4;

/// An [`Output`] written by a background thread; fill with
/// [`BgWriter::raw`] or directly through [`BgWriter::buf`].
pub struct BgWriter {
    /// The block being filled.
    buf: Vec<u8>,
    full: Option<SyncSender<Block>>,
    empty: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<(Output, Result<()>)>>,
    /// Each block a zstd frame ([`BgWriter::framed`]).
    framed: bool,
}

/// A block on its way to the writer thread: bytes to write, or (framed)
/// a frame's text to compress or a frame compressed already.
enum Block {
    Bytes(Vec<u8>),
    Text(Vec<u8>),
    Frame(Vec<u8>),
}

impl BgWriter {
    /// Start the writer thread; it owns `out` until [`BgWriter::finish`].
    pub fn new(out: Output) -> Self {
        Self::start(out, None)
    }

    /// [`BgWriter::new`], each block written as a zstd frame of its own
    /// (`out` itself not compressed): see [`super::frames`].
    pub fn framed(out: Output) -> Result<Self> {
        let name = out.name().to_string();
        let z = super::frames::compressor().map_err(|e| Error::Io {
            context: format!("compressing {name}"),
            source: e,
        })?;
        Ok(Self::start(out, Some(z)))
    }

    fn start(mut out: Output, mut z: Option<zstd::bulk::Compressor<'static>>) -> Self {
        let (full_tx, full_rx) = sync_channel::<Block>(BLOCKS);
        let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(BLOCKS);
        for _ in 1..BLOCKS {
            let _ = empty_tx.send(Vec::with_capacity(BLOCK + 4096));
        }
        let framed = z.is_some();
        let thread = std::thread::spawn(move || {
            let mut packed = Vec::new();
            for block in full_rx.iter() {
                let (written, mut b) = match (block, z.as_mut()) {
                    (Block::Text(b), Some(z)) => {
                        let w = compress(z, &b, &mut packed, &out)
                            .and_then(|()| out.write_all(&packed));
                        (w, b)
                    }
                    (Block::Text(b) | Block::Bytes(b), _) => (out.write_all(&b), b),
                    // A copied frame's buffer is not one of the blocks.
                    (Block::Frame(f), _) => (out.write_all(&f), Vec::new()),
                };
                if let Err(e) = written {
                    // Dropping the receivers makes the next hand-over fail.
                    return (out, Err(e));
                }
                if b.capacity() > 0 {
                    b.clear();
                    let _ = empty_tx.try_send(b);
                }
            }
            (out, Ok(()))
        });
        BgWriter {
            buf: Vec::with_capacity(BLOCK + 4096),
            full: Some(full_tx),
            empty: empty_rx,
            thread: Some(thread),
            framed,
        }
    }

    /// End the frame being filled here ([`BgWriter::framed`]; nothing
    /// otherwise): the bytes so far are its text.
    pub fn end_frame(&mut self) -> Result<()> {
        if self.framed && !self.buf.is_empty() {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Whether each block is a zstd frame ([`BgWriter::framed`]).
    pub fn is_framed(&self) -> bool {
        self.framed
    }

    /// The bytes filled since the last frame ended (framed), or since the
    /// last block was handed over.
    pub fn filled(&self) -> &[u8] {
        &self.buf
    }

    /// End the frame being filled with `frame` written in place of its
    /// text: the frame's compressed bytes, found in an earlier file.
    pub fn copy_frame(&mut self, frame: Vec<u8>) -> Result<()> {
        debug_assert!(self.framed);
        self.buf.clear();
        self.send(Block::Frame(frame))
    }

    /// The block being filled: append to it, then call
    /// [`BgWriter::maybe_flush`].
    #[inline]
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Hand the block over when it is full.
    #[inline]
    pub fn maybe_flush(&mut self) -> Result<()> {
        if self.buf.len() >= BLOCK {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Append bytes.
    #[inline]
    pub fn raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(bytes);
        self.maybe_flush()
    }

    #[cold]
    fn hand_over(&mut self) -> Result<()> {
        let next = match self.empty.recv() {
            Ok(b) => b,
            Err(_) => return Err(self.failure()),
        };
        let full = std::mem::replace(&mut self.buf, next);
        let block = match self.framed {
            true => Block::Text(full),
            false => Block::Bytes(full),
        };
        self.send(block)
    }

    fn send(&mut self, block: Block) -> Result<()> {
        let sent = self.full.as_ref().map(|tx| tx.send(block).is_ok());
        if sent != Some(true) {
            return Err(self.failure());
        }
        Ok(())
    }

    /// The writer thread's error (it stopped).
    #[cold]
    fn failure(&mut self) -> Error {
        self.full = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok((_, Err(e)))) => e,
            Some(Err(_)) => Error::msg("internal error: the writer thread panicked"),
            _ => Error::msg("internal error: the writer thread stopped"),
        }
    }

    /// Write what is left and give the [`Output`] back (to finish it).
    pub fn finish(mut self) -> Result<Output> {
        let last = std::mem::take(&mut self.buf);
        let tx = self.full.take();
        if let Some(tx) = &tx {
            if !last.is_empty() {
                let _ = tx.send(match self.framed {
                    true => Block::Text(last),
                    false => Block::Bytes(last),
                });
            }
        }
        drop(tx);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok((out, Ok(())))) => Ok(out),
            Some(Ok((_, Err(e)))) => Err(e),
            Some(Err(_)) => Err(Error::msg("internal error: the writer thread panicked")),
            None => Err(Error::msg("internal error: the writer thread stopped")),
        }
    }
}

impl Drop for BgWriter {
    fn drop(&mut self) {
        // Stop the thread without finishing the output (it is then dropped
        // unfinished, so a temp file is removed).
        self.full = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Compress `text` as one frame into `packed` (written next by the
/// caller); an error names the output.
fn compress(
    z: &mut zstd::bulk::Compressor<'static>,
    text: &[u8],
    packed: &mut Vec<u8>,
    out: &Output,
) -> Result<()> {
    packed.clear();
    packed.reserve(zstd::zstd_safe::compress_bound(text.len()));
    z.compress_to_buffer(text, packed).map_err(|e| Error::Io {
        context: format!("compressing {}", out.name()),
        source: e,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let mut w = BgWriter::new(Output::create(Some(&target)).unwrap());
        let mut want = Vec::new();
        for i in 0..400_000u32 {
            let line = format!("{i}\n");
            want.extend_from_slice(line.as_bytes());
            w.raw(line.as_bytes()).unwrap();
        }
        w.finish().unwrap().finish().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), want);
    }

    #[test]
    fn dropped_unfinished_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        let mut w = BgWriter::new(Output::create(Some(&target)).unwrap());
        w.raw(&[b'x'; 3 << 20]).unwrap();
        drop(w);
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
