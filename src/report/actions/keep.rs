//! Which copy of an identical set the actions script keeps
//! (`fsim-report --keep RULES`, make's `KEEP_RULES`): a comma-separated
//! list of tie-breakers tried in order, in the style of fclones'
//! `--priority` and rmlint's tagged originals. The first rule that tells
//! two files apart decides; `path` (byte order of the paths) always ends
//! the list, so the choice never depends on anything but the files.
//!
//! The default, `shallow,oldest,path`, keeps the file fewest folders deep,
//! then the oldest: the copy a person made later, or put in a backup or
//! "old" sub-folder, is the one linked or removed, and the original in its
//! place stays.

use std::cmp::Ordering;
use std::path::Path;

/// The default rules (module doc).
pub const DEFAULT: &str = "shallow,oldest,path";

/// One tie-breaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// Files under this folder first: (the folder as given, without a
    /// trailing `/`; its physical path, resolved when the option is read).
    Under(Vec<u8>, Vec<u8>),
    /// The order of the roots: the collection of a merged file table,
    /// else the file table's order (the roots as given, each walked in
    /// path order).
    Root,
    Oldest,
    Newest,
    /// Fewest folders deep.
    Shallow,
    Deep,
    /// Shortest path.
    Short,
    /// Byte order of the paths.
    Path,
}

/// The rules of `--keep`, as parsed, and as the user wrote them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keep {
    pub rules: Vec<Rule>,
    pub text: String,
}

impl Default for Keep {
    fn default() -> Keep {
        Keep::parse(DEFAULT).expect("the default rules parse")
    }
}

/// What the rules compare of a file (or of a folder of an identical tree).
#[derive(Debug, Clone)]
pub struct Candidate<'a> {
    /// The path as the file table records it.
    pub path: &'a [u8],
    /// The physical folder that holds it (a file) or its physical path (a
    /// folder), as resolved when the plan is written.
    pub phys: &'a [u8],
    /// Modification time, seconds.
    pub mtime: i64,
    /// Its place in the order of the roots (`Rule::Root`).
    pub root: u64,
}

/// Whether `path` is `dir` or lies under it.
fn within(path: &[u8], dir: &[u8]) -> bool {
    if dir == b"/" {
        return path.starts_with(b"/");
    }
    path.starts_with(dir) && (path.len() == dir.len() || path[dir.len()] == b'/')
}

/// Folders deep: the `/` of the path, a trailing one left out.
fn depth(path: &[u8]) -> usize {
    let p = path.strip_suffix(b"/").unwrap_or(path);
    p.iter().filter(|&&c| c == b'/').count()
}

impl Rule {
    fn parse(word: &str) -> Result<Rule, String> {
        if let Some(dir) = word.strip_prefix("under:") {
            return under(dir);
        }
        Ok(match word {
            "root" => Rule::Root,
            "oldest" => Rule::Oldest,
            "newest" => Rule::Newest,
            "shallow" => Rule::Shallow,
            "deep" => Rule::Deep,
            "short" => Rule::Short,
            "path" => Rule::Path,
            _ => {
                return Err(format!(
                    "unknown rule {word:?} (under:DIR, root, oldest, newest, shallow, deep, short, path)"
                ))
            }
        })
    }

    /// `a` against `b` by this rule: `Less` when `a` is the one to keep.
    fn compare(&self, a: &Candidate, b: &Candidate) -> Ordering {
        match self {
            Rule::Under(given, phys) => {
                let at = |c: &Candidate| !(within(c.path, given) || within(c.phys, phys));
                at(a).cmp(&at(b))
            }
            Rule::Root => a.root.cmp(&b.root),
            Rule::Oldest => a.mtime.cmp(&b.mtime),
            Rule::Newest => b.mtime.cmp(&a.mtime),
            Rule::Shallow => depth(a.path).cmp(&depth(b.path)),
            Rule::Deep => depth(b.path).cmp(&depth(a.path)),
            Rule::Short => a.path.len().cmp(&b.path.len()),
            Rule::Path => a.path.cmp(b.path),
        }
    }
}

