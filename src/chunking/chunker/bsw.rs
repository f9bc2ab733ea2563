//! The basic sliding window chunker (paper 2.2): a boundary wherever the
//! window's hash hits the divisor. Kept to compare with TTTD; it has no
//! backup and, in its pure form, no bounds, so fsim adds two:
//!
//! * a minimum of [`WINDOW`] = 64 bytes, so that every tested hash covers a
//!   full window inside the chunk (the hash is then the same as that of a
//!   window sliding over the whole file without restarting);
//! * a hard cap of 16 × avg bytes, so that repetitive data (a run of zeros
//!   never hits a boundary) cannot make a chunk, and the read buffer that
//!   must hold it, unbounded. With divisor avg a content-defined chunk of
//!   16 × avg is rare (probability ≈ e^-16).

use super::{frame, roll, threshold, unfinished, Cut, WINDOW};

/// Basic sliding window with divisor `avg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bsw {
    pub avg: usize,
    /// 64 bytes (the window).
    pub min: usize,
    /// 16 × avg.
    pub max: usize,
    /// The divisor D = avg.
    pub div: usize,
    t: u64,
}

impl Bsw {
    /// Divisor `avg`, minimum 64, cap 16 × avg.
    pub fn new(avg: usize) -> Bsw {
        let avg = avg.max(1);
        Bsw::with_params(WINDOW, 16 * avg, avg)
    }

    /// Explicit minimum, cap and divisor (clamped to 1 <= min <= max).
    pub fn with_params(min: usize, max: usize, div: usize) -> Bsw {
        let min = min.max(1);
        let max = max.max(min);
        let div = div.max(1);
        Bsw {
            avg: div,
            min,
            max,
            div,
            t: threshold(div as u64),
        }
    }
}

impl Cut for Bsw {
    #[inline]
    fn cut(&self, data: &[u8], eof: bool) -> Option<usize> {
        let s = match frame(data, eof, self.min, self.max) {
            Ok(s) => s,
            Err(cut) => return cut,
        };
        let (mut h, t) = (s.h, self.t);
        for (i, &b) in s.span.iter().enumerate() {
            h = roll(h, b);
            if h >= t {
                return Some(s.first + i + 1);
            }
        }
        if s.at_max {
            Some(self.max)
        } else {
            unfinished(data.len(), eof)
        }
    }

    fn max_len(&self) -> usize {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::super::pseudo_text;
    use super::super::tests_common::*;
    use super::*;

    #[test]
    fn known_answer_avg_1000() {
        let data = pseudo_text(64 << 10, 42);
        let cuts = cut_lengths(&Bsw::new(1000), &data);
        assert_eq!(cuts, KA_1000, "cut points of BSW avg=1000 changed");
    }

    #[test]
    fn bounds_average_streaming_shift() {
        let data = pseudo_text(1 << 20, 13);
        for avg in [100, 1000] {
            let b = Bsw::new(avg);
            let cuts = cut_lengths(&b, &data);
            assert_eq!(cuts.iter().sum::<usize>(), data.len());
            assert!(cuts[..cuts.len() - 1]
                .iter()
                .all(|&c| (b.min..=b.max).contains(&c)));
            let mean = data.len() as f64 / cuts.len() as f64;
            // Expected mean = min-ish offset + avg.
            assert!(
                (mean / (avg + WINDOW) as f64 - 1.0).abs() < 0.3,
                "avg {avg}: mean {mean:.1}"
            );
            for block in [1, 100, 4096] {
                assert_eq!(
                    stream_lengths(&b, &data[..200 << 10], block),
                    cut_lengths(&b, &data[..200 << 10])
                );
            }
            let mut edited = vec![b'X'];
            edited.extend_from_slice(&data);
            assert!(changed_chunks(&b, &data, &edited) <= 2);
        }
    }

    #[test]
    fn zeros_cut_at_cap() {
        let b = Bsw::new(1000);
        let cuts = cut_lengths(&b, &vec![0u8; 1 << 20]);
        assert!(cuts[..cuts.len() - 1].iter().all(|&c| c == 16000));
    }

    const KA_1000: &[usize] = &[
        1503, 595, 1422, 994, 3943, 3078, 1779, 915, 869, 2796, 892, 405, 1158, 1265, 212, 3992,
        2368, 2284, 707, 710, 356, 93, 3027, 842, 932, 2060, 743, 1160, 1509, 3204, 748, 1583, 999,
        1579, 318, 747, 3071, 669, 745, 1530, 162, 462, 436, 1151, 167, 1103, 643, 2533, 1077,
    ];
}
