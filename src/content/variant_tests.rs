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

/// `data` (a zip) with its `[Content_Types].xml` content type `from`
/// replaced by `to`, the other members as they were.
fn with_content_type(data: &[u8], from: &str, to: &str) -> Vec<u8> {
    use std::io::Write;
    let mut z = zip::ZipArchive::new(io::Cursor::new(data)).unwrap();
    let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let name = f.name().to_string();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        if name == "[Content_Types].xml" {
            let types = String::from_utf8(bytes).unwrap();
            assert!(types.contains(from), "{types}");
            bytes = types.replace(from, to).into_bytes();
        }
        w.start_file(name.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(&bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
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
