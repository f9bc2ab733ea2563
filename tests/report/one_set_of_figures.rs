//! One run, one set of figures: `make report` with every format
//! writes txt, json, tsv, html and xlsx from the same verified pairs, so
//! they show the same clusters, the same links and the same bytes in
//! common. (The html and xlsx were once built from the chunk lower bounds.)
//! They also rank the clusters the same way (reclaimable bytes, then
//! files) and give each the same files, links and reclaimable bytes.

use crate::common;

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
        .filter(|l| !l.starts_with('#') && !l.starts_with("folders\t"))
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

/// The folder pairs: (a, b, bytes of a in b, of b in a), in order.
type FolderRows = Vec<(String, String, u64, u64)>;

fn folders_json(d: &serde_json::Value) -> FolderRows {
    d["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            let n = |k: &str| f[k].as_u64().unwrap();
            (s("a"), s("b"), n("a_in_b"), n("b_in_a"))
        })
        .collect()
}

fn folders_html(page: &str) -> FolderRows {
    let start = page.find("id=\"fsim-data\">").unwrap() + "id=\"fsim-data\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    folders_json(&serde_json::from_str(&page[start..end]).unwrap())
}

fn folders_tsv(text: &str) -> FolderRows {
    text.lines()
        .filter(|l| l.starts_with("folders\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            // bytes_in_common: a in b + b in a.
            (
                f[10].to_string(),
                f[11].to_string(),
                f[5].parse().unwrap(),
                0,
            )
        })
        .collect()
}

fn folders_xlsx(path: &std::path::Path) -> FolderRows {
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(path).unwrap();
    let range = wb.worksheet_range("Folders").unwrap();
    let s = |c: &calamine::Data| match c {
        calamine::Data::String(s) => s.clone(),
        other => panic!("not a string: {other:?}"),
    };
    let n = |c: &calamine::Data| match c {
        calamine::Data::Float(f) => *f as u64,
        other => panic!("not a number: {other:?}"),
    };
    range
        .rows()
        .skip(1)
        .map(|r| (s(&r[0]), s(&r[1]), n(&r[3]), n(&r[5])))
        .collect()
}

/// Per cluster, in the format's order: (id, files, links, reclaimable
/// bytes as the format shows them).
type Ranked = Vec<(String, u64, u64, String)>;

/// The clusters of a json array, with the names of their files, links and
/// reclaimable bytes fields.
fn ranked_of(clusters: &serde_json::Value, keys: [&str; 3]) -> Ranked {
    let n = |c: &serde_json::Value, k: &str| c[k].as_u64().unwrap();
    clusters
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                n(c, keys[0]),
                n(c, keys[1]),
                n(c, keys[2]).to_string(),
            )
        })
        .collect()
}

fn ranked_json(r: &serde_json::Value) -> Ranked {
    ranked_of(
        &r["clusters"],
        ["file_count", "link_count", "reclaimable_bytes"],
    )
}

fn ranked_html(page: &str) -> Ranked {
    let start = page.find("id=\"fsim-data\">").unwrap() + "id=\"fsim-data\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    let d: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
    assert!(
        d["clusters_note"].is_null(),
        "nothing left out of this page"
    );
    ranked_of(&d["clusters"], ["file_count", "link_count", "reclaim"])
}

/// The clusters of the tsv in order of first appearance (links counted).
fn ranked_tsv(text: &str) -> Ranked {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (c, files, rec) = (
        col("cluster"),
        col("cluster_files"),
        col("cluster_reclaimable_bytes"),
    );
    let mut out: Ranked = Vec::new();
    for l in lines.filter(|l| !l.starts_with("folders\t")) {
        let f: Vec<&str> = l.split('\t').collect();
        match out.last_mut() {
            Some(last) if last.0 == f[c] => last.2 += 1,
            _ => out.push((
                f[c].to_string(),
                f[files].parse().unwrap(),
                1,
                f[rec].to_string(),
            )),
        }
    }
    out
}

fn ranked_xlsx(path: &std::path::Path) -> Ranked {
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(path).unwrap();
    assert_eq!(wb.sheet_names()[0], "Summary", "summary first");
    let range = wb.worksheet_range("B Clusters").unwrap();
    let num = |c: &calamine::Data| match c {
        calamine::Data::Float(f) => *f as u64,
        other => panic!("not a number: {other:?}"),
    };
    range
        .rows()
        .skip(1)
        // Cluster rows: their type column is filled, file rows' is not.
        .filter(|r| matches!(r[2], calamine::Data::String(_)))
        .map(|r| {
            (
                match &r[1] {
                    calamine::Data::String(s) => s.clone(),
                    other => panic!("id: {other:?}"),
                },
                num(&r[4]),
                num(&r[5]),
                num(&r[11]).to_string(),
            )
        })
        .collect()
}

