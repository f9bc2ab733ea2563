//! The line formats that flow between stages (docs/formats.md is the
//! reference): parse, write and escape, in one place.
//!
//! Every intermediate file is text, one record per line, fields separated by
//! a tab, so that `grep`, `awk` and `LC_ALL=C sort` work on it. Each file
//! starts with a header line `#fsim <kind> v1\tkey=value...` that records the
//! parameters of the run, and ends with a trailer `#end <kind>\tkey=value...`
//! that holds counts and an order-independent digest, so a truncated or mixed
//! input is refused with the file name and line instead of silently giving a
//! smaller answer. Both start with `#`, which sorts before every hex digit, so
//! `LC_ALL=C sort` keeps them at the top of a sorted chunk file.
//!
//! Hashes are 32 lowercase hex digits and file ids 10 zero-padded decimal
//! digits: fixed widths make byte order equal numeric order, which is what
//! lets `LC_ALL=C sort` replace `fsim-sort` byte for byte.

use crate::error::{Error, Result};
use std::io::BufRead;

/// Format version written in every header.
pub const VERSION: &str = "v1";

/// Width of a file id in records.
pub const ID_WIDTH: usize = 10;

/// Width of a hash in records.
pub const HASH_WIDTH: usize = 32;

// ---------------------------------------------------------------------------
// Escaping of paths
// ---------------------------------------------------------------------------

/// Escape a path (any bytes but NUL) into printable, valid UTF-8 without tabs
/// or newlines: `\\` for a backslash, `\t`, `\n`, `\r`, and `\xHH` for other
/// control bytes, DEL and bytes that are not part of valid UTF-8. Everything
/// else, including non-ASCII UTF-8, is kept as is. [`unescape_path`] inverts it.
pub fn escape_path(path: &[u8], out: &mut Vec<u8>) {
    let mut rest = path;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s.len(), 0),
            Err(e) => (
                e.valid_up_to(),
                e.error_len().unwrap_or(rest.len() - e.valid_up_to()),
            ),
        };
        for &b in &rest[..valid] {
            match b {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                0..=0x1f | 0x7f => push_hex_escape(b, out),
                _ => out.push(b),
            }
        }
        for &b in &rest[valid..valid + bad] {
            push_hex_escape(b, out);
        }
        rest = &rest[valid + bad..];
    }
}

fn push_hex_escape(b: u8, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&[b'\\', b'x', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
}

/// Escape into a new `String` (always valid UTF-8).
pub fn escape_path_string(path: &[u8]) -> String {
    let mut v = Vec::with_capacity(path.len());
    escape_path(path, &mut v);
    String::from_utf8(v).expect("escape_path writes valid UTF-8")
}

/// Invert [`escape_path`]. Errors name what was wrong.
pub fn unescape_path(s: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b != b'\\' {
            if b < 0x20 || b == 0x7f {
                return Err(format!("unescaped control byte 0x{b:02x} in path"));
            }
            out.push(b);
            i += 1;
            continue;
        }
        match s.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b't') => out.push(b'\t'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b'x') => {
                let h = s
                    .get(i + 2..i + 4)
                    .and_then(|h| Some(hex_val(h[0])? << 4 | hex_val(h[1])?));
                match h {
                    Some(v) if v != 0 => out.push(v),
                    _ => {
                        return Err(
                            "bad \\x escape in path: expected \\xHH with two lowercase hex digits"
                                .into(),
                        )
                    }
                }
                i += 4;
                continue;
            }
            _ => return Err("bad escape in path: expected \\\\, \\t, \\n, \\r or \\xHH".into()),
        }
        i += 2;
    }
    if out.is_empty() {
        return Err("empty path".into());
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Numbers and hashes
// ---------------------------------------------------------------------------

#[inline]
fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

const fn hex_pairs() -> [[u8; 2]; 256] {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [H[i >> 4], H[i & 15]];
        i += 1;
    }
    t
}

const fn dec_pairs() -> [[u8; 2]; 100] {
    let mut t = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
}

/// Byte -> its two lowercase hex digits.
pub(crate) static HEX_PAIRS: [[u8; 2]; 256] = hex_pairs();
/// 0..100 -> its two decimal digits.
pub(crate) static DEC_PAIRS: [[u8; 2]; 100] = dec_pairs();

/// Append a 128-bit value as 32 lowercase hex digits.
#[inline]
pub fn write_hex128(v: u128, out: &mut Vec<u8>) {
    let mut buf = [0u8; 32];
    hex128_into(v, &mut buf);
    out.extend_from_slice(&buf);
}

/// The 32 lowercase hex digits of `v` (most significant first).
#[inline]
pub fn hex128_into(v: u128, buf: &mut [u8; 32]) {
    #[cfg(target_arch = "x86_64")]
    {
        // SSE2 (every x86_64): split the 16 bytes into nibbles, interleave
        // high and low, and add '0' or 'a' - 10 to each.
        use std::arch::x86_64::*;
        let bytes = v.to_be_bytes();
        // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of
        // `bytes`, the stores write the 32 of `buf`.
        unsafe {
            let x = _mm_loadu_si128(bytes.as_ptr().cast());
            let mask = _mm_set1_epi8(0x0f);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), mask);
            let lo = _mm_and_si128(x, mask);
            let digits = |n: __m128i| {
                let letter = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
                _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)), letter)
            };
            _mm_storeu_si128(buf.as_mut_ptr().cast(), digits(_mm_unpacklo_epi8(hi, lo)));
            _mm_storeu_si128(
                buf.as_mut_ptr().add(16).cast(),
                digits(_mm_unpackhi_epi8(hi, lo)),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for (i, slot) in buf.iter_mut().enumerate() {
            *slot = HEX[((v >> (124 - 4 * i)) & 15) as usize];
        }
    }
}

