//! Long lines: a line longer than [`LONG_LINE`] bytes (one-line XML,
//! minified JavaScript or CSS, single-line JSON, a paragraph without
//! breaks) is compared as **pieces** cut at token boundaries, not as one
//! all-or-nothing line, so that one changed byte costs one piece (a few
//! dozen bytes) and not the whole file.
//!
//! The rule ([`LONG_LINES_RULE`], recorded in verified pairs' headers): a
//! piece ends after a byte of [`SEPARATORS`] (space, tab, CR, `,` `;` `>`
//! `{` `}`) whose FNV-1a 64-bit hash of the up to 8 bytes of the line
//! ending with it (the separator and the 7 before it, fewer at the line's
//! start) has its top two bits zero (one separator in four, so pieces of a
//! few tokens, ~20-60 bytes), or once it is [`MAX_PIECE`] bytes long; the
//! line's last piece ends with the line. Whether a separator cuts depends
//! only on the 8 bytes before it, never on where the previous piece
//! started: an edit changes the pieces around it and the cuts are the same
//! again 8 bytes after it (inside a stretch of [`MAX_PIECE`] bytes without
//! a cutting separator, at the next one). Lines of at most [`LONG_LINE`]
//! bytes are whole tokens, as before.
//!
//! fsim-verify's figure (the LCS of tokens), fsim-analyze's line source
//! (the multiset overlap of tokens, so that it still bounds the figure)
//! and the quality truth (`scripts/quality/truth.py`, `pieces`) cut the
//! same way.

/// Lines longer than this many bytes (the `\n` included) are cut into
/// pieces. Source code and prose lines are far shorter (a line of code
/// under 120 bytes, a paragraph under 1 KiB), so their figures are those
/// of whole lines; a minified or one-line file exceeds it at once.
pub const LONG_LINE: usize = 1024;

/// Longest piece: a stretch without a cutting separator (a base64 string,
/// a long number) is cut every this many bytes.
pub const MAX_PIECE: usize = 256;

/// The bytes after which a piece may end.
pub const SEPARATORS: &[u8] = b" \t\r,;>{}";

/// Bytes of the line, ending with the separator, whose hash decides a cut.
const WINDOW: usize = 8;

/// The rule's name in headers (`verify-long-lines=`): a verified output
/// written with another rule (or none) is not reused.
pub const LONG_LINES_RULE: &str = "pieces-1024-sep-fnv8-4-max256";

const fn separator_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < SEPARATORS.len() {
        t[SEPARATORS[i] as usize] = true;
        i += 1;
    }
    t
}

