//! Documents through the real binaries: `make report` on the
//! fixtures of tests/data/documents, read back from the json and text
//! reports. Two versions of a letter are found at the figure of their text,
//! a letter from the same Word template is not (its raw bytes are 86 %
//! styles XML), two versions of a gzip'd text are found, a truncated docx
//! is a note, and `CONTENT=raw` gives the raw-bytes behaviour back.

use crate::common;

use common::*;
use fsim::content::{self, Limits};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    source_root().join("tests/data/documents").join(name)
}

/// `n` lines of text, every `every`th edited when `edit` (0: none).
fn notes(n: usize, edit: usize) -> String {
    (0..n)
        .map(|i| {
            if edit > 0 && i % edit == 3 {
                format!("line {i}: this line was rewritten for the second version\n")
            } else {
                format!(
                    "line {i}: minutes of the meeting, item {}, decided\n",
                    i * 37 % 101
                )
            }
        })
        .collect()
}

fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// The repository: three letters of one template, two gzip'd versions of
/// a text, and a docx cut in half.
fn repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    for d in ["letters", "notes", "broken"] {
        std::fs::create_dir_all(repo.join(d)).unwrap();
    }
    for f in ["letter-v1.docx", "letter-v2.docx", "other.docx"] {
        std::fs::copy(fixture(f), repo.join("letters").join(f)).unwrap();
    }
    std::fs::write(repo.join("notes/notes-v1.txt.gz"), gzip(&notes(300, 0))).unwrap();
    std::fs::write(repo.join("notes/notes-v2.txt.gz"), gzip(&notes(300, 40))).unwrap();
    let whole = std::fs::read(fixture("letter-v1.docx")).unwrap();
    std::fs::write(repo.join("broken/cut.docx"), &whole[..whole.len() / 2]).unwrap();
    repo
}

/// `make report` (txt and json) with extra variables: the json document
/// and the text report.
fn report(repo: &Path, work: &Path, vars: &[&str]) -> (Value, String) {
    let all = [&["QUIET=-q", "FORMATS=txt json"], vars].concat();
    run_ok(make_report_cmd(repo, work, &all), None);
    (
        serde_json::from_str(&read(work, "report.json")).unwrap(),
        read(work, "report.txt"),
    )
}

fn name(v: &Value) -> &str {
    v.as_str().unwrap().rsplit('/').next().unwrap()
}

/// Every link of the report as (name a, name b, link), names sorted.
fn links(r: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for c in r["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            let (a, b) = (name(&l["a"]).to_string(), name(&l["b"]).to_string());
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            out.push((a, b, l.clone()));
        }
    }
    out
}

fn link<'a>(all: &'a [(String, String, Value)], a: &str, b: &str) -> Option<&'a Value> {
    all.iter().find(|(x, y, _)| x == a && y == b).map(|t| &t.2)
}

/// A cluster file's json by name.
fn file<'a>(r: &'a Value, n: &str) -> &'a Value {
    r["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["files"].as_array().unwrap())
        .find(|f| name(&f["path"]) == n)
        .unwrap_or_else(|| panic!("{n} in no cluster"))
}

fn view_len(path: &Path) -> u64 {
    let v = content::view(&std::fs::read(path).unwrap(), &Limits::default());
    v.bytes.len() as u64
}

#[test]
fn documents_are_compared_by_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let (r, text) = report(&repo, &dir.path().join("work"), &[]);
    let all = links(&r);

    // The two letters: one link, at the figures of their text.
    let l = link(&all, "letter-v1.docx", "letter-v2.docx").expect("letter pair");
    assert_eq!(l["exact"], true, "{l}");
    for f in ["letter-v1.docx", "letter-v2.docx"] {
        let j = file(&r, f);
        assert_eq!(j["view"], "docx text", "{j}");
        assert_eq!(j["size"], view_len(&repo.join("letters").join(f)), "{j}");
    }
    let (a, b) = (
        view_len(&repo.join("letters/letter-v1.docx")),
        view_len(&repo.join("letters/letter-v2.docx")),
    );
    // Known answers: the extraction is deterministic, and fsim-verify
    // measures the text that was chunked (285 of 338 and 323 bytes).
    assert_eq!((a, b), (338, 323));
    assert_eq!(l["bytes_in_common"], 285, "{l}");
    // The letter from the same template: not a 50 % look-alike.
    for v in ["letter-v1.docx", "letter-v2.docx"] {
        assert!(link(&all, "other.docx", v).is_none(), "{all:?}");
    }
    // The gzip'd versions: found, as their text.
    let l = link(&all, "notes-v1.txt.gz", "notes-v2.txt.gz").expect("notes pair");
    assert_eq!(file(&r, "notes-v1.txt.gz")["view"], "gzip content");
    assert!(l["percent_symmetric"].as_f64().unwrap() > 90.0, "{l}");
    // The truncated docx: a note in both reports, nothing else.
    let u = &r["unreadable_documents"];
    assert_eq!(u["count"], 1, "{u}");
    assert_eq!(name(&u["listed"][0]["path"]), "cut.docx");
    assert_eq!(
        u["listed"][0]["note"],
        "no text read as docx (unreadable, or a scan or a document without text): raw bytes compared"
    );
    assert!(
        text.contains("/broken/cut.docx  (no text read as docx (unreadable, or a scan or a document without text): raw bytes compared)"),
        "{text}"
    );
    assert!(text.contains("letter-v1.docx  [docx text]"), "{text}");
}

#[test]
fn content_raw_compares_raw_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let (r, _) = report(&repo, &dir.path().join("work"), &["CONTENT=raw"]);
    let all = links(&r);
    // The template look-alike is back, and the gzip'd versions are lost.
    assert!(
        link(&all, "letter-v1.docx", "other.docx").is_some()
            || link(&all, "letter-v2.docx", "other.docx").is_some(),
        "{all:?}"
    );
    assert!(link(&all, "notes-v1.txt.gz", "notes-v2.txt.gz").is_none());
    assert_eq!(file(&r, "other.docx")["view"], "raw");
    assert_eq!(r["unreadable_documents"]["count"], 0);
}

