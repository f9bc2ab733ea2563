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
/// median and under 90% of the median file size (a template leaves each
/// file a payload of its own, while a folder of versions of one document,
/// a uniform clique too, shares nearly all of each file), and at most 3/4
/// of the files with a closer relative: `closest` holds each file's most
/// bytes in common with another file of the cluster, and a file whose
/// closest relative shares 1/8 more than the 10th percentile has more in
/// common with it than the template. A chain of versions, each edited from
/// the one before, is such a cluster: every version's neighbours share far
/// more than the versions far apart, and marking those shared chunks as a
/// template would hide the versions from each other. Files sharing a
/// second, nested template, or near-duplicates among a template's files,
/// have closer relatives too, but not nearly all files do. Returns the 10th
/// percentile: the bytes shared by almost all pairs, an estimate of the
/// template's size.
pub fn likely_template(
    files: usize,
    commons: &[u64],
    median_size: u64,
    min_files: usize,
    closest: &[u64],
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
    uniform_template(p10, median, median_size, closest)
}

/// The tests of [`likely_template`] once its 10th percentile and median
/// are known.
pub fn uniform_template(p10: u64, median: u64, median_size: u64, closest: &[u64]) -> Option<u64> {
    let closer = closest.iter().filter(|&&c| c * 8 >= p10 * 9).count();
    uniform_template_of(p10, median, median_size, closer, closest.len())
}

/// [`uniform_template`] with its closer relatives counted: `closer` of
/// the cluster's `files` files have one (for a cluster whose figures come
/// sorted, without a list of them).
pub fn uniform_template_of(
    p10: u64,
    median: u64,
    median_size: u64,
    closer: usize,
    files: usize,
) -> Option<u64> {
    (p10 > 0 && p10 * 4 >= median * 3 && p10 * 10 < median_size * 9 && closer * 4 <= files * 3)
        .then_some(p10)
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
        // Each file's closest relative: the template, but for the three
        // files of the two bigger links.
        let mut closest = vec![5000u64; 10];
        closest[..3].copy_from_slice(&[9000, 9000, 8000]);
        assert_eq!(likely_template(10, &c, 50_000, 8, &closest), Some(5000));
        // Too small a cluster.
        assert_eq!(likely_template(5, &c[..10], 50_000, 8, &closest[..5]), None);
        // Not dense enough.
        assert_eq!(likely_template(10, &c[..30], 50_000, 8, &closest), None);
        // Links of very different sizes: versions, not a template.
        let v: Vec<u64> = (1..=45).map(|i| i * 1000).collect();
        assert_eq!(likely_template(10, &v, 50_000, 8, &closest), None);
        // A folder of versions: uniform, but what is shared is nearly all
        // of each file.
        assert_eq!(likely_template(10, &c, 5400, 8, &closest), None);
        assert_eq!(likely_template(10, &c, 5600, 8, &closest), Some(5000));
    }

    #[test]
    fn a_chain_of_versions_is_not_a_template() {
        // 10 versions of a 20,000-byte document, each 25 lines of 400
        // edited from the one before (what tests/report/templates.rs writes): a
        // pair k versions apart shares about 20,000 × 0.94^k bytes, and
        // the links under half of the file are not kept.
        let near = |k: i32| (20_000.0 * 0.94f64.powi(k)) as u64;
        let commons: Vec<u64> = (0..10)
            .flat_map(|i| (i + 1..10).map(move |j| j - i))
            .map(near)
            .filter(|&c| c >= 10_000)
            .collect();
        assert!(commons.len() * 10 >= 45 * 9, "{} links", commons.len());
        // Uniform enough for the other tests: only the closest relatives
        // tell the versions apart.
        let mut v = commons.clone();
        v.sort_unstable();
        let (p10, median) = (v[v.len() / 10], v[v.len() / 2]);
        assert!(
            p10 * 4 >= median * 3 && p10 * 10 < 20_000 * 9,
            "{p10} {median}"
        );
        let closest = vec![near(1); 10];
        assert_eq!(likely_template(10, &commons, 20_000, 5, &closest), None);
        // The same links with every file's closest relative at the 10th
        // percentile would be a template.
        assert_eq!(
            likely_template(10, &commons, 20_000, 5, &[p10; 10]),
            Some(p10)
        );
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("w/report.json"), "w/report.json");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
