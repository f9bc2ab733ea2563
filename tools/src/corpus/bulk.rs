//! The benchmark repositories of `fsim-gen --bulk` and `--versions`:
//! many text documents, some edited versions or copies of others.

use super::{document, edit, edit_lines, Rng};
use fsim::error::{Context, Result};
use std::fs;
use std::path::Path;

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
    pub(super) fn start(&self, root: &Path) -> Result<(Rng, usize)> {
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
