//! Text normalisation applied before any feature method (Broder's feature
//! extraction): HTML markup stripping, ASCII case folding, whitespace
//! collapsing. Byte-oriented: non-ASCII bytes pass through unchanged.

use std::borrow::Cow;

/// Which normalisations to apply, in this order: strip HTML, fold case,
/// collapse whitespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Normalize {
    /// ASCII letters to lower case (`--fold-case`).
    pub fold_case: bool,
    /// Runs of ASCII white space (space, tab, CR, LF, FF, VT) become one
    /// space; leading and trailing white space is removed
    /// (`--collapse-whitespace`).
    pub collapse_whitespace: bool,
    /// `<...>` tags and `<!-- ... -->` comments become one space; a `<`
    /// without a closing `>` is kept as text (`--strip-html`).
    pub strip_html: bool,
}

impl Normalize {
    /// True when no normalisation is asked for.
    pub fn is_none(&self) -> bool {
        !(self.fold_case || self.collapse_whitespace || self.strip_html)
    }
}

/// Normalise `data`; borrows it unchanged when `opts` asks for nothing.
pub fn normalize<'a>(opts: &Normalize, data: &'a [u8]) -> Cow<'a, [u8]> {
    if opts.is_none() {
        return Cow::Borrowed(data);
    }
    let mut v: Vec<u8> = if opts.strip_html {
        strip_html(data)
    } else {
        data.to_vec()
    };
    if opts.fold_case {
        v.make_ascii_lowercase();
    }
    if opts.collapse_whitespace {
        v = collapse(&v);
    }
    Cow::Owned(v)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn collapse(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut pending = false;
    for &b in data {
        if is_space(b) {
            pending = !out.is_empty();
        } else {
            if pending {
                out.push(b' ');
                pending = false;
            }
            out.push(b);
        }
    }
    out
}

fn strip_html(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        let Some(p) = memchr::memchr(b'<', &data[i..]) else {
            out.extend_from_slice(&data[i..]);
            break;
        };
        out.extend_from_slice(&data[i..i + p]);
        let tag = i + p;
        let end = if data[tag..].starts_with(b"<!--") {
            memchr::memmem::find(&data[tag + 4..], b"-->").map(|q| tag + 4 + q + 3)
        } else {
            memchr::memchr(b'>', &data[tag..]).map(|q| tag + q + 1)
        };
        match end {
            Some(e) => {
                out.push(b' ');
                i = e;
            }
            None => {
                out.extend_from_slice(&data[tag..]);
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(fold: bool, ws: bool, html: bool, s: &str) -> String {
        let o = Normalize {
            fold_case: fold,
            collapse_whitespace: ws,
            strip_html: html,
        };
        String::from_utf8(normalize(&o, s.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn known_answers() {
        assert!(matches!(
            normalize(&Normalize::default(), b"A  b"),
            Cow::Borrowed(_)
        ));
        assert_eq!(n(true, false, false, "Hello WORLD é"), "hello world é");
        assert_eq!(n(false, true, false, "  a \t\n b  c \n"), "a b c");
        assert_eq!(
            n(false, false, true, "<p>x<b>y</b></p><!-- <c> -->z"),
            " x y   z"
        );
        assert_eq!(n(false, false, true, "a < b and c"), "a < b and c");
        assert_eq!(
            n(
                true,
                true,
                true,
                "<HTML><Body>Hello,\n  <I>World</I>!</body>"
            ),
            "hello, world !"
        );
    }
}
