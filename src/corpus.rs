//! Deterministic sample repositories with planted relationships, for
//! `make demo` and the end-to-end tests: unrelated documents, near-duplicate
//! versions, a document contained in another, a group of successive
//! versions, identical copies, files sharing a long template preamble, and
//! a few odd files (empty, binary). The generator also writes a manifest of
//! what it planted, so a test can check the report against the truth.
//!
//! Text is built from a fixed English vocabulary with a fixed PRNG
//! (SplitMix64), so the same seed gives the same bytes on every machine.

use crate::error::{Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// SplitMix64: tiny, fast, and fully specified, so corpora are reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

const WORDS: &[&str] = &[
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

/// What the generator planted, one relation per line in the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planted {
    /// Two versions of one document (both relative paths).
    NearDuplicate(String, String),
    /// The first file's text is wholly inside the second.
    Contains(String, String),
    /// Successive versions of one document: each consecutive pair is similar.
    Group(Vec<String>),
    /// Files with byte-identical content.
    Identical(Vec<String>),
    /// Files that share a long common preamble (a template).
    Template(Vec<String>),
}

/// Options of the generator.
#[derive(Debug, Clone)]
pub struct CorpusSpec {
    pub seed: u64,
    /// Unrelated documents.
    pub unique: usize,
    pub near_pairs: usize,
    pub groups: usize,
    pub identical_sets: usize,
    pub template_files: usize,
    /// Range of document sizes in bytes.
    pub min_size: usize,
    pub max_size: usize,
}

impl Default for CorpusSpec {
    /// The demo repository: small enough to read the report in a terminal.
    fn default() -> Self {
        CorpusSpec {
            seed: 2005,
            unique: 40,
            near_pairs: 4,
            groups: 1,
            identical_sets: 3,
            template_files: 5,
            min_size: 6_000,
            max_size: 24_000,
        }
    }
}

/// Write a repository under `root` (created; must not exist or be empty)
/// and return what was planted. Paths in the result are relative to `root`.
pub fn generate(root: &Path, spec: &CorpusSpec) -> Result<Vec<Planted>> {
    let mut rng = Rng::new(spec.seed);
    let mut planted = Vec::new();
    let w = |rel: &str, data: &[u8]| -> Result<()> {
        let p: PathBuf = root.join(rel);
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).ctx(|| format!("cannot create {}", d.display()))?;
        }
        fs::write(&p, data).ctx(|| format!("cannot write {}", p.display()))
    };
    let size = |rng: &mut Rng| rng.range(spec.min_size as u64, spec.max_size as u64) as usize;

    for i in 0..spec.unique {
        let n = size(&mut rng);
        w(
            &format!("notes/doc-{i:04}.txt"),
            document(&mut rng, n).as_bytes(),
        )?;
    }
    for i in 0..spec.near_pairs {
        let n = size(&mut rng);
        let a = document(&mut rng, n);
        let b = edit(&mut rng, &a, 2);
        let (pa, pb) = (
            format!("manuals/v1/manual-{i:02}.txt"),
            format!("manuals/v2/manual-{i:02}.txt"),
        );
        w(&pa, a.as_bytes())?;
        w(&pb, b.as_bytes())?;
        planted.push(Planted::NearDuplicate(pa, pb));
    }
    // One document contained in a larger one (an appendix pasted into a guide).
    {
        let n = size(&mut rng);
        let part = document(&mut rng, n);
        let m = size(&mut rng) * 2;
        let whole = format!("{}{}{}", document(&mut rng, m), part, document(&mut rng, m));
        w("guides/appendix.txt", part.as_bytes())?;
        w("guides/full-guide.txt", whole.as_bytes())?;
        planted.push(Planted::Contains(
            "guides/appendix.txt".into(),
            "guides/full-guide.txt".into(),
        ));
    }
    for g in 0..spec.groups {
        let n = size(&mut rng);
        let mut text = document(&mut rng, n);
        let mut names = Vec::new();
        for v in 1..=3 {
            let p = format!("kb/article-{g}/rev{v}.txt");
            w(&p, text.as_bytes())?;
            names.push(p);
            text = edit(&mut rng, &text, 2);
            text.push_str(&document(&mut rng, 400));
        }
        planted.push(Planted::Group(names));
    }
    for s in 0..spec.identical_sets {
        let n = size(&mut rng);
        let text = document(&mut rng, n);
        let copies = 2 + s % 2;
        let mut names = Vec::new();
        for c in 0..copies {
            let p = if c == 0 {
                format!("notes/faq-{s}.txt")
            } else {
                format!("mirror-{c}/faq-{s}.txt")
            };
            w(&p, text.as_bytes())?;
            names.push(p);
        }
        planted.push(Planted::Identical(names));
    }
    if spec.template_files > 0 {
        let preamble = format!(
            "<html><head><script>\n{}</script></head><body>\n",
            document(&mut Rng::new(spec.seed ^ 0x7e3a), 6_000).replace('\n', "\n// ")
        );
        let mut names = Vec::new();
        for t in 0..spec.template_files {
            let n = rng.range(2_000, 4_000) as usize;
            let body = document(&mut rng, n);
            let p = format!("web/page-{t:02}.html");
            w(&p, format!("{preamble}{body}</body></html>\n").as_bytes())?;
            names.push(p);
        }
        planted.push(Planted::Template(names));
    }
    // Odd files that must not disturb anything.
    w("misc/empty-1.txt", b"")?;
    w("misc/empty-2.txt", b"")?;
    let mut bin = vec![0u8; 4096];
    for b in bin.iter_mut() {
        *b = rng.next_u64() as u8;
    }
    w("misc/blob.bin", &bin)?;
    Ok(planted)
}

