//! The views of real documents (tests/data/documents, written by the
//! writers named in its make.py), the hostile ones built here (bombs,
//! truncations, nesting, a panicking reader), and a mutation test over
//! every fixture: no panic escapes, the output stays bounded, every call
//! returns in time.

use std::io::Write;
use std::time::Instant;

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = fixture_dir().join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn fixture_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/documents")
}

/// Every fixture but the generator script, in name order.
fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut names: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".py") && !n.ends_with(".md"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| (n.clone(), fixture(&n)))
        .collect()
}

fn text(name: &str) -> (Kind, String) {
    let v = view(&fixture(name), &Limits::default());
    assert_eq!(v.note, None, "{name}");
    (v.kind, String::from_utf8(v.bytes).unwrap())
}

const LETTER: [&str; 5] = [
    "The committee met on the third of March to review the budget.",
    "Travel costs rose by twelve percent over the previous year.",
    "The printing contract is renewed for two more years.",
    "Members asked for a summary of the cloud storage invoices.",
    "The next meeting is planned for the first week of June.",
];

#[test]
fn docx_is_its_paragraphs_in_order_without_styles() {
    let (kind, t) = text("letter-v1.docx");
    assert_eq!(kind, Kind::Docx);
    let mut want = vec!["Minutes"];
    want.extend(LETTER);
    // As prose: one sentence or heading a line, words one space apart.
    want.extend(["Item", "Cost", "Travel", "1200", "Column A Column B"]);
    assert_eq!(t, want.join("\n") + "\n");
    let (_, v2) = text("letter-v2.docx");
    assert!(v2.contains("The printing contract ends this year.\n"));
    assert!(!v2.contains("renewed"));
    // The template's styles (36 KB of the file) are not in the view.
    let (_, other) = text("other.docx");
    assert_eq!(
        other,
        "Garden club\nTulips need full sun.\nWater the roses twice a week.\nColumn A Column B\n"
    );
}

#[test]
fn xml_entities_in_text_are_resolved() {
    // Every writer escapes < > & in its XML text (python-docx, odfpy, Word):
    // the view holds the characters, as a reader sees them and as a mail
    // or a text file of the same words has them (make quality, documents).
    let doc = br#"<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>a &lt;b&gt; &amp; &quot;c&quot; &#233; &nbsp;d</w:t></w:r></w:p></w:body></w:document>"#;
    let data = zip_of(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", doc),
    ]);
    let v = view(&data, &Limits::default());
    assert_eq!((v.kind, v.note), (Kind::Docx, None));
    assert_eq!(
        String::from_utf8(v.bytes).unwrap(),
        // As prose: words split at any white space, the no-break space's too.
        "a <b> & \"c\" \u{e9} d\n"
    );
}

#[test]
fn spreadsheets_are_rows_of_cells() {
    let (kind, t) = text("costs.xlsx");
    assert_eq!(kind, Kind::Xlsx);
    assert_eq!(
        t,
        "Item\tCost\nTravel\t1200\nPrinting\t300\nReviewed by the committee\n"
    );
    let (kind, t) = text("costs.ods");
    assert_eq!(kind, Kind::Ods);
    assert_eq!(t, "Item\tCost\nTravel\t1200\nPrinting\t300\n");
}

#[test]
fn slides_text_and_books_in_reading_order() {
    for name in ["review.pptx", "review.odp"] {
        let (_, t) = text(name);
        assert_eq!(
            t, "Quarterly review\nBudget and travel\nNext steps\nRenew printing\n",
            "{name}"
        );
    }
    let (kind, t) = text("report.odt");
    assert_eq!(kind, Kind::Odt);
    let want = format!(
        "Annual report\n{}\n{}\n{}\nTwo spaces\n",
        LETTER[0], LETTER[1], LETTER[2]
    );
    assert_eq!(t, want);
    let (kind, t) = text("minutes.epub");
    assert_eq!(kind, Kind::Epub);
    let want = format!(
        "Chapter one\n{}\n{}\nChapter two\n{}\n{}\n",
        LETTER[0], LETTER[1], LETTER[2], LETTER[3]
    );
    assert_eq!(t, want);
}

