//! Long lines through the real binaries (fsim-chunk .. fsim-report, the
//! defaults): two versions of a one-line XML file (16 KB, one attribute
//! changed), of minified JavaScript and of single-line JSON are each one
//! exact link at about 99 %, where whole lines gave nothing in common and
//! fsim-verify dropped them; files of ordinary lines keep the bytes of
//! their common lines; a small one-line JSON edited throughout, which no
//! chunk survives, is a candidate of the line source by its pieces; and
//! real minified releases (tests/data/minified) are linked.

use crate::common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// A one-line XML catalog of about 16 KB; `v` is one book's price.
fn xml(v: &str) -> String {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><catalog xmlns="urn:example:books">"#,
    );
    for i in 0..90 {
        let price = if i == 45 {
            v.to_string()
        } else {
            format!("{}.95", 5 + i % 40)
        };
        s.push_str(&format!(
            r#"<book id="bk{i:03}" lang="en"><author>Author number {}, {}</author><title>Title of volume {i}</title><genre>{}</genre><price currency="USD">{price}</price><publish_date>20{:02}-{:02}-{:02}</publish_date></book>"#,
            i * 7 % 31,
            ["Smith", "Garcia", "Nguyen", "Okafor"][i % 4],
            ["Fiction", "Computer", "Romance", "Horror", "Poetry"][i % 5],
            i % 24,
            1 + i % 12,
            1 + i % 28
        ));
    }
    s.push_str("</catalog>");
    s
}

/// Minified JavaScript of about 20 KB on one line; `v` is one constant.
fn minified_js(v: &str) -> String {
    let mut s = String::from("!function(e,t){\"use strict\";var n={};");
    for i in 0..260 {
        let k = if i == 130 {
            v.to_string()
        } else {
            (i * 13 % 97).to_string()
        };
        s.push_str(&format!(
            "function m{i}(e,t){{var r=e[{k}]||t;if(r&&r.length>{}){{return r.slice(0,{})}}return n.f{i}=r,e}}",
            i % 17,
            i % 9 + 1
        ));
    }
    s.push_str("e.lib=n}(window,document);");
    s
}

/// Single-line JSON of about 12 KB; `v` is one record's name.
fn json(v: &str) -> String {
    let rows: Vec<String> = (0..150)
        .map(|i| {
            let name = if i == 75 {
                v.to_string()
            } else {
                format!("item-{i}")
            };
            format!(
                r#"{{"id":{i},"name":"{name}","tags":["t{}","t{}"],"score":{}.{},"active":{}}}"#,
                i % 11,
                i % 7,
                i * 37 % 100,
                i % 10,
                i % 3 == 0
            )
        })
        .collect();
    format!("{{\"version\":3,\"rows\":[{}]}}\n", rows.join(","))
}

/// A file of ordinary lines and its version with every 20th line changed,
/// and the bytes of their common lines.
fn ordinary() -> (String, String, u64) {
    let (mut a, mut b, mut common) = (String::new(), String::new(), 0u64);
    for i in 0..300 {
        let l = format!(
            "    let value_{i} = compute({i}, \"argument {}\");\n",
            i * 7
        );
        a.push_str(&l);
        if i % 20 == 7 {
            b.push_str(&format!("    let value_{i} = changed({i});\n"));
        } else {
            b.push_str(&l);
            common += l.len() as u64;
        }
    }
    (a, b, common)
}

