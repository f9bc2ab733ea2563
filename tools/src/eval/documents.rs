//! The documents of the experiment, picked from a folder of real text.

use super::*;

/// A picked document: its rank by size (1-based, as the paper's document
/// ID), path and bytes.
#[derive(Debug, Clone)]
pub struct Doc {
    pub id: usize,
    pub path: PathBuf,
    pub data: Vec<u8>,
}

/// Text: valid UTF-8 without NUL bytes.
pub(super) fn is_text(data: &[u8]) -> bool {
    !data.contains(&0) && std::str::from_utf8(data).is_ok()
}

/// Pick `cfg.count` distinct text documents from `cfg.docs` (see the
/// module documentation). Errors when the folder has too few.
pub fn pick_documents(cfg: &Config) -> Result<Vec<Doc>> {
    let mut cands: Vec<(u64, PathBuf)> = Vec::new();
    for e in walkdir::WalkDir::new(&cfg.docs)
        .follow_links(false)
        .sort_by_file_name()
    {
        let e = match e {
            Ok(e) => e,
            Err(_) => continue, // unreadable folders: not candidates
        };
        if !e.file_type().is_file() {
            continue;
        }
        let Ok(md) = e.metadata() else { continue };
        if (cfg.min_size..=cfg.max_size).contains(&md.len()) {
            cands.push((md.len(), e.into_path()));
        }
    }
    cands.sort();
    let n = cands.len();
    if n < cfg.count || cfg.count == 0 {
        return Err(Error::msg(format!(
            "{} has {n} files between {} and {} bytes: {} needed",
            cfg.docs.display(),
            cfg.min_size,
            cfg.max_size,
            cfg.count
        )));
    }
    // 0: not tried, 1: rejected, 2: picked.
    let mut state = vec![0u8; n];
    let chunker = Chunker::new(Method::Tttd, 100).expect("valid");
    let mut seen = HashSet::new();
    // (rank, bytes, sorted TTTD chunks) of the picked documents.
    type Picked = (usize, Vec<u8>, Vec<(u128, u32)>);
    let mut picked: Vec<Picked> = Vec::new();
    for k in 0..cfg.count {
        let target = if cfg.count == 1 {
            0
        } else {
            (k * (n - 1) + (cfg.count - 1) / 2) / (cfg.count - 1)
        };
        // Nearest untried candidate to the target rank, alternating sides.
        let mut found = false;
        for d in 0..2 * n {
            let idx = if d % 2 == 0 {
                target.checked_add(d / 2)
            } else {
                target.checked_sub(d / 2 + 1)
            };
            let Some(idx) = idx.filter(|&x| x < n) else {
                continue;
            };
            if state[idx] != 0 {
                continue;
            }
            state[idx] = 1;
            let Ok(data) = std::fs::read(&cands[idx].1) else {
                continue;
            };
            if !is_text(&data) || !seen.insert(Md5::digest(&data)) {
                continue;
            }
            let chunks = tttd_chunks(&chunker, &data);
            let close = picked.iter().any(|(_, d, c)| {
                let small = d.len().min(data.len()) as f64;
                shared_chunk_bytes(c, &chunks) as f64 >= cfg.distinct * small
            });
            if close {
                continue;
            }
            state[idx] = 2;
            picked.push((idx, data, chunks));
            found = true;
            break;
        }
        if !found {
            return Err(Error::msg(format!(
                "{} has only {} distinct text files between {} and {} bytes: {} needed",
                cfg.docs.display(),
                picked.len(),
                cfg.min_size,
                cfg.max_size,
                cfg.count
            )));
        }
    }
    picked.sort_by_key(|p| p.0);
    Ok(picked
        .into_iter()
        .enumerate()
        .map(|(k, (idx, data, _))| Doc {
            id: k + 1,
            path: cands[idx].1.clone(),
            data,
        })
        .collect())
}
