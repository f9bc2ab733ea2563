//! A tree of folders with known relations (`fsim-gen --folders N`): what
//! someone cleaning a shared drive of backups, exports and "copy of"
//! folders finds there, with the truth written beside it, for the folder
//! pairs of the report.
//!
//! `projects/pNNNN/` are N projects of a few documents in two sub-folders
//! (`docs/`, `notes/`) and one LICENSE that every project holds (a large
//! identical set of files). Each project is then, by its number modulo 5:
//!
//! | n % 5 | copy written | relation |
//! |---|---|---|
//! | 0 | `backup/pNNNN-copy/`, the same bytes | `folder-identical` |
//! | 1 | `archive/pNNNN-v2/`, two documents edited, one added, the smallest removed | `folder-version` |
//! | 2 | `old/Project NNNN/`, the same bytes under another name | `folder-renamed` |
//! | 3 | `backup/2023/projects/pNNNN/`, the same bytes, inside a copy of the tree's shape | `folder-nested` |
//! | 4 | none | (unrelated to every other project) |
//!
//! And `shared/` (a small folder) copied `copies` times as
//! `many/copy-KKKK/`: one family of identical folders
//! (`folder-copies`, every path on one line).

use crate::corpus::{document, edit, Rng};
use fsim::error::{Context, Result};
use std::fs;
use std::path::Path;

/// The shape of the tree.
#[derive(Debug, Clone, Copy)]
pub struct Folders {
    /// Projects under `projects/`.
    pub projects: usize,
    /// Copies of `shared/` under `many/`.
    pub copies: usize,
    /// The largest document of a project, in bytes (the smallest is a
    /// sixth of it): 6000 by default; smaller for a tree of a million
    /// files that fits on a small disk.
    pub doc_size: usize,
    pub seed: u64,
}

/// A relation planted between folders (paths relative to the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    /// `folder-identical`, `folder-version`, `folder-renamed`,
    /// `folder-nested` or `folder-copies`.
    pub kind: &'static str,
    pub folders: Vec<String>,
}

/// The documents of one project: (path in the project, text).
type Project = Vec<(String, String)>;

/// Write the tree under `root`; the relations planted, in the order
/// written. Same seed, same bytes.
pub fn generate_folders(root: &Path, spec: &Folders) -> Result<Vec<Relation>> {
    let mut rng = Rng::new(spec.seed);
    let license = document(&mut rng, 1500);
    let mut planted = Vec::new();
    for n in 0..spec.projects {
        let name = format!("p{n:04}");
        let project = new_project(&mut rng, &license, spec.doc_size);
        let original = format!("projects/{name}");
        write_project(root, &original, &project)?;
        let (kind, copy, files) = match n % 5 {
            0 => ("folder-identical", format!("backup/{name}-copy"), project),
            1 => (
                "folder-version",
                format!("archive/{name}-v2"),
                version(&mut rng, project, spec.doc_size),
            ),
            2 => ("folder-renamed", format!("old/Project {n:04}"), project),
            3 => (
                "folder-nested",
                format!("backup/2023/projects/{name}"),
                project,
            ),
            _ => continue,
        };
        write_project(root, &copy, &files)?;
        planted.push(Relation {
            kind,
            folders: vec![original, copy],
        });
    }
    if spec.copies > 0 {
        let shared: Project = (0..3)
            .map(|i| (format!("part-{i}.txt"), document(&mut rng, 800)))
            .collect();
        write_project(root, "shared", &shared)?;
        let mut folders = vec!["shared".to_string()];
        for k in 0..spec.copies {
            let copy = format!("many/copy-{k:04}");
            write_project(root, &copy, &shared)?;
            folders.push(copy);
        }
        planted.push(Relation {
            kind: "folder-copies",
            folders,
        });
    }
    Ok(planted)
}

/// A project: three to six documents of `doc_size` / 6 to `doc_size`
/// bytes (1-6 KB by default) in `docs/` and `notes/`, and the LICENSE.
fn new_project(rng: &mut Rng, license: &str, doc_size: usize) -> Project {
    let mut files = vec![("LICENSE".to_string(), license.to_string())];
    for i in 0..rng.range(3, 6) {
        let dir = if i % 2 == 0 { "docs" } else { "notes" };
        let size = rng.range(doc_size as u64 / 6, doc_size as u64) as usize;
        files.push((format!("{dir}/file-{i}.txt"), document(rng, size)));
    }
    files
}

/// A later version: two documents edited, the smallest removed, a new one
/// added. (Removing the last one, when it was the largest of three, left
/// versions under half alike: no version a person would call one.)
fn version(rng: &mut Rng, mut files: Project, doc_size: usize) -> Project {
    let smallest = (1..files.len())
        .min_by_key(|&i| (files[i].1.len(), i))
        .expect("a project has documents");
    files.remove(smallest);
    for (_, text) in files.iter_mut().skip(1).take(2) {
        *text = edit(rng, text, 3);
    }
    // A third of the largest document (2 KB by default): an added file
    // larger than the project's documents would make no version.
    files.push(("docs/added.txt".to_string(), document(rng, doc_size / 3)));
    files
}

fn write_project(root: &Path, folder: &str, files: &Project) -> Result<()> {
    for (rel, text) in files {
        let p = root.join(folder).join(rel);
        let dir = p.parent().expect("a file has a folder");
        fs::create_dir_all(dir).ctx(|| format!("cannot create {}", dir.display()))?;
        fs::write(&p, text).ctx(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}

/// The manifest lines: `kind<TAB>folder<TAB>folder...`.
pub fn manifest(planted: &[Relation]) -> String {
    planted
        .iter()
        .map(|r| format!("{}\t{}\n", r.kind, r.folders.join("\t")))
        .collect()
}
