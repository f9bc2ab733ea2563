//! PDFs through the real binaries: two versions of a PDF are one pair at
//! their text, by pdftotext or by the Rust fallback; damaged and hostile
//! PDFs are views or notes, in time; a PDF is extracted once however many
//! copies, and the stages after fsim-chunk read the texts it kept.

use crate::common;

use super::documents::{file, fixture, link, links, notes, report};
use common::*;
use fsim::content::{self, Limits};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

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