/// Format a 128-bit value as 32 lowercase hex digits.
pub fn hex128(v: u128) -> String {
    let mut out = Vec::with_capacity(32);
    write_hex128(v, &mut out);
    String::from_utf8(out).unwrap()
}

/// Parse exactly 32 lowercase hex digits.
///
/// Every chunk record, file-table line and partition `F` line holds one, so
/// this is the hottest parse of the pipeline: with AVX2 (fsim is built with
/// `target-cpu=native`) the 32 digits are checked and packed in a handful
/// of vector instructions instead of 32 dependent table steps.
#[inline]
pub fn parse_hex128(s: &[u8]) -> Option<u128> {
    let s: &[u8; HASH_WIDTH] = s.try_into().ok()?;
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // SAFETY: AVX2 is enabled at compile time (cfg above), and the load
        // reads exactly the 32 bytes of `s`.
        unsafe { parse_hex128_avx2(s) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    parse_hex128_scalar(s)
}

/// The portable [`parse_hex128`] (and the reference its vector form is
/// tested against).
#[inline]
pub fn parse_hex128_scalar(s: &[u8; HASH_WIDTH]) -> Option<u128> {
    let mut v: u128 = 0;
    for &c in s {
        v = (v << 4) | hex_val(c)? as u128;
    }
    Some(v)
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
#[inline]
unsafe fn parse_hex128_avx2(s: &[u8; HASH_WIDTH]) -> Option<u128> {
    use std::arch::x86_64::*;
    let v = _mm256_loadu_si256(s.as_ptr() as *const __m256i);
    let set = |c: u8| _mm256_set1_epi8(c as i8);
    // Signed compares: bytes >= 0x80 are negative and fail both ranges.
    let digit = _mm256_and_si256(
        _mm256_cmpgt_epi8(v, set(b'0' - 1)),
        _mm256_cmpgt_epi8(set(b'9' + 1), v),
    );
    let alpha = _mm256_and_si256(
        _mm256_cmpgt_epi8(v, set(b'a' - 1)),
        _mm256_cmpgt_epi8(set(b'f' + 1), v),
    );
    if _mm256_movemask_epi8(_mm256_or_si256(digit, alpha)) != -1 {
        return None;
    }
    // '0'..'9' -> 0..9 (low nibble); 'a'..'f' -> 1..6 + 9.
    let nib = _mm256_add_epi8(
        _mm256_and_si256(v, set(0x0f)),
        _mm256_and_si256(alpha, set(9)),
    );
    // Each pair of digits -> 16 * first + second, then the 16-bit lanes
    // packed back to bytes (per 128-bit half: its 8 bytes, twice).
    let pairs = _mm256_maddubs_epi16(nib, _mm256_set1_epi16(0x0110));
    let packed = _mm256_packus_epi16(pairs, pairs);
    let hi = _mm_cvtsi128_si64(_mm256_castsi256_si128(packed)) as u64;
    let lo = _mm_cvtsi128_si64(_mm256_extracti128_si256(packed, 1)) as u64;
    Some(((hi.swap_bytes() as u128) << 64) | lo.swap_bytes() as u128)
}

/// The 16 bytes of an MD5 digest as the u128 whose hex is the usual digest text.
#[inline]
pub fn digest_to_u128(d: &[u8]) -> u128 {
    let mut a = [0u8; 16];
    a.copy_from_slice(&d[..16]);
    u128::from_be_bytes(a)
}

/// Append a file id as 10 zero-padded decimal digits.
#[inline]
pub fn write_id(id: u32, out: &mut Vec<u8>) {
    let mut buf = [b'0'; ID_WIDTH];
    let mut v = id;
    for i in (0..ID_WIDTH / 2).rev() {
        buf[2 * i..2 * i + 2].copy_from_slice(&DEC_PAIRS[(v % 100) as usize]);
        v /= 100;
    }
    out.extend_from_slice(&buf);
}

/// Format a file id (10 digits).
pub fn id_string(id: u32) -> String {
    let mut v = Vec::with_capacity(ID_WIDTH);
    write_id(id, &mut v);
    String::from_utf8(v).unwrap()
}

/// Parse a file id: exactly 10 decimal digits, within u32.
#[inline]
pub fn parse_id(s: &[u8]) -> Option<u32> {
    let s: &[u8; ID_WIDTH] = s.try_into().ok()?;
    // The first eight digits at once (SWAR), then the last two.
    let high = parse_8_digits(u64::from_le_bytes(s[..8].try_into().unwrap()))?;
    let (a, b) = (s[8].wrapping_sub(b'0'), s[9].wrapping_sub(b'0'));
    if a > 9 || b > 9 {
        return None;
    }
    u32::try_from(high * 100 + (a * 10 + b) as u64).ok()
}

/// Eight ASCII decimal digits, first digit in the lowest byte, as a number;
/// `None` unless all eight are digits.
#[inline]
fn parse_8_digits(v: u64) -> Option<u64> {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    // High nibble 3 in every byte, and low nibble <= 9 (adding 6 must not
    // carry into the high nibble).
    if v & HIGH != ZEROS || v.wrapping_add(0x0606_0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    let v = v - ZEROS;
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    Some((v.wrapping_mul(10000) + (v >> 32)) & 0xffff_ffff)
}

/// Append an unsigned integer in decimal.
#[inline]
pub fn write_u64(v: u64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut v = v;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Parse a decimal unsigned integer (no sign, no spaces, at most 20 digits).
#[inline]
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Split a line (without its newline) on tabs into a fixed array of fields.
/// Returns None when the number of fields differs from `N`.
#[inline]
pub fn split_fields<const N: usize>(line: &[u8]) -> Option<[&[u8]; N]> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut rest = line;
    for (i, slot) in out.iter_mut().enumerate() {
        if i + 1 == N {
            if rest.contains(&b'\t') {
                return None;
            }
            *slot = rest;
        } else {
            let p = rest.iter().position(|&c| c == b'\t')?;
            *slot = &rest[..p];
            rest = &rest[p + 1..];
        }
    }
    Some(out)
}

// ---------------------------------------------------------------------------
// Chunk records
// ---------------------------------------------------------------------------

/// One chunk (or feature) of one file: `<hash>\t<file id>\t<length>`.
///
/// `len` is the chunk's byte length for the chunking methods (the weight of
/// the feature for the others). A chunk that occurs twice in a file gives
/// two identical records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkRecord {
    pub hash: u128,
    pub file: u32,
    pub len: u32,
}

/// The chunk records of one file, formatted with the part that is the same
/// for all of them (`\t`, the file id, `\t`) made once: the same bytes as
/// [`ChunkRecord::write`], for the chunk stage's writer.
pub struct ChunkLines {
    mid: [u8; ID_WIDTH + 2],
}

impl ChunkLines {
    pub fn new(file: u32) -> ChunkLines {
        let mut v = Vec::with_capacity(ID_WIDTH + 2);
        v.push(b'\t');
        write_id(file, &mut v);
        v.push(b'\t');
        let mut mid = [0u8; ID_WIDTH + 2];
        mid.copy_from_slice(&v);
        ChunkLines { mid }
    }

    /// Append the record of a chunk of this file.
    #[inline]
    pub fn write(&self, hash: u128, len: u32, out: &mut Vec<u8>) {
        const AT: usize = HASH_WIDTH + ID_WIDTH + 2;
        // Hash, id, at most 10 digits of length, newline.
        let mut line = [0u8; AT + 11];
        let (hex, rest) = line.split_at_mut(HASH_WIDTH);
        hex128_into(hash, hex.try_into().expect("32 bytes"));
        rest[..ID_WIDTH + 2].copy_from_slice(&self.mid);
        let digits = if len < 10 {
            1
        } else if len < 100 {
            2
        } else if len < 1000 {
            3
        } else {
            (len.ilog10() + 1) as usize
        };
        let mut v = len;
        for slot in line[AT..AT + digits].iter_mut().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
        }
        line[AT + digits] = b'\n';
        out.extend_from_slice(&line[..AT + digits + 1]);
    }
}

impl ChunkRecord {
    pub const EXPECTED: &'static str =
        "a chunk record: 32 lowercase hex digits, a tab, a 10-digit file id, a tab, a length";

    #[inline]
    pub fn write(&self, out: &mut Vec<u8>) {
        write_hex128(self.hash, out);
        out.push(b'\t');
        write_id(self.file, out);
        out.push(b'\t');
        write_u64(self.len as u64, out);
        out.push(b'\n');
    }

    /// Parse one line without its newline.
    #[inline]
    pub fn parse(line: &[u8]) -> Option<ChunkRecord> {
        if line.len() < HASH_WIDTH + 1 + ID_WIDTH + 2
            || line[HASH_WIDTH] != b'\t'
            || line[HASH_WIDTH + 1 + ID_WIDTH] != b'\t'
        {
            return None;
        }
        let hash = parse_hex128(&line[..HASH_WIDTH])?;
        let file = parse_id(&line[HASH_WIDTH + 1..HASH_WIDTH + 1 + ID_WIDTH])?;
        let len = parse_u64(&line[HASH_WIDTH + ID_WIDTH + 2..])?;
        Some(ChunkRecord {
            hash,
            file,
            len: u32::try_from(len).ok()?,
        })
    }

    /// The contribution of this record to a stream digest (see [`Digest`]).
    #[inline]
    pub fn mix(&self) -> u128 {
        mix128(self.hash ^ ((self.file as u128) << 96) ^ ((self.len as u128) << 64))
    }
}

/// A cheap bijective mixer so that the digest of a multiset of records is
/// sensitive to each field.
#[inline]
pub fn mix128(x: u128) -> u128 {
    const K1: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;
    const K2: u128 = 0xd6e8_feb8_6659_fd93_a0f4_3b2b_7bd2_2e41;
    let x = x.wrapping_mul(K1);
    let x = x ^ (x >> 67);
    x.wrapping_mul(K2)
}

/// An order-independent digest of a multiset of records (wrapping sum of
/// their mixes) plus their count. A sorted file has the same digest as the
/// unsorted one, so each stage can check that it saw exactly the records its
/// producer wrote, even after `LC_ALL=C sort`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Digest {
    pub count: u64,
    pub sum: u128,
}

