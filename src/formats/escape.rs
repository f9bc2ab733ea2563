//! Escaping of paths in records: any bytes but NUL, written as printable,
//! valid UTF-8 without tabs or newlines, and back.

use crate::formats::numbers::hex_val;

/// Escape a path (any bytes but NUL) into printable, valid UTF-8 without tabs
/// or newlines: `\\` for a backslash, `\t`, `\n`, `\r`, and `\xHH` for other
/// control bytes, DEL and bytes that are not part of valid UTF-8. Everything
/// else, including non-ASCII UTF-8, is kept as is. [`unescape_path`] inverts it.
pub fn escape_path(path: &[u8], out: &mut Vec<u8>) {
    let mut rest = path;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s.len(), 0),
            Err(e) => (
                e.valid_up_to(),
                e.error_len().unwrap_or(rest.len() - e.valid_up_to()),
            ),
        };
        escape_valid(&rest[..valid], out);
        for &b in &rest[valid..valid + bad] {
            push_hex_escape(b, out);
        }
        rest = &rest[valid + bad..];
    }
}

/// Whether [`escape_path`] changes byte `b` of valid UTF-8.
#[inline]
pub(crate) fn escaped(b: u8) -> bool {
    b == b'\\' || b < 0x20 || b == 0x7f
}

/// [`escape_path`] of valid UTF-8: runs of plain bytes copied at once (a
/// byte at a time, this was a sixth of writing a json report).
fn escape_valid(mut s: &[u8], out: &mut Vec<u8>) {
    while let Some(k) = s.iter().position(|&b| escaped(b)) {
        out.extend_from_slice(&s[..k]);
        match s[k] {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b => push_hex_escape(b, out),
        }
        s = &s[k + 1..];
    }
    out.extend_from_slice(s);
}

fn push_hex_escape(b: u8, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&[b'\\', b'x', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
}

/// Escape into a new `String` (always valid UTF-8).
pub fn escape_path_string(path: &[u8]) -> String {
    let mut v = Vec::with_capacity(path.len());
    escape_path(path, &mut v);
    String::from_utf8(v).expect("escape_path writes valid UTF-8")
}

/// Invert [`escape_path`]. Errors name what was wrong.
pub fn unescape_path(s: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        // Paths are nearly all plain bytes: copy each run of them at once
        // (a byte at a time, this was a tenth of a re-run's fsim-verify).
        let plain = s[i..]
            .iter()
            .position(|&b| escaped(b))
            .unwrap_or(s.len() - i);
        out.extend_from_slice(&s[i..i + plain]);
        i += plain;
        let Some(&b) = s.get(i) else {
            break;
        };
        if b != b'\\' {
            return Err(format!("unescaped control byte 0x{b:02x} in path"));
        }
        match s.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b't') => out.push(b'\t'),
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b'x') => {
                let h = s
                    .get(i + 2..i + 4)
                    .and_then(|h| Some(hex_val(h[0])? << 4 | hex_val(h[1])?));
                match h {
                    Some(v) if v != 0 => out.push(v),
                    _ => {
                        return Err(
                            "bad \\x escape in path: expected \\xHH with two lowercase hex digits"
                                .into(),
                        )
                    }
                }
                i += 4;
                continue;
            }
            _ => return Err("bad escape in path: expected \\\\, \\t, \\n, \\r or \\xHH".into()),
        }
        i += 2;
    }
    if out.is_empty() {
        return Err("empty path".into());
    }
    Ok(out)
}