/// The manifest: one relation per line, `kind\tpath\tpath...`.
pub fn manifest(planted: &[Planted]) -> String {
    let mut out = String::new();
    for p in planted {
        let (kind, paths): (&str, Vec<&String>) = match p {
            Planted::NearDuplicate(a, b) => ("near", vec![a, b]),
            Planted::Contains(a, b) => ("contains", vec![a, b]),
            Planted::Group(v) => ("group", v.iter().collect()),
            Planted::Identical(v) => ("identical", v.iter().collect()),
            Planted::Template(v) => ("template", v.iter().collect()),
        };
        out.push_str(kind);
        for q in paths {
            out.push('\t');
            out.push_str(q);
        }
        out.push('\n');
    }
    out
}

/// The shape of a benchmark repository (`fsim-gen --bulk`, `--versions`).
#[derive(Debug, Clone, Copy)]
pub struct Bulk {
    /// Documents generated (files for `--bulk`, originals for `--versions`).
    pub docs: usize,
    /// Average size: each document is half to one and a half times this.
    pub avg_size: usize,
    /// Folders `dNNN` the files are spread over (at least one).
    pub dirs: usize,
    pub seed: u64,
}

impl Bulk {
    /// Create the folders; the generator and the number of folders.
    fn start(&self, root: &Path) -> Result<(Rng, usize)> {
        let dirs = self.dirs.max(1);
        for d in 0..dirs {
            let p = root.join(format!("d{d:03}"));
            fs::create_dir_all(&p).ctx(|| format!("cannot create {}", p.display()))?;
        }
        Ok((Rng::new(self.seed), dirs))
    }

    /// Size of the next new document.
    fn size(&self, rng: &mut Rng) -> usize {
        rng.range(self.avg_size as u64 / 2, self.avg_size as u64 * 3 / 2) as usize
    }
}

