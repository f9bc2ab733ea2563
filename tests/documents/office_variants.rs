//! Office variants through the real binaries: `make report` on
//! OpenDocument and OOXML templates, macro-enabled packages, flat XML
//! OpenDocument, EPUB and legacy binary documents (the fixtures of
//! tests/data/documents, written by LibreOffice: make_variants.py). Each
//! is compared by its text: a template and the document made from it are
//! one link, a template saved in another format is the same content.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    source_root().join("tests/data/documents").join(name)
}

/// A repository of the fixtures `names` (one folder), and `make report`'s
/// json document and file table.
fn report_of(dir: &Path, names: &[&str]) -> (Value, String) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for n in names {
        std::fs::copy(fixture(n), repo.join(n)).unwrap();
    }
    let work = dir.join("work");
    let vars = ["QUIET=-q", "FORMATS=txt json"];
    run_ok(make_report_cmd(&repo, &work, &vars), None);
    (
        serde_json::from_str(&read(&work, "report.json")).unwrap(),
        read(&work, "files.tsv"),
    )
}

fn name(v: &Value) -> &str {
    v.as_str().unwrap().rsplit('/').next().unwrap()
}

/// The view column of the file table, by file name.
fn views(table: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n = f.last()?.rsplit('/').next()?;
            Some((n.to_string(), f.get(5)?.to_string()))
        })
        .collect();
    out.sort();
    out
}

/// Every link as (name a, name b, link), names sorted.
fn links(r: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for c in r["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            let (a, b) = (name(&l["a"]).to_string(), name(&l["b"]).to_string());
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            out.push((a, b, l.clone()));
        }
    }
    out.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    out
}

/// The "same content, different file" groups: each group's (name, view)
/// pairs, sorted.
fn same_content(r: &Value) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = r["same_content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let mut v: Vec<(String, String)> = g["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    (
                        name(&f["path"]).to_string(),
                        f["view"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            v.sort();
            v
        })
        .collect();
    out.sort();
    out
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn link<'a>(all: &'a [(String, String, Value)], a: &str, b: &str) -> &'a Value {
    let (a, b) = if a < b { (a, b) } else { (b, a) };
    all.iter()
        .find(|(x, y, _)| x == a && y == b)
        .map(|t| &t.2)
        .unwrap_or_else(|| panic!("no link {a} - {b} in {all:?}"))
}

#[test]
fn templates_and_their_documents_are_compared_by_text() {
    let dir = tempfile::tempdir().unwrap();
    let (r, table) = report_of(
        dir.path(),
        &[
            "memo.ott",
            "memo.odt",
            "memo.dotx",
            "memo.docm",
            "costs.ods",
            "costs.ots",
            "costs.xltx",
            "costs.xlsm",
            "review.odp",
            "review.otp",
            "review.potx",
            "review.pptm",
            "review.ppsx",
            "plan.odg",
            "plan.otg",
        ],
    );
    // Every variant is read as the document kind whose format it shares.
    assert_eq!(
        views(&table),
        pairs(&[
            ("costs.ods", "ods"),
            ("costs.ots", "ods"),
            ("costs.xlsm", "xlsx"),
            ("costs.xltx", "xlsx"),
            ("memo.docm", "docx"),
            ("memo.dotx", "docx"),
            ("memo.odt", "odt"),
            ("memo.ott", "odt"),
            ("plan.odg", "odg"),
            ("plan.otg", "odg"),
            ("review.odp", "odp"),
            ("review.otp", "odp"),
            ("review.potx", "pptx"),
            ("review.ppsx", "pptx"),
            ("review.pptm", "pptx"),
        ])
    );
    // The template and the memo made from it (two paragraphs more): one
    // link holding the whole template, exact, by their text (187 and 302
    // bytes); the same template as .dotx, and the memo as .docm, link
    // alike.
    let all = links(&r);
    for (t, d) in [
        ("memo.ott", "memo.odt"),
        ("memo.dotx", "memo.odt"),
        ("memo.docm", "memo.ott"),
        ("memo.docm", "memo.dotx"),
    ] {
        let l = link(&all, t, d);
        assert_eq!(l["exact"], true, "{l}");
        assert_eq!(l["bytes_in_common"], 187, "{l}");
        let (ta, tb) = (name(&l["a"]), name(&l["b"]));
        let of_template = if ta.ends_with(".ott") || ta.ends_with(".dotx") {
            &l["percent_of_a"]
        } else {
            assert!(tb.ends_with(".ott") || tb.ends_with(".dotx"), "{l}");
            &l["percent_of_b"]
        };
        assert_eq!(of_template, 100.0, "{l}");
    }
    // The same text in another format is the same content: a template
    // and its .dotx, a document and its .docm, a spreadsheet, a slide
    // show and a drawing with their templates and OOXML forms.
    let group = |v: &[(&str, &str)]| pairs(v);
    assert_eq!(
        same_content(&r),
        vec![
            group(&[
                ("costs.ods", "ods text"),
                ("costs.ots", "ods text"),
                ("costs.xlsm", "xlsx text"),
                ("costs.xltx", "xlsx text"),
            ]),
            group(&[("memo.docm", "docx text"), ("memo.odt", "odt text")]),
            group(&[("memo.dotx", "docx text"), ("memo.ott", "odt text")]),
            group(&[("plan.odg", "odg text"), ("plan.otg", "odg text")]),
            group(&[
                ("review.odp", "odp text"),
                ("review.otp", "odp text"),
                ("review.potx", "pptx text"),
                ("review.ppsx", "pptx text"),
                ("review.pptm", "pptx text"),
            ]),
        ]
    );
    assert_eq!(r["unreadable_documents"]["count"], 0);
}

