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
            zstd_window_fits(src, budget)?;
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

/// ruzstd reserves a frame's whole window before decoding its first block
/// (and refuses windows over 100 MiB): a frame whose header declares a
/// window over `max_bytes` is refused here first, so that a 20-byte file
/// cannot make it allocate 100 MiB. The window is the declared content
/// size of a single-segment frame, else 2^(10+e) * (1 + m/8) from the
/// window descriptor (RFC 8878, 3.1.1.1).
fn zstd_window_fits(src: &mut dyn Source, budget: &Budget) -> Result<(), Fail> {
    let mut head = [0u8; 18];
    let n = read_head(src, &mut head).map_err(|e| format!("cannot read: {e}"))?;
    src.seek(SeekFrom::Start(0))
        .map_err(|e| format!("cannot seek: {e}"))?;
    let window = zstd_window(&head[..n]).ok_or("a truncated zstd frame header")?;
    if window > budget.limits.max_bytes {
        return Err(format!(
            "the zstd frame asks for a {window}-byte window, more than the size limit of {}",
            budget.limits.max_bytes
        ));
    }
    Ok(())
}

/// As many bytes as `buf` holds, fewer only at the end of the input.
fn read_head(src: &mut dyn Source, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The window a zstd frame declares (`head` from its magic on).
fn zstd_window(head: &[u8]) -> Option<u64> {
    let fhd = *head.get(4)?;
    let single = fhd & 0x20 != 0;
    let dict_len = [0usize, 1, 2, 4][(fhd & 3) as usize];
    let fcs_len = match (fhd >> 6, single) {
        (0, true) => 1,
        (0, false) => 0,
        (1, _) => 2,
        (2, _) => 4,
        _ => 8,
    };
    if !single {
        let wd = *head.get(5)?;
        let base = 1u64 << (10 + (wd >> 3));
        return Some(base + base / 8 * u64::from(wd & 7));
    }
    let at = 5 + dict_len;
    let b = head.get(at..at + fcs_len)?;
    let mut v = 0u64;
    for (i, &x) in b.iter().enumerate() {
        v |= u64::from(x) << (8 * i);
    }
    // A 2-byte size is stored minus 256.
    Some(if fcs_len == 2 { v + 256 } else { v })
}
