//! Deterministic sample repositories with planted relationships, for
//! `make demo` and the end-to-end tests: unrelated documents, near-duplicate
//! versions, a document contained in another, a group of successive
//! versions, identical copies, files sharing a long template preamble, and
//! a few odd files (empty, binary). The generator also writes a manifest of
//! what it planted, so a test can check the report against the truth.
//! Benchmark repositories too: bulk documents, versions, overlapping
//! extracts, slices of source that overlap in part ([`generate_slices`]),
//! and translation catalogs ([`generate_catalogs`]).
//!
//! Text is built from a fixed English vocabulary with a fixed PRNG
//! (SplitMix64), so the same seed gives the same bytes on every machine.

use fsim::error::{Context, Result};
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

/// The shape of a partial-overlap repository (`fsim-gen --slices`): `files`
/// source-like files, each a slice of one body of code-like text.
///
/// Why it exists: the adversarial input of fsim-verify's diff.
/// Each file is a slice `[start, start + len)` of one body (cut on line
/// boundaries), `len` drawn from a lognormal distribution (median
/// `median` bytes, σ = [`SLICE_SIGMA`], capped at `max`), `start`
/// uniform; one file in five ([`SLICE_NEAR_PERCENT`]) is instead a
/// near-copy of an earlier slice with 1-4 lines inserted or deleted. Two
/// slices whose ranges meet share the lines between, at different offsets
/// in each file, and nothing else: nearly every such pair shares only part
/// of its lines (less than 90 % of the longer file); about 40 % of them
/// overlap at both ends (say 30 % of the smaller file's lines), the others
/// are a slice inside a longer one (the lognormal spread of lengths).
/// Either way an O(N·D) diff has a large D (the lines of the two files not
/// shared) however alike the shared part is, unlike `--overlap` (extracts
/// of about one size with a few edits). The near-copies are the easy
/// pairs next to them.
///
/// Default body (`fsim-gen`): `files` × 1,250 bytes (N × 10 KB / 8). The
/// mean slice is about 13 KB (8 KB × e^(σ²/2)), so each line of the body
/// is in about ten files and a median file meets about seventeen others
/// (those starting within its length, or within theirs, of its start).
#[derive(Debug, Clone, Copy)]
pub struct Slices {
    /// Files written (`--slices`).
    pub files: usize,
    /// Bytes of the body the slices are cut from (`--slice-body`).
    pub body: usize,
    /// Median slice length in bytes.
    pub median: usize,
    /// Longest slice in bytes (and at most the body).
    pub max: usize,
    /// Folders `dNNN` the files are spread over (at least one).
    pub dirs: usize,
    pub seed: u64,
}

/// σ of the logarithm of the --slices lengths: source files' sizes are
/// about lognormal with σ near 1 (a few files 10-25 times the median).
pub const SLICE_SIGMA: f64 = 1.0;
/// Median length of a --slices file.
pub const SLICE_MEDIAN: usize = 8_000;
/// Longest --slices file.
pub const SLICE_MAX: usize = 200_000;
/// Percentage of --slices files that are near-copies of an earlier slice.
pub const SLICE_NEAR_PERCENT: u64 = 20;
/// Default --slices body per file: N × 10 KB / 8.
pub const SLICE_BODY_PER_FILE: usize = 1_250;

/// An identifier of 1-3 vocabulary words joined by `_`.
fn ident(rng: &mut Rng) -> String {
    let n = rng.range(1, 3);
    words(rng, n, CONTENT).join("_")
}

/// About `size` bytes of C-like source: functions of 4-30 statements
/// (assignments, calls, nested `if`/`for` blocks, returns), some with a
/// comment above, separated by blank lines. Numbers make most statements
/// unique; the braces and blank lines repeat, as in real code.
pub fn code(rng: &mut Rng, size: usize) -> String {
    let mut out = String::with_capacity(size + 2_000);
    while out.len() < size {
        if rng.below(3) == 0 {
            let n = rng.range(4, 10);
            out.push_str(&format!("/* {} */\n", words(rng, n, 0).join(" ")));
        }
        let (f, t, a, b) = (ident(rng), ident(rng), ident(rng), ident(rng));
        out.push_str(&format!("static int {f}(struct {t} *{a}, int {b})\n{{\n"));
        let mut depth = 1;
        for _ in 0..rng.range(4, 30) {
            // The line, and its indentation (a closing brace: the outer one).
            let mut at = depth;
            let line = match rng.below(10) {
                0 if depth < 4 => {
                    depth += 1;
                    let (x, y) = (ident(rng), ident(rng));
                    let op = ["<", ">", "==", "!=", "<="][rng.below(5) as usize];
                    format!("if ({x}->{y} {op} {}) {{", rng.range(0, 9_999))
                }
                1 if depth < 4 => {
                    depth += 1;
                    let i = words(rng, 1, CONTENT)[0];
                    let n = rng.range(2, 9_999);
                    format!("for ({i} = 0; {i} < {n}; {i}++) {{")
                }
                2 if depth > 1 => {
                    depth -= 1;
                    at = depth;
                    "}".to_string()
                }
                3 => {
                    let (x, y, z) = (ident(rng), ident(rng), ident(rng));
                    format!("{x} = {y}->{z};")
                }
                4 => format!("return {} + {};", ident(rng), rng.range(0, 99_999)),
                _ => {
                    let (x, g, y, z) = (ident(rng), ident(rng), ident(rng), ident(rng));
                    format!("{x} = {g}({y}, {z}, {});", rng.range(0, 99_999))
                }
            };
            out.push_str(&"    ".repeat(at));
            out.push_str(&line);
            out.push('\n');
        }
        while depth > 0 {
            depth -= 1;
            out.push_str(&"    ".repeat(depth));
            out.push_str("}\n");
        }
        out.push('\n');
    }
    out
}

/// `edits` line edits of code: a new statement inserted, or a line deleted.
fn edit_code_lines(rng: &mut Rng, text: &str, edits: usize) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    for _ in 0..edits {
        let at = rng.below(lines.len() as u64 + 1) as usize;
        if rng.below(2) == 0 && at < lines.len() && lines.len() > 1 {
            lines.remove(at);
        } else {
            let (x, g, y) = (ident(rng), ident(rng), ident(rng));
            let n = rng.range(0, 99_999);
            lines.insert(at, format!("    {x} = {g}({y}, {n});\n"));
        }
    }
    lines.concat()
}

/// A standard normal deviate (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - unit(rng.next_u64()); // (0, 1]
    let u2 = unit(rng.next_u64());
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// One file of a --slices repository: `body[from..end]`, or with `edits`
/// line edits a near-copy of file `of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slice {
    from: usize,
    end: usize,
    /// (file copied, line edits) for a near-copy.
    near: Option<(usize, usize)>,
}

