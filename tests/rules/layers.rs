//! The layering of src/ (docs/pipeline.md, "Map of the tree"): every
//! `crate::` path outside test code must point at the same layer or one
//! below, and no two source files may import each other, directly or in a
//! longer circle. Read from the source text, so it fails as soon as an
//! import that breaks the rule is written (`make test`, `make check`).

use crate::common;
use common::rust_files;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Layers from the bottom up, the top-level modules in each, and the layers
/// below that each may use (besides its own).
const LAYERS: &[(&str, &[&str], &[&str])] = &[
    ("base", &["error", "cli"], &[]),
    ("formats", &["formats"], &["base"]),
    ("io", &["io"], &["base", "formats"]),
    ("align", &["align"], &["base"]),
    // The content view of documents: what the chunker, the line
    // source, fsim-verify and the html read instead of the raw bytes.
    ("content", &["content"], &["base", "formats", "io"]),
    (
        "chunking",
        &["chunking"],
        &["base", "formats", "io", "content"],
    ),
    (
        "stages",
        &["stages"],
        &["base", "formats", "io", "align", "content", "chunking"],
    ),
    // The report reads the formats (and re-chunks files for its html
    // views): it does not call a stage.
    (
        "report",
        &["report"],
        &["base", "formats", "io", "align", "content", "chunking"],
    ),
    // The installed command runs the stages as programs (through make):
    // it writes its makefile atomically and calls no stage.
    ("driver", &["driver"], &["base", "io"]),
];

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, tops, _)| tops.contains(&top))
}

/// Module path of a source file: src/a/b.rs and src/a/b/mod.rs are `a::b`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().map(String::as_str) == Some("mod") {
        parts.pop();
    }
    parts
}

/// The code of a file outside its `#[cfg(test)]` modules, without comment
/// lines.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    // Brace depth inside a test module being skipped.
    let mut skip: Option<i64> = None;
    while let Some((n, l)) = lines.next() {
        let t = l.trim_start();
        if let Some(depth) = skip.as_mut() {
            *depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            if *depth <= 0 && l.contains('}') {
                skip = None;
            }
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            if let Some((_, next)) = lines.peek() {
                if next.contains("mod ") && next.trim_end().ends_with('{') {
                    skip = Some(0);
                    continue;
                }
            }
        }
        if t.starts_with("//") {
            continue;
        }
        out.push((n + 1, l));
    }
    out
}

/// The module paths named in a line: `crate::a::b::{c, d}` gives `a::b`
/// (the items in braces are not followed), `super::x` is resolved from
/// `here`.
fn paths_in(line: &str, here: &[String], is_mod_rs: bool) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (start, base) in [("crate::", None), ("super::", Some(()))] {
        let mut rest = line;
        while let Some(i) = rest.find(start) {
            let before = rest[..i].chars().last();
            rest = &rest[i + start.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut path: Vec<String> = match base {
                None => Vec::new(),
                Some(()) => {
                    let mut p = here.to_vec();
                    if !is_mod_rs {
                        p.pop();
                    }
                    p.pop();
                    p
                }
            };
            let seg: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            path.extend(seg.split("::").filter(|s| !s.is_empty()).map(String::from));
            out.push(path);
        }
    }
    out
}

#[test]
fn imports_only_go_down_and_never_in_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.retain(|f| !f.starts_with(src.join("bin")) && f != &src.join("lib.rs"));
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();

    let mut errors = Vec::new();
    let mut edges: BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> = BTreeMap::new();
    for f in &files {
        let here = module_of(&src, f);
        let Some(own) = layer_of(&here[0]) else {
            errors.push(format!(
                "{}: in no layer: add its folder to LAYERS in tests/rules/layers.rs and to docs/pipeline.md",
                f.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        let is_mod_rs = f.file_name().is_some_and(|n| n == "mod.rs");
        for (n, line) in code_lines(&text) {
            for path in paths_in(line, &here, is_mod_rs) {
                let Some(top) = path.first() else { continue };
                let Some(layer) = layer_of(top) else { continue };
                let at = format!(
                    "{}:{n}: {}",
                    f.strip_prefix(root).unwrap().display(),
                    line.trim()
                );
                if layer != own && !LAYERS[own].2.contains(&LAYERS[layer].0) {
                    errors.push(format!(
                        "{at}\n    the {} layer may not use the {} layer (it may use: {})",
                        LAYERS[own].0,
                        LAYERS[layer].0,
                        LAYERS[own].2.join(", ")
                    ));
                }
                // The file the path names: its longest prefix that is a module.
                let target = (1..=path.len())
                    .rev()
                    .map(|k| path[..k].to_vec())
                    .find(|p| modules.contains(p));
                if let Some(t) = target {
                    if t != here {
                        edges
                            .entry(here.clone())
                            .or_default()
                            .entry(t)
                            .or_insert(at);
                    }
                }
            }
        }
    }

    // Circles between files: a depth-first search from every module.
    let mut reported = BTreeSet::new();
    for start in edges.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((m, trail)) = stack.pop() {
            for next in edges.get(&m).into_iter().flat_map(|e| e.keys()) {
                if next == start {
                    let mut circle: Vec<String> = trail.iter().map(|p| p.join("::")).collect();
                    let mut key = circle.clone();
                    key.sort();
                    if reported.insert(key) {
                        let steps: Vec<String> = trail
                            .iter()
                            .zip(trail.iter().skip(1).chain(std::iter::once(start)))
                            .map(|(a, b)| format!("    {}", edges[a][b]))
                            .collect();
                        circle.push(start.join("::"));
                        errors.push(format!(
                            "import circle {}:\n{}",
                            circle.join(" -> "),
                            steps.join("\n")
                        ));
                    }
                } else if seen.insert(next.clone()) {
                    let mut t = trail.clone();
                    t.push(next.clone());
                    stack.push((next.clone(), t));
                }
            }
        }
    }
    assert!(
        errors.is_empty(),
        "the layering of src/ is broken (docs/pipeline.md, \"Map of the tree\"):\n{}",
        errors.join("\n")
    );
}
