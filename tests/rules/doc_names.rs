//! The docs name only what exists: every path under
//! `src/`, `tests/`, `scripts/`, `docs/` or `examples/` and every
//! `crate::module::item` (or `fsim::...`) named in README.md, docs/**/*.md
//! and the doc comments (`//!`, `///`) of src/, tests/ and examples/ must
//! exist in the tree. A file moved or a module renamed without its
//! mentions fails here with each dangling name's file and line. (Rustdoc
//! checks the `[`links`]` of doc comments; this checks the names in prose
//! and in the markdown files, which nothing else reads.)

use std::path::{Path, PathBuf};

const ROOTS: &[&str] = &["src/", "tests/", "scripts/", "docs/", "examples/"];

/// Paths that do not exist in a fresh checkout but are made by a step the
/// text describes, with why.
const MADE_LATER: &[(&str, &str)] = &[(
    "tests/browser/node_modules",
    "installed by `npm ci` in tests/browser (tests/heavy/html_browser.rs)",
)];

/// `(file, name, why)`: names that look like ours but are not paths of
/// this tree. Each must still occur in its file (a stale entry fails).
const NOT_OURS: &[(&str, &str, &str)] = &[
    (
        "docs/quality.md",
        "src/locale",
        "a folder of the moment npm tarballs measured",
    ),
    (
        "tests/rules/layers.rs",
        "src/a/b.rs",
        "the example of a rule",
    ),
    (
        "tests/rules/layers.rs",
        "src/a/b/mod.rs",
        "the example of a rule",
    ),
    (
        "tests/common/numbered_files.rs",
        "docs/partNN/fileNNNNNN.txt",
        "a path of the generated repository",
    ),
];

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "node_modules") {
                continue;
            }
            files_under(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// The lines a file's names are checked in: every line of a markdown
/// file, the doc comment lines of a Rust file.
fn checked_lines(path: &Path, text: &str) -> Vec<(usize, String)> {
    let md = path.extension().is_some_and(|x| x == "md");
    text.lines()
        .enumerate()
        .filter_map(|(n, l)| {
            let t = l.trim_start();
            if md {
                Some((n + 1, l.to_string()))
            } else {
                let doc = t.strip_prefix("//!").or_else(|| t.strip_prefix("///"))?;
                Some((n + 1, doc.to_string()))
            }
        })
        .collect()
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths under one of `ROOTS` named in `line`, without the
/// punctuation that may end a sentence.
fn paths_in(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for root in ROOTS {
        for (i, _) in line.match_indices(root) {
            let before = line[..i].chars().last();
            if before.is_some_and(|c| is_name_char(c) || "/.-~$".contains(c)) {
                continue;
            }
            let p: String = line[i..]
                .chars()
                .take_while(|&c| is_name_char(c) || "./-*".contains(c))
                .collect();
            let p = p.trim_end_matches(['.', '-']);
            if p.len() > root.len() {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// Does `pattern` (a path, maybe with `*` in its last component) name
/// something in the tree?
fn exists(root: &Path, pattern: &str) -> bool {
    if MADE_LATER.iter().any(|(p, _)| pattern.starts_with(p)) {
        return true;
    }
    // `examples/NAME`: the example's binary, as a command line runs it.
    if let Some(name) = pattern.strip_prefix("examples/") {
        if !name.contains('/') && root.join(format!("examples/{name}.rs")).exists() {
            return true;
        }
    }
    let Some(star) = pattern.find('*') else {
        return root.join(pattern).exists();
    };
    let (dir, file) = pattern.rsplit_once('/').unwrap_or(("", pattern));
    if dir.contains('*') {
        return root
            .join(&pattern[..star])
            .parent()
            .is_some_and(Path::exists);
    }
    let (pre, post) = file.split_once('*').unwrap();
    let post = post.replace('*', "");
    std::fs::read_dir(root.join(dir)).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(pre) && n.ends_with(&post) && n.len() >= pre.len() + post.len()
        })
    })
}

/// The module paths named in `line`: `crate::a::b::C` and `fsim::a::b::C`
/// give `["a", "b", "C"]`.
fn module_paths_in(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for start in ["crate::", "fsim::"] {
        for (i, _) in line.match_indices(start) {
            if line[..i]
                .chars()
                .last()
                .is_some_and(|c| is_name_char(c) || c == ':')
            {
                continue;
            }
            let rest: String = line[i + start.len()..]
                .chars()
                .take_while(|&c| is_name_char(c) || c == ':')
                .collect();
            let segs: Vec<String> = rest
                .split("::")
                .take_while(|s| !s.is_empty())
                .map(String::from)
                .collect();
            if !segs.is_empty() {
                out.push(segs);
            }
        }
    }
    out
}

/// The source file of module `segs` (`a/b.rs` or `a/b/mod.rs` in src).
fn module_file(src: &Path, segs: &[String]) -> Option<PathBuf> {
    if segs.is_empty() {
        return Some(src.join("lib.rs"));
    }
    let base = segs.iter().fold(src.to_path_buf(), |p, s| p.join(s));
    [base.with_extension("rs"), base.join("mod.rs")]
        .into_iter()
        .find(|p| p.exists())
}

/// Does the path `segs` name a module, or an item that its module's file
/// defines or re-exports (or, for an item of an item, such as a method or
/// a variant, whose first item it does)?
fn module_path_exists(src: &Path, segs: &[String]) -> bool {
    let mut k = 0;
    while k < segs.len() && module_file(src, &segs[..=k]).is_some() {
        k += 1;
    }
    if k == segs.len() {
        return true;
    }
    let file = module_file(src, &segs[..k]).unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let item = &segs[k];
    // A glob re-export (`pub use x::*`) may bring the item from below.
    let globs = text.contains("::*;");
    globs
        || text.match_indices(item.as_str()).any(|(i, _)| {
            let before = text[..i].chars().last();
            let after = text[i + item.len()..].chars().next();
            !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
        })
}

#[test]
fn the_scanners_find_names_and_leave_the_rest() {
    assert_eq!(
        paths_in("see `src/io/mod.rs`, docs/performance-*.md. and WORK/docs/x"),
        vec!["src/io/mod.rs", "docs/performance-*.md"]
    );
    assert_eq!(
        module_paths_in("[`crate::stages::sort::ExternalSorter`], fsim::formats and a::crate::x"),
        vec![vec!["stages", "sort", "ExternalSorter"], vec!["formats"]]
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(exists(root, "docs/*.md") && !exists(root, "docs/no-such-*.md"));
    assert!(exists(root, "examples/sortpart-gen") && !exists(root, "examples/no-such"));
    assert!(exists(root, "src/io/mod.rs") && !exists(root, "src/longpath.rs"));
    let src = root.join("src");
    let segs = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert!(module_path_exists(&src, &segs("stages::verify::run")));
    assert!(!module_path_exists(
        &src,
        &segs("stages::verify::no_such_item")
    ));
}

#[test]
fn docs_and_doc_comments_name_only_what_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = vec![root.join("README.md")];
    files_under(&root.join("docs"), "md", &mut files);
    for dir in ["src", "tests", "examples"] {
        files_under(&root.join(dir), "rs", &mut files);
    }
    files.sort();
    let mut dangling = Vec::new();
    let mut not_ours_seen = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in checked_lines(f, &text) {
            for p in paths_in(&line) {
                if let Some(i) = NOT_OURS
                    .iter()
                    .position(|&(nf, np, _)| nf == rel && np == p)
                {
                    not_ours_seen.push(i);
                } else if !exists(root, &p) {
                    dangling.push(format!("{rel}:{n}: {p}"));
                }
            }
            for segs in module_paths_in(&line) {
                if !module_path_exists(&src, &segs) {
                    dangling.push(format!("{rel}:{n}: crate::{}", segs.join("::")));
                }
            }
        }
    }
    for (i, (file, name, _)) in NOT_OURS.iter().enumerate() {
        if !not_ours_seen.contains(&i) {
            dangling.push(format!(
                "{file}: {name} is in NOT_OURS but no longer named there: remove it"
            ));
        }
    }
    assert!(
        dangling.is_empty(),
        "{} names of files or modules that do not exist (fix the text, or the \
         name if the thing moved):\n{}",
        dangling.len(),
        dangling.join("\n")
    );
}
