#!/usr/bin/env python3
"""The documents corpus of `make quality`: fsim's content views
against an exact truth on the text of documents, per kind of document.

Run with the quality venv's python (the writers and the independent
extractors are its packages, scripts/quality/requirements-documents.txt),
from the repository root:

  documents.py generate DIR   write the corpus alone into DIR (deterministic:
                              the same bytes on every run; scripts/bench.py)
  documents.py                generate into $QDIR/documents/corpus (cached),
                              extract, run fsim twice (content views, the
                              default, and CONTENT=raw), compute the truth,
                              write $QDIR/documents/section.md and splice it
                              into $OUT (docs/quality.md) as its section
                              "Documents"

Environment: QDIR (default quality-work; the Django releases of
scripts/quality/fetch.sh under $QDIR/corpus are the source prose), JOBS
(default 2), OUT (default docs/quality.md; OUT= writes only the section),
BIN (fsim's binaries, default target/release).

The corpus:
* generated: FAMILIES source texts (Django's reST documentation, real prose,
  cut into paragraphs), each in VERSIONS versions with known edits (a few
  words changed, a fifth of the paragraphs replaced, every second paragraph
  replaced, the second half cut off), every version written by real writers
  as docx (python-docx), xlsx (openpyxl, one row per paragraph, a cell per
  sentence), pptx (python-pptx, four paragraphs a slide), odt and ods
  (odfpy), pdf (reportlab), eml (Python's email: headers, a text/plain body
  and the pdf or docx as an attachment), html (mammoth's conversion of the
  docx in a page of its own), and the text wrapped at 72 columns
  compressed by gzip, bzip2 and xz. Each family belongs to one of TEMPLATES
  templates: a title block and closing paragraphs shared by every document
  of the template (the last template's is long: ~20 % of a document), so
  that two different documents of one template are look-alikes, which
  must stay under 30 %. Zip members get a fixed date and the writers' clocks
  are fixed, so the bytes are the same on every run.
* registry: the document test fixtures that PyPI sdists ship (python-docx,
  python-pptx, odfpy, pypdf; pinned versions, SHA-256 checked): real files
  from Word, LibreOffice, PowerPoint and many PDF producers.

The truth: one text per file from an extractor that is not fsim's code
(python-docx, openpyxl, python-pptx, odfpy, poppler's pdftotext (the same
program fsim runs: the PDF truth is independent of fsim's code but not of
poppler), Python's email and HTML parser, gzip, bz2, lzma), lines trimmed and empty lines
left out as docs/documents.md defines a view (a compressed stream: the
stream as it is); then truth.py's exact measure, the bytes of a longest
common subsequence of lines ÷ the larger text, over every pair of distinct
files (raw bytes) whose texts are not empty.
"""
import bz2
import datetime
import email.policy
import gzip
import hashlib
import html
import io
import json
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import time
import zipfile
from collections import Counter, defaultdict
from email.message import EmailMessage
from email.utils import format_datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import prose  # noqa: E402
import truth  # noqa: E402
from records import record_lines  # noqa: E402

QDIR = os.environ.get("QDIR", "quality-work")
DDIR = os.path.join(QDIR, "documents")
JOBS = int(os.environ.get("JOBS", "2"))
OUT = os.environ.get("OUT", "docs/quality.md")
ROOT = os.getcwd()
BIN = os.environ.get("BIN") or os.path.join(ROOT, "target", "release")
KIND_T = [30, 50, 70]

SOURCE_RELEASE = "django-5.1.4"
FAMILIES = 12
TEMPLATES = 3
SEED = 27
KINDS = ["docx", "xlsx", "pptx", "odt", "ods", "pdf", "eml", "html", "txt", "gz", "bz2", "xz"]
VERSIONS = ["v0", "words", "fifth", "half", "cut"]
VERSION_NOTES = {
    "v0": "the original",
    "words": "6 words changed in 3 paragraphs",
    "fifth": "a fifth of the paragraphs replaced by others",
    "half": "every second paragraph replaced",
    "cut": "the second half of the paragraphs left out",
}
# Django's documentation pages used as source prose (families first, then
# the donors of replaced paragraphs and of the templates' boilerplate).
SOURCES = [
    "docs/howto/custom-management-commands.txt", "docs/howto/error-reporting.txt",
    "docs/internals/contributing/triaging-tickets.txt", "docs/internals/organization.txt",
    "docs/intro/overview.txt", "docs/intro/reusable-apps.txt", "docs/ref/contrib/flatpages.txt",
    "docs/ref/contrib/messages.txt", "docs/ref/contrib/sites.txt", "docs/ref/unicode.txt",
    "docs/topics/async.txt", "docs/topics/db/optimization.txt",
]
DONORS = ["docs/internals/contributing/writing-documentation.txt", "docs/topics/db/transactions.txt",
          "docs/ref/contrib/syndication.txt", "docs/internals/howto-release-django.txt"]
TEMPLATE_DONOR = "docs/internals/contributing/writing-code/submitting-patches.txt"
BODY_CHARS = 9000

# PyPI sdists whose test fixtures are real documents: (file, sha256, members'
# extensions kept).
REGISTRY = [
    ("python_docx-1.2.0.tar.gz", "python-docx==1.2.0",
     "7bc9d7b7d8a69c9c02ca09216118c86552704edc23bac179283f2e38f86220ce"),
    ("python_pptx-1.0.2.tar.gz", "python-pptx==1.0.2",
     "479a8af0eaf0f0d76b6f00b0887732874ad2e3188230315290cd1f9dd9cc7095"),
    ("odfpy-1.4.1.tar.gz", "odfpy==1.4.1",
     "db766a6e59c5103212f3cc92ec8dd50a0f3a02790233ed0b52148b70d3c438ec"),
    ("pypdf-6.1.1.tar.gz", "pypdf==6.1.1",
     "10f44d49bf2a82e54c3c5ba3cdcbb118f2a44fc57df8ce51d6fb9b1ed9bfbe8b"),
]
REGISTRY_EXT = {".docx": "docx", ".xlsx": "xlsx", ".pptx": "pptx", ".odt": "odt", ".ods": "ods",
                ".odp": "odp", ".pdf": "pdf"}
# A real package's office templates: LibreOffice's own (Debian's
# libreoffice-common: text, spreadsheet and presentation templates, the
# wizards' letter, fax and agenda styles), SHA-256 of Debian's index.
DEB_TEMPLATES = ("libreoffice-common_7.4.7-1+deb12u14_all.deb",
                 "pool/main/libr/libreoffice/libreoffice-common_7.4.7-1%2bdeb12u14_all.deb",
                 "4b9008ca10ab355527fa4b8e01160c322699ea2bb7578594178b41afc1b04e0c")
