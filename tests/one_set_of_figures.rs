//! One run, one set of figures (issue 16): `make report` with every format
//! writes txt, json, tsv, html and xlsx from the same verified pairs, so
//! they show the same clusters, the same links and the same bytes in
//! common. (The html and xlsx were once built from the chunk lower bounds.)

mod common;

use calamine::Reader;
use common::*;
use std::collections::BTreeSet;
use std::process::Command;

/// (cluster id, path a, path b, bytes in common), sorted.
type Links = BTreeSet<(String, String, String, u64)>;

fn from_json(r: &serde_json::Value) -> Links {
    let mut out = Links::new();
    for c in r["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            out.insert((
                c["id"].as_str().unwrap().to_string(),
                l["a"].as_str().unwrap().to_string(),
                l["b"].as_str().unwrap().to_string(),
                l["bytes_in_common"].as_u64().unwrap(),
            ));
        }
    }
    out
}

fn from_tsv(text: &str) -> Links {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (c, pa, pb, bytes) = (
        col("cluster"),
        col("path_a"),
        col("path_b"),
        col("bytes_in_common"),
    );
    lines
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[c].to_string(),
                f[pa].to_string(),
                f[pb].to_string(),
                f[bytes].parse().unwrap(),
            )
        })
        .collect()
}

fn from_html(page: &str) -> Links {
    let start = page.find("id=\"fsim-data\">").unwrap() + "id=\"fsim-data\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    let d: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
    let mut out = Links::new();
    for c in d["clusters"].as_array().unwrap() {
        let files = c["files"].as_array().unwrap();
        let path = |i: &serde_json::Value| {
            files[i.as_u64().unwrap() as usize][0]
                .as_str()
                .unwrap()
                .to_string()
        };
        for l in c["links"].as_array().unwrap() {
            out.insert((
                c["id"].as_str().unwrap().to_string(),
                path(&l[0]),
                path(&l[1]),
                l[2].as_u64().unwrap(),
            ));
        }
    }
    out
}

fn from_xlsx(path: &std::path::Path) -> Links {
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(path).unwrap();
    let range = wb.worksheet_range("C Links").unwrap();
    let s = |c: &calamine::Data| match c {
        calamine::Data::String(s) => s.clone(),
        other => panic!("not a string: {other:?}"),
    };
    range
        .rows()
        .skip(1)
        .map(|r| {
            let bytes = match r[4] {
                calamine::Data::Float(f) => f as u64,
                ref other => panic!("bytes: {other:?}"),
            };
            (s(&r[1]), s(&r[10]), s(&r[11]), bytes)
        })
        .collect()
}

/// The text report's link lines: (a, b) of each, and the cluster count.
fn from_text(text: &str) -> (BTreeSet<(String, String)>, usize) {
    let links = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("link "))
        .map(|l| {
            let rest = l.trim_start().split_once("  ").unwrap().1;
            let (pair, _) = rest.rsplit_once(": ").unwrap();
            let (a, b) = pair.split_once(" <-> ").unwrap();
            (a.to_string(), b.to_string())
        })
        .collect();
    let clusters = text
        .lines()
        .filter(|l| l.trim_start().starts_with("cluster "))
        .count();
    (links, clusters)
}

#[test]
fn every_format_shows_the_same_clusters_links_and_figures() {
    let t = tempfile::tempdir().unwrap();
    let (repo, _) = gen_repo(t.path(), &[]);
    let work = t.path().join("work");
    let mut c = Command::new("make");
    c.current_dir(source_root())
        .args(["--no-print-directory", "-s", "report"])
        .arg("FORMATS=txt json tsv html xlsx")
        .arg(format!("BIN={}", bin_dir().display()))
        .arg(format!("REPO={}", repo.display()))
        .arg(format!("WORK={}", work.display()));
    run_ok(c, None);

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(work.join("report.json")).unwrap()).unwrap();
    let want = from_json(&json);
    assert!(want.len() >= 5, "too few links to compare: {want:?}");
    // Every figure is exact (verified), not a chunk lower bound.
    for c in json["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            assert_eq!(l["exact"], true, "{l}");
        }
    }
    assert_eq!(from_tsv(&read(&work, "report.tsv")), want, "tsv");
    assert_eq!(from_html(&read(&work, "report.html")), want, "html");
    assert_eq!(from_xlsx(&work.join("report.xlsx")), want, "xlsx");
    let (text_links, text_clusters) = from_text(&read(&work, "report.txt"));
    let pairs: BTreeSet<(String, String)> = want
        .iter()
        .map(|(_, a, b, _)| (a.clone(), b.clone()))
        .collect();
    assert_eq!(text_links, pairs, "txt");
    assert_eq!(text_clusters, json["clusters"].as_array().unwrap().len());
}
