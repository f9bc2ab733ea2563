//! The line source's exclusions: a site's theme lines link no two pages
//! (a page across releases stays linked, texts keep their lines), in one
//! set, in groups and when
//! the names are counted in passes; a marked template's lines link no two
//! files, whose pairs carry their payloads' sizes.

use super::super::tests::entry_at;
use super::super::{
    keep_chunk_figures, line_pairs, LineFiles, LineSource, LineStats, LineTemplates, Reuse,
};
use crate::chunking::chunker::{Chunker, Cut, Method};
use crate::formats::templates::TemplateSet;
use crate::formats::{FileEntry, PercentOf};
use crate::stages::analyze::{Pair, PairStore, Thresholds};
use md5::{Digest as _, Md5};
use std::path::Path;

/// Files at these paths under `dir`, as the file table has them.
fn table(dir: &Path, files: &[(String, String)]) -> Vec<FileEntry> {
    files
        .iter()
        .enumerate()
        .map(|(f, (name, text))| {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            entry_at(f as u32, &path)
        })
        .collect()
}

/// Any size, 30 %, no cut at fsim-verify's threshold (so a theme of 40 %
/// of a page would link it), the site rule at `site_names`.
fn source(site_names: u64) -> LineSource {
    LineSource {
        max_size: None,
        catalogs: false,
        thresholds: Thresholds {
            min_bytes: 0,
            min_percent: 30.0,
            percent_of: PercentOf::Smaller,
        },
        verify_floor: 0.0,
        site_names,
    }
}

fn pairs_of(
    files: &[FileEntry],
    src: &LineSource,
    templates: Option<&LineTemplates>,
    memory: u64,
) -> (LineStats, Vec<Pair>) {
    let mut store = PairStore::new(1 << 20, None);
    let rows = LineFiles::of(files, src);
    let st = line_pairs(
        &rows,
        src,
        templates,
        2,
        memory,
        &Reuse::default(),
        &mut store,
    )
    .unwrap();
    let pairs = keep_chunk_figures(store.finish().unwrap())
        .map(Result::unwrap)
        .collect();
    (st, pairs)
}

fn ids(pairs: &[Pair]) -> Vec<(u32, u32)> {
    pairs.iter().map(|p| (p.a, p.b)).collect()
}

/// 12 pages of 12 names: a theme of 20 lines (40 % of a page) and 30
/// lines of their own; then page a of a second release, one line changed,
/// and two texts with the theme.
fn site() -> Vec<(String, String)> {
    let theme: String = (0..20)
        .map(|k| format!("<li class=\"toctree-l1\">nav item {k:02}</li>\n"))
        .collect();
    let own = |p: u8, changed: bool| -> String {
        (0..30)
            .map(|k| {
                let edit = if changed && k == 7 { " (edited)" } else { "" };
                format!("<p>page {} paragraph {k:02} text{edit}</p>\n", p as char)
            })
            .collect()
    };
    let mut files: Vec<(String, String)> = (b'a'..b'a' + 12)
        .map(|p| {
            let name = format!("r1/page-{}.html", p as char);
            (name, format!("{theme}{}", own(p, false)))
        })
        .collect();
    files.push((
        "r2/page-a.html".into(),
        format!("{theme}{}", own(b'a', true)),
    ));
    // Two texts that are not pages, holding the theme and their own lines:
    // they keep their lines, the theme's included.
    for p in [b'x', b'y'] {
        let name = format!("notes/{}.txt", p as char);
        files.push((name, format!("{theme}{}", own(p, false))));
    }
    files
}

#[test]
fn a_sites_theme_lines_link_no_pages() {
    let t = tempfile::tempdir().unwrap();
    let files = table(t.path(), &site());
    let (st, off) = pairs_of(&files, &source(0), None, 1 << 30);
    assert_eq!(st.theme_lines, 0);
    assert_eq!(
        off.len(),
        15 * 14 / 2,
        "the theme links every file: {:?}",
        ids(&off)
    );
    let release = vec![(0, 12), (13, 14)];
    let (st, on) = pairs_of(&files, &source(10), None, 1 << 30);
    assert_eq!(st.theme_lines, 20);
    assert_eq!(ids(&on), release, "page a in two releases, the two texts");
    // Pages of 12 names: 13 is not reached, nothing is left out.
    assert_eq!(pairs_of(&files, &source(13), None, 1 << 30).1, off);
    // In groups of contents, and the names counted in several passes of
    // a share of the lines each: the same.
    for memory in [2 << 10, 6 << 10, 64 << 10] {
        let (st, small) = pairs_of(&files, &source(10), None, memory);
        assert_eq!(st.theme_lines, 20, "{memory}");
        assert_eq!(small, on, "{memory}");
    }
}

#[test]
fn files_that_are_not_pages_do_not_make_a_theme() {
    let t = tempfile::tempdir().unwrap();
    let mut files = site();
    for f in &mut files {
        f.0 = f.0.replace(".html", ".txt");
    }
    let files = table(t.path(), &files);
    let (st, pairs) = pairs_of(&files, &source(10), None, 1 << 30);
    assert_eq!(st.theme_lines, 0);
    assert_eq!(pairs.len(), 15 * 14 / 2);
}

/// 6 files: a preamble of 60 lines, then 20 lines of their own; file 5's
/// are file 4's with one line changed.
fn templated() -> (String, Vec<(String, String)>) {
    let preamble: String = (0..60)
        .map(|k| format!("# Licensed under the terms of the licence, clause {k:02}.\n"))
        .collect();
    let files = (0..6)
        .map(|f| {
            let own: String = (0..20)
                .map(|k| {
                    let of = if f == 5 { 4 } else { f };
                    let edit = if f == 5 && k == 9 { " (edited)" } else { "" };
                    format!("def function_{of}_{k:02}(): return {of} * {k}{edit}\n")
                })
                .collect();
            (format!("src/m{f}.py"), format!("{preamble}{own}"))
        })
        .collect();
    (preamble, files)
}

#[test]
fn a_marked_templates_lines_link_no_files() {
    let t = tempfile::tempdir().unwrap();
    let (preamble, texts) = templated();
    let files = table(t.path(), &texts);
    let (_, without) = pairs_of(&files, &source(10), None, 1 << 30);
    assert_eq!(without.len(), 15, "the preamble links them all");
    // The template: the chunks of the preamble, as fsim-template marks
    // the chunks all the files share.
    let chunker = Chunker::new(Method::Tttd, 100).unwrap();
    let mut set = TemplateSet::default();
    let data = texts[0].1.as_bytes();
    for c in chunker.chunks(data) {
        if c.offset + c.len <= preamble.len() {
            let h = crate::formats::digest_to_u128(&Md5::digest(&data[c.offset..c.offset + c.len]));
            set.chunks.insert(h, c.len as u32);
        }
    }
    let templates = LineTemplates { set, chunker };
    for memory in [1 << 30, 2 << 10] {
        let (_, with) = pairs_of(&files, &source(10), Some(&templates), memory);
        assert_eq!(ids(&with), vec![(4, 5)], "{memory}");
        // Their sizes are the payloads', as the chunk pairs' and
        // fsim-verify's.
        let mut payload = Vec::new();
        for (f, size) in [(4, with[0].size_a), (5, with[0].size_b)] {
            crate::chunking::reader::payload(
                &chunker,
                &templates.set,
                texts[f].1.as_bytes(),
                &mut payload,
            );
            assert_eq!(size, payload.len() as u64);
            assert!(size < files[f].size / 2, "{size}");
        }
    }
}
