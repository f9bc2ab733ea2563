//! The pair record: fsim-analyze's output and fsim-verify's input (six
//! fields), and fsim-verify's output (the same six, then the exact figure
//! and its status). One reader and one writer for the six fields, read by
//! fsim-analyze (`--line-pairs-from`), fsim-verify (the candidates, the
//! plan, an earlier run's rows) and fsim-report (docs/formats.md, *pairs*
//! and *verified pairs*).

use super::chunks::mix128;
use super::numbers::{parse_id, parse_u64, split_fields, write_id, write_u64};

/// A candidate pair as fsim-analyze writes it: the two file ids (a < b),
/// their sizes (payload sizes with templates), the bytes in common by the
/// chunks (a lower bound) and the chunks shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    pub a: u32,
    pub b: u32,
    pub size_a: u64,
    pub size_b: u64,
    pub common: u64,
    pub shared: u32,
}

/// What a pair record holds, for fsim-verify's and fsim-report's errors.
pub const EXPECTED: &str =
    "a pair record: file id a, file id b, size a, size b, bytes in common, shared chunks";

impl Pair {
    /// What a pair line holds, for fsim-analyze's errors.
    pub const EXPECTED: &'static str =
        "a pair line: id a, id b, size a, size b, bytes in common, chunks shared (6 fields)";

    /// A pair line as [`Pair::write`] writes it (without its newline).
    pub fn parse(line: &[u8]) -> Option<Pair> {
        let f = split_fields::<6>(line)?;
        Pair::from_fields(&f)
    }

    fn from_fields(f: &[&[u8]; 6]) -> Option<Pair> {
        Some(Pair {
            a: parse_id(f[0])?,
            b: parse_id(f[1])?,
            size_a: parse_u64(f[2])?,
            size_b: parse_u64(f[3])?,
            common: parse_u64(f[4])?,
            shared: u32::try_from(parse_u64(f[5])?).ok()?,
        })
    }

    /// This pair's contribution to the trailer digest.
    #[inline]
    pub fn mix(&self) -> u128 {
        mix128(((self.a as u128) << 96) | ((self.b as u128) << 64) | self.common as u128)
    }

    #[inline]
    pub fn write(&self, out: &mut Vec<u8>) {
        write_id(self.a, out);
        out.push(b'\t');
        write_id(self.b, out);
        out.push(b'\t');
        write_u64(self.size_a, out);
        out.push(b'\t');
        write_u64(self.size_b, out);
        out.push(b'\t');
        write_u64(self.common, out);
        out.push(b'\t');
        write_u64(self.shared as u64, out);
        out.push(b'\n');
    }
}

/// fsim-verify's figure of a pair: the bytes in common, exact (`exact`) or
/// a lower bound (`lower-bound`: the pair was not aligned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figure {
    pub bytes: u64,
    pub exact: bool,
}

/// Why a line of a pairs file is not a pair record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadPair {
    /// Not six (or eight) fields of ids and numbers.
    Fields,
    /// Field 8 is neither `exact` nor `lower-bound`.
    Status,
}

impl BadPair {
    /// The message of fsim-verify's and fsim-report's errors.
    pub fn message(self) -> String {
        match self {
            BadPair::Fields => format!("expected {EXPECTED}"),
            BadPair::Status => "expected status 'exact' or 'lower-bound' in field 8".into(),
        }
    }
}

/// A line of a pairs file: six fields from fsim-analyze (no figure), eight
/// from fsim-verify (the figure and its status appended).
pub fn parse_line(line: &[u8]) -> Result<(Pair, Option<Figure>), BadPair> {
    if let Some(f) = split_fields::<8>(line) {
        let p = Pair::from_fields(&[f[0], f[1], f[2], f[3], f[4], f[5]]).ok_or(BadPair::Fields)?;
        let bytes = parse_u64(f[6]).ok_or(BadPair::Fields)?;
        let exact = match f[7] {
            b"exact" => true,
            b"lower-bound" => false,
            _ => return Err(BadPair::Status),
        };
        return Ok((p, Some(Figure { bytes, exact })));
    }
    let p = Pair::parse(line).ok_or(BadPair::Fields)?;
    Ok((p, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_and_eight_fields_round_trip() {
        let p = Pair {
            a: 3,
            b: 12,
            size_a: 4096,
            size_b: 5000,
            common: 1200,
            shared: 9,
        };
        let mut line = Vec::new();
        p.write(&mut line);
        line.pop();
        assert_eq!(Pair::parse(&line), Some(p));
        assert_eq!(parse_line(&line), Ok((p, None)));
        let mut v = line.clone();
        v.extend_from_slice(b"\t3000\texact");
        let exact = Figure {
            bytes: 3000,
            exact: true,
        };
        assert_eq!(parse_line(&v), Ok((p, Some(exact))));
        v.truncate(line.len());
        v.extend_from_slice(b"\t1300\tlower-bound");
        let lower = Figure {
            bytes: 1300,
            exact: false,
        };
        assert_eq!(parse_line(&v), Ok((p, Some(lower))));
        v.truncate(line.len());
        v.extend_from_slice(b"\t1300\tguess");
        assert_eq!(parse_line(&v), Err(BadPair::Status));
        v.truncate(line.len());
        v.extend_from_slice(b"\t1300");
        assert_eq!(parse_line(&v), Err(BadPair::Fields));
        assert_eq!(
            parse_line(b"0000000003\tx\t1\t1\t1\t1"),
            Err(BadPair::Fields)
        );
        assert_eq!(
            Pair::parse(b"0000000003\t0000000012\t1\t1\t1\t4294967296"),
            None
        );
    }
}
