//! gzip, bzip2, xz and zstd: the view is the decompressed stream (all
//! members of a multi-member gzip or bzip2 file, as `zcat` gives them).
//! Decompressed through `Read`/`Write` in 64 KiB steps, so a bomb stops at
//! the size or ratio limit after at most one step past it, holding no more
//! than `max_bytes` of output.

use std::io::{self, BufReader, SeekFrom, Write};

use super::{read_bounded, Budget, Fail, Kind, Source};

pub(super) fn extract(kind: Kind, src: &mut dyn Source, budget: &Budget) -> Result<Vec<u8>, Fail> {
    let input = src
        .seek(SeekFrom::End(0))
        .and_then(|n| src.seek(SeekFrom::Start(0)).map(|_| n))
        .map_err(|e| format!("cannot seek: {e}"))?;
    let what = "the decompressed stream";
    match kind {
        Kind::Gzip => {
            let mut r = flate2::read::MultiGzDecoder::new(BufReader::new(src));
            read_bounded(&mut r, budget, Some(input), what)
        }
        Kind::Bzip2 => {
            let mut r = bzip2::read::MultiBzDecoder::new(BufReader::new(src));
            read_bounded(&mut r, budget, Some(input), what)
        }
        Kind::Zstd => {
            let mut r = ruzstd::decoding::StreamingDecoder::new(BufReader::new(src))
                .map_err(|e| format!("bad zstd frame: {e}"))?;
            read_bounded(&mut r, budget, Some(input), what)
        }
        Kind::Xz => xz(src, input, budget),
        _ => Err(format!("{} is not a compressed stream", kind.name())),
    }
}

/// lzma-rs decodes xz into a `Write` only: [`Capped`] refuses the bytes
/// past a limit, which stops the decoder with an error we then name.
fn xz(src: &mut dyn Source, input: u64, budget: &Budget) -> Result<Vec<u8>, Fail> {
    let mut out = Capped {
        out: Vec::new(),
        budget,
        input,
        why: None,
    };
    // lzma-rs grows its dictionary with the output (never past the size
    // limit), whatever size the stream's header announces.
    let mut r = BufReader::new(src);
    let res = lzma_rs::xz_decompress(&mut r, &mut out);
    if let Some(why) = out.why {
        return Err(why);
    }
    res.map_err(|e| format!("bad xz stream: {e}"))?;
    Ok(out.out)
}

/// A vector that refuses to grow past the budget's size, ratio or time.
struct Capped<'a> {
    out: Vec<u8>,
    budget: &'a Budget<'a>,
    input: u64,
    why: Option<Fail>,
}

impl Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let len = (self.out.len() + buf.len()) as u64;
        let check = self
            .budget
            .check_size(len, "the decompressed stream")
            .and_then(|_| {
                self.budget
                    .check_ratio(len, self.input, "the decompressed stream")
            })
            .and_then(|_| self.budget.check_time());
        if let Err(why) = check {
            self.why = Some(why.clone());
            return Err(io::Error::other(why));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
