//! Prose views as one sentence per line, so that the same words compare as
//! the same text whatever file type carried them. A .docx gives one line
//! per paragraph, pdftotext one line per printed line (hyphenated at its
//! end), a mail body one line per 72 characters: line for line, the
//! same 2,400 words shared no line between the .docx and its .pdf. Cut by
//! the words alone, every one of them gives the same lines.
//!
//! The cut depends only on the sequence of words (whitespace runs, line
//! breaks and a hyphen that splits a word at a line's end are not words):
//! a line ends after a word that ends a sentence (`.`, `!`, `?`, `;`,
//! before any closing quote or bracket), or, in a long run of words
//! without one (slides, headings, lists), after a word chosen by its own
//! bytes once the line holds [`MIN_RUN`] words, so an edit moves the cuts
//! only near itself, as a content-defined chunker does; [`MAX_RUN`] words
//! end a line in any case. A view with almost no sentence end (a list, a
//! table, slides of bullets: more than [`LIST_WORDS`] words a sentence)
//! keeps its own lines instead, white space made one space: there the
//! line is the item, in a PDF as in a docx.

use std::borrow::Cow;

/// Words a line holds before a content-defined cut may end it.
const MIN_RUN: usize = 24;
/// Words after which a line ends whatever its words.
const MAX_RUN: usize = 200;
/// Words per sentence end above which a view is a list (items, slides,
/// tables without punctuation), kept line by line: prose runs 15 to 25
/// words a sentence. Counted on the words alone, so every format of one
/// text makes the same choice.
const LIST_WORDS: usize = 60;
/// The most words a heading's line holds (see [`words`]).
const HEADING_WORDS: usize = 6;
/// One word in this many ends a long line (by its hash).
const CUT_ONE_IN: u32 = 8;

/// The view `text` (lines of UTF-8) as sentences, one per line, words
/// separated by one space; text that is not UTF-8 is returned as it is.
pub fn sentences(text: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(text) else {
        return text.to_vec();
    };
    let words = words(text);
    let ends = words.iter().filter(|(w, _)| ends_sentence(w)).count();
    if words.len() > LIST_WORDS * ends.max(1) {
        return lines(text);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut in_line = 0usize;
    for (word, heading) in words {
        if in_line > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(word.as_bytes());
        in_line += 1;
        if heading
            || ends_sentence(&word)
            || in_line >= MAX_RUN
            || (in_line >= MIN_RUN && fnv(&word).is_multiple_of(CUT_ONE_IN))
        {
            out.push(b'\n');
            in_line = 0;
        }
    }
    if in_line > 0 {
        out.push(b'\n');
    }
    out
}

/// A view that is a list, not prose: its lines, each word one space from
/// the next, empty lines left out.
fn lines(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.lines() {
        let mut ws = Words::of(line);
        if let Some(first) = ws.next() {
            out.extend_from_slice(first.as_bytes());
            for w in ws {
                out.push(b' ');
                out.extend_from_slice(w.as_bytes());
            }
            out.push(b'\n');
        }
    }
    out
}

/// Whether a word ends a sentence: its last character before closing
/// quotes and brackets is `.`, `!`, `?` or `;`.
fn ends_sentence(word: &str) -> bool {
    match word.as_bytes().last() {
        Some(b'.' | b'!' | b'?' | b';') => true,
        // Most words end with a letter: no quote or bracket to look past.
        Some(&b) if b.is_ascii() && !matches!(b, b')' | b']' | b'"' | b'\'') => false,
        _ => unquoted(word).ends_with(['.', '!', '?', ';']),
    }
}

/// A word without the closing quotes and brackets that end it.
fn unquoted(word: &str) -> &str {
    word.trim_end_matches(|c: char| {
        matches!(
            c,
            ')' | ']' | '"' | '\'' | '\u{2019}' | '\u{201D}' | '\u{BB}'
        )
    })
}

/// FNV-1a of a word: the content-defined cut (stable across runs and
/// platforms, unlike std's hasher).
fn fnv(word: &str) -> u32 {
    word.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A word of the view, and whether a line ends after it whatever follows
/// (a heading's last word).
type Word<'a> = (Cow<'a, str>, bool);

/// The words of a view, in order, a word hyphenated across a line break
/// joined: `docu-` ending a line and `ment` starting the next are
/// `document`; before a word that starts with no letter, or an empty
/// line, the hyphen stays. A hyphen between two letters is no part of a
/// word either ([`unhyphenated`]): `nicely-printed` is `nicelyprinted`.
/// A writer that wraps at 72 columns breaks a line after a compound's
/// hyphen (Python's textwrap, fmt, Word) and keeps it, pdftotext joins
/// the halves and drops it, and TeX inserts one where the word has none:
/// only a view blind to the hyphen gives the same words in all three. A line of at most [`HEADING_WORDS`] words that ends no
/// sentence, followed by a line that starts with a capital or a digit, is
/// a heading (or a table's cell): it ends its own line. A heading is one
/// line in every format, a docx's paragraph as a PDF's printed line. It
/// starts with a capital or a digit too: the last printed line of a
/// paragraph that ends without a full stop (a list, a table's rule, "as
/// follows::") is short in a PDF and mostly starts inside a sentence; cut
/// there, it would not be cut in the .docx, whose paragraph is one long
/// line.
fn words(text: &str) -> Vec<Word<'_>> {
    // About a word per six bytes of text: one allocation, not a dozen
    // reallocations (fsim-verify views every prose file it reads again).
    let mut out: Vec<Word> = Vec::with_capacity(text.len() / 5 + 16);
    // The index in `out` of a word broken at the end of the last line.
    let mut broken: Option<usize> = None;
    // The last word of the last line, when that line may be a heading.
    let mut heading: Option<usize> = None;
    for line in text.lines() {
        let mut ws = Words::of(line).peekable();
        // No hyphen in the line (most lines): no word to join or unhyphenate.
        let hyphens = memchr::memchr2(b'-', 0xAD, line.as_bytes()).is_some();
        let mut n = 0usize;
        while let Some(w) = ws.next() {
            let last = ws.peek().is_none();
            if let Some(i) = heading.take() {
                out[i].1 = w.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit());
            }
            match broken.take() {
                Some(i) if n == 0 && w.starts_with(char::is_alphabetic) => {
                    let head = &out[i].0;
                    let joined = format!(
                        "{}{}",
                        &head[..head.len() - hyphen_len(head)],
                        unhyphenated(w)
                    );
                    out[i].0 = Cow::Owned(joined);
                    if last && is_broken(&out[i].0) {
                        broken = Some(i);
                    }
                }
                _ => {
                    let w = match hyphens {
                        true => unhyphenated(w),
                        false => Cow::Borrowed(w),
                    };
                    let broken_here = last && hyphens && is_broken(&w);
                    out.push((w, false));
                    if broken_here {
                        broken = Some(out.len() - 1);
                    }
                }
            }
            n += 1;
        }
        if n == 0 {
            broken = None;
        } else if n <= HEADING_WORDS && broken.is_none() && starts_capital(line) {
            let i = out.len() - 1;
            heading = (!ends_sentence(&out[i].0) && !introduces(&out[i].0)).then_some(i);
        }
    }
    out
}

