//! MD5 of many independent messages at once: the chunks of a file.
//!
//! MD5 is a serial chain inside one message, so one core hashes one
//! message at ~700 MB/s however it is written (`md5sum`, the `md-5`
//! crate), and MD5 is what bounds the chunk stage (docs/performance.md).
//! But a file cut into chunks is many messages, and nothing links them: with
//! AVX-512, sixteen chunks go through the 64 MD5 steps side by side, one
//! chunk per 32-bit lane (the "multi-buffer" technique of Intel's ISA-L).
//! Each step is then a handful of vector instructions (`vpternlogd` computes
//! the round function in one, `vprold` the rotation), so a core hashes
//! several times the bytes it would one message at a time.
//!
//! Lanes are scheduled like a queue: when a lane's chunk ends (chunks have
//! different lengths), its digest is taken out and the next chunk starts in
//! that lane at the next block. Only the last few chunks of a batch leave
//! lanes idle, so callers hand over as many chunks as they have (a whole
//! read buffer), not one at a time.
//!
//! Without AVX-512 (AMD before Zen 4, many Intel CPUs), AVX2 runs eight
//! lanes the same way, with two or three instructions where AVX-512 has
//! one (see the `avx2` module).
//!
//! The digests are those of RFC 1321 byte for byte: the unit tests compare
//! every path this CPU has with the `md-5` crate on every length around the
//! padding limits and on random batches. Where neither is there (checked
//! once, at run time; `FSIM_NO_AVX512=1` and `FSIM_NO_AVX2=1` turn them
//! off), or for a batch too small to fill the lanes, the `md-5` crate hashes
//! the messages one at a time.

use md5::{Digest as _, Md5};

/// Messages in a batch below which hashing one at a time is as fast (the
/// lanes would mostly idle).
const MIN_BATCH: usize = 4;

/// The digests of `msgs`, in order, as big-endian `u128` (the byte order of
/// the hex form), appended to `out`.
pub fn digest_many<'a, I>(msgs: I, out: &mut Vec<u128>)
where
    I: ExactSizeIterator<Item = &'a [u8]>,
{
    #[cfg(target_arch = "x86_64")]
    if msgs.len() >= MIN_BATCH {
        if avx512::available() {
            // SAFETY: the CPU has AVX-512F (checked at run time just above).
            unsafe { avx512::digest_many(msgs, out) };
            return;
        }
        if avx2::available() {
            // SAFETY: the CPU has AVX2 (checked at run time just above).
            unsafe { avx2::digest_many(msgs, out) };
            return;
        }
    }
    out.extend(msgs.map(digest_one));
}

/// The digest of one message with the `md-5` crate.
pub fn digest_one(m: &[u8]) -> u128 {
    u128::from_be_bytes(Md5::digest(m).into())
}

/// The MD5 initial state (RFC 1321, 3.3).
const IV: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// The final padding of a message of `len` bytes whose bytes after the last
/// full block are `rest` (fewer than 64): one or two blocks (RFC 1321, 3.1
/// and 3.2). Returns the number of blocks written to `tail`.
fn pad(rest: &[u8], len: u64, tail: &mut [u8; 128]) -> usize {
    debug_assert!(rest.len() < 64);
    tail.fill(0);
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let blocks = if rest.len() < 56 { 1 } else { 2 };
    let end = 64 * blocks;
    tail[end - 8..end].copy_from_slice(&(len.wrapping_mul(8)).to_le_bytes());
    blocks
}

#[cfg(target_arch = "x86_64")]
mod lanes {
    //! The lane scheduler shared by the vector paths.
    use super::{pad, IV};

    /// A block of zeros that idle lanes hash (their result is dropped).
    static IDLE: [u8; 64] = [0; 64];

    /// One lane's message: where its full blocks are, how many of them,
    /// and its padded last block(s).
    struct Lane {
        job: usize,
        data: *const u8,
        full: usize,
        blocks: usize,
        next: usize,
        tail: [u8; 128],
    }

