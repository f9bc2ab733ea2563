//! sif's post-processing filters (Manber sections 4-6), applied by
//! fsim-report on what the analysis found, without re-running anything:
//! maximum size ratio, same suffix, same type, path filters, which file
//! types may be linked (by default text is not linked to binary), and
//! links across collections only.
//!
//! Path filters decide which files take part in the report: a file takes
//! part when it matches one `--path-include` pattern (if any is given) and
//! no `--path-exclude` pattern. Links with a file that does not take part
//! are dropped, and so are such files from the identical sets. The other
//! filters look at the two files of a link.
//!
//! A pattern with `*`, `?` or `[` is a glob that must match the whole
//! (escaped) path as the file table records it: `*` matches any run of
//! characters, `/` included, `?` one character, `[abc]`, `[a-z]`, `[!a]`
//! a class. Any other pattern matches when it occurs anywhere in the path.

use crate::formats::files::CompactTable;
use crate::formats::FileType;

/// Which file types may be linked (`--link-types`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LinkTypes {
    /// Text-like files (text, postscript) are not linked to binary-like
    /// ones (binary, compressed, pdf, image).
    #[default]
    Separate,
    /// Any two files may be linked.
    Any,
}

pub use crate::formats::glob::PathPattern;

/// The suffix of a path's last component: the text after its last `.`,
/// ASCII lowercased; empty when there is none (or the only dot starts the
/// name, as in `.profile`).
pub fn suffix(path: &[u8]) -> Vec<u8> {
    let name = match path.iter().rposition(|&c| c == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    };
    match name.iter().rposition(|&c| c == b'.') {
        Some(i) if i > 0 => name[i + 1..].to_ascii_lowercase(),
        _ => Vec::new(),
    }
}

/// Text-like (true), binary-like (false), or neither (empty files).
fn text_like(t: FileType) -> Option<bool> {
    match t {
        FileType::Text | FileType::Postscript => Some(true),
        FileType::Binary | FileType::Compressed | FileType::Pdf | FileType::Image => Some(false),
        FileType::Empty => None,
    }
}

/// The post-processing filters of `fsim-report`.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Drop links whose larger file is more than this many times the smaller.
    pub max_size_ratio: Option<f64>,
    pub same_suffix: bool,
    pub same_type: bool,
    pub include: Vec<PathPattern>,
    pub exclude: Vec<PathPattern>,
    pub link_types: LinkTypes,
    /// Keep only links between files of different collections.
    pub cross_collections_only: bool,
}

impl Filters {
    /// Does the file take part (path filters)?
    pub fn file_ok(&self, escaped_path: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(escaped_path)))
            && !self.exclude.iter().any(|p| p.matches(escaped_path))
    }

    /// Is the link between files `a` and `b` of `files` (sizes as the
    /// report uses them, and their collections) kept? Path filters are
    /// checked by the caller. Their types and paths are read only when a
    /// filter needs them: every link of every pass comes here.
    pub fn link_ok(
        &self,
        files: &CompactTable,
        (a, b): (u32, u32),
        sa: u64,
        sb: u64,
        ca: usize,
        cb: usize,
    ) -> bool {
        if let Some(r) = self.max_size_ratio {
            let (lo, hi) = (sa.min(sb), sa.max(sb));
            if lo == 0 || hi as f64 > lo as f64 * r {
                return false;
            }
        }
        if self.same_type && files.ftype(a) != files.ftype(b) {
            return false;
        }
        if self.link_types == LinkTypes::Separate {
            if let (Some(x), Some(y)) = (text_like(files.ftype(a)), text_like(files.ftype(b))) {
                if x != y {
                    return false;
                }
            }
        }
        if self.same_suffix && suffix(files.path(a)) != suffix(files.path(b)) {
            return false;
        }
        if self.cross_collections_only && ca == cb {
            return false;
        }
        true
    }

    /// The filters in force, for the report's parameters (`none` if none
    /// beyond the default link types).
    pub fn describe(&self) -> String {
        let mut v = Vec::new();
        if let Some(r) = self.max_size_ratio {
            v.push(format!("max-size-ratio={r}"));
        }
        if self.same_suffix {
            v.push("same-suffix".into());
        }
        if self.same_type {
            v.push("same-type".into());
        }
        if self.link_types == LinkTypes::Any {
            v.push("link-types=any".into());
        }
        for p in &self.include {
            v.push(format!("path-include={}", pattern_text(p)));
        }
        for p in &self.exclude {
            v.push(format!("path-exclude={}", pattern_text(p)));
        }
        if self.cross_collections_only {
            v.push("cross-collections-only".into());
        }
        if v.is_empty() {
            "none".into()
        } else {
            v.join(" ")
        }
    }
}

fn pattern_text(p: &PathPattern) -> String {
    match p {
        PathPattern::Glob(g) => g.iter().collect(),
        PathPattern::Substring(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let m = |p: &str, t: &str| PathPattern::parse(p).matches(t);
        assert!(m("*.txt", "a/b/c.txt"));
        assert!(!m("*.txt", "a/b/c.txt.bak"));
        assert!(m("repo/*/x?.md", "repo/dir/sub/x1.md"));
        assert!(m("*[0-9].log", "a/run7.log"));
        assert!(!m("*[!0-9].log", "a/run7.log"));
        assert!(m("drafts", "a/drafts/b.txt"));
        assert!(!m("drafts", "a/final/b.txt"));
        assert!(m("*", ""));
        assert!(m("a[b", "xa[bx") || !m("a[b", "xa[bx")); // unclosed: no panic
        assert!(m("*a[b", "xa[b"));
    }

    #[test]
    fn suffixes() {
        assert_eq!(suffix(b"a/b.TXT"), b"txt");
        assert_eq!(suffix(b"a.d/b"), b"");
        assert_eq!(suffix(b"a/.profile"), b"");
        assert_eq!(suffix(b"x.tar.gz"), b"gz");
    }
}
