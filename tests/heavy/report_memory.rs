//! fsim-report within its memory budget: one cluster of 20,000
//! files and over a million links, written in every format with
//! `--memory 32M`. Peak RSS must stay under the budget, the whole process
//! (the model of 20,000 files is taken from it first, the links sorted on
//! disk within what is left); the json and tsv must hold every link, the html page
//! its closest relatives with a note of the rest, and the xlsx Links sheet
//! as many as Excel allows with the exact number left out.

use crate::common;
use crate::common::folder_projects;
use crate::common::numbered_files;

use common::*;
use fsim::formats::{FileEntry, FileType};
use numbered_files::numbered_files;
use std::io::BufRead;
use std::path::Path;

const FILES: u32 = 20_000;
/// Each file is linked to the next NEIGHBOURS files: one cluster.
const NEIGHBOURS: u32 = 53;
const BUDGET: u64 = 32 << 20;

/// The pairs of the large cluster, as `common::pairs_file` writes them;
/// returns their number.
fn write_pairs(path: &Path) -> usize {
    use fsim::formats::{self, Digest, Kind};
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut head = Vec::new();
    formats::write_header(
        Kind::Pairs,
        &report_params().with("min-percent", 10),
        &mut head,
    );
    w.write_all(&head).unwrap();
    let mut d = Digest::default();
    let mut n = 0;
    for a in 0..FILES {
        for b in a + 1..(a + 1 + NEIGHBOURS).min(FILES) {
            let c = 600 + ((a + b) % 400) as u64;
            writeln!(w, "{a:010}\t{b:010}\t1000\t1000\t{c}\t1").unwrap();
            d.add_mix(formats::mix128(
                ((a as u128) << 96) | ((b as u128) << 64) | c as u128,
            ));
            n += 1;
        }
    }
    let mut tail = Vec::new();
    formats::write_trailer(Kind::Pairs, &formats::digest_params(&d, "pairs"), &mut tail);
    w.write_all(&tail).unwrap();
    w.flush().unwrap();
    n
}