/// The body and the slices of `spec`, before any file is written.
fn plan_slices(spec: &Slices) -> (String, Vec<Slice>) {
    let mut rng = Rng::new(spec.seed);
    let body = code(&mut rng, spec.body.max(1));
    // Line starts of the body, and its end: slices begin and end on them.
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(body.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let max = spec.max.min(body.len()).max(1);
    let mut plain: Vec<usize> = Vec::new();
    let mut out: Vec<Slice> = Vec::with_capacity(spec.files);
    for i in 0..spec.files {
        if !plain.is_empty() && rng.below(100) < SLICE_NEAR_PERCENT {
            let of = plain[rng.below(plain.len() as u64) as usize];
            let edits = rng.range(1, 4) as usize;
            out.push(Slice {
                near: Some((of, edits)),
                ..out[of]
            });
            continue;
        }
        let len = (spec.median as f64 * (SLICE_SIGMA * normal(&mut rng)).exp()) as usize;
        let len = len.clamp(1, max);
        let at = rng.below((body.len() - len) as u64 + 1) as usize;
        // The line start at or before `at`, the line end at or after at + len.
        let from = bounds[bounds.partition_point(|&s| s <= at) - 1];
        // The body ends with a line end, so both exist and from < end.
        let end = bounds[bounds.partition_point(|&s| s < from + len)];
        out.push(Slice {
            from,
            end,
            near: None,
        });
        plain.push(i);
    }
    (body, out)
}

/// Write the --slices repository of `spec` (see [`Slices`]):
/// `dNNN/sNNNNNNN.c`. Returns the number of bytes written.
pub fn generate_slices(root: &Path, spec: &Slices) -> Result<u64> {
    let (body, plan) = plan_slices(spec);
    let dirs = spec.dirs.max(1);
    for d in 0..dirs {
        let p = root.join(format!("d{d:03}"));
        fs::create_dir_all(&p).ctx(|| format!("cannot create {}", p.display()))?;
    }
    // Edits drawn from their own stream, so the plan does not depend on them.
    let mut rng = Rng::new(mix(&[spec.seed, 0x0051_1ce5]));
    let mut total = 0u64;
    for (i, s) in plan.iter().enumerate() {
        let text = &body[s.from..s.end];
        let edited;
        let text = match s.near {
            Some((_, edits)) => {
                edited = edit_code_lines(&mut rng, text, edits);
                &edited
            }
            None => text,
        };
        let p = root.join(format!("d{:03}/s{i:07}.c", i % dirs));
        fs::write(&p, text.as_bytes()).ctx(|| format!("cannot write {}", p.display()))?;
        total += text.len() as u64;
    }
    Ok(total)
}

/// The shape of a translation-catalog repository (`fsim-gen --catalogs`):
/// `releases` release folders, each with the GNU gettext catalogs of
/// `locales` locales, `release-V/locale/L/LC_MESSAGES/django.po`.
///
/// Why it exists: the hard case of fsim-verify is a pair of
/// catalogs of two locales of one release. All the catalogs of a release
/// are filled in from one template, so they share the `#:` references,
/// the flags, the `msgid`s and the blank lines (50-70 % of their bytes,
/// 65-85 % of their lines: the shared lines are the shorter ones; Django's
/// own catalogs, which have no `#:` lines, share ~50 % of their bytes and
/// ~70 % of their lines) while every translated `msgstr` differs: many
/// short lines in common, a differing line every four or five lines all
/// along the files, the shape where an O(N·D) diff of lines does the most
/// work (D is large although the files are alike). The sample repository and `--versions` have no
/// such pairs, and real catalogs (Django's ~100 locales per app) cannot be
/// shipped with the tests; this generator writes them deterministically,
/// at any scale. Catalogs of one locale across releases are the easy,
/// very similar pairs (references renumbered, a few entries added,
/// removed or retranslated).
#[derive(Debug, Clone, Copy)]
pub struct Catalogs {
    /// Locales per release (`--catalogs`).
    pub locales: usize,
    /// Release folders (`--catalog-releases`).
    pub releases: usize,
    /// Target bytes per catalog: about the average over the locales; each
    /// locale is within about ±25 % of it (its translations are longer or
    /// shorter, more or fewer of them are missing).
    pub size: usize,
    pub seed: u64,
}

/// A value fixed by `parts` alone (SplitMix64 steps folded over them): the
/// per-(locale, entry, release) choices must not depend on the order of
/// generation, so that a locale's catalog is the same whatever the others.
fn mix(parts: &[u64]) -> u64 {
    let mut x = 0x5eed_ca7a_1065_u64;
    for &p in parts {
        x = Rng::new(x ^ p.wrapping_mul(0xd6e8_feb8_6659_fd93)).next_u64();
    }
    x
}

/// Uniform in [0, 1).
fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// FNV-1a of a string: a key for `mix`.
fn str_key(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The writing system of a locale: which letters its made-up words use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Cyrillic,
    Greek,
    Arabic,
    Hebrew,
    Devanagari,
    Han,
    Kana,
    Hangul,
    Thai,
    Georgian,
    Armenian,
}

impl Script {
    /// Consonants and vowels of the alphabetic scripts.
    fn letters(self) -> (&'static str, &'static str) {
        match self {
            Script::Cyrillic => ("бвгджзклмнпрстфхцчшщ", "аеиоуыэюя"),
            Script::Greek => ("βγδζθκλμνξπρστφχψ", "αεηιουωάέί"),
            Script::Arabic => ("بتثجحخدذرزسشصضطعغفقكلمنه", "اوي"),
            Script::Hebrew => ("בגדהזחטכלמנסעפצקרשת", "אוי"),
            Script::Devanagari => ("कखगघचछजझटडतथदधनपफबभमयरलवशसह", "ािीुूेैोौं"),
            Script::Thai => ("กขคงจฉชซญดตถทธนบปผพฟมยรลวสหอ", "ะาิีึืุูเแโ"),
            Script::Georgian => ("ბგდვზთკლმნპჟრსტფქღყშჩცძწჭხჯჰ", "აეიოუ"),
            Script::Armenian => ("բգդզթժլխծկհձղճմյնշչպջռսվտրցփքֆ", "աեէըիոու"),
            _ => ("bcdfghjklmnprstvwz", "aeiou"),
        }
    }

    /// Words separated by spaces (not in Chinese, Japanese or Thai).
    fn spaced(self) -> bool {
        !matches!(self, Script::Han | Script::Kana | Script::Thai)
    }

    /// Has capital letters.
    fn cased(self) -> bool {
        matches!(
            self,
            Script::Latin | Script::Cyrillic | Script::Greek | Script::Armenian
        )
    }
}

/// Plural-Forms headers (nplurals, the header's value), as in real catalogs.
type Plural = (usize, &'static str);
const PL_2: Plural = (2, "nplurals=2; plural=(n != 1);");
const PL_2F: Plural = (2, "nplurals=2; plural=(n > 1);");
const PL_1: Plural = (1, "nplurals=1; plural=0;");
const PL_RU: Plural = (
    4,
    "nplurals=4; plural=(n % 10 == 1 && n % 100 != 11 ? 0 : n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || n % 100 > 14) ? 1 : n % 10 == 0 || (n % 10 >= 5 && n % 10 <= 9) || (n % 100 >= 11 && n % 100 <= 14)? 2 : 3);",
);
const PL_PL: Plural = (
    4,
    "nplurals=4; plural=(n==1 ? 0 : (n%10>=2 && n%10<=4) && (n%100<12 || n%100>14) ? 1 : n!=1 && (n%10>=0 && n%10<=1) || (n%10>=5 && n%10<=9) || (n%100>=12 && n%100<=14) ? 2 : 3);",
);
const PL_CS: Plural = (
    4,
    "nplurals=4; plural=(n == 1 && n % 1 == 0) ? 0 : (n >= 2 && n <= 4 && n % 1 == 0) ? 1: (n % 1 != 0 ) ? 2 : 3;",
);
const PL_AR: Plural = (
    6,
    "nplurals=6; plural=n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 && n%100<=99 ? 4 : 5;",
);
const PL_HR: Plural = (
    3,
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
);
const PL_LT: Plural = (
    3,
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && (n%100<10 || n%100>=20) ? 1 : 2);",
);
const PL_LV: Plural = (
    3,
    "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n != 0 ? 1 : 2);",
);
const PL_RO: Plural = (
    3,
    "nplurals=3; plural=(n==1?0:(((n%100>19)||((n%100==0)&&(n!=0)))?2:1));",
);
const PL_SL: Plural = (
    4,
    "nplurals=4; plural=(n%100==1 ? 0 : n%100==2 ? 1 : n%100==3 || n%100==4 ? 2 : 3);",
);
const PL_HE: Plural = (
    4,
    "nplurals=4; plural=(n == 1 && n % 1 == 0) ? 0 : (n == 2 && n % 1 == 0) ? 1: (n % 10 == 0 && n % 1 == 0 && n > 10) ? 2 : 3;",
);
const PL_GA: Plural = (
    5,
    "nplurals=5; plural=(n==1 ? 0 : n==2 ? 1 : n<7 ? 2 : n<11 ? 3 : 4);",
);

/// Real locale codes, the most translated first: (code, script, plural
/// forms, accented letters of its Latin alphabet).
const LOCALES: &[(&str, Script, Plural, &str)] = &[
    ("de", Script::Latin, PL_2, "äöüß"),
    ("fr", Script::Latin, PL_2F, "éèàçêô"),
    ("es", Script::Latin, PL_2, "ñáéíóú"),
    ("it", Script::Latin, PL_2, "àèéìòù"),
    ("ja", Script::Kana, PL_1, ""),
    ("pt_BR", Script::Latin, PL_2F, "ãçéâôõá"),
    ("ru", Script::Cyrillic, PL_RU, ""),
    ("zh_Hans", Script::Han, PL_1, ""),
    ("ko", Script::Hangul, PL_1, ""),
    ("nl", Script::Latin, PL_2, "ëï"),
    ("pl", Script::Latin, PL_PL, "ąęłśżźćń"),
    ("sv", Script::Latin, PL_2, "åäö"),
    ("tr", Script::Latin, PL_2, "çğışöü"),
    ("cs", Script::Latin, PL_CS, "čřšžěýáíé"),
    ("uk", Script::Cyrillic, PL_RU, ""),
    ("zh_Hant", Script::Han, PL_1, ""),
    ("pt", Script::Latin, PL_2, "ãçéâôõ"),
    ("da", Script::Latin, PL_2, "æøå"),
    ("fi", Script::Latin, PL_2, "äö"),
    ("nb", Script::Latin, PL_2, "æøå"),
    ("hu", Script::Latin, PL_2, "áéíóöőúüű"),
    ("el", Script::Greek, PL_2, ""),
    ("ro", Script::Latin, PL_RO, "ăâîșț"),
    ("sk", Script::Latin, PL_CS, "áäčďéíľňóôšťúýž"),
    ("ar", Script::Arabic, PL_AR, ""),
    ("he", Script::Hebrew, PL_HE, ""),
    ("id", Script::Latin, PL_1, ""),
    ("vi", Script::Latin, PL_1, "ăâđêôơưạảấầ"),
    ("th", Script::Thai, PL_1, ""),
    ("hi", Script::Devanagari, PL_2, ""),
    ("fa", Script::Arabic, PL_2F, ""),
    ("bg", Script::Cyrillic, PL_2, ""),
    ("ca", Script::Latin, PL_2, "àçèéíïòóúü"),
    ("hr", Script::Latin, PL_HR, "čćđšž"),
    ("sr", Script::Cyrillic, PL_HR, ""),
    ("sl", Script::Latin, PL_SL, "čšž"),
    ("lt", Script::Latin, PL_LT, "ąčęėįšųūž"),
    ("lv", Script::Latin, PL_LV, "āčēģīķļņšūž"),
    ("et", Script::Latin, PL_2, "äõöüšž"),
    ("es_AR", Script::Latin, PL_2, "ñáéíóú"),
    ("es_MX", Script::Latin, PL_2, "ñáéíóú"),
    ("es_CO", Script::Latin, PL_2, "ñáéíóú"),
    ("es_VE", Script::Latin, PL_2, "ñáéíóú"),
    ("en_GB", Script::Latin, PL_2, ""),
    ("en_AU", Script::Latin, PL_2, ""),
    ("eu", Script::Latin, PL_2, ""),
    ("gl", Script::Latin, PL_2, "áéíñóú"),
    ("is", Script::Latin, PL_2, "áðéíóúýþæö"),
    ("ga", Script::Latin, PL_GA, "áéíóú"),
    ("cy", Script::Latin, PL_GA, "âêîôŵŷ"),
    ("mk", Script::Cyrillic, PL_2, ""),
    ("be", Script::Cyrillic, PL_RU, ""),
    ("kk", Script::Cyrillic, PL_2, ""),
    ("ky", Script::Cyrillic, PL_1, ""),
    ("mn", Script::Cyrillic, PL_2, ""),
    ("az", Script::Latin, PL_2, "çəğıöşü"),
    ("ka", Script::Georgian, PL_2, ""),
    ("hy", Script::Armenian, PL_2, ""),
    ("ms", Script::Latin, PL_1, ""),
    ("mr", Script::Devanagari, PL_2, ""),
    ("ne", Script::Devanagari, PL_2, ""),
    ("ur", Script::Arabic, PL_2, ""),
    ("sw", Script::Latin, PL_2, ""),
    ("af", Script::Latin, PL_2, "êëô"),
    ("sq", Script::Latin, PL_2, "çë"),
    ("bs", Script::Latin, PL_HR, "čćđšž"),
    ("sr_Latn", Script::Latin, PL_HR, "čćđšž"),
    ("eo", Script::Latin, PL_2, "ĉĝĥĵŝŭ"),
    ("fy", Script::Latin, PL_2, ""),
    ("lb", Script::Latin, PL_2, "äéë"),
    ("br", Script::Latin, PL_2, ""),
    ("ast", Script::Latin, PL_2, "ñáéíóú"),
    ("ia", Script::Latin, PL_2, ""),
    ("nn", Script::Latin, PL_2, "æøå"),
    ("tt", Script::Cyrillic, PL_1, ""),
    ("udm", Script::Cyrillic, PL_1, ""),
    ("tg", Script::Cyrillic, PL_2, ""),
    ("tk", Script::Latin, PL_2, "çäňöşüýž"),
    ("dsb", Script::Latin, PL_SL, "čěłńřšžź"),
    ("hsb", Script::Latin, PL_SL, "čěłńřšžź"),
    ("kab", Script::Latin, PL_2, "čḍǧḥɣṛṣṭẓ"),
    ("os", Script::Cyrillic, PL_2, ""),
    ("ug", Script::Arabic, PL_2, ""),
    ("ckb", Script::Arabic, PL_2, ""),
    ("ar_DZ", Script::Arabic, PL_AR, ""),
];

/// Regions of the codes made up past the table (`de_AT`, `fr_CA`, ...).
const REGIONS: &[&str] = &[
    "AT", "CA", "CH", "BE", "MX", "AR", "AU", "GB", "IN", "IE", "NZ", "ZA", "US", "LU", "CL", "CO",
    "PE", "UY", "VE", "EC", "BO", "PY", "CR", "DO", "GT", "HN", "NI", "PA", "PR", "SV", "PT", "ES",
    "DE",
];

/// `n` distinct locale codes and, for each, its row in [`LOCALES`]: the
/// table's codes first, then `language_REGION` codes of the table's
/// languages (then with `@vK` modifiers): the same `n` first codes
/// whatever the total.
fn locale_codes(n: usize) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = LOCALES
        .iter()
        .enumerate()
        .take(n)
        .map(|(i, l)| (l.0.to_string(), i))
        .collect();
    let mut seen: std::collections::HashSet<String> =
        LOCALES.iter().map(|l| l.0.to_string()).collect();
    let bases: Vec<usize> = (0..LOCALES.len())
        .filter(|&i| !LOCALES[i].0.contains('_'))
        .collect();
    let mut k = 0usize;
    while out.len() < n {
        let b = bases[k % bases.len()];
        let region = REGIONS[(k / bases.len()) % REGIONS.len()];
        let round = k / (bases.len() * REGIONS.len());
        let mut code = format!("{}_{region}", LOCALES[b].0);
        if round > 0 {
            code.push_str(&format!("@v{round}"));
        }
        if seen.insert(code.clone()) {
            out.push((code, b));
        }
        k += 1;
    }
    out
}

