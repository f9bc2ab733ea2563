//! Parts of one fsim file joined into one (`fsim-join`). A distributed run
//! has several tasks each write a complete file of one kind (header,
//! records, trailer) that together are one output: fsim-spark's analysis
//! tasks each write pairs, verified pairs and regions. The parts must carry
//! the same header (kind and parameters); the joined file has that header
//! once, every part's lines in input order, and one trailer whose counts
//! and digests are the parts' sums. The digests are order-independent sums
//! modulo 2^128 (docs/formats.md), so the summed trailer is the one the
//! whole file would have had: the next stage checks the records against it
//! as it checks any input. Kept here so that no driver restates the
//! trailer's arithmetic (it did, in Python).

use crate::error::{Context, Error, Result};
use crate::formats::lines::{write_header, write_trailer, Kind, Line, LineReader, Params};
use crate::formats::numbers::{hex128, parse_hex128};
use std::io::{BufRead, Write};

/// The first part's header, and where it was read (for the errors).
struct First {
    kind: Kind,
    params: Params,
    at: String,
}

/// Joins parts fed input by input ([`Joiner::read`]), writing the header
/// once and (unless only the ends are wanted) every part's other lines as
/// they come; [`Joiner::finish`] writes the summed trailer.
pub struct Joiner {
    records: bool,
    first: Option<First>,
    sum: Option<Params>,
    parts: u64,
}

impl Joiner {
    /// `records`: copy the parts' records and comment lines (false: the
    /// header and the summed trailer only, `fsim-join --ends-only`).
    pub fn new(records: bool) -> Self {
        Joiner {
            records,
            first: None,
            sum: None,
            parts: 0,
        }
    }

    /// Read one input: any number of complete parts, each a header, its
    /// lines and its trailer. Errors name the input and line.
    pub fn read<R: BufRead, W: Write>(&mut self, r: &mut LineReader<R>, out: &mut W) -> Result<()> {
        let name = r.name().to_string();
        let mut open: Option<(Kind, u64)> = None;
        while let Some((line, no)) = r.next_numbered()? {
            let bad = |m: String| Error::input(&name, no, m);
            match (line, open) {
                (Line::Header(kind, params), None) => {
                    open = Some((kind, no));
                    if self.header(kind, &params, &name, no).map_err(bad)? {
                        let mut v = Vec::new();
                        write_header(kind, &params, &mut v);
                        out.write_all(&v).ctx(|| "writing the joined header")?;
                    }
                }
                (Line::Header(..), Some((_, at))) => {
                    return Err(bad(format!(
                        "a header inside the part opened at line {at}: expected its trailer first"
                    )))
                }
                (Line::Trailer(kind, params), Some((open_kind, _))) => {
                    open = None;
                    self.trailer(kind, open_kind, &params).map_err(bad)?;
                }
                (Line::Trailer(..), None) => {
                    return Err(bad(
                        "a trailer outside a part: expected a '#fsim' header first".into(),
                    ))
                }
                (Line::Comment(text) | Line::Data(text), Some(_)) => {
                    if self.records {
                        out.write_all(text)
                            .and_then(|()| out.write_all(b"\n"))
                            .ctx(|| "writing the joined file")?;
                    }
                }
                (Line::Comment(_) | Line::Data(_), None) => {
                    return Err(bad(
                        "a line outside a part: expected a '#fsim' header".into()
                    ))
                }
            }
        }
        if let Some((kind, at)) = open {
            return Err(r.error(format!(
                "no '#end {}' trailer for the part opened at line {at}: the part is truncated",
                kind.as_str()
            )));
        }
        Ok(())
    }

    /// Check a part's header against the first one; true for the first
    /// (which the caller writes).
    fn header(
        &mut self,
        kind: Kind,
        params: &Params,
        name: &str,
        no: u64,
    ) -> std::result::Result<bool, String> {
        self.parts += 1;
        let Some(first) = &self.first else {
            self.first = Some(First {
                kind,
                params: params.clone(),
                at: format!("{name}:{no}"),
            });
            return Ok(true);
        };
        if kind != first.kind {
            return Err(format!(
                "expected a '#fsim {} {}' header as the first part's ({}), found a {} header",
                first.kind.as_str(),
                first.kind.version(),
                first.at,
                kind.as_str()
            ));
        }
        if *params != first.params {
            let d = params
                .difference(&first.params)
                .unwrap_or_else(|| "the parameters are in another order".to_string());
            return Err(format!(
                "the header differs from the first part's ({}): {d}",
                first.at
            ));
        }
        Ok(false)
    }

    /// Add a part's trailer to the sum.
    fn trailer(
        &mut self,
        kind: Kind,
        open: Kind,
        params: &Params,
    ) -> std::result::Result<(), String> {
        if kind != open {
            return Err(format!(
                "a '#end {}' trailer in a {} part",
                kind.as_str(),
                open.as_str()
            ));
        }
        match &mut self.sum {
            None => {
                // Checked on its own too: a field that is neither a count
                // nor a digest cannot be summed.
                let mut zero = params.clone();
                zero.0.iter_mut().for_each(|(k, v)| *v = zero_of(k));
                sum_trailers(&mut zero, params)?;
                self.sum = Some(zero);
                Ok(())
            }
            Some(acc) => sum_trailers(acc, params),
        }
    }