/// An incremental re-run (`PREVIOUS=`) with content views gives the bytes
/// of a run from scratch: a gzip'd text edited, a letter added.
#[test]
fn previous_run_with_views_gives_identical_output() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let old = dir.path().join("old");
    report(&repo, &old, &[]);
    std::fs::write(repo.join("notes/notes-v2.txt.gz"), gzip(&notes(300, 30))).unwrap();
    std::fs::copy(
        fixture("letter-v2.docx"),
        repo.join("letters/letter-v3.docx"),
    )
    .unwrap();
    let inc = dir.path().join("inc");
    let (r, _) = report(&repo, &inc, &[&format!("PREVIOUS={}", old.display())]);
    let fresh = dir.path().join("fresh");
    report(&repo, &fresh, &[]);
    for n in ["files.tsv", "verified.tsv", "report.txt", "report.json"] {
        assert!(
            std::fs::read(inc.join(n)).unwrap() == std::fs::read(fresh.join(n)).unwrap(),
            "{n}"
        );
    }
    // The copy of letter-v2 is an identical set with it, by raw bytes.
    let sets = r["identical_sets"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "{sets:?}");
}

/// Sharded chunking (`SHARDS=2`: two fsim-chunk runs merged through
/// `--previous`) with content views gives the bytes of one run.
#[test]
fn shards_with_views_give_identical_output() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    report(&repo, &one, &[]);
    report(&repo, &two, &["SHARDS=2"]);
    for n in ["files.tsv", "verified.tsv", "report.txt", "report.json"] {
        assert!(
            std::fs::read(one.join(n)).unwrap() == std::fs::read(two.join(n)).unwrap(),
            "{n}"
        );
    }
}

/// fsim-chunk on its own: the truncated docx is a warning with its note
/// and counted in the summary; the outputs are the same on 1 and 2 threads.
#[test]
fn chunk_warns_with_the_note_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let mut outs = Vec::new();
    for jobs in ["1", "2"] {
        let (files, chunks) = (dir.path().join("f.tsv"), dir.path().join("c.tsv"));
        let mut c = fsim("fsim-chunk");
        c.args(["-j", jobs, "--files-out"])
            .arg(&files)
            .arg("-o")
            .arg(&chunks)
            .arg(&repo);
        let err = String::from_utf8(run_ok(c, None).stderr).unwrap();
        let warn = format!(
            "fsim-chunk: warning: {}: unreadable as docx: ",
            repo.join("broken/cut.docx").display()
        );
        assert!(err.lines().any(|l| l.starts_with(&warn)), "{err}");
        assert!(
            err.contains(", 1 documents unreadable (raw bytes compared)"),
            "{err}"
        );
        outs.push((
            std::fs::read(files).unwrap(),
            std::fs::read(chunks).unwrap(),
        ));
    }
    assert!(outs[0] == outs[1]);
    let table = String::from_utf8(outs[0].0.clone()).unwrap();
    assert!(table.starts_with("#fsim files v4\t"), "{table}");
    assert!(table.contains("\tcontent=auto\tviews=6\n"), "{table}");
    let cut = table.lines().find(|l| l.ends_with("cut.docx")).unwrap();
    assert!(cut.contains("\traw/docx\t"), "{cut}");
}

