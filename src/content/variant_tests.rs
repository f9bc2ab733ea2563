//! The office variants (tests/data/documents, written by LibreOffice from
//! make_variants.py): OpenDocument templates and drawings, OOXML
//! templates, macro-enabled and slide-show packages, each read as the
//! document kind whose format it shares, to the exact text.

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/documents")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The kind and text of fixture `name`, which must have no note.
fn text(name: &str) -> (Kind, String) {
    let v = view(&fixture(name), &Limits::default());
    assert_eq!(v.note, None, "{name}");
    (v.kind, String::from_utf8(v.bytes).unwrap())
}

const MEMO: [&str; 6] = [
    "Budget memo",
    "The committee met on the third of March to review the budget.",
    "Travel costs rose by twelve percent over the previous year.",
    "The printing contract is renewed for two more years.",
    "Members asked for a summary of the cloud storage invoices.",
    "The next meeting is planned for the first week of June.",
];

/// The memo's first `n` lines, each ended.
fn memo(n: usize) -> String {
    MEMO[..n].iter().map(|l| format!("{l}\n")).collect()
}

const COSTS: &str = "Item\tCost\nTravel\t1200\nPrinting\t300\n";
const REVIEW: &str = "Quarterly review\nBudget and travel\nNext steps\nRenew printing\n";
const PLAN: &str = "Office floor plan\nMeeting room next to the archive\n";

#[test]
fn opendocument_templates_are_read_as_their_document_kind() {
    // The template holds the heading and three paragraphs; the memo made
    // from it two more.
    assert_eq!(text("memo.ott"), (Kind::Odt, memo(4)));
    assert_eq!(text("memo.odt"), (Kind::Odt, memo(6)));
    assert_eq!(text("costs.ots"), (Kind::Ods, COSTS.into()));
    assert_eq!(text("review.otp"), (Kind::Odp, REVIEW.into()));
    // Drawings and their templates: the text of their pages.
    assert_eq!(text("plan.odg"), (Kind::Odg, PLAN.into()));
    assert_eq!(text("plan.otg"), (Kind::Odg, PLAN.into()));
}

#[test]
fn every_opendocument_mimetype_names_its_kind() {
    let odf = |k: &str| format!("application/vnd.oasis.opendocument.{k}");
    for (mime, kind) in [
        ("text", Kind::Odt),
        ("text-template", Kind::Odt),
        ("text-master", Kind::Odt),
        ("text-master-template", Kind::Odt),
        ("text-web", Kind::Odt),
        ("spreadsheet", Kind::Ods),
        ("spreadsheet-template", Kind::Ods),
        ("presentation", Kind::Odp),
        ("presentation-template", Kind::Odp),
        ("graphics", Kind::Odg),
        ("graphics-template", Kind::Odg),
    ] {
        assert_eq!(
            detect::mimetype_kind(odf(mime).as_bytes()),
            Some(kind),
            "{mime}"
        );
    }
    // Formulas and charts hold no text to compare; a near miss is nothing.
    for mime in ["formula", "chart", "text-templatex", "textual"] {
        assert_eq!(detect::mimetype_kind(odf(mime).as_bytes()), None, "{mime}");
    }
    assert_eq!(
        detect::mimetype_kind(b"application/epub+zip\n"),
        Some(Kind::Epub)
    );
}

#[test]
fn ooxml_templates_and_macro_enabled_packages_are_read_by_their_main_part() {
    assert_eq!(text("memo.dotx"), (Kind::Docx, memo(4)));
    assert_eq!(text("memo.docm"), (Kind::Docx, memo(6)));
    for name in ["costs.xltx", "costs.xlsm"] {
        assert_eq!(text(name), (Kind::Xlsx, COSTS.into()), "{name}");
    }
    for name in ["review.potx", "review.pptm", "review.ppsx"] {
        assert_eq!(text(name), (Kind::Pptx, REVIEW.into()), "{name}");
    }
}

