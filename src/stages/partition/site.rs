//! A generated site's template: the chunks its pages repeat.
//!
//! Sphinx, Javadoc, Doxygen or MkDocs write the same header, sidebar and
//! footer into every page. On a short page they are half its bytes, so two
//! unrelated pages of one site are ~50 % similar by fsim's figure, and a
//! site of a few thousand pages yields millions of such pairs (eight Django
//! releases with their docs: 95 % of the candidates, 89 % of the links;
//! docs/measurements/2026-11-27-releases.md). What a reader wants from such
//! a tree is which pages are versions of which.
//!
//! The rule: a chunk held by web pages (`.html`, `.htm`, `.xhtml`) of at
//! least `min_names` different *page names* is the site's template, and is
//! dropped like a chunk above the degree limit: it links no pair, the files
//! holding it have figures that are exact only where verified, and the
//! report says how many chunks it dropped. A page's name is its file name,
//! lower-cased, without its digits: one page in eight releases has one
//! name (`releases/2.2.html` is the same page wherever it is), and so do
//! numbered versions of one document (`report-v1.html` … `report-v12.html`),
//! which must stay linked. A theme's chunk is in hundreds of names; a
//! page's own text is in one, or in the few pages that quote it.
//!
//! Other files holding the chunk do not count (a source file of the site's
//! generator, say); a chunk held by pages of fewer names is never dropped
//! by this rule, so two locales of one catalog, or a folder of versions,
//! are untouched. `--site-names 0` turns it off.

use super::*;

/// Default of `--site-names`: the fewest page names that make a chunk a
/// site's template. On eight Django releases with their docs, 10 keeps
/// 14,805 of the 14,814 pairs that are one page in two releases and drops
/// 96 % of the pairs linked by the theme alone (the measurement doc).
pub const DEFAULT_SITE_NAMES: u64 = 10;

/// Each file's page name (a 32-bit hash; 0 for a file that is not a web
/// page), and the rule's threshold. 4 bytes per file.
#[derive(Debug, Clone, Default)]
pub struct PageNames {
    keys: Vec<u32>,
    min_names: u64,
    /// Distinct-name count scratch, reused between chunks.
    scratch: Vec<u32>,
}

impl PageNames {
    /// The rule turned off: no chunk is a site's template.
    pub fn off() -> Self {
        PageNames::default()
    }

    /// The page names of a file table's `files` files (`min_names` 0: off,
    /// and the table is not read).
    pub fn load(table: &Path, files: u64, min_names: u64) -> Result<Self> {
        if min_names == 0 {
            return Ok(PageNames::off());
        }
        let mut keys = vec![0u32; files as usize];
        read_file_table(table, |id, _, _, path| {
            if let Some(k) = keys.get_mut(id as usize) {
                *k = page_key(path);
            }
            Ok(())
        })?;
        Ok(PageNames::from_keys(keys, min_names))
    }

    /// From the keys themselves (tests, and `load`).
    pub fn from_keys(keys: Vec<u32>, min_names: u64) -> Self {
        PageNames {
            keys,
            min_names,
            scratch: Vec::new(),
        }
    }

    /// The threshold, 0 when off.
    pub fn min_names(&self) -> u64 {
        self.min_names
    }

    /// Whether a chunk held by these records' files is a site's template:
    /// pages of at least `min_names` names among them.
    pub fn is_template(&mut self, recs: &[(u32, u32)]) -> bool {
        if self.min_names < 2 || (recs.len() as u64) < self.min_names {
            return false;
        }
        self.scratch.clear();
        self.scratch.extend(
            recs.iter()
                .filter_map(|&(f, _)| self.keys.get(f as usize).copied())
                .filter(|&k| k != 0),
        );
        if (self.scratch.len() as u64) < self.min_names {
            return false;
        }
        self.scratch.sort_unstable();
        self.scratch.dedup();
        self.scratch.len() as u64 >= self.min_names
    }
}

/// A file's page name as a nonzero 32-bit hash, or 0 when its path (as
/// the file table escapes it) does not name a web page. Two names that
/// collide only count as one, which can keep a chunk, never drop one.
pub fn page_key(path: &[u8]) -> u32 {
    let name = match memchr::memrchr(b'/', path) {
        Some(i) => &path[i + 1..],
        None => path,
    };
    let is_page = [&b".html"[..], b".htm", b".xhtml"].iter().any(|ext| {
        name.len() > ext.len() && name[name.len() - ext.len()..].eq_ignore_ascii_case(ext)
    });
    if !is_page {
        return 0;
    }
    // FNV-1a over the name, lower-cased, without its digits (no copy: this
    // runs for every file of the table).
    let mut h: u32 = 0x811c_9dc5;
    for &b in name.iter().filter(|b| !b.is_ascii_digit()) {
        h = (h ^ b.to_ascii_lowercase() as u32).wrapping_mul(0x0100_0193);
    }
    h.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_ignore_case_digits_and_folders() {
        let k = page_key(b"django-3.0.14-html/releases/2.2.20.html");
        assert_ne!(k, 0);
        assert_eq!(k, page_key(b"django-5.1.4-html/releases/3.1.14.HTML"));
        assert_eq!(
            page_key(b"a/report-v1.html"),
            page_key(b"b/report-v12.html")
        );
        assert_ne!(k, page_key(b"x/index.html"));
        assert_eq!(page_key(b"x/index.py"), 0);
        assert_eq!(page_key(b"x/.html"), 0);
        assert_ne!(page_key(b"x/page.htm"), 0);
        assert_ne!(page_key(b"x/page.xhtml"), 0);
    }

    #[test]
    fn a_chunk_is_a_template_from_min_names_page_names() {
        // Files 0..12 are pages of 12 names; 12..24 one page in 12
        // releases; 24.. are not pages.
        let mut keys: Vec<u32> = (0..12)
            .map(|i| page_key(format!("site/page{}.html", char::from(b'a' + i as u8)).as_bytes()))
            .collect();
        keys.extend((0..12).map(|r| page_key(format!("r{r}/intro.html").as_bytes())));
        keys.extend((0..12).map(|i| page_key(format!("src/m{i}.py").as_bytes())));
        let mut p = PageNames::from_keys(keys, 10);
        let recs = |ids: std::ops::Range<u32>| ids.map(|f| (f, 100)).collect::<Vec<_>>();
        assert!(p.is_template(&recs(0..12)));
        assert!(p.is_template(&recs(2..12)));
        assert!(!p.is_template(&recs(3..12)), "9 names");
        assert!(!p.is_template(&recs(12..24)), "one page in 12 releases");
        assert!(!p.is_template(&recs(24..36)), "not pages");
        let mut mixed = recs(3..12);
        mixed.extend(recs(12..36));
        assert!(p.is_template(&mixed), "9 names + intro = 10");
        assert!(!PageNames::from_keys(vec![1, 2, 3], 0).is_template(&recs(0..3)));
    }
}
