//! The text of the corpora: a fixed English vocabulary, sentences and
//! documents made of it, and the word and line edits that make versions.

use super::Rng;

pub(super) const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "this",
    "that",
    "from",
    "be",
    "are",
    "or",
    "an",
    "it",
    "at",
    "server",
    "client",
    "network",
    "printer",
    "driver",
    "install",
    "configure",
    "update",
    "version",
    "release",
    "patch",
    "error",
    "message",
    "support",
    "document",
    "manager",
    "service",
    "database",
    "interface",
    "system",
    "user",
    "account",
    "password",
    "storage",
    "volume",
    "disk",
    "memory",
    "cluster",
    "node",
    "backup",
    "restore",
    "file",
    "directory",
    "path",
    "setting",
    "option",
    "value",
    "default",
    "parameter",
    "command",
    "script",
    "process",
    "thread",
    "queue",
    "request",
    "response",
    "timeout",
    "connection",
    "port",
    "address",
    "protocol",
    "secure",
    "certificate",
    "license",
    "product",
    "customer",
    "engineer",
    "solution",
    "problem",
    "symptom",
    "cause",
    "workaround",
    "resolution",
    "step",
    "first",
    "then",
    "after",
    "before",
    "when",
    "if",
    "not",
    "can",
    "will",
    "should",
    "must",
    "may",
    "also",
    "only",
    "each",
    "every",
    "all",
    "some",
    "new",
    "old",
    "current",
    "previous",
    "next",
    "local",
    "remote",
    "global",
    "shared",
    "private",
    "public",
    "internal",
    "external",
    "primary",
    "secondary",
    "log",
    "event",
    "alert",
    "monitor",
    "report",
    "status",
    "state",
    "check",
    "verify",
    "enable",
    "disable",
    "start",
    "stop",
    "restart",
    "open",
    "close",
    "read",
    "write",
    "copy",
    "move",
    "delete",
    "create",
    "remove",
    "replace",
    "contains",
    "includes",
    "requires",
    "supports",
    "allows",
    "prevents",
    "causes",
    "fixes",
    "resolves",
    "returns",
    "kernel",
    "module",
    "package",
    "library",
    "firmware",
    "hardware",
    "software",
    "application",
    "component",
    "agent",
    "console",
    "window",
    "screen",
    "button",
    "menu",
    "field",
    "table",
    "record",
    "entry",
    "index",
    "key",
    "object",
    "class",
    "method",
    "function",
    "variable",
    "string",
    "number",
    "list",
    "array",
    "buffer",
    "cache",
    "page",
    "block",
    "sector",
    "partition",
    "mount",
    "share",
    "domain",
    "host",
    "gateway",
    "route",
    "switch",
    "link",
    "cable",
    "power",
];

/// A sentence of 6-18 words, capitalised, ending with a period.
fn sentence(rng: &mut Rng, out: &mut String) {
    let n = rng.range(6, 18);
    for i in 0..n {
        let w = WORDS[rng.below(WORDS.len() as u64) as usize];
        if i == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                out.extend(f.to_uppercase());
                out.push_str(c.as_str());
            }
        } else {
            out.push(' ');
            out.push_str(w);
        }
    }
    // A number now and then, as in real support notes.
    if rng.below(4) == 0 {
        out.push_str(&format!(" {}", rng.range(1, 99_999)));
    }
    out.push_str(". ");
}

/// A document of about `size` bytes: paragraphs of sentences, lines of ~70
/// characters.
pub fn document(rng: &mut Rng, size: usize) -> String {
    let mut out = String::with_capacity(size + 200);
    let mut line_start = 0;
    while out.len() < size {
        sentence(rng, &mut out);
        if out.len() - line_start > 70 {
            out.pop();
            out.push('\n');
            line_start = out.len();
            if rng.below(6) == 0 {
                out.push('\n');
                line_start = out.len();
            }
        }
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// Apply `edits` small local edits (replace, insert or delete a few words)
/// at random places: a new version of the same document.
pub fn edit(rng: &mut Rng, text: &str, edits: usize) -> String {
    let mut words: Vec<String> = text.split(' ').map(str::to_string).collect();
    for _ in 0..edits {
        let at = rng.below(words.len() as u64) as usize;
        let w = WORDS[rng.below(WORDS.len() as u64) as usize].to_string();
        match rng.below(3) {
            0 => words[at] = w,
            1 => words.insert(at, w),
            _ => {
                if words.len() > 1 {
                    words.remove(at);
                }
            }
        }
    }
    words.join(" ")
}

/// Apply `edits` line edits at random places: a new line inserted, a line
/// deleted, or a line replaced by a new one (a version of the document as
/// `diff` would see it: whole lines differ, the rest is shared).
pub fn edit_lines(rng: &mut Rng, text: &str, edits: usize) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let fresh = |rng: &mut Rng| {
        let mut l = String::new();
        while l.len() < 60 {
            sentence(rng, &mut l);
        }
        l.pop();
        l.push('\n');
        l
    };
    for _ in 0..edits {
        let at = rng.below(lines.len() as u64 + 1) as usize;
        match rng.below(3) {
            0 if at < lines.len() => lines[at] = fresh(rng),
            2 if at < lines.len() && lines.len() > 1 => {
                lines.remove(at);
            }
            _ => lines.insert(at, fresh(rng)),
        }
    }
    lines.concat()
}

/// `n` words of the vocabulary (`first`: at least this index), space-separated.
pub(super) fn words(rng: &mut Rng, n: u64, first: usize) -> Vec<&'static str> {
    (0..n)
        .map(|_| WORDS[first + rng.below((WORDS.len() - first) as u64) as usize])
        .collect()
}

/// The words of the vocabulary that are nouns or verbs (not "the", "of"...).
pub(super) const CONTENT: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic() {
        let a = document(&mut Rng::new(7), 5000);
        let b = document(&mut Rng::new(7), 5000);
        assert_eq!(a, b);
        assert!(a.len() >= 5000 && a.len() < 5300);
        assert_ne!(a, document(&mut Rng::new(8), 5000));
    }

    #[test]
    fn line_edits_keep_most_lines() {
        let base = document(&mut Rng::new(3), 10_000);
        let mut rng = Rng::new(4);
        for edits in 1..=5 {
            let v = edit_lines(&mut rng, &base, edits);
            assert_ne!(v, base);
            assert!(v.ends_with('\n'));
            let lines: std::collections::HashSet<&str> = v.split_inclusive('\n').collect();
            let kept = base
                .split_inclusive('\n')
                .filter(|l| lines.contains(l))
                .count();
            assert!(kept + edits >= base.split_inclusive('\n').count());
        }
    }
}
