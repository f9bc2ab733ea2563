//! The sample repository (`make demo`, the end-to-end tests): documents
//! with planted relationships, and the manifest of what was planted.

use super::{document, edit, Rng};
use fsim::error::{Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
