//! A generated documentation site in several releases: every page repeats
//! one theme (a long `<head>`, header, sidebar and footer) around its own
//! text, as Sphinx or Javadoc write them. The theme is most of a page, so
//! two different pages are ~70 % similar by their bytes; a page and its
//! next release's version are ~97 %.

use std::path::Path;

/// Page names of the site: no digits, all different.
pub const PAGES: [&str; 14] = [
    "install",
    "tutorial",
    "models",
    "views",
    "forms",
    "admin",
    "testing",
    "caching",
    "logging",
    "security",
    "signals",
    "sessions",
    "settings",
    "migrations",
];

/// A deterministic line of words, unique for `(seed, i)`.
pub fn words(seed: u64, i: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let vocab = [
        "request", "response", "template", "query", "field", "model", "cache", "signal", "session",
        "user", "form", "view", "route", "header", "token", "index",
    ];
    let mut s = String::new();
    for _ in 0..8 {
        x ^= x >> 31;
        x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
        s.push_str(vocab[(x >> 60) as usize]);
        s.push(' ');
    }
    s.push_str(&format!("{:x}", x >> 40));
    s
}

/// The theme's lines before a page's text (60 lines, ~3.3 KB).
pub fn theme_head() -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n\
         <link rel=\"stylesheet\" href=\"_static/theme.css\">\n",
    );
    for i in 0..56 {
        s.push_str(&format!(
            "<li class=\"toctree-l1\"><a href=\"#\">{}</a></li>\n",
            words(7, i)
        ));
    }
    s.push_str("</ul></nav>\n<div class=\"body\">\n");
    s
}

/// The theme's lines after a page's text.
pub fn theme_foot() -> String {
    let mut s = String::from("</div>\n<footer>\n");
    for i in 0..6 {
        s.push_str(&format!("<p class=\"footer\">{}</p>\n", words(8, i)));
    }
    s.push_str("</footer></body></html>\n");
    s
}

/// Page `p`'s own text (24 lines) in release `r`: release r > 0 rewrites
/// line r of it.
pub fn page_text(p: usize, r: usize) -> String {
    (0..24u64)
        .map(|i| {
            let seed = if r > 0 && i == r as u64 {
                1000 + r as u64
            } else {
                100
            };
            format!("<p>{} {}</p>\n", PAGES[p], words(seed + p as u64, i))
        })
        .collect()
}

/// Page `p` of release `r`, theme included.
pub fn page(p: usize, r: usize) -> String {
    format!("{}{}{}", theme_head(), page_text(p, r), theme_foot())
}

/// `releases` releases of the site's first `pages` pages under
/// `repo/site-<r>/`, one folder per page (`<name>/index.html` would make
/// every page one name: the pages are `topics/<name>.html`).
pub fn write_site(repo: &Path, releases: usize, pages: usize) {
    for r in 0..releases {
        let dir = repo.join(format!("site-{r}")).join("topics");
        std::fs::create_dir_all(&dir).unwrap();
        for (p, name) in PAGES.iter().enumerate().take(pages) {
            std::fs::write(dir.join(format!("{name}.html")), page(p, r)).unwrap();
        }
    }
}