/// The html report's side-by-side view of a document shows its text (the
/// view that was chunked), not the zip's bytes.
#[test]
fn html_views_show_a_documents_text() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let work = dir.path().join("work");
    let vars = ["QUIET=-q", "FORMATS=html"];
    run_ok(make_report_cmd(&repo, &work, &vars), None);
    let html = read(&work, "report.html");
    let open = "<script type=\"application/json\" id=\"fsim-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let d: Value = serde_json::from_str(&html[start..end]).unwrap();
    let f = d["vfiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("letter-v1.docx"))
        .expect("a view of letter-v1.docx");
    assert_eq!(f["status"], "ok", "{f}");
    assert_eq!(f["view"], "docx text", "{f}");
    let shown: String = f["text"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let v = content::view(
        &std::fs::read(repo.join("letters/letter-v1.docx")).unwrap(),
        &Limits::default(),
    );
    assert_eq!(shown.as_bytes(), &v.bytes[..], "{f}");
}

/// The html report's data block (`fsim-data`) as json.
fn html_data(work: &Path) -> Value {
    let html = read(work, "report.html");
    let open = "<script type=\"application/json\" id=\"fsim-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// Every link names the view each side was compared by, in every format:
/// json `view_a`/`view_b` and text `[docx text]` (tested
/// above), the tsv's last two columns, the html's link rows and
/// side-by-side files, the xlsx Links sheet's last two columns. A raw
/// side is empty (nothing in the text), so raw links read as before: a
/// loose text linked with a gzip'd version of it names one view only.
#[test]
fn every_format_names_the_views_of_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    std::fs::write(repo.join("notes/notes-v3.txt"), notes(300, 50)).unwrap();
    let work = dir.path().join("work");
    let vars = ["QUIET=-q", "FORMATS=txt json tsv html xlsx"];
    run_ok(make_report_cmd(&repo, &work, &vars), None);
    let r: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    // The views of each link by its names (sorted), as json gives them.
    let mut want: Vec<LinkViews> = Vec::new();
    for c in r["clusters"].as_array().unwrap() {
        for l in c["links"].as_array().unwrap() {
            let view = |v: &Value| match v.as_str().unwrap() {
                "raw" => String::new(),
                x => x.to_string(),
            };
            want.push((
                name(&l["a"]).into(),
                name(&l["b"]).into(),
                view(&l["view_a"]),
                view(&l["view_b"]),
            ));
        }
    }
    want.sort();
    let (letters, mixed) = (
        (
            "letter-v1.docx".to_string(),
            "letter-v2.docx".to_string(),
            "docx text".to_string(),
            "docx text".to_string(),
        ),
        (
            "notes-v1.txt.gz".to_string(),
            "notes-v3.txt".to_string(),
            "gzip content".to_string(),
            String::new(),
        ),
    );
    assert!(want.contains(&letters) && want.contains(&mixed), "{want:?}");

    tsv_names_the_views(&work, &want);
    html_names_the_views(&work, &want);
    xlsx_names_the_views(&work, &want);
}

/// A link's names and views, as the json gives them.
type LinkViews = (String, String, String, String);

fn tsv_names_the_views(work: &Path, want: &[LinkViews]) {
    // tsv: `view_a`, `view_b` after the 13 columns scripts read by
    // position; every row has all 15 (folder pairs and notes: empty).
    let tsv = read(work, "report.tsv");
    let head = tsv.lines().next().unwrap();
    assert!(
        head.starts_with("cluster\ttype\t")
            && head.ends_with("\tpath_a\tpath_b\tcluster_reclaimable_bytes\tview_a\tview_b"),
        "{head}"
    );
    let mut got = Vec::new();
    for row in tsv.lines().skip(1) {
        let f: Vec<&str> = row.split('\t').collect();
        assert_eq!(f.len(), 15, "{row}");
        if f[0] == "note" || f[0] == "folders" {
            assert_eq!((f[13], f[14]), ("", ""), "{row}");
        } else if f[0] != "same-content" {
            let n = |p: &str| p.rsplit('/').next().unwrap().to_string();
            got.push((n(f[10]), n(f[11]), f[13].to_string(), f[14].to_string()));
        }
    }
    got.sort();
    assert_eq!(got, want, "tsv");
}

fn html_names_the_views(work: &Path, want: &[LinkViews]) {
    // html: each link row's views (l[8], l[9]) and the viewed files'.
    let d = html_data(work);
    let mut got = Vec::new();
    for c in d["clusters"].as_array().unwrap() {
        let files = c["files"].as_array().unwrap();
        for l in c["links"].as_array().unwrap() {
            let n = |i: &Value| name(&files[i.as_u64().unwrap() as usize][0]).to_string();
            let s = |v: &Value| v.as_str().unwrap().to_string();
            got.push((n(&l[0]), n(&l[1]), s(&l[8]), s(&l[9])));
        }
    }
    got.sort();
    assert_eq!(got, want, "html");
    for f in d["vfiles"].as_array().unwrap() {
        let want_view = if name(&f["path"]).ends_with(".docx") {
            Some("docx text")
        } else if name(&f["path"]).ends_with(".gz") {
            Some("gzip content")
        } else {
            None
        };
        assert_eq!(f["view"].as_str(), want_view, "{f}");
    }
}

fn xlsx_names_the_views(work: &Path, want: &[LinkViews]) {
    // xlsx: the Links sheet's View A and View B (empty cells for raw).
    use calamine::{Data, Reader};
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(work.join("report.xlsx")).unwrap();
    let sheet = wb.worksheet_range("C Links").unwrap();
    let mut rows = sheet.rows();
    let head: Vec<String> = rows.next().unwrap().iter().map(|c| c.to_string()).collect();
    assert_eq!(&head[10..], ["Path A", "Path B", "View A", "View B"]);
    let cell = |r: &[Data], i: usize| r.get(i).map_or(String::new(), |c| c.to_string());
    let mut got: Vec<_> = rows
        .map(|r| {
            let n = |i| cell(r, i).rsplit('/').next().unwrap().to_string();
            (n(10), n(11), cell(r, 12), cell(r, 13))
        })
        .collect();
    got.sort();
    assert_eq!(got, want, "xlsx");
}

/// `bytes` (a zip) written again member by member with other timestamps
/// and compression, and `docProps/core.xml` (the save date) changed: what
/// Word's "save" does to a document whose text did not change.
fn resave(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut input = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let when = zip::DateTime::from_date_and_time(2024, 5, 6, 7, 8, 10).unwrap();
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1))
        .last_modified_time(when);
    for i in 0..input.len() {
        let mut m = input.by_index(i).unwrap();
        let name = m.name().to_string();
        let mut data = Vec::new();
        m.read_to_end(&mut data).unwrap();
        if name == "docProps/core.xml" {
            data.extend_from_slice(b"<!-- saved again -->");
        }
        out.start_file(name, opts).unwrap();
        out.write_all(&data).unwrap();
    }
    out.finish().unwrap().into_inner()
}

/// Same content, different file: a docx saved again (other zip
/// bytes, the same text) and a text beside its gzip are one group each in
/// every format, not identical sets; a byte-for-byte copy of the text is
/// an identical set with it, and in the text's group too.
#[test]
fn same_content_different_files_are_their_own_category() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("letters")).unwrap();
    std::fs::create_dir_all(repo.join("notes")).unwrap();
    let letter = std::fs::read(fixture("letter-v1.docx")).unwrap();
    let again = resave(&letter);
    assert_ne!(letter, again);
    std::fs::write(repo.join("letters/letter.docx"), &letter).unwrap();
    std::fs::write(repo.join("letters/letter-saved-again.docx"), &again).unwrap();
    let text = notes(300, 0);
    std::fs::write(repo.join("notes/notes.txt"), &text).unwrap();
    std::fs::write(repo.join("notes/copy.txt"), &text).unwrap();
    std::fs::write(repo.join("notes/notes.txt.gz"), gzip(&text)).unwrap();
    let work = dir.path().join("work");
    let vars = ["QUIET=-q", "FORMATS=txt json tsv html xlsx"];
    run_ok(make_report_cmd(&repo, &work, &vars), None);
    let r: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();

    // Identity by raw bytes: only the copy of the text is identical.
    let sets = r["identical_sets"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "{sets:?}");
    let names = |v: &Value| -> Vec<String> {
        let mut n: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|f| name(f).to_string())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&sets[0]["files"]), ["copy.txt", "notes.txt"]);

    same_content_groups_in_the_json(&r, text.len());
    same_content_groups_in_every_format(&work, &r);
}

