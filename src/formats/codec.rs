//! The compressions a record stream may be kept in on disk, told apart by
//! their first bytes: a record stream starts with `#`, a zstd frame with
//! [`ZSTD_MAGIC`], a gzip member with [`GZIP_MAGIC`]. `make report` keeps
//! its record files zstd-compressed ([`crate::io::Output::compress`]);
//! gzip streams (earlier runs, `gzip FILE`) and text read the same way, as
//! the lines they hold.

use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// gzip's magic number, the first two bytes of every gzip member.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// zstd's magic number, the first four bytes of every zstd frame
/// (0xFD2FB528, little-endian).
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// How a record stream's bytes are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// The lines themselves.
    Text,
    /// gzip members, read one after the other (as `zcat` reads
    /// `cat a.gz b.gz`).
    Gzip,
    /// zstd frames, read one after the other (as `zstdcat` does).
    Zstd,
}

/// Buffer of the text a decoder hands on, as large as a record stream's.
const TEXT_BUF: usize = super::BUF_SIZE;

impl Codec {
    /// The codec whose magic number `head` starts with; [`Codec::Text`]
    /// for anything else (a record stream's `#`, an empty file).
    pub fn of(head: &[u8]) -> Codec {
        if head.starts_with(&ZSTD_MAGIC) {
            Codec::Zstd
        } else if head.starts_with(&GZIP_MAGIC) {
            Codec::Gzip
        } else {
            Codec::Text
        }
    }

    /// The codec of the file at `path` (its first bytes); [`Codec::Text`]
    /// when it cannot be read (opening it again says why).
    pub fn of_file(path: &Path) -> Codec {
        let mut head = [0u8; 4];
        let mut n = 0;
        if let Ok(mut f) = std::fs::File::open(path) {
            while n < head.len() {
                match f.read(&mut head[n..]) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => n += k,
                }
            }
        }
        Codec::of(&head[..n])
    }

    /// Whether the bytes are compressed (not [`Codec::Text`]).
    pub fn is_compressed(self) -> bool {
        self != Codec::Text
    }

    /// The lines `r` holds, `r` being a stream of this codec.
    pub fn decode<'a, R: BufRead + Send + 'a>(
        self,
        r: R,
    ) -> io::Result<Box<dyn BufRead + Send + 'a>> {
        Ok(match self {
            Codec::Text => Box::new(r),
            Codec::Gzip => Box::new(BufReader::with_capacity(
                TEXT_BUF,
                flate2::bufread::MultiGzDecoder::new(r),
            )),
            Codec::Zstd => Box::new(BufReader::with_capacity(
                TEXT_BUF,
                zstd::stream::read::Decoder::with_buffer(r)?,
            )),
        })
    }
}

/// `r`'s lines, whichever of the [`Codec`]s its first bytes say it is in.
pub fn decode_any<'a, R: BufRead + Send + 'a>(
    mut r: R,
) -> io::Result<Box<dyn BufRead + Send + 'a>> {
    let codec = Codec::of(r.fill_buf()?);
    codec.decode(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const LINES: &[u8] = b"#fsim chunks v1\tavg=100\nab\t0000000001\t12\n#end chunks\n";

    fn zstd(text: &[u8]) -> Vec<u8> {
        zstd::stream::encode_all(text, 1).unwrap()
    }

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    fn read_all(bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        decode_any(bytes).unwrap().read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn each_codec_is_told_by_its_first_bytes() {
        assert_eq!(Codec::of(LINES), Codec::Text);
        assert_eq!(Codec::of(&zstd(LINES)), Codec::Zstd);
        assert_eq!(Codec::of(&gzip(LINES)), Codec::Gzip);
        assert_eq!(Codec::of(b""), Codec::Text);
        assert!(!Codec::Text.is_compressed());
    }

    #[test]
    fn text_zstd_and_gzip_read_as_the_same_lines() {
        assert_eq!(read_all(LINES), LINES);
        assert_eq!(read_all(&zstd(LINES)), LINES);
        assert_eq!(read_all(&gzip(LINES)), LINES);
    }

    #[test]
    fn concatenated_frames_and_members_read_as_one_stream() {
        let (a, b) = LINES.split_at(20);
        assert_eq!(read_all(&[zstd(a), zstd(b)].concat()), LINES);
        assert_eq!(read_all(&[gzip(a), gzip(b)].concat()), LINES);
    }

    #[test]
    fn a_truncated_frame_is_an_error() {
        let z = zstd(&LINES.repeat(100));
        let mut out = Vec::new();
        let cut = &z[..z.len() - 5];
        assert!(decode_any(cut).unwrap().read_to_end(&mut out).is_err());
    }

    #[test]
    fn the_codec_of_a_file_is_read_from_its_start() {
        let d = tempfile::tempdir().unwrap();
        let (t, z) = (d.path().join("t"), d.path().join("z"));
        std::fs::write(&t, LINES).unwrap();
        std::fs::write(&z, zstd(LINES)).unwrap();
        assert_eq!(Codec::of_file(&t), Codec::Text);
        assert_eq!(Codec::of_file(&z), Codec::Zstd);
        assert_eq!(Codec::of_file(&d.path().join("missing")), Codec::Text);
    }
}
