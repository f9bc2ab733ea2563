//! The same words in any form are the same text: a Word file, its PDF and
//! its OpenDocument as LibreOffice saves them, a PDF printed by another
//! program (its own line breaks, page numbers) and a mail wrapped at 72
//! columns (tests/data/documents/make_cross.py: 2,400 words of the GNU GPL
//! 3). Their views are prose as sentences (`content::prose`), so every
//! pair of them is one link near 100 %, each side named by its view.

use crate::common;

use common::*;
use serde_json::Value;
use std::process::Command;

/// The forms of one text that are compared as prose, and their views.
const FORMS: [(&str, &str); 5] = [
    ("contract.docx", "docx text"),
    ("contract.odt", "odt text"),
    ("contract.pdf", "pdf text"),
    ("contract-printed.pdf", "pdf text"),
    ("contract.eml", "mail headers and bodies"),
];

fn name(v: &Value) -> &str {
    v.as_str().unwrap().rsplit('/').next().unwrap()
}

#[test]
fn the_same_words_in_every_format_are_one_link_near_100_percent() {
    if Command::new("pdftotext").arg("-v").output().is_err() {
        eprintln!("skipped: pdftotext (poppler-utils) is not installed");
        assert!(std::env::var_os("CI").is_none(), "CI: pdftotext is missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let data = source_root().join("tests/data/documents");
    for (f, _) in FORMS {
        std::fs::copy(data.join(f), repo.join(f)).unwrap();
    }
    let work = dir.path().join("work");
    run_ok(
        make_report_cmd(&repo, &work, &["QUIET=-q", "FORMATS=txt json"]),
        None,
    );
    let r: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    let clusters = r["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "one cluster: {r}");
    let links = clusters[0]["links"].as_array().unwrap();
    // Every pair of the five forms: 10 links.
    assert_eq!(
        links.len(),
        FORMS.len() * (FORMS.len() - 1) / 2,
        "{links:?}"
    );
    for l in links {
        let view = |side: &str| {
            let n = name(&l[side]);
            FORMS.iter().find(|(f, _)| *f == n).unwrap().1
        };
        assert_eq!(l["view_a"], view("a"), "{l}");
        assert_eq!(l["view_b"], view("b"), "{l}");
        assert_eq!(l["exact"], true, "{l}");
        for side in ["percent_of_a", "percent_of_b"] {
            let p = l[side].as_f64().unwrap();
            assert!(
                p >= 95.0,
                "{} <-> {}: {side} {p}",
                name(&l["a"]),
                name(&l["b"])
            );
        }
    }
    // The text names both views of the docx and its PDF.
    let text = read(&work, "report.txt");
    assert!(
        text.lines()
            .any(|t| t.contains("contract.docx  [docx text] <-> ")
                && t.contains("contract.pdf  [pdf text]: ")),
        "{text}"
    );
}

/// A view's lines for a reader: the docx's paragraphs and the PDF's
/// printed lines both become the license's sentences.
#[test]
fn a_docx_and_its_pdf_have_the_same_sentences() {
    if Command::new("pdftotext").arg("-v").output().is_err() {
        eprintln!("skipped: pdftotext (poppler-utils) is not installed");
        return;
    }
    let data = source_root().join("tests/data/documents");
    let view = |f: &str| -> Vec<String> {
        let v = fsim::content::view(
            &std::fs::read(data.join(f)).unwrap(),
            &fsim::content::Limits::default(),
        );
        String::from_utf8(v.bytes)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let (docx, pdf) = (view("contract.docx"), view("contract.pdf"));
    // One paragraph line of the docx, two printed lines of the PDF.
    let line = "The licenses for most software and other practical works are designed to take away your freedom to share and change the works.";
    for v in [&docx, &pdf] {
        assert!(v.iter().any(|l| l == line), "{v:?}");
    }
    let pdf_lines: std::collections::HashSet<&String> = pdf.iter().collect();
    let shared = docx.iter().filter(|l| pdf_lines.contains(l)).count();
    assert!(
        shared * 100 >= docx.len() * 95,
        "{shared} of {}",
        docx.len()
    );
}
