//! Chunk records compressed as many small zstd frames, cut where the
//! records alone say, so that a re-run copies the compressed bytes of
//! every frame whose records came out the same instead of compressing
//! them again (zstd was ~40 % of an edited re-run's chunking).
//!
//! A frame ends after a file when the file's content hash says so, with a
//! chance proportional to its number of records ([`ends_frame`]: about
//! [`TARGET_RECORDS`] records a frame, ~50 KiB of text), or when it holds
//! [`crate::io::bgwrite::BLOCK`] bytes. The cut depends on the records and
//! the contents alone, so a run from scratch and a re-run cut alike, and
//! after an edited file the frames fall in step again at the next cut.
//! Small frames cost nothing in size: the records are MD5 digests in hex,
//! which LZ matches little, and Huffman codes them as well per frame
//! (50 KiB frames: 0.4 % smaller than one frame on the overlap tree).
//!
//! A frame is copied only when its text is byte for byte the text this
//! run would compress ([`Recent::take`]), and zstd compresses the same text
//! with the same settings to the same bytes, so the file is the bytes of a
//! run from scratch. `zstd -dc` reads the frames as one stream of lines.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::sync::{Arc, Mutex};

/// Records a frame holds on average ([`ends_frame`]).
pub const TARGET_RECORDS: u64 = 1024;

/// The largest frame [`FrameReader`] decodes whole: larger ones (a file
/// written as one frame by an older fsim) are read as a stream, and none
/// of their frames is copied.
const MAX_FRAME: usize = 4 << 20;

/// Earlier frames kept for [`Recent::take`]: a frame ends after a file
/// whose records the reader has passed, with at most one frame read
/// ahead to see the next record.
const RECENT: usize = 4;

/// Whether a frame ends after a file of `content` (its content hash) with
/// `records` chunk records: one file in [`TARGET_RECORDS`] of one record,
/// every file of that many or more.
pub fn ends_frame(content: u128, records: u64) -> bool {
    records > 0 && (content as u64) % TARGET_RECORDS < records
}

/// A zstd compressor for one frame of records: the level and checksum
/// of every record stream ([`crate::io::Output::compress`]), the text's
/// size in the frame header (which [`FrameReader`] sizes its buffer by).
pub fn compressor() -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(super::ZSTD_LEVEL)?;
    c.include_checksum(true)?;
    c.include_contentsize(true)?;
    Ok(c)
}

/// A frame's text and its compressed bytes.
type Frame = (Vec<u8>, Vec<u8>);

/// The last frames a [`FrameReader`] decoded.
#[derive(Clone, Default)]
pub struct Recent(Arc<Mutex<VecDeque<Frame>>>);

impl Recent {
    /// The compressed bytes of an earlier frame whose text is `text`.
    pub fn take(&self, text: &[u8]) -> Option<Vec<u8>> {
        let q = self.0.lock().ok()?;
        q.iter()
            .find(|(t, _)| t.as_slice() == text)
            .map(|(_, z)| z.clone())
    }

    fn push(&self, text: &[u8], compressed: &[u8]) {
        if let Ok(mut q) = self.0.lock() {
            if q.len() == RECENT {
                q.pop_front();
            }
            q.push_back((text.to_vec(), compressed.to_vec()));
        }
    }
}

/// The lines of a zstd record file, a frame at a time, each frame's text
/// and bytes kept in [`Recent`] while the next ones are read.
pub struct FrameReader<R: Read + Send + 'static> {
    src: Option<R>,
    /// Compressed bytes read and not yet decoded.
    raw: Vec<u8>,
    /// The frame being read, and how much of it was consumed.
    text: Vec<u8>,
    pos: usize,
    recent: Recent,
    /// A frame too large to hold: the rest of the file as a stream.
    stream: Option<Box<dyn BufRead + Send>>,
    unzstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl<R: Read + Send + 'static> FrameReader<R> {
    pub fn new(src: R, recent: Recent) -> Self {
        FrameReader {
            src: Some(src),
            raw: Vec::new(),
            text: Vec::new(),
            pos: 0,
            recent,
            stream: None,
            unzstd: None,
        }
    }

    /// Read compressed bytes until `raw` holds a whole frame; its length,
    /// or `None` at the end of the file or when it is over [`MAX_FRAME`].
    fn whole_frame(&mut self) -> io::Result<Option<usize>> {
        loop {
            if !self.raw.is_empty() {
                if let Ok(n) = zstd::zstd_safe::find_frame_compressed_size(&self.raw) {
                    return Ok(Some(n));
                }
            }
            let Some(src) = self.src.as_mut() else {
                return Ok(None);
            };
            if self.raw.len() > MAX_FRAME {
                return Ok(None);
            }
            let had = self.raw.len();
            self.raw.resize(had + (256 << 10), 0);
            let n = loop {
                match src.read(&mut self.raw[had..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => break r,
                }
            };
            self.raw.truncate(had + n.as_ref().copied().unwrap_or(0));
            if n? == 0 {
                self.src = None;
            }
        }
    }

    /// Decode the next frame into `text`; false at the end.
    fn next_frame(&mut self) -> io::Result<bool> {
        let frame = match self.whole_frame()? {
            Some(n) => n,
            None if self.raw.is_empty() && self.src.is_none() => return Ok(false),
            None => return self.stream_the_rest(),
        };
        let size = match zstd::zstd_safe::get_frame_content_size(&self.raw[..frame]) {
            Ok(Some(s)) if s as usize <= MAX_FRAME => s as usize,
            _ => return self.stream_the_rest(),
        };
        self.text.clear();
        self.text.reserve(size);
        let unzstd = match self.unzstd.as_mut() {
            Some(d) => d,
            None => self.unzstd.insert(zstd::bulk::Decompressor::new()?),
        };
        unzstd.decompress_to_buffer(&self.raw[..frame], &mut self.text)?;
        self.recent.push(&self.text, &self.raw[..frame]);
        self.raw.drain(..frame);
        self.pos = 0;
        Ok(true)
    }

    /// The bytes left, read through zstd's stream decoder.
    fn stream_the_rest(&mut self) -> io::Result<bool> {
        let head = io::Cursor::new(std::mem::take(&mut self.raw));
        let rest: Box<dyn Read + Send> = match self.src.take() {
            Some(src) => Box::new(head.chain(src)),
            None => Box::new(head),
        };
        let d = zstd::stream::read::Decoder::new(rest)?;
        self.stream = Some(Box::new(io::BufReader::new(d)));
        self.text.clear();
        self.pos = 0;
        Ok(true)
    }
}

