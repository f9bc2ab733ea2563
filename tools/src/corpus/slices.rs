//! The repository of `fsim-gen --slices`: slices of one body of C-like
//! source that overlap in part, and near-copies of some of them.

use super::text::{words, CONTENT};
use super::{mix, unit, Rng};
use fsim::error::{Context, Result};
use std::fs;
use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
