//! Content-defined chunking (paper section 2.2): split a byte stream where
//! its content, not its offset, says so, so that an insertion near the start
//! of a file changes only the chunks around it and the rest still match.
//!
//! Two methods share one rolling hash:
//!
//! * [`Tttd`] (Two Thresholds, Two Divisors, Eshghi & Tang, HP Labs
//!   TR 2005-30): the paper's choice and the default. A minimum and a maximum
//!   chunk size, a main divisor and a backup divisor.
//! * [`Bsw`] (basic sliding window, paper 2.2): one divisor, kept for
//!   comparison, with a hard cap on the chunk size.
//!
//! # Rolling hash
//!
//! A gear hash, `h = (h << 1) + GEAR[byte]` (wrapping), as in FastCDC. Each
//! step shifts every older byte's contribution one bit to the left, so after
//! 64 steps a byte has left the hash entirely: the hash at a position is a
//! function of exactly the last [`WINDOW`] = 64 bytes, i.e. a sliding window
//! without having to remove the outgoing byte. It is about 2.5× faster than a
//! Karp-Rabin window with a modulo (docs: /work/shared/NOTES.md).
//!
//! The table [`GEAR`] is generated at compile time by SplitMix64 from the
//! fixed seed [`GEAR_SEED`]. **The seed, the table, the threshold rule and
//! the parameter formulas define the cut points, hence the compatibility of
//! chunk files across versions**: chunk files written with another table
//! cannot be compared. The known-answer tests in `tttd.rs` and `bsw.rs` pin
//! them; a change there needs a new `method=` name in the headers.
//!
//! # Boundary test
//!
//! A position is a boundary for divisor `D` when `h >= u64::MAX - u64::MAX / D`
//! (see [`threshold`]). For a uniformly distributed `h` this happens with
//! probability `(u64::MAX / D + 1) / 2^64 ≈ 1/D`, exactly as `h mod D == D-1`
//! would, but:
//!
//! * it looks at the high bits of `h`, which depend on all 64 bytes of the
//!   window, whereas `h mod D` for a `D` with small factors of two would look
//!   mostly at the low bits, which depend only on the last few bytes;
//! * it costs one comparison instead of a division, and since the backup
//!   threshold is below the main one, the common case (no boundary) is a
//!   single compare-and-branch per byte for TTTD too.

mod bsw;
mod tttd;

pub use bsw::Bsw;
pub use tttd::Tttd;

use crate::formats::headers::ChunkParams;
use crate::formats::Params;
use std::fmt;
use std::str::FromStr;

/// Width of the rolling window in bytes: the gear hash forgets a byte after
/// 64 shifts of a u64.
pub const WINDOW: usize = 64;

/// Seed of the SplitMix64 generator that fills [`GEAR`] ("fsimgear" in
/// ASCII). Part of the chunk file format: do not change.
pub const GEAR_SEED: u64 = 0x6673_696d_6765_6172;

/// Smallest `--avg-size` accepted: below this the window is longer than the
/// chunks and the per-chunk MD5 overhead dominates.
pub const MIN_AVG: usize = 32;

/// Largest `--avg-size` accepted: chunk lengths must fit the u32 length field
/// of a record even for BSW's 16× cap, and the read buffer holds two maximal
/// chunks.
pub const MAX_AVG: usize = 16 << 20;

const fn splitmix64_table(seed: u64) -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut state = seed;
    let mut i = 0;
    while i < 256 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        t[i] = z ^ (z >> 31);
        i += 1;
    }
    t
}

/// The gear table: 256 pseudo-random u64 from SplitMix64 seeded with
/// [`GEAR_SEED`], computed at compile time.
pub static GEAR: [u64; 256] = splitmix64_table(GEAR_SEED);

/// One step of the rolling hash.
#[inline(always)]
pub fn roll(h: u64, byte: u8) -> u64 {
    (h << 1).wrapping_add(GEAR[byte as usize])
}

/// The rolling hash started at 0 after all of `data`. Four independent
/// chains, one per byte position modulo 4, each shifted by 4 per step, are
/// summed at the end: the bytes' contributions do not wait for each other
/// (one chain of `roll` waits for the previous byte at every byte).
#[inline(always)]
pub(super) fn roll_all(data: &[u8]) -> u64 {
    let mut quads = data.chunks_exact(4);
    let mut a = [0u64; 4];
    for q in &mut quads {
        for (acc, &b) in a.iter_mut().zip(q) {
            *acc = (*acc << 4).wrapping_add(GEAR[b as usize]);
        }
    }
    let mut h = (a[0] << 3)
        .wrapping_add(a[1] << 2)
        .wrapping_add(a[2] << 1)
        .wrapping_add(a[3]);
    for &b in quads.remainder() {
        h = roll(h, b);
    }
    h
}

