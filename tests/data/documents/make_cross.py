#!/usr/bin/env python3
"""Writes the cross-format fixtures of tests/documents/cross_format.rs: the
same 2,400 words (the first sections of the GNU GPL version 3, Debian's
/usr/share/common-licenses/GPL-3) as a Word file and the forms people keep
beside it: its PDF and its OpenDocument as LibreOffice saves them, a PDF
written by another program (reportlab, its own line breaks and page
numbers), a mail whose body is wrapped at 72 columns, and a text file.

python3 -m venv /tmp/docvenv
/tmp/docvenv/bin/pip install python-docx==1.2.0 reportlab==4.4.4
apt-get install libreoffice-writer-nogui   # soffice 7.4
/tmp/docvenv/bin/python tests/data/documents/make_cross.py tests/data/documents

The docx has a footer on every page ("GNU GPL v3, draft for review"): its
PDF prints it between the pages' sentences, as a real export does, while
the docx's view (its body) has none. The writers stamp dates and ids, so a
re-run gives other bytes with the same text.
"""
import email.message
import email.utils
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

from docx import Document
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.platypus import Paragraph, SimpleDocTemplate
from xml.sax.saxutils import escape

WORDS = 2400
out = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp()
os.environ["HOME"] = os.path.join(tmp, "home")


def paragraphs():
    """The license's paragraphs (lines joined), up to WORDS words."""
    text = open("/usr/share/common-licenses/GPL-3", encoding="utf-8").read()
    paras, n = [], 0
    for block in re.split(r"\n\s*\n", text):
        p = " ".join(block.split())
        if not p:
            continue
        paras.append(p)
        n += len(p.split())
        if n >= WORDS:
            return paras
    return paras


def write_docx(paras, path):
    d = Document()
    d.sections[0].footer.paragraphs[0].text = "GNU GPL v3, draft for review"
    for p in paras:
        d.add_paragraph(p)
    d.save(path)


def write_reportlab_pdf(paras, path):
    styles = getSampleStyleSheet()

    def page_number(canvas, doc):
        canvas.setFont("Helvetica", 9)
        canvas.drawCentredString(A4[0] / 2, 30, f"Page {doc.page}")

    doc = SimpleDocTemplate(path, pagesize=A4)
    flow = [Paragraph(escape(p), styles["BodyText"]) for p in paras]
    doc.build(flow, onFirstPage=page_number, onLaterPages=page_number)


def write_mail(paras, path):
    m = email.message.EmailMessage()
    m["From"] = "Legal <legal@example.org>"
    m["To"] = "review@example.org"
    m["Subject"] = "License text for review"
    m["Date"] = email.utils.format_datetime(
        email.utils.parsedate_to_datetime("Mon, 04 Mar 2024 09:30:00 +0000"))
    m.set_content("\n\n".join(textwrap.fill(p, 72) for p in paras) + "\n")
    with open(path, "wb") as f:
        f.write(bytes(m))


def soffice(src, fmt):
    subprocess.run(["soffice", "--headless", "--convert-to", fmt, "--outdir", tmp, src],
                   check=True, capture_output=True)
    return os.path.join(tmp, os.path.splitext(os.path.basename(src))[0] + "." + fmt)


def main():
    paras = paragraphs()
    docx = os.path.join(tmp, "contract.docx")
    write_docx(paras, docx)
    shutil.copy(docx, os.path.join(out, "contract.docx"))
    shutil.copy(soffice(docx, "pdf"), os.path.join(out, "contract.pdf"))
    shutil.copy(soffice(docx, "odt"), os.path.join(out, "contract.odt"))
    write_reportlab_pdf(paras, os.path.join(out, "contract-printed.pdf"))
    write_mail(paras, os.path.join(out, "contract.eml"))
    with open(os.path.join(out, "contract.txt"), "w", encoding="utf-8") as f:
        f.write("\n\n".join(textwrap.fill(p, 72) for p in paras) + "\n")


main()