/// Whether the first word of `line` starts with a capital or a digit.
fn starts_capital(line: &str) -> bool {
    line.split_whitespace()
        .next()
        .is_some_and(|w| w.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit()))
}

/// Whether a word ends with a colon (before closing quotes and brackets):
/// a short line that does is no heading. A paragraph that ends "for
/// example:" runs on into the next in a .docx's words, while a PDF may
/// print "example:" as a short line of its own; as a heading it would be
/// cut there and nowhere else.
fn introduces(word: &str) -> bool {
    unquoted(word).ends_with(':')
}

/// Whether a word ends with a hyphen that may break it: a letter, then
/// `-` or a soft hyphen.
fn is_broken(w: &str) -> bool {
    let mut cs = w.chars().rev();
    matches!(cs.next(), Some('-' | '\u{AD}')) && cs.next().is_some_and(char::is_alphabetic)
}

/// `w` without the hyphens (`-`, soft hyphen) that stand between two
/// letters; borrowed when it has none, as most words.
fn unhyphenated(w: &str) -> Cow<'_, str> {
    if !w.contains(['-', '\u{AD}']) {
        return Cow::Borrowed(w);
    }
    let cs: Vec<char> = w.chars().collect();
    let inner = |i: usize| {
        matches!(cs[i], '-' | '\u{AD}')
            && i > 0
            && cs[i - 1].is_alphabetic()
            && cs.get(i + 1).is_some_and(|c| c.is_alphabetic())
    };
    match (0..cs.len()).any(inner) {
        true => Cow::Owned(
            (0..cs.len())
                .filter(|&i| !inner(i))
                .map(|i| cs[i])
                .collect(),
        ),
        false => Cow::Borrowed(w),
    }
}

