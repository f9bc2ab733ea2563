//! Path patterns, as the report's `--path-include`/`--path-exclude` and
//! fsim-chunk's `--exclude` take them: a pattern with `*`, `?` or `[` is
//! a glob that must match the whole (escaped) path, `*` matching any run
//! of characters, `/` included, `?` one character, `[abc]`, `[a-z]`,
//! `[!a]` a class; any other pattern matches where it occurs in the path.

/// A path pattern (module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathPattern {
    Glob(Vec<char>),
    Substring(String),
}

impl PathPattern {
    pub fn parse(s: &str) -> PathPattern {
        if s.contains(['*', '?', '[']) {
            PathPattern::Glob(s.chars().collect())
        } else {
            PathPattern::Substring(s.to_string())
        }
    }

    /// Does the escaped path match?
    pub fn matches(&self, path: &str) -> bool {
        match self {
            PathPattern::Substring(s) => path.contains(s.as_str()),
            PathPattern::Glob(p) => {
                let t: Vec<char> = path.chars().collect();
                glob_match(p, &t)
            }
        }
    }
}

/// The pattern as it was given.
impl std::fmt::Display for PathPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathPattern::Substring(s) => f.write_str(s),
            PathPattern::Glob(p) => p
                .iter()
                .try_for_each(|c| std::fmt::Write::write_char(f, *c)),
        }
    }
}

/// Glob matching with backtracking over the last `*` (linear in practice).
fn glob_match(p: &[char], t: &[char]) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                '[' => {
                    if let Some((ok, next)) = class_match(p, pi, t[ti]) {
                        if ok {
                            pi = next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == '[' {
                        // An unclosed '[' is a literal.
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Match `c` against the class starting at `p[at] == '['`: (matched, index
/// after the class), or None when the class is not closed.
fn class_match(p: &[char], at: usize, c: char) -> Option<(bool, usize)> {
    let mut i = at + 1;
    let negate = matches!(p.get(i), Some('!') | Some('^'));
    if negate {
        i += 1;
    }
    let mut found = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((found != negate, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                found = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                found = true;
            }
            i += 1;
        }
    }
    None
}