    impl Lane {
        #[inline(always)]
        fn start(&mut self, job: usize, m: &[u8]) {
            self.job = job;
            self.data = m.as_ptr();
            self.full = m.len() / 64;
            let tail_blocks = pad(&m[self.full * 64..], m.len() as u64, &mut self.tail);
            self.blocks = self.full + tail_blocks;
            self.next = 0;
        }

        /// The next block to hash.
        #[inline(always)]
        fn block(&self) -> *const u8 {
            if self.next < self.full {
                // SAFETY: block `next` lies inside the message.
                unsafe { self.data.add(64 * self.next) }
            } else {
                // SAFETY: at most two tail blocks, inside `tail`.
                unsafe { self.tail.as_ptr().add(64 * (self.next - self.full)) }
            }
        }
    }

    /// Hash `msgs` `L` at a time with `compress`, which runs one MD5
    /// compression in each lane: lane l hashes the 64 bytes at `ptrs[l]`
    /// into column l of the state. Inlined into each vector path, so that
    /// `compress` is inlined too.
    ///
    /// # Safety
    /// `compress` must be safe to call with pointers to 64 readable bytes.
    #[inline(always)]
    pub unsafe fn schedule<'a, I, const L: usize>(
        msgs: I,
        out: &mut Vec<u128>,
        mut compress: impl FnMut(&mut [[u32; L]; 4], &[*const u8; L]),
    ) where
        I: ExactSizeIterator<Item = &'a [u8]>,
    {
        let n = msgs.len();
        let base = out.len();
        out.resize(base + n, 0);
        let mut msgs = msgs.enumerate();
        // Each lane carries a 128-byte tail buffer that the block pointers
        // point into: the vector is never resized, so lanes never move.
        let mut lanes: Vec<Lane> = (0..L)
            .map(|_| Lane {
                job: usize::MAX,
                data: IDLE.as_ptr(),
                full: 0,
                blocks: 0,
                next: 0,
                tail: [0; 128],
            })
            .collect();
        let mut state = [[0u32; L]; 4];
        let mut active = 0usize;
        for (l, lane) in lanes.iter_mut().enumerate() {
            if let Some((job, m)) = msgs.next() {
                lane.start(job, m);
                for (w, iv) in IV.iter().enumerate() {
                    state[w][l] = *iv;
                }
                active += 1;
            }
        }
        let mut ptrs = [IDLE.as_ptr(); L];
        while active > 0 {
            for (p, lane) in ptrs.iter_mut().zip(&lanes) {
                *p = if lane.job == usize::MAX {
                    IDLE.as_ptr()
                } else {
                    lane.block()
                };
            }
            compress(&mut state, &ptrs);
            for (l, lane) in lanes.iter_mut().enumerate() {
                if lane.job == usize::MAX {
                    continue;
                }
                lane.next += 1;
                if lane.next < lane.blocks {
                    continue;
                }
                let mut d = [0u8; 16];
                for w in 0..4 {
                    d[4 * w..4 * w + 4].copy_from_slice(&state[w][l].to_le_bytes());
                }
                out[base + lane.job] = u128::from_be_bytes(d);
                match msgs.next() {
                    Some((job, m)) => {
                        lane.start(job, m);
                        for (w, iv) in IV.iter().enumerate() {
                            state[w][l] = *iv;
                        }
                    }
                    None => {
                        lane.job = usize::MAX;
                        active -= 1;
                    }
                }
            }
        }
    }

    /// The 64 additive constants (RFC 1321, 3.4: floor(|sin(i + 1)| × 2^32)).
    pub const K: [u32; 64] = [
        0xd76a_a478,
        0xe8c7_b756,
        0x2420_70db,
        0xc1bd_ceee,
        0xf57c_0faf,
        0x4787_c62a,
        0xa830_4613,
        0xfd46_9501,
        0x6980_98d8,
        0x8b44_f7af,
        0xffff_5bb1,
        0x895c_d7be,
        0x6b90_1122,
        0xfd98_7193,
        0xa679_438e,
        0x49b4_0821,
        0xf61e_2562,
        0xc040_b340,
        0x265e_5a51,
        0xe9b6_c7aa,
        0xd62f_105d,
        0x0244_1453,
        0xd8a1_e681,
        0xe7d3_fbc8,
        0x21e1_cde6,
        0xc337_07d6,
        0xf4d5_0d87,
        0x455a_14ed,
        0xa9e3_e905,
        0xfcef_a3f8,
        0x676f_02d9,
        0x8d2a_4c8a,
        0xfffa_3942,
        0x8771_f681,
        0x6d9d_6122,
        0xfde5_380c,
        0xa4be_ea44,
        0x4bde_cfa9,
        0xf6bb_4b60,
        0xbebf_bc70,
        0x289b_7ec6,
        0xeaa1_27fa,
        0xd4ef_3085,
        0x0488_1d05,
        0xd9d4_d039,
        0xe6db_99e5,
        0x1fa2_7cf8,
        0xc4ac_5665,
        0xf429_2244,
        0x432a_ff97,
        0xab94_23a7,
        0xfc93_a039,
        0x655b_59c3,
        0x8f0c_cc92,
        0xffef_f47d,
        0x8584_5dd1,
        0x6fa8_7e4f,
        0xfe2c_e6e0,
        0xa301_4314,
        0x4e08_11a1,
        0xf753_7e82,
        0xbd3a_f235,
        0x2ad7_d2bb,
        0xeb86_d391,
    ];
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::lanes::{schedule, K};
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    /// Lanes of a 512-bit vector of `u32`.
    const LANES: usize = 16;

    /// Is AVX-512F there? Asked once.
    pub fn available() -> bool {
        static HAVE: OnceLock<bool> = OnceLock::new();
        *HAVE.get_or_init(|| {
            std::env::var_os("FSIM_NO_AVX512").is_none() && is_x86_feature_detected!("avx512f")
        })
    }

    /// See [`super::digest_many`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn digest_many<'a, I>(msgs: I, out: &mut Vec<u128>)
    where
        I: ExactSizeIterator<Item = &'a [u8]>,
    {
        // SAFETY: AVX-512F is enabled here; the scheduler passes pointers
        // to 64 readable bytes.
        unsafe { schedule::<I, LANES>(msgs, out, |s, p| compress(s, p)) }
    }

    /// Index vectors of the four stages of a 16×16 transpose: stage `s`
    /// (block size 8, 4, 2, 1) swaps the off-diagonal s×s blocks of every
    /// 2s×2s block. For rows `i` (bit s clear) and `i + s`: the new row `i`
    /// takes column c from row i where c & s == 0, else column c - s of
    /// row i + s; the new row `i + s` takes column c + s of row i where
    /// c & s == 0, else column c of row i + s (indices 16.. pick the second
    /// operand of `vpermt2d`).
    const fn transpose_index(s: usize, upper: bool) -> [i32; 16] {
        let mut idx = [0i32; 16];
        let mut c = 0;
        while c < 16 {
            idx[c] = if c & s == 0 {
                if upper {
                    c as i32
                } else {
                    (c + s) as i32
                }
            } else if upper {
                (16 + c - s) as i32
            } else {
                (16 + c) as i32
            };
            c += 1;
        }
        idx
    }

    const TRANSPOSE: [[[i32; 16]; 2]; 4] = [
        [transpose_index(8, true), transpose_index(8, false)],
        [transpose_index(4, true), transpose_index(4, false)],
        [transpose_index(2, true), transpose_index(2, false)],
        [transpose_index(1, true), transpose_index(1, false)],
    ];

    /// One MD5 compression in each of the 16 lanes: lane l hashes the 64
    /// bytes at `ptrs[l]` into column l of `state`.
    ///
    /// # Safety
    /// AVX-512F; every pointer must have 64 readable bytes.
    #[target_feature(enable = "avx512f")]
    unsafe fn compress(state: &mut [[u32; LANES]; 4], ptrs: &[*const u8; LANES]) {
        // Row l = lane l's block; after the transpose, m[j] holds word j of
        // every lane.
        let mut m = [_mm512_setzero_si512(); 16];
        for (row, p) in m.iter_mut().zip(ptrs) {
            // SAFETY: 64 readable bytes (the caller's contract).
            *row = unsafe { _mm512_loadu_si512(p.cast()) };
        }
        // Fully unrolled (constant indices), so that `m` lives in registers.
        macro_rules! swap {
            ($up:ident, $lo:ident, $s:literal, $($i:literal)*) => {
                $(
                    let (x, y) = (m[$i], m[$i + $s]);
                    m[$i] = _mm512_permutex2var_epi32(x, $up, y);
                    m[$i + $s] = _mm512_permutex2var_epi32(x, $lo, y);
                )*
            };
        }
        macro_rules! stage {
            ($stage:literal, $s:literal, $($i:literal)*) => {
                // SAFETY: each TRANSPOSE row holds 16 i32 (64 bytes).
                let up = unsafe { _mm512_loadu_si512(TRANSPOSE[$stage][0].as_ptr().cast()) };
                // SAFETY: as above.
                let lo = unsafe { _mm512_loadu_si512(TRANSPOSE[$stage][1].as_ptr().cast()) };
                swap!(up, lo, $s, $($i)*);
            };
        }
        stage!(0, 8, 0 1 2 3 4 5 6 7);
        stage!(1, 4, 0 1 2 3 8 9 10 11);
        stage!(2, 2, 0 1 4 5 8 9 12 13);
        stage!(3, 1, 0 2 4 6 8 10 12 14);
        // SAFETY: each row of `state` has 16 u32 (64 bytes).
        let a0 = unsafe { _mm512_loadu_si512(state[0].as_ptr().cast()) };
        // SAFETY: as above.
        let b0 = unsafe { _mm512_loadu_si512(state[1].as_ptr().cast()) };
        // SAFETY: as above.
        let c0 = unsafe { _mm512_loadu_si512(state[2].as_ptr().cast()) };
        // SAFETY: as above.
        let d0 = unsafe { _mm512_loadu_si512(state[3].as_ptr().cast()) };
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);

        // One step: a = b + rotl(a + f(b, c, d) + K[i] + M[g], s), with the
        // round function given as a `vpternlogd` truth table: F = 0xCA
        // (b ? c : d), G = 0xE4 (d ? b : c), H = 0x96 (b ^ c ^ d),
        // I = 0x39 (c ^ (b | !d)).
        macro_rules! step {
            ($a:ident, $b:ident, $c:ident, $d:ident, $f:literal, $i:expr, $g:expr, $s:literal) => {
                let f = _mm512_ternarylogic_epi32::<$f>($b, $c, $d);
                let t = _mm512_add_epi32(
                    _mm512_add_epi32($a, f),
                    _mm512_add_epi32(m[$g], _mm512_set1_epi32(K[$i] as i32)),
                );
                $a = _mm512_add_epi32($b, _mm512_rol_epi32::<$s>(t));
            };
        }
        macro_rules! round {
            ($f:literal, $base:literal, $g0:literal, $gstep:literal, $s0:literal, $s1:literal, $s2:literal, $s3:literal) => {
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 0);
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 4);
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 8);
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 12);
            };
            (@four $f:literal, $base:literal, $g0:literal, $gstep:literal, $s0:literal, $s1:literal, $s2:literal, $s3:literal, $k:literal) => {
                step!(a, b, c, d, $f, $base + $k, ($g0 + $gstep * ($base + $k)) % 16, $s0);
                step!(d, a, b, c, $f, $base + $k + 1, ($g0 + $gstep * ($base + $k + 1)) % 16, $s1);
                step!(c, d, a, b, $f, $base + $k + 2, ($g0 + $gstep * ($base + $k + 2)) % 16, $s2);
                step!(b, c, d, a, $f, $base + $k + 3, ($g0 + $gstep * ($base + $k + 3)) % 16, $s3);
            };
        }
        round!(0xCA, 0, 0, 1, 7, 12, 17, 22);
        round!(0xE4, 16, 1, 5, 5, 9, 14, 20);
        round!(0x96, 32, 5, 3, 4, 11, 16, 23);
        round!(0x39, 48, 0, 7, 6, 10, 15, 21);

        // SAFETY: the four stores; each row of `state` has room for 16 u32.
        unsafe {
            _mm512_storeu_si512(state[0].as_mut_ptr().cast(), _mm512_add_epi32(a, a0));
            _mm512_storeu_si512(state[1].as_mut_ptr().cast(), _mm512_add_epi32(b, b0));
            _mm512_storeu_si512(state[2].as_mut_ptr().cast(), _mm512_add_epi32(c, c0));
            _mm512_storeu_si512(state[3].as_mut_ptr().cast(), _mm512_add_epi32(d, d0));
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! Eight lanes in 256-bit vectors, for CPUs without AVX-512 (AMD Zen 1
    //! to 3, older Intel): no `vpternlogd` nor `vprold`, so each round
    //! function is two or three logic instructions and each rotation two
    //! shifts and an `or`, still several times the speed of one message at
    //! a time.
    use super::lanes::{schedule, K};
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    /// Lanes of a 256-bit vector of `u32`.
    const LANES: usize = 8;

    /// Is AVX2 there? Asked once.
    pub fn available() -> bool {
        static HAVE: OnceLock<bool> = OnceLock::new();
        *HAVE.get_or_init(|| {
            std::env::var_os("FSIM_NO_AVX2").is_none() && is_x86_feature_detected!("avx2")
        })
    }

    /// See [`super::digest_many`].
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn digest_many<'a, I>(msgs: I, out: &mut Vec<u128>)
    where
        I: ExactSizeIterator<Item = &'a [u8]>,
    {
        // SAFETY: AVX2 is enabled here; the scheduler passes pointers to 64
        // readable bytes.
        unsafe { schedule::<I, LANES>(msgs, out, |s, p| compress(s, p)) }
    }

    /// Transpose an 8×8 matrix of `u32` held as eight rows.
    #[inline(always)]
    fn transpose8(r: [__m256i; 8]) -> [__m256i; 8] {
        // SAFETY: all the intrinsics below need only AVX2, which is enabled
        // in the only caller, `compress`.
        unsafe {
            let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
            let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
            let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
            let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
            let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
            let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
            let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
            let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
            // u0: word 0 of rows 0-3 | word 4 of rows 0-3, u1: words 1 | 5,
            // u2: 2 | 6, u3: 3 | 7; u4-u7 the same for rows 4-7.
            let u0 = _mm256_unpacklo_epi64(t0, t2);
            let u1 = _mm256_unpackhi_epi64(t0, t2);
            let u2 = _mm256_unpacklo_epi64(t1, t3);
            let u3 = _mm256_unpackhi_epi64(t1, t3);
            let u4 = _mm256_unpacklo_epi64(t4, t6);
            let u5 = _mm256_unpackhi_epi64(t4, t6);
            let u6 = _mm256_unpacklo_epi64(t5, t7);
            let u7 = _mm256_unpackhi_epi64(t5, t7);
            [
                _mm256_permute2x128_si256::<0x20>(u0, u4),
                _mm256_permute2x128_si256::<0x20>(u1, u5),
                _mm256_permute2x128_si256::<0x20>(u2, u6),
                _mm256_permute2x128_si256::<0x20>(u3, u7),
                _mm256_permute2x128_si256::<0x31>(u0, u4),
                _mm256_permute2x128_si256::<0x31>(u1, u5),
                _mm256_permute2x128_si256::<0x31>(u2, u6),
                _mm256_permute2x128_si256::<0x31>(u3, u7),
            ]
        }
    }

    /// One MD5 compression in each of the 8 lanes: lane l hashes the 64
    /// bytes at `ptrs[l]` into column l of `state`.
    ///
    /// # Safety
    /// AVX2; every pointer must have 64 readable bytes.
    #[target_feature(enable = "avx2")]
    unsafe fn compress(state: &mut [[u32; LANES]; 4], ptrs: &[*const u8; LANES]) {
        let lo: [__m256i; 8] = std::array::from_fn(|l| {
            // SAFETY: 64 readable bytes per pointer (the caller's contract).
            unsafe { _mm256_loadu_si256(ptrs[l].cast()) }
        });
        let hi: [__m256i; 8] = std::array::from_fn(|l| {
            // SAFETY: as above; bytes 32 to 63.
            unsafe { _mm256_loadu_si256(ptrs[l].add(32).cast()) }
        });
        // m[j]: word j of every lane.
        let (lo, hi) = (transpose8(lo), transpose8(hi));
        let m = [
            lo[0], lo[1], lo[2], lo[3], lo[4], lo[5], lo[6], lo[7], hi[0], hi[1], hi[2], hi[3],
            hi[4], hi[5], hi[6], hi[7],
        ];
        // SAFETY: each row of `state` has 8 u32 (32 bytes).
        let a0 = unsafe { _mm256_loadu_si256(state[0].as_ptr().cast()) };
        // SAFETY: as above.
        let b0 = unsafe { _mm256_loadu_si256(state[1].as_ptr().cast()) };
        // SAFETY: as above.
        let c0 = unsafe { _mm256_loadu_si256(state[2].as_ptr().cast()) };
        // SAFETY: as above.
        let d0 = unsafe { _mm256_loadu_si256(state[3].as_ptr().cast()) };
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        let ones = _mm256_set1_epi32(-1);

        // The round functions: F = d ^ (b & (c ^ d)), G = c ^ (d & (b ^ c)),
        // H = b ^ c ^ d, I = c ^ (b | !d).
        macro_rules! f {
            (F, $b:ident, $c:ident, $d:ident) => {
                _mm256_xor_si256($d, _mm256_and_si256($b, _mm256_xor_si256($c, $d)))
            };
            (G, $b:ident, $c:ident, $d:ident) => {
                _mm256_xor_si256($c, _mm256_and_si256($d, _mm256_xor_si256($b, $c)))
            };
            (H, $b:ident, $c:ident, $d:ident) => {
                _mm256_xor_si256(_mm256_xor_si256($b, $c), $d)
            };
            (I, $b:ident, $c:ident, $d:ident) => {
                _mm256_xor_si256($c, _mm256_or_si256($b, _mm256_xor_si256($d, ones)))
            };
        }
        // One step: a = b + rotl(a + f(b, c, d) + K[i] + M[g], s).
        macro_rules! step {
            ($a:ident, $b:ident, $c:ident, $d:ident, $f:ident, $i:expr, $g:expr, $s:literal) => {
                let t = _mm256_add_epi32(
                    _mm256_add_epi32($a, f!($f, $b, $c, $d)),
                    _mm256_add_epi32(m[$g], _mm256_set1_epi32(K[$i] as i32)),
                );
                let r = _mm256_or_si256(
                    _mm256_slli_epi32::<$s>(t),
                    _mm256_srli_epi32::<{ 32 - $s }>(t),
                );
                $a = _mm256_add_epi32($b, r);
            };
        }
        macro_rules! round {
            ($f:ident, $base:literal, $g0:literal, $gstep:literal, $s0:literal, $s1:literal, $s2:literal, $s3:literal) => {
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 0);
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 4);
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 8);
                round!(@four $f, $base, $g0, $gstep, $s0, $s1, $s2, $s3, 12);
            };
            (@four $f:ident, $base:literal, $g0:literal, $gstep:literal, $s0:literal, $s1:literal, $s2:literal, $s3:literal, $k:literal) => {
                step!(a, b, c, d, $f, $base + $k, ($g0 + $gstep * ($base + $k)) % 16, $s0);
                step!(d, a, b, c, $f, $base + $k + 1, ($g0 + $gstep * ($base + $k + 1)) % 16, $s1);
                step!(c, d, a, b, $f, $base + $k + 2, ($g0 + $gstep * ($base + $k + 2)) % 16, $s2);
                step!(b, c, d, a, $f, $base + $k + 3, ($g0 + $gstep * ($base + $k + 3)) % 16, $s3);
            };
        }
        round!(F, 0, 0, 1, 7, 12, 17, 22);
        round!(G, 16, 1, 5, 5, 9, 14, 20);
        round!(H, 32, 5, 3, 4, 11, 16, 23);
        round!(I, 48, 0, 7, 6, 10, 15, 21);

        // SAFETY: the four stores; each row of `state` has room for 8 u32.
        unsafe {
            _mm256_storeu_si256(state[0].as_mut_ptr().cast(), _mm256_add_epi32(a, a0));
            _mm256_storeu_si256(state[1].as_mut_ptr().cast(), _mm256_add_epi32(b, b0));
            _mm256_storeu_si256(state[2].as_mut_ptr().cast(), _mm256_add_epi32(c, c0));
            _mm256_storeu_si256(state[3].as_mut_ptr().cast(), _mm256_add_epi32(d, d0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(msgs: &[Vec<u8>]) -> Vec<u128> {
        msgs.iter().map(|m| digest_one(m)).collect()
    }

    /// `digest_many` on every path this CPU has (vector paths called
    /// directly, whatever the environment says), each appending to a copy
    /// of `base`: (path name, output).
    fn every_path(msgs: &[&[u8]], base: &[u128]) -> Vec<(&'static str, Vec<u128>)> {
        let mut runs = Vec::new();
        let mut got = base.to_vec();
        digest_many(msgs.iter().copied(), &mut got);
        runs.push(("dispatch", got));
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f") {
                let mut got = base.to_vec();
                // SAFETY: AVX-512F checked just above.
                unsafe { avx512::digest_many(msgs.iter().copied(), &mut got) };
                runs.push(("avx512", got));
            }
            if is_x86_feature_detected!("avx2") {
                let mut got = base.to_vec();
                // SAFETY: AVX2 checked just above.
                unsafe { avx2::digest_many(msgs.iter().copied(), &mut got) };
                runs.push(("avx2", got));
            }
        }
        runs
    }

    fn bytes(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn rfc1321_test_suite() {
        let cases: [(&[u8], &str); 4] = [
            (b"", "d41d8cd98f00b204e9800998ecf8427e"),
            (b"abc", "900150983cd24fb0d6963f7d28e17f72"),
            (b"message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                b"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        // Four copies each so that the batch takes the vector path.
        let msgs: Vec<&[u8]> = cases.iter().flat_map(|c| [c.0; 4]).collect();
        for (path, got) in every_path(&msgs, &[]) {
            for (i, (_, want)) in cases.iter().enumerate() {
                for k in 0..4 {
                    assert_eq!(format!("{:032x}", got[4 * i + k]), *want, "{path}");
                }
            }
        }
    }

    #[test]
    fn every_length_around_the_padding_limits() {
        // 0..=200 covers one and two padding blocks and 0-3 full blocks.
        let msgs: Vec<Vec<u8>> = (0..=200).map(|len| bytes(len, len as u64)).collect();
        let refs: Vec<&[u8]> = msgs.iter().map(|m| &m[..]).collect();
        for (path, got) in every_path(&refs, &[]) {
            assert_eq!(got, reference(&msgs), "{path}");
        }
    }

    #[test]
    fn batches_of_every_size_with_mixed_lengths_append_in_order() {
        for n in [0usize, 1, 3, 4, 5, 15, 16, 17, 33, 100] {
            let msgs: Vec<Vec<u8>> = (0..n)
                .map(|i| bytes((i * 7919) % 3000, (n * 1000 + i) as u64))
                .collect();
            let refs: Vec<&[u8]> = msgs.iter().map(|m| &m[..]).collect();
            for (path, got) in every_path(&refs, &[42]) {
                assert_eq!(got[0], 42);
                assert_eq!(got[1..], reference(&msgs)[..], "{path}, batch of {n}");
            }
        }
    }

    #[test]
    fn one_long_message_among_short_ones() {
        let mut msgs: Vec<Vec<u8>> = (0..40).map(|i| bytes(i * 3, i as u64)).collect();
        msgs.insert(7, bytes(1 << 20, 99));
        let refs: Vec<&[u8]> = msgs.iter().map(|m| &m[..]).collect();
        for (path, got) in every_path(&refs, &[]) {
            assert_eq!(got, reference(&msgs), "{path}");
        }
    }
}