#[test]
fn compressed_streams_are_their_decompressed_bytes() {
    let want: String = (0..20)
        .map(|i| format!("{i}: {}\n", LETTER[i % 5]))
        .collect();
    for (name, kind) in [
        ("notes.txt.gz", Kind::Gzip),
        ("notes.txt.bz2", Kind::Bzip2),
        ("notes.txt.xz", Kind::Xz),
        ("notes.txt.zst", Kind::Zstd),
    ] {
        assert_eq!(text(name), (kind, want.clone()), "{name}");
    }
}

#[test]
fn mail_is_its_headers_and_text_body() {
    let (kind, t) = text("alternative.eml");
    assert_eq!(kind, Kind::Mail);
    // Subject decoded from its RFC 2047 words, the quoted-printable plain
    // body decoded, the HTML alternative and the attachment left out; the
    // body as prose, one sentence a line (a message and a document of the
    // same words have the same lines; the Date line, of more words than a
    // heading, runs on into the next).
    assert_eq!(
        t,
        "From: Ana Souza <ana@example.org>\nTo: committee@example.org\n\
         Date: Sun, 03 Mar 2024 10:00:00 +0000 Subject: Réunion du comité\n\
         Bonjour,\nLe comité s'est réuni le 3 mars.\nÀ bientôt.\n"
    );
    let (_, t) = text("html-only.eml");
    assert_eq!(
        t,
        "From: bob@example.org\nTo: ana@example.org\n\
         Date: Mon, 04 Mar 2024 09:30:00 +0000 Subject: Invoices\n\
         The invoices & receipts are attached.\n"
    );
}

#[test]
fn pdf_is_the_text_of_its_pages_or_a_note() {
    let v = view(&fixture("minutes.pdf"), &Limits::default());
    if pdf_available() {
        assert_eq!(v.kind, Kind::Pdf);
        assert_eq!(v.note, None);
        assert_eq!(
            String::from_utf8(v.bytes).unwrap(),
            LETTER[..4].join("\n") + "\n"
        );
    } else {
        assert_eq!(v.kind, Kind::Raw);
        assert!(v
            .note
            .unwrap()
            .contains("pdftotext (poppler-utils) is not installed"));
    }
    // A PDF with a user password: its raw view, and why.
    let data = fixture("minutes-encrypted.pdf");
    let v = view(&data, &Limits::default());
    assert_eq!((v.kind, v.bytes == data), (Kind::Raw, true));
    let note = v.note.unwrap();
    assert!(note.starts_with("unreadable as pdf: "), "{note}");
    match pdf_extractor() {
        Ok(PdfExtractor::Pdftotext(_)) => assert!(note.contains("Incorrect password"), "{note}"),
        Ok(PdfExtractor::FsimPdftext(_)) => assert!(note.contains("encrypted"), "{note}"),
        Err(_) => {}
    }
}

#[test]
fn the_kind_comes_from_the_bytes_not_the_name() {
    let dir = tempfile::tempdir().unwrap();
    // A docx named .bak, a text named .docx and .gz.
    let bak = dir.path().join("letter.bak");
    std::fs::write(&bak, fixture("letter-v1.docx")).unwrap();
    let fake = dir.path().join("fake.docx.gz");
    std::fs::write(&fake, "BZh9 is how this line starts\n").unwrap();
    let o = open(&bak, &Limits::default()).unwrap();
    assert_eq!(o.kind, Kind::Docx);
    assert_eq!(o.meta.len(), fixture("letter-v1.docx").len() as u64);
    assert!(matches!(&o.body, Body::View(t) if t.starts_with(b"Minutes\n")));
    let mut o = open(&fake, &Limits::default()).unwrap();
    assert_eq!((o.kind, o.note), (Kind::Raw, None));
    let Body::Raw(f) = &mut o.body else {
        panic!("a text file has its raw body")
    };
    let mut s = String::new();
    f.read_to_string(&mut s).unwrap();
    assert_eq!(s, "BZh9 is how this line starts\n");
    // Headers of a note are not a mail message; a message is.
    let note = b"Note: buy milk\nTodo: call Ana\n\nbody\n";
    assert_eq!(detect(&mut io::Cursor::new(&note[..])), Kind::Raw);
    let mail = b"From: a@b.c\nDate: Mon, 4 Mar 2024 09:30:00 +0000\n\nhello\n";
    assert_eq!(detect(&mut io::Cursor::new(&mail[..])), Kind::Mail);
}

