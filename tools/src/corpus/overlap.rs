//! The repository of `fsim-gen --overlap`: extracts of one body of text
//! that overlap widely (one large family).

use super::{document, edit_lines, Bulk};
use fsim::error::{Context, Result};
use std::fs;
use std::path::Path;

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
}