/// The candidates a cutter searches for the end of the next chunk: chunk
/// lengths `first + 1 ..= first + span.len()`, with `h` the rolling hash
/// over the window before the first of them.
pub(super) struct Span<'a> {
    pub first: usize,
    pub span: &'a [u8],
    pub h: u64,
    /// The span ends at `max`: a chunk ends there whatever is found.
    pub at_max: bool,
}

/// What TTTD and BSW do around their search, in one place: no chunk in an
/// empty buffer; a buffer shorter than `min` is the file's last chunk at
/// end of file, else more data is needed (`Err`); otherwise the hash is
/// warmed over the 64 bytes before the shortest chunk's last byte (fewer
/// when `min < 64`), so the hash tested at each candidate covers the last
/// 64 bytes of the chunk, and the candidates up to `min(len, max)` are
/// handed to the cutter.
#[inline(always)]
pub(super) fn frame(
    data: &[u8],
    eof: bool,
    min: usize,
    max: usize,
) -> Result<Span<'_>, Option<usize>> {
    let n = data.len();
    if n == 0 {
        return Err(None);
    }
    if n < min {
        return Err(unfinished(n, eof));
    }
    let end = n.min(max);
    let first = min - 1; // index of the last byte of the shortest chunk
    Ok(Span {
        first,
        span: &data[first..end],
        h: roll_all(&data[min.saturating_sub(WINDOW)..first]),
        at_max: end == max,
    })
}

/// No boundary before the end of the data, which is short of `max`: the
/// rest of the file is the last chunk at end of file, else more is needed.
#[inline(always)]
pub(super) fn unfinished(n: usize, eof: bool) -> Option<usize> {
    eof.then_some(n)
}

/// The threshold for divisor `d`: `h >= threshold(d)` with probability
/// ≈ 1/d. `d` is at least 1 (`threshold(1) == 0`: every position).
pub const fn threshold(d: u64) -> u64 {
    let d = if d == 0 { 1 } else { d };
    u64::MAX - u64::MAX / d
}

/// A content-defined chunker over byte slices. Implementations allocate
/// nothing and keep no state between calls: the same bytes give the same
/// cut whatever the buffering.
pub trait Cut {
    /// Length of the next chunk that starts at `data[0]`, or `None` when
    /// more data is needed to decide (never when `eof` and `data` is not
    /// empty). `eof` says that `data` runs to the end of the stream, so the
    /// remainder becomes the last chunk. Returns `None` on empty data.
    fn cut(&self, data: &[u8], eof: bool) -> Option<usize>;

    /// The longest chunk this chunker produces: a streaming caller needs a
    /// buffer that holds at least this much beyond what it has consumed.
    fn max_len(&self) -> usize;

    /// Iterate over the chunks of a whole slice.
    fn chunks<'a>(&'a self, data: &'a [u8]) -> Chunks<'a, Self>
    where
        Self: Sized,
    {
        Chunks {
            cutter: self,
            data,
            pos: 0,
        }
    }
}

/// A chunk of a slice: its offset and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub offset: usize,
    pub len: usize,
}

/// Iterator over the chunks of a whole slice (the slice is the whole stream).
pub struct Chunks<'a, C> {
    cutter: &'a C,
    data: &'a [u8],
    pos: usize,
}

impl<C: Cut> Iterator for Chunks<'_, C> {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        let len = self.cutter.cut(&self.data[self.pos..], true)?;
        let c = Chunk {
            offset: self.pos,
            len,
        };
        self.pos += len;
        Some(c)
    }
}

/// The chunking methods (`--method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    #[default]
    Tttd,
    Bsw,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Tttd => "tttd",
            Method::Bsw => "bsw",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Method, String> {
        match s {
            "tttd" => Ok(Method::Tttd),
            "bsw" => Ok(Method::Bsw),
            _ => Err(format!(
                "unknown chunking method {s:?}: expected tttd or bsw"
            )),
        }
    }
}

/// A configured chunker of either method: what the chunk stage runs.
/// Dispatch happens once per chunk, not per byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunker {
    Tttd(Tttd),
    Bsw(Bsw),
    /// A feature method ([`crate::chunking::features`]): files are not cut but read
    /// whole and turned into features (`crate::chunking::features::chunk_stream`).
    Features(crate::chunking::features::MethodSpec),
}

