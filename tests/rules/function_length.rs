//! Functions a reader can hold: no function
//! in src/, tools/src/ or tests/ runs over `MAX_LINES` lines, from its `fn` line to its
//! closing brace, test code included, and no Python function in scripts/
//! from its `def` line to the last line of its body. A function that grows
//! past it is split along the steps its comments name; the few that may
//! stay longer are in `EXCEPTIONS`, each with its reason. Read from the
//! source text (a small scanner that knows comments, strings and character
//! literals; for Python, indentation), so it fails as soon as such a
//! function is written (`make test-fast`, `make check`).

use crate::common;
use common::rust_files;

use std::path::Path;

const MAX_LINES: usize = 100;

/// `(file, function, reason)`: functions allowed over `MAX_LINES`. The
/// list only shrinks: an entry whose function is gone or back under the
/// limit fails the test too, so it is removed when the function is split.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "scripts/quality/documents.py",
        "main",
        "the steps of `make quality-documents` in order; each step a call, split when one grows",
    ),
    (
        "scripts/quality/evaluate.py",
        "main",
        "the steps of `make quality` in order; each step a call, split when one grows",
    ),
    (
        "scripts/quality/evaluate.py",
        "write_doc",
        "the sections of docs/quality.md in order; each step a call, split when one grows",
    ),
    (
        "scripts/spark/sort_bench.py",
        "main",
        "the benchmark's steps in order; each step a call, split when one grows",
    ),
];

/// Whether the `'` at `i` opens a byte literal (`b'"'`): after a `b` that
/// is a prefix, not the end of an identifier.
fn byte_prefix(b: &[u8], i: usize) -> bool {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    i > 0 && b[i - 1] == b'b' && (i < 2 || !ident(b[i - 2]))
}

/// The source with comments, string and character literals blanked out
/// (replaced by spaces, newlines kept), so that braces and `fn` are found
/// only in code.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !ident_before && raw_string_start(&b[i..]).is_some() {
            let (prefix, hashes) = raw_string_start(&b[i..]).unwrap();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + prefix;
            let end = find(&b[body..], &close).map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' && (!ident_before || byte_prefix(b, i)) {
            // A character literal ('x', '\n', '\u{..}', '{', b'"') or a
            // lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match end {
                Some(e) => {
                    blank(&mut out, i, e + 1);
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// `r"`, `r#"`, `br##"`...: the length of the opening and its number of `#`.
fn raw_string_start(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = usize::from(b.first() == Some(&b'b'));
    if b.get(i) != Some(&b'r') {
        return None;
    }
    i += 1;
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    (b.get(i + hashes) == Some(&b'"')).then_some((i + hashes + 1, hashes))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Every function with a body in `code`: its name, first line and number
/// of lines (from the `fn` line to the closing brace).
fn functions(code: &[u8]) -> Vec<(String, usize, usize)> {
    let line_at = |pos: usize| 1 + code[..pos].iter().filter(|&&c| c == b'\n').count();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = find(&code[i..], b"fn") {
        let at = i + p;
        i = at + 2;
        if (at > 0 && is_ident(code[at - 1]))
            || !code.get(at + 2).is_some_and(|c| c.is_ascii_whitespace())
        {
            continue;
        }
        let name_start = at
            + 2
            + code[at + 2..]
                .iter()
                .take_while(|c| c.is_ascii_whitespace())
                .count();
        let name: String = code[name_start..]
            .iter()
            .take_while(|&&c| is_ident(c))
            .map(|&c| c as char)
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` outside parentheses and brackets, unless a
        // `;` ends a declaration first.
        let mut depth = 0i32;
        let mut open = None;
        for (k, &c) in code.iter().enumerate().skip(name_start) {
            match c {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0i32;
        let close = code[open..]
            .iter()
            .position(|&c| {
                braces += match c {
                    b'{' => 1,
                    b'}' => -1,
                    _ => 0,
                };
                braces == 0
            })
            .map_or(code.len() - 1, |q| open + q);
        let first = line_at(at);
        out.push((name, first, line_at(close) - first + 1));
    }
    out
}

#[test]
fn the_scanner_finds_bodies_and_skips_literals() {
    let src = "fn a() {\n    let s = \"}\";\n    let c = '{';\n    // }\n}\n\
               trait T { fn d(&self) -> [u8; 2]; }\n\
               fn b<'a>(x: &'a str) -> usize {\n    r#\"{\"#.len()\n\n}\n\
               fn e() -> [u8; 2] {\n    [b'\"', b'}']\n}\n\
               fn f() {}\n";
    let got = functions(&code_only(src));
    assert_eq!(
        got,
        vec![
            ("a".to_string(), 1, 5),
            ("b".to_string(), 7, 4),
            ("e".to_string(), 11, 3),
            ("f".to_string(), 14, 1)
        ],
        "{got:?}"
    );
}

/// Every function with a body in a Python source: its name, first line
/// and number of lines (from the `def` line to the last non-blank line
/// indented deeper than it).
fn python_functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let Some(rest) = t
            .strip_prefix("def ")
            .or_else(|| t.strip_prefix("async def "))
        else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut last = i;
        for (j, m) in lines.iter().enumerate().skip(i + 1) {
            if m.trim().is_empty() {
                continue;
            }
            if indent(m) <= indent(l) {
                break;
            }
            last = j;
        }
        out.push((name, i + 1, last - i + 1));
    }
    out
}

/// Python files under `dir`, recursively.
fn python_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let hidden = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if p.is_dir() && !hidden {
            python_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "py") {
            out.push(p);
        }
    }
}

#[test]
fn the_python_scanner_ends_a_body_at_its_dedent() {
    let src =
        "def a(x):\n    y = 1\n\n    return y\n\nclass C:\n    def m(self):\n        pass\nz = 2\n";
    assert_eq!(
        python_functions(src),
        vec![("a".to_string(), 1, 4), ("m".to_string(), 7, 2)]
    );
}

#[test]
fn no_function_in_src_tests_or_scripts_is_longer_than_a_reader_can_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("tests"), &mut files);
    rust_files(&root.join("tools/src"), &mut files);
    python_files(&root.join("scripts"), &mut files);
    files.sort();
    let mut long = Vec::new();
    let mut excepted_seen = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        let functions = if rel.ends_with(".py") {
            python_functions(&text)
        } else {
            functions(&code_only(&text))
        };
        for (name, line, len) in functions {
            let excepted = EXCEPTIONS
                .iter()
                .any(|(ef, en, _)| *ef == rel && *en == name);
            if excepted && len > MAX_LINES {
                excepted_seen.push((rel.clone(), name.clone()));
            }
            if len > MAX_LINES && !excepted {
                long.push((len, format!("{rel}:{line}: fn {name}: {len} lines")));
            }
        }
    }
    for (file, name, _) in EXCEPTIONS {
        if !excepted_seen.iter().any(|(f, n)| f == file && n == name) {
            long.push((
                usize::MAX,
                format!("{file}: fn {name} is in EXCEPTIONS but no longer over {MAX_LINES} lines: remove it"),
            ));
        }
    }
    long.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let list: Vec<&str> = long.iter().map(|(_, s)| s.as_str()).collect();
    assert!(
        long.is_empty(),
        "{} functions over {MAX_LINES} lines, or stale EXCEPTIONS (split them along \
         the steps their comments name, or list them in EXCEPTIONS with the reason):\n{}",
        long.len(),
        list.join("\n")
    );
}