/// A made-up person: (name, e-mail).
fn person(rng: &mut Rng) -> (String, String) {
    let mut part = |lo, hi| {
        let mut s = String::new();
        for _ in 0..rng.range(lo, hi) {
            let (c, v) = Script::Latin.letters();
            s.push(c.as_bytes()[rng.below(c.len() as u64) as usize] as char);
            s.push(v.as_bytes()[rng.below(v.len() as u64) as usize] as char);
        }
        let mut n = s[..1].to_uppercase();
        n.push_str(&s[1..]);
        n
    };
    let (first, last) = (part(2, 3), part(2, 4));
    let mail = format!(
        "{}.{}@example.org",
        first.to_lowercase(),
        last.to_lowercase()
    );
    (format!("{first} {last}"), mail)
}

/// One locale of the repository: its alphabet and its habits.
struct Locale {
    code: String,
    script: Script,
    plural: Plural,
    consonants: Vec<char>,
    vowels: Vec<char>,
    accents: Vec<char>,
    /// Key of everything this locale draws (`mix`).
    key: u64,
    /// Bytes of translation per byte of English.
    verbosity: f64,
    /// Fraction of the entries untranslated at the first release.
    untranslated: f64,
    /// Translators: name, e-mail, release they joined at.
    translators: Vec<(String, String, usize)>,
}