#[test]
fn raw_mode_and_memory_budgets() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("notes.txt.gz");
    std::fs::write(&gz, fixture("notes.txt.gz")).unwrap();
    let limits = Limits::default();
    let auto = open_with(&gz, Mode::parse("auto").unwrap(), &limits).unwrap();
    assert_eq!(auto.kind, Kind::Gzip);
    assert!(matches!(&auto.body, Body::View(t) if t.starts_with(b"0: The committee")));
    let mut raw = open_with(&gz, Mode::parse("raw").unwrap(), &limits).unwrap();
    assert_eq!((raw.kind, raw.note.is_none()), (Kind::Raw, true));
    let Body::Raw(f) = &mut raw.body else {
        panic!("--content raw reads the file as it is")
    };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).unwrap();
    assert_eq!(bytes, fixture("notes.txt.gz"));
    // A truncated docx from a path: its raw file at the start, and a note.
    let cut = dir.path().join("cut.docx");
    let docx = fixture("letter-v1.docx");
    std::fs::write(&cut, &docx[..docx.len() / 2]).unwrap();
    let mut o = open_with(&cut, Mode::Auto, &limits).unwrap();
    assert_eq!(o.kind, Kind::Raw);
    assert!(o.note.unwrap().starts_with("unreadable as docx: bad zip"));
    let Body::Raw(f) = &mut o.body else {
        panic!("a note keeps the raw file")
    };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).unwrap();
    assert_eq!(bytes, &docx[..docx.len() / 2]);
    // A directory (a FIFO, ...) is opened unread, for the caller's check.
    let o = open_with(dir.path(), Mode::Auto, &limits).unwrap();
    assert!(o.meta.is_dir() && o.note.is_none());
    assert_eq!(
        Mode::parse("text"),
        Err("expected auto or raw, not \"text\"".to_string())
    );
    // Views within a quarter of a stage's memory, 1 MiB to 64 MiB.
    assert_eq!(Limits::within_memory(256 << 20).max_bytes, 64 << 20);
    assert_eq!(Limits::within_memory(32 << 20).max_bytes, 8 << 20);
    assert_eq!(Limits::within_memory(1 << 20).max_bytes, 1 << 20);
    assert_eq!(Limits::within_memory(u64::MAX).max_bytes, 64 << 20);
}

