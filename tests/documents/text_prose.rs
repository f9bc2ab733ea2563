//! Text files that read as prose are compared as sentences
//! (`content::plaintext`), like the text of a document: the same words
//! wrapped at 72 columns are one link with the .docx and the .pdf of them,
//! a version re-wrapped after an edit is a version, not a rewrite, and a
//! compressed copy at another width is the same content. Code and
//! catalogs keep their lines.

use crate::common;

use common::*;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::Command;

fn name(v: &Value) -> &str {
    v.as_str().unwrap().rsplit('/').next().unwrap()
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(source_root().join("tests/data").join(name)).unwrap()
}

/// The words of `text` wrapped at `width` columns, paragraphs kept.
fn rewrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    for para in text.split("\n\n") {
        let mut line = String::new();
        for w in para.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + w.len() > width {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
        out.push_str(&line);
        out.push_str("\n\n");
    }
    out
}

fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// The links of the report's clusters whose sides are named `a` and `b`.
fn link<'a>(r: &'a Value, a: &str, b: &str) -> Option<&'a Value> {
    r["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["links"].as_array().unwrap())
        .find(|l| {
            let (x, y) = (name(&l["a"]), name(&l["b"]));
            (x, y) == (a, b) || (x, y) == (b, a)
        })
}

/// Both sides of a link at `min` % or more.
fn assert_at_least(l: &Value, min: f64) {
    for side in ["percent_of_a", "percent_of_b"] {
        let p = l[side].as_f64().unwrap();
        assert!(p >= min, "{side} {p} < {min}: {l}");
    }
}

/// `make report` of `repo` into `work` (`FORMATS` as given), its json.
fn report(repo: &Path, work: &Path, formats: &str) -> Value {
    run_ok(
        make_report_cmd(repo, work, &["QUIET=-q", &format!("FORMATS={formats}")]),
        None,
    );
    serde_json::from_str(&read(work, "report.json")).unwrap()
}

/// The view named on `file`'s side of link `l`.
fn view_of<'a>(l: &'a Value, file: &str) -> &'a Value {
    &l[if name(&l["a"]) == file {
        "view_a"
    } else {
        "view_b"
    }]
}