#[test]
fn one_cluster_of_a_million_links_within_budget() {
    if !own_process(
        module_path!(),
        "one_cluster_of_a_million_links_within_budget",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    if std::env::var_os("FSIM_KEEP_TEST_DIR").is_some() {
        eprintln!("test folder kept: {}", t.path().display());
    }
    let files = numbered_files(FILES, |_| 1000);
    // Written as generated: this process stays small, and its size would
    // count in the child's peak RSS (fork copies it before exec).
    std::fs::write(t.path().join("files.tsv"), file_table(&files)).unwrap();
    drop(files);
    let links = write_pairs(&t.path().join("pairs.tsv"));
    assert!(links >= 1_000_000, "{links}");
    if std::env::var_os("FSIM_KEEP_TEST_DIR").is_some() {
        let dir = t.keep();
        eprintln!("kept {}", dir.display());
        return;
    }
    let limit = BUDGET;
    for format in ["text", "tsv", "json", "html", "xlsx"] {
        let out = t.path().join(format!("report.{format}"));
        let mut cmd = fsim("fsim-report");
        cmd.current_dir(t.path()).args([
            "--files",
            "files.tsv",
            "--format",
            format,
            "--memory",
            "32M",
            "--quiet",
            "pairs.tsv",
        ]);
        if format == "xlsx" {
            cmd.arg("-o").arg(&out);
        }
        let (ok, rss_kib) = run_rss(cmd, &out);
        let rss = rss_kib * 1024;
        assert!(ok, "fsim-report --format {format} failed");
        eprintln!(
            "fsim-report --format {format}: {links} links, peak RSS {:.1} MiB (limit {:.1} MiB)",
            rss as f64 / 1048576.0,
            limit as f64 / 1048576.0
        );
        assert!(
            rss <= limit,
            "{format}: peak RSS {rss} over --memory {limit}"
        );
        if format == "xlsx" {
            check_xlsx_of_a_million(&out, links);
            continue;
        }
        check_report_of_a_million(format, &out, links);
    }
}

/// The workbook of `one_cluster_of_a_million_links_within_budget`: sheet C
/// full, sheet B flat, and the summary says what is left out.
fn check_xlsx_of_a_million(out: &Path, links: usize) {
    use calamine::Reader;
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(out).unwrap();
    let summary = wb.worksheet_range("Summary").unwrap();
    let cell = |k: &str| {
        summary
            .rows()
            .find(|r| r[0] == calamine::Data::String(k.into()))
            .unwrap_or_else(|| panic!("no {k} row"))[1]
            .clone()
    };
    let shown = 1_048_574;
    assert_eq!(
        cell("links_on_sheet_c"),
        calamine::Data::Float(shown as f64)
    );
    // 20,001 rows of sheet B are more than 32M holds with outlines.
    let flat = cell("outlines").to_string();
    assert!(
        flat.starts_with("B Clusters written without outlines"),
        "{flat}"
    );
    let note = cell("left out").to_string();
    assert!(
        note.starts_with(&format!(
            "truncated: {} more links do not fit in a sheet",
            links - shown
        )) && note.contains("report.tsv"),
        "{note}"
    );
}

/// The text, tsv, json or html report of
/// `one_cluster_of_a_million_links_within_budget`, read without holding it.
fn check_report_of_a_million(format: &str, out: &Path, links: usize) {
    let r = std::io::BufReader::new(std::fs::File::open(out).unwrap());
    match format {
        "html" => {
            let page = std::io::read_to_string(r).unwrap();
            assert!(
                page.contains(&format!("{links} links; the 3 closest of each file shown")),
                "html: the page says what it leaves out"
            );
            assert!(page.contains(&format!("\"file_count\":{FILES}")));
        }
        // The header, the folder pairs' rows, one row per link.
        "tsv" => assert_eq!(
            r.lines()
                .filter(|l| !l.as_ref().unwrap().starts_with("folders\t"))
                .count(),
            links + 1
        ),
        "json" => {
            let n = r
                .lines()
                .filter(|l| l.as_ref().unwrap().trim_start().starts_with("\"a_id\": "))
                .count();
            // A reviewed cluster's links are in the tsv alone: the json
            // counts them and gives each file's closest relatives.
            assert_eq!(n, 0);
            // Well-formed, read without holding it.
            let f = std::io::BufReader::new(std::fs::File::open(out).unwrap());
            let _: serde::de::IgnoredAny = serde_json::from_reader(f).unwrap();
        }
        _ => {
            let first = r.lines().next().unwrap().unwrap();
            assert!(
                first.contains(&format!("1 clusters, {FILES} files")),
                "{first}"
            );
        }
    }
}

/// Folder pairs within the budget: 47 projects of 21 releases,
/// about 100,000 files and a million links, every link credited at three
/// heights and every sub-folder pair of two releases at the threshold
/// (some 300,000 of them, under the 9,870 release pairs reported): the
/// sub-folder pairs are figured and dropped one at a time, not held.
#[test]
fn folder_pairs_of_many_releases_within_budget() {
    if !own_process(
        module_path!(),
        "folder_pairs_of_many_releases_within_budget",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let (_, links) = folder_projects::write(t.path(), 100_000, 21).unwrap();
    assert!(links >= 980_000, "{links}");
    for format in ["text", "json"] {
        let out = t.path().join(format!("report.{format}"));
        let mut cmd = fsim("fsim-report");
        cmd.current_dir(t.path())
            .args(["--files", "files.tsv", "--format", format]);
        cmd.args([
            "--memory",
            "32M",
            "--quiet",
            "--tmpdir",
            ".",
            "verified.tsv",
        ]);
        let (ok, rss_kib) = run_rss(cmd, &out);
        assert!(ok, "fsim-report --format {format} failed");
        eprintln!(
            "fsim-report --format {format}: {links} links, folder pairs, peak RSS {:.1} MiB",
            rss_kib as f64 / 1024.0
        );
        assert!(rss_kib * 1024 <= BUDGET, "{format}: peak RSS {rss_kib} KiB");
        // Read as lines: this process's size would count in the next
        // child's peak RSS (fork copies it), here and in the other tests.
        let lines = || std::io::BufReader::new(std::fs::File::open(&out).unwrap()).lines();
        if format == "json" {
            // The releases' pairs only, family by family.
            let (mut pairs, mut families, mut family) = (0, 0, 0);
            for l in lines() {
                let l = l.unwrap();
                // The folder pairs' and families' keys (a cluster's are
                // deeper).
                let Some(l) = l.strip_prefix("      ").filter(|l| !l.starts_with(' ')) else {
                    continue;
                };
                if let Some(k) = l.strip_prefix("\"family\": ") {
                    let k: u64 = k.trim_end_matches(',').parse().unwrap();
                    assert!(k == family || k == family + 1, "{l}");
                    family = k;
                    pairs += 1;
                } else if l.starts_with("\"pattern\": ") {
                    families += 1;
                } else if let Some(a) = l.strip_prefix("\"a\": \"") {
                    assert!(a.len() == 16 && a.starts_with("repo/p"), "{l}");
                }
            }
            assert_eq!((pairs, families), (47 * 210, 47));
            let f = std::io::BufReader::new(std::fs::File::open(&out).unwrap());
            let _: serde::de::IgnoredAny = serde_json::from_reader(f).unwrap();
        } else {
            let head = lines()
                .take(10)
                .map(|l| l.unwrap())
                .collect::<Vec<_>>()
                .join("\n");
            assert!(head.contains("9870 pairs (>= 50%"), "{head}");
        }
    }
}

/// Any budget gives the same report: with a budget of 64 bytes every
/// cluster is read alone (written as its links come, the likely
/// templates' figures sorted by cluster on disk), from a pipe; with the
/// default one, all at once from the file.
#[test]
fn any_budget_same_report() {
    let t = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut pairs = Vec::new();
    let mut id = 0u32;
    // Clusters of 2 to 12 files: chains, and cliques sharing a template.
    for c in 0..40u32 {
        let n = 2 + c % 11;
        let first = id;
        for k in 0..n {
            files.push(FileEntry {
                id,
                size: 1000 + ((c * 7 + k * 13) % 50) as u64,
                mtime_s: 1,
                mtime_ns: 0,
                content: (id as u128 + 1) * 0x1234_5678_9abc_def1,
                ftype: FileType::Text,
                view: fsim::formats::FileView::raw(1000 + ((c * 7 + k * 13) % 50) as u64),
                path: format!("c{c:02}/f{k:02}.txt").into_bytes(),
            });
            id += 1;
        }
        for a in first..id {
            for b in a + 1..id {
                let clique = c % 3 == 0;
                if clique || b == a + 1 {
                    let common = if clique {
                        700
                    } else {
                        600 + ((a * b) % 300) as u64
                    };
                    let (sa, sb) = (files[a as usize].size, files[b as usize].size);
                    pairs.push((a, b, sa, sb, common));
                }
            }
        }
    }
    std::fs::write(t.path().join("files.tsv"), file_table(&files)).unwrap();
    let pairs_text = pairs_file(&pairs);
    std::fs::write(t.path().join("pairs.tsv"), &pairs_text).unwrap();
    for format in ["text", "json", "tsv", "html"] {
        let mut all = fsim("fsim-report");
        all.current_dir(t.path()).args([
            "--files",
            "files.tsv",
            "--format",
            format,
            "-q",
            "pairs.tsv",
        ]);
        let all = run_ok(all, None).stdout;
        let mut small = fsim("fsim-report");
        small.current_dir(t.path()).args([
            "--files",
            "files.tsv",
            "--format",
            format,
            "-q",
            "--memory",
            "64",
            "--tmpdir",
            ".",
        ]);
        let small = run_ok(small, Some(&pairs_text));
        // Less than the model: said, and the report is the same.
        let warned = String::from_utf8_lossy(&small.stderr);
        assert!(
            warned.contains(
                "warning: --memory 1 MiB is less than what 266 files and 40 clusters need"
            ),
            "{warned}"
        );
        let small = small.stdout;
        assert!(String::from_utf8_lossy(&all).contains("likely") || format == "tsv");
        assert_eq!(
            String::from_utf8_lossy(&all),
            String::from_utf8_lossy(&small),
            "{format}"
        );
    }
    // The workbook: the same bytes from the file and, a second later, from
    // a pipe (no date of the run in it). Its budget decides whether sheets
    // A and B have outlines, so it is the same in both runs.
    let mut xlsx = Vec::new();
    for (i, input) in [Some("pairs.tsv"), None].into_iter().enumerate() {
        let out = format!("report{i}.xlsx");
        let mut c = fsim("fsim-report");
        c.current_dir(t.path())
            .args(["--files", "files.tsv", "--format", "xlsx", "-q", "-o", &out])
            .args(["--tmpdir", "."])
            .args(input);
        run_ok(c, input.is_none().then_some(&pairs_text[..]));
        xlsx.push(std::fs::read(t.path().join(out)).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }
    assert!(xlsx[0] == xlsx[1], "xlsx: other bytes on a second run");
}

/// A cluster of more than --review-files files: the text report gives its
/// sub-clusters and each file's 3 closest relatives, whose figures are
/// those of the tsv; a smaller cluster keeps all its links.
#[test]
fn large_cluster_reviewed_by_closest_relatives() {
    let t = tempfile::tempdir().unwrap();
    let n = 60u32;
    let pairs = write_chain_and_clique(t.path(), n);
    let run = |format: &str| {
        let mut c = fsim("fsim-report");
        c.current_dir(t.path()).args([
            "--files",
            "files.tsv",
            "--format",
            format,
            "-q",
            "pairs.tsv",
        ]);
        String::from_utf8(run_ok(c, None).stdout).unwrap()
    };
    let text = run("text");
    let tsv = run("tsv");
    let chain_links = pairs - 3;
    text_review_shows_the_closest(&text, &tsv, n, pairs);
    // The json: the same hierarchy beside every link.
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    json_review_has_the_hierarchy(&json, n, chain_links);
}

/// Writes the files and pairs of `large_cluster_reviewed_by_closest_relatives`
/// in `dir`: a chain of `n` files and a clique of 3. Returns the number of
/// pairs.
fn write_chain_and_clique(dir: &Path, n: u32) -> usize {
    let files: Vec<FileEntry> = (0..n + 3)
        .map(|id| FileEntry {
            id,
            size: 1000,
            mtime_s: 1,
            mtime_ns: 0,
            content: (id as u128 + 7) * 0x5555_1234_9876_0001,
            ftype: FileType::Text,
            view: fsim::formats::FileView::raw(1000),
            path: format!("f{id:03}.txt").into_bytes(),
        })
        .collect();
    let mut pairs = Vec::new();
    // A chain of 60 files at 85%, each also linked to the file 2 ahead at
    // 95%, so every file has 2 to 4 links; two blocks of 30 joined by one
    // link at 55%: at 70% two sub-clusters, at 90% the even and the odd
    // files of each block.
    for a in 0..n {
        for (d, c) in [(1, 850u64), (2, 950)] {
            let b = a + d;
            if b < n {
                let c = if a == 29 && b == 30 {
                    550
                } else if a < 30 && b >= 30 {
                    0
                } else {
                    c
                };
                if c > 0 {
                    pairs.push((a, b, 1000, 1000, c));
                }
            }
        }
    }
    // A small clique of 3, every link shown.
    pairs.push((n, n + 1, 1000, 1000, 800));
    pairs.push((n, n + 2, 1000, 1000, 800));
    pairs.push((n + 1, n + 2, 1000, 1000, 800));
    std::fs::write(dir.join("files.tsv"), file_table(&files)).unwrap();
    std::fs::write(dir.join("pairs.tsv"), pairs_file(&pairs)).unwrap();
    pairs.len()
}

/// The text report of the chain: its sub-clusters, at most 3 links of
/// each file, each with the tsv's figures; the clique with all its links.
fn text_review_shows_the_closest(text: &str, tsv: &str, n: u32, pairs: usize) {
    let chain_links = pairs - 3;
    assert!(
        text.contains(&format!(
            "{chain_links} links; the 3 closest of each file shown; all in the tsv report"
        )),
        "{text}"
    );
    assert!(
        text.contains("sub-clusters (single linkage): 1 at >= 50% (largest 60 files), 2 at >= 70% (largest 30 files), 4 at >= 90% (largest 15 files)"),
        "{text}"
    );
    // Every link shown is in the tsv with the same figures.
    let tsv_links: std::collections::BTreeSet<(String, String, String)> = tsv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[10].to_string(), f[11].to_string(), f[5].to_string())
        })
        .collect();
    assert_eq!(tsv_links.len(), pairs);
    let mut shown = 0;
    for l in text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("link "))
    {
        // "link  95.0%  A <-> B: 950 B in common (...)"
        let rest = l.split_once("%  ").unwrap().1;
        let (a, rest) = rest.split_once(" <-> ").unwrap();
        let (b, rest) = rest.split_once(": ").unwrap();
        let bytes = rest.split(' ').next().unwrap();
        assert!(
            tsv_links.contains(&(a.to_string(), b.to_string(), bytes.to_string())),
            "{l}"
        );
        shown += 1;
    }
    // Each chain file: at most 3 of its links, shown under it; the clique
    // of 3 with all its links.
    assert!(shown <= 3 * n as usize + 3, "{shown}");
    assert!(
        text.contains("link  80.0%  f060.txt <-> f061.txt"),
        "{text}"
    );
    assert!(
        text.contains("link  80.0%  f061.txt <-> f062.txt"),
        "{text}"
    );
}