/// A zip package of `members`, deflated (also the archive module's
/// tests').
pub(super) fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data) in members {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn gzip_of(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// The note of `data`'s view, which must be its raw bytes.
fn raw_note(data: &[u8], limits: &Limits) -> String {
    let v = view(data, limits);
    assert_eq!(v.kind, Kind::Raw);
    assert!(v.bytes == data, "a fallback view is the raw bytes");
    v.note.expect("a note says why")
}

#[test]
fn bombs_stop_at_the_ratio_or_the_size_limit() {
    let zeros = vec![0u8; 24 << 20];
    let note = raw_note(&gzip_of(&zeros), &Limits::default());
    assert!(
        note.starts_with("unreadable as gzip: the decompressed stream expands more than 200:1"),
        "{note}"
    );
    let zstd =
        ruzstd::encoding::compress_to_vec(&zeros[..], ruzstd::encoding::CompressionLevel::Fastest);
    let note = raw_note(&zstd, &Limits::default());
    assert!(
        note.starts_with("unreadable as zstd: the decompressed stream expands more than 200:1"),
        "{note}"
    );
    // A 14-byte zstd frame declaring a 96 MiB window (exponent 16,
    // mantissa 4): refused before ruzstd reserves it.
    let hostile = [
        0x28,
        0xb5,
        0x2f,
        0xfd,
        0x00,
        (16 << 3) | 4,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    assert_eq!(
        raw_note(&hostile, &Limits::default()),
        "unreadable as zstd: the zstd frame asks for a 100663296-byte window, more than the size limit of 67108864"
    );
    // xz through its capped writer (lzma-rs writes literals only: no ratio).
    let mut xz = Vec::new();
    lzma_rs::xz_compress(&mut &zeros[..2 << 20], &mut xz).unwrap();
    let one = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    assert_eq!(
        raw_note(&xz, &one),
        "unreadable as xz: the decompressed stream larger than 1048576 bytes, the size limit"
    );
    // A docx whose document.xml is 24 MB of spaces.
    let mut xml = b"<w:document><w:body>".to_vec();
    xml.resize(24 << 20, b' ');
    let docx = zip_of(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", &xml),
    ]);
    let note = raw_note(&docx, &Limits::default());
    assert!(
        note.starts_with("unreadable as docx: member word/document.xml expands more than 200:1"),
        "{note}"
    );
    // Ordinary text over the size limit (not a bomb: the ratio is small).
    let lines: String = (0..60_000)
        .map(|i| format!("{i} {}\n", i * 7919 % 10007))
        .collect();
    let small = Limits {
        max_bytes: 256 << 10,
        ..Limits::default()
    };
    let note = raw_note(&gzip_of(lines.as_bytes()), &small);
    assert_eq!(
        note,
        "unreadable as gzip: the decompressed stream larger than 262144 bytes, the size limit"
    );
}

#[test]
fn broken_documents_keep_their_raw_view_with_a_note() {
    let docx = fixture("letter-v1.docx");
    let note = raw_note(&docx[..docx.len() / 2], &Limits::default());
    assert!(note.starts_with("unreadable as docx: bad zip: "), "{note}");
    let gz = fixture("notes.txt.gz");
    let note = raw_note(&gz[..gz.len() - 12], &Limits::default());
    assert!(
        note.starts_with("unreadable as gzip: the decompressed stream: "),
        "{note}"
    );
    let mut bad = gz.clone();
    let n = bad.len();
    bad[n - 8] ^= 0xff; // the CRC
    let note = raw_note(&bad, &Limits::default());
    assert!(
        note.contains("corrupt") || note.contains("CRC") || note.contains("crc"),
        "{note}"
    );
    // A docx without its main part.
    let empty = zip_of(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/styles.xml", b"<x/>"),
    ]);
    assert_eq!(
        raw_note(&empty, &Limits::default()),
        "unreadable as docx: member word/document.xml: specified file not found in archive"
    );
}

#[test]
fn nesting_and_member_counts_are_bounded() {
    let deep = format!(
        "<w:document>{}{}</w:document>",
        "<w:p>".repeat(10_000),
        "</w:p>".repeat(10_000)
    );
    let docx = zip_of(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", deep.as_bytes()),
    ]);
    assert_eq!(
        raw_note(&docx, &Limits::default()),
        "unreadable as docx: XML nested deeper than 256 elements"
    );
    let names: Vec<String> = (0..20).map(|i| format!("word/media/{i}.png")).collect();
    let mut members: Vec<(&str, &[u8])> = vec![
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", b"<w:document/>"),
    ];
    members.extend(names.iter().map(|n| (n.as_str(), &b"x"[..])));
    let few = Limits {
        max_members: 10,
        ..Limits::default()
    };
    assert_eq!(
        raw_note(&zip_of(&members), &few),
        "unreadable as docx: 22 members, more than the limit of 10"
    );
    // MIME parts nested 1000 deep.
    let mut msg = String::from("From: a@b.c\nDate: Mon, 4 Mar 2024 09:30:00 +0000\n");
    for i in 0..1000 {
        msg.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=\"b{i}\"\n\n--b{i}\n"
        ));
    }
    msg.push_str("\nhello\n");
    assert_eq!(
        raw_note(msg.as_bytes(), &Limits::default()),
        "unreadable as mail: MIME parts nested deeper than 256"
    );
}

#[test]
fn the_deadline_and_panics_are_notes() {
    let zero = Limits {
        time: Duration::ZERO,
        ..Limits::default()
    };
    assert_eq!(
        raw_note(&fixture("notes.txt.gz"), &zero),
        "unreadable as gzip: took longer than 0 s, the time limit"
    );
    /// A source whose reads panic, as a buggy parser would.
    struct Boom;
    impl Read for Boom {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            panic!("boom")
        }
    }
    impl Seek for Boom {
        fn seek(&mut self, _: SeekFrom) -> io::Result<u64> {
            Ok(0)
        }
    }
    let r = extract_guarded(Kind::Gzip, &mut Boom, None, &Limits::default());
    assert_eq!(r, Err("the extractor panicked (boom)".to_string()));
}