DEB_POOL = os.environ.get("DEB_POOL", "http://deb.debian.org/debian")
TEMPLATE_EXT = {".ott": "ott", ".ots": "ots", ".otp": "otp"}
REGISTRY_MAX = 2_000_000  # bytes: the few larger fixtures are left out (minutes of pdftotext)
FIXED_DATE = datetime.datetime(2024, 3, 1, 9, 0, 0, tzinfo=datetime.timezone.utc)
ZIP_DATE = (2024, 3, 1, 9, 0, 0)
GENERATOR_VERSION = "2"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------ source prose

def paragraphs(path):
    """The prose paragraphs of a reST page: blank-line separated blocks,
    joined into one line, without headings' underlines, directives, code
    (indented blocks) and short fragments."""
    out = []
    text = open(path, encoding="utf-8").read()
    for block in re.split(r"\n\s*\n", text):
        lines = block.split("\n")
        if not lines or lines[0][:1] in (" ", "\t") or lines[0].startswith(".."):
            continue
        lines = [x.strip() for x in lines if not re.fullmatch(r"\s*([=\-~^*#+`'\"])\1{2,}\s*", x)]
        p = " ".join(x for x in lines if x)
        if len(p) >= 60 and sum(c.isalpha() for c in p) > 0.6 * len(p):
            out.append(p)
    return out


def body_of(paras):
    out, n = [], 0
    for p in paras:
        if n >= BODY_CHARS:
            break
        out.append(p)
        n += len(p) + 1
    return out


