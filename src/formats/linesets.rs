//! The line sets file (`fsim-analyze --lines-out`, read back by the next
//! run's `--previous-lines`): for each content the line source compared,
//! its distinct lines as that source counts them (xxh3-64 hash, length,
//! occurrences). A re-run takes the lines of every content it finds here
//! instead of reading and viewing the file again, so its line source
//! reads only the files that changed: on a repository of documents the
//! view (a PDF's text, a prose file's sentences) is most of the cost.
//!
//! One record per content, in the order the line source read them (the
//! view's size, then the file id):
//!
//! ```text
//! size  content  view  view-hash  payload  lines
//! 1042  9e10…    prose 5b7c…      1042     00a3f1…:61 7be0…:2*3 …
//! ```
//!
//! `size`, `content`, `view` and `view-hash` are the file table's (the
//! key: a content is found again only with the same view of the same
//! bytes); `payload` is the size the line source measures (the file's, or
//! its payload's with templates); `lines` are `hash:length`, `*count`
//! when the line occurs more than once, by hash, separated by spaces. The
//! header records what else decides the lines (the chunking parameters,
//! which hold the view's settings; the templates; fsim-verify's rule for
//! long lines): a file written under other ones is not used.

use crate::formats::chunks::mix128;
use crate::formats::numbers::{parse_hex128, parse_u64, write_hex128, write_u64};
use crate::formats::views::ViewKind;
use xxhash_rust::xxh3::xxh3_64;

/// The file-table fields a content's lines are found again by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineSetKey {
    /// The view's size (the table's `size`).
    pub size: u64,
    pub content: u128,
    pub view: ViewKind,
    pub view_hash: Option<u128>,
}

/// One content's lines.
#[derive(Debug, Clone, PartialEq)]
pub struct LineSet {
    pub key: LineSetKey,
    /// The bytes the line source measures: the file's, or its payload's
    /// with templates.
    pub payload: u64,
    /// Distinct lines, (hash, length, occurrences), by hash.
    pub lines: Vec<(u64, u32, u32)>,
}

impl LineSet {
    pub const EXPECTED: &'static str =
        "a line set: size, content hash, view, view hash, payload size and hash:length lines separated by tabs";

    /// Appends the record's line.
    pub fn write(&self, out: &mut Vec<u8>) {
        write_set(&self.key, self.payload, &self.lines, out);
    }

    /// The record of `line` (without its `\n`), or what is wrong with it.
    pub fn parse(line: &[u8]) -> std::result::Result<LineSet, String> {
        let bad = || format!("expected {}", Self::EXPECTED);
        let mut f = line.split(|&b| b == b'\t');
        let mut next = || f.next().ok_or_else(bad);
        let size = parse_u64(next()?).ok_or_else(bad)?;
        let content = parse_hex128(next()?).ok_or_else(bad)?;
        let view = std::str::from_utf8(next()?)
            .ok()
            .and_then(ViewKind::from_name)
            .ok_or_else(bad)?;
        let view_hash = match next()? {
            b"-" => None,
            h => Some(parse_hex128(h).ok_or_else(bad)?),
        };
        let payload = parse_u64(next()?).ok_or_else(bad)?;
        let field = next()?;
        if f.next().is_some() {
            return Err(bad());
        }
        let mut lines = Vec::new();
        if let Err(at) = parse_lines(field, &mut lines) {
            let item = &field[at..];
            let item = &item[..memchr::memchr(b' ', item).unwrap_or(item.len())];
            return Err(format!(
                "expected a line as hash:length or hash:length*count, not '{}'",
                String::from_utf8_lossy(item)
            ));
        }
        if !lines.windows(2).all(|w| w[0].0 < w[1].0) {
            return Err("the lines of a set must be in increasing hash order".into());
        }
        let key = LineSetKey {
            size,
            content,
            view,
            view_hash,
        };
        Ok(LineSet {
            key,
            payload,
            lines,
        })
    }

    /// The record's share of the trailer's digest: its content and the
    /// bytes of its line.
    pub fn mix(line: &[u8], content: u128) -> u128 {
        mix128(content ^ u128::from(xxh3_64(line)) << 64)
    }
}

/// Appends the line of the set of `key` (see [`LineSet`]).
pub fn write_set(key: &LineSetKey, payload: u64, lines: &[(u64, u32, u32)], out: &mut Vec<u8>) {
    write_u64(key.size, out);
    out.push(b'\t');
    write_hex128(key.content, out);
    out.push(b'\t');
    out.extend_from_slice(key.view.name().as_bytes());
    out.push(b'\t');
    match key.view_hash {
        Some(h) => write_hex128(h, out),
        None => out.push(b'-'),
    }
    out.push(b'\t');
    write_u64(payload, out);
    out.push(b'\t');
    for (n, &(h, len, count)) in lines.iter().enumerate() {
        if n > 0 {
            out.push(b' ');
        }
        write_hex64(h, out);
        out.push(b':');
        write_u64(u64::from(len), out);
        if count != 1 {
            out.push(b'*');
            write_u64(u64::from(count), out);
        }
    }
    out.push(b'\n');
}

/// The space-separated `hash:length[*count]` items of `field` appended
/// to `out`; `Err` with the offset of the first item that is not one.
///
/// One pass over the bytes, no splitting: a re-run reads every content's
/// set of the earlier run (254 MB of them on 100,000 prose files), and
/// splitting each item out and parsing its parts took a fifth of its
/// analysis (now a twentieth: 5.8 -> 4.9 CPU-s after 1 % were edited).
fn parse_lines(field: &[u8], out: &mut Vec<(u64, u32, u32)>) -> std::result::Result<(), usize> {
    if field.is_empty() {
        return Ok(());
    }
    let mut at = 0;
    loop {
        let (item, end) = parse_item(field, at).ok_or(at)?;
        out.push(item);
        match field.get(end) {
            None => return Ok(()),
            Some(b' ') => at = end + 1,
            Some(_) => return Err(at),
        }
    }
}