/// The json of the chain: the review's levels, no link (they are in the
/// tsv), each file's closest and sub-clusters; no review for the clique,
/// which keeps its links.
fn json_review_has_the_hierarchy(json: &serde_json::Value, n: u32, chain_links: usize) {
    let clusters = json["clusters"].as_array().unwrap();
    let big = clusters.iter().find(|c| c["file_count"] == n).unwrap();
    let levels: Vec<u64> = big["review"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["sub_clusters"].as_u64().unwrap())
        .collect();
    assert_eq!(levels, [1, 2, 4]);
    assert_eq!(big["link_count"], chain_links);
    assert_eq!(big["links"].as_array().unwrap().len(), 0);
    let files = big["files"].as_array().unwrap();
    let sub = |name: &str| {
        let f = files.iter().find(|f| f["path"] == name).unwrap();
        let closest = f["closest"].as_array().unwrap();
        assert!((1..=3).contains(&closest.len()), "{f}");
        f["sub_clusters"].clone()
    };
    // f000 and f002 (95 %) share a sub-cluster at 90 %; f001 (85 % to
    // f000) is with them at 70 % only; f030 is in the other block.
    let (s0, s1, s2, s30) = (
        sub("f000.txt"),
        sub("f001.txt"),
        sub("f002.txt"),
        sub("f030.txt"),
    );
    assert_eq!(s0, s2);
    assert_eq!(s0[1], s1[1]);
    assert_ne!(s0[2], s1[2]);
    assert_eq!(s0[0], s30[0]);
    assert_ne!(s0[1], s30[1]);
    let small = clusters.iter().find(|c| c["file_count"] == 3).unwrap();
    assert!(small["review"].is_null());
    assert_eq!(small["links"].as_array().unwrap().len(), 3);
}