/// The words of a line, as [`str::split_whitespace`] gives them; a line
/// of ASCII words and `' '` (most of them) is split by memchr, with no
/// decoding of chars: fsim-verify makes the view of each file of its
/// pairs again, and the split and the hyphen rules took 45 % of its time
/// after 1 % of 100,000 prose files were edited (37 % now).
struct Words<'a> {
    rest: &'a str,
    /// ASCII with no whitespace but `' '`: split where memchr finds one.
    spaces_only: bool,
}

impl<'a> Words<'a> {
    fn of(line: &'a str) -> Words<'a> {
        let b = line.as_bytes();
        let spaces_only = line.is_ascii()
            && memchr::memchr3(b'\t', b'\n', 0x0b, b).is_none()
            && memchr::memchr2(0x0c, b'\r', b).is_none();
        Words {
            rest: line,
            spaces_only,
        }
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (start, end) = if self.spaces_only {
            let b = self.rest.as_bytes();
            let start = b.iter().position(|&c| c != b' ')?;
            let len = memchr::memchr(b' ', &b[start..]);
            (start, len.map_or(b.len(), |n| start + n))
        } else {
            let start = self.rest.find(|c: char| !c.is_whitespace())?;
            let len = self.rest[start..].find(char::is_whitespace);
            (start, len.map_or(self.rest.len(), |n| start + n))
        };
        let word = &self.rest[start..end];
        self.rest = &self.rest[end..];
        Some(word)
    }
}

fn hyphen_len(w: &str) -> usize {
    w.chars().next_back().map_or(0, char::len_utf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> String {
        String::from_utf8(sentences(text.as_bytes())).unwrap()
    }

    /// A paragraph per line (docx) and the same words wrapped and
    /// hyphenated (pdf) give the same lines.
    #[test]
    fn wraps_and_hyphens_do_not_change_the_sentences() {
        let docx = "Terms\nThe contract starts on Monday. Payment is due within thirty days!\nIs it signed? Yes.\n";
        let pdf = "Terms\nThe contract starts\non Monday. Pay-\nment is due within\n  thirty   days!\nIs it\nsigned? Yes.";
        let want = "Terms\nThe contract starts on Monday.\nPayment is due within thirty days!\nIs it signed?\nYes.\n";
        assert_eq!(s(docx), want);
        assert_eq!(s(pdf), want);
    }

    /// A paragraph that ends with a colon (a .docx line) and the same words
    /// printed with a short last line (a PDF, where that line would read
    /// as a heading) give the same lines.
    #[test]
    fn a_short_line_ending_with_a_colon_is_no_heading() {
        let docx =
            "Before you commit, run the checker, for example:\nTo edit this page, rebuild it.\n";
        let pdf =
            "Before you commit, run the checker, for\nexample:\nTo edit this page,\nrebuild it.\n";
        let want =
            "Before you commit, run the checker, for example: To edit this page, rebuild it.\n";
        assert_eq!(s(docx), want);
        assert_eq!(s(pdf), want);
    }

    /// A hyphen before a word that starts with no letter, an empty line
    /// or the end stays.
    #[test]
    fn a_hyphen_that_breaks_no_word_stays() {
        assert_eq!(s("North-\n(America)."), "North- (America).\n");
        assert_eq!(s("well-\n\nknown."), "well- known.\n");
        assert_eq!(s("end-"), "end-\n");
        assert_eq!(s("re-\nen-\nter."), "reenter.\n");
        assert_eq!(s("2-\nfold."), "2- fold.\n");
    }

    /// A compound wrapped after its hyphen (textwrap, Word), the same
    /// words on one line, and pdftotext's joined halves are one word.
    #[test]
    fn a_compound_is_one_word_wherever_the_line_breaks() {
        let want = "A nicelyprinted message, from AngloSaxon records 2-3.\n";
        assert_eq!(
            s("A nicely-printed message, from Anglo-Saxon re\u{AD}cords 2-3."),
            want
        );
        assert_eq!(
            s("A nicely-\nprinted message, from Anglo-\nSaxon re\u{AD}cords 2-3."),
            want
        );
        assert_eq!(
            s("A nicelyprinted message, from AngloSaxon records 2-3."),
            want
        );
    }

    /// A short line before a capital is a heading, or a table's cells;
    /// before a lower-case word it is a wrapped line.
    #[test]
    fn short_lines_before_a_capital_are_headings() {
        assert_eq!(
            s("Minutes\nThe budget.\nItem\nCost\n1200\n"),
            "Minutes\nThe budget.\nItem\nCost\n1200\n"
        );
        assert_eq!(s("Minutes of\nthe meeting."), "Minutes of the meeting.\n");
    }

    #[test]
    fn closing_quotes_and_brackets_end_the_sentence_with_it() {
        assert_eq!(
            s("He said \"go.\" Then (it ended.) Done"),
            "He said \"go.\"\nThen (it ended.)\nDone\n"
        );
    }

    /// A run of words without a sentence end is cut by the words
    /// themselves, so an insertion moves the cuts only near itself.
    #[test]
    fn long_runs_are_cut_by_content() {
        // Prose (40 sentences) around a run of 300 words without an end.
        let prose: String = (0..40)
            .map(|i| format!("sentence {i} of ten words in all here now. "))
            .collect();
        let run: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
        let a = s(&format!("{prose}{}", run.join(" ")));
        let mut edited = run.clone();
        edited.insert(5, "inserted".into());
        let b = s(&format!("{prose}{}", edited.join(" ")));
        let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
        assert!(la.len() > 43, "{a}");
        assert!(la.iter().all(|l| l.split(' ').count() <= MAX_RUN));
        // Every line of the run but its first is the same.
        assert_eq!(la[..40], lb[..40]);
        assert_eq!(la[41..], lb[41..]);
        assert_ne!(la[40], lb[40]);
    }

    /// A list without punctuation keeps its lines: an edited item is one
    /// line, not a run of several items.
    #[test]
    fn lists_keep_their_lines() {
        let list: String = (0..20)
            .map(|i| format!("item {i}:  minutes of the meeting, decided\n"))
            .collect();
        let want: String = (0..20)
            .map(|i| format!("item {i}: minutes of the meeting, decided\n"))
            .collect();
        assert_eq!(s(&list), want);
    }

    /// The short last printed line of a paragraph that ends without a
    /// full stop starts inside its sentence: no heading, so the PDF runs
    /// on into the next paragraph as the .docx's one line does.
    #[test]
    fn a_short_line_inside_a_sentence_is_no_heading() {
        let docx = "Levels: when an action has failed ====== ======\n\
                    The setting can change the level (per request).\n";
        let pdf = "Levels: when an action has\nfailed ====== ======\n\
                   The setting can change the level\n(per request).\n";
        let want = "Levels: when an action has failed ====== ====== \
                    The setting can change the level (per request).\n";
        assert_eq!(s(docx), want);
        assert_eq!(s(pdf), want);
    }

    /// scripts/quality/prose.py, the truth's mirror of this module, cuts
    /// the sample (the GPL's first 2,400 words, wrapped, then hyphens,
    /// headings, quotes, non-ASCII, a CR, a 0x1c and a run of 300 words)
    /// to the same bytes: its test checks the same digest.
    #[test]
    fn the_python_mirror_cuts_the_same() {
        use md5::{Digest as _, Md5};
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/documents/prose-sample.txt"
        );
        let out = sentences(&std::fs::read(path).unwrap());
        let digest: String = Md5::digest(&out)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            (digest.as_str(), out.len()),
            ("34204af7c53629c1351f9ccf2c0860f6", 16167)
        );
    }