/// The item starting at `at` and the offset just past it.
#[inline]
fn parse_item(field: &[u8], at: usize) -> Option<((u64, u32, u32), usize)> {
    let hex: &[u8; 16] = field.get(at..at + 16)?.try_into().ok()?;
    let mut h = 0u64;
    let mut bad = 0u8;
    for &c in hex {
        let d = HEX_VALUE[usize::from(c)];
        bad |= d;
        h = h << 4 | u64::from(d & 0xf);
    }
    if bad & 0x80 != 0 {
        return None;
    }
    if field.get(at + 16) != Some(&b':') {
        return None;
    }
    let (len, mut i) = parse_decimal(field, at + 17)?;
    let mut count = 1;
    if field.get(i) == Some(&b'*') {
        (count, i) = parse_decimal(field, i + 1)?;
    }
    let len = u32::try_from(len).ok()?;
    let count = u32::try_from(count).ok().filter(|&c| c > 0)?;
    Some(((h, len, count), i))
}

/// The digits from `at` (one at least, their value within a u64) and
/// the offset past them.
#[inline]
fn parse_decimal(field: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    let mut i = at;
    while let Some(&c) = field.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
        i += 1;
    }
    (i > at).then_some((v, i))
}

/// A byte's value as a hex digit, 0x80 when it is not one.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0x80u8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// 16 lowercase hex digits.
fn write_hex64(v: u64, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 16];
    for (i, d) in digits.iter_mut().enumerate() {
        *d = HEX[((v >> ((15 - i) * 4)) & 0xf) as usize];
    }
    out.extend_from_slice(&digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(lines: Vec<(u64, u32, u32)>, view_hash: Option<u128>) -> LineSet {
        LineSet {
            key: LineSetKey {
                size: 1042,
                content: 0x9e10_0000_0000_0000_0000_0000_0000_00ff,
                view: ViewKind::Raw,
                view_hash,
            },
            payload: 1000,
            lines,
        }
    }

    #[test]
    fn a_set_reads_back_as_written() {
        for s in [
            set(vec![(1, 61, 1), (0xffff_0000_0000_0001, 2, 3)], None),
            set(vec![], Some(7)),
            set(vec![(u64::MAX, u32::MAX, u32::MAX)], Some(u128::MAX)),
        ] {
            let mut out = Vec::new();
            s.write(&mut out);
            assert_eq!(out.last(), Some(&b'\n'));
            assert_eq!(LineSet::parse(&out[..out.len() - 1]), Ok(s));
        }
        let mut out = Vec::new();
        set(vec![(0xab, 5, 1), (0xcd, 2, 4)], None).write(&mut out);
        assert!(out.ends_with(b"\t1000\t00000000000000ab:5 00000000000000cd:2*4\n"));
    }

    /// The one-pass reader takes what the writer writes and nothing
    /// else: each bad item is named, however it is broken.
    #[test]
    fn every_item_is_checked_whole() {
        let h = "00000000000000ab";
        let ok = |f: &str| {
            let mut v = Vec::new();
            parse_lines(f.as_bytes(), &mut v).map(|()| v)
        };
        assert_eq!(ok(""), Ok(vec![]));
        assert_eq!(ok(&format!("{h}:5")), Ok(vec![(0xab, 5, 1)]));
        assert_eq!(
            ok(&format!(
                "00000000000000AB:5*2 {}:4294967295*4294967295",
                "f".repeat(16)
            )),
            Ok(vec![(0xab, 5, 2), (u64::MAX, u32::MAX, u32::MAX)])
        );
        let bad = [
            (format!("{h}:5 "), 19),
            (format!("{h}:5  {h}:5"), 19),
            (format!(" {h}:5"), 0),
            (format!("{h}0:5"), 0),
            (format!("{}:5", &h[1..]), 0),
            (format!("{h}:4294967296"), 0),
            (format!("{h}:5*4294967296"), 0),
            (format!("{h}:5*0"), 0),
            (format!("{h}:5*"), 0),
            (format!("{h}:"), 0),
            (format!("{h}5"), 0),
            (format!("{h}:5x"), 0),
            (format!("{h}:5 {h}:6*"), 19),
            (format!("{h}:99999999999999999999999"), 0),
            (format!("+{}:5", &h[1..]), 0),
            (format!("{}g:5", &h[1..]), 0),
        ];
        for (field, at) in bad {
            assert_eq!(ok(&field), Err(at), "{field}");
        }
    }

    #[test]
    fn a_broken_set_says_what_it_expected() {
        let mut good = Vec::new();
        set(vec![(1, 2, 1), (3, 4, 1)], None).write(&mut good);
        good.pop();
        let text = String::from_utf8(good).unwrap();
        let cases = [
            (text.replacen("\t", " ", 1), "expected a line set"),
            (format!("{text}\textra"), "expected a line set"),
            (text.replace(":4", ":x"), "not '0000000000000003:x'"),
            (text.replace(":4", ":4*0"), "not '0000000000000003:4*0'"),
            (text.replace("0000000000000003", "03"), "not '03:4'"),
            (
                text.replace("0000000000000003", "0000000000000000"),
                "increasing hash order",
            ),
        ];
        for (line, want) in cases {
            let err = LineSet::parse(line.as_bytes()).unwrap_err();
            assert!(err.contains(want), "{line}: {err}");
        }
    }
}