/// A one-line JSON under the line source's 4 KiB, edited every ~200 bytes
/// (no chunk of the default 100 bytes survives enough to reach the floor).
fn small_json(edit: bool) -> String {
    let rows: Vec<String> = (0..40)
        .map(|i| {
            let v = if edit && i % 2 == 0 {
                format!("{}", i * 3 + 1)
            } else {
                format!("{}", i * 3)
            };
            format!(r#"{{"key":"k{i}","label":"Label of entry {i}","value":{v}}}"#)
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

/// (a, b) paths (ends) -> (bytes in common, percent of a, exact) of the
/// report's links.
fn links(report: &Value) -> HashMap<(String, String), (u64, f64, bool)> {
    let mut out = HashMap::new();
    for c in report["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            let name = |k: &str| {
                let p = l[k].as_str().unwrap();
                p.rsplit('/').next().unwrap().to_string()
            };
            let (a, b) = (name("a"), name("b"));
            let v = (
                l["bytes_in_common"].as_u64().unwrap(),
                l["percent_of_a"].as_f64().unwrap(),
                l["exact"].as_bool().unwrap(),
            );
            out.insert((a.clone().min(b.clone()), a.max(b)), v);
        }
    }
    out
}

fn write(repo: &Path, files: &[(&str, String)]) {
    std::fs::create_dir_all(repo).unwrap();
    for (name, text) in files {
        std::fs::write(repo.join(name), text).unwrap();
    }
}

#[test]
fn one_line_versions_are_one_link_at_99_percent() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let (lines_a, lines_b, lines_common) = ordinary();
    let files = [
        ("catalog-1.xml", xml("44.95")),
        ("catalog-2.xml", xml("39.95")),
        ("app-1.min.js", minified_js("42")),
        ("app-2.min.js", minified_js("43")),
        ("data-1.json", json("widget")),
        ("data-2.json", json("gadget")),
        ("lines-1.rs", lines_a),
        ("lines-2.rs", lines_b),
        ("small-1.json", small_json(false)),
        ("small-2.json", small_json(true)),
    ];
    assert!(files[0].1.len() > 15_000 && !files[0].1.contains('\n'));
    assert!(files[2].1.len() > 15_000 && files[4].1.len() > 10_000);
    assert!(files[8].1.len() < 4096);
    write(&repo, &files);
    let report = pipeline(&repo, &t.path().join("work"), &[]);
    let got = links(&report);
    let size = |name: &str| files.iter().find(|f| f.0 == name).unwrap().1.len() as u64;
    for (a, b) in [
        ("catalog-1.xml", "catalog-2.xml"),
        ("app-1.min.js", "app-2.min.js"),
        ("data-1.json", "data-2.json"),
    ] {
        let key = (a.to_string(), b.to_string());
        let &(common, pct, exact) = got.get(&key).unwrap_or_else(|| panic!("{key:?}: {got:?}"));
        assert!(exact, "{key:?}");
        let most = size(a).max(size(b));
        assert!(
            common < most && common * 100 >= most * 98,
            "{key:?}: {common} of {most}"
        );
        assert!(pct >= 98.0, "{key:?}: {pct}");
    }
    // Ordinary lines: the bytes of the common lines, as before.
    let key = ("lines-1.rs".to_string(), "lines-2.rs".to_string());
    assert_eq!(got[&key].0, lines_common, "{got:?}");
    // The small one-line pair: its pieces in common, exact.
    let key = ("small-1.json".to_string(), "small-2.json".to_string());
    let &(common, _, exact) = got.get(&key).unwrap_or_else(|| panic!("{got:?}"));
    assert!(exact && common * 2 >= size("small-1.json"), "{common}");
    assert_eq!(got.len(), 5, "{got:?}");
}

/// The verified pairs record the rule (`verify-long-lines=`); an earlier
/// output without it (lines cut past 64 KiB only) is not reused: a re-run's
/// fsim-analyze analyses every file, fsim-verify every pair, each saying
/// why, and the output is a run's from scratch.
#[test]
fn an_earlier_run_that_cut_long_lines_otherwise_is_not_reused() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    write(
        &repo,
        &[
            ("catalog-1.xml", xml("44.95")),
            ("catalog-2.xml", xml("39.95")),
        ],
    );
    let work = t.path().join("work");
    pipeline(&repo, &work, &[]);
    let verified =
        String::from_utf8(crate::common::read_records(&work.join("verified.tsv"))).unwrap();
    let rule = "\tverify-long-lines=pieces-1024-sep-fnv8-4-max256";
    assert!(
        verified.lines().next().unwrap().contains(rule),
        "{verified}"
    );
    let old = t.path().join("old-verified.tsv");
    std::fs::write(&old, verified.replace(rule, "")).unwrap();
    let old_files = t.path().join("old-files.tsv");
    std::fs::copy(work.join("files.tsv"), &old_files).unwrap();
    let files = work.join("files.tsv");
    let mut c = fsim("fsim-analyze");
    c.arg("--files")
        .arg(&files)
        .arg("--previous-files")
        .arg(&old_files)
        .arg("--previous-verified")
        .arg(&old)
        .arg("-o")
        .arg(work.join("again.tsv"))
        .arg(work.join("bins.tsv"));
    let err = String::from_utf8(run_ok(c, None).stderr).unwrap();
    assert!(err.contains("cut long lines otherwise"), "{err}");
    let mut c = fsim("fsim-verify");
    c.arg("--files")
        .arg(&files)
        .arg("--previous")
        .arg(&old)
        .arg("--previous-files")
        .arg(&old_files)
        .arg("-o")
        .arg(work.join("verified-again.tsv"))
        .arg(work.join("again.tsv"));
    let err = String::from_utf8(run_ok(c, None).stderr).unwrap();
    assert!(err.contains("with long lines cut otherwise"), "{err}");
    assert!(!err.contains("reused from the earlier run"), "{err}");
    let again = std::fs::read_to_string(work.join("verified-again.tsv")).unwrap();
    assert_eq!(again, verified);
}

/// Real minified files (tests/data/minified: js-cookie 3.0.1 and 3.0.5 as
/// npm ships them): a licence line and one line of 1.4-1.7 KB each, so
/// whole lines gave 0 bytes in common and fsim-verify dropped both pairs.
/// Now each release pair is one exact link: 1,281 of 1,731 bytes (74 %)
/// for `.min.js`, 1,363 of 1,428 (95 %) for `.min.mjs`.
#[test]
fn real_minified_releases_are_linked() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let data = source_root().join("tests/data/minified");
    for v in ["3.0.1", "3.0.5"] {
        for ext in ["min.js", "min.mjs"] {
            let name = format!("js.cookie-{v}.{ext}");
            std::fs::copy(data.join(&name), repo.join(&name)).unwrap();
        }
    }
    let got = links(&pipeline(&repo, &t.path().join("work"), &[]));
    let key = |ext: &str| {
        (
            format!("js.cookie-3.0.1.{ext}"),
            format!("js.cookie-3.0.5.{ext}"),
        )
    };
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[&key("min.js")].0, 1_281, "{got:?}");
    assert_eq!(got[&key("min.mjs")].0, 1_363, "{got:?}");
    assert!(got.values().all(|l| l.2), "{got:?}");
}
