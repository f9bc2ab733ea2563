//! Chunk records kept as many small zstd frames, each holding the records
//! of a run of whole files and announced by a skippable frame that says
//! which files, how many records, their digest and the frame's length, so
//! that a re-run copies the frames of files that did not change as they
//! are, without decompressing and compressing them again (decompressing
//! and compressing again was 35-40 % of fsim-chunk's time in a re-run).
//!
//! The stream is still a zstd stream: `zstdcat`, `zstd -d` and every
//! stage read it as before (skippable frames are skipped by every zstd
//! decoder). Where a frame ends depends only on the file ids and the
//! record bytes since the frame began ([`cut_before`]), so a re-run that
//! copies a frame writes what a run from scratch writes there: the
//! records of a re-run are the same bytes as a run from scratch's. A
//! copied frame must have begun where this run's frame begins, and have
//! been cut by the same rule and compressor ([`codec`]).

use std::io::{self, BufRead, Read, Write};
use zstd::zstd_safe::{self, CCtx, CParameter, DCtx, InBuffer, OutBuffer, ResetDirective};

/// The skippable frame's magic number that announces a frame of records
/// (zstd reserves 0x184D2A50-0x184D2A5F for skippable frames).
pub const META_MAGIC: u32 = 0x184D_2A5E;

/// A zstd frame's magic number.
const ZSTD_MAGIC: u32 = 0xFD2F_B528;

/// What the announcement's payload begins with.
const TAG: &[u8; 8] = b"fsimrec1";

/// Bytes of the announcement's payload.
const META_LEN: usize = 8 + 4 + 4 + 8 + 16 + 8 + 8 + 8 + 4;

/// A frame may end only before a file id that is a multiple of this...
pub const ALIGN: u32 = 16;

/// ...once it holds this many record bytes: a frame of 16-32 files of
/// documents, a thousand small files. 1 % of the files edited, spread out,
/// leaves 70-85 % of the frames unchanged.
pub const MIN_RAW: u64 = 64 << 10;

/// Compressed bytes of a frame held until it ends; past them (a file of
/// millions of records) the frame is written as it is compressed, with no
/// announcement, and is never copied.
const HOLD_MAX: usize = 8 << 20;

/// Whether a frame holding `raw` record bytes ends before file `id`.
#[inline]
pub fn cut_before(id: u32, raw: u64) -> bool {
    raw >= MIN_RAW && id.is_multiple_of(ALIGN)
}

/// The framing rule and compressor a frame was written with: a frame is
/// copied only into a stream written with the same ones, which would have
/// written the same bytes.
pub fn codec() -> u32 {
    zstd_safe::version_number() * 1000 + super::ZSTD_LEVEL as u32 * 10 + 1
}

/// What a skippable frame says of the zstd frame after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameMeta {
    /// The first and last file id whose records it holds (every id in
    /// between included, with or without records).
    pub first: u32,
    pub last: u32,
    /// Its records, and the wrapping sum of their digests
    /// ([`crate::formats::chunks::Digest`]).
    pub records: u64,
    pub sum: u128,
    /// The files' sizes, added up: checked against the file table.
    pub bytes: u64,
    /// Its decompressed and compressed bytes.
    pub raw: u64,
    pub len: u64,
    pub codec: u32,
}