impl Chunker {
    /// The chunker of `method` for an expected average chunk size `avg`
    /// (bytes, within [`MIN_AVG`]..=[`MAX_AVG`]).
    pub fn new(method: Method, avg: usize) -> std::result::Result<Chunker, String> {
        if !(MIN_AVG..=MAX_AVG).contains(&avg) {
            return Err(format!(
                "average chunk size {avg} is outside {MIN_AVG}..={MAX_AVG} bytes"
            ));
        }
        Ok(match method {
            Method::Tttd => Chunker::Tttd(Tttd::new(avg)),
            Method::Bsw => Chunker::Bsw(Bsw::new(avg)),
        })
    }

    /// The chunker that wrote records with these header parameters, so a
    /// later stage (a query, a side-by-side view) cuts files the same way.
    /// Errors when the header names another method or sizes this version
    /// does not derive from `avg` (records of an incompatible run).
    pub fn from_params(p: &Params) -> std::result::Result<Chunker, String> {
        Chunker::from_chunk_params(&ChunkParams::parse(p)?)
    }

    /// The chunker that made records with these chunking parameters.
    pub fn from_chunk_params(p: &ChunkParams) -> std::result::Result<Chunker, String> {
        let method = p.method.as_deref();
        if method.is_some_and(crate::chunking::features::is_feature_method) {
            return crate::chunking::features::MethodSpec::from_chunk_params(p)
                .map(Chunker::Features);
        }
        let method: Method = method.ok_or("no method= in the header")?.parse()?;
        let avg = p
            .avg
            .ok_or("no avg= in the header")?
            .try_into()
            .map_err(|_| "avg= out of range")?;
        let c = Chunker::new(method, avg)?;
        // Which view was chunked (`content=`, `pdf=`) is not the
        // chunker's to say.
        let mine = ChunkParams {
            content: p.content.clone(),
            pdf: p.pdf.clone(),
            ..c.chunk_params()
        };
        if let Some(d) = mine.difference(p) {
            return Err(format!(
                "the records were made with other chunking parameters than this fsim makes for method={method} avg={avg}: {d}"
            ));
        }
        Ok(c)
    }

    /// The chunk method, or None for a feature method.
    pub fn method(&self) -> Option<Method> {
        match self {
            Chunker::Tttd(_) => Some(Method::Tttd),
            Chunker::Bsw(_) => Some(Method::Bsw),
            Chunker::Features(_) => None,
        }
    }

    /// The header parameters that say how the chunk records were made,
    /// typed.
    pub fn chunk_params(&self) -> ChunkParams {
        let (method, avg, min, max, div, div2) = match self {
            Chunker::Tttd(t) => (Method::Tttd, t.avg, t.min, t.max, t.div, t.div2),
            Chunker::Bsw(b) => (Method::Bsw, b.avg, b.min, b.max, b.div, 0),
            Chunker::Features(f) => return f.chunk_params(),
        };
        ChunkParams {
            method: Some(method.to_string()),
            avg: Some(avg as u64),
            min: Some(min as u64),
            max: Some(max as u64),
            div: Some(div as u64),
            div2: Some(div2 as u64),
            window: Some(WINDOW as u64),
            hash: Some("md5".into()),
            // Which PDF extractor makes the views: fsim-chunk's header
            // records it beside `content=` (written only with views on,
            // `crate::formats::headers::ChunkParams`).
            pdf: crate::content::pdf_extractor_param().map(Into::into),
            office: crate::content::office_extractor_param(),
            views: crate::content::views_param(),
            ..ChunkParams::default()
        }
    }

    /// [`Chunker::chunk_params`] as header parameters, in
    /// [`crate::formats::CHUNK_PARAM_KEYS`] order.
    pub fn params(&self) -> Params {
        self.chunk_params().to_params()
    }
}

impl Cut for Chunker {
    #[inline]
    fn cut(&self, data: &[u8], eof: bool) -> Option<usize> {
        match self {
            Chunker::Tttd(t) => t.cut(data, eof),
            Chunker::Bsw(b) => b.cut(data, eof),
            // Feature methods do not cut: the whole stream is one piece.
            Chunker::Features(_) => (eof && !data.is_empty()).then_some(data.len()),
        }
    }

    fn max_len(&self) -> usize {
        match self {
            Chunker::Tttd(t) => t.max_len(),
            Chunker::Bsw(b) => b.max_len(),
            Chunker::Features(_) => 0,
        }
    }
}