    /// The byte paths give what the char paths give, on words built
    /// from the bytes that decide them: every kind of space (a vertical
    /// tab, a no-break space, an ideographic space, a 0x1c), hyphens soft
    /// and hard, closing quotes, ends of sentences, letters beyond ASCII.
    #[test]
    fn the_byte_paths_are_the_char_paths() {
        use proptest::prelude::*;
        let alphabet = prop::sample::select(vec![
            " ", "\t", "\n", "\r", "\u{b}", "\u{c}", "\u{1c}", "\u{85}", "\u{a0}", "\u{3000}", "-",
            "\u{ad}", ".", "!", "?", ";", ":", ")", "]", "\"", "'", "\u{2019}", "\u{201d}",
            "\u{bb}", "a", "Z", "7", "\u{e9}", "\u{16d}", "\u{3042}",
        ]);
        let text = prop::collection::vec(alphabet, 0..24).prop_map(|v| v.concat());
        proptest!(ProptestConfig::with_cases(4096), |(t in text)| {
            let split: Vec<&str> = Words::of(&t).collect();
            prop_assert_eq!(&split, &t.split_whitespace().collect::<Vec<_>>());
            let slow_end = unquoted(&t).ends_with(['.', '!', '?', ';']);
            prop_assert_eq!(ends_sentence(&t), slow_end);
            if !t.contains(['-', '\u{AD}']) {
                prop_assert!(matches!(unhyphenated(&t), Cow::Borrowed(w) if w == t));
            }
        });
    }

    #[test]
    fn not_utf8_is_left_as_it_is() {
        assert_eq!(sentences(b"a\xff b."), b"a\xff b.");
        assert_eq!(s(""), "");
        assert_eq!(s("\n\n  \n"), "");
    }
}