/// The text report's cluster lines: "cluster ID  TYPE  N files  T total
/// R reclaimable  L links  ...", reclaimable as shown (human bytes).
fn ranked_text(text: &str) -> Ranked {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("cluster "))
        .map(|l| {
            let f: Vec<&str> = l.split("  ").map(str::trim).collect();
            let field = |suffix: &str| {
                f.iter()
                    .find_map(|x| x.strip_suffix(suffix))
                    .unwrap_or_else(|| panic!("{suffix} in {l}"))
                    .to_string()
            };
            (
                f[0].to_string(),
                field(" files").parse().unwrap(),
                field(" links").parse().unwrap(),
                field(" reclaimable"),
            )
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
            // A side compared by a content view names it: `PATH  [prose text]`.
            let path = |s: &str| s.split_once("  [").map_or(s, |(p, _)| p).to_string();
            (path(a), path(b))
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
    // The same folder pairs, figures and order in every format.
    let folders = folders_json(&json);
    assert!(!folders.is_empty(), "the sample's manuals/v1 and v2");
    let paths = |f: &FolderRows| -> Vec<(String, String)> {
        f.iter().map(|r| (r.0.clone(), r.1.clone())).collect()
    };
    let tsv_folders = folders_tsv(&read(&work, "report.tsv"));
    assert_eq!(paths(&tsv_folders), paths(&folders), "tsv");
    for (t, j) in tsv_folders.iter().zip(&folders) {
        assert_eq!(t.2, j.2 + j.3, "tsv bytes_in_common of {}", j.0);
    }
    assert_eq!(folders_html(&read(&work, "report.html")), folders, "html");
    assert_eq!(folders_xlsx(&work.join("report.xlsx")), folders, "xlsx");
    let text = read(&work, "report.txt");
    for (a, b, _, _) in &folders {
        assert!(text.contains(&format!("{a}  <->  {b}")), "txt: {a} {b}");
    }
    assert_eq!(from_html(&read(&work, "report.html")), want, "html");
    assert_eq!(from_xlsx(&work.join("report.xlsx")), want, "xlsx");
    let (text_links, text_clusters) = from_text(&read(&work, "report.txt"));
    let pairs: BTreeSet<(String, String)> = want
        .iter()
        .map(|(_, a, b, _)| (a.clone(), b.clone()))
        .collect();
    assert_eq!(text_links, pairs, "txt");
    assert_eq!(text_clusters, json["clusters"].as_array().unwrap().len());

    // The same ranking and figures per cluster in every format.
    let ranked = ranked_json(&json);
    assert!(ranked.len() >= 3, "{ranked:?}");
    let rec: Vec<u64> = ranked.iter().map(|r| r.3.parse().unwrap()).collect();
    assert!(
        rec.windows(2).all(|w| w[0] >= w[1]),
        "ranked by reclaimable bytes: {rec:?}"
    );
    assert!(rec[0] > 0);
    let total: u64 = rec.iter().sum();
    assert_eq!(json["summary"]["reclaimable_bytes"], total);
    assert_eq!(ranked_tsv(&read(&work, "report.tsv")), ranked, "tsv");
    assert_eq!(ranked_html(&read(&work, "report.html")), ranked, "html");
    assert_eq!(ranked_xlsx(&work.join("report.xlsx")), ranked, "xlsx");
    let human: Ranked = ranked
        .iter()
        .map(|(id, f, l, r)| {
            (
                id.clone(),
                *f,
                *l,
                fsim::report::human_bytes(r.parse().unwrap()),
            )
        })
        .collect();
    assert_eq!(ranked_text(&read(&work, "report.txt")), human, "txt");
    // Reclaimable bytes of a cluster: at most its total less its largest
    // file (the largest file is kept).
    for c in json["clusters"].as_array().unwrap() {
        let sizes: Vec<u64> = c["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["size"].as_u64().unwrap())
            .collect();
        let r = c["reclaimable_bytes"].as_u64().unwrap();
        assert!(r <= c["total_size"].as_u64().unwrap() - sizes[0], "{c}");
    }
}