/// Two groups, the text's (larger content) first, each file with the
/// view it was compared by; the summary counts them.
fn same_content_groups_in_the_json(r: &Value, text_len: usize) {
    let groups = r["same_content"].as_array().unwrap();
    let group = |g: &Value| -> Vec<(String, String)> {
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
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(groups.len(), 2, "{groups:?}");
    assert_eq!(
        group(&groups[0]),
        [
            pair("copy.txt", "raw"),
            pair("notes.txt", "raw"),
            pair("notes.txt.gz", "gzip content")
        ]
    );
    assert_eq!(groups[0]["content_size"], text_len);
    assert_eq!(
        group(&groups[1]),
        [
            pair("letter-saved-again.docx", "docx text"),
            pair("letter.docx", "docx text")
        ]
    );
    assert_eq!(groups[1]["content_size"], 338);
    assert_eq!(r["summary"]["same_content_groups"], 2);
    assert_eq!(r["summary"]["same_content_files"], 5);
}

/// The other formats: the groups of the json.
fn same_content_groups_in_every_format(work: &Path, r: &Value) {
    let groups = r["same_content"].as_array().unwrap();
    let txt = read(work, "report.txt");
    assert!(
        txt.contains("A2. Same content, different files: 2 groups"),
        "{txt}"
    );
    assert!(
        txt.contains("letter-saved-again.docx  [docx text]"),
        "{txt}"
    );
    assert!(txt.contains("notes.txt.gz  [gzip content]"), "{txt}");
    let tsv = read(work, "report.tsv");
    let rows: Vec<&str> = tsv
        .lines()
        .filter(|l| l.starts_with("same-content\t"))
        .collect();
    assert_eq!(rows.len(), 3, "{tsv}");
    for (g, n) in [(&groups[0], 2), (&groups[1], 1)] {
        let id = g["id"].as_str().unwrap();
        let of: Vec<_> = rows
            .iter()
            .filter(|l| l.split('\t').nth(1) == Some(id))
            .collect();
        assert_eq!(of.len(), n, "{tsv}");
    }
    let html = read(work, "report.html");
    let open = "<script type=\"application/json\" id=\"fsim-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    let d: Value = serde_json::from_str(&html[start..end]).unwrap();
    let ids = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&d["same_content"]), ids(&r["same_content"]));
    let mut wb: calamine::Xlsx<_> = calamine::open_workbook(work.join("report.xlsx")).unwrap();
    use calamine::Reader;
    let sheet = wb.worksheet_range("A2 Same content").unwrap();
    assert_eq!(sheet.rows().count(), 1 + 5);
}

/// A work folder written before view hashes (a v3 file table) as
/// `PREVIOUS=`: it is read, its content views are chunked again (they
/// have no view hash) and its raw files reused, and the outputs are the
/// bytes of a run from scratch, the same content groups included.
#[test]
fn a_v3_previous_table_gives_identical_output() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let text = notes(300, 0);
    std::fs::write(repo.join("notes/notes.txt"), &text).unwrap();
    std::fs::write(repo.join("notes/notes.txt.gz"), gzip(&text)).unwrap();
    let old = dir.path().join("old");
    report(&repo, &old, &[]);
    // files.tsv as v3: no view hash field, its own table digest.
    let table = read(&old, "files.tsv");
    let mut digest = fsim::formats::files::TableDigest::default();
    let mut v3 = String::new();
    for l in table.lines() {
        if let Some(h) = l.strip_prefix("#fsim files v4") {
            v3.push_str(&format!("#fsim files v3{h}\n"));
        } else if l.starts_with("#end files") {
            let (head, _) = l.split_once("\ttable-digest=").unwrap();
            v3.push_str(&format!("{head}\ttable-digest={}\n", digest.hex()));
        } else if l.starts_with('#') {
            v3.push_str(&format!("{l}\n"));
        } else {
            let mut f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 9, "{l}");
            f.remove(7);
            let rec = f.join("\t");
            digest.add_line(rec.as_bytes());
            v3.push_str(&format!("{rec}\n"));
        }
    }
    std::fs::write(old.join("files.tsv"), v3).unwrap();
    let inc = dir.path().join("inc");
    let (r, _) = report(&repo, &inc, &[&format!("PREVIOUS={}", old.display())]);
    let fresh = dir.path().join("fresh");
    report(&repo, &fresh, &[]);
    for n in ["files.tsv", "verified.tsv", "report.txt", "report.json"] {
        assert!(
            std::fs::read(inc.join(n)).unwrap() == std::fs::read(fresh.join(n)).unwrap(),
            "{n}"
        );
    }
    assert_eq!(r["same_content"].as_array().unwrap().len(), 1, "{r}");
}

/// A gettext catalog of `n` messages for release `r`: from release 2 on,
/// every third translation reworded, ten messages gone and twenty new.
fn catalog_po(n: usize, r: usize) -> String {
    let mut po = String::from(
        "msgid \"\"\nmsgstr \"\"\n\"Project-Id-Version: notes\\n\"\n\
         \"Content-Type: text/plain; charset=UTF-8\\n\"\n\"Language: de\\n\"\n\n",
    );
    let first = if r > 1 { 10 } else { 0 };
    let last = if r > 1 { n + 20 } else { n };
    for i in first..last {
        let word = if r > 1 && i % 3 == 0 { "neu" } else { "alt" };
        po += &format!(
            "msgid \"Message {i:04} about item {}\"\nmsgstr \"Nachricht {i} ({word}) zu Punkt {}\"\n\n",
            i * 7 % 13,
            i * 11 % 17
        );
    }
    po
}

/// `msgfmt` (GNU gettext, installed by .ci/run) compiling `po` into `mo`.
fn msgfmt(po: &str, mo: &Path) {
    let src = mo.with_extension("po");
    std::fs::write(&src, po).unwrap();
    let mut cmd = std::process::Command::new("msgfmt");
    cmd.arg("-o").arg(mo).arg(&src);
    run_ok(cmd, None);
    std::fs::remove_file(src).unwrap();
}

/// Compiled catalogs: a `.mo` is compared as its messages, the
/// text `msgunfmt --force-po --no-wrap` prints (without blank lines), so
/// two releases of one catalog are found and measured by lines, exactly as
/// those texts are when they sit beside them as `.po` files.
#[test]
fn compiled_catalogs_are_measured_as_their_messages() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("mo")).unwrap();
    std::fs::create_dir_all(repo.join("text")).unwrap();
    for r in [1, 2] {
        let mo = repo.join(format!("mo/de-{r}.mo"));
        msgfmt(&catalog_po(300, r), &mo);
        let mut cmd = std::process::Command::new("msgunfmt");
        cmd.args(["--force-po", "--no-wrap"]).arg(&mo);
        let oracle: Vec<u8> = run_ok(cmd, None)
            .stdout
            .split_inclusive(|&b| b == b'\n')
            .filter(|l| *l != b"\n")
            .flatten()
            .copied()
            .collect();
        let v = content::view(&std::fs::read(&mo).unwrap(), &Limits::default());
        assert_eq!(v.kind, content::Kind::Mo, "{:?}", v.note);
        assert!(v.bytes == oracle, "{}", String::from_utf8_lossy(&v.bytes));
        std::fs::write(repo.join(format!("text/de-{r}.po")), &v.bytes).unwrap();
    }
    let (r, _) = report(&repo, &dir.path().join("work"), &[]);
    let all = links(&r);
    let mo = link(&all, "de-1.mo", "de-2.mo").expect("the catalogs' pair");
    let txt = link(&all, "de-1.po", "de-2.po").expect("the texts' pair");
    assert_eq!(file(&r, "de-1.mo")["view"], "mo messages");
    assert_eq!(mo["exact"], true, "{mo}");
    assert_eq!(mo["bytes_in_common"], txt["bytes_in_common"], "{mo} {txt}");
    // The 290 msgid lines in common, the two thirds of their msgstr lines
    // that kept their translation, and the header: what GNU `diff
    // --minimal` keeps of the two texts (a known answer).
    assert_eq!(mo["bytes_in_common"], 17_817, "{mo}");
}

