//! The repository of `fsim-gen --catalogs`: GNU gettext catalogs of many
//! locales over several releases. Its parts: `locales.rs` (the locales and
//! their made-up languages), `template.rs` (the entries of each release),
//! `po.rs` (a catalog written as a `.po` file).

mod locales;
mod po;
mod template;

use super::text::{words, CONTENT};
use super::Rng;
use fsim::error::{Context, Result};
use locales::{locale_codes, Locale};
use po::catalog;
use std::fs;
use std::path::Path;
use template::Template;

/// The shape of a translation-catalog repository (`fsim-gen --catalogs`):
/// `releases` release folders, each with the GNU gettext catalogs of
/// `locales` locales, `release-V/locale/L/LC_MESSAGES/django.po`.
///
/// Why it exists: the hard case of fsim-verify is a pair of
/// catalogs of two locales of one release. All the catalogs of a release
/// are filled in from one template, so they share the `#:` references,
/// the flags, the `msgid`s and the blank lines (50-70 % of their bytes,
/// 65-85 % of their lines: the shared lines are the shorter ones; Django's
/// own catalogs, which have no `#:` lines, share ~50 % of their bytes and
/// ~70 % of their lines) while every translated `msgstr` differs: many
/// short lines in common, a differing line every four or five lines all
/// along the files, the shape where an O(N·D) diff of lines does the most
/// work (D is large although the files are alike). The sample repository and `--versions` have no
/// such pairs, and real catalogs (Django's ~100 locales per app) cannot be
/// shipped with the tests; this generator writes them deterministically,
/// at any scale. Catalogs of one locale across releases are the easy,
/// very similar pairs (references renumbered, a few entries added,
/// removed or retranslated).
#[derive(Debug, Clone, Copy)]
pub struct Catalogs {
    /// Locales per release (`--catalogs`).
    pub locales: usize,
    /// Release folders (`--catalog-releases`).
    pub releases: usize,
    /// Target bytes per catalog: about the average over the locales; each
    /// locale is within about ±25 % of it (its translations are longer or
    /// shorter, more or fewer of them are missing).
    pub size: usize,
    pub seed: u64,
}