impl Locale {
    fn new(code: &str, row: usize, spec: &Catalogs) -> Locale {
        let (_, script, plural, accents) = LOCALES[row];
        let key = mix(&[spec.seed, str_key(code)]);
        let mut rng = Rng::new(key);
        let (c, v) = script.letters();
        let verbosity = 0.9 + 0.6 * unit(rng.next_u64());
        let untranslated = 0.10 + 0.15 * unit(rng.next_u64());
        let mut translators = Vec::new();
        for r in 0..spec.releases.max(1) {
            let joining = if r == 0 {
                rng.range(1, 4)
            } else {
                rng.below(3) / 2
            };
            for _ in 0..joining {
                let (name, mail) = person(&mut rng);
                translators.push((name, mail, r));
            }
        }
        Locale {
            code: code.to_string(),
            script,
            plural,
            consonants: c.chars().collect(),
            vowels: v.chars().collect(),
            accents: accents.chars().collect(),
            key,
            verbosity,
            untranslated,
            translators,
        }
    }

    fn pick(rng: &mut Rng, set: &[char]) -> char {
        set[rng.below(set.len() as u64) as usize]
    }

    /// One syllable of this locale's made-up language.
    fn syllable(&self, rng: &mut Rng, out: &mut String) {
        let code = |lo: u32, n: u64, rng: &mut Rng| {
            char::from_u32(lo + rng.below(n) as u32).unwrap_or('?')
        };
        match self.script {
            Script::Han => out.push(code(0x4e00, 0x5000, rng)),
            Script::Hangul => out.push(code(0xac00, 11_172, rng)),
            Script::Kana if rng.below(3) == 0 => out.push(code(0x4e00, 0x5000, rng)),
            Script::Kana => out.push(code(0x3041, 0x56, rng)),
            _ => {
                out.push(Self::pick(rng, &self.consonants));
                if !self.accents.is_empty() && rng.below(5) == 0 {
                    out.push(Self::pick(rng, &self.accents));
                } else {
                    out.push(Self::pick(rng, &self.vowels));
                }
            }
        }
    }

    /// This locale's word for the English `w` (`variant` picks one of its
    /// synonyms): the same word gets the same translation, about
    /// `verbosity` times its length in bytes.
    fn word(&self, w: &str, variant: u64, out: &mut String) {
        let mut rng = Rng::new(mix(&[self.key, str_key(&w.to_lowercase()), variant]));
        let target = (w.len() as f64 * self.verbosity * (0.6 + 0.8 * unit(rng.next_u64())))
            .round()
            .max(1.0) as usize;
        let mut t = String::new();
        while t.len() < target {
            self.syllable(&mut rng, &mut t);
        }
        if self.script.cased() && w.starts_with(|c: char| c.is_uppercase()) {
            let mut cs = t.chars();
            if let Some(f) = cs.next() {
                out.extend(f.to_uppercase());
                out.push_str(cs.as_str());
                return;
            }
        }
        out.push_str(&t);
    }

    /// `text` in this locale's made-up language: words replaced, placeholders
    /// (`%(name)s`), quotes, punctuation and newlines kept. `salt` (the entry
    /// and its revision) varies the choice of synonyms.
    fn translate(&self, text: &str, salt: u64) -> String {
        let mut out = String::with_capacity(text.len() * 2);
        let mut prev_kept = true;
        for (i, tok) in text.split(' ').enumerate() {
            let kept = tok.contains('%') || tok.contains('{');
            // Chinese, Japanese and Thai: a space now and then (phrases,
            // placeholders), not between words.
            let phrase = mix(&[salt, i as u64, 1]).is_multiple_of(4);
            if i > 0 && (self.script.spaced() || kept || prev_kept || phrase) {
                out.push(' ');
            }
            prev_kept = kept;
            if kept {
                out.push_str(tok);
                continue;
            }
            let core = tok.trim_start_matches('“');
            out.push_str(&tok[..tok.len() - core.len()]);
            let word = core.trim_end_matches(['.', ',', ':', '?', '!', '\n', '”']);
            if !word.is_empty() {
                self.word(
                    word,
                    mix(&[salt, i as u64]).is_multiple_of(4) as u64,
                    &mut out,
                );
            }
            out.push_str(&core[word.len()..]);
        }
        out
    }
}