/// The view column of each file of the work folder's file table, by name.
fn views(work: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = read(work, "files.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let path = f.last().unwrap();
            (
                path.rsplit('/').next().unwrap().to_string(),
                f[5].to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_wrapped_text_is_one_link_with_the_docx_and_the_pdf_of_its_words() {
    if Command::new("pdftotext").arg("-v").output().is_err() {
        eprintln!("skipped: pdftotext (poppler-utils) is not installed");
        assert!(std::env::var_os("CI").is_none(), "CI: pdftotext is missing");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for f in ["contract.docx", "contract.pdf", "contract.txt"] {
        std::fs::write(repo.join(f), fixture(&format!("documents/{f}"))).unwrap();
    }
    let work = dir.path().join("work");
    let r = report(&repo, &work, "txt json");
    for other in ["contract.docx", "contract.pdf"] {
        let l = link(&r, "contract.txt", other).unwrap_or_else(|| panic!("{other}: {r}"));
        assert_at_least(l, 90.0);
        assert_eq!(view_of(l, "contract.txt"), "prose text", "{l}");
    }
    assert!(views(&work).contains(&("contract.txt".into(), "prose".into())));
}

/// A version re-wrapped at 60 columns after one sentence was rewritten is
/// one link at 95 % or more with its original (line for line, re-wrapped
/// lines share almost nothing); the same words gzip'd at 100 columns are
/// the same content as the original. A Python module and a catalog keep
/// their raw view, at the figures of a run with `CONTENT=raw`.
#[test]
fn rewrapped_versions_are_versions_and_code_keeps_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    for d in ["a", "b", "c", "code"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    let text = String::from_utf8(fixture("documents/contract.txt")).unwrap();
    let edited = text.replacen(
        "For the developers' and authors' protection, the GPL clearly explains",
        "To protect the developers and the authors, the licence plainly explains",
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(repo.join("a/contract.txt"), &text).unwrap();
    std::fs::write(repo.join("b/contract.txt"), rewrap(&edited, 60)).unwrap();
    std::fs::write(repo.join("c/contract.txt.gz"), gzip(&rewrap(&text, 100))).unwrap();
    let module = String::from_utf8(fixture("prose-rule/module.py")).unwrap();
    let catalog = String::from_utf8(fixture("prose-rule/messages.po")).unwrap();
    let code = repo.join("code");
    std::fs::write(code.join("module.py"), &module).unwrap();
    std::fs::write(
        code.join("module-v2.py"),
        module.replace("oldest first", "newest last"),
    )
    .unwrap();
    std::fs::write(code.join("messages.po"), &catalog).unwrap();
    std::fs::write(
        code.join("messages-v2.po"),
        catalog.replacen("SMALL ROOM", "LARGE HALL", 1),
    )
    .unwrap();

    let work = dir.path().join("work");
    let r = report(&repo, &work, "json");
    let versions = link(&r, "contract.txt", "contract.txt").unwrap_or_else(|| panic!("{r}"));
    assert_at_least(versions, 95.0);
    assert_eq!(versions["view_a"], "prose text", "{versions}");
    assert_eq!(versions["view_b"], "prose text", "{versions}");
    let groups = r["same_content"].as_array().unwrap();
    let mut group: Vec<(String, &str)> = groups
        .iter()
        .flat_map(|g| g["files"].as_array().unwrap())
        .map(|f| {
            let path: Vec<&str> = f["path"].as_str().unwrap().rsplit('/').take(2).collect();
            (
                format!("{}/{}", path[1], path[0]),
                f["view"].as_str().unwrap(),
            )
        })
        .collect();
    group.sort();
    assert_eq!(
        group,
        [
            ("a/contract.txt".to_string(), "prose text"),
            ("c/contract.txt.gz".to_string(), "gzip content")
        ],
        "{groups:?}"
    );
    let views = views(&work);
    for f in ["module.py", "module-v2.py", "messages.po", "messages-v2.po"] {
        assert!(views.contains(&(f.into(), "raw".into())), "{f}: {views:?}");
    }

    let raw_work = dir.path().join("raw");
    run_ok(
        make_report_cmd(
            &repo,
            &raw_work,
            &["QUIET=-q", "FORMATS=json", "CONTENT=raw"],
        ),
        None,
    );
    let raw: Value = serde_json::from_str(&read(&raw_work, "report.json")).unwrap();
    for (a, b) in [
        ("module.py", "module-v2.py"),
        ("messages.po", "messages-v2.po"),
    ] {
        let (l, was) = (link(&r, a, b).unwrap(), link(&raw, a, b).unwrap());
        for field in ["percent_of_a", "percent_of_b", "exact"] {
            assert_eq!(l[field], was[field], "{a} {b} {field}");
        }
        assert_eq!((&l["view_a"], &l["view_b"]), (&"raw".into(), &"raw".into()));
    }
}

/// The words of `text` as an HTML document a converter writes: a
/// paragraph a `<p>`, wrapped at 80 columns inside it, entities for the
/// quotes; `head` goes in its `<head>`.
fn html_page(text: &str, head: &str) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Contract</title>\n{head}<style>p {{ margin: 0 0 1em }}</style>\n</head>\n<body>\n"
    );
    for para in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let escaped = para.replace('&', "&amp;").replace('\'', "&#39;");
        out.push_str("<p>");
        out.push_str(rewrap(&escaped, 80).trim_end());
        out.push_str("</p>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// A stand-alone HTML document of the same words as a .docx is one link
/// with it at 90 % or more, compared as `html text`; a page of the same
/// words that loads a site's style sheet is a page of a generated site
/// and keeps its raw bytes, and so does a template.
#[test]
fn an_html_document_is_one_link_with_the_docx_of_its_words() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("site")).unwrap();
    let text = String::from_utf8(fixture("documents/contract.txt")).unwrap();
    std::fs::write(
        repo.join("contract.docx"),
        fixture("documents/contract.docx"),
    )
    .unwrap();
    std::fs::write(repo.join("contract.html"), html_page(&text, "")).unwrap();
    std::fs::write(
        repo.join("site/page.html"),
        html_page(
            &text,
            "<link rel=\"stylesheet\" href=\"_static/basic.css\">\n",
        ),
    )
    .unwrap();
    std::fs::write(
        repo.join("site/template.html"),
        html_page(&text, "<meta name=\"author\" content=\"{{ author }}\">\n"),
    )
    .unwrap();
    let work = dir.path().join("work");
    let r = report(&repo, &work, "json");
    let l = link(&r, "contract.html", "contract.docx").unwrap_or_else(|| panic!("{r}"));
    assert_at_least(l, 90.0);
    assert_eq!(view_of(l, "contract.html"), "html text", "{l}");
    let views = views(&work);
    for (f, v) in [
        ("contract.html", "html"),
        ("page.html", "raw"),
        ("template.html", "raw"),
    ] {
        assert!(views.contains(&(f.into(), v.into())), "{f}: {views:?}");
    }
}