impl FrameMeta {
    /// The skippable frame, as written.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 + META_LEN);
        b.extend_from_slice(&META_MAGIC.to_le_bytes());
        b.extend_from_slice(&(META_LEN as u32).to_le_bytes());
        b.extend_from_slice(TAG);
        b.extend_from_slice(&self.first.to_le_bytes());
        b.extend_from_slice(&self.last.to_le_bytes());
        b.extend_from_slice(&self.records.to_le_bytes());
        b.extend_from_slice(&self.sum.to_le_bytes());
        b.extend_from_slice(&self.bytes.to_le_bytes());
        b.extend_from_slice(&self.raw.to_le_bytes());
        b.extend_from_slice(&self.len.to_le_bytes());
        b.extend_from_slice(&self.codec.to_le_bytes());
        b
    }

    /// A payload of ours, or `None` (another program's skippable frame).
    fn decode(p: &[u8]) -> Option<FrameMeta> {
        if p.len() != META_LEN || &p[..8] != TAG {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes(p[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap());
        let m = FrameMeta {
            first: u32_at(8),
            last: u32_at(12),
            records: u64_at(16),
            sum: u128::from_le_bytes(p[24..40].try_into().unwrap()),
            bytes: u64_at(40),
            raw: u64_at(48),
            len: u64_at(56),
            codec: u32_at(64),
        };
        // A length no writer of ours gives is another's, or damage: the
        // frame is then read, never taken.
        (m.first <= m.last && m.len <= 2 * HOLD_MAX as u64).then_some(m)
    }

    /// Whether this run, with its frame empty at file `id`, would write
    /// this frame there: it begins at `id`, was cut by this run's rule
    /// and compressor, and ended where the rule ends it.
    pub fn copyable_at(&self, id: u32) -> bool {
        self.first == id
            && self.codec == codec()
            && self
                .last
                .checked_add(1)
                .is_some_and(|next| cut_before(next, self.raw))
    }
}

fn zstd_error(code: usize) -> io::Error {
    io::Error::other(zstd_safe::get_error_name(code))
}

/// A zstd stream written as frames the caller ends ([`Self::end_frame`]),
/// each announced by its [`FrameMeta`] when given one; frames of an earlier
/// stream are copied in whole ([`Self::copy`]). Single-threaded: its bytes
/// depend on the frames' contents only, not on how they were written.
pub struct FrameWriter<W: Write> {
    sink: W,
    cctx: CCtx<'static>,
    /// The current frame's compressed bytes, not written yet.
    out: Vec<u8>,
    /// A frame begun.
    open: bool,
    /// Part of the current frame written already (past [`HOLD_MAX`]).
    spilled: bool,
    raw: u64,
}

impl<W: Write> FrameWriter<W> {
    pub fn new(sink: W) -> io::Result<FrameWriter<W>> {
        let mut cctx = CCtx::create();
        cctx.set_parameter(CParameter::CompressionLevel(super::ZSTD_LEVEL))
            .map_err(zstd_error)?;
        cctx.set_parameter(CParameter::ChecksumFlag(true))
            .map_err(zstd_error)?;
        Ok(FrameWriter {
            sink,
            cctx,
            out: Vec::with_capacity(CCtx::out_size()),
            open: false,
            spilled: false,
            raw: 0,
        })
    }

    pub fn get_ref(&self) -> &W {
        &self.sink
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.sink
    }

    /// Compress `data` into the current frame.
    fn compress(&mut self, data: &[u8], end: bool) -> io::Result<()> {
        use zstd_safe::zstd_sys::ZSTD_EndDirective as E;
        let op = if end {
            E::ZSTD_e_end
        } else {
            E::ZSTD_e_continue
        };
        let mut input = InBuffer::around(data);
        loop {
            self.out.reserve(CCtx::out_size());
            let len = self.out.len();
            let mut ob = OutBuffer::around_pos(&mut self.out, len);
            let left = self
                .cctx
                .compress_stream2(&mut ob, &mut input, op)
                .map_err(zstd_error)?;
            let done = if end {
                left == 0
            } else {
                input.pos() == data.len()
            };
            if done {
                break;
            }
        }
        if self.out.len() >= HOLD_MAX {
            self.sink.write_all(&self.out)?;
            self.out.clear();
            self.spilled = true;
        }
        Ok(())
    }

    /// End the current frame (nothing when none is begun), announced by
    /// `meta` (its lengths filled in here) unless part of it was written.
    pub fn end_frame(&mut self, meta: Option<FrameMeta>) -> io::Result<()> {
        if !self.open {
            return Ok(());
        }
        self.compress(&[], true)?;
        if let (Some(mut m), false) = (meta, self.spilled) {
            m.raw = self.raw;
            m.len = self.out.len() as u64;
            m.codec = codec();
            self.sink.write_all(&m.encode())?;
        }
        self.sink.write_all(&self.out)?;
        self.out.clear();
        (self.open, self.spilled, self.raw) = (false, false, 0);
        Ok(())
    }

    /// Write an earlier stream's frame (its announcement and itself) as
    /// it is, after ending the current one.
    pub fn copy(&mut self, frame: &[u8]) -> io::Result<()> {
        self.end_frame(None)?;
        self.sink.write_all(frame)
    }

    /// End the last frame; the sink back.
    pub fn finish(mut self) -> io::Result<W> {
        self.end_frame(None)?;
        Ok(self.sink)
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !buf.is_empty() {
            self.open = true;
            self.raw += buf.len() as u64;
            self.compress(buf, false)?;
        }
        Ok(buf.len())
    }

    /// Nothing: a frame is written whole when it ends (and a flush would
    /// end a block wherever a stage flushed).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A zstd stream read as its decompressed bytes, stopping before each
/// announced frame ([`FrameMeta`]): the reader then copies it whole
/// ([`Self::take_frame`]) or reads on ([`Self::decode_next`]). Frames not
/// announced (the header's, the trailer's, another writer's single frame)
/// are read through.
pub struct FrameReader<R: BufRead> {
    raw: R,
    dctx: DCtx<'static>,
    out: Vec<u8>,
    pos: usize,
    in_frame: bool,
    /// Compressed bytes to decompress before reading on from `raw`: a
    /// frame's magic number, or a frame taken and given back.
    given: Vec<u8>,
    given_pos: usize,
    /// The announced frame next, not begun.
    head: Option<FrameMeta>,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(raw: R) -> FrameReader<R> {
        FrameReader {
            raw,
            dctx: DCtx::create(),
            out: Vec::with_capacity(DCtx::out_size()),
            pos: 0,
            in_frame: false,
            given: Vec::new(),
            given_pos: 0,
            head: None,
        }
    }

    /// The announced frame the reading stopped before, if it did.
    pub fn head(&self) -> Option<&FrameMeta> {
        self.head.as_ref().filter(|_| self.pos == self.out.len())
    }

    /// The announced frame next, as written (announcement and frame),
    /// skipped by the reading; `into` is cleared first.
    pub fn take_frame(&mut self, into: &mut Vec<u8>) -> io::Result<FrameMeta> {
        let m = self
            .head
            .take()
            .ok_or_else(|| io::Error::other("no announced frame to take"))?;
        into.clear();
        into.extend_from_slice(&m.encode());
        let start = into.len();
        into.resize(start + m.len as usize, 0);
        read_whole(&mut self.raw, &mut into[start..])?;
        Ok(m)
    }

    /// Read on into the announced frame next.
    pub fn decode_next(&mut self) {
        self.head = None;
    }

    /// Read the frame taken in `frame` ([`Self::take_frame`]) after all,
    /// before what follows it.
    pub fn give_back(&mut self, frame: &[u8]) {
        let skip = frame.len().saturating_sub(self.head_len(frame));
        self.given.clear();
        self.given.extend_from_slice(&frame[frame.len() - skip..]);
        self.given_pos = 0;
        self.start_frame();
    }

    /// Length of the announcement at the start of `frame`.
    fn head_len(&self, frame: &[u8]) -> usize {
        if frame.len() >= 8 && frame[..4] == META_MAGIC.to_le_bytes() {
            8 + u32::from_le_bytes(frame[4..8].try_into().unwrap()) as usize
        } else {
            0
        }
    }

    fn start_frame(&mut self) {
        let _ = self.dctx.reset(ResetDirective::SessionOnly);
        self.in_frame = true;
    }

    /// Decompress some more of the current frame into `out`.
    fn decode_some(&mut self) -> io::Result<()> {
        self.out.clear();
        self.pos = 0;
        let from_given = self.given_pos < self.given.len();
        let input = if from_given {
            &self.given[self.given_pos..]
        } else {
            self.raw.fill_buf()?
        };
        if input.is_empty() {
            return Err(truncated());
        }
        let mut ib = InBuffer::around(input);
        let mut ob = OutBuffer::around(&mut self.out);
        let left = self
            .dctx
            .decompress_stream(&mut ob, &mut ib)
            .map_err(|c| io::Error::new(io::ErrorKind::InvalidData, zstd_error(c)))?;
        let used = ib.pos();
        if from_given {
            self.given_pos += used;
        } else {
            self.raw.consume(used);
        }
        if left == 0 {
            self.in_frame = false;
        }
        Ok(())
    }

    /// Between frames: read announcements and other skippable frames up to
    /// the next frame. False at the end of the stream or before an
    /// announced frame.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            let mut magic = [0u8; 4];
            match self.raw.read(&mut magic[..1])? {
                0 => return Ok(false),
                _ => read_whole(&mut self.raw, &mut magic[1..])?,
            }
            let m = u32::from_le_bytes(magic);
            if m == ZSTD_MAGIC {
                self.given.clear();
                self.given.extend_from_slice(&magic);
                self.given_pos = 0;
                self.start_frame();
                return Ok(true);
            }
            if m & 0xFFFF_FFF0 != 0x184D_2A50 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "not a zstd frame where one should begin",
                ));
            }
            let mut size = [0u8; 4];
            read_whole(&mut self.raw, &mut size)?;
            let size = u32::from_le_bytes(size) as usize;
            if m == META_MAGIC && size == META_LEN {
                let mut payload = [0u8; META_LEN];
                read_whole(&mut self.raw, &mut payload)?;
                if let Some(meta) = FrameMeta::decode(&payload) {
                    self.head = Some(meta);
                    return Ok(false);
                }
                continue;
            }
            let skipped = io::copy(&mut (&mut self.raw).take(size as u64), &mut io::sink())?;
            if skipped != size as u64 {
                return Err(truncated());
            }
        }
    }
}