/// `data` (a zip) with each member's bytes as `edit` gives them back
/// (`None`: the member left out), `mimetype` stored as written.
fn rezipped(data: &[u8], mut edit: impl FnMut(&str, Vec<u8>) -> Option<Vec<u8>>) -> Vec<u8> {
    use std::io::Write;
    let mut z = zip::ZipArchive::new(io::Cursor::new(data)).unwrap();
    let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let name = f.name().to_string();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        let Some(bytes) = edit(&name, bytes) else {
            continue;
        };
        let method = match name.as_str() {
            "mimetype" => zip::CompressionMethod::Stored,
            _ => zip::CompressionMethod::Deflated,
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        w.start_file(name.as_str(), opts).unwrap();
        w.write_all(&bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// `data` (a zip) with its `[Content_Types].xml` content type `from`
/// replaced by `to`.
fn with_content_type(data: &[u8], from: &str, to: &str) -> Vec<u8> {
    rezipped(data, |name, bytes| {
        if name != "[Content_Types].xml" {
            return Some(bytes);
        }
        let types = String::from_utf8(bytes).unwrap();
        assert!(types.contains(from), "{types}");
        Some(types.replace(from, to).into_bytes())
    })
}

#[test]
fn macro_enabled_templates_are_their_document_kind() {
    // No free writer saves .dotm, .xltm or .potm: the LibreOffice
    // templates with the content type Office gives the macro-enabled ones.
    for (name, from, to, kind, want) in [
        (
            "memo.dotx",
            "wordprocessingml.template.main+xml",
            "ms-word.template.macroEnabledTemplate.main+xml",
            Kind::Docx,
            memo(4),
        ),
        (
            "costs.xltx",
            "spreadsheetml.template.main+xml",
            "ms-excel.template.macroEnabled.main+xml",
            Kind::Xlsx,
            COSTS.to_string(),
        ),
        (
            "review.potx",
            "presentationml.template.main+xml",
            "ms-powerpoint.template.macroEnabled.main+xml",
            Kind::Pptx,
            REVIEW.to_string(),
        ),
    ] {
        let data = with_content_type(&fixture(name), from, to);
        let v = view(&data, &Limits::default());
        assert_eq!((v.kind, v.note), (kind, None), "{name}");
        assert_eq!(String::from_utf8(v.bytes).unwrap(), want, "{name}");
    }
}

#[test]
fn flat_opendocument_is_the_text_of_its_zipped_form() {
    for (flat, zipped, kind) in [
        ("memo.fodt", "memo.odt", Kind::Odt),
        ("costs.fods", "costs.ods", Kind::Ods),
        ("review.fodp", "review.odp", Kind::Odp),
    ] {
        assert_eq!(text(flat), text(zipped), "{flat}");
        assert_eq!(text(flat).0, kind, "{flat}");
    }
    assert_eq!(text("memo.fodt").1, memo(6));
}

#[test]
fn flat_opendocument_is_told_by_its_root_element() {
    let root = |attrs: &str| {
        format!("<?xml version=\"1.0\"?>\n<!-- saved -->\n<office:document xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" {attrs}><office:styles><text:p>not content</text:p></office:styles><office:body><office:text><text:p>One line</text:p></office:text></office:body></office:document>")
    };
    let v = view(
        root("office:mimetype=\"application/vnd.oasis.opendocument.text\"").as_bytes(),
        &Limits::default(),
    );
    assert_eq!(
        (v.kind, v.note, v.bytes),
        (Kind::Odt, None, b"One line\n".to_vec())
    );
    let v = view(
        root("office:mimetype='application/vnd.oasis.opendocument.graphics-template'").as_bytes(),
        &Limits::default(),
    );
    assert_eq!((v.kind, v.bytes), (Kind::Odg, b"One line\n".to_vec()));
    // Other XML is text: no mimetype, another one, another root element.
    for doc in [
        root(""),
        root("office:mimetype=\"application/epub+zip\""),
        root("office:version=\"1.3\"").replace("mimetype", "x"),
        "<?xml version=\"1.0\"?><book><body>office:document</body></book>".into(),
        "<office:documents office:mimetype=\"application/vnd.oasis.opendocument.text\"/>".into(),
    ] {
        let v = view(doc.as_bytes(), &Limits::default());
        assert_eq!((v.kind, v.note), (Kind::Raw, None), "{doc}");
    }
}

#[test]
fn broken_flat_opendocument_keeps_its_raw_view_with_a_note() {
    let fodt = fixture("memo.fodt");
    let cut = &fodt[..fodt.len() / 2];
    let v = view(cut, &Limits::default());
    assert_eq!((v.kind, &v.bytes[..]), (Kind::Raw, cut));
    let note = v.note.unwrap();
    assert!(
        note.starts_with("unreadable as odt: ") && note.contains("truncated"),
        "{note}"
    );
    // A flat document's root followed by what is not XML.
    let head = &fodt[..memchr::memmem::find(&fodt, b"<office:meta>").unwrap()];
    let mut junk = head.to_vec();
    junk.extend_from_slice(b"<office:body><text:p>a</b></office:body>\x00\xff not XML");
    let v = view(&junk, &Limits::default());
    assert_eq!(v.kind, Kind::Raw);
    let note = v.note.unwrap();
    assert!(
        note.starts_with("unreadable as odt: malformed XML"),
        "{note}"
    );
}

#[test]
fn epub_is_its_spine_in_order() {
    // LibreOffice's EPUB of the memo: one section in the spine, a
    // navigation document beside it that is not.
    assert_eq!(text("memo.epub"), (Kind::Epub, memo(6)));
    // The spine's order, not the manifest's: EbookLib's book with its two
    // chapters' itemrefs swapped.
    let book = fixture("minutes.epub");
    let swapped = rezipped(&book, |name, bytes| {
        if !name.ends_with(".opf") {
            return Some(bytes);
        }
        let opf = String::from_utf8(bytes).unwrap();
        let (one, two) = ("idref=\"chapter_0\"", "idref=\"chapter_1\"");
        assert!(opf.contains(one) && opf.contains(two), "{opf}");
        Some(
            opf.replace(one, "@")
                .replace(two, one)
                .replace('@', two)
                .into_bytes(),
        )
    });
    let v = view(&swapped, &Limits::default());
    assert_eq!((v.kind, v.note), (Kind::Epub, None));
    let t = String::from_utf8(v.bytes).unwrap();
    assert!(t.starts_with("Chapter two\n"), "{t}");
    assert!(
        t.find("Chapter one").unwrap() > t.find(MEMO[4]).unwrap(),
        "{t}"
    );
}

#[test]
fn an_epub_missing_a_spine_item_keeps_its_raw_view_with_a_note() {
    let book = fixture("minutes.epub");
    let missing = rezipped(&book, |name, bytes| {
        (!name.ends_with("chap_2.xhtml")).then_some(bytes)
    });
    let v = view(&missing, &Limits::default());
    assert_eq!((v.kind, &v.bytes), (Kind::Raw, &missing));
    assert_eq!(
        v.note.as_deref(),
        Some("unreadable as epub: member EPUB/chap_2.xhtml: specified file not found in archive")
    );
    // No container, or a container naming no package document.
    let v = view(
        &rezipped(&book, |name, bytes| {
            (name != "META-INF/container.xml").then_some(bytes)
        }),
        &Limits::default(),
    );
    assert!(v
        .note
        .unwrap()
        .starts_with("unreadable as epub: member META-INF/container.xml"));
    let v = view(
        &rezipped(&book, |name, bytes| {
            Some(if name == "META-INF/container.xml" {
                b"<container/>".to_vec()
            } else {
                bytes
            })
        }),
        &Limits::default(),
    );
    assert_eq!(
        v.note.as_deref(),
        Some("unreadable as epub: META-INF/container.xml names no rootfile")
    );
    // A truncated EPUB: the zip's directory is gone.
    let v = view(&book[..book.len() / 2], &Limits::default());
    assert_eq!(v.kind, Kind::Raw);
    assert!(v.note.unwrap().starts_with("unreadable as epub: bad zip"));
}

/// Whether catdoc's programs are installed (Debian's catdoc; .ci/run
/// installs it): without them the legacy tests say they are skipped.
fn catdoc_installed() -> bool {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("catdoc").is_file() && d.join("xls2csv").is_file());
    if !found {
        eprintln!("catdoc is not installed: the legacy Office views are not checked");
    }
    found
}

#[test]
fn legacy_word_and_excel_files_are_their_text() {
    if !catdoc_installed() {
        return;
    }
    assert_eq!(text("memo.doc"), (Kind::Doc, memo(6)));
    assert_eq!(text("costs.xls"), (Kind::Xls, COSTS.into()));
    // A copy cut in half: its directory is past the cut, so it is not
    // recognised (raw), or its program fails or reads what is left: never
    // a panic or a hang.
    for name in ["memo.doc", "costs.xls"] {
        let data = fixture(name);
        let cut = &data[..data.len() / 2];
        let t = std::time::Instant::now();
        let v = view(cut, &Limits::default());
        assert!(t.elapsed() < Duration::from_secs(5), "{name}");
        assert!(v.note.is_none() || v.bytes == cut, "{name}");
    }
}

#[test]
fn a_legacy_document_without_its_program_is_a_note() {
    let data = fixture("memo.doc");
    assert_eq!(detect(&mut io::Cursor::new(&data[..])), Kind::Doc);
    let limits = Limits::default();
    let budget = Budget::new(&limits);
    let r = legacy::extract_with(
        Kind::Doc,
        None,
        &mut io::Cursor::new(&data[..]),
        None,
        &budget,
    );
    assert_eq!(
        r,
        Err("no text extractor: catdoc (Debian's catdoc package) is not installed".into())
    );
    assert_eq!(
        unreadable(Kind::Doc, &r.unwrap_err()),
        "unreadable as doc: no text extractor: catdoc (Debian's catdoc package) is not installed"
    );
}

/// A compound file directory: the root (entry 0) and the streams `names`
/// as a chain of right siblings under it.
fn directory(names: &[&str]) -> Vec<u8> {
    let mut dir = Vec::new();
    let none = 0xffff_ffffu32;
    for (i, name) in std::iter::once("Root Entry")
        .chain(names.iter().copied())
        .enumerate()
    {
        let mut e = vec![0u8; 128];
        let utf16: Vec<u8> = name
            .encode_utf16()
            .chain([0])
            .flat_map(|c| c.to_le_bytes())
            .collect();
        e[..utf16.len()].copy_from_slice(&utf16);
        e[0x40..0x42].copy_from_slice(&(utf16.len() as u16).to_le_bytes());
        e[0x42] = if i == 0 { 5 } else { 2 };
        let right = if i > 0 && i < names.len() {
            i as u32 + 1
        } else {
            none
        };
        let child = if i == 0 && !names.is_empty() { 1 } else { none };
        e[0x44..0x48].copy_from_slice(&none.to_le_bytes());
        e[0x48..0x4c].copy_from_slice(&right.to_le_bytes());
        e[0x4c..0x50].copy_from_slice(&child.to_le_bytes());
        dir.extend(e);
    }
    dir
}

#[test]
fn a_compound_file_is_told_by_its_root_streams() {
    use legacy::root_streams_kind as k;
    assert_eq!(
        k(&directory(&["Current User", "PowerPoint Document"])),
        Some(Kind::Ppt)
    );
    assert_eq!(
        k(&directory(&["SummaryInformation", "Workbook"])),
        Some(Kind::Xls)
    );
    assert_eq!(k(&directory(&["Book"])), Some(Kind::Xls));
    assert_eq!(k(&directory(&["1Table", "WordDocument"])), Some(Kind::Doc));
    // An installer, a mail message: other compound files stay raw.
    assert_eq!(k(&directory(&["__substg1.0_0037001F"])), None);
    assert_eq!(k(&directory(&[])), None);
    // A sibling that points back at itself is read once, not forever.
    let mut looped = directory(&["Contents"]);
    looped[128 + 0x48..128 + 0x4c].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(k(&looped), None);
    // A header alone, its directory past the end: raw.
    let data = fixture("memo.doc");
    assert_eq!(detect(&mut io::Cursor::new(&data[..512])), Kind::Raw);
}

#[test]
fn a_main_part_named_otherwise_is_found_by_its_content_type() {
    // Some writers name the main part word/document2.xml: the package
    // says which part it is in [Content_Types].xml and _rels/.rels.
    use std::io::Write;
    let data = fixture("memo.docm");
    let mut z = zip::ZipArchive::new(io::Cursor::new(&data[..])).unwrap();
    let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        let name = f.name().replace("word/document.xml", "word/document2.xml");
        if name.ends_with(".xml") || name.ends_with(".rels") {
            let text = String::from_utf8(bytes).unwrap();
            bytes = text
                .replace("/document.xml\"", "/document2.xml\"")
                .into_bytes();
        }
        w.start_file(name.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(&bytes).unwrap();
    }
    let renamed = w.finish().unwrap().into_inner();
    let v = view(&renamed, &Limits::default());
    assert_eq!((v.kind, v.note), (Kind::Docx, None));
    assert_eq!(String::from_utf8(v.bytes).unwrap(), memo(6));
    // Each kind's main content types.
    let types = |ct: &str| {
        format!("<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/x/main.xml\" ContentType=\"application/{ct}\"/></Types>")
    };
    for (ct, kind) in [
        (
            "vnd.ms-word.template.macroEnabledTemplate.main+xml",
            Kind::Docx,
        ),
        ("vnd.ms-excel.template.macroEnabled.main+xml", Kind::Xlsx),
        (
            "vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
            Kind::Pptx,
        ),
        (
            "vnd.ms-powerpoint.slideshow.macroEnabled.main+xml",
            Kind::Pptx,
        ),
    ] {
        assert_eq!(
            package::main_part(types(ct).as_bytes()),
            Some((kind, "x/main.xml".to_string())),
            "{ct}"
        );
    }
    // A binary workbook (.xlsb) is not read; nor is malformed XML.
    assert_eq!(
        package::main_part(types("vnd.ms-excel.sheet.binary.macroEnabled.main").as_bytes()),
        None
    );
    assert_eq!(package::main_part(b"<Types><Override PartName="), None);
}