impl<R: Read + Send + 'static> Read for FrameReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let have = self.fill_buf()?;
        let n = have.len().min(buf.len());
        buf[..n].copy_from_slice(&have[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read + Send + 'static> BufRead for FrameReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.stream.is_none() && self.pos == self.text.len() {
            if !self.next_frame()? {
                return Ok(&[]);
            }
        }
        match self.stream.as_mut() {
            Some(s) => s.fill_buf(),
            None => Ok(&self.text[self.pos..]),
        }
    }

    fn consume(&mut self, n: usize) {
        match self.stream.as_mut() {
            Some(s) => s.consume(n),
            None => self.pos += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(texts: &[&[u8]]) -> Vec<u8> {
        let mut c = compressor().unwrap();
        texts.iter().flat_map(|t| c.compress(t).unwrap()).collect()
    }

    fn read_all(r: &mut impl Read) -> Vec<u8> {
        let mut v = Vec::new();
        r.read_to_end(&mut v).unwrap();
        v
    }

    /// Frames read as one stream, by this reader and by zstd's, and the
    /// last frames' bytes found again by their text.
    #[test]
    fn frames_are_one_stream_and_the_last_are_kept() {
        let texts: Vec<Vec<u8>> = (0..7)
            .map(|i| format!("frame {i}\n").repeat(100 * i + 1).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = texts.iter().map(|t| t.as_slice()).collect();
        let file = frames(&refs);
        let want = texts.concat();
        let recent = Recent::default();
        let mut r = FrameReader::new(io::Cursor::new(file.clone()), recent.clone());
        assert_eq!(read_all(&mut r), want);
        assert_eq!(zstd::stream::decode_all(&file[..]).unwrap(), want);
        let last = compressor().unwrap().compress(&texts[6]).unwrap();
        assert_eq!(recent.take(&texts[6]), Some(last));
        assert_eq!(
            recent.take(&texts[0]),
            None,
            "only the last {RECENT} are kept"
        );
        assert_eq!(recent.take(b"frame 6\n"), None);
    }

    /// One frame over [`MAX_FRAME`] (an older fsim's file), or without its
    /// size: read as a stream, no frame kept; a damaged frame is an error.
    #[test]
    fn a_large_or_unsized_frame_is_streamed_and_damage_is_an_error() {
        let big = b"0123456789abcdef\n".repeat((MAX_FRAME / 17) + 10);
        let recent = Recent::default();
        let file = zstd::stream::encode_all(&big[..], 1).unwrap();
        let mut r = FrameReader::new(io::Cursor::new(file), recent.clone());
        assert_eq!(read_all(&mut r), big);
        assert_eq!(recent.take(&big), None);
        let mut file = frames(&[b"a\n", b"b\n"]);
        let n = file.len();
        file[n - 6] ^= 0xff;
        let mut r = FrameReader::new(io::Cursor::new(file), Recent::default());
        assert!(r.read_to_end(&mut Vec::new()).is_err());
    }

    /// About one file in a thousand of one record ends a frame, every
    /// file of TARGET_RECORDS; never an empty file.
    #[test]
    fn frames_end_by_content_and_records() {
        let ends = (0..100_000u128)
            .filter(|&c| ends_frame(c.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835), 1))
            .count();
        assert!((60..140).contains(&ends), "{ends}");
        assert!(ends_frame(12345, TARGET_RECORDS));
        assert!(!ends_frame(0, 0));
    }
}