impl Digest {
    #[inline]
    pub fn add(&mut self, r: &ChunkRecord) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(r.mix());
    }

    #[inline]
    pub fn add_mix(&mut self, m: u128) {
        self.count += 1;
        self.sum = self.sum.wrapping_add(m);
    }

    pub fn merge(&mut self, o: &Digest) {
        self.count += o.count;
        self.sum = self.sum.wrapping_add(o.sum);
    }
}

// ---------------------------------------------------------------------------
// File table
// ---------------------------------------------------------------------------

/// Coarse content type, recorded while chunking (sif's file types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileType {
    Empty,
    Text,
    Binary,
    Compressed,
    Pdf,
    Postscript,
    Image,
}

impl FileType {
    pub const ALL: [FileType; 7] = [
        FileType::Empty,
        FileType::Text,
        FileType::Binary,
        FileType::Compressed,
        FileType::Pdf,
        FileType::Postscript,
        FileType::Image,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FileType::Empty => "empty",
            FileType::Text => "text",
            FileType::Binary => "binary",
            FileType::Compressed => "compressed",
            FileType::Pdf => "pdf",
            FileType::Postscript => "postscript",
            FileType::Image => "image",
        }
    }

    pub fn parse(s: &[u8]) -> Option<FileType> {
        FileType::ALL
            .into_iter()
            .find(|t| t.as_str().as_bytes() == s)
    }

    /// Classify a file from its first bytes (up to a few KB) and its size:
    /// magic numbers first, then "text" when there is no NUL byte and the
    /// bytes are mostly printable (valid UTF-8 or Latin-1 text).
    pub fn classify(head: &[u8], size: u64) -> FileType {
        if size == 0 {
            return FileType::Empty;
        }
        let starts = |m: &[u8]| head.starts_with(m);
        if starts(b"%PDF-") {
            return FileType::Pdf;
        }
        if starts(b"%!PS") || starts(b"\xc5\xd0\xd3\xc6") {
            return FileType::Postscript;
        }
        if starts(b"\x1f\x8b")
            || starts(b"PK\x03\x04")
            || starts(b"BZh")
            || starts(b"\xfd7zXZ\x00")
            || starts(b"\x28\xb5\x2f\xfd")
            || starts(b"7z\xbc\xaf\x27\x1c")
            || starts(b"Rar!\x1a\x07")
            || starts(b"\x1f\x9d")
        {
            return FileType::Compressed;
        }
        if starts(b"\x89PNG\r\n\x1a\n")
            || starts(b"\xff\xd8\xff")
            || starts(b"GIF87a")
            || starts(b"GIF89a")
        {
            return FileType::Image;
        }
        if head.contains(&0) {
            return FileType::Binary;
        }
        let suspicious = count_suspicious(head);
        if suspicious * 100 > head.len() {
            FileType::Binary
        } else {
            FileType::Text
        }
    }
}

