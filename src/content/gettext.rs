//! Compiled gettext catalogs (`.mo`): the view is the catalog's messages
//! as text, exactly the lines `msgunfmt --no-wrap` prints for it, without
//! its blank separator lines. A `.mo` is a table of offsets followed by
//! its strings, so two releases of one catalog whose messages are 90 % the
//! same share few long byte runs (every offset after an added message
//! moves); as text they share their unchanged messages line for line, and
//! a compiled catalog is measured like its `.po` source: by lines, at the
//! speed of the files, instead of by the byte measure of binary
//! files.
//!
//! The format (GNU gettext manual, "The Format of GNU MO Files"): a magic
//! number in either byte order, a revision, the number of messages N, the
//! offsets of the table of original strings and of the table of
//! translations, each table N (length, offset) pairs of 32-bit words; a
//! string may hold a context (`ctx\x04msgid`) and plural forms separated by
//! NUL. The system-dependent strings of revision 1 are not read (no view
//! of them; glibc's own catalogs are the only known users).

use super::{read_input, Budget, Fail, Source};

/// The magic number, as a little-endian word.
const MAGIC: u32 = 0x9504_12de;
/// Bytes of the fixed header read here (magic to translation table).
const HEADER: usize = 20;

/// True when `head` starts like a `.mo` file, in either byte order.
pub(super) fn looks_like_mo(head: &[u8]) -> bool {
    head.len() >= 28 && (word(head, 0, false) == MAGIC || word(head, 0, true) == MAGIC)
}

pub(super) fn extract(src: &mut dyn Source, budget: &Budget) -> Result<Vec<u8>, Fail> {
    let data = read_input(src, budget)?;
    let mo = Catalog::parse(&data)?;
    let mut out = Vec::with_capacity(data.len());
    for i in 0..mo.count {
        if i % 4096 == 0 {
            budget.check_time()?;
        }
        let (id, text) = (mo.string(mo.originals, i)?, mo.string(mo.translations, i)?);
        write_message(id, text, &mut out);
        budget.check_size(out.len() as u64, "the catalog's text")?;
    }
    Ok(out)
}

/// A `.mo` file's header, checked against the file's length.
struct Catalog<'a> {
    data: &'a [u8],
    big_endian: bool,
    count: usize,
    originals: usize,
    translations: usize,
}

impl<'a> Catalog<'a> {
    fn parse(data: &'a [u8]) -> Result<Catalog<'a>, Fail> {
        if data.len() < HEADER {
            return Err("shorter than a .mo header".into());
        }
        let big_endian = word(data, 0, true) == MAGIC;
        if !big_endian && word(data, 0, false) != MAGIC {
            return Err("no .mo magic number".into());
        }
        let revision = word(data, 4, big_endian);
        if revision >> 16 > 1 {
            return Err(format!("unknown major revision {}", revision >> 16));
        }
        let w = |at| word(data, at, big_endian) as usize;
        let (count, originals, translations) = (w(8), w(12), w(16));
        for (table, name) in [(originals, "originals"), (translations, "translations")] {
            let end = count
                .checked_mul(8)
                .and_then(|n| n.checked_add(table))
                .filter(|&end| end <= data.len());
            if end.is_none() {
                return Err(format!(
                    "its table of {name} ({count} messages at offset {table}) is past the end of the file ({} bytes)",
                    data.len()
                ));
            }
        }
        Ok(Catalog {
            data,
            big_endian,
            count,
            originals,
            translations,
        })
    }

    /// String `i` of the table at `table` (its bytes, without the NUL).
    ///
    /// Every writer ends a string with a NUL the length leaves out, and
    /// GNU `msgunfmt` refuses a catalog where one does not: the offsets of
    /// a catalog edited as bytes (a line inserted, a block cut) point
    /// across the strings' ends, and the "messages" they give are pieces
    /// of others, NULs within. Such a file has no view; its bytes are
    /// compared, with a note.
    fn string(&self, table: usize, i: usize) -> Result<&'a [u8], Fail> {
        let at = table + 8 * i;
        let len = word(self.data, at, self.big_endian) as usize;
        let off = word(self.data, at + 4, self.big_endian) as usize;
        // `end` is the NUL's offset: it is in the file too.
        let end = off
            .checked_add(len)
            .filter(|&end| end < self.data.len())
            .ok_or_else(|| {
                format!(
                    "string {i} ({len} bytes at offset {off}) is past the end of the file ({} bytes)",
                    self.data.len()
                )
            })?;
        if self.data[end] != 0 {
            return Err(format!(
                "string {i} ({len} bytes at offset {off}) does not end in a NUL, as every string of a .mo does (a catalog edited as bytes?)"
            ));
        }
        Ok(&self.data[off..end])
    }
}