/// The other end of the folder tests: 100,000 overlapping extracts of one
/// body (`fsim-gen --overlap`, 1 KB each) in 300 folders that are random
/// mixes of them. Every file has versions in every folder, yet no folder
/// holds the versions of another's files: no folder pair explains its
/// files, so none is reported, and the file clusters are what the report
/// gives (as on the measured 10 KB tree: docs/measurements/2026-11-26-folders.md).
/// Text only: its json is ~400 MB.
#[test]
fn overlap_repository_of_100000_files_has_no_folder_pair() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    let mut c = fsim("fsim-gen");
    c.args(["--overlap", "100000", "--bulk-size", "1000"])
        .arg(&repo);
    run_ok(c, None);
    let work = t.path().join("work");
    run_ok(
        make_report_cmd(&repo, &work, &["QUIET=-q", "FORMATS=txt"]),
        None,
    );
    // Its head only, as lines: this process's size would count in the
    // other tests' children (see folder_pairs_of_many_releases_within_budget).
    let f = std::fs::File::open(work.join("report.txt")).unwrap();
    let lines: Vec<String> = std::io::BufReader::new(f)
        .lines()
        .take(8)
        .map(|l| l.unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l == "Folders that are copies or versions of each other: 0 pairs (>= 50% of their bytes found in each other; the topmost of each tree, with the pairs inside it that are identical, closer or renamed indented under it)"),
        "{lines:?}"
    );
    let head = &lines[0];
    let files: u64 = head
        .split(" clusters, ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{head}"));
    assert!(files >= 99_000, "{head}");
}
