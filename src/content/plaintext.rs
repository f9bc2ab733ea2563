//! Which plain text files read as prose, and are compared as sentences
//! ([`super::prose`]) like the text of a document: a licence, a letter, a
//! README written as paragraphs. The same words wrapped at 72 columns, at
//! 80, or a paragraph a line are then the same lines, and a .txt is one
//! link with the .docx or the .pdf of its words.
//!
//! Everything else keeps its lines, the unit of code and of the figures
//! people check with `diff`: the rule is conservative, on the bytes alone,
//! so that a file and its compressed copy, and the Python mirror of this
//! rule (scripts/quality/prose.py, `reads_as_prose`), decide alike. A text
//! reads as prose when all of these hold:
//!
//! * at most [`MAX_PROSE_BYTES`], valid UTF-8 without a NUL byte;
//! * at least [`MIN_WORDS`] words, and words are at least [`WORD_SHARE`] %
//!   of the whitespace-separated tokens: a word is letters (hyphens and
//!   apostrophes inside), after any opening quotes or brackets and before
//!   any trailing punctuation. `self.value`, `x->y`, `a,b,c`, `msgid`'s
//!   quoted strings, numbers and paths are not words;
//! * a sentence end (`.`, `!`, `?` before closing quotes or brackets) at
//!   least every [`WORDS_PER_END`] words: lists, tables and word lists have
//!   few;
//! * at most [`MAX_CODE_LINES`] % of the non-empty lines are code, markup
//!   or table rows ([`is_code`]): ending in `{ } ; = < > ( [ \ |`,
//!   starting with `{ } < > # @ $ |`, `//`, `/*`, `.. ` (a reST
//!   directive) or a code fence, holding a tab after their start, or made
//!   of three or more signs without a letter or digit (underlines, rules);
//! * no line starts with what only code or a catalog starts a line with
//!   ([`NEVER_PROSE`]: a docstring's quotes, `#!`, `msgid "`, ...): a
//!   Python module that is one long docstring, a catalog without comments;
//! * at most [`MAX_INDENTED`] % of them start with a space or a tab (code
//!   blocks, source);
//! * the median non-empty line is at least [`MIN_MEDIAN_LINE`] bytes long,
//!   as wrapped prose (60 to 79) or a paragraph a line is; code, logs of
//!   short lines, name lists and catalogs' short lines are not.

/// The largest text examined: a book is a few megabytes; a larger text is
/// a log or a data dump, read line by line as it is.
pub const MAX_PROSE_BYTES: usize = 16 << 20;
/// Fewest words of a prose text: a few sentences.
pub const MIN_WORDS: usize = 50;
/// Least share of the tokens that are words, in percent.
pub const WORD_SHARE: usize = 80;
/// Most words per sentence end (prose runs 15 to 25).
pub const WORDS_PER_END: usize = 40;
/// Most code, markup or table lines, in percent of the non-empty lines.
pub const MAX_CODE_LINES: usize = 5;
/// Most indented lines, in percent of the non-empty lines (a licence's
/// numbered clauses indent their continuation lines: a third of its lines).
pub const MAX_INDENTED: usize = 40;
/// Least median length of a non-empty line, in bytes, trimmed.
pub const MIN_MEDIAN_LINE: usize = 40;

const OPENING: &[char] = &['"', '\'', '(', '[', '\u{2018}', '\u{201C}', '\u{AB}'];
const TRAILING: &[char] = &[
    '.', ',', ';', ':', '!', '?', '"', '\'', ')', ']', '\u{2019}', '\u{201D}', '\u{BB}',
];
const CLOSING: &[char] = &[')', ']', '"', '\'', '\u{2019}', '\u{201D}', '\u{BB}'];
const INNER: &[char] = &['-', '\'', '\u{2019}'];
const CODE_ENDS: &[u8] = b"{};=<>([\\|";
const CODE_STARTS: &[u8] = b"{}<>#@$|";
const CODE_PREFIXES: [&[u8]; 4] = [b"//", b"/*", b".. ", b"```"];
/// Starts of a trimmed line that make a text not prose, however few.
pub const NEVER_PROSE: [&[u8]; 6] = [
    b"\"\"\"",
    b"'''",
    b"#!",
    b"msgid \"",
    b"msgstr \"",
    b"msgctxt \"",
];

