//! Likely templates, flagged by the report: clusters whose links look like
//! a shared template rather than near-duplicates, and the `fsim-template`
//! command that marks one.

/// Smallest cluster flagged as a likely template by default.
pub const LIKELY_MIN_FILES: usize = 5;

/// Is a cluster of `files` files with these links' bytes in common most
/// likely template similarity? The report sees pairs, not chunks, so this
/// looks for the mark a template leaves on them: the cluster is (nearly) a
/// clique, and almost every link shares about the same bytes, the template;
/// true near-duplicates among its members only add a few larger links.
/// Precisely: at least `min_files` files, at least 90% of the possible
/// links, the 10th percentile of bytes in common at least 3/4 of the
/// median and under 90% of the median file size: a template leaves each
/// file a payload of its own, while a folder of versions of one document
/// (a uniform clique too) shares nearly all of each file, and those
/// near-copies are what the report is for. Returns the 10th percentile:
/// the bytes shared by almost all pairs, an estimate of the template's size.
pub fn likely_template(
    files: usize,
    commons: &[u64],
    median_size: u64,
    min_files: usize,
) -> Option<u64> {
    if files < min_files.max(3) || commons.is_empty() {
        return None;
    }
    let possible = files as u64 * (files as u64 - 1) / 2;
    if (commons.len() as u64) * 10 < possible * 9 {
        return None;
    }
    let mut v = commons.to_vec();
    v.sort_unstable();
    let p10 = v[v.len() / 10];
    let median = v[v.len() / 2];
    (p10 > 0 && p10 * 4 >= median * 3 && p10 * 10 < median_size * 9).then_some(p10)
}

/// Quote a word for a POSIX shell when it needs it.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=+,:@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The command that marks cluster `id` as a template, for the report. It
/// runs in the work folder (fsim-template's defaults are the names a
/// `make report` work folder holds), so the report does not depend on
/// where that folder is.
pub fn mark_command(id: &str) -> String {
    format!("fsim-template --cluster {}", shell_word(id))
}

#[cfg(test)]
mod likely_tests {
    use super::*;

    #[test]
    fn flags_uniform_cliques_only() {
        // 10 files, full clique, all links ~5000 bytes, two bigger.
        let mut c = vec![5000u64; 45];
        c[0] = 9000;
        c[1] = 8000;
        assert_eq!(likely_template(10, &c, 50_000, 8), Some(5000));
        // Too small a cluster.
        assert_eq!(likely_template(5, &c[..10], 50_000, 8), None);
        // Not dense enough.
        assert_eq!(likely_template(10, &c[..30], 50_000, 8), None);
        // Links of very different sizes: versions, not a template.
        let v: Vec<u64> = (1..=45).map(|i| i * 1000).collect();
        assert_eq!(likely_template(10, &v, 50_000, 8), None);
        // A folder of versions: uniform, but what is shared is nearly all
        // of each file.
        assert_eq!(likely_template(10, &c, 5400, 8), None);
        assert_eq!(likely_template(10, &c, 5600, 8), Some(5000));
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("w/report.json"), "w/report.json");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