    /// Write the summed trailer; an input without any part is an error.
    pub fn finish<W: Write>(self, out: &mut W) -> Result<()> {
        let (Some(first), Some(sum)) = (self.first, self.sum) else {
            return Err(Error::msg(
                "no part in the input: expected '#fsim <kind> v1' headers",
            ));
        };
        let mut v = Vec::new();
        write_trailer(first.kind, &sum, &mut v);
        out.write_all(&v).ctx(|| "writing the joined trailer")
    }

    /// Parts read so far.
    pub fn parts(&self) -> u64 {
        self.parts
    }
}

/// A digest field: `digest`, or a name that ends in it (`kept_digest`,
/// `table-digest`): 32 hex digits, summed modulo 2^128. Every other field
/// of a trailer is a count.
fn is_digest(key: &str) -> bool {
    key.ends_with("digest")
}

fn zero_of(key: &str) -> String {
    if is_digest(key) {
        hex128(0)
    } else {
        "0".to_string()
    }
}

/// Add the trailer `next` to `acc` (same fields in the same order): counts
/// added, digests added modulo 2^128.
pub fn sum_trailers(acc: &mut Params, next: &Params) -> std::result::Result<(), String> {
    let keys = |p: &Params| {
        p.0.iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if acc.0.len() != next.0.len() || acc.0.iter().zip(&next.0).any(|(a, b)| a.0 != b.0) {
        return Err(format!(
            "the trailer's fields ({}) differ from the first part's ({})",
            keys(next),
            keys(acc)
        ));
    }
    for ((k, a), (_, b)) in acc.0.iter_mut().zip(&next.0) {
        *a = if is_digest(k) {
            match (parse_hex128(a.as_bytes()), parse_hex128(b.as_bytes())) {
                (Some(x), Some(y)) => hex128(x.wrapping_add(y)),
                _ => return Err(format!("trailer field {k}={b}: expected 32 hex digits")),
            }
        } else {
            match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(x), Ok(y)) => x
                    .checked_add(y)
                    .ok_or_else(|| format!("trailer field {k}: the sum overflows"))?
                    .to_string(),
                _ => return Err(format!("trailer field {k}={b}: expected a count")),
            }
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(inputs: &[(&str, &str)], records: bool) -> Result<String> {
        let mut j = Joiner::new(records);
        let mut out = Vec::new();
        for (name, text) in inputs {
            let mut r = LineReader::new(text.as_bytes(), *name);
            j.read(&mut r, &mut out)?;
        }
        j.finish(&mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    const H: &str = "#fsim pairs v1\tmethod=tttd\tavg=100\n";

    #[test]
    fn counts_and_digests_add_up() {
        let a = format!("{H}x\n#end pairs\tpairs=1\tdigest={}\n", hex128(u128::MAX));
        let b = format!("{H}y\nz\n#end pairs\tpairs=2\tdigest={}\n", hex128(3));
        let whole = format!("{H}x\ny\nz\n#end pairs\tpairs=3\tdigest={}\n", hex128(2));
        assert_eq!(join(&[("a", &a), ("b", &b)], true).unwrap(), whole);
        // Both parts in one input, as fsim-spark collects them.
        assert_eq!(join(&[("ab", &format!("{a}{b}"))], true).unwrap(), whole);
        let ends = format!("{H}#end pairs\tpairs=3\tdigest={}\n", hex128(2));
        assert_eq!(join(&[("a", &a), ("b", &b)], false).unwrap(), ends);
    }

    #[test]
    fn bad_parts_name_the_input_and_line() {
        let a = format!("{H}#end pairs\tpairs=0\tdigest={}\n", hex128(0));
        let other = "#fsim pairs v1\tmethod=tttd\tavg=1000\n#end pairs\tpairs=0\tdigest=0\n";
        let err = join(&[("a", &a), ("b", other)], true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "b:1: the header differs from the first part's (a:1): avg=1000 here but avg=100 before"
        );
        let bins = "#fsim bins v1\tmethod=tttd\tavg=100\n";
        let err = join(&[("a", &a), ("b", bins)], true)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("b:1: expected a '#fsim pairs v1' header as the first part's (a:1), found a bins header"), "{err}");
        let cut = format!("{H}x\n");
        let err = join(&[("a", &a), ("c", &cut)], true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c:2: no '#end pairs' trailer for the part opened at line 1: the part is truncated"
        );
        let fields = format!("{H}#end pairs\tpairs=0\n");
        let err = join(&[("a", &a), ("f", &fields)], true)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("f:2: the trailer's fields (pairs) differ"),
            "{err}"
        );
        let loose = "x\n";
        let err = join(&[("l", loose)], true).unwrap_err().to_string();
        assert_eq!(err, "l:1: a line outside a part: expected a '#fsim' header");
        let text = format!("{H}#end pairs\tpairs=zero\tdigest={}\n", hex128(0));
        let err = join(&[("t", &text)], true).unwrap_err().to_string();
        assert_eq!(err, "t:2: trailer field pairs=zero: expected a count");
        assert!(join(&[("e", "")], true).is_err());
    }
}