/// A source file of the project the catalogs translate.
struct Source {
    path: String,
    lines: u32,
}

/// An entry of the template: what every locale's catalog of the release has.
struct Entry {
    /// Stable across releases: the key of its translations.
    key: u64,
    /// Release it appeared in.
    born: usize,
    /// `#:` references: (source, line), sorted.
    refs: Vec<(usize, u32)>,
    python_format: bool,
    ctxt: Option<String>,
    msgid: String,
    plural: Option<String>,
}

/// `n` words of the vocabulary (`first`: at least this index), space-separated.
fn words(rng: &mut Rng, n: u64, first: usize) -> Vec<&'static str> {
    (0..n)
        .map(|_| WORDS[first + rng.below((WORDS.len() - first) as u64) as usize])
        .collect()
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The words of the vocabulary that are nouns or verbs (not "the", "of"...).
const CONTENT: usize = 20;

impl Entry {
    fn new(rng: &mut Rng, key: u64, born: usize, sources: &[Source]) -> Entry {
        let nrefs = match rng.below(100) {
            0..=69 => 1,
            70..=91 => 2,
            _ => 3,
        };
        let mut refs: Vec<(usize, u32)> = (0..nrefs)
            .map(|_| {
                let s = rng.below(sources.len() as u64) as usize;
                (s, rng.range(1, sources[s].lines as u64) as u32)
            })
            .collect();
        refs.sort_unstable();
        refs.dedup();
        let ctxt = (rng.below(100) < 7).then(|| {
            let n = rng.range(1, 2);
            words(rng, n, CONTENT).join(" ")
        });
        let placeholder = |rng: &mut Rng| {
            let w = WORDS[CONTENT + rng.below((WORDS.len() - CONTENT) as u64) as usize];
            match rng.below(4) {
                0 => format!("“%({w})s”"),
                1 => "%(count)d".to_string(),
                _ => format!("%({w})s"),
            }
        };
        let roll = rng.below(100);
        let (msgid, plural, python_format) = if roll < 10 {
            // "%(count)d servers were restarted."
            let n = rng.below(3);
            let before = words(rng, n, 0).join(" ");
            let noun = WORDS[CONTENT + rng.below((WORDS.len() - CONTENT) as u64) as usize];
            let n = rng.range(1, 8);
            let after = words(rng, n, 0).join(" ");
            let lead = if before.is_empty() {
                String::new()
            } else {
                format!("{} ", capitalized(&before))
            };
            (
                format!("{lead}%(count)d {noun} {after}."),
                Some(format!("{lead}%(count)d {noun}s {after}.")),
                true,
            )
        } else {
            let n = rng.range(3, 20);
            let mut ws: Vec<String> = words(rng, n, 0).into_iter().map(String::from).collect();
            let python_format = roll < 30;
            if python_format {
                for _ in 0..rng.range(1, 2) {
                    let at = rng.below(ws.len() as u64 + 1) as usize;
                    let p = placeholder(rng);
                    ws.insert(at, p);
                }
            }
            if (30..35).contains(&roll) && ws.len() > 6 {
                // Help text of two paragraphs.
                let at = rng.range(3, ws.len() as u64 - 2) as usize;
                ws[at - 1].push_str(".\n");
                ws[at] = capitalized(&ws[at]);
            }
            let mut s = capitalized(&ws.join(" "));
            match (n, rng.below(4)) {
                (0..=5, _) => {}
                (_, 0) => s.push('?'),
                (_, 1) => s.push(':'),
                _ => s.push('.'),
            }
            (s, None, python_format)
        };
        Entry {
            key,
            born,
            refs,
            python_format,
            ctxt,
            msgid,
            plural,
        }
    }
}

/// The template of a release (the `.pot` every catalog is filled in from)
/// and the project's source files its references point into.
struct Template {
    sources: Vec<Source>,
    entries: Vec<Entry>,
    next_key: u64,
}

impl Template {
    /// Bytes an entry adds to an average catalog (its own lines, and a
    /// translation of the length of the msgid).
    fn weight(e: &Entry, sources: &[Source]) -> usize {
        let refs: usize = e.refs.iter().map(|&(s, _)| sources[s].path.len() + 6).sum();
        let text = e.msgid.len() + e.plural.as_ref().map_or(0, |p| p.len() + 15);
        let flags = if e.python_format { 17 } else { 0 };
        let ctxt = e.ctxt.as_ref().map_or(0, |c| c.len() + 11);
        1 + 3 + refs + flags + ctxt + 2 * text + 29
    }

    fn new(rng: &mut Rng, size: usize) -> Template {
        let estimate = (size / 200).max(8);
        let kinds = [
            "views.py",
            "forms.py",
            "models.py",
            "admin.py",
            "utils.py",
            "apps.py",
        ];
        let mut sources = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while sources.len() < (estimate / 6).max(4) {
            let app = words(rng, 1, CONTENT)[0];
            let path = if rng.below(3) == 0 {
                let w = words(rng, 2, CONTENT);
                format!("{app}/templates/{app}/{}_{}.html", w[0], w[1])
            } else {
                format!("{app}/{}", kinds[rng.below(kinds.len() as u64) as usize])
            };
            if seen.insert(path.clone()) {
                let lines = rng.range(80, 1500) as u32;
                sources.push(Source { path, lines });
            }
        }
        let mut t = Template {
            sources,
            entries: Vec::new(),
            next_key: 0,
        };
        // The header is ~900 bytes; entries fill the rest.
        let mut bytes = 900;
        while bytes < size {
            let e = Entry::new(rng, t.next_key, 0, &t.sources);
            t.next_key += 1;
            bytes += Self::weight(&e, &t.sources);
            t.entries.push(e);
        }
        t.sort();
        t
    }

    /// Entries in the order of their first reference, as xgettext writes them.
    fn sort(&mut self) {
        self.entries.sort_by_key(|e| (e.refs[0], e.key));
    }

    /// The template of release `r` from that of `r - 1`: source files
    /// edited (references below an edit move by its lines), about 2 % of
    /// the entries removed and 2 % added.
    fn next_release(&mut self, rng: &mut Rng, r: usize) {
        let mut edits: Vec<Vec<(u32, i64)>> = Vec::with_capacity(self.sources.len());
        for s in self.sources.iter_mut() {
            let mut e = Vec::new();
            if rng.below(10) < 6 {
                for _ in 0..rng.range(1, 3) {
                    let at = rng.range(1, s.lines as u64) as u32;
                    let n = rng.range(1, 12) as i64;
                    let delta = if rng.below(3) == 0 { -n } else { n };
                    s.lines = (s.lines as i64 + delta).max(40) as u32;
                    e.push((at, delta));
                }
            }
            edits.push(e);
        }
        for e in self.entries.iter_mut() {
            for (s, line) in e.refs.iter_mut() {
                for &(at, delta) in &edits[*s] {
                    if *line > at {
                        *line = (*line as i64 + delta).max(at as i64 + 1) as u32;
                    }
                }
            }
        }
        self.entries.retain(|_| rng.below(100) >= 2);
        let added = (self.entries.len() * rng.range(15, 25) as usize / 1000).max(1);
        for _ in 0..added {
            let e = Entry::new(rng, self.next_key, r, &self.sources);
            self.next_key += 1;
            self.entries.push(e);
        }
        self.sort();
    }
}