/// Control bytes other than tab, newline, carriage return, form feed and
/// escape. Branch-free per byte with u8 counters, so it vectorises:
/// classifying the first 8 KiB of every file was costing more than chunking
/// it.
fn count_suspicious(head: &[u8]) -> usize {
    #[inline(always)]
    fn bad(b: u8) -> u8 {
        ((b < 0x20) & (b != b'\t') & (b != b'\n') & (b != b'\r') & (b != 0x0c) & (b != 0x1b)) as u8
    }
    // 32 u8 counters, one per byte of a 32-byte group, summed before they
    // can overflow: the inner loop is a fixed 32 bytes, so it is all vector
    // code (a 255-byte block left a 31-byte scalar tail in each).
    let mut groups = head.chunks_exact(32);
    let mut total = 0usize;
    let mut acc = [0u8; 32];
    let mut rounds = 0u32;
    for g in &mut groups {
        for (a, &b) in acc.iter_mut().zip(g) {
            *a += bad(b);
        }
        rounds += 1;
        if rounds == 255 {
            total += acc.iter().map(|&a| a as usize).sum::<usize>();
            acc = [0; 32];
            rounds = 0;
        }
    }
    total += acc.iter().map(|&a| a as usize).sum::<usize>();
    total
        + groups
            .remainder()
            .iter()
            .map(|&b| bad(b) as usize)
            .sum::<usize>()
}

/// One line of the file table:
/// `<id>\t<size>\t<mtime>\t<content hash>\t<type>\t<escaped path>`.
///
/// `mtime` is `seconds.nanoseconds` since the epoch (may be negative),
/// `content` identifies the whole content (for the chunking methods: MD5 over
/// the concatenated MD5 digests of the file's chunks, as the paper's section
/// 2.4 suggests, so it costs nothing extra).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub id: u32,
    pub size: u64,
    pub mtime_s: i64,
    pub mtime_ns: u32,
    pub content: u128,
    pub ftype: FileType,
    pub path: Vec<u8>,
}

impl FileEntry {
    pub const EXPECTED: &'static str =
        "a file record: id, size, mtime, content hash, type and path separated by tabs";

    pub fn write(&self, out: &mut Vec<u8>) {
        write_id(self.id, out);
        out.push(b'\t');
        write_u64(self.size, out);
        out.push(b'\t');
        if self.mtime_s < 0 {
            out.push(b'-');
        }
        write_u64(self.mtime_s.unsigned_abs(), out);
        out.push(b'.');
        let ns = format!("{:09}", self.mtime_ns);
        out.extend_from_slice(ns.as_bytes());
        out.push(b'\t');
        write_hex128(self.content, out);
        out.push(b'\t');
        out.extend_from_slice(self.ftype.as_str().as_bytes());
        out.push(b'\t');
        escape_path(&self.path, out);
        out.push(b'\n');
    }

    pub fn parse(line: &[u8]) -> std::result::Result<FileEntry, String> {
        let [id, size, mtime, content, ftype, path] =
            split_fields::<6>(line).ok_or_else(|| format!("expected {}", Self::EXPECTED))?;
        let id = parse_id(id).ok_or("expected a 10-digit file id in field 1")?;
        let size = parse_u64(size).ok_or("expected a size in bytes in field 2")?;
        let (neg, mt) = match mtime.strip_prefix(b"-") {
            Some(m) => (true, m),
            None => (false, mtime),
        };
        let dot = mt
            .iter()
            .position(|&c| c == b'.')
            .ok_or("expected mtime as seconds.nanoseconds in field 3")?;
        let secs =
            parse_u64(&mt[..dot]).ok_or("expected mtime as seconds.nanoseconds in field 3")?;
        let frac = &mt[dot + 1..];
        if frac.len() != 9 {
            return Err("expected mtime as seconds.nanoseconds (9 digits) in field 3".into());
        }
        let ns = parse_u64(frac).ok_or("expected mtime as seconds.nanoseconds in field 3")? as u32;
        let secs = i64::try_from(secs).map_err(|_| "mtime out of range")?;
        let content = parse_hex128(content)
            .ok_or("expected a 32-digit lowercase hex content hash in field 4")?;
        let ftype =
            FileType::parse(ftype).ok_or("expected a file type (text, binary, ...) in field 5")?;
        let path = unescape_path(path).map_err(|e| format!("field 6: {e}"))?;
        Ok(FileEntry {
            id,
            size,
            mtime_s: if neg { -secs } else { secs },
            mtime_ns: ns,
            content,
            ftype,
            path,
        })
    }
}