/// A large repository for benchmarks: `docs` text documents (see [`Bulk`]).
/// One file in ten is an edited version of an earlier one and
/// one in twenty an identical copy, so every stage has real work to do.
/// Returns the number of bytes written.
pub fn generate_bulk(root: &Path, spec: &Bulk) -> Result<u64> {
    let (mut rng, dirs) = spec.start(root)?;
    // Recent documents, to derive versions and copies from.
    let mut recent: Vec<String> = Vec::new();
    let mut total = 0u64;
    for i in 0..spec.docs {
        let roll = rng.below(20);
        let text = if roll < 2 && !recent.is_empty() {
            let base = &recent[rng.below(recent.len() as u64) as usize];
            edit(&mut rng, base, 3)
        } else if roll == 2 && !recent.is_empty() {
            recent[rng.below(recent.len() as u64) as usize].clone()
        } else {
            let n = spec.size(&mut rng);
            document(&mut rng, n)
        };
        let p = root.join(format!("d{:03}/f{i:07}.txt", i % dirs));
        fs::write(&p, text.as_bytes()).ctx(|| format!("cannot write {}", p.display()))?;
        total += text.len() as u64;
        if recent.len() < 64 {
            recent.push(text);
        } else {
            let k = rng.below(64) as usize;
            recent[k] = text;
        }
    }
    Ok(total)
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

/// The fsim-verify benchmark: `docs` text documents (see [`Bulk`]), each
/// with two versions of 1-5 line edits: `dNNN/vNNNNNNN-0.txt` is the
/// document, `-1` and `-2` its versions. Consecutive in path order, so the
/// file table gives each triple consecutive ids and fsim-analyze finds the
/// three pairs of each triple (and, with random sentences, nothing else).
/// Returns the number of bytes written.
pub fn generate_versions(root: &Path, spec: &Bulk) -> Result<u64> {
    let (mut rng, dirs) = spec.start(root)?;
    let mut total = 0u64;
    for i in 0..spec.docs {
        let n = spec.size(&mut rng);
        let base = document(&mut rng, n);
        for v in 0..3 {
            let text = if v == 0 {
                base.clone()
            } else {
                let edits = rng.range(1, 5) as usize;
                edit_lines(&mut rng, &base, edits)
            };
            let p = root.join(format!("d{:03}/v{i:07}-{v}.txt", i % dirs));
            fs::write(&p, text.as_bytes()).ctx(|| format!("cannot write {}", p.display()))?;
            total += text.len() as u64;
        }
    }
    Ok(total)
}

/// A repository whose files overlap widely (the stress case of the stages
/// after the analysis: one large family, millions of links): `files` text
/// files, each an extract of `extract` bytes (on line ends) taken at a
/// random offset of one body of `body` bytes, with `edits` line edits.
/// Two extracts whose offsets are closer than their length share the lines
/// between; with the defaults of `fsim-gen --overlap` nearly every file is
/// in one cluster. Returns the number of bytes written.
pub struct Overlap {
    pub files: usize,
    pub body: usize,
    pub extract: usize,
    pub edits: usize,
    pub dirs: usize,
    pub seed: u64,
}

pub fn generate_overlap(root: &Path, spec: &Overlap) -> Result<u64> {
    let bulk = Bulk {
        docs: spec.files,
        avg_size: spec.extract,
        dirs: spec.dirs,
        seed: spec.seed,
    };
    let (mut rng, dirs) = bulk.start(root)?;
    let body = document(&mut rng, spec.body.max(spec.extract));
    // Line starts of the body: extracts begin and end on them.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(body.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| i < body.len())
        .collect();
    let mut total = 0u64;
    for i in 0..spec.files {
        let want = rng.range(spec.extract as u64 / 2, spec.extract as u64 * 3 / 2) as usize;
        // A line start in [0, body - want], so that every extract is whole.
        let at = rng.below(body.len().saturating_sub(want) as u64 + 1) as usize;
        let from = starts[starts.partition_point(|&s| s < at).min(starts.len() - 1)];
        let end = match body[(from + want).min(body.len())..].find('\n') {
            Some(k) => (from + want).min(body.len()) + k + 1,
            None => body.len(),
        };
        let text = edit_lines(&mut rng, &body[from..end], spec.edits);
        let p = root.join(format!("d{:03}/x{i:07}.txt", i % dirs));
        fs::write(&p, text.as_bytes()).ctx(|| format!("cannot write {}", p.display()))?;
        total += text.len() as u64;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_extracts_share_lines() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Overlap {
            files: 50,
            body: 40_000,
            extract: 8_000,
            edits: 2,
            dirs: 3,
            seed: 1,
        };
        let bytes = generate_overlap(dir.path(), &spec).unwrap();
        assert!(bytes > 50 * 3_000);
        let again = tempfile::tempdir().unwrap();
        assert_eq!(generate_overlap(again.path(), &spec).unwrap(), bytes);
        let a = fs::read_to_string(dir.path().join("d000/x0000000.txt")).unwrap();
        assert!(a.ends_with('\n') && a.len() > 1000);
    }

    #[test]
    fn deterministic() {
        let a = document(&mut Rng::new(7), 5000);
        let b = document(&mut Rng::new(7), 5000);
        assert_eq!(a, b);
        assert!(a.len() >= 5000 && a.len() < 5300);
        assert_ne!(a, document(&mut Rng::new(8), 5000));
    }

    #[test]
    fn generates_planted_files() {
        let dir = tempfile::tempdir().unwrap();
        let planted = generate(dir.path(), &CorpusSpec::default()).unwrap();
        assert!(planted
            .iter()
            .any(|p| matches!(p, Planted::Identical(v) if v.len() == 3)));
        for p in &planted {
            if let Planted::Identical(v) = p {
                let first = fs::read(dir.path().join(&v[0])).unwrap();
                for q in v {
                    assert_eq!(fs::read(dir.path().join(q)).unwrap(), first);
                }
            }
        }
        let m = manifest(&planted);
        assert!(m
            .lines()
            .any(|l| l.starts_with("contains\tguides/appendix.txt")));
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