/// Whether `data`, a whole file or decompressed stream, reads as prose
/// (the rule of the module's doc).
pub fn reads_as_prose(data: &[u8]) -> bool {
    if data.len() > MAX_PROSE_BYTES || memchr::memchr(0, data).is_some() {
        return false;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    words_read_as_prose(text) && lines_read_as_prose(data)
}

/// Whether a file whose first bytes are `head` and whose size is `size`
/// may read as prose: the conditions of [`reads_as_prose`] its head alone
/// can refute, so that other files are never read whole for it.
pub fn may_read_as_prose(head: &[u8], size: u64) -> bool {
    if size > MAX_PROSE_BYTES as u64 || memchr::memchr(0, head).is_some() {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        // Cut inside a character at the end of the head.
        Err(e) => e.error_len().is_none(),
    }
}

/// The conditions on words: enough of them, most tokens words, and
/// sentence ends often enough.
fn words_read_as_prose(text: &str) -> bool {
    let Counts {
        tokens,
        words,
        ends,
    } = match text.is_ascii() {
        true => ascii_counts(text.as_bytes()),
        false => counts(text),
    };
    words >= MIN_WORDS && words * 100 >= tokens * WORD_SHARE && words <= ends * WORDS_PER_END
}

/// Whitespace-separated tokens, the words among them, and the words that
/// end a sentence.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    tokens: usize,
    words: usize,
    ends: usize,
}

/// The [`Counts`] of any text, by chars.
fn counts(text: &str) -> Counts {
    let mut c = Counts::default();
    for tok in text.split_whitespace() {
        c.tokens += 1;
        if is_word(tok) {
            c.words += 1;
            if tok.trim_end_matches(CLOSING).ends_with(['.', '!', '?']) {
                c.ends += 1;
            }
        }
    }
    c
}

/// The [`Counts`] of ASCII text, byte by byte: the rule of [`counts`]
/// with the ASCII members of its sets (ASCII's whitespace, for
/// `split_whitespace`, is `\t \n \x0b \x0c \r` and the space). Every file
/// that may read as prose is counted whole: by chars, the word rule took
/// a quarter of fsim-chunk's CPU on 20,000 generated English texts (perf);
/// by bytes, with the lines below found by memchr, the stage takes 11 %
/// less (2.68 -> 2.37 CPU-s, `-j 1`).
fn ascii_counts(text: &[u8]) -> Counts {
    let mut c = Counts::default();
    let mut rest = text;
    loop {
        let Some(start) = rest.iter().position(|&b| !is_ascii_space(b)) else {
            return c;
        };
        rest = &rest[start..];
        let end = rest
            .iter()
            .position(|&b| is_ascii_space(b))
            .unwrap_or(rest.len());
        let (tok, after) = rest.split_at(end);
        rest = after;
        c.tokens += 1;
        if is_ascii_word(tok) {
            c.words += 1;
            let open = tok.len()
                - tok
                    .iter()
                    .rev()
                    .take_while(|b| CLOSING_ASCII.contains(b))
                    .count();
            if matches!(tok[..open].last(), Some(b'.' | b'!' | b'?')) {
                c.ends += 1;
            }
        }
    }
}

/// The ASCII members of [`OPENING`], [`TRAILING`] and [`CLOSING`].
const OPENING_ASCII: &[u8] = b"\"'([";
const TRAILING_ASCII: &[u8] = b".,;:!?\"')]";
const CLOSING_ASCII: &[u8] = b")]\"'";

/// `char::is_whitespace` of an ASCII byte.
#[inline]
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// [`is_word`] of an ASCII token.
#[inline]
fn is_ascii_word(tok: &[u8]) -> bool {
    let from = tok.iter().take_while(|b| OPENING_ASCII.contains(b)).count();
    let w = &tok[from..];
    let to = w.len()
        - w.iter()
            .rev()
            .take_while(|b| TRAILING_ASCII.contains(b))
            .count();
    let w = &w[..to];
    w.first().is_some_and(u8::is_ascii_alphabetic)
        && w.iter()
            .all(|&b| b.is_ascii_alphabetic() || b == b'-' || b == b'\'')
}

/// The conditions on lines: few code lines, few indented lines, and the
/// line length of prose.
fn lines_read_as_prose(data: &[u8]) -> bool {
    let (mut lengths, mut code, mut indented) = (Vec::new(), 0usize, 0usize);
    let ends = memchr::memchr_iter(b'\n', data).chain([data.len()]);
    let mut start = 0;
    for end in ends {
        let line = &data[start..end];
        start = end + 1;
        let t = line.trim_ascii();
        if t.is_empty() {
            continue;
        }
        if NEVER_PROSE.iter().any(|p| t.starts_with(p)) {
            return false;
        }
        lengths.push(t.len());
        code += usize::from(is_code(t));
        indented += usize::from(matches!(line[0], b' ' | b'\t'));
    }
    let n = lengths.len();
    if n == 0 || code * 100 > n * MAX_CODE_LINES || indented * 100 > n * MAX_INDENTED {
        return false;
    }
    let (_, median, _) = lengths.select_nth_unstable((n - 1) / 2);
    *median >= MIN_MEDIAN_LINE
}