// ---------------------------------------------------------------------------
// Headers, trailers and parameters
// ---------------------------------------------------------------------------

/// Ordered `key=value` parameters of a header or trailer line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Params(pub Vec<(String, String)>);

impl Params {
    pub fn new() -> Self {
        Params(Vec::new())
    }

    pub fn with(mut self, k: &str, v: impl ToString) -> Self {
        self.set(k, v);
        self
    }

    pub fn set(&mut self, k: &str, v: impl ToString) {
        let v = v.to_string();
        match self.0.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k.to_string(), v)),
        }
    }

    pub fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    pub fn get_u64(&self, k: &str) -> Option<u64> {
        self.get(k).and_then(|v| v.parse().ok())
    }

    pub fn get_u128_hex(&self, k: &str) -> Option<u128> {
        self.get(k).and_then(|v| parse_hex128(v.as_bytes()))
    }

    /// Keep only the keys of `keys`, in their order (e.g. the chunking
    /// parameters out of a longer header).
    pub fn only(&self, keys: &[&str]) -> Params {
        Params(
            keys.iter()
                .filter_map(|k| self.get(k).map(|v| (k.to_string(), v.to_string())))
                .collect(),
        )
    }

    fn write(&self, out: &mut Vec<u8>) {
        for (k, v) in &self.0 {
            out.push(b'\t');
            out.extend_from_slice(k.as_bytes());
            out.push(b'=');
            out.extend_from_slice(v.as_bytes());
        }
    }

    fn parse(fields: &[u8]) -> std::result::Result<Params, String> {
        let mut p = Params::new();
        if fields.is_empty() {
            return Ok(p);
        }
        for f in fields.split(|&c| c == b'\t') {
            let s = std::str::from_utf8(f).map_err(|_| "header parameter is not UTF-8")?;
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| format!("expected key=value in header, found {s:?}"))?;
            p.0.push((k.to_string(), v.to_string()));
        }
        Ok(p)
    }

    /// Describe the first difference with `other` in a sentence.
    pub fn difference(&self, other: &Params) -> Option<String> {
        for (k, v) in &self.0 {
            match other.get(k) {
                Some(w) if w == v => {}
                Some(w) => return Some(format!("{k}={v} here but {k}={w} before")),
                None => return Some(format!("{k}={v} here but no {k} before")),
            }
        }
        for (k, w) in &other.0 {
            if self.get(k).is_none() {
                return Some(format!("no {k} here but {k}={w} before"));
            }
        }
        None
    }
}

/// Which file's size a percentage threshold refers to (`--percent-of`), as
/// recorded in pairs headers (`percent-of=smaller`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PercentOf {
    /// Of the smaller file: finds containment (a file wholly inside another).
    Smaller,
    /// Of the larger file: only files that are mostly the same.
    Larger,
}

impl PercentOf {
    pub fn as_str(self) -> &'static str {
        match self {
            PercentOf::Smaller => "smaller",
            PercentOf::Larger => "larger",
        }
    }

    /// The size a percentage of a pair of sizes refers to.
    pub fn base(self, a: u64, b: u64) -> u64 {
        match self {
            PercentOf::Smaller => a.min(b),
            PercentOf::Larger => a.max(b),
        }
    }
}

/// The parameters of the chunking that define whether two chunk files can
/// be compared: every later stage carries them in its header. The first
/// eight are those of the chunk methods (tttd, bsw); the others those of the
/// feature methods (`crate::chunking::features::MethodSpec::params`). A key absent
/// from both headers compares equal.
pub const CHUNK_PARAM_KEYS: &[&str] = &[
    "method",
    "avg",
    "min",
    "max",
    "div",
    "div2",
    "window",
    "hash",
    "n",
    "bits",
    "anchors",
    "k",
    "s",
    "b",
    "fold-case",
    "collapse-whitespace",
    "strip-html",
];

/// The header parameters a stage passes on to the next: the chunking
/// parameters plus the identity of the templates ignored since
/// fsim-partition (`templates=`, `template-chunks=`; see
/// [`crate::stages::templates`]).
pub fn stage_params(p: &Params) -> Params {
    let mut out = p.only(CHUNK_PARAM_KEYS);
    for (k, v) in p.only(crate::stages::templates::TEMPLATE_PARAM_KEYS).0 {
        out.set(&k, v);
    }
    out
}

/// The kinds of file fsim writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Files,
    Chunks,
    Partition,
    Bins,
    Pairs,
    /// Shared regions of verified pairs (`fsim-verify --regions`).
    Regions,
    /// Template chunks to ignore (`fsim-template`).
    Templates,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Files => "files",
            Kind::Chunks => "chunks",
            Kind::Partition => "partition",
            Kind::Bins => "bins",
            Kind::Pairs => "pairs",
            Kind::Regions => "regions",
            Kind::Templates => "templates",
        }
    }

    fn parse(s: &[u8]) -> Option<Kind> {
        [
            Kind::Files,
            Kind::Chunks,
            Kind::Partition,
            Kind::Bins,
            Kind::Pairs,
            Kind::Regions,
            Kind::Templates,
        ]
        .into_iter()
        .find(|k| k.as_str().as_bytes() == s)
    }

    /// Which stage writes this kind, for error messages.
    pub fn producer(self) -> &'static str {
        match self {
            Kind::Files => "fsim-chunk --files-out",
            Kind::Chunks => "fsim-chunk or fsim-sort",
            Kind::Partition => "fsim-partition",
            Kind::Bins => "fsim-binpack",
            Kind::Pairs => "fsim-analyze",
            Kind::Regions => "fsim-verify --regions",
            Kind::Templates => "fsim-template",
        }
    }
}

