#!/usr/bin/env python3
"""Writes the document fixtures of src/content/tests.rs with real writers.

python3 -m venv /tmp/docvenv
/tmp/docvenv/bin/pip install python-docx odfpy reportlab openpyxl python-pptx ebooklib
/tmp/docvenv/bin/python tests/data/documents/make.py tests/data/documents

The writers stamp dates and ids, so a re-run gives other bytes with the
same text; the tests assert the text. The compressed fixtures need gzip,
bzip2, xz and zstd on PATH.
"""
import os
import subprocess
import sys
from email.message import EmailMessage
from email.utils import format_datetime
import datetime

out = sys.argv[1]
os.chdir(out)

LETTER = [
    "The committee met on the third of March to review the budget.",
    "Travel costs rose by twelve percent over the previous year.",
    "The printing contract is renewed for two more years.",
    "Members asked for a summary of the cloud storage invoices.",
    "The next meeting is planned for the first week of June.",
]


def docx(name, title, paragraphs, table=None):
    import docx as d

    doc = d.Document()
    doc.add_heading(title, level=1)
    for p in paragraphs:
        doc.add_paragraph(p)
    if table:
        t = doc.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                t.cell(r, c).text = cell
    p = doc.add_paragraph("Column A")
    run = p.add_run()
    run.add_tab()
    p.add_run("Column B")
    doc.save(name)


def odt(name):
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P, S

    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text="Annual report"))
    for line in LETTER[:3]:
        doc.text.addElement(P(text=line))
    p = P(text="Two")
    p.addElement(S(c=3))
    p.addText("spaces")
    doc.text.addElement(p)
    doc.save(name)


def ods(name):
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableRow, TableCell
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    t = Table(name="Costs")
    for row in [["Item", "Cost"], ["Travel", "1200"], ["Printing", "300"]]:
        tr = TableRow()
        for v in row:
            c = TableCell()
            c.addElement(P(text=v))
            tr.addElement(c)
        t.addElement(tr)
    doc.spreadsheet.addElement(t)
    doc.save(name)


def odp(name):
    from odf.opendocument import OpenDocumentPresentation
    from odf.draw import Page, Frame, TextBox
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    doc = OpenDocumentPresentation()
    layout = PageLayout(name="L")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    for i, lines in enumerate([["Quarterly review", "Budget and travel"], ["Next steps", "Renew printing"]]):
        page = Page(masterpagename=master, name=f"page{i+1}")
        frame = Frame(width="20cm", height="5cm", x="1cm", y="1cm")
        box = TextBox()
        for l in lines:
            box.addElement(P(text=l))
        frame.addElement(box)
        page.addElement(frame)
        doc.presentation.addElement(page)
    doc.save(name)


def xlsx(name):
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Costs"
    for row in [["Item", "Cost"], ["Travel", 1200], ["Printing", 300]]:
        ws.append(row)
    ws2 = wb.create_sheet("Notes")
    ws2.append(["Reviewed by the committee"])
    wb.save(name)


def pptx(name):
    from pptx import Presentation

    prs = Presentation()
    for title, body in [("Quarterly review", "Budget and travel"), ("Next steps", "Renew printing")]:
        s = prs.slides.add_slide(prs.slide_layouts[1])
        s.shapes.title.text = title
        s.placeholders[1].text = body
    prs.save(name)


def epub(name):
    from ebooklib import epub as e

    book = e.EpubBook()
    book.set_identifier("fsim-fixture-1")
    book.set_title("Minutes")
    book.set_language("en")
    chapters = []
    for i, (title, lines) in enumerate([("Chapter one", LETTER[:2]), ("Chapter two", LETTER[2:4])]):
        c = e.EpubHtml(title=title, file_name=f"chap_{i+1}.xhtml", lang="en")
        c.content = f"<h1>{title}</h1>" + "".join(f"<p>{l}</p>" for l in lines)
        book.add_item(c)
        chapters.append(c)
    book.toc = chapters
    book.add_item(e.EpubNcx())
    book.add_item(e.EpubNav())
    book.spine = chapters
    e.write_epub(name, book)