/// A small deterministic generator (xorshift64*), so that a failing case
/// is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `data` damaged one of four ways: bytes flipped, truncated, a slice
/// duplicated, a slice zeroed.
fn mutate(data: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut d = data.to_vec();
    match rng.below(4) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(d.len());
                d[i] ^= 1 << rng.below(8);
            }
        }
        1 => d.truncate(rng.below(d.len())),
        2 => {
            let a = rng.below(d.len());
            let b = (a + rng.below(4096)).min(d.len());
            let piece = d[a..b].to_vec();
            let at = rng.below(d.len());
            d.splice(at..at, piece);
        }
        _ => {
            let a = rng.below(d.len());
            let b = (a + rng.below(512)).min(d.len());
            d[a..b].fill(0);
        }
    }
    d
}

#[test]
fn mutated_fixtures_never_panic_grow_or_hang() {
    let limits = Limits {
        max_bytes: 4 << 20,
        time: Duration::from_secs(2),
        ..Limits::default()
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut cases, mut notes, mut views) = (0, 0, 0);
    let started = Instant::now();
    for (name, data) in fixtures() {
        // PDF and legacy Office cases start a process each: fewer of them.
        let n = if [".pdf", ".doc", ".xls"].iter().any(|e| name.ends_with(e)) {
            60
        } else {
            250
        };
        for _ in 0..n {
            let m = mutate(&data, &mut rng);
            let t = Instant::now();
            let v = view(&m, &limits);
            let took = t.elapsed();
            cases += 1;
            assert!(took < Duration::from_secs(4), "{name}: {took:?}");
            assert!(
                v.bytes.len() as u64 <= limits.max_bytes.max(m.len() as u64),
                "{name}"
            );
            if let Some(note) = &v.note {
                notes += 1;
                assert!(!note.contains("panicked"), "{name}: {note}");
                assert_eq!(v.bytes, m, "{name}: a note keeps the raw view");
            } else if v.kind != Kind::Raw {
                views += 1;
            }
        }
    }
    eprintln!(
        "{cases} mutated documents: {views} views, {notes} notes, {:?}",
        started.elapsed()
    );
    assert!(cases > 3000 && views > 0 && notes > 0);
}

#[test]
fn views_are_the_same_on_every_thread_and_run() {
    let all = fixtures();
    let once: Vec<View> = all
        .iter()
        .map(|(_, d)| view(d, &Limits::default()))
        .collect();
    let threads: Vec<Vec<View>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    all.iter()
                        .map(|(_, d)| view(d, &Limits::default()))
                        .collect()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for t in threads {
        assert_eq!(t, once);
    }
}