#[test]
fn flat_opendocument_and_epub_are_the_text_of_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let (r, table) = report_of(
        dir.path(),
        &[
            "memo.ott",
            "memo.odt",
            "memo.fodt",
            "memo.epub",
            "costs.ods",
            "costs.fods",
            "review.odp",
            "review.fodp",
        ],
    );
    assert_eq!(
        views(&table),
        pairs(&[
            ("costs.fods", "ods"),
            ("costs.ods", "ods"),
            ("memo.epub", "epub"),
            ("memo.fodt", "odt"),
            ("memo.odt", "odt"),
            ("memo.ott", "odt"),
            ("review.fodp", "odp"),
            ("review.odp", "odp"),
        ])
    );
    // A flat XML document, its zipped form and its EPUB are one text.
    let group = |v: &[(&str, &str)]| pairs(v);
    assert_eq!(
        same_content(&r),
        vec![
            group(&[("costs.fods", "ods text"), ("costs.ods", "ods text")]),
            group(&[
                ("memo.epub", "epub text"),
                ("memo.fodt", "odt text"),
                ("memo.odt", "odt text"),
            ]),
            group(&[("review.fodp", "odp text"), ("review.odp", "odp text")]),
        ]
    );
    // The template is within each of them, whole.
    let all = links(&r);
    for d in ["memo.odt", "memo.fodt", "memo.epub"] {
        let l = link(&all, "memo.ott", d);
        assert_eq!(
            (&l["exact"], &l["bytes_in_common"]),
            (&true.into(), &187.into()),
            "{l}"
        );
    }
    assert_eq!(r["unreadable_documents"]["count"], 0);
}

#[test]
fn legacy_binary_documents_are_compared_by_their_text() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|d| d.join("catdoc").is_file()) {
        eprintln!("catdoc is not installed: skipped (.ci/run installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (r, table) = report_of(
        dir.path(),
        &["memo.ott", "memo.odt", "memo.doc", "costs.ods", "costs.xls"],
    );
    assert_eq!(
        views(&table),
        pairs(&[
            ("costs.ods", "ods"),
            ("costs.xls", "xls"),
            ("memo.doc", "doc"),
            ("memo.odt", "odt"),
            ("memo.ott", "odt"),
        ])
    );
    let group = |v: &[(&str, &str)]| pairs(v);
    assert_eq!(
        same_content(&r),
        vec![
            group(&[("costs.ods", "ods text"), ("costs.xls", "xls text")]),
            group(&[("memo.doc", "doc text"), ("memo.odt", "odt text")]),
        ]
    );
    let all = links(&r);
    let l = link(&all, "memo.ott", "memo.doc");
    assert_eq!(
        (&l["exact"], &l["bytes_in_common"]),
        (&true.into(), &187.into()),
        "{l}"
    );
    let mut sides = [l["view_a"].as_str().unwrap(), l["view_b"].as_str().unwrap()];
    sides.sort();
    assert_eq!(sides, ["doc text", "odt text"]);
}

