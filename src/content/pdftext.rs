//! The text of a PDF's pages in pure Rust, for the `fsim-pdftext` program:
//! the fallback of [`super::pdf`] where poppler's pdftotext is missing (or
//! `FSIM_PDF=fsim-pdftext` asks for it).
//!
//! Built on the `pdf-extract` crate (MIT, on `lopdf`): it decodes fonts'
//! encodings (ToUnicode maps, Type 1 and CFF built-in encodings, the
//! standard encodings), which a plain walk of the content streams does not
//! (lopdf's own `extract_text` gave 1-5 % of pdftotext's lines on the
//! manuals of docs/documents.md, pdf-extract 29-85 %). It is not hardened:
//! malformed input can make it panic (it `unwrap`s), recurse without bound
//! or allocate what a length field says. That is why it only ever runs in
//! a process of its own, under the same address space, CPU and wall-clock
//! limits as pdftotext, its output read up to a cap ([`super::pdf`]): a
//! crash there costs one file its view, never the stage.
//!
//! The output is what [`super::pdf`] reads from pdftotext: each page's
//! text, a form feed after each page. Deterministic: the same bytes give
//! the same text (no threads, no clock, no randomness in the text path).

use std::io::Write;

/// Write the text of every page of the PDF `data` to `out`, in page
/// order, each followed by a form feed. A page that cannot be read fails
/// the whole file (a view missing pages would give wrong figures); the
/// error says which page. An encrypted PDF is read when its user password
/// is empty, as pdftotext does.
pub fn write_pages(data: &[u8], out: &mut dyn Write) -> Result<(), String> {
    let mut doc = pdf_extract::Document::load_mem(data).map_err(|e| format!("not a PDF: {e}"))?;
    if doc.is_encrypted() {
        doc.decrypt("")
            .map_err(|e| format!("encrypted, not with an empty user password: {e}"))?;
    }
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    for n in pages {
        let mut text = String::new();
        {
            let mut dev = pdf_extract::PlainTextOutput::new(&mut text);
            pdf_extract::output_doc_page(&doc, &mut dev, n)
                .map_err(|e| format!("page {n}: {e}"))?;
        }
        out.write_all(text.as_bytes())
            .and_then(|()| out.write_all(b"\x0c"))
            .map_err(|e| format!("writing the text: {e}"))?;
    }
    out.flush().map_err(|e| format!("writing the text: {e}"))
}