/// `data` (a zip) with member `target` replaced by `new`, the others as
/// they were (`mimetype` stored first, as OpenDocument and EPUB want).
fn rezip_with(data: &[u8], target: &str, new: &[u8]) -> Vec<u8> {
    let mut z = zip::ZipArchive::new(io::Cursor::new(data)).unwrap();
    let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let name = f.name().to_string();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        let method = match name.as_str() {
            "mimetype" => zip::CompressionMethod::Stored,
            _ => zip::CompressionMethod::Deflated,
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        w.start_file(name.as_str(), opts).unwrap();
        w.write_all(if name == target { new } else { &bytes })
            .unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The members an extractor reads, of a package.
fn text_parts(data: &[u8]) -> Vec<String> {
    let z = zip::ZipArchive::new(io::Cursor::new(data)).unwrap();
    let read = [
        "document.xml",
        "sharedStrings.xml",
        "worksheets/sheet",
        "slides/slide",
        "content.xml",
        ".xhtml",
        ".opf",
        "container.xml",
    ];
    let mut names: Vec<String> = z
        .file_names()
        .filter(|n| read.iter().any(|r| n.contains(r)))
        .map(String::from)
        .collect();
    names.sort();
    names
}

#[test]
fn mutated_xml_inside_valid_packages_is_a_view_or_a_note() {
    // Mutating the zip's bytes mostly breaks its CRCs; here the XML the
    // extractors parse is damaged and the package stays valid, so the XML
    // walkers, the spine and the shared strings meet the damage.
    let limits = Limits {
        max_bytes: 4 << 20,
        time: Duration::from_secs(2),
        ..Limits::default()
    };
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut cases, mut notes, mut views) = (0, 0, 0);
    for (name, data) in fixtures() {
        if !data.starts_with(b"PK\x03\x04") {
            continue;
        }
        let parts = text_parts(&data);
        assert!(!parts.is_empty(), "{name}");
        let mut z = zip::ZipArchive::new(io::Cursor::new(&data[..])).unwrap();
        for _ in 0..150 {
            let part = &parts[rng.below(parts.len())];
            let mut xml = Vec::new();
            z.by_name(part).unwrap().read_to_end(&mut xml).unwrap();
            let m = rezip_with(&data, part, &mutate(&xml, &mut rng));
            let t = Instant::now();
            let v = view(&m, &limits);
            cases += 1;
            assert!(t.elapsed() < Duration::from_secs(4), "{name} {part}");
            assert!(v.bytes.len() as u64 <= limits.max_bytes.max(m.len() as u64));
            match &v.note {
                Some(note) => {
                    notes += 1;
                    assert!(!note.contains("panicked"), "{name} {part}: {note}");
                    assert_eq!(v.bytes, m);
                }
                None => {
                    views += 1;
                    assert!(
                        std::str::from_utf8(&v.bytes).is_ok(),
                        "{name}: a text view is UTF-8"
                    );
                }
            }
        }
    }
    eprintln!("{cases} packages with damaged XML: {views} views, {notes} notes");
    assert!(cases >= 1000 && views > 100 && notes > 100);
}

/// The mode a file table's header records: none (a table from before
/// content views) is raw; anything but auto or raw is refused.
#[test]
fn mode_of_table() {
    use crate::formats::Params;
    assert_eq!(Mode::of_table(&Params::new()), Ok(Mode::Raw));
    assert_eq!(
        Mode::of_table(&Params::new().with("content", "auto")),
        Ok(Mode::Auto)
    );
    assert!(Mode::of_table(&Params::new().with("content", "text")).is_err());
}

/// Members read one after the other read their archive once while they
/// fit the cache's budget, every time when they do not; an archive
/// rewritten since is read again; a member it no longer holds is an error.
#[test]
fn an_archives_members_are_read_from_one_reading_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.zip");
    let body = |i: usize, v: &str| format!("note {i} {v}\n").repeat(40).into_bytes();
    let write = |v: &str| {
        let names: Vec<String> = (0..50).map(|i| format!("n/{i:02}.txt")).collect();
        let bodies: Vec<Vec<u8>> = (0..50).map(|i| body(i, v)).collect();
        let members: Vec<(&str, &[u8])> = names
            .iter()
            .zip(&bodies)
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        std::fs::write(&path, zip_of(&members)).unwrap();
    };
    let outer = path.as_os_str().as_encoded_bytes().to_vec();
    let entry = |i: usize| [outer.as_slice(), format!("!/n/{i:02}.txt").as_bytes()].concat();
    let limits = Limits::default();
    write("one");
    let before = member_cache::reads();
    for i in 0..50 {
        let (bytes, _) = member_bytes(&entry(i), outer.len(), &limits).unwrap();
        assert_eq!(bytes, body(i, "one"));
    }
    assert_eq!(member_cache::reads() - before, 1);
    let absent = [outer.as_slice(), b"!/n/99.txt"].concat();
    let err = member_bytes(&absent, outer.len(), &limits).unwrap_err();
    assert!(err.starts_with("no longer in its archive"), "{err}");
    assert_eq!(member_cache::reads() - before, 1);
    // Rewritten (another size): read again, its new members given.
    write("two, rewritten");
    let (bytes, _) = member_bytes(&entry(7), outer.len(), &limits).unwrap();
    assert_eq!(bytes, body(7, "two, rewritten"));
    assert_eq!(member_cache::reads() - before, 2);
    // Over the budget (8 KiB views: 1 KiB of members): every member read
    // reads the archive, with the same bytes.
    let small = Limits {
        max_bytes: 8 << 10,
        ..Limits::default()
    };
    member_cache::forget();
    for i in [3, 4, 5] {
        let (bytes, _) = member_bytes(&entry(i), outer.len(), &small).unwrap();
        assert_eq!(bytes, body(i, "two, rewritten"));
    }
    assert_eq!(member_cache::reads() - before, 5);
}