/// Append a header line: `#fsim <kind> v1\tk=v...`.
pub fn write_header(kind: Kind, params: &Params, out: &mut Vec<u8>) {
    out.extend_from_slice(b"#fsim ");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(VERSION.as_bytes());
    params.write(out);
    out.push(b'\n');
}

/// Append a trailer line: `#end <kind>\tk=v...`.
pub fn write_trailer(kind: Kind, params: &Params, out: &mut Vec<u8>) {
    out.extend_from_slice(b"#end ");
    out.extend_from_slice(kind.as_str().as_bytes());
    params.write(out);
    out.push(b'\n');
}

/// Params of a digest for a trailer.
pub fn digest_params(d: &Digest, count_key: &str) -> Params {
    Params::new()
        .with(count_key, d.count)
        .with("digest", hex128(d.sum))
}

/// A classified input line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    Header(Kind, Params),
    Trailer(Kind, Params),
    /// Another `#` line (comment or a section marker such as `#bin`).
    Comment(&'a [u8]),
    Data(&'a [u8]),
}

/// Reads lines of an fsim file with a reused buffer, knows its name and the
/// current line number, and makes errors that say both.
pub struct LineReader<R> {
    inner: R,
    name: String,
    line: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, name: impl Into<String>) -> Self {
        LineReader {
            inner,
            name: name.into(),
            line: 0,
            buf: Vec::with_capacity(256),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// An input error at the current line.
    pub fn error(&self, msg: impl Into<String>) -> Error {
        Error::input(self.name.clone(), self.line, msg)
    }

    /// Next line without its newline, or None at the end. A last line
    /// without a newline is an error: it is what a cut-off file looks like.
    pub fn next_raw(&mut self) -> Result<Option<&[u8]>> {
        self.buf.clear();
        let n = self
            .inner
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| Error::Io {
                context: format!("reading {} after line {}", self.name, self.line),
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.last() != Some(&b'\n') {
            return Err(self.error("last line has no newline: the file is truncated"));
        }
        self.buf.pop();
        Ok(Some(&self.buf))
    }

    /// Next line, classified.
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>> {
        Ok(self.next_numbered()?.map(|(line, _)| line))
    }

    /// Next line, classified, with its line number (for the caller's own
    /// errors about it).
    pub fn next_numbered(&mut self) -> Result<Option<(Line<'_>, u64)>> {
        if self.next_raw()?.is_none() {
            return Ok(None);
        }
        // The name is cloned only for an error, not for every line.
        let (name, line_no) = (&self.name, self.line);
        match classify_line(&self.buf) {
            Ok(line) => Ok(Some((line, line_no))),
            Err(m) => Err(Error::input(name.clone(), line_no, m)),
        }
    }
}

/// Classify one line (without newline).
pub fn classify_line(raw: &[u8]) -> std::result::Result<Line<'_>, String> {
    if raw.first() != Some(&b'#') {
        return Ok(Line::Data(raw));
    }
    if let Some(rest) = raw.strip_prefix(b"#fsim ") {
        let end = rest.iter().position(|&c| c == b'\t').unwrap_or(rest.len());
        let mut words = rest[..end].split(|&c| c == b' ');
        let kind = words
            .next()
            .and_then(Kind::parse)
            .ok_or("unknown fsim file kind in header")?;
        let ver = words.next().unwrap_or(b"");
        if ver != VERSION.as_bytes() {
            return Err(format!(
                "unsupported format version {:?} (this fsim reads {VERSION})",
                String::from_utf8_lossy(ver)
            ));
        }
        let params = Params::parse(rest.get(end + 1..).unwrap_or(b""))?;
        return Ok(Line::Header(kind, params));
    }
    if let Some(rest) = raw.strip_prefix(b"#end ") {
        let end = rest.iter().position(|&c| c == b'\t').unwrap_or(rest.len());
        let kind = Kind::parse(&rest[..end]).ok_or("unknown fsim file kind in trailer")?;
        let params = Params::parse(rest.get(end + 1..).unwrap_or(b""))?;
        return Ok(Line::Trailer(kind, params));
    }
    Ok(Line::Comment(raw))
}

/// Tracks the headers and trailers seen in an input (which may be several
/// files concatenated, or a sorted file where they all come first) and
/// checks them: one kind, one set of chunking parameters, and at the end
/// the record count and digest that the trailers announced.
#[derive(Debug)]
pub struct InputCheck {
    pub kind: Kind,
    /// Parameters of the first header.
    pub params: Option<Params>,
    /// Sum of the trailers' counts and digests.
    pub expected: Digest,
    pub trailers: u64,
    count_key: &'static str,
}

impl InputCheck {
    pub fn new(kind: Kind, count_key: &'static str) -> Self {
        InputCheck {
            kind,
            params: None,
            expected: Digest::default(),
            trailers: 0,
            count_key,
        }
    }

    /// Feed a header; errors (as messages for the current line) on another
    /// kind or on parameters that differ from the first header's.
    pub fn header(&mut self, kind: Kind, params: Params) -> std::result::Result<(), String> {
        if kind != self.kind {
            return Err(format!(
                "this is a {} file (written by {}), expected a {} file (written by {})",
                kind.as_str(),
                kind.producer(),
                self.kind.as_str(),
                self.kind.producer()
            ));
        }
        let chunk = params.only(CHUNK_PARAM_KEYS);
        match &self.params {
            None => self.params = Some(params),
            Some(first) => {
                if let Some(d) = chunk.difference(&first.only(CHUNK_PARAM_KEYS)) {
                    return Err(format!(
                        "records from runs with different parameters are mixed: {d}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Feed a trailer.
    pub fn trailer(&mut self, kind: Kind, params: &Params) -> std::result::Result<(), String> {
        if kind != self.kind {
            return Err(format!(
                "trailer of a {} file in a {} file",
                kind.as_str(),
                self.kind.as_str()
            ));
        }
        let count = params
            .get_u64(self.count_key)
            .ok_or_else(|| format!("trailer without {}=", self.count_key))?;
        let sum = params
            .get_u128_hex("digest")
            .ok_or("trailer without digest=")?;
        self.expected.merge(&Digest { count, sum });
        self.trailers += 1;
        Ok(())
    }

    /// At the end of the input: was there a header and a trailer, and did the
    /// records add up to what the trailers announced?
    pub fn finish(&self, seen: &Digest, name: &str, line: u64) -> Result<()> {
        if self.params.is_none() {
            return Err(Error::input(
                name,
                line,
                format!(
                    "no '#fsim {} v1' header: expected a {} file written by {}",
                    self.kind.as_str(),
                    self.kind.as_str(),
                    self.kind.producer()
                ),
            ));
        }
        if self.trailers == 0 {
            return Err(Error::input(
                name,
                line,
                format!(
                    "no '#end {}' trailer: the file is truncated or its writer was interrupted",
                    self.kind.as_str()
                ),
            ));
        }
        if seen.count != self.expected.count {
            return Err(Error::input(
                name,
                line,
                format!(
                    "{} {} read but the trailer announced {}: the file is truncated or was edited",
                    seen.count, self.count_key, self.expected.count
                ),
            ));
        }
        if seen.sum != self.expected.sum {
            return Err(Error::input(name, line, "the records do not match the trailer's digest: the file was edited or mixed with another run's records"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escape_known_answers() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain/path.txt", "plain/path.txt"),
            (b"tab\there", "tab\\there"),
            (b"new\nline", "new\\nline"),
            (b"back\\slash", "back\\\\slash"),
            (b"cr\r", "cr\\r"),
            (b"bell\x07", "bell\\x07"),
            (b"bad\xffutf8", "bad\\xffutf8"),
            ("caf\u{e9}".as_bytes(), "caf\u{e9}"),
            (b"<script>=-x", "<script>=-x"),
        ];
        for (raw, esc) in cases {
            assert_eq!(escape_path_string(raw), *esc);
            assert_eq!(unescape_path(esc.as_bytes()).unwrap(), *raw);
        }
    }

    #[test]
    fn unescape_errors() {
        assert!(unescape_path(b"a\\q").is_err());
        assert!(unescape_path(b"a\\x0").is_err());
        assert!(unescape_path(b"a\\x00").is_err());
        assert!(unescape_path(b"a\tb").is_err());
        assert!(unescape_path(b"").is_err());
    }

    /// The vector hex parser against the portable one, on digests, on
    /// every single-byte corruption of a digest, and on its edge values.
    #[test]
    fn hex128_vector_matches_scalar() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        for round in 0..2000u32 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let v = mix128(rng as u128 ^ ((round as u128) << 64));
            let v = match round {
                0 => 0,
                1 => u128::MAX,
                _ => v,
            };
            let text = hex128(v);
            let mut s: [u8; HASH_WIDTH] = text.as_bytes().try_into().unwrap();
            assert_eq!(parse_hex128(&s), Some(v));
            assert_eq!(parse_hex128_scalar(&s), Some(v));
            let at = (rng >> 32) as usize % HASH_WIDTH;
            s[at] = (rng >> 40) as u8;
            assert_eq!(parse_hex128(&s), parse_hex128_scalar(&s), "{:?}", s);
        }
        for c in 0..=255u8 {
            let mut s = [b'0'; HASH_WIDTH];
            s[HASH_WIDTH - 1] = c;
            let want = match c {
                b'0'..=b'9' => Some((c - b'0') as u128),
                b'a'..=b'f' => Some((c - b'a' + 10) as u128),
                _ => None,
            };
            assert_eq!(parse_hex128(&s), want, "byte {c}");
        }
        assert_eq!(parse_hex128(b"0123"), None);
    }

    #[test]
    fn parse_id_known_answers() {
        assert_eq!(parse_id(b"0000000000"), Some(0));
        assert_eq!(parse_id(b"0000000042"), Some(42));
        assert_eq!(parse_id(b"1234567890"), Some(1_234_567_890));
        assert_eq!(parse_id(b"4294967295"), Some(u32::MAX));
        assert_eq!(parse_id(b"4294967296"), None);
        assert_eq!(parse_id(b"9999999999"), None);
        assert_eq!(parse_id(b"000000004"), None);
        assert_eq!(parse_id(b"00000000042"), None);
        for at in 0..ID_WIDTH {
            for c in [b'/', b':', b' ', b'a', 0x80, 0xb0, 0x3a, 0x2f] {
                let mut s = *b"1234567890";
                s[at] = c;
                assert_eq!(parse_id(&s), None, "{:?}", s);
            }
        }
    }

    proptest! {
        #[test]
        fn escape_round_trips(path in proptest::collection::vec(1u8..=255, 1..64)) {
            let esc = escape_path_string(&path);
            prop_assert!(!esc.contains('\t') && !esc.contains('\n'));
            prop_assert_eq!(unescape_path(esc.as_bytes()).unwrap(), path);
        }

        #[test]
        fn chunk_record_round_trips(hash: u128, file: u32, len: u32) {
            let r = ChunkRecord { hash, file, len };
            let mut v = Vec::new();
            r.write(&mut v);
            prop_assert_eq!(v.last(), Some(&b'\n'));
            prop_assert_eq!(ChunkRecord::parse(&v[..v.len() - 1]), Some(r));
        }

        #[test]
        fn parse_id_matches_decimal(id: u32, small in 0u32..100_000) {
            for v in [id, small] {
                let mut s = Vec::new();
                write_id(v, &mut s);
                prop_assert_eq!(parse_id(&s), Some(v));
            }
        }

        #[test]
        fn parsers_never_panic(line in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = ChunkRecord::parse(&line);
            let _ = FileEntry::parse(&line);
            let _ = classify_line(&line);
            let _ = unescape_path(&line);
        }

        #[test]
        fn byte_order_is_numeric_order(a: (u128, u32), b: (u128, u32)) {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            ChunkRecord { hash: a.0, file: a.1, len: 7 }.write(&mut x);
            ChunkRecord { hash: b.0, file: b.1, len: 7 }.write(&mut y);
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
        }
    }

    #[test]
    fn file_entry_round_trip() {
        let e = FileEntry {
            id: 42,
            size: 1234,
            mtime_s: -5,
            mtime_ns: 7,
            content: 0xd41d8cd98f00b204e9800998ecf8427e,
            ftype: FileType::Text,
            path: b"dir/a\tb\nc\xff".to_vec(),
        };
        let mut v = Vec::new();
        e.write(&mut v);
        assert_eq!(
            String::from_utf8(v.clone()).unwrap(),
            "0000000042\t1234\t-5.000000007\td41d8cd98f00b204e9800998ecf8427e\ttext\tdir/a\\tb\\nc\\xff\n"
        );
        assert_eq!(FileEntry::parse(&v[..v.len() - 1]).unwrap(), e);
    }

    #[test]
    fn headers_and_trailers() {
        let p = Params::new().with("method", "tttd").with("avg", 1000);
        let mut v = Vec::new();
        write_header(Kind::Chunks, &p, &mut v);
        assert_eq!(v, b"#fsim chunks v1\tmethod=tttd\tavg=1000\n");
        assert_eq!(
            classify_line(&v[..v.len() - 1]).unwrap(),
            Line::Header(Kind::Chunks, p.clone())
        );
        let mut check = InputCheck::new(Kind::Chunks, "records");
        check.header(Kind::Chunks, p.clone()).unwrap();
        let other = Params::new().with("method", "tttd").with("avg", 100);
        let err = check.header(Kind::Chunks, other).unwrap_err();
        assert_eq!(err, "records from runs with different parameters are mixed: avg=100 here but avg=1000 before");
        assert!(check
            .header(Kind::Pairs, p)
            .unwrap_err()
            .contains("expected a chunks file"));
    }

    #[test]
    fn digest_is_order_independent() {
        let rs = [
            ChunkRecord {
                hash: 1,
                file: 2,
                len: 3,
            },
            ChunkRecord {
                hash: 9,
                file: 0,
                len: 1,
            },
        ];
        let (mut a, mut b) = (Digest::default(), Digest::default());
        a.add(&rs[0]);
        a.add(&rs[1]);
        b.add(&rs[1]);
        b.add(&rs[0]);
        assert_eq!(a, b);
        let mut c = Digest::default();
        c.add(&rs[0]);
        c.add(&ChunkRecord {
            hash: 9,
            file: 1,
            len: 1,
        });
        assert_ne!(a, c);
    }

    #[test]
    fn chunk_lines_are_chunk_records() {
        let mut x = 0x1234_5678_9abc_def0_u128;
        for (file, len) in [
            (0u32, 0u32),
            (1, 9),
            (7, 10),
            (99, 99),
            (100, 100),
            (12345, 999),
            (u32::MAX, 1000),
            (42, 65_535),
            (3, u32::MAX),
        ] {
            for hash in [
                0u128,
                u128::MAX,
                x,
                !x,
                0x0123_4567_89ab_cdef_fedc_ba98_7654_3210,
            ] {
                let mut want = Vec::new();
                ChunkRecord { hash, file, len }.write(&mut want);
                let mut got = vec![b'#'];
                ChunkLines::new(file).write(hash, len, &mut got);
                assert_eq!(got[1..], want[..], "{hash:x} {file} {len}");
                x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ (x >> 29);
            }
        }
        // Hex digits against the formatter of std.
        for _ in 0..1000 {
            x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ (x >> 29);
            assert_eq!(hex128(x), format!("{x:032x}"));
        }
    }

    #[test]
    fn classify_types() {
        assert_eq!(FileType::classify(b"", 0), FileType::Empty);
        assert_eq!(FileType::classify(b"hello world\n", 12), FileType::Text);
        assert_eq!(FileType::classify(b"%PDF-1.4 ...", 100), FileType::Pdf);
        assert_eq!(
            FileType::classify(b"\x1f\x8b\x08\x00", 100),
            FileType::Compressed
        );
        assert_eq!(FileType::classify(b"ab\x00cd", 5), FileType::Binary);
        let model = |h: &[u8]| {
            h.iter()
                .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
                .count()
        };
        // Past 255 rounds of 32 bytes (the counters' flush) and odd tails.
        for len in [0, 1, 31, 32, 33, 3000, 8160, 8161, 8192, 20_000] {
            let all: Vec<u8> = (0..=255u8).cycle().take(len).collect();
            assert_eq!(count_suspicious(&all), model(&all), "{len}");
            let ctl: Vec<u8> = (0..32u8).cycle().take(len).collect();
            assert_eq!(count_suspicious(&ctl), model(&ctl), "{len}");
        }
    }
}