static IS_SEPARATOR: [bool; 256] = separator_table();

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Whether a piece may end after `line[i]` (a separator whose window
/// hashes with its top two bits zero).
#[inline]
fn cuts_after(line: &[u8], i: usize) -> bool {
    IS_SEPARATOR[line[i] as usize] && fnv1a(&line[(i + 1).saturating_sub(WINDOW)..=i]) >> 62 == 0
}

/// Call `piece(start, end)` for each token of `line` (offsets in `line`):
/// the whole line when it is at most [`LONG_LINE`] bytes, its pieces
/// otherwise.
#[inline]
pub fn for_each_token(line: &[u8], mut piece: impl FnMut(usize, usize)) {
    if line.len() <= LONG_LINE {
        piece(0, line.len());
        return;
    }
    let mut start = 0;
    for i in 0..line.len() {
        if i + 1 - start >= MAX_PIECE || cuts_after(line, i) {
            piece(start, i + 1);
            start = i + 1;
        }
    }
    if start < line.len() {
        piece(start, line.len());
    }
}

/// Call `token(start, end)` for each token of `data`: its lines (up to
/// and including `\n`), long lines cut into pieces ([`for_each_token`]).
pub fn for_each_line_token(data: &[u8], mut token: impl FnMut(usize, usize)) {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', data).map(|nl| nl + 1);
    for end in ends.chain((!data.is_empty()).then_some(data.len())) {
        if end > start {
            for_each_token(&data[start..end], |s, e| token(start + s, start + e));
            start = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(data: &[u8]) -> Vec<&[u8]> {
        let mut v = Vec::new();
        for_each_line_token(data, |s, e| v.push(&data[s..e]));
        v
    }

    #[test]
    fn short_lines_are_whole_tokens() {
        let line = vec![b'a'; LONG_LINE - 1];
        let data = [b"x, y; z\n".as_slice(), &line, b"\n", b"end"].concat();
        let t = tokens(&data);
        assert_eq!(t.len(), 3);
        assert_eq!(t[0], b"x, y; z\n");
        assert_eq!(t[1].len(), LONG_LINE);
        assert_eq!(t[2], b"end");
    }

    #[test]
    fn long_lines_cut_at_separators_and_at_most_max_piece() {
        let line: Vec<u8> = (0..400)
            .flat_map(|i| format!("<item id=\"{i}\">value {i}</item>").into_bytes())
            .chain(*b"\n")
            .collect();
        let t = tokens(&line);
        assert_eq!(t.concat(), line);
        assert!(t.len() > 100, "{}", t.len());
        for p in &t[..t.len() - 1] {
            assert!(p.len() <= MAX_PIECE);
            assert!(SEPARATORS.contains(p.last().unwrap()), "{p:?}");
        }
        let avg = line.len() / t.len();
        assert!((15..80).contains(&avg), "{avg}");
        // Without separators: pieces of MAX_PIECE bytes.
        let t = tokens(&[b'x'; 5 * MAX_PIECE + 7]);
        let lens: Vec<usize> = t.iter().map(|p| p.len()).collect();
        assert_eq!(lens, [vec![MAX_PIECE; 5], vec![7]].concat());
    }

    #[test]
    fn an_edit_changes_only_the_pieces_around_it() {
        let a: Vec<u8> = (0..300)
            .flat_map(|i| format!("{{\"k{i}\":[{i},\"v {i}\"]}},").into_bytes())
            .collect();
        let mut b = a.clone();
        b.splice(5000..5000, *b"inserted, ");
        let (ta, tb) = (tokens(&a), tokens(&b));
        let lost: usize = ta.iter().filter(|p| !tb.contains(p)).map(|p| p.len()).sum();
        assert!(lost < 200, "{lost}");
    }

    /// The cut offsets of a sample, as `scripts/quality/truth.py` must cut
    /// it too (its test has the same sample and digest).
    #[test]
    fn the_sample_cuts_as_the_truth_does() {
        let sample = sample();
        let mut ends = Vec::new();
        for_each_line_token(&sample, |_, e| ends.push(e.to_string()));
        use md5::{Digest as _, Md5};
        let digest = format!("{:x}", Md5::digest(ends.join(",").as_bytes()));
        assert_eq!(ends.len(), SAMPLE_TOKENS, "{digest}");
        assert_eq!(digest, SAMPLE_DIGEST);
    }

    const SAMPLE_TOKENS: usize = 659;
    const SAMPLE_DIGEST: &str = "1707404f636ad6de2721e886512e517d";

    /// A deterministic sample: a short line, one-line XML, minified code,
    /// a separator-free run, JSON, a last line without `\n`.
    pub(crate) fn sample() -> Vec<u8> {
        let mut s = b"short line, kept whole;\n".to_vec();
        for i in 0..120u32 {
            s.extend(format!("<row n=\"{i}\" v=\"{}\">t{}</row>", i * 7919 % 1000, i % 13).bytes());
        }
        s.push(b'\n');
        for i in 0..150u32 {
            s.extend(format!("function f{i}(a,b){{var c=a*{i};return c+b}};").bytes());
        }
        s.extend(std::iter::repeat_n(b'Q', 700));
        s.push(b'\n');
        for i in 0..200u32 {
            s.extend(format!("{{\"id\": {i}, \"name\": \"n{}\"}},", i * 31 % 97).bytes());
        }
        s
    }
}