/// A date `days` after 2019-01-01: (year, month, day).
fn date(mut days: u64) -> (u64, u64, u64) {
    let leap = |y: u64| y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
    let mut y = 2019;
    while days >= 365 + leap(y) as u64 {
        days -= 365 + leap(y) as u64;
        y += 1;
    }
    let months = [
        31,
        28 + leap(y) as u64,
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut m = 0;
    while days >= months[m] {
        days -= months[m];
        m += 1;
    }
    (y, m as u64 + 1, days + 1)
}

/// Columns of a character on a terminal: 2 for CJK, 1 for the others.
fn columns(c: char) -> usize {
    let wide = ('\u{1100}'..='\u{115f}').contains(&c)
        || ('\u{2e80}'..='\u{a4cf}').contains(&c)
        || ('\u{ac00}'..='\u{d7a3}').contains(&c)
        || ('\u{f900}'..='\u{faff}').contains(&c)
        || ('\u{ff00}'..='\u{ff60}').contains(&c);
    1 + wide as usize
}

/// `keyword "text"` as xgettext writes it: on one line if it fits in 79
/// columns and has no inner newline, else `keyword ""` and the text cut
/// after each `\n` and at spaces (or CJK characters) into quoted lines of
/// at most 79 columns.
fn po_string(out: &mut String, keyword: &str, text: &str) {
    let esc = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    let inner_newline = text.trim_end_matches('\n').contains('\n');
    if !inner_newline && keyword.len() + esc.chars().map(columns).sum::<usize>() + 3 <= 79 {
        out.push_str(&format!("{keyword} \"{esc}\"\n"));
        return;
    }
    out.push_str(keyword);
    out.push_str(" \"\"\n");
    for segment in esc.split_inclusive("\\n") {
        let (mut line, mut width) = (String::new(), 0);
        // Breaks after spaces and after wide characters (CJK).
        let tokens = segment.split_inclusive(|c: char| c == ' ' || columns(c) == 2);
        for tok in tokens {
            let n: usize = tok.chars().map(columns).sum();
            if width > 0 && width + n > 77 {
                out.push_str(&format!("\"{line}\"\n"));
                line.clear();
                width = 0;
            }
            line.push_str(tok);
            width += n;
        }
        if !line.is_empty() {
            out.push_str(&format!("\"{line}\"\n"));
        }
    }
}

/// Locale `loc`'s catalog of release `r` (`version`) of `project`.
fn catalog(t: &Template, loc: &Locale, r: usize, version: &str, project: &str) -> String {
    let mut out = String::with_capacity(t.entries.len() * 300);
    let h = |parts: &[u64]| mix(&[&[loc.key, r as u64][..], parts].concat());
    let (y, m, d) = date(r as u64 * 137 + 40);
    let pot = format!(
        "{y}-{m:02}-{d:02} {:02}:{:02}+0000",
        9 + r % 9,
        (r * 17) % 60
    );
    let (y2, m2, d2) = date(r as u64 * 137 + 40 + 1 + h(&[1]) % 90);
    let rev = format!(
        "{y2}-{m2:02}-{d2:02} {:02}:{:02}+0000",
        h(&[2]) % 24,
        h(&[3]) % 60
    );
    out.push_str(&format!(
        "# {project} translation ({code}).\n\
         # Copyright (C) 2015-{y} {project} contributors\n\
         # This file is distributed under the same license as the {project} package.\n\
         #\n# Translators:\n",
        code = loc.code
    ));
    let active: Vec<_> = loc.translators.iter().filter(|t| t.2 <= r).collect();
    for (i, (name, mail, joined)) in active.iter().enumerate() {
        let since = 2015 + (mix(&[loc.key, i as u64]) % 4) + *joined as u64;
        out.push_str(&format!("# {name} <{mail}>, {since}-{y}\n"));
    }
    let (last, last_mail, _) = active[active.len() - 1 - (h(&[4]) % active.len() as u64) as usize];
    out.push_str("#\nmsgid \"\"\nmsgstr \"\"\n");
    for field in [
        format!("Project-Id-Version: {project} {version}"),
        "Report-Msgid-Bugs-To: ".to_string(),
        format!("POT-Creation-Date: {pot}"),
        format!("PO-Revision-Date: {rev}"),
        format!("Last-Translator: {last} <{last_mail}>"),
        format!(
            "Language-Team: {c} <i18n-{c}@lists.example.org>",
            c = loc.code
        ),
        format!("Language: {}", loc.code),
        "MIME-Version: 1.0".to_string(),
        "Content-Type: text/plain; charset=UTF-8".to_string(),
        "Content-Transfer-Encoding: 8bit".to_string(),
        format!("Plural-Forms: {}", loc.plural.1),
    ] {
        out.push_str(&format!("\"{field}\\n\"\n"));
    }
    // Translation progress: fewer entries missing at each release, more of
    // the new ones.
    let missing = loc.untranslated * 0.85f64.powi(r as i32);
    for e in &t.entries {
        out.push('\n');
        let mut line = String::from("#:");
        for &(s, n) in &e.refs {
            let r = format!(" {}:{n}", t.sources[s].path);
            if line.len() > 2 && line.len() + r.len() > 79 {
                out.push_str(&line);
                out.push('\n');
                line.truncate(2);
            }
            line.push_str(&r);
        }
        out.push_str(&line);
        out.push('\n');
        if e.python_format {
            out.push_str("#, python-format\n");
        }
        if let Some(c) = &e.ctxt {
            po_string(&mut out, "msgctxt", c);
        }
        po_string(&mut out, "msgid", &e.msgid);
        let fresh = if e.born == r && r > 0 { 0.3 } else { 0.0 };
        let translated = unit(mix(&[loc.key, e.key, 0x77])) >= missing + fresh;
        // Retranslated now and then (2 % per release).
        let revision = (e.born + 1..=r)
            .filter(|&q| unit(mix(&[loc.key, e.key, q as u64, 0xc4])) < 0.02)
            .count() as u64;
        let salt = mix(&[e.key, revision]);
        let text = |s: &str, form: u64| {
            if translated {
                loc.translate(s, mix(&[salt, form]))
            } else {
                String::new()
            }
        };
        match &e.plural {
            None => po_string(&mut out, "msgstr", &text(&e.msgid, 0)),
            Some(p) => {
                po_string(&mut out, "msgid_plural", p);
                for i in 0..loc.plural.0 {
                    let s = if i == 0 { &e.msgid } else { p };
                    po_string(&mut out, &format!("msgstr[{i}]"), &text(s, i as u64));
                }
            }
        }
    }
    out
}

/// Write the translation-catalog repository of `spec` under `root` (see
/// [`Catalogs`]): `release-V/locale/L/LC_MESSAGES/django.po` for each
/// release V (1.0, 1.1, ...) and locale L (de, fr, es, ..., zh_Hans, ...).
/// Returns the number of bytes written.
pub fn generate_catalogs(root: &Path, spec: &Catalogs) -> Result<u64> {
    let locales: Vec<Locale> = locale_codes(spec.locales)
        .iter()
        .map(|(code, row)| Locale::new(code, *row, spec))
        .collect();
    let mut rng = Rng::new(spec.seed);
    let name = words(&mut rng, 2, CONTENT);
    let project = format!("{}-{}", name[0], name[1]);
    let mut t = Template::new(&mut rng, spec.size);
    let mut total = 0u64;
    for r in 0..spec.releases {
        if r > 0 {
            t.next_release(&mut rng, r);
        }
        let version = format!("{}.{}", 1 + r / 10, r % 10);
        for loc in &locales {
            let text = catalog(&t, loc, r, &version, &project);
            let dir = root.join(format!("release-{version}/locale/{}/LC_MESSAGES", loc.code));
            fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
            let p = dir.join("django.po");
            fs::write(&p, text.as_bytes()).ctx(|| format!("cannot write {}", p.display()))?;
            total += text.len() as u64;
        }
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

    /// The spec of the slices tests: 400 files of one body, 3 folders.
    fn slices_spec() -> Slices {
        Slices {
            files: 400,
            body: 400 * SLICE_BODY_PER_FILE,
            median: SLICE_MEDIAN,
            max: SLICE_MAX,
            dirs: 3,
            seed: 5,
        }
    }

    /// The 400 texts of [`slices_spec`] generated in a temporary folder.
    fn slices_texts(spec: &Slices) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        generate_slices(dir.path(), spec).unwrap();
        (0..spec.files)
            .map(|i| {
                fs::read_to_string(dir.path().join(format!("d{:03}/s{i:07}.c", i % 3))).unwrap()
            })
            .collect()
    }

    #[test]
    fn slices_are_deterministic_with_lognormal_sizes() {
        let spec = slices_spec();
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let bytes = generate_slices(a.path(), &spec).unwrap();
        assert_eq!(generate_slices(b.path(), &spec).unwrap(), bytes);
        generate_slices(c.path(), &Slices { seed: 6, ..spec }).unwrap();
        let read = |root: &Path, i: usize| {
            fs::read_to_string(root.join(format!("d{:03}/s{i:07}.c", i % 3))).unwrap()
        };
        let texts: Vec<String> = (0..spec.files).map(|i| read(a.path(), i)).collect();
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(*t, read(b.path(), i), "file {i}");
            assert!(!t.is_empty() && t.ends_with('\n'), "file {i}");
        }
        assert_eq!(texts.iter().map(|t| t.len() as u64).sum::<u64>(), bytes);
        assert_ne!(texts[0], read(c.path(), 0));
        assert!(texts[0].contains("static int ") && texts[0].contains(") {\n"));

        // Lognormal lengths: median ~8 KB, a tail to 10-25 times it, capped.
        let mut sizes: Vec<usize> = texts.iter().map(String::len).collect();
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        assert!((6_000..=11_000).contains(&median), "median {median}");
        assert!(*sizes.last().unwrap() <= SLICE_MAX + 1_000, "{sizes:?}");
        let tail = sizes.iter().filter(|&&s| s > 3 * SLICE_MEDIAN).count();
        assert!((20..=100).contains(&tail), "{tail} files over 24 KB");
        assert!(sizes[0] < 1_500, "smallest {}", sizes[0]);
    }

    #[test]
    fn near_copies_are_their_slice_with_a_few_edits() {
        let spec = slices_spec();
        let texts = slices_texts(&spec);
        // The plan is what was written: slices of the body, near-copies.
        let (body, plan) = plan_slices(&spec);
        let near = plan.iter().filter(|s| s.near.is_some()).count();
        assert!((50..=110).contains(&near), "{near} near-copies of 400");
        // Lines of `a` not in `b`, as multisets.
        let missing = |a: &str, b: &str| {
            let mut count: std::collections::HashMap<&str, usize> = Default::default();
            for l in b.split_inclusive('\n') {
                *count.entry(l).or_default() += 1;
            }
            a.split_inclusive('\n')
                .filter(|l| match count.get_mut(l) {
                    Some(c) if *c > 0 => {
                        *c -= 1;
                        false
                    }
                    _ => true,
                })
                .count()
        };
        for (i, s) in plan.iter().enumerate() {
            match s.near {
                None => assert_eq!(texts[i], body[s.from..s.end]),
                Some((of, edits)) => {
                    // Its slice, with up to `edits` lines inserted or deleted.
                    assert_ne!(texts[i], texts[of]);
                    let (gone, added) = (
                        missing(&texts[of], &texts[i]),
                        missing(&texts[i], &texts[of]),
                    );
                    assert!(
                        gone + added <= edits,
                        "{i} near-copy of {of}: {gone} {added}"
                    );
                }
            }
        }
    }

    #[test]
    fn slices_overlap_in_part() {
        let spec = slices_spec();
        let texts = slices_texts(&spec);
        let (_, plan) = plan_slices(&spec);
        // Lines long enough to be unique in the body (numbers in them).
        let long = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| l.len() > 30)
                .map(str::to_string)
                .collect()
        };
        let sets: Vec<std::collections::HashSet<String>> = texts
            .iter()
            .map(|t| long(t).into_iter().collect())
            .collect();
        // Share of the long lines of file i found in file j.
        let share = |i: usize, j: usize| {
            let l = long(&texts[i]);
            l.iter().filter(|x| sets[j].contains(*x)).count() as f64 / l.len().max(1) as f64
        };
        // Pairs of slices (at least 2 KB) whose ranges meet share the
        // lines between, and only those: the share of the smaller file
        // measured on its lines is the share of its range in the other's.
        // Nearly all of them share only part of their lines (less than
        // 90 % of the larger file: a large D), and about 40 % overlap at
        // both ends (neither inside the other, less than 90 % of the
        // smaller file); the others are a slice inside a longer one.
        let (mut meeting, mut unlike, mut partial, mut apart) = (0, 0, 0, 0);
        for i in 0..plan.len() {
            for j in i + 1..plan.len() {
                let (x, y) = (plan[i], plan[j]);
                if x.near.is_some() || y.near.is_some() {
                    continue;
                }
                let (lx, ly) = (x.end - x.from, y.end - y.from);
                if lx < 2_000 || ly < 2_000 {
                    continue;
                }
                let (small, other, ls) = if lx <= ly { (i, j, lx) } else { (j, i, ly) };
                let ll = lx.max(ly);
                let common = x.end.min(y.end).saturating_sub(x.from.max(y.from));
                let expected = common as f64 / ls as f64;
                if common == 0 {
                    // Pairs far apart: a sample is enough.
                    if (i + j) % 50 == 0 {
                        apart += 1;
                        assert!(share(small, other) < 0.03, "{i} {j} apart");
                    }
                    continue;
                }
                let measured = share(small, other);
                meeting += 1;
                assert!(
                    (measured - expected).abs() < 0.1,
                    "{i} {j}: {measured:.3} of lines, {expected:.3} of bytes"
                );
                if expected < 0.9 {
                    partial += 1;
                }
                if (common as f64) < 0.9 * ll as f64 {
                    unlike += 1;
                }
            }
        }
        assert!(meeting > 1_000 && apart > 500, "{meeting} {apart}");
        assert!(
            unlike * 10 > meeting * 9,
            "{unlike} of {meeting} under 90 %"
        );
        assert!(partial * 3 > meeting, "{partial} of {meeting} partial");
    }

    fn read_catalog(root: &Path, release: &str, locale: &str) -> String {
        let p = format!("release-{release}/locale/{locale}/LC_MESSAGES/django.po");
        fs::read_to_string(root.join(p)).unwrap()
    }

    /// Lines of `a` also in `b`, as multisets (a line of `b` matches once):
    /// (fraction of a's lines, fraction of a's bytes). An upper bound of a
    /// longest common subsequence of lines; on these catalogs it is within
    /// ~1 point of GNU diff's lines in common (the shared lines are in the
    /// same order in both files). The byte fraction is the measure of
    /// fsim-verify (bytes in common).
    fn shared(a: &str, b: &str) -> (f64, f64) {
        let mut count: std::collections::HashMap<&str, usize> = Default::default();
        for l in b.split_inclusive('\n') {
            *count.entry(l).or_default() += 1;
        }
        let (mut lines, mut bytes, mut all_lines) = (0, 0, 0);
        for l in a.split_inclusive('\n') {
            all_lines += 1;
            if let Some(c) = count.get_mut(l).filter(|c| **c > 0) {
                *c -= 1;
                lines += 1;
                bytes += l.len();
            }
        }
        (
            lines as f64 / all_lines as f64,
            bytes as f64 / a.len() as f64,
        )
    }

    /// The template's side of a catalog: its msgctxt, msgid and
    /// msgid_plural lines (with their continuation lines), in order.
    fn msgids(po: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut inside = false;
        for l in po.lines() {
            if l.starts_with("msgid") || l.starts_with("msgctxt") {
                inside = true;
            } else if !l.starts_with('"') {
                inside = false;
            }
            if inside {
                out.push(l);
            }
        }
        out
    }

    #[test]
    fn catalogs_are_deterministic() {
        let spec = Catalogs {
            locales: 5,
            releases: 2,
            size: 20_000,
            seed: 9,
        };
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let bytes = generate_catalogs(a.path(), &spec).unwrap();
        assert_eq!(generate_catalogs(b.path(), &spec).unwrap(), bytes);
        let other = Catalogs { seed: 10, ..spec };
        generate_catalogs(c.path(), &other).unwrap();
        let mut files = 0;
        for release in ["1.0", "1.1"] {
            for locale in ["de", "fr", "es", "it", "ja"] {
                let x = read_catalog(a.path(), release, locale);
                assert_eq!(x, read_catalog(b.path(), release, locale));
                assert_ne!(x, read_catalog(c.path(), release, locale));
                files += x.len() as u64;
            }
        }
        assert_eq!(files, bytes);
        // A locale's catalog does not depend on how many others there are.
        let d = tempfile::tempdir().unwrap();
        generate_catalogs(d.path(), &Catalogs { locales: 2, ..spec }).unwrap();
        assert_eq!(
            read_catalog(d.path(), "1.1", "fr"),
            read_catalog(a.path(), "1.1", "fr")
        );
    }

    #[test]
    fn locale_codes_are_distinct() {
        let codes = locale_codes(1000);
        let set: std::collections::HashSet<&str> = codes.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(set.len(), 1000);
        assert_eq!(
            &codes[..3].iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            &["de", "fr", "es"]
        );
        assert!(set.contains("pt_BR") && set.contains("zh_Hans") && set.contains("de_AT"));
        assert_eq!(locale_codes(7)[..], codes[..7]);
    }

    #[test]
    fn catalogs_look_like_gettext_catalogs() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Catalogs {
            locales: 40,
            releases: 2,
            size: 100_000,
            seed: 2005,
        };
        generate_catalogs(dir.path(), &spec).unwrap();
        let codes: Vec<String> = locale_codes(40).into_iter().map(|c| c.0).collect();
        let first: Vec<String> = codes
            .iter()
            .map(|l| read_catalog(dir.path(), "1.0", l))
            .collect();
        let second: Vec<String> = codes
            .iter()
            .map(|l| read_catalog(dir.path(), "1.1", l))
            .collect();

        // 80-150 KB at the default size, varying per locale.
        let sizes: Vec<usize> = first.iter().chain(&second).map(String::len).collect();
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(*min >= 80_000 && *max <= 150_000, "sizes {min}..{max}");
        assert!(*max as f64 / *min as f64 > 1.15, "sizes {min}..{max}");

        for (l, po) in codes.iter().zip(&first) {
            assert!(po.contains(&format!("\"Language: {l}\\n\"\n")));
            assert!(po.contains("\"Plural-Forms: nplurals="));
            assert!(po.contains("\n\n#: ") && po.contains("\n#, python-format\n"));
            assert!(po.contains("\nmsgctxt \"") && po.contains("\nmsgid_plural \""));
            assert!(po.contains("\nmsgid \"\"\n\"") && po.contains("\nmsgstr[0] \""));
            // 10-25 % of the entries untranslated (with sampling noise).
            let entries: Vec<&str> = po.split("\n\n").skip(1).collect();
            let empty = entries
                .iter()
                .filter(|e| {
                    e.lines()
                        .filter(|l| l.starts_with("msgstr"))
                        .all(|l| l.ends_with(" \"\""))
                        && !e.lines().last().unwrap().starts_with('"')
                })
                .count() as f64
                / entries.len() as f64;
            assert!((0.07..=0.28).contains(&empty), "{l}: {empty} untranslated");
        }

        // msgids: the template's, identical in every locale of a release.
        for po in &first[1..] {
            assert_eq!(msgids(po), msgids(&first[0]));
        }
        assert_ne!(msgids(&second[0]), msgids(&first[0]));

        // Two locales of one release: 45-70 % of the bytes in common (lines
        // as multisets; about 65-85 % of the lines: the shared lines are
        // the short ones), and no translation in common.
        for i in 0..codes.len() {
            for j in (0..codes.len()).filter(|&j| j != i && (j + i) % 3 == 0) {
                let (lines, bytes) = shared(&first[i], &first[j]);
                let pair = format!(
                    "{} {}: {lines:.3} of lines, {bytes:.3} of bytes",
                    codes[i], codes[j]
                );
                assert!((0.45..=0.70).contains(&bytes), "{pair}");
                assert!((0.60..=0.90).contains(&lines), "{pair}");
                let theirs: std::collections::HashSet<&str> = first[j].lines().collect();
                let same = first[i]
                    .lines()
                    .filter(|l| {
                        l.starts_with("msgstr") && !l.ends_with(" \"\"") && theirs.contains(l)
                    })
                    .count();
                assert_eq!(same, 0, "{pair}");
            }
        }

        // One locale across two releases: more than 85 % in common.
        for (l, (a, b)) in codes.iter().zip(first.iter().zip(&second)) {
            let (lines, bytes) = shared(a, b);
            assert!(lines > 0.85 && bytes > 0.85, "{l}: {lines:.3} {bytes:.3}");
            assert!(lines < 0.97, "{l}: {lines:.3}");
        }
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