/// The error of a stream that ends inside a frame.
fn truncated() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the zstd stream ends inside a frame: the file is cut short",
    )
}

/// Fill `buf` from `r`, or say the stream was cut short.
fn read_whole(r: &mut impl Read, buf: &mut [u8]) -> io::Result<()> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => truncated(),
        _ => e,
    })
}

impl<R: BufRead> Read for FrameReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(buf.len());
            buf[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for FrameReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        loop {
            if self.pos < self.out.len() {
                return Ok(&self.out[self.pos..]);
            }
            if self.in_frame {
                self.decode_some()?;
                continue;
            }
            if self.head.is_some() || !self.next_frame()? {
                return Ok(&[]);
            }
        }
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.out.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(first: u32, last: u32) -> FrameMeta {
        FrameMeta {
            first,
            last,
            records: 3,
            sum: 7,
            bytes: 9,
            ..FrameMeta::default()
        }
    }

    /// A stream of a header frame, two announced frames and a trailer.
    fn stream() -> (Vec<u8>, Vec<u8>) {
        let mut w = FrameWriter::new(Vec::new()).unwrap();
        let mut text = Vec::new();
        let mut put = |w: &mut FrameWriter<Vec<u8>>, s: &str| {
            w.write_all(s.as_bytes()).unwrap();
            text.extend_from_slice(s.as_bytes());
        };
        put(&mut w, "#header\n");
        w.end_frame(None).unwrap();
        put(&mut w, &"a\n".repeat(40_000));
        w.end_frame(Some(meta(0, 15))).unwrap();
        put(&mut w, "b\n");
        w.end_frame(Some(meta(16, 16))).unwrap();
        put(&mut w, "#trailer\n");
        (w.finish().unwrap(), text)
    }

    #[test]
    fn any_zstd_reader_reads_the_lines() {
        let (z, text) = stream();
        assert_eq!(zstd::stream::decode_all(&z[..]).unwrap(), text);
    }

    #[test]
    fn frames_are_taken_or_read_through() {
        let (z, text) = stream();
        let mut r = FrameReader::new(&z[..]);
        let mut got = Vec::new();
        let mut header = String::new();
        r.read_line(&mut header).unwrap();
        assert_eq!(header, "#header\n");
        assert_eq!(r.fill_buf().unwrap(), b"");
        let m = *r.head().unwrap();
        assert_eq!((m.first, m.last, m.records, m.raw), (0, 15, 3, 80_000));
        assert!(m.copyable_at(0) && !m.copyable_at(1));
        let mut frame = Vec::new();
        r.take_frame(&mut frame).unwrap();
        // Given back, it is read as if never taken.
        r.give_back(&frame);
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"a\n".repeat(40_000));
        let m = *r.head().unwrap();
        assert!(!m.copyable_at(16), "ends at the stream's end, not by rule");
        r.decode_next();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got.len() + header.len(), text.len());
    }

    #[test]
    fn damaged_announcements_are_read_through_or_refused() {
        let (z, text) = stream();
        let at = z
            .windows(4)
            .position(|w| w == META_MAGIC.to_le_bytes())
            .unwrap();
        // A frame length no writer gives: the announcement is ignored,
        // the frame read.
        let mut long = z.clone();
        long[at + 8 + 56..at + 8 + 64].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut r = FrameReader::new(&long[..]);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert!(got.starts_with(&text[..text.len() / 2]));
        // A skippable frame of 4 GiB announced, 20 bytes there: cut short.
        let mut huge = z[..at].to_vec();
        huge.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(&[0; 20]);
        let err = FrameReader::new(&huge[..])
            .read_to_end(&mut got)
            .unwrap_err();
        assert!(err.to_string().contains("cut short"), "{err}");
        // Garbage where a frame begins.
        let mut bad = z[..at].to_vec();
        bad.extend_from_slice(b"#not zstd\n");
        let err = FrameReader::new(&bad[..])
            .read_to_end(&mut got)
            .unwrap_err();
        assert!(err.to_string().contains("not a zstd frame"), "{err}");
    }

    #[test]
    fn a_copied_frame_gives_the_same_bytes() {
        let (z, _) = stream();
        let mut r = FrameReader::new(&z[..]);
        let mut w = FrameWriter::new(Vec::new()).unwrap();
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        w.write_all(line.as_bytes()).unwrap();
        w.end_frame(None).unwrap();
        let _ = r.fill_buf().unwrap();
        let mut frame = Vec::new();
        r.take_frame(&mut frame).unwrap();
        w.copy(&frame).unwrap();
        r.decode_next();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        w.write_all(b"b\n").unwrap();
        w.end_frame(Some(meta(16, 16))).unwrap();
        w.write_all(b"#trailer\n").unwrap();
        assert_eq!(w.finish().unwrap(), z);
    }

    #[test]
    fn the_bytes_do_not_depend_on_how_they_were_written() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| format!("{:x}\t{i}\n", i.wrapping_mul(2654435761)).into_bytes())
            .collect();
        let whole = {
            let mut w = FrameWriter::new(Vec::new()).unwrap();
            w.write_all(&data).unwrap();
            w.finish().unwrap()
        };
        for step in [13usize, 4096, 1 << 20] {
            let mut w = FrameWriter::new(Vec::new()).unwrap();
            for part in data.chunks(step) {
                w.write_all(part).unwrap();
            }
            assert_eq!(w.finish().unwrap(), whole, "written {step} bytes at a time");
        }
    }
}