/// A raw body gives the file's bytes from the start whatever its size
/// around the head's: the head detection read is not read again, and the
/// rest follows it (a zip's magic over text: detection read past the head,
/// and the file is put back after it).
#[test]
fn a_raw_body_is_the_file_after_its_head() {
    let dir = tempfile::tempdir().unwrap();
    let line = b"line of a plain text file, no magic at its start\n";
    let sizes = [
        0,
        1,
        100,
        detect::HEAD - 1,
        detect::HEAD,
        detect::HEAD + 1,
        100_000,
    ];
    let mut cases: Vec<Vec<u8>> = sizes
        .iter()
        .map(|&n| line.iter().copied().cycle().take(n).collect())
        .collect();
    let mut zipish = b"PK\x03\x04 is how this text starts\n".to_vec();
    zipish.extend(line.iter().copied().cycle().take(3 * detect::HEAD));
    cases.push(zipish);
    for (i, bytes) in cases.iter().enumerate() {
        let path = dir.path().join(format!("f{i}.txt"));
        std::fs::write(&path, bytes).unwrap();
        let mut o = open(&path, &Limits::default()).unwrap();
        assert_eq!(o.kind, Kind::Raw, "case {i}");
        let Body::Raw(r) = &mut o.body else {
            panic!("a text file has its raw body")
        };
        let mut got = Vec::new();
        // Small reads too: the head is given across several.
        let mut small = [0u8; 1000];
        loop {
            let n = r.read(&mut small).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&small[..n]);
        }
        assert_eq!(got.len(), bytes.len(), "case {i}");
        assert!(got == *bytes, "case {i}: other bytes");
    }
}

/// The file table's line for `path` read as `view` (its mtime now).
fn entry_of(path: &Path, view: &[u8], raw: &[u8]) -> crate::formats::FileEntry {
    use md5::{Digest as _, Md5};
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    let line = format!(
        "0000000000\t{}\t{}.{:09}\t{:x}\ttext\tprose\t{}\t{:x}\t{}",
        view.len(),
        m.mtime(),
        m.mtime_nsec(),
        Md5::digest(view),
        raw.len(),
        Md5::digest(raw),
        path.display()
    );
    crate::formats::FileEntry::parse(line.as_bytes()).unwrap()
}

#[test]
fn a_prose_entry_is_its_sentences_while_the_file_is_the_one_chunked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    let text = "The first sentence of the notes is here. A second one follows it.\n\
                And a third, on a line of its own, with more words than the others.\n"
        .repeat(30);
    std::fs::write(&path, &text).unwrap();
    let o = open(&path, &Limits::default()).unwrap();
    assert_eq!(o.kind, Kind::Prose);
    let Body::View(view) = o.body else {
        panic!("prose has a view")
    };
    let e = entry_of(&path, &view, text.as_bytes());
    assert_eq!(entry_view(&e, &Limits::default()), Ok(view.clone()));

    // Other bytes of the same size, the mtime put back: not text, or text
    // of another view.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let put_back = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(modified).unwrap();
    };
    put_back(&vec![0xffu8; text.len()]);
    let why = entry_view(&e, &Limits::default()).unwrap_err();
    assert!(why.contains("no longer read as prose"), "{why}");
    put_back(text.replace(". ", "  ").as_bytes());
    let why = entry_view(&e, &Limits::default()).unwrap_err();
    assert!(why.contains("prose view is not the one chunked"), "{why}");

    // A file edited since: stale, as any other.
    std::fs::write(&path, format!("{text}One more sentence.\n")).unwrap();
    let why = entry_view(&e, &Limits::default()).unwrap_err();
    assert!(why.contains("changed since chunking"), "{why}");
    std::fs::remove_file(&path).unwrap();
    let why = entry_view(&e, &Limits::default()).unwrap_err();
    assert!(why.contains("vanished or unreadable"), "{why}");
}
