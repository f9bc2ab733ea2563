#!/usr/bin/env python3
"""Writes the office-variant fixtures of tests/office_variants.rs: the
template, macro-enabled, flat XML and legacy binary forms of a memo, a
spreadsheet, a presentation and a drawing, each saved by LibreOffice.

apt-get install libreoffice-writer-nogui libreoffice-calc-nogui \
    libreoffice-impress-nogui libreoffice-draw-nogui
python3 -m venv /tmp/docvenv && /tmp/docvenv/bin/pip install odfpy
/tmp/docvenv/bin/python tests/data/documents/make_variants.py tests/data/documents

odfpy writes the sources (memo-template and memo, the plan drawing);
LibreOffice (soffice --headless --convert-to, 7.4) saves every variant
from them and from costs.ods and review.odp (make.py). The writers stamp
dates and ids, so a re-run gives other bytes with the same text.
"""
import os
import shutil
import subprocess
import sys
import tempfile

out = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp()
os.environ["HOME"] = os.path.join(tmp, "home")

LETTER = [
    "The committee met on the third of March to review the budget.",
    "Travel costs rose by twelve percent over the previous year.",
    "The printing contract is renewed for two more years.",
    "Members asked for a summary of the cloud storage invoices.",
    "The next meeting is planned for the first week of June.",
]


def memo(path, lines):
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text="Budget memo"))
    for line in lines:
        doc.text.addElement(P(text=line))
    doc.save(path)


def plan(path):
    from odf.opendocument import OpenDocumentDrawing
    from odf.draw import Page, Frame, TextBox
    from odf.style import MasterPage, PageLayout
    from odf.text import P

    doc = OpenDocumentDrawing()
    layout = PageLayout(name="L")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    page = Page(masterpagename=master, name="page1")
    frame = Frame(width="12cm", height="4cm", x="2cm", y="2cm")
    box = TextBox()
    for line in ["Office floor plan", "Meeting room next to the archive"]:
        box.addElement(P(text=line))
    frame.addElement(box)
    page.addElement(frame)
    doc.drawing.addElement(page)
    doc.save(path)


def convert(src, ext, filt, name):
    """`src` saved by LibreOffice with filter `filt` as `name`."""
    made_in = os.path.join(tmp, "out")
    subprocess.run(
        ["soffice", "--headless", "--convert-to", f"{ext}:{filt}", "--outdir", made_in, src],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    made = os.path.join(made_in, os.path.splitext(os.path.basename(src))[0] + "." + ext)
    shutil.move(made, os.path.join(out, name))


# The template holds the heading and the first three paragraphs; the memo
# made from it adds the last two.
template = os.path.join(tmp, "memo-template.odt")
document = os.path.join(tmp, "memo.odt")
memo(template, LETTER[:3])
memo(document, LETTER)
drawing = os.path.join(tmp, "plan.odg")
plan(drawing)
costs = os.path.join(out, "costs.ods")
review = os.path.join(out, "review.odp")

for src, ext, filt, name in [
    (template, "ott", "writer8_template", "memo.ott"),
    (template, "dotx", "MS Word 2007 XML Template", "memo.dotx"),
    (document, "odt", "writer8", "memo.odt"),
    (document, "fodt", "OpenDocument Text Flat XML", "memo.fodt"),
    (document, "docm", "MS Word 2007 XML VBA", "memo.docm"),
    (document, "doc", "MS Word 97", "memo.doc"),
    (document, "epub", "EPUB", "memo.epub"),
    (costs, "ots", "calc8_template", "costs.ots"),
    (costs, "fods", "OpenDocument Spreadsheet Flat XML", "costs.fods"),
    (costs, "xltx", "Calc MS Excel 2007 XML Template", "costs.xltx"),
    (costs, "xlsm", "Calc MS Excel 2007 VBA XML", "costs.xlsm"),
    (costs, "xls", "MS Excel 97", "costs.xls"),
    (review, "otp", "impress8_template", "review.otp"),
    (review, "fodp", "OpenDocument Presentation Flat XML", "review.fodp"),
    (review, "potx", "Impress MS PowerPoint 2007 XML Template", "review.potx"),
    (review, "pptm", "Impress MS PowerPoint 2007 XML VBA", "review.pptm"),
    (review, "ppsx", "Impress MS PowerPoint 2007 XML AutoPlay", "review.ppsx"),
    (os.path.join(out, "review.pptx"), "ppt", "MS PowerPoint 97", "review-libreoffice.ppt"),
    (drawing, "odg", "draw8", "plan.odg"),
    (drawing, "otg", "draw8_template", "plan.otg"),
]:
    convert(src, ext, filt, name)
# 600 KB, mostly the default master's pictures: kept gzipped (`gzip -9n`).
ppt = os.path.join(out, "review-libreoffice.ppt")
subprocess.run(["gzip", "-9nf", ppt], check=True)
shutil.rmtree(tmp)
