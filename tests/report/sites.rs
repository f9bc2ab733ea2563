//! Generated sites: the theme every page of a Sphinx or Javadoc
//! site repeats links no pair by default (fsim-partition --site-names), the
//! versions of each page across releases are still found with their exact
//! figures, numbered versions of one page are not taken for a site, and
//! the report says what it ignored. `SITE_NAMES=0` gives the links back.

use crate::common;

use common::site_repo::*;
use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Two releases of a 14-page site, and twelve numbered versions of one
/// page (`notes/report-v<N>.html`, no theme) that must stay one family.
fn repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    write_site(&repo, 2, PAGES.len());
    let notes = repo.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    for v in 1..=12u64 {
        let text: String = (0..60u64)
            .map(|i| {
                let seed = if i == v { 500 + v } else { 400 };
                format!("<p>{}</p>\n", words(seed, i))
            })
            .collect();
        std::fs::write(notes.join(format!("report-v{v}.html")), text).unwrap();
    }
    repo
}

fn report(repo: &Path, work: &Path, vars: &[&str]) -> serde_json::Value {
    let mut c = make_cmd(
        repo,
        work,
        &[&["FORMATS=txt json"], vars].concat(),
        "report",
    );
    c.arg("-s");
    run_ok(c, None);
    serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap()
}

/// Every link of the report as (a, b, bytes in common), paths relative to
/// the repository.
fn links(report: &serde_json::Value, repo: &Path) -> BTreeSet<(String, String, u64)> {
    let rel = |v: &serde_json::Value| {
        let p = v.as_str().unwrap();
        p.strip_prefix(&format!("{}/", repo.display()))
            .unwrap_or(p)
            .to_string()
    };
    report["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["links"].as_array().unwrap().iter())
        .map(|l| {
            (
                rel(&l["a"]),
                rel(&l["b"]),
                l["bytes_in_common"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_sites_theme_links_no_pages_and_their_versions_stay() {
    let t = tempfile::tempdir().unwrap();
    let repo = repo(t.path());
    let work = t.path().join("work");
    let json = report(&repo, &work, &[]);
    let found = links(&json, &repo);
    let mut expected = BTreeSet::new();
    for (p, name) in PAGES.iter().enumerate() {
        // Release 1 rewrote line 1 of the page's text: the rest is common.
        let changed = page_text(p, 0).lines().nth(1).unwrap().len() as u64 + 1;
        expected.insert((
            format!("site-0/topics/{name}.html"),
            format!("site-1/topics/{name}.html"),
            page(p, 0).len() as u64 - changed,
        ));
    }
    let pairs: BTreeSet<(String, String)> =
        found.iter().map(|l| (l.0.clone(), l.1.clone())).collect();
    for a in 1..=12 {
        for b in a + 1..=12 {
            let (x, y) = (
                format!("notes/report-v{a}.html"),
                format!("notes/report-v{b}.html"),
            );
            assert!(
                pairs.contains(&(x.clone(), y.clone())) || pairs.contains(&(y, x)),
                "numbered versions {a} and {b} of one page are not linked: {found:#?}"
            );
        }
    }
    let site: BTreeSet<_> = found
        .into_iter()
        .filter(|l| l.0.starts_with("site-"))
        .collect();
    assert_eq!(
        site, expected,
        "the site's links are its pages' versions, exact"
    );
    assert!(
        json["summary"]["site_template_chunks"].as_u64().unwrap() > 0,
        "{:#}",
        json["summary"]
    );
    let txt = std::fs::read_to_string(work.join("report.txt")).unwrap();
    assert!(
        txt.contains("chunks repeated in web pages of 10 or more names were ignored as a generated site's template"),
        "{txt}"
    );
}

#[test]
fn site_names_0_links_different_pages_by_their_theme() {
    let t = tempfile::tempdir().unwrap();
    let repo = repo(t.path());
    let json = report(&repo, &t.path().join("work"), &["SITE_NAMES=0"]);
    let found = links(&json, &repo);
    let theme_links = found
        .iter()
        .filter(|l| l.0.starts_with("site-") && l.0.rsplit('/').next() != l.1.rsplit('/').next())
        .count();
    // 28 pages, 14 pairs of versions: every other pair is linked by the theme.
    assert_eq!(theme_links, 28 * 27 / 2 - 14, "{found:#?}");
    assert_eq!(json["summary"]["site_template_chunks"], 0);
}
