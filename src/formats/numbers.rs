//! Numbers and hashes in records: fixed-width ids and hex hashes (byte
//! order equals numeric order), decimal counts, tab-separated fields.

/// Width of a file id in records.
pub const ID_WIDTH: usize = 10;

/// Width of a hash in records.
pub const HASH_WIDTH: usize = 32;

#[inline]
pub(crate) fn hex_val(c: u8) -> Option<u8> {
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
/// this is the hottest parse of the pipeline: on x86_64 the 32 digits are
/// checked and packed with SSE2, which every x86_64 CPU has, so a portable
/// build gets it too (an AVX2 form needed `target-cpu=native`, and without
/// it fsim-partition spent 58% of its time in the scalar loop).
#[inline]
pub fn parse_hex128(s: &[u8]) -> Option<u128> {
    let s: &[u8; HASH_WIDTH] = s.try_into().ok()?;
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86_64 baseline, and the loads read
        // exactly the 32 bytes of `s`.
        unsafe { parse_hex128_sse2(s) }
    }
    #[cfg(not(target_arch = "x86_64"))]
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

#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn parse_hex128_sse2(s: &[u8; HASH_WIDTH]) -> Option<u128> {
    use std::arch::x86_64::*;
    let set = |c: u8| _mm_set1_epi8(c as i8);
    // One half of 16 digits: (valid mask, 8 packed bytes in 16-bit lanes).
    let half = |v: __m128i| {
        // Signed compares: bytes >= 0x80 are negative and fail both ranges.
        let digit = _mm_and_si128(
            _mm_cmpgt_epi8(v, set(b'0' - 1)),
            _mm_cmpgt_epi8(set(b'9' + 1), v),
        );
        let alpha = _mm_and_si128(
            _mm_cmpgt_epi8(v, set(b'a' - 1)),
            _mm_cmpgt_epi8(set(b'f' + 1), v),
        );
        // '0'..'9' -> 0..9 (low nibble); 'a'..'f' -> 1..6 + 9.
        let nib = _mm_add_epi8(_mm_and_si128(v, set(0x0f)), _mm_and_si128(alpha, set(9)));
        // A 16-bit lane holds (first, second) digit as (low, high) byte:
        // first << 4 | second, in the lane's low byte.
        let pair = _mm_or_si128(
            _mm_and_si128(_mm_slli_epi16(nib, 4), _mm_set1_epi16(0xf0)),
            _mm_srli_epi16(nib, 8),
        );
        (_mm_movemask_epi8(_mm_or_si128(digit, alpha)), pair)
    };
    let (ok0, p0) = half(_mm_loadu_si128(s.as_ptr() as *const __m128i));
    let (ok1, p1) = half(_mm_loadu_si128(s.as_ptr().add(16) as *const __m128i));
    if ok0 & ok1 != 0xffff {
        return None;
    }
    let mut out = [0u8; 16];
    _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, _mm_packus_epi16(p0, p1));
    Some(u128::from_be_bytes(out))
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
