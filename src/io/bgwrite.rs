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

use crate::error::{Error, Result};
use crate::io::frames::FrameMeta;
use crate::io::Output;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes per block handed to the writer thread.
pub const BLOCK: usize = 1 << 20;

/// Blocks in flight at most (including the one being filled).
pub const BLOCKS: usize = 4;

/// What the writer thread is handed: bytes, in blocks; or, for an output
/// written as frames ([`Output::end_frame`]), a frame's end or an earlier
/// frame to copy.
enum Msg {
    Bytes(Vec<u8>),
    EndFrame(FrameMeta),
    Copy(Vec<u8>),
}

/// An [`Output`] written by a background thread; fill with
/// [`BgWriter::raw`] or directly through [`BgWriter::buf`].
pub struct BgWriter {
    /// The block being filled.
    buf: Vec<u8>,
    /// Bytes handed over so far (not those of frames copied).
    handed: u64,
    framed: bool,
    full: Option<SyncSender<Msg>>,
    empty: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<(Output, Result<()>)>>,
}

impl BgWriter {
    /// Start the writer thread; it owns `out` until [`BgWriter::finish`].
    pub fn new(mut out: Output) -> Self {
        let framed = out.is_framed();
        let (full_tx, full_rx) = sync_channel::<Msg>(BLOCKS);
        let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(BLOCKS);
        for _ in 1..BLOCKS {
            let _ = empty_tx.send(Vec::with_capacity(BLOCK + 4096));
        }
        let thread = std::thread::spawn(move || {
            for msg in full_rx.iter() {
                let done = match msg {
                    Msg::Bytes(mut b) => out.write_all(&b).map(|()| {
                        b.clear();
                        let _ = empty_tx.try_send(b);
                    }),
                    Msg::EndFrame(m) => out.end_frame(Some(m)),
                    Msg::Copy(frame) => out.copy_frame(&frame),
                };
                if let Err(e) = done {
                    // Dropping the receivers makes the next hand-over fail.
                    return (out, Err(e));
                }
            }
            (out, Ok(()))
        });
        BgWriter {
            buf: Vec::with_capacity(BLOCK + 4096),
            handed: 0,
            framed,
            full: Some(full_tx),
            empty: empty_rx,
            thread: Some(thread),
        }
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

    /// Bytes written so far, but for the frames copied.
    #[inline]
    pub fn written(&self) -> u64 {
        self.handed + self.buf.len() as u64
    }

    /// Whether the output is written as frames: only then do
    /// [`Self::end_frame`] and [`Self::copy_frame`] mean anything.
    pub fn is_framed(&self) -> bool {
        self.framed
    }

    /// End the output's current frame after what was written, announced
    /// by `meta` ([`Output::end_frame`]).
    pub fn end_frame(&mut self, meta: FrameMeta) -> Result<()> {
        if !self.framed {
            return Ok(());
        }
        self.hand_over_now()?;
        self.send(Msg::EndFrame(meta))
    }

    /// Write an earlier run's frame as it is ([`Output::copy_frame`]),
    /// after what was written.
    pub fn copy_frame(&mut self, frame: Vec<u8>) -> Result<()> {
        self.hand_over_now()?;
        self.send(Msg::Copy(frame))
    }

    /// Hand the block over now, when it holds anything.
    fn hand_over_now(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.hand_over()
    }

    fn send(&mut self, msg: Msg) -> Result<()> {
        let sent = self.full.as_ref().map(|tx| tx.send(msg).is_ok());
        if sent != Some(true) {
            return Err(self.failure());
        }
        Ok(())
    }

    #[cold]
    fn hand_over(&mut self) -> Result<()> {
        let next = match self.empty.recv() {
            Ok(b) => b,
            Err(_) => return Err(self.failure()),
        };
        let full = std::mem::replace(&mut self.buf, next);
        self.handed += full.len() as u64;
        self.send(Msg::Bytes(full))
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
                let _ = tx.send(Msg::Bytes(last));
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