#[test]
fn broken_variants_are_notes_in_the_report() {
    // A truncated .ott and .dotx, an EPUB without a chapter, a flat
    // document that is not XML after its root: each compared by its raw
    // bytes and listed with its kind.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let cut = |name: &str| {
        let b = std::fs::read(fixture(name)).unwrap();
        b[..b.len() / 2].to_vec()
    };
    std::fs::write(repo.join("cut.ott"), cut("memo.ott")).unwrap();
    std::fs::write(repo.join("cut.dotx"), cut("memo.dotx")).unwrap();
    let fodt = std::fs::read(fixture("memo.fodt")).unwrap();
    let at = fodt
        .windows(13)
        .position(|w| w == b"<office:meta>")
        .unwrap();
    let mut junk = fodt[..at].to_vec();
    junk.extend_from_slice(b"<office:body>\x00\xff not XML");
    std::fs::write(repo.join("junk.fodt"), junk).unwrap();
    let book = std::fs::read(fixture("minutes.epub")).unwrap();
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(&book[..])).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let name = f.name().to_string();
        if name.ends_with("chap_2.xhtml") {
            continue;
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
        let method = match name.as_str() {
            "mimetype" => zip::CompressionMethod::Stored,
            _ => zip::CompressionMethod::Deflated,
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        w.start_file(name.as_str(), opts).unwrap();
        std::io::Write::write_all(&mut w, &bytes).unwrap();
    }
    std::fs::write(repo.join("missing.epub"), w.finish().unwrap().into_inner()).unwrap();
    let work = dir.path().join("work");
    let out = run_ok(make_report_cmd(&repo, &work, &["FORMATS=txt json"]), None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    let mut listed: Vec<(String, String)> = r["unreadable_documents"]["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                name(&u["path"]).to_string(),
                u["note"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    listed.sort();
    let note = |k: &str| {
        format!("no text read as {k} (unreadable, or a scan or a document without text): raw bytes compared")
    };
    assert_eq!(
        listed,
        vec![
            ("cut.dotx".to_string(), note("docx")),
            ("cut.ott".to_string(), note("odt")),
            ("junk.fodt".to_string(), note("odt")),
            ("missing.epub".to_string(), note("epub")),
        ]
    );
    let table = read(&work, "files.tsv");
    assert_eq!(
        views(&table),
        pairs(&[
            ("cut.dotx", "raw/docx"),
            ("cut.ott", "raw/odt"),
            ("junk.fodt", "raw/odt"),
            ("missing.epub", "raw/epub"),
        ])
    );
    // fsim-chunk says why, file by file.
    assert!(
        stderr.contains("missing.epub: unreadable as epub: member EPUB/chap_2.xhtml: specified file not found in archive"),
        "{stderr}"
    );
    assert!(
        stderr.contains("junk.fodt: unreadable as odt: the XML ends inside 2 open elements"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cut.dotx: unreadable as docx: bad zip"),
        "{stderr}"
    );
}

/// The file table's header says when catdoc's programs were missing
/// (`office=none`): records of legacy documents kept raw for want of them
/// are then not reused as if read by their text. With all three on PATH
/// the key is absent; a raw run never writes it.
#[test]
fn missing_legacy_extractors_are_recorded_in_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::copy(fixture("memo.doc"), repo.join("memo.doc")).unwrap();
    let empty = dir.path().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let header = |path: Option<&Path>, content: &str| {
        let table = dir.path().join("files.tsv");
        let mut c = fsim("fsim-chunk");
        c.args(["-q", "--content", content, "-o", "/dev/null", "--files-out"])
            .arg(&table)
            .arg(&repo);
        if let Some(p) = path {
            c.env("PATH", p);
        }
        run_ok(c, None);
        let text = std::fs::read_to_string(&table).unwrap();
        text.lines().next().unwrap().to_string()
    };
    let without = header(Some(&empty), "auto");
    assert!(without.contains("\toffice=none"), "{without}");
    assert!(!header(Some(&empty), "raw").contains("office="));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let all = ["catdoc", "xls2csv", "catppt"]
        .iter()
        .all(|p| std::env::split_paths(&path).any(|d| d.join(p).is_file()));
    if all {
        let with = header(None, "auto");
        assert!(!with.contains("office="), "{with}");
    }
}

/// A .ppt that catppt reads no text from (LibreOffice 7.4's "MS PowerPoint
/// 97" of review.pptx: its slides' text is there, in UTF-16 records catppt
/// does not reach) keeps its raw view, and the report says so by name
/// rather than comparing it silently as bytes. Kept gzipped (600 KB of
/// mostly the default master's pictures; 11 KB gzipped).
#[test]
fn a_ppt_without_text_for_catppt_is_said_in_the_report() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|d| d.join("catppt").is_file()) {
        eprintln!("catppt is not installed: skipped (.ci/run installs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let gz = std::fs::read(fixture("review-libreoffice.ppt.gz")).unwrap();
    let mut ppt = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut ppt).unwrap();
    std::fs::write(repo.join("review.ppt"), &ppt).unwrap();
    std::fs::copy(fixture("review.pptx"), repo.join("review.pptx")).unwrap();
    let work = dir.path().join("work");
    run_ok(
        make_report_cmd(&repo, &work, &["QUIET=-q", "FORMATS=txt json"]),
        None,
    );
    let table = read(&work, "files.tsv");
    assert_eq!(
        views(&table),
        pairs(&[("review.ppt", "raw/ppt"), ("review.pptx", "pptx")])
    );
    let r: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    let listed = &r["unreadable_documents"]["listed"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(name(&listed[0]["path"]), "review.ppt");
    assert_eq!(
        listed[0]["note"],
        "no text read as ppt (unreadable, or a scan or a document without text): raw bytes compared"
    );
    let text = read(&work, "report.txt");
    assert!(text.contains("review.ppt  (no text read as ppt"), "{text}");
}