/// A word: letters, hyphens and apostrophes inside, starting with a
/// letter, once opening quotes and brackets and trailing punctuation are
/// left out.
fn is_word(tok: &str) -> bool {
    let w = tok.trim_start_matches(OPENING).trim_end_matches(TRAILING);
    w.starts_with(is_letter) && w.chars().all(|c| is_letter(c) || INNER.contains(&c))
}

/// Whether a trimmed line that starts like code starts as prose: a
/// reStructuredText auto-numbered item (`#. Create a file ...`) is a list
/// item like `1. ...`, not a comment, and a line that starts with the end
/// of a link wrapped from the line before (`</intro/tutorial07>`, we saw
/// ...`: its first word holds `>` then a backtick) is no tag.
fn starts_as_prose(t: &[u8]) -> bool {
    t.starts_with(b"#. ")
        || (t.starts_with(b"<") && {
            let first = t.split(u8::is_ascii_whitespace).next().unwrap_or(t);
            memchr::memmem::find(first, b">`").is_some()
        })
}

/// A letter of a word: an ASCII letter, or any character past ASCII but
/// the Latin-1 signs (U+0080-U+00BF, U+00D7, U+00F7) and the general
/// punctuation block (U+2000-U+206F): one definition the Python mirror
/// computes alike, unlike the languages' Unicode tables.
fn is_letter(c: char) -> bool {
    let o = u32::from(c);
    if o < 0x80 {
        return c.is_ascii_alphabetic();
    }
    !(o < 0xC0 || o == 0xD7 || o == 0xF7 || (0x2000..0x2070).contains(&o))
}