/// Write the translation-catalog repository of `spec` under `root` (see
/// [`Catalogs`]): `release-V/locale/L/LC_MESSAGES/django.po` for each
/// release V (1.0, 1.1, ...) and locale L (de, fr, es, ..., zh_Hans, ...).
/// Returns the number of bytes written.
pub fn generate_catalogs(root: &Path, spec: &Catalogs) -> Result<u64> {
    let locales: Vec<Locale> = locale_codes(spec.locales)
        .iter()
        .map(|(code, row)| Locale::new(code, *row, spec))
        .collect();
    let mut rng = Rng::new(spec.seed);
    let name = words(&mut rng, 2, CONTENT);
    let project = format!("{}-{}", name[0], name[1]);
    let mut t = Template::new(&mut rng, spec.size);
    let mut total = 0u64;
    for r in 0..spec.releases {
        if r > 0 {
            t.next_release(&mut rng, r);
        }
        let version = format!("{}.{}", 1 + r / 10, r % 10);
        for loc in &locales {
            let text = catalog(&t, loc, r, &version, &project);
            let dir = root.join(format!("release-{version}/locale/{}/LC_MESSAGES", loc.code));
            fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
            let p = dir.join("django.po");
            fs::write(&p, text.as_bytes()).ctx(|| format!("cannot write {}", p.display()))?;
            total += text.len() as u64;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_catalog(root: &Path, release: &str, locale: &str) -> String {
        let p = format!("release-{release}/locale/{locale}/LC_MESSAGES/django.po");
        fs::read_to_string(root.join(p)).unwrap()
    }

    /// Lines of `a` also in `b`, as multisets (a line of `b` matches once):
    /// (fraction of a's lines, fraction of a's bytes). An upper bound of a
    /// longest common subsequence of lines; on these catalogs it is within
    /// ~1 point of GNU diff's lines in common (the shared lines are in the
    /// same order in both files). The byte fraction is the measure of
    /// fsim-verify (bytes in common).
    fn shared(a: &str, b: &str) -> (f64, f64) {
        let mut count: std::collections::HashMap<&str, usize> = Default::default();
        for l in b.split_inclusive('\n') {
            *count.entry(l).or_default() += 1;
        }
        let (mut lines, mut bytes, mut all_lines) = (0, 0, 0);
        for l in a.split_inclusive('\n') {
            all_lines += 1;
            if let Some(c) = count.get_mut(l).filter(|c| **c > 0) {
                *c -= 1;
                lines += 1;
                bytes += l.len();
            }
        }
        (
            lines as f64 / all_lines as f64,
            bytes as f64 / a.len() as f64,
        )
    }

    /// The template's side of a catalog: its msgctxt, msgid and
    /// msgid_plural lines (with their continuation lines), in order.
    fn msgids(po: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut inside = false;
        for l in po.lines() {
            if l.starts_with("msgid") || l.starts_with("msgctxt") {
                inside = true;
            } else if !l.starts_with('"') {
                inside = false;
            }
            if inside {
                out.push(l);
            }
        }
        out
    }

    #[test]
    fn catalogs_are_deterministic() {
        let spec = Catalogs {
            locales: 5,
            releases: 2,
            size: 20_000,
            seed: 9,
        };
        let (a, b, c) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let bytes = generate_catalogs(a.path(), &spec).unwrap();
        assert_eq!(generate_catalogs(b.path(), &spec).unwrap(), bytes);
        let other = Catalogs { seed: 10, ..spec };
        generate_catalogs(c.path(), &other).unwrap();
        let mut files = 0;
        for release in ["1.0", "1.1"] {
            for locale in ["de", "fr", "es", "it", "ja"] {
                let x = read_catalog(a.path(), release, locale);
                assert_eq!(x, read_catalog(b.path(), release, locale));
                assert_ne!(x, read_catalog(c.path(), release, locale));
                files += x.len() as u64;
            }
        }
        assert_eq!(files, bytes);
        // A locale's catalog does not depend on how many others there are.
        let d = tempfile::tempdir().unwrap();
        generate_catalogs(d.path(), &Catalogs { locales: 2, ..spec }).unwrap();
        assert_eq!(
            read_catalog(d.path(), "1.1", "fr"),
            read_catalog(a.path(), "1.1", "fr")
        );
    }

    #[test]
    fn locale_codes_are_distinct() {
        let codes = locale_codes(1000);
        let set: std::collections::HashSet<&str> = codes.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(set.len(), 1000);
        assert_eq!(
            &codes[..3].iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            &["de", "fr", "es"]
        );
        assert!(set.contains("pt_BR") && set.contains("zh_Hans") && set.contains("de_AT"));
        assert_eq!(locale_codes(7)[..], codes[..7]);
    }

    #[test]
    fn catalogs_look_like_gettext_catalogs() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Catalogs {
            locales: 40,
            releases: 2,
            size: 100_000,
            seed: 2005,
        };
        generate_catalogs(dir.path(), &spec).unwrap();
        let codes: Vec<String> = locale_codes(40).into_iter().map(|c| c.0).collect();
        let first: Vec<String> = codes
            .iter()
            .map(|l| read_catalog(dir.path(), "1.0", l))
            .collect();
        let second: Vec<String> = codes
            .iter()
            .map(|l| read_catalog(dir.path(), "1.1", l))
            .collect();

        // 80-150 KB at the default size, varying per locale.
        let sizes: Vec<usize> = first.iter().chain(&second).map(String::len).collect();
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(*min >= 80_000 && *max <= 150_000, "sizes {min}..{max}");
        assert!(*max as f64 / *min as f64 > 1.15, "sizes {min}..{max}");

        for (l, po) in codes.iter().zip(&first) {
            assert!(po.contains(&format!("\"Language: {l}\\n\"\n")));
            assert!(po.contains("\"Plural-Forms: nplurals="));
            assert!(po.contains("\n\n#: ") && po.contains("\n#, python-format\n"));
            assert!(po.contains("\nmsgctxt \"") && po.contains("\nmsgid_plural \""));
            assert!(po.contains("\nmsgid \"\"\n\"") && po.contains("\nmsgstr[0] \""));
            // 10-25 % of the entries untranslated (with sampling noise).
            let entries: Vec<&str> = po.split("\n\n").skip(1).collect();
            let empty = entries
                .iter()
                .filter(|e| {
                    e.lines()
                        .filter(|l| l.starts_with("msgstr"))
                        .all(|l| l.ends_with(" \"\""))
                        && !e.lines().last().unwrap().starts_with('"')
                })
                .count() as f64
                / entries.len() as f64;
            assert!((0.07..=0.28).contains(&empty), "{l}: {empty} untranslated");
        }

        // msgids: the template's, identical in every locale of a release.
        for po in &first[1..] {
            assert_eq!(msgids(po), msgids(&first[0]));
        }
        assert_ne!(msgids(&second[0]), msgids(&first[0]));

        // Two locales of one release: 45-70 % of the bytes in common (lines
        // as multisets; about 65-85 % of the lines: the shared lines are
        // the short ones), and no translation in common.
        for i in 0..codes.len() {
            for j in (0..codes.len()).filter(|&j| j != i && (j + i) % 3 == 0) {
                let (lines, bytes) = shared(&first[i], &first[j]);
                let pair = format!(
                    "{} {}: {lines:.3} of lines, {bytes:.3} of bytes",
                    codes[i], codes[j]
                );
                assert!((0.45..=0.70).contains(&bytes), "{pair}");
                assert!((0.60..=0.90).contains(&lines), "{pair}");
                let theirs: std::collections::HashSet<&str> = first[j].lines().collect();
                let same = first[i]
                    .lines()
                    .filter(|l| {
                        l.starts_with("msgstr") && !l.ends_with(" \"\"") && theirs.contains(l)
                    })
                    .count();
                assert_eq!(same, 0, "{pair}");
            }
        }

        // One locale across two releases: more than 85 % in common.
        for (l, (a, b)) in codes.iter().zip(first.iter().zip(&second)) {
            let (lines, bytes) = shared(a, b);
            assert!(lines > 0.85 && bytes > 0.85, "{l}: {lines:.3} {bytes:.3}");
            assert!(lines < 0.97, "{l}: {lines:.3}");
        }
    }
}