/// `under:DIR`: the folder must exist now (a misspelt folder would keep
/// nothing under it, silently).
fn under(dir: &str) -> Result<Rule, String> {
    if dir.is_empty() {
        return Err("under: needs a folder (under:DIR)".into());
    }
    let phys = std::fs::canonicalize(Path::new(dir)).map_err(|e| format!("under:{dir}: {e}"))?;
    let given = dir.trim_end_matches('/');
    let given = if given.is_empty() { "/" } else { given };
    use std::os::unix::ffi::OsStrExt;
    Ok(Rule::Under(
        given.as_bytes().to_vec(),
        phys.as_os_str().as_bytes().to_vec(),
    ))
}

impl Keep {
    /// Parse `--keep`: rules separated by commas; `path` is added at the
    /// end when missing.
    pub fn parse(text: &str) -> Result<Keep, String> {
        let mut rules = text
            .split(',')
            .map(|w| Rule::parse(w.trim()))
            .collect::<Result<Vec<Rule>, String>>()?;
        if !rules.contains(&Rule::Path) {
            rules.push(Rule::Path);
        }
        Ok(Keep {
            rules,
            text: text.to_string(),
        })
    }

    /// `a` against `b`: `Less` when `a` is the one to keep.
    pub fn compare(&self, a: &Candidate, b: &Candidate) -> Ordering {
        self.rules
            .iter()
            .map(|r| r.compare(a, b))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// Index in `c` of the one to keep (the first of equals).
    pub fn choose(&self, c: &[Candidate]) -> usize {
        (0..c.len())
            .min_by(|&i, &j| self.compare(&c[i], &c[j]).then(i.cmp(&j)))
            .expect("at least one candidate")
    }

    /// Whether `Rule::Root` is among the rules.
    pub fn uses_root(&self) -> bool {
        self.rules.contains(&Rule::Root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c<'a>(path: &'a str, phys: &'a str, mtime: i64, root: u64) -> Candidate<'a> {
        Candidate {
            path: path.as_bytes(),
            phys: phys.as_bytes(),
            mtime,
            root,
        }
    }

    #[test]
    fn default_keeps_the_shallowest_then_the_oldest() {
        let k = Keep::default();
        assert_eq!(k.rules, [Rule::Shallow, Rule::Oldest, Rule::Path]);
        let files = [
            c("r/backup/a.txt", "/x/r/backup", 10, 0),
            c("r/b.txt", "/x/r", 20, 1),
            c("r/a.txt", "/x/r", 20, 2),
            c("r/c.txt", "/x/r", 15, 3),
        ];
        assert_eq!(k.choose(&files), 3);
        assert_eq!(k.choose(&files[..3]), 2);
    }

    #[test]
    fn rules_apply_in_order_and_path_ends_them() {
        let files = [c("b/x", "/b", 5, 1), c("a/deep/x", "/a/deep", 9, 0)];
        let k = |s: &str| Keep::parse(s).unwrap().choose(&files);
        assert_eq!(k("root"), 1);
        assert_eq!(k("oldest"), 0);
        assert_eq!(k("newest"), 1);
        assert_eq!(k("deep"), 1);
        assert_eq!(k("short"), 0);
        assert_eq!(k("path"), 1);
        assert_eq!(
            Keep::parse("oldest").unwrap().rules.last(),
            Some(&Rule::Path)
        );
        assert!(Keep::parse("eldest").unwrap_err().contains("unknown rule"));
        assert!(Keep::parse("under:").is_err());
        assert!(Keep::parse("under:/no/such/folder/here").is_err());
    }

    #[test]
    fn under_matches_the_path_as_given_or_its_physical_folder() {
        let rule = |given: &str, phys: &str| Rule::Under(given.into(), phys.into());
        let k = Keep {
            rules: vec![rule("keep", "/x/keep"), Rule::Path],
            text: String::new(),
        };
        // By the path as given; "keeper" is not under "keep".
        assert_eq!(
            k.choose(&[c("a/f", "/x/a", 0, 0), c("keep/f", "/y", 0, 0)]),
            1
        );
        assert_eq!(
            k.choose(&[c("a/f", "/x/a", 0, 0), c("keeper/f", "/y", 0, 0)]),
            0
        );
        // By the physical folder, whatever the path given.
        assert_eq!(
            k.choose(&[c("a/f", "/x/a", 0, 0), c("l/f", "/x/keep/s", 0, 0)]),
            1
        );
        let parsed = Keep::parse("under:/,path").unwrap();
        assert_eq!(parsed.rules[0], rule("/", "/"));
        assert!(within(b"/x", b"/") && within(b"a/b", b"a") && !within(b"ab", b"a"));
    }
}