/// A trimmed, non-empty line that is code, markup or a table row.
fn is_code(t: &[u8]) -> bool {
    let ends_as_code = CODE_ENDS.contains(&t[t.len() - 1]);
    if starts_as_prose(t) {
        return ends_as_code;
    }
    ends_as_code
        || CODE_STARTS.contains(&t[0])
        || CODE_PREFIXES.iter().any(|p| t.starts_with(p))
        || t.contains(&b'\t')
        || (t.len() >= 3 && !t.iter().any(|&b| b.is_ascii_alphanumeric() || b >= 0x80))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::path::{Path, PathBuf};

    fn data() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
    }

    /// The files of tests/data/prose-rule/expected.tsv and what
    /// they are: scripts/quality/test_truth.py checks the Python mirror
    /// against the same list, so both rules decide alike on them.
    fn expected() -> Vec<(String, bool)> {
        let list = std::fs::read_to_string(data().join("prose-rule/expected.tsv")).unwrap();
        list.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (f, what) = l.split_once('\t').unwrap();
                (f.to_string(), what == "prose")
            })
            .collect()
    }

    #[test]
    fn the_sample_files_are_prose_or_raw_as_listed() {
        let list = expected();
        assert!(list.iter().filter(|(_, p)| *p).count() >= 4);
        assert!(list.iter().filter(|(_, p)| !*p).count() >= 6);
        for (f, prose) in list {
            let bytes = std::fs::read(data().join(&f)).unwrap();
            assert_eq!(reads_as_prose(&bytes), prose, "{f}");
            if prose {
                let head = &bytes[..bytes.len().min(8 << 10)];
                assert!(may_read_as_prose(head, bytes.len() as u64), "{f}");
            }
        }
    }

    /// Each condition alone turns prose into raw.
    #[test]
    fn each_sign_of_code_keeps_the_lines() {
        let prose = std::fs::read_to_string(data().join("prose-rule/readme.txt")).unwrap();
        assert!(reads_as_prose(prose.as_bytes()));
        let cases = [
            ("a NUL byte", format!("{prose}\0")),
            ("a shebang", format!("#!/bin/sh\n{prose}")),
            ("a catalog line", format!("{prose}msgid \"x\"\n")),
            ("brace lines", prose.replace(".\n", ". {\n")),
            (
                "indented lines",
                prose.lines().map(|l| format!("  {l}\n")).collect(),
            ),
            ("no sentence end", prose.replace(['.', '!', '?'], ",")),
            ("paths, not words", prose.replace(' ', "/ ")),
            (
                "short lines",
                prose.split(' ').map(|w| format!("{w}\n")).collect(),
            ),
            (
                "too few words",
                prose.split(' ').take(40).collect::<Vec<_>>().join(" "),
            ),
        ];
        for (what, text) in cases {
            assert!(!reads_as_prose(text.as_bytes()), "{what}");
        }
        assert!(!reads_as_prose(b"\xff not UTF-8"));
        let long = prose.repeat(MAX_PROSE_BYTES / prose.len() + 1);
        assert!(!reads_as_prose(long.as_bytes()));
        assert!(!may_read_as_prose(b"text", MAX_PROSE_BYTES as u64 + 1));
    }

    /// Paragraphs numbered as reStructuredText's `#.` items are prose, and
    /// so are lines that start with a link's end wrapped from the line
    /// before; a `#` comment line or a tag is not.
    #[test]
    fn numbered_items_are_prose_and_comments_are_not() {
        let prose = std::fs::read_to_string(data().join("prose-rule/readme.txt")).unwrap();
        // A paragraph a line, as an editor without wrapping saves it.
        let paragraphs: Vec<String> = prose
            .split("\n\n")
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        let as_lines = |mark: &str| -> String {
            paragraphs
                .iter()
                .map(|p| format!("{mark}{p}\n\n"))
                .collect()
        };
        assert!(reads_as_prose(as_lines("").as_bytes()));
        assert!(reads_as_prose(as_lines("#. ").as_bytes()));
        assert!(!reads_as_prose(as_lines("# ").as_bytes()));
        // Every line starting with a wrapped link's end, or with a tag.
        assert!(reads_as_prose(
            as_lines("</intro/tutorial07>`_, ").as_bytes()
        ));
        assert!(!reads_as_prose(as_lines("<intro> ").as_bytes()));
    }

    /// The ASCII counts are the chars' on the tokens that try them: the
    /// signs of each set around and inside words, every ASCII control
    /// (whitespace or not), digits.
    #[test]
    fn ascii_counts_are_the_counts_of_chars() {
        let cases = [
            "A word. (Two) [words]! \"Quoted,\" it said? 'Yes.' x->y a,b 3.5 re-enter don't",
            "-dash 'lead trail- end.) end.] end.\" end.' end)? ((( ))) .,;: 'a'",
            "tab\tvt\x0bff\x0ccr\rlf\nus\x1fword fs\x1cend. nul\x00x del\x7fy",
            "",
            "   ",
            "a",
        ];
        for c in cases {
            assert_eq!(ascii_counts(c.as_bytes()), counts(c), "{c:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        #[test]
        fn ascii_counts_match_on_any_ascii(text in "[ -~\t\n\x0b\x0c\r\x1c-\x1f]{0,200}") {
            proptest::prop_assert_eq!(ascii_counts(text.as_bytes()), counts(&text));
        }

        #[test]
        fn ascii_counts_match_on_prose_signs(text in "[aZ'\"()\\[\\].,;:!?\\- \n]{0,120}") {
            proptest::prop_assert_eq!(ascii_counts(text.as_bytes()), counts(&text));
        }
    }

    /// A head cut inside a character may still be prose; a NUL or a bad
    /// byte in it refutes the whole file.
    #[test]
    fn the_head_refutes_only_what_the_whole_would() {
        assert!(may_read_as_prose("caf\u{e9}".as_bytes(), 100));
        assert!(may_read_as_prose(&"caf\u{e9}".as_bytes()[..4], 100));
        assert!(!may_read_as_prose(b"a\0b", 100));
        assert!(!may_read_as_prose(b"a\xffb", 100));
    }

    /// Opened from disk, a prose text is its sentences; a module keeps its
    /// raw body, every byte of it, read once.
    #[test]
    fn open_gives_prose_its_view_and_code_its_bytes() {
        let limits = crate::content::Limits::default();
        let o = crate::content::open(&data().join("documents/contract.txt"), &limits).unwrap();
        assert_eq!(o.kind, crate::content::Kind::Prose);
        let crate::content::Body::View(v) = o.body else {
            panic!("a raw body")
        };
        let want = crate::content::prose::sentences(
            &std::fs::read(data().join("documents/contract.txt")).unwrap(),
        );
        assert_eq!(v, want);
        let path = data().join("prose-rule/module.py");
        let o = crate::content::open(&path, &limits).unwrap();
        assert_eq!(o.kind, crate::content::Kind::Raw);
        let crate::content::Body::Raw(mut body) = o.body else {
            panic!("a view")
        };
        let mut bytes = Vec::new();
        body.read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes, std::fs::read(&path).unwrap());
    }
}