def pdf(name, encrypt=None):
    from reportlab.pdfgen import canvas
    from reportlab.lib import pdfencrypt

    enc = pdfencrypt.StandardEncryption(encrypt, canPrint=0) if encrypt else None
    c = canvas.Canvas(name, encrypt=enc, invariant=1)
    for page in [LETTER[:2], LETTER[2:4]]:
        y = 750
        for line in page:
            c.drawString(72, y, line)
            y -= 20
        c.showPage()
    c.save()


def scan(name, seed):
    """An image-only PDF, as a scanner writes one: a page holding one
    grey image (64 x 64, Flate) and no text. Written by hand, byte for
    byte the same on every run; `seed` draws the image's pixels."""
    import zlib

    pixels = bytes((x * 7 + y * 13 + seed * 31 + (x * y * seed) % 17) % 256 for y in range(64) for x in range(64))
    image = zlib.compress(pixels, 9)
    page = b"q 400 0 0 400 100 300 cm /Im1 Do Q\n"
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /XObject /Subtype /Image /Width 64 /Height 64 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % len(image) + image + b"\nendstream",
        b"<< /Length %d >>\nstream\n" % len(page) + page + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    open(name, "wb").write(out)


def mail():
    m = EmailMessage()
    m["From"] = "Ana Souza <ana@example.org>"
    m["To"] = "committee@example.org"
    m["Subject"] = "Réunion du comité"
    m["Date"] = format_datetime(datetime.datetime(2024, 3, 3, 10, 0, tzinfo=datetime.timezone.utc))
    m["Message-ID"] = "<1@example.org>"
    m.set_content("Bonjour,\n\nLe comité s'est réuni le 3 mars.\nÀ bientôt.\n", cte="quoted-printable")
    m.add_alternative("<html><body><p>Bonjour,</p><p>Le comité s'est réuni le 3 mars.</p></body></html>", subtype="html")
    m.add_attachment(b"not content", maintype="application", subtype="octet-stream", filename="x.bin")
    open("alternative.eml", "wb").write(bytes(m))

    h = EmailMessage()
    h["From"] = "bob@example.org"
    h["To"] = "ana@example.org"
    h["Subject"] = "Invoices"
    h["Date"] = "Mon, 04 Mar 2024 09:30:00 +0000"
    h.set_content("<html><head><style>p{}</style></head><body><p>The invoices &amp; receipts</p><p>are attached.</p></body></html>", subtype="html", cte="base64")
    open("html-only.eml", "wb").write(bytes(h))


docx("letter-v1.docx", "Minutes", LETTER, table=[["Item", "Cost"], ["Travel", "1200"]])
docx("letter-v2.docx", "Minutes", LETTER[:2] + ["The printing contract ends this year."] + LETTER[3:], table=[["Item", "Cost"], ["Travel", "1200"]])
docx("other.docx", "Garden club", ["Tulips need full sun.", "Water the roses twice a week."])
odt("report.odt")
ods("costs.ods")
odp("review.odp")
xlsx("costs.xlsx")
pptx("review.pptx")
epub("minutes.epub")
pdf("minutes.pdf")
pdf("minutes-encrypted.pdf", encrypt="secret")
scan("scan-a.pdf", 1)
scan("scan-b.pdf", 2)
mail()
open("notes.txt", "w").write("".join(f"{i}: {l}\n" for i, l in enumerate(LETTER * 4)))
for tool, ext in [("gzip", "gz"), ("bzip2", "bz2"), ("xz", "xz"), ("zstd", "zst")]:
    with open(f"notes.txt.{ext}", "wb") as f:
        subprocess.run([tool, "-n" if tool == "gzip" else "-c", "-c" if tool == "gzip" else "-q"], stdin=open("notes.txt", "rb"), stdout=f, check=True)
os.remove("notes.txt")