/// Deterministic text-like test data shared by the chunker tests and the
/// developer tools' (tools/): words of lowercase letters from a fixed LCG,
/// separated by spaces and newlines.
#[doc(hidden)]
pub fn pseudo_text(len: usize, seed: u64) -> Vec<u8> {
    const LETTERS: &[u8; 32] = b"etaoinshrdlucmfwypvbgkjqxzetaoin";
    let mut x = seed;
    let mut out = Vec::with_capacity(len);
    let mut word = 0;
    while out.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (x >> 33) as u32;
        if word > 2 && r.is_multiple_of(6) {
            out.push(if r.is_multiple_of(71) { b'\n' } else { b' ' });
            word = 0;
        } else {
            out.push(LETTERS[(r >> 8) as usize % 32]);
            word += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gear_table_is_pinned() {
        // First entries of SplitMix64 from GEAR_SEED: changing them changes
        // every cut point.
        assert_eq!(GEAR[0], splitmix64_table(GEAR_SEED)[0]);
        let distinct: std::collections::HashSet<u64> = GEAR.iter().copied().collect();
        assert_eq!(distinct.len(), 256);
        assert_eq!(format!("{:016x}", GEAR[0] ^ GEAR[255]), GEAR_PIN);
    }
    const GEAR_PIN: &str = "6e43d0f36de9f52e";

    #[test]
    fn threshold_probability() {
        assert_eq!(threshold(1), 0);
        assert_eq!(threshold(2), u64::MAX - u64::MAX / 2);
        // Fraction of the hash space at or above the threshold ≈ 1/d.
        for d in [27u64, 53, 266, 532, 1000] {
            let frac = (u64::MAX - threshold(d)) as f64 / u64::MAX as f64;
            assert!((frac * d as f64 - 1.0).abs() < 1e-9, "d={d}");
        }
    }

    #[test]
    fn hash_forgets_after_window() {
        let a = pseudo_text(200, 1);
        let mut b = pseudo_text(200, 2);
        b[136..].copy_from_slice(&a[136..]);
        let h = |d: &[u8]| d.iter().fold(0u64, |h, &x| roll(h, x));
        assert_eq!(h(&a), h(&b), "only the last 64 bytes matter");
        assert_ne!(h(&a[..199]), h(&b[..199]).wrapping_add(1));
    }

    #[test]
    fn methods_parse_and_params() {
        assert_eq!("tttd".parse::<Method>(), Ok(Method::Tttd));
        assert_eq!("bsw".parse::<Method>(), Ok(Method::Bsw));
        assert!("x".parse::<Method>().is_err());
        assert!(Chunker::new(Method::Tttd, 31).is_err());
        let p = Chunker::new(Method::Tttd, 1000).unwrap().params();
        let keys: Vec<&str> = p.0.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, crate::formats::CHUNK_PARAM_KEYS[..8]);
        assert_eq!(
            p.0.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            "method=tttd avg=1000 min=453 max=2759 div=532 div2=266 window=64 hash=md5"
        );
        let p = Chunker::new(Method::Bsw, 1000).unwrap().params();
        assert_eq!(
            p.0.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            "method=bsw avg=1000 min=64 max=16000 div=1000 div2=0 window=64 hash=md5"
        );
    }
}

/// Helpers shared by the chunker tests.
#[cfg(test)]
pub(crate) mod tests_common {
    use super::Cut;
    use md5::{Digest, Md5};

    /// Chunk lengths of a whole slice.
    pub fn cut_lengths(c: &impl Cut, data: &[u8]) -> Vec<usize> {
        c.chunks(data).map(|ch| ch.len).collect()
    }

    /// Chunk lengths when the data arrives in blocks of `block` bytes, the
    /// way the chunk stage reads files: cut with `eof = false` while more is
    /// to come, carry the unfinished chunk over.
    pub fn stream_lengths(c: &impl Cut, data: &[u8], block: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut fed = 0;
        loop {
            let take = block.min(data.len() - fed);
            buf.extend_from_slice(&data[fed..fed + take]);
            fed += take;
            let eof = fed == data.len();
            let mut pos = 0;
            while let Some(len) = c.cut(&buf[pos..], eof) {
                out.push(len);
                pos += len;
            }
            buf.drain(..pos);
            if eof {
                assert!(buf.is_empty());
                return out;
            }
        }
    }

    /// How many chunks (by MD5) of `b` do not occur in `a`.
    pub fn changed_chunks(c: &impl Cut, a: &[u8], b: &[u8]) -> usize {
        let hashes = |d: &[u8]| -> Vec<[u8; 16]> {
            c.chunks(d)
                .map(|ch| Md5::digest(&d[ch.offset..ch.offset + ch.len]).into())
                .collect()
        };
        let ha: std::collections::HashSet<[u8; 16]> = hashes(a).into_iter().collect();
        hashes(b).iter().filter(|h| !ha.contains(*h)).count()
    }

    /// A short fingerprint of a list of lengths, for pinning long lists.
    pub fn fingerprint(v: &[usize]) -> u64 {
        v.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ x as u64).wrapping_mul(0x100_0000_01b3)
        })
    }
}