/// The 32-bit word at `at` (in bounds: checked by the caller).
fn word(data: &[u8], at: usize, big_endian: bool) -> u32 {
    let b: [u8; 4] = data[at..at + 4].try_into().expect("four bytes");
    if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

/// One message as msgunfmt writes it: `msgctxt` when it has a context,
/// `msgid`, `msgid_plural` and `msgstr[n]` when it has plural forms, else
/// `msgid` and `msgstr`.
fn write_message(id: &[u8], text: &[u8], out: &mut Vec<u8>) {
    let (context, id) = match memchr::memchr(0x04, id) {
        Some(i) => (Some(&id[..i]), &id[i + 1..]),
        None => (None, id),
    };
    if let Some(c) = context {
        write_string(b"msgctxt", c, out);
    }
    match memchr::memchr(0, id) {
        None => {
            write_string(b"msgid", id, out);
            write_string(b"msgstr", text, out);
        }
        Some(i) => {
            write_string(b"msgid", &id[..i], out);
            write_string(b"msgid_plural", &id[i + 1..], out);
            for (n, form) in text.split(|&b| b == 0).enumerate() {
                let keyword = format!("msgstr[{n}]");
                write_string(keyword.as_bytes(), form, out);
            }
        }
    }
}

/// `keyword "string"`, escaped as PO files are; a string with a newline
/// before its end is written `keyword ""` and then one quoted line per
/// newline-ended segment, as every PO writer does.
fn write_string(keyword: &[u8], s: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(keyword);
    out.push(b' ');
    let inner_newline = s.len() > 1 && s[..s.len() - 1].contains(&b'\n');
    if inner_newline {
        out.extend_from_slice(b"\"\"\n");
        for segment in s.split_inclusive(|&b| b == b'\n') {
            quoted(segment, out);
        }
    } else {
        quoted(s, out);
    }
}

/// `"s"` and a newline, with the C escapes PO files use; other bytes as
/// they are (the catalog's own charset).
fn quoted(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        let escape = match b {
            0x07 => b'a',
            0x08 => b'b',
            0x0c => b'f',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x0b => b'v',
            b'\\' => b'\\',
            b'"' => b'"',
            _ => {
                out.push(b);
                continue;
            }
        };
        out.push(b'\\');
        out.push(escape);
    }
    out.extend_from_slice(b"\"\n");
}

#[cfg(test)]
mod tests {
    use super::super::{view, Kind, Limits};

    /// A little-endian `.mo` of `messages` (sorted as msgfmt sorts them).
    pub(crate) fn mo_of(messages: &[(&[u8], &[u8])]) -> Vec<u8> {
        let n = messages.len() as u32;
        let mut head = Vec::new();
        let mut strings = Vec::new();
        let base = 28 + 16 * n;
        let mut tables = [Vec::new(), Vec::new()];
        for (t, table) in tables.iter_mut().enumerate() {
            for m in messages {
                let s = if t == 0 { m.0 } else { m.1 };
                table.push((s.len() as u32, base + strings.len() as u32));
                strings.extend_from_slice(s);
                strings.push(0);
            }
        }
        for w in [super::MAGIC, 0, n, 28, 28 + 8 * n, 0, 0] {
            head.extend_from_slice(&w.to_le_bytes());
        }
        for (len, off) in tables.iter().flatten() {
            head.extend_from_slice(&len.to_le_bytes());
            head.extend_from_slice(&off.to_le_bytes());
        }
        head.extend_from_slice(&strings);
        head
    }

    #[test]
    fn messages_are_written_as_msgunfmt_writes_them() {
        let mo = mo_of(&[
            (b"", b"Language: de\nPlural-Forms: nplurals=2;\n"),
            (b"a\tb\\c\"d", b"x\ny"),
            (b"ctx\x04day\0days", b"Tag\0Tage"),
            (b"end\n", b"Ende\n"),
        ]);
        let v = view(&mo, &Limits::default());
        assert_eq!(v.kind, Kind::Mo, "{:?}", v.note);
        assert_eq!(
            String::from_utf8(v.bytes).unwrap(),
            "msgid \"\"\nmsgstr \"\"\n\"Language: de\\n\"\n\"Plural-Forms: nplurals=2;\\n\"\n\
             msgid \"a\\tb\\\\c\\\"d\"\nmsgstr \"\"\n\"x\\n\"\n\"y\"\n\
             msgctxt \"ctx\"\nmsgid \"day\"\nmsgid_plural \"days\"\nmsgstr[0] \"Tag\"\nmsgstr[1] \"Tage\"\n\
             msgid \"end\\n\"\nmsgstr \"Ende\\n\"\n"
        );
    }

    #[test]
    fn broken_catalogs_keep_their_raw_view_with_a_note() {
        let mut mo = mo_of(&[(b"a", b"b"), (b"c", b"d")]);
        let whole = mo.len();
        mo.truncate(whole - 3);
        let v = view(&mo, &Limits::default());
        assert_eq!(v.kind, Kind::Raw);
        assert_eq!(
            v.note.as_deref(),
            Some("unreadable as mo: string 0 (1 bytes at offset 64) is past the end of the file (65 bytes)")
        );
        // A line inserted in "pear" (its strings start at 60: "apple",
        // "pear" at 66, ...), as by a text editor: the offsets stay in the
        // file, but the translations after it ("Apfel" at 71) are read 9
        // bytes early, across the NUL before them.
        let good = mo_of(&[(b"apple", b"Apfel"), (b"pear", b"Birne")]);
        assert_eq!(&good[66..71], b"pear\0");
        let edited = [&good[..68], b"inserted\n", &good[68..]].concat();
        let v = view(&edited, &Limits::default());
        assert_eq!(v.kind, Kind::Raw, "{:?}", String::from_utf8_lossy(&v.bytes));
        assert_eq!(
            v.note.as_deref(),
            Some("unreadable as mo: string 0 (5 bytes at offset 71) does not end in a NUL, as every string of a .mo does (a catalog edited as bytes?)")
        );
        let mut huge = mo_of(&[(b"a", b"b")]);
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        let v = view(&huge, &Limits::default());
        assert_eq!(
            v.note.as_deref(),
            Some("unreadable as mo: its table of originals (4294967295 messages at offset 28) is past the end of the file (48 bytes)")
        );
    }
}
