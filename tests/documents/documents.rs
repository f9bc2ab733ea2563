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

pub(super) fn fixture(name: &str) -> PathBuf {
    source_root().join("tests/data/documents").join(name)
}

/// `n` lines of text, every `every`th edited when `edit` (0: none).
pub(super) fn notes(n: usize, edit: usize) -> String {
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
pub(super) fn report(repo: &Path, work: &Path, vars: &[&str]) -> (Value, String) {
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
pub(super) fn links(r: &Value) -> Vec<(String, String, Value)> {
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

pub(super) fn link<'a>(all: &'a [(String, String, Value)], a: &str, b: &str) -> Option<&'a Value> {
    all.iter().find(|(x, y, _)| x == a && y == b).map(|t| &t.2)
}

/// A cluster file's json by name.
pub(super) fn file<'a>(r: &'a Value, n: &str) -> &'a Value {
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