/// A one-page PDF written by hand (PDF 1.4, a Type 1 Helvetica font, one
/// text object: a line each), with its cross-reference table: what
/// pdftotext reads as a real writer's.
fn pdf_of(lines: &[String]) -> Vec<u8> {
    let mut content = String::from("BT /F1 10 Tf 12 TL 50 780 Td\n");
    for l in lines {
        let esc = l
            .replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)");
        content.push_str(&format!("({esc}) Tj T*\n"));
    }
    content.push_str("ET\n");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".into(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".into(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".into(),
        format!("<< /Length {} >>\nstream\n{content}endstream", content.len()),
    ];
    pdf_objects(&objects)
}

/// A PDF of `objects` (numbered from 1, the first the catalog) with its
/// cross-reference table.
fn pdf_objects(objects: &[String]) -> Vec<u8> {
    let raw: Vec<Vec<u8>> = objects.iter().map(|o| o.clone().into_bytes()).collect();
    pdf_raw(&raw)
}

/// [`pdf_objects`] of objects that may hold binary streams.
fn pdf_raw(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(o);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// Two versions of one PDF text (60 lines, one in eight rewritten in the
/// second) written to `repo` as minutes-v1.pdf and minutes-v2.pdf; their
/// bytes.
fn minutes_pdfs(repo: &Path) -> (Vec<u8>, Vec<u8>) {
    std::fs::create_dir_all(repo).unwrap();
    let version =
        |edit: usize| -> Vec<String> { notes(60, edit).lines().map(String::from).collect() };
    let (v1, v2) = (pdf_of(&version(0)), pdf_of(&version(8)));
    std::fs::write(repo.join("minutes-v1.pdf"), &v1).unwrap();
    std::fs::write(repo.join("minutes-v2.pdf"), &v2).unwrap();
    (v1, v2)
}

/// Two versions of one PDF text (one line in eight rewritten): one pair,
/// compared by their pdftotext texts, at the bytes in common those texts
/// give as loose files. Skipped, saying so, where pdftotext is missing
/// (.ci/run installs it).
#[test]
fn two_versions_of_a_pdf_are_one_pair_at_their_text() {
    if Command::new("pdftotext").arg("-v").output().is_err() {
        eprintln!("skipped: pdftotext (poppler-utils) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let (v1, v2) = minutes_pdfs(&repo);
    let (r, text) = report(&repo, &dir.path().join("work"), &[]);
    let all = links(&r);
    assert_eq!(all.len(), 1, "{all:?}");
    let l = link(&all, "minutes-v1.pdf", "minutes-v2.pdf").expect("the pdf pair");
    assert_eq!(l["exact"], true, "{l}");
    assert_eq!(file(&r, "minutes-v1.pdf")["view"], "pdf text");
    // The link names the view of each side (json view_a/view_b; text
    // `[pdf text]` after each path of the link line).
    assert_eq!(
        (&l["view_a"], &l["view_b"]),
        (&"pdf text".into(), &"pdf text".into()),
        "{l}"
    );
    assert!(
        text.lines().any(|t| t.contains(" link ")
            && t.contains("minutes-v1.pdf  [pdf text] <-> ")
            && t.contains("minutes-v2.pdf  [pdf text]: ")),
        "{text}"
    );

    // Their texts as loose files: the same bytes in common.
    let loose = dir.path().join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    for (n, pdf) in [("v1.txt", &v1), ("v2.txt", &v2)] {
        let v = content::view(pdf, &Limits::default());
        assert_eq!(v.kind, fsim::formats::ViewKind::Pdf, "{:?}", v.note);
        std::fs::write(loose.join(n), &v.bytes).unwrap();
    }
    let (lr, _) = report(&loose, &dir.path().join("loose-work"), &[]);
    let la = links(&lr);
    let t = link(&la, "v1.txt", "v2.txt").expect("the text pair");
    assert_eq!(l["bytes_in_common"], t["bytes_in_common"], "{l} / {t}");
    assert_eq!(
        file(&r, "minutes-v1.pdf")["size"],
        file(&lr, "v1.txt")["size"]
    );
    assert!(l["percent_symmetric"].as_f64().unwrap() > 80.0, "{l}");
}

/// fsim-pdftext, the pure-Rust fallback, at the path cargo built it.
fn fsim_pdftext() -> content::PdfExtractor {
    content::PdfExtractor::FsimPdftext(env!("CARGO_BIN_EXE_fsim-pdftext").into())
}

/// `make report` (txt and json) with `FSIM_PDF=fsim-pdftext`: the
/// fallback forced on a machine that may have pdftotext.
fn report_with_fallback(repo: &Path, work: &Path, vars: &[&str]) -> std::process::Output {
    let all = [&["QUIET=-q", "FORMATS=txt json"], vars].concat();
    let mut c = make_report_cmd(repo, work, &all);
    c.env("FSIM_PDF", "fsim-pdftext");
    c.output().unwrap()
}

/// The two versions of `two_versions_of_a_pdf_are_one_pair_at_their_text`
/// read by the fallback (`FSIM_PDF=fsim-pdftext`): one pair, exact, at the
/// bytes in common of the fallback's texts as loose files, texts that are
/// pdftotext's line for line on this PDF (where pdftotext is installed).
/// The file table records the extractor (`pdf=fsim-pdftext`), so a later
/// run with pdftotext refuses to reuse its records (`PREVIOUS=`), saying
/// why, rather than mixing the two extractors' views.
#[test]
fn two_versions_of_a_pdf_are_one_pair_with_the_rust_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let (v1, v2) = minutes_pdfs(&repo);
    let work = dir.path().join("work");
    let o = report_with_fallback(&repo, &work, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    let all = links(&r);
    assert_eq!(all.len(), 1, "{all:?}");
    let l = link(&all, "minutes-v1.pdf", "minutes-v2.pdf").expect("the pdf pair");
    assert_eq!(l["exact"], true, "{l}");
    assert_eq!(file(&r, "minutes-v1.pdf")["view"], "pdf text");
    let table = read(&work, "files.tsv");
    let head = table.lines().next().unwrap();
    assert!(
        head.ends_with("\tcontent=auto\tpdf=fsim-pdftext\tviews=6"),
        "{head}"
    );

    // The fallback's texts as loose files: the same bytes in common.
    let loose = dir.path().join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    let mut texts = Vec::new();
    for (n, pdf) in [("v1.txt", &v1), ("v2.txt", &v2)] {
        let v = content::pdf_view_with(pdf, &fsim_pdftext(), &Limits::default());
        assert_eq!(v.kind, fsim::formats::ViewKind::Pdf, "{:?}", v.note);
        std::fs::write(loose.join(n), &v.bytes).unwrap();
        texts.push(v.bytes);
    }
    let (lr, _) = report(&loose, &dir.path().join("loose-work"), &[]);
    let t = link(&links(&lr), "v1.txt", "v2.txt")
        .cloned()
        .expect("the text pair");
    assert_eq!(l["bytes_in_common"], t["bytes_in_common"], "{l} / {t}");
    assert!(l["percent_symmetric"].as_f64().unwrap() > 80.0, "{l}");
    // pdftotext's texts of the same PDFs, where it is installed: the same.
    if let Ok(exe @ content::PdfExtractor::Pdftotext(_)) = content::pdf_extractor() {
        for (pdf, text) in [&v1, &v2].into_iter().zip(&texts) {
            let v = content::pdf_view_with(pdf, exe, &Limits::default());
            assert!(&v.bytes == text, "{}", String::from_utf8_lossy(&v.bytes));
        }
        // A run with pdftotext does not reuse the fallback's records.
        let mut c = make_report_cmd(
            &repo,
            &dir.path().join("again"),
            &[
                "QUIET=-q",
                "FORMATS=txt json",
                &format!("PREVIOUS={}", work.display()),
            ],
        );
        c.env_remove("FSIM_PDF");
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{err}");
        assert!(
            err.contains(
                "the previous run was chunked with pdf=fsim-pdftext but this run uses pdf=(none)"
            ),
            "{err}"
        );
    }
}

/// `data` damaged one of four ways (bits flipped, truncated, a slice
/// duplicated, a slice zeroed), as `content`'s mutation test does; `seed`
/// makes the case, so a failure is the same on every run.
fn damaged(data: &[u8], seed: &mut u64) -> Vec<u8> {
    let mut next = |n: usize| {
        *seed ^= *seed >> 12;
        *seed ^= *seed << 25;
        *seed ^= *seed >> 27;
        (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1) as u64) as usize
    };
    let mut d = data.to_vec();
    match next(4) {
        0 => {
            for _ in 0..1 + next(8) {
                let i = next(d.len());
                d[i] ^= 1 << next(8);
            }
        }
        1 => d.truncate(next(d.len())),
        2 => {
            let a = next(d.len());
            let b = (a + next(4096)).min(d.len());
            let piece = d[a..b].to_vec();
            let at = next(d.len());
            d.splice(at..at, piece);
        }
        _ => {
            let a = next(d.len());
            let b = (a + next(512)).min(d.len());
            d[a..b].fill(0);
        }
    }
    d
}

/// The fallback's answer to `data` under `limits`: a view within the size
/// limit, or the raw bytes and a note; never a panic that escapes, never
/// past the deadline by more than the time to kill a process.
fn fallback_view(data: &[u8], limits: &Limits, what: &str) -> content::View {
    let t = std::time::Instant::now();
    let v = content::pdf_view_with(data, &fsim_pdftext(), limits);
    let took = t.elapsed();
    assert!(
        took < limits.time + std::time::Duration::from_secs(2),
        "{what}: {took:?}"
    );
    match &v.note {
        Some(note) => {
            assert!(note.starts_with("unreadable as pdf: "), "{what}: {note}");
            assert!(v.bytes == data, "{what}: a note keeps the raw view");
        }
        None => assert!(v.bytes.len() as u64 <= limits.max_bytes, "{what}"),
    }
    v
}

/// The mutation test of the fallback: the PDF fixtures (a hand-written
/// one, minutes.pdf and its encrypted copy) damaged 120 times each through
/// fsim-pdftext: every case a view or a note, within the deadline; the
/// parser's panics (it `unwrap`s) stay in its process, as notes.
#[test]
fn mutated_pdfs_through_the_rust_fallback_are_views_or_notes() {
    let limits = Limits {
        max_bytes: 4 << 20,
        time: std::time::Duration::from_secs(2),
        pdf_memory: 256 << 20,
        ..Limits::default()
    };
    let lines: Vec<String> = notes(60, 0).lines().map(String::from).collect();
    let fixtures = [
        ("hand-written.pdf", pdf_of(&lines)),
        (
            "minutes.pdf",
            std::fs::read(fixture("minutes.pdf")).unwrap(),
        ),
        (
            "minutes-encrypted.pdf",
            std::fs::read(fixture("minutes-encrypted.pdf")).unwrap(),
        ),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut views, mut notes_, mut crashes) = (0, 0, 0);
    let started = std::time::Instant::now();
    for (name, data) in &fixtures {
        let whole = fallback_view(data, &limits, name);
        assert!(
            *name == "minutes-encrypted.pdf" || whole.note.is_none(),
            "{name}: {:?}",
            whole.note
        );
        for i in 0..120 {
            let m = damaged(data, &mut seed);
            let v = fallback_view(&m, &limits, &format!("{name} case {i}"));
            match &v.note {
                None => views += 1,
                Some(n) => {
                    notes_ += 1;
                    crashes += usize::from(n.contains("fsim-pdftext failed (signal"));
                }
            }
        }
    }
    eprintln!(
        "360 damaged PDFs through fsim-pdftext: {views} views, {notes_} notes ({crashes} killed by a signal), {:?}",
        started.elapsed()
    );
    assert!(views > 0 && notes_ > 0);
}

/// Hostile PDFs through the fallback, each a note (or an empty text)
/// within the deadline: arrays nested 100,000 deep in an object and
/// 200,000 deep in a page's text (a recursive parser's stack), a page tree
/// whose page is its own parent and kid (a loop), a content stream that
/// inflates to 1 GiB of text operators (the address space limit: a note),
/// a stream whose /Length claims 2^60 bytes.
#[test]
fn hostile_pdfs_through_the_rust_fallback_are_notes_in_time() {
    let limits = Limits {
        max_bytes: 16 << 20,
        time: std::time::Duration::from_secs(3),
        pdf_memory: 512 << 20,
        ..Limits::default()
    };
    // The 1 GiB stream must meet the address space limit, not the clock:
    // on a loaded machine (CI runs the suite two tests at a time) inflating
    // 512 MiB took longer than 3 s once, and the note was the deadline's.
    let memory_case = Limits {
        time: std::time::Duration::from_secs(60),
        ..limits.clone()
    };
    let cases = hostile_pdfs();
    for (what, data) in &cases {
        let limits = if *what == "a stream of 1 GiB" {
            &memory_case
        } else {
            &limits
        };
        let v = fallback_view(data, limits, what);
        eprintln!("{what}: {:?}", v.note);
        assert!(
            v.note.is_some() || v.bytes.is_empty(),
            "{what}: a view of {} bytes",
            v.bytes.len()
        );
        if *what == "a stream of 1 GiB" {
            let note = v.note.unwrap_or_default();
            assert!(
                note.starts_with("unreadable as pdf: fsim-pdftext failed"),
                "{what}: {note}"
            );
        }
    }
}

/// The hostile PDFs, each with what it is.
fn hostile_pdfs() -> Vec<(&'static str, Vec<u8>)> {
    let deep = format!(
        "<< /Type /Catalog /Pages 2 0 R /Deep {}{} >>",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let pdf = |objects: &[String]| -> Vec<u8> { pdf_objects(objects) };
    let page = |contents: &str| -> String {
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents {contents} >>")
    };
    let font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string();
    let pages = "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string();
    let catalog = "<< /Type /Catalog /Pages 2 0 R >>".to_string();
    let bomb_obj = bomb_object();
    let deep_text = format!(
        "<< /Length 400010 >>\nstream\nBT {}{} TJ ET\nendstream",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    vec![
        (
            "nested 100,000 deep",
            pdf(&[deep, pages.clone(), page("[]"), font.clone()]),
        ),
        (
            "a page's text nested 200,000 deep",
            pdf(&[
                catalog.clone(),
                pages.clone(),
                page("5 0 R"),
                font.clone(),
                deep_text,
            ]),
        ),
        (
            "a page tree loop",
            pdf(&[
                catalog.clone(),
                "<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 /Parent 2 0 R >>".into(),
                page("[]").replace("/Type /Page ", "/Type /Pages /Kids [3 0 R] "),
                font.clone(),
            ]),
        ),
        (
            "a stream of 1 GiB",
            pdf_raw(&[
                catalog.clone().into_bytes(),
                pages.clone().into_bytes(),
                page("5 0 R").into_bytes(),
                font.clone().into_bytes(),
                bomb_obj,
            ]),
        ),
        (
            "a length of 2^60",
            pdf(&[
                catalog,
                pages,
                page("5 0 R"),
                font,
                format!("<< /Length {} >>\nstream\nBT ET\nendstream", 1u64 << 60),
            ]),
        ),
    ]
}

/// A stream object of 1 GiB of `(x) Tj` operators, deflated (about 1 MB).
fn bomb_object() -> Vec<u8> {
    let bomb = {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        let chunk = "(xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx) Tj\n".repeat(20_000);
        while e.total_in() < 1 << 30 {
            e.write_all(chunk.as_bytes()).unwrap();
        }
        e.finish().unwrap()
    };
    let mut obj = format!(
        "<< /Length {} /Filter /FlateDecode >>\nstream\n",
        bomb.len()
    )
    .into_bytes();
    obj.extend_from_slice(&bomb);
    obj.extend_from_slice(b"\nendstream");
    obj
}

/// A `pdftotext` of a folder of its own that writes a line to `log` for
/// each call and prints fsim-pdftext's text of the PDF (its fifth
/// argument, as fsim passes them): the PATH of a run that counts its
/// extractions.
fn counting_pdftotext(dir: &Path, log: &Path) -> String {
    scripted_pdftotext(dir, &format!("echo call >> '{}'", log.display()))
}

/// A `pdftotext` that runs the shell lines `first`, then prints
/// fsim-pdftext's text of the PDF: the PATH of a run that uses it.
fn scripted_pdftotext(dir: &Path, first: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let folder = dir.join("scripted-bin");
    std::fs::create_dir_all(&folder).unwrap();
    let exe = folder.join("pdftotext");
    std::fs::write(
        &exe,
        format!(
            "#!/bin/sh\n{first}\nexec '{}' \"$5\"\n",
            env!("CARGO_BIN_EXE_fsim-pdftext")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", folder.display(), std::env::var("PATH").unwrap())
}

/// fsim-chunk with `-j jobs` on `repo`, its outputs in `dir` (chunks.tsv,
/// files.tsv), pdftotext found on `path`.
fn chunk_pdfs(dir: &Path, repo: &Path, jobs: &str, path: &str) {
    let mut c = fsim("fsim-chunk");
    c.args(["-q", "-j", jobs, "-o"])
        .arg(dir.join("chunks.tsv"))
        .arg("--files-out")
        .arg(dir.join("files.tsv"))
        .arg(repo)
        .env("PATH", path)
        .env("FSIM_PDF", "pdftotext");
    run_ok(c, None);
}

/// fsim-chunk hands the PDFs of one folder to different workers: with
/// `-j 2`, two PDFs are extracted at the same time. The extractor here
/// logs its start, sleeps a second, logs its end: one after the other
/// (as when they shared a batch of 16 files) the log reads start, end,
/// start, end.
#[test]
fn two_pdfs_of_one_folder_are_extracted_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    minutes_pdfs(&repo);
    for i in 0..6 {
        std::fs::write(repo.join(format!("note-{i}.txt")), notes(20, i)).unwrap();
    }
    let log = dir.path().join("log");
    let path = scripted_pdftotext(
        dir.path(),
        &format!(
            "echo start >> '{log}'\nsleep 1\necho end >> '{log}'",
            log = log.display()
        ),
    );
    chunk_pdfs(dir.path(), &repo, "2", &path);
    let files = std::fs::read_to_string(dir.path().join("files.tsv")).unwrap();
    assert_eq!(files.matches("\tpdf\t").count(), 2, "{files}");
    let events = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        events.lines().collect::<Vec<_>>(),
        ["start", "start", "end", "end"],
        "the two extractions did not overlap"
    );
}

/// A copy of a PDF (the same bytes in another folder) takes its text from
/// the view store: fsim-chunk runs the extractor once per distinct PDF,
/// and the copy's entry in the file table is the original's (the same
/// view hash, size and raw hash).
#[test]
fn a_copy_of_a_pdf_is_extracted_once() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    minutes_pdfs(&repo);
    std::fs::create_dir_all(repo.join("filed")).unwrap();
    std::fs::copy(repo.join("minutes-v1.pdf"), repo.join("filed/minutes.pdf")).unwrap();
    let log = dir.path().join("calls");
    let path = counting_pdftotext(dir.path(), &log);
    chunk_pdfs(dir.path(), &repo, "1", &path);
    assert_eq!(calls(&log), 2, "three PDFs, two distinct");
    let files = std::fs::read_to_string(dir.path().join("files.tsv")).unwrap();
    let entry = |name: &str| -> Vec<String> {
        let l = files
            .lines()
            .find(|l| l.ends_with(name))
            .unwrap_or_else(|| panic!("{name} in {files}"));
        // Size, raw hash, type, view kind, raw size, view hash.
        let f: Vec<&str> = l.split('\t').collect();
        [1, 3, 4, 5, 6, 7]
            .iter()
            .map(|&i| f[i].to_string())
            .collect()
    };
    let (original, copy) = (entry("/minutes-v1.pdf"), entry("/filed/minutes.pdf"));
    assert_eq!(original[3], "pdf", "{files}");
    assert_eq!(copy, original);
}

fn calls(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |s| s.lines().count())
}

/// fsim-chunk keeps the PDF texts it extracted beside its file table
/// (`files.tsv.views`), and the stages after it read them there instead of
/// running the extractor again: a default `make report` extracts each PDF
/// once. fsim-verify gives the same pairs from the store, from a store
/// with a damaged entry (that one extracted again), with a FIFO in an
/// entry's place (no hang) and with no store (both extracted again); a
/// re-run (`PREVIOUS=`) links the views of the files it reuses into its
/// own store.
#[test]
fn the_stages_after_fsim_chunk_read_the_pdf_texts_it_kept() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    minutes_pdfs(&repo);
    let log = dir.path().join("calls");
    let path = counting_pdftotext(dir.path(), &log);
    let work = dir.path().join("work");
    let mut c = make_report_cmd(&repo, &work, &["QUIET=-q", "FORMATS=txt json"]);
    c.env("PATH", &path).env("FSIM_PDF", "pdftotext");
    run_ok(c, None);
    assert_eq!(calls(&log), 2, "each PDF extracted once, by fsim-chunk");
    let store = work.join("files.tsv.views");
    let entries = || -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&store)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    assert_eq!(entries().len(), 2, "{:?}", entries());
    let r: Value = serde_json::from_str(&read(&work, "report.json")).unwrap();
    let l = link(&links(&r), "minutes-v1.pdf", "minutes-v2.pdf")
        .cloned()
        .expect("the pdf pair");
    assert_eq!(l["exact"], true, "{l}");

    // A re-run reuses both files: their views linked into its store.
    let again = dir.path().join("again");
    let prev = format!("PREVIOUS={}", work.display());
    let mut c = make_report_cmd(&repo, &again, &["QUIET=-q", "FORMATS=txt json", &prev]);
    c.env("PATH", &path).env("FSIM_PDF", "pdftotext");
    run_ok(c, None);
    assert_eq!(calls(&log), 2, "the re-run extracted nothing");
    assert_eq!(
        std::fs::read_dir(again.join("files.tsv.views"))
            .unwrap()
            .count(),
        2
    );

    let verify = |out: &str| -> String {
        let mut c = fsim("fsim-verify");
        c.args(["-q", "--min-percent", "50", "--files"])
            .arg(work.join("files.tsv"))
            .arg("-o")
            .arg(work.join(out))
            .arg(work.join("pairs.tsv"))
            .env("PATH", &path)
            .env("FSIM_PDF", "pdftotext");
        run_ok(c, None);
        read(&work, out)
    };
    let from_store = verify("v-store.tsv");
    assert_eq!(calls(&log), 2, "fsim-verify read the store");
    assert!(
        from_store.lines().any(|l| l.ends_with("\texact")),
        "{from_store}"
    );
    // A damaged entry (same length, other bytes) fails its checksum.
    let first = &entries()[0];
    let len = std::fs::metadata(first).unwrap().len() as usize;
    std::fs::write(first, vec![b'x'; len]).unwrap();
    assert_eq!(verify("v-damaged.tsv"), from_store);
    assert_eq!(calls(&log), 3, "the damaged entry extracted again");
    // A FIFO in an entry's place is no entry (reading it would block).
    let second = &entries()[1];
    std::fs::remove_file(second).unwrap();
    let o = Command::new("mkfifo").arg(second).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(verify("v-fifo.tsv"), from_store);
    assert_eq!(calls(&log), 5, "both entries extracted again");
    std::fs::remove_dir_all(&store).unwrap();
    assert_eq!(verify("v-none.tsv"), from_store);
    assert_eq!(calls(&log), 7, "both extracted again without a store");

    // A run without PDFs makes no store.
    let texts = dir.path().join("texts");
    std::fs::create_dir_all(&texts).unwrap();
    std::fs::write(texts.join("a.txt"), notes(60, 0)).unwrap();
    std::fs::write(texts.join("b.txt"), notes(60, 8)).unwrap();
    let plain = dir.path().join("plain");
    run_ok(make_report_cmd(&texts, &plain, &["QUIET=-q"]), None);
    assert!(plain.join("files.tsv").is_file());
    assert!(!plain.join("files.tsv.views").exists());
}
