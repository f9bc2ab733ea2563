//! The template of each release of the catalogs: the entries (`msgid`s,
//! references, flags) every locale's catalog is filled in from.

use super::super::text::{words, CONTENT, WORDS};
use super::super::Rng;

/// A source file of the project the catalogs translate.
pub(super) struct Source {
    pub(super) path: String,
    lines: u32,
}

/// An entry of the template: what every locale's catalog of the release has.
pub(super) struct Entry {
    /// Stable across releases: the key of its translations.
    pub(super) key: u64,
    /// Release it appeared in.
    pub(super) born: usize,
    /// `#:` references: (source, line), sorted.
    pub(super) refs: Vec<(usize, u32)>,
    pub(super) python_format: bool,
    pub(super) ctxt: Option<String>,
    pub(super) msgid: String,
    pub(super) plural: Option<String>,
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

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
pub(super) struct Template {
    pub(super) sources: Vec<Source>,
    pub(super) entries: Vec<Entry>,
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

    pub(super) fn new(rng: &mut Rng, size: usize) -> Template {
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
    pub(super) fn next_release(&mut self, rng: &mut Rng, r: usize) {
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