def versions(body, donor, rng):
    """{version: paragraphs} with the known edits."""
    vs = {"v0": list(body)}
    w = list(body)
    words = [x for p in donor for x in p.split() if x.isalpha() and len(x) > 3]
    for i in sorted(rng.sample(range(len(w)), min(3, len(w)))):
        toks = w[i].split(" ")
        for _ in range(2):
            j = rng.randrange(len(toks))
            toks[j] = rng.choice(words)
        w[i] = " ".join(toks)
    vs["words"] = w
    f = list(body)
    for k, i in enumerate(sorted(rng.sample(range(len(f)), max(1, len(f) // 5)))):
        f[i] = donor[k % len(donor)]
    vs["fifth"] = f
    h = list(body)
    for k, i in enumerate(range(1, len(h), 2)):
        h[i] = donor[(k + 7) % len(donor)]
    vs["half"] = h
    vs["cut"] = list(body[:(len(body) + 1) // 2])
    return vs


# ------------------------------------------------------------ writers

def fixed_zip(data):
    """The zip package with every member's date fixed (the writers stamp the
    time of day), and the core properties' modification date: same members,
    order and compression."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for zi in src.infolist():
            n = zipfile.ZipInfo(zi.filename, ZIP_DATE)
            n.compress_type = zi.compress_type
            n.external_attr = zi.external_attr
            data = src.read(zi.filename)
            if zi.filename == "docProps/core.xml":  # openpyxl stamps the time of saving
                data = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2024-03-01T09:00:00Z", data)
            dst.writestr(n, data)
    return out.getvalue()


def sentences(p):
    return [s for s in re.split(r"(?<=[.!?:])\s+", p) if s]


def write_docx(title, paras):
    import docx
    d = docx.Document()
    cp = d.core_properties
    cp.created = cp.modified = FIXED_DATE.replace(tzinfo=None)
    cp.title, cp.author = title, "fsim quality"
    d.add_heading(title, level=1)
    for p in paras:
        d.add_paragraph(p)
    b = io.BytesIO()
    d.save(b)
    return fixed_zip(b.getvalue())


def write_xlsx(title, paras):
    import openpyxl
    wb = openpyxl.Workbook()
    wb.properties.created = wb.properties.modified = FIXED_DATE.replace(tzinfo=None)
    wb.properties.creator = "fsim quality"
    ws = wb.active
    ws.title = "Text"
    ws.append([title])
    for p in paras:
        ws.append(sentences(p))
    b = io.BytesIO()
    wb.save(b)
    return fixed_zip(b.getvalue())


def write_pptx(title, paras):
    import pptx
    from pptx.util import Inches, Pt
    prs = pptx.Presentation()
    cp = prs.core_properties
    cp.created = cp.modified = FIXED_DATE.replace(tzinfo=None)
    cp.last_modified_by = cp.author = "fsim quality"
    cp.title = title
    for i in range(0, len(paras), 4):
        s = prs.slides.add_slide(prs.slide_layouts[6])
        tf = s.shapes.add_textbox(Inches(0.5), Inches(0.5), Inches(9), Inches(6.5)).text_frame
        tf.word_wrap = True
        tf.text = title if i == 0 else f"{title} ({i // 4 + 1})"
        for p in paras[i:i + 4]:
            para = tf.add_paragraph()
            para.text = p
            para.font.size = Pt(11)
    b = io.BytesIO()
    prs.save(b)
    return fixed_zip(b.getvalue())


def _odf_save(doc):
    from odf import meta
    doc.meta.addElement(meta.CreationDate(text="2024-03-01T09:00:00"))
    b = io.BytesIO()
    doc.write(b)
    return fixed_zip(b.getvalue())


def write_odt(title, paras):
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P
    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text=title))
    for p in paras:
        doc.text.addElement(P(text=p))
    return _odf_save(doc)


def write_ods(title, paras):
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P
    doc = OpenDocumentSpreadsheet()
    t = Table(name="Text")
    for cells in [[title]] + [sentences(p) for p in paras]:
        tr = TableRow()
        for c in cells:
            tc = TableCell(valuetype="string")
            tc.addElement(P(text=c))
            tr.addElement(tc)
        t.addElement(tr)
    doc.spreadsheet.addElement(t)
    return _odf_save(doc)


def write_pdf(title, paras):
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate
    st = getSampleStyleSheet()
    b = io.BytesIO()
    doc = SimpleDocTemplate(b, pagesize=A4, title=title, author="fsim quality", invariant=1)
    doc.build([Paragraph(html.escape(title), st["Heading1"])]
              + [Paragraph(html.escape(p), st["BodyText"]) for p in paras])
    return b.getvalue()


def write_eml(title, paras, fam, ver, attachment):
    m = EmailMessage()
    m["From"] = "Documentation team <docs@example.org>"
    m["To"] = f"Reviewers {fam} <review-{fam}@example.org>"
    m["Date"] = format_datetime(FIXED_DATE + datetime.timedelta(days=fam, hours=VERSIONS.index(ver)))
    m["Subject"] = f"{title} ({ver})"
    m["Message-ID"] = f"<{fam}.{ver}@docs.example.org>"
    m.set_content("\n\n".join(paras) + "\n", cte="quoted-printable")
    name, data = attachment
    sub = "pdf" if name.endswith(".pdf") else "vnd.openxmlformats-officedocument.wordprocessingml.document"
    m.add_attachment(data, maintype="application", subtype=sub, filename=name)
    m.set_boundary(f"fsim-quality-{fam}-{ver}")  # else random
    return m.as_bytes(policy=email.policy.SMTP)


def write_html(title, docx_bytes):
    """The .docx as a web page, the way a reviewer gets one: mammoth's
    conversion of the document's body (a real docx-to-HTML converter), in
    a page with its own style and no site around it."""
    import mammoth
    body = mammoth.convert_to_html(io.BytesIO(docx_bytes)).value
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>body {{ font-family: serif; max-width: 40em }}</style>\n"
            f"</head>\n<body>\n{body}\n</body>\n</html>\n").encode()


def unwrapped_text(title, paras):
    """The text as an editor without wrapping saves it: a paragraph a line."""
    return (title + "\n\n" + "\n\n".join(paras) + "\n").encode()


def plain_text(title, paras):
    return (title + "\n\n" + "\n\n".join(textwrap.fill(p, 72) for p in paras) + "\n").encode()


def generate(dest):
    """Write the generated corpus and the registry fixtures into dest;
    return the manifest: relative path -> {kind, origin, family, template,
    version}."""
    src = os.path.join(QDIR, "corpus", SOURCE_RELEASE)
    rng = random.Random(SEED)
    donor_paras = [p for d in DONORS for p in paragraphs(os.path.join(src, d))]
    tpl_paras = paragraphs(os.path.join(src, TEMPLATE_DONOR))
    templates = []
    for t in range(TEMPLATES):
        head = [f"Example Organisation {t + 1}: documentation office", f"Reference DOC-{t + 1}00 / internal"]
        # template 0 and 1 close with one paragraph, the last with ~2 KB
        n = 1 if t < TEMPLATES - 1 else 7
        templates.append((head, tpl_paras[t * 8:t * 8 + n]))
    manifest = {}
    os.makedirs(dest, exist_ok=True)

    def put(rel, data, meta):
        p = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as fo:
            fo.write(data)
        manifest[rel] = meta

    for fam, s in enumerate(SOURCES[:FAMILIES]):
        paras = paragraphs(os.path.join(src, s))
        title = re.sub(r"[-_]", " ", os.path.splitext(os.path.basename(s))[0]).capitalize()
        tpl = fam % TEMPLATES
        head, tail = templates[tpl]
        donor = donor_paras[fam * 9:] + donor_paras[:fam * 9]
        vs = versions(body_of(paras), donor, rng)
        for ver, body in vs.items():
            doc = head + body + tail
            base = f"generated/template-{tpl}/{fam:02d}-{slug(title)}/{ver}"
            meta = {"origin": "generated", "family": fam, "template": tpl, "version": ver}
            pdf = write_pdf(title, doc)
            dx = write_docx(title, doc)
            put(base + ".docx", dx, dict(meta, kind="docx"))
            put(base + ".xlsx", write_xlsx(title, doc), dict(meta, kind="xlsx"))
            put(base + ".pptx", write_pptx(title, doc), dict(meta, kind="pptx"))
            put(base + ".odt", write_odt(title, doc), dict(meta, kind="odt"))
            put(base + ".ods", write_ods(title, doc), dict(meta, kind="ods"))
            put(base + ".pdf", pdf, dict(meta, kind="pdf"))
            att = ("document.pdf", pdf) if fam % 2 == 0 else ("document.docx", dx)
            put(base + ".html", write_html(title, dx), dict(meta, kind="html"))
            put(base + ".eml", write_eml(title, doc, fam, ver, att), dict(meta, kind="eml"))
            txt = plain_text(title, doc)
            put(base + ".txt", unwrapped_text(title, doc), dict(meta, kind="txt"))
            put(base + ".txt.gz", gzip.compress(txt, compresslevel=9, mtime=0), dict(meta, kind="gz"))
            put(base + ".txt.bz2", bz2.compress(txt, 9), dict(meta, kind="bz2"))
            put(base + ".txt.xz", lzma.compress(txt, preset=6), dict(meta, kind="xz"))
    dl = os.path.join(QDIR, "documents", "dl")
    os.makedirs(dl, exist_ok=True)
    for fname, req, sha in REGISTRY:
        arch = os.path.join(dl, fname)
        if not os.path.exists(arch):
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
                            ":all:", "-d", dl, req], check=True)
        got = hashlib.sha256(open(arch, "rb").read()).hexdigest()
        if got != sha:
            raise SystemExit(f"documents: {arch}: SHA-256 {got}, expected {sha}")
        pkg = req.split("==")[0]
        with tarfile.open(arch) as tf:
            for m in sorted(tf.getmembers(), key=lambda m: m.name):
                ext = os.path.splitext(m.name)[1].lower()
                if not m.isfile() or ext not in REGISTRY_EXT or m.size > REGISTRY_MAX:
                    continue
                rel = "registry/" + pkg + "/" + m.name.split("/", 1)[1]
                put(rel, tf.extractfile(m).read(), {"origin": "registry", "kind": REGISTRY_EXT[ext],
                                                    "package": pkg})
    deb = os.path.join(dl, DEB_TEMPLATES[0])
    if not os.path.exists(deb):
        subprocess.run(["curl", "-fsSL", "--retry", "3", "-o", deb + ".part",
                        DEB_POOL + "/" + DEB_TEMPLATES[1]], check=True)
        os.replace(deb + ".part", deb)
    got = hashlib.sha256(open(deb, "rb").read()).hexdigest()
    if got != DEB_TEMPLATES[2]:
        raise SystemExit(f"documents: {deb}: SHA-256 {got}, expected {DEB_TEMPLATES[2]}")
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True, stdout=subprocess.PIPE).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        for m in sorted(tf.getmembers(), key=lambda m: m.name):
            ext = os.path.splitext(m.name)[1].lower()
            if m.isfile() and ext in TEMPLATE_EXT and "/share/template/" in m.name:
                rel = "libreoffice/" + m.name.split("/share/template/", 1)[1]
                put(rel, tf.extractfile(m).read(), {"origin": "libreoffice", "kind": TEMPLATE_EXT[ext],
                                                    "package": "libreoffice-common"})
    return manifest


def slug(s):
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()


# ------------------------------------------------------------ extractors

def lines_of(lines):
    """A view's text: every line trimmed, empty lines left out."""
    out = [x.strip() for ln in lines for x in ln.split("\n")]
    return "".join(x + "\n" for x in out if x).encode("utf-8")


def text_docx(path):
    import docx
    from docx.table import Table
    d = docx.Document(path)
    out = []

    def table(t):
        for row in t.rows:
            seen = set()
            for c in row.cells:
                if id(c._tc) in seen:  # a merged cell is listed once per column
                    continue
                seen.add(id(c._tc))
                for b in c.iter_inner_content():
                    if isinstance(b, Table):
                        table(b)
                    else:
                        out.append(b.text)
    for b in d.iter_inner_content():
        if isinstance(b, Table):
            table(b)
        else:
            out.append(b.text)
    return lines_of(out)


def cell_str(v):
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def text_xlsx(path):
    import openpyxl
    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    out = []
    for ws in wb.worksheets:
        for row in ws.iter_rows(values_only=True):
            out.append("\t".join(cell_str(v) for v in row if v is not None))
    return lines_of(out)


def text_pptx(path):
    import pptx
    prs = pptx.Presentation(path)
    out = []

    def shapes(ss):
        for sh in ss:
            if sh.shape_type == 6 and hasattr(sh, "shapes"):  # group
                shapes(sh.shapes)
            elif getattr(sh, "has_text_frame", False) and sh.has_text_frame:
                out.extend(p.text for p in sh.text_frame.paragraphs)
            elif getattr(sh, "has_table", False) and sh.has_table:
                for row in sh.table.rows:
                    for c in row.cells:
                        out.extend(p.text for p in c.text_frame.paragraphs)
    for s in prs.slides:
        shapes(s.shapes)
    return lines_of(out)


def without_doctype(path):
    """The zip at path with the DOCTYPE declaration of each XML member
    removed, in memory."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as zi, zipfile.ZipFile(out, "w") as zo:
        for info in zi.infolist():
            data = zi.read(info)
            if info.filename.endswith(".xml"):
                data = re.sub(rb"<!DOCTYPE[^>]*>", b"", data, count=1)
            zo.writestr(info, data)
    out.seek(0)
    return out


def text_odf(path, sheet):
    """odfpy's tree: odt/odp one line per text:p / text:h (white space in
    the text collapsed as the ODF specification says, text:s spaces,
    text:tab, text:line-break; a paragraph inside a frame or a text box in
    a paragraph, e.g. a caption, is a line of its own; annotations left
    out); ods one line per row, the text of its cells joined by tabs."""
    from odf.namespaces import OFFICENS, TABLENS, TEXTNS
    from odf.opendocument import load
    try:
        doc = load(path)
    except Exception as e:  # noqa: BLE001 (defusedxml's class, imported by odfpy)
        if type(e).__name__ != "ExternalReferenceForbidden":
            raise
        # LibreOffice's older wizard templates declare the OpenOffice.org
        # DTD by its system id, which defusedxml refuses to fetch; the
        # declaration defines no entity, so the text is the same without it.
        doc = load(without_doctype(path))
    out = []
    PARA = ((TEXTNS, "p"), (TEXTNS, "h"))

    def para(e, buf):
        for c in e.childNodes:
            q = getattr(c, "qname", None)
            if c.nodeType == c.TEXT_NODE:  # white space collapsed (ODF 1.2, 6.1.2)
                buf.append(re.sub(r"[ \t\r\n]+", " ", c.data))
            elif q == (TEXTNS, "s"):
                buf.append(" " * int(c.getAttrNS(TEXTNS, "c") or 1))
            elif q == (TEXTNS, "tab"):
                buf.append("\t")
            elif q == (TEXTNS, "line-break"):
                buf.append("\n")
            elif q == (OFFICENS, "annotation"):
                continue
            elif q in PARA:
                out.append("".join(buf))
                buf.clear()
                para(c, buf)
                out.append("".join(buf))
                buf.clear()
            else:
                para(c, buf)

    def walk(e):
        for c in e.childNodes:
            q = getattr(c, "qname", None)
            if q is None:
                continue
            if sheet and q == (TABLENS, "table-row"):
                cells = []
                for tc in c.childNodes:
                    if getattr(tc, "qname", None) == (TABLENS, "table-cell"):
                        parts = []
                        for p in tc.childNodes:
                            if getattr(p, "qname", None) == (TEXTNS, "p"):
                                buf = []
                                para(p, buf)
                                parts.append("".join(buf))
                        cells.append(" ".join(parts))
                out.append("\t".join(x for x in cells if x))
            elif not sheet and q in PARA:
                buf = []
                para(c, buf)
                out.append("".join(buf))
            else:
                walk(c)
    walk(doc.body)
    return lines_of(out)


def text_pdf(path):
    r = subprocess.run(["pdftotext", "-enc", "UTF-8", "-eol", "unix", path, "-"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, timeout=60)
    if r.returncode != 0:
        raise ValueError(f"pdftotext exit {r.returncode}")
    return lines_of([r.stdout.decode("utf-8", "replace")])


def text_html(path):
    """A page's text by the standard library's HTML parser: a block
    element's text a line, head, script and style left out."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        BLOCKS = {"p", "div", "br", "li", "tr", "td", "th", "table", "ul", "ol", "blockquote", "pre",
                  "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "section", "article"}
        HIDDEN = {"head", "script", "style"}

        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.lines, self.cur, self.hidden = [], [], 0

        def end(self):
            self.lines.append(" ".join("".join(self.cur).split()))
            self.cur = []

        def handle_starttag(self, tag, attrs):
            if tag in self.HIDDEN:
                self.hidden += 1
            if tag in self.BLOCKS:
                self.end()

        def handle_endtag(self, tag):
            if tag in self.HIDDEN:
                self.hidden = max(0, self.hidden - 1)
            if tag in self.BLOCKS:
                self.end()

        def handle_data(self, data):
            if not self.hidden:
                self.cur.append(data)

    p = Text()
    p.feed(open(path, "rb").read().decode("utf-8", "replace"))
    p.close()
    p.end()
    return lines_of(p.lines)


def text_eml(path):
    m = email.message_from_binary_file(open(path, "rb"), policy=email.policy.default)
    out = []
    for h in ("From", "To", "Date", "Subject"):
        v = m.get(h)
        if v is not None:
            out.append(f"{h}: " + " ".join(str(v).split()))
    plain = [p for p in m.walk() if p.get_content_type() == "text/plain" and not p.is_attachment()]
    for p in plain:
        out.append(p.get_content())
    return lines_of(out)


# The kinds whose text fsim compares one sentence a line (content::prose;
# the truth cuts them the same way, prose.py): documents of prose, not
# spreadsheets or compressed streams.
PROSE = {"docx", "pptx", "odt", "odp", "pdf", "eml", "html", "ott", "otp"}
# Plain text and decompressed streams: cut as sentences too when their text
# reads as prose (prose.reads_as_prose, the mirror of content::plaintext).
PLAIN = {"txt", "gz", "bz2", "xz"}
# Spreadsheets: their views are rows (a cell a sentence here), compared with
# each other but not counted as the same text as a document.
SHEETS = {"xlsx", "ods", "ots"}
# Slide decks: python-pptx's deck of a text puts a title on every slide,
# words the document has not, so a deck is the same text only as a deck.
DECKS = {"pptx", "otp"}


def text_group(kind):
    """Which texts a kind's view can be the same as: documents, rows or slides."""
    return "rows" if kind in SHEETS else "slides" if kind in DECKS else "text"


APART = {"rows": "a spreadsheet: rows", "slides": "a deck: a title on every slide"}

EXTRACT = {
    "docx": text_docx, "xlsx": text_xlsx, "pptx": text_pptx,
    "odt": lambda p: text_odf(p, False), "odp": lambda p: text_odf(p, False), "ods": lambda p: text_odf(p, True),
    "pdf": text_pdf, "eml": text_eml, "html": text_html, "ott": lambda p: text_odf(p, False), "otp": lambda p: text_odf(p, False),
    "ots": lambda p: text_odf(p, True), "txt": lambda p: open(p, "rb").read(),
    "gz": lambda p: gzip.open(p).read(), "bz2": lambda p: bz2.open(p).read(), "xz": lambda p: lzma.open(p).read(),
}


# ------------------------------------------------------------ fsim

def fsim_run(name, corpus, extra):
    work = os.path.join(DDIR, "fsim-" + name)
    subprocess.run(["rm", "-rf", work], check=True)
    rfile = os.path.join(DDIR, ".time")
    cmd = ["/usr/bin/time", "-f", "%e %M", "-o", rfile, "make", "-s", "--no-print-directory",
           os.path.join(work, "verified.tsv"), f"REPO={corpus}", f"WORK={work}", f"JOBS={JOBS}", f"BIN={BIN}",
           "NO_BUILD=1", "QUIET=-q", "MIN_PERCENT=0"] + extra
    r = subprocess.run(cmd, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace"))
        raise SystemExit(f"documents: {' '.join(cmd)} failed")
    notes = [x for x in r.stderr.decode(errors="replace").splitlines() if "warning:" in x]
    e, m = open(rfile).read().split()[-2:]
    files, members = {}, {}
    with open(os.path.join(work, "files.tsv"), encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.rstrip("\n").split("\t")
            files[int(f[0])] = {"size": int(f[1]), "view": f[5], "path": os.path.relpath(f[-1], corpus)}
            if "!" in f[5]:
                # An archive member (the document attached to an .eml,
                # `x.eml!/document.pdf`): no file of the manifest. Its
                # content hash, the MD5 of its raw bytes when it has a
                # content view (docs/documents.md), names the loose file
                # it is a copy of; a raw member's is not its bytes' MD5
                # (`None`: its pairs are left out).
                members[files[int(f[0])]["path"]] = f[3] if f[7] != "-" else None
    pairs = {}
    for line in record_lines(os.path.join(work, "verified.tsv")):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        a, b = files[int(f[0])], files[int(f[1])]
        ex = int(f[6]) if len(f) >= 8 and f[7] == "exact" else max(int(f[4]), int(f[6]))
        pairs[(a["path"], b["path"])] = 100.0 * ex / max(a["size"], b["size"], 1)
    return {"files": files, "pairs": pairs, "members": members, "s": float(e), "rss": int(m) // 1024, "notes": notes,
            "cmd": "make " + os.path.join("$QDIR/documents/fsim-" + name, "verified.tsv")
            + f" REPO=$QDIR/documents/corpus MIN_PERCENT=0 JOBS={JOBS}" + "".join(" " + x for x in extra)}


# ------------------------------------------------------------ measure

def prf(pred, pos):
    tp = len(pred & pos)
    p = tp / len(pred) if pred else 1.0
    r = tp / len(pos) if pos else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "generate":
        m = generate(sys.argv[2])
        log(f"documents: {len(m)} files in {sys.argv[2]}")
        return
    # The truth's PDF text and fsim's PDF view both come from pdftotext:
    # without it every PDF would be an extractor failure, cached as such.
    if shutil.which("pdftotext") is None:
        raise SystemExit("documents: pdftotext not found (Debian: apt-get install poppler-utils)")
    t_start = time.time()
    corpus = os.path.join(DDIR, "corpus")
    gen_key = hashlib.md5(open(__file__, "rb").read()).hexdigest()
    stamp = os.path.join(DDIR, "corpus.done")
    if not os.path.exists(stamp) or open(stamp).read() != gen_key:
        subprocess.run(["rm", "-rf", corpus, stamp], check=True)
        log("documents: generating the corpus")
        manifest = generate(corpus)
        json.dump(manifest, open(os.path.join(DDIR, "manifest.json"), "w"), indent=0, sort_keys=True)
        open(stamp, "w").write(gen_key)
    manifest = json.load(open(os.path.join(DDIR, "manifest.json")))
    # independent texts, one per distinct raw content
    # keyed by the rules that make them, so that a change of the views'
    # rules (prose.py, htmltext.py) or of the extractors is never a stale text
    rules = hashlib.md5(b"".join(open(f, "rb").read() for f in (
        prose.__file__, truth.htmltext.__file__, __file__))).hexdigest()[:12]
    tdir = os.path.join(DDIR, "text-" + rules)
    os.makedirs(tdir, exist_ok=True)
    raw, tinfo, failed = {}, {}, {}
    for rel in sorted(manifest):
        data = open(os.path.join(corpus, rel), "rb").read()
        h = hashlib.md5(data).hexdigest()
        raw[rel] = (h, len(data))
        tp = os.path.join(tdir, h + ".sentences.txt")
        ep = os.path.join(tdir, h + ".err")
        if not os.path.exists(tp):
            try:
                t = EXTRACT[manifest[rel]["kind"]](os.path.join(corpus, rel))
                if manifest[rel]["kind"] in PROSE or (manifest[rel]["kind"] in PLAIN and prose.reads_as_prose(t)):
                    t = prose.sentences(t)
            except Exception as e:  # the extractor's failure: no text, no pairs
                with open(ep, "w") as fo:
                    fo.write(f"{type(e).__name__}: {e}"[:120].replace("\n", " "))
                t = b""
            with open(tp, "wb") as fo:
                fo.write(t)
        if os.path.exists(ep):
            failed[rel] = open(ep).read()
        tinfo[rel] = (hashlib.md5(open(tp, "rb").read()).hexdigest(), os.path.getsize(tp), tp)
    n_files = len(manifest)
    log(f"documents: {n_files} files, texts extracted ({len(failed)} extractor failures)")

    # fsim: content views (the default) and raw bytes
    if os.path.abspath(BIN) == os.path.join(ROOT, "target", "release"):
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bins"], check=True)
    runs = {"views": fsim_run("views", corpus, []), "raw": fsim_run("raw", corpus, ["CONTENT=raw"])}
    for n, r in runs.items():
        log(f"documents: fsim {n}: {r['s']} s, {len(r['pairs'])} verified pairs")

    # truth over every pair of distinct raw contents with texts
    # (a file whose extractor failed has no truth: left out; two files
    # without text are no pair of documents: left out, counted)
    rep = {}
    for rel in sorted(manifest, key=os.fsencode):
        if rel not in failed:
            rep.setdefault(raw[rel][0], rel)
    reps = sorted(rep.values(), key=os.fsencode)
    info = {tinfo[r][2]: (tinfo[r][0], tinfo[r][1]) for r in reps}
    all_pairs, no_text = [], 0
    for i in range(len(reps)):
        for j in range(i + 1, len(reps)):
            if tinfo[reps[i]][1] or tinfo[reps[j]][1]:
                all_pairs.append((reps[i], reps[j]))
            else:
                no_text += 1
    text_pairs = {(tinfo[a][2], tinfo[b][2]) for a, b in all_pairs
                  if tinfo[a][0] != tinfo[b][0] and tinfo[a][1] and tinfo[b][1]}
    t0 = time.time()
    cache, _ = truth.exact(sorted(text_pairs), info, os.path.join(DDIR, "truth-cache.tsv"), JOBS, log)
    t_truth = time.time() - t0
    sim = {}
    for a, b in all_pairs:
        ha, hb = tinfo[a][0], tinfo[b][0]
        if not tinfo[a][1] or not tinfo[b][1]:
            sim[(a, b)] = 0.0
            continue
        if ha == hb:
            sim[(a, b)] = 100.0
            continue
        v = cache.get((ha, hb) if ha < hb else (hb, ha))
        sim[(a, b)] = 100.0 * v / max(tinfo[a][1], tinfo[b][1]) if v is not None else 0.0

    # fsim's figures, by the representative of each raw content (an
    # attachment's: the loose file it is a copy of)
    def canon(a, b, members):
        def rep_of(p):
            return rep.get(raw[p][0] if p in raw else members.get(p))
        a, b = rep_of(a), rep_of(b)
        if a is None or b is None or a == b:
            return None
        return (a, b) if os.fsencode(a) < os.fsencode(b) else (b, a)
    figs = {}
    for n, r in runs.items():
        f = {}
        for (a, b), v in r["pairs"].items():
            k = canon(a, b, r["members"])
            if k is not None:
                f[k] = max(v, f.get(k, 0.0))
        figs[n] = f

    def kind_of(k):
        ka, kb = manifest[k[0]]["kind"], manifest[k[1]]["kind"]
        return ka if ka == kb else "across kinds"

    def origin_of(k):
        oa, ob = manifest[k[0]]["origin"], manifest[k[1]]["origin"]
        return oa if oa == ob else "mixed"

    kinds = [k for k in KINDS + ["odp"] + sorted(set(TEMPLATE_EXT.values()))
             if any(manifest[r]["kind"] == k for r in reps)] + ["across kinds"]
    groups = [(o, k) for o in ("generated", "registry", "libreoffice") for k in kinds] + [("all", "all")]
    pos = {T: {k for k, s in sim.items() if s >= T} for T in KIND_T}

    def pred(n, T):
        # Pairs of two files without text are no pair of documents (left
        # out of the truth, counted above): not counted against fsim either.
        return {k for k, v in figs[n].items() if v >= T and k in sim}

    def sel(ks, g):
        o, kd = g
        return {k for k in ks if (o == "all" or origin_of(k) == o) and (kd == "all" or kind_of(k) == kd)}

    table = {}
    for g in groups:
        npairs = len(sel(sim.keys(), g))
        if npairs == 0 or (g[0] != "all" and not any(sel(pos[T], g) for T in KIND_T)
                           and not any(sel(pred(n, T), g) for n in runs for T in KIND_T)):
            continue
        table[g] = {"pairs": npairs, "pos": {T: len(sel(pos[T], g)) for T in KIND_T},
                    "m": {n: {T: prf(sel(pred(n, T), g), sel(pos[T], g)) + (len(sel(pred(n, T), g)),)
                              for T in KIND_T} for n in runs}}
    # The same text in two formats: two generated files of one family and
    # one version, of two kinds; fsim's figure (content views) per pair of
    # kinds, its lowest, and the pairs under 90 %.
    by_text = defaultdict(list)
    for r in reps:
        m = manifest[r]
        if m["origin"] == "generated":
            by_text[(m["family"], m["version"])].append(r)
    same_text = defaultdict(list)
    for rs in by_text.values():
        for i in range(len(rs)):
            for j in range(i + 1, len(rs)):
                k = (rs[i], rs[j]) if os.fsencode(rs[i]) < os.fsencode(rs[j]) else (rs[j], rs[i])
                ka, kb = sorted((manifest[k[0]]["kind"], manifest[k[1]]["kind"]))
                if ka != kb:
                    same_text[(ka, kb)].append((figs["views"].get(k, 0.0), sim.get(k, 0.0), k))
    # template look-alikes: two generated documents of one kind and one
    # template from different families
    tpl_pairs = [k for k in sim if origin_of(k) == "generated" and kind_of(k) != "across kinds"
                 and manifest[k[0]]["template"] == manifest[k[1]]["template"]
                 and manifest[k[0]]["family"] != manifest[k[1]]["family"]]
    tpl = {n: sorted(((figs[n][k], k) for k in tpl_pairs if figs[n].get(k, 0) >= 30), reverse=True)
           for n in runs}
    tpl_truth_max = max((sim[k] for k in tpl_pairs), default=0.0)
    tpl_by_kind = {n: Counter(kind_of(k) for _, k in tpl[n]) for n in runs}
    # misses and false positives of the views at each T, for the cause
    misses = {}
    for T in KIND_T:
        fn = sorted(pos[T] - pred("views", T), key=lambda k: (-sim[k], k))
        fp = sorted(pred("views", T) - pos[T], key=lambda k: (-figs["views"][k], k))
        misses[T] = (fn, fp)
    attached = runs["views"]["members"]
    loose = [f for f in runs["views"]["files"].values() if f["path"] not in attached]
    views_of = Counter(f["view"] for f in loose)
    unreadable = sorted(f["path"] for f in loose if f["view"].startswith("raw/"))

    # section
    L = []
    w = L.append
    gen = [r for r in manifest if manifest[r]["origin"] == "generated"]
    reg = [r for r in manifest if manifest[r]["origin"] == "registry"]
    lo = [r for r in manifest if manifest[r]["origin"] == "libreoffice"]
    size = sum(v[1] for v in raw.values())
    w("## Documents\n")
    w("Generated by `scripts/quality/documents.py` (`make quality`, or alone: `make quality-documents`). "
      "fsim's content views (docs/documents.md) against an exact truth on the text of documents.\n")
    w(f"**Corpus** (`{QDIR}/documents/corpus`, {n_files:,} files, {size / 1e6:.1f} MB, {len(rep):,} distinct "
      f"contents): {len(gen):,} generated, {len(reg):,} from PyPI and {len(lo):,} office templates of "
      "LibreOffice.\n")
    w(f"* *Generated* (deterministic, seed {SEED}): {FAMILIES} pages of Django {SOURCE_RELEASE.split('-')[1]}'s "
      f"documentation (real prose, the first ~{BODY_CHARS // 1000} KB of paragraphs) in {len(VERSIONS)} versions: "
      + "; ".join(f"`{v}` {n}" for v, n in VERSION_NOTES.items())
      + " (replacements from other pages). Every version is written as " + ", ".join(KINDS)
      + ": python-docx, openpyxl (a row per paragraph, a cell per sentence), python-pptx (four paragraphs a "
      "slide), odfpy (odt; ods a row per paragraph), reportlab (pdf), Python's email (headers, a "
      "quoted-printable text/plain body, the pdf or docx attached), the text as a plain `.txt` of one "
      "paragraph a line, and the text wrapped at 72 columns through gzip, bzip2 and xz. The families share " + str(TEMPLATES) + " templates (a family's template "
      "is its number mod " + str(TEMPLATES) + "): a title block and closing paragraphs in every document of "
      "the template, the last template's ~2 KB (~20 % of a document), and the writers' own templates "
      "(python-docx's styles, ~36 KB of every docx); two different documents of one template are the "
      "look-alikes that must stay under 30 %.")
    w("* *PyPI*: the document fixtures (docx, xlsx, pptx, odt, ods, odp, pdf ≤ 2 MB) of the sdists "
      + ", ".join(f"`{r[1]}`" for r in REGISTRY) + ", SHA-256 checked:\n")
    w("* *LibreOffice*: the office templates (`.ott`, `.ots`, `.otp`: text, spreadsheet and presentation "
      "templates, the wizards' letter, fax and agenda styles) of Debian's `libreoffice-common` "
      f"(`{DEB_TEMPLATES[0]}`), read as their formats' text.\n")
    w("```")
    for f, _, sha in REGISTRY:
        w(f"{sha}  {f}")
    w(f"{DEB_TEMPLATES[2]}  {DEB_TEMPLATES[0]}")
    w("```\n")
    w("**Truth**: one text per file from an extractor that is not fsim's code: python-docx (body paragraphs "
      "and table cells in order), openpyxl (rows, cells joined by tabs), python-pptx (text frames and tables, "
      "slide by slide), odfpy (odt/odp/ott/otp `text:p`/`text:h`, a paragraph in a frame a line of its own, white space "
      "collapsed as ODF says; ods/ots rows), poppler's `pdftotext -enc UTF-8` (the "
      "program fsim runs too: the PDF truth is independent of fsim's code, not of poppler), Python's email "
      "(From, To, Date, Subject and the text/plain bodies), gzip/bz2/lzma; lines trimmed, empty lines left "
      "out (a decompressed stream and a plain `.txt` as they are); the texts of docx, pptx, odt, odp, ott, "
      "otp, pdf and eml, and of a `.txt` or a decompressed stream that reads as prose by fsim's rule "
      "(`prose.reads_as_prose`, the mirror of `content::plaintext`), then one "
      "sentence a line, by the rules fsim's views follow (scripts/quality/prose.py, the mirror of "
      "`content::prose`, both checked on one sample), so that a document and its PDF are the same "
      "text as a reader sees it. Similarity = truth.py's exact measure (bytes of a longest common "
      "subsequence of lines by GNU diff ÷ the larger text), over **every** pair of distinct files "
      f"({len(all_pairs):,} pairs of {len(rep):,} contents, a file without text similar to none; the "
      f"{no_text:,} pairs of two files without text (test fixtures of empty documents, charts, pictures) "
      f"left out; truth {t_truth:.0f} s"
      + (f"; the extractor failed on {len(failed)} files, left out: "
         + ", ".join(f"`{k}` ({v if '/' not in v else v.split(':')[0]})" for k, v in sorted(failed.items())[:6]) if failed else "") + ").\n")
    w("**fsim**: `make $WORK/verified.tsv` with the defaults (`MIN_PERCENT=0` so that fsim-verify keeps "
      "pairs under the report's 50 %), content views on (the default) and `CONTENT=raw`; a pair is reported at "
      "T when fsim-verify's exact figure ÷ the larger file's size in fsim's table (the view's length; raw: "
      "the file's) ≥ T %. Views fsim chose: "
      + ", ".join(f"{k} {n:,}" for k, n in sorted(views_of.items())) + "; "
      + f"{len(attached):,} attachments of the e-mails as members of their own (an attachment's pairs "
      "count as its loose copy's); "
      + (f"unreadable (raw bytes compared): {len(unreadable)}: " + ", ".join(f"`{u}`" for u in unreadable[:8])
         + (" ..." if len(unreadable) > 8 else "") if unreadable else "none unreadable") + ".\n")
    for n, r in runs.items():
        w(f"* {n}: `{r['cmd']}`: {r['s']:.1f} s, peak RSS {r['rss']} MB, {len(r['pairs']):,} verified pairs")
    ratio = runs["views"]["s"] / runs["raw"]["s"]
    w(f"\nThe views' run takes {ratio:.2f}× the raw run (target ≤ 3×: **{'met' if ratio <= 3 else 'not met'}**); "
      "the raw run verifies the pairs of zip containers sharing their writers' styles, which the views leave out.\n")
    w("P / R / F1 (pairs reported) per kind of pair (both files of that kind, or *across kinds*), "
      "generated and PyPI apart; positives at 30 / 50 / 70:\n")
    w("| origin | kind | pairs | positives | " + " | ".join(f"views @{T}" for T in KIND_T) + " | "
      + " | ".join(f"raw @{T}" for T in KIND_T) + " |")
    w("|---|---|---|---|" + "---|" * (2 * len(KIND_T)))
    for g, t in table.items():
        cells = []
        for n in runs:
            for T in KIND_T:
                p, r, f, c = t["m"][n][T]
                cells.append(f"{p:.3f} / {r:.3f} / **{f:.3f}** ({c:,})")
        w(f"| {g[0]} | {g[1]} | {t['pairs']:,} | " + " / ".join(f"{t['pos'][T]:,}" for T in KIND_T) + " | "
          + " | ".join(cells) + " |")
    w("")
    ga = table[("all", "all")]["m"]["views"]
    ok = all(ga[T][2] >= 0.97 for T in KIND_T)
    w("Target: F1 ≥ 0.97 at T = 30, 50, 70 on document pairs, content views: all pairs "
      + ", ".join(f"{ga[T][2]:.3f}" for T in KIND_T) + ": " + ("**met**" if ok else "**NOT met**") + ".\n")
    low = [(g, T, t["m"]["views"][T][1]) for g, t in table.items() for T in KIND_T
           if g != ("all", "all") and t["pos"][T] and t["m"]["views"][T][1] < 0.97]
    w("Target: recall ≥ 0.97 at T = 30, 50, 70 on each kind, content views: "
      + ("**met** on every row above." if not low else "**not met** on " + "; ".join(
          f"{g[0]} {g[1]} @{T} ({r:.3f})" for g, T, r in low) + ".") + "\n")
    w("**The same text in two formats**: every two generated files of one family and one version, of two "
      "kinds (the same words written by two writers); fsim's figure with content views, lowest and how many "
      "under 90 % (target: none), beside the truth's lowest:\n")
    w("| kinds | pairs | fsim lowest | under 90 % | truth lowest |")
    w("|---|---|---|---|---|")
    n_same = n_under = 0
    for (ka, kb), xs in sorted(same_text.items()):
        under = sum(1 for f, _, _ in xs if f < 90)
        ga, gb = text_group(ka), text_group(kb)
        if ga == gb:
            n_same += len(xs)
            n_under += under
        why = "; ".join(APART[g] for g in sorted({ga, gb}) if g != "text") if ga != gb else ""
        w(f"| {ka} – {kb}{f' ({why}, out of the target)' if why else ''} "
          f"| {len(xs):,} | {min(f for f, _, _ in xs):.1f} % | {under:,} | {min(t for _, t, _ in xs):.1f} % |")
    w(f"\n{n_same - n_under:,} of {n_same:,} same-text pairs at ≥ 90 % (a spreadsheet or a slide deck against a "
      "document left out: a spreadsheet's view is its rows, a cell a sentence, and the deck has a title on every "
      "slide, words the document has not; the truth's lowest beside fsim's says whether the texts differ): target "
      + ("**met**" if not n_under else "**not met**") + ".\n")
    w(f"**Template look-alikes**: {len(tpl_pairs):,} pairs of two different generated documents of one kind "
      f"and one template (truth at most {tpl_truth_max:.1f} %). Reported ≥ 30 %: "
      + "; ".join(f"{n}: **{len(tpl[n]):,}**" + (" (" + ", ".join(f"{k} {c:,}" for k, c in
                                                                  tpl_by_kind[n].most_common()) + ")"
                                                  if tpl[n] else "") for n in runs)
      + (". Highest with views: " + ", ".join(f"`{k[0]}` and `{k[1]}` {v:.1f} %" for v, k in tpl["views"][:3])
         if tpl["views"] else "") + ".\n")
    w("Where the content views' errors are (every pair, its truth and fsim's figure, %):\n")
    for T in KIND_T:
        fn, fp = misses[T]
        nc = sum(1 for k in fn if k not in figs["views"])
        w(f"* T = {T}: {len(fn)} missed ({nc} not candidates: their shared chunks under fsim-analyze's floor, "
          f"{len(fn) - nc} with fsim-verify's figure under T), {len(fp)} false positives"
          + ("; missed: " + "; ".join(f"`{a}` and `{b}` (truth {sim[(a, b)]:.1f}, fsim "
                                       + (f"{figs['views'][(a, b)]:.1f}" if (a, b) in figs["views"] else "no candidate")
                                       + ")" for a, b in fn[:5]) if fn else "")
          + ("; false positives: " + "; ".join(f"`{a}` and `{b}` (truth {sim[(a, b)]:.1f}, fsim "
                                               f"{figs['views'][(a, b)]:.1f})" for a, b in fp[:5]) if fp else ""))
    fn30 = misses[KIND_T[0]][0]
    by_ver = Counter("–".join(sorted(manifest[x].get("version", "PyPI") for x in k)) for k in fn30)
    w(f"\nThe misses at T = {KIND_T[0]} by the two versions of the pair: "
      + ", ".join(f"{v} {n}" for v, n in by_ver.most_common())
      + ". Every second paragraph replaced (`half`) leaves few chunks in common when paragraphs are short: "
      "a chunk (~100 bytes) that spans the end of a kept paragraph and the start of a replaced one is lost, "
      "so two such documents can share ~50 % of their lines but under 10 % of their chunks; the line "
      "source (`LINES`, text files of any size by default) is what makes them candidates. It is not the "
      "views' doing (their figures, when a pair is a candidate, are diff's on the same text).")
    w("")
    w(f"The whole section took {time.time() - t_start:.0f} s.\n")
    section = "\n".join(L) + "\n"
    sp = os.path.join(DDIR, "section.md")
    with open(sp, "w") as fo:
        fo.write(section)
    log(f"documents: wrote {sp}")
    if OUT:
        splice(OUT, section)
        log(f"documents: spliced into {OUT}")


def splice(path, section):
    """Replace the section "## Documents ..." of path (up to the next "## "
    heading) with section, or put it before "## Reproduce"."""
    doc = open(path, encoding="utf-8").read()
    m = re.search(r"^## Documents.*?(?=^## )", doc, re.S | re.M)
    if m:
        doc = doc[:m.start()] + section + "\n" + doc[m.end():]
    else:
        i = doc.find("\n## Reproduce")
        doc = doc[:i + 1] + section + "\n" + doc[i + 1:] if i >= 0 else doc + "\n" + section
    with open(path, "w", encoding="utf-8") as fo:
        fo.write(doc)


if __name__ == "__main__":
    main()
