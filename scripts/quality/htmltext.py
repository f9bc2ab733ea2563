"""The mirror of fsim's HTML reader (src/content/html.rs): which HTML files
are stand-alone documents, compared as their text, and that text, a block
a line. The truth reads such a file as fsim's `html` view does (then cut
into sentences, prose.py), so that a figure on text is judged against the
same text."""

HEAD = 8192
BLOCKS = {b"p", b"div", b"br", b"hr", b"li", b"ul", b"ol", b"tr", b"table", b"h1", b"h2", b"h3", b"h4",
          b"h5", b"h6", b"blockquote", b"pre", b"dt", b"dd", b"section", b"article", b"title", b"td", b"th"}
HIDDEN = {b"script", b"style", b"head"}
ENTITIES = {b"amp": "&", b"lt": "<", b"gt": ">", b"quot": '"', b"apos": "'", b"nbsp": " ",
            b"mdash": "\u2014", b"ndash": "\u2013", b"hellip": "\u2026", b"lsquo": "\u2018",
            b"rsquo": "\u2019", b"ldquo": "\u201c", b"rdquo": "\u201d", b"copy": "\u00a9",
            b"eacute": "\u00e9", b"egrave": "\u00e8", b"agrave": "\u00e0", b"uuml": "\u00fc",
            b"ouml": "\u00f6", b"auml": "\u00e4"}
WS = b" \t\n\r\x0c"


def is_document(data):
    """Whether a file starting with data is a stand-alone HTML document:
    opens as HTML after a BOM, white space, an XML declaration and
    comments; loads no style sheet and runs no script; no template's
    syntax (in a tag, or a text that is only template tags).
    Judged on the first 8 KiB, as fsim does."""
    head = data[:HEAD]
    rest = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    while True:
        rest = rest.lstrip(WS)
        if rest.startswith(b"<?xml"):
            close = b"?>"
        elif rest.startswith(b"<!--"):
            close = b"-->"
        else:
            break
        end = rest.find(close, 4)
        if end < 0:
            return False
        rest = rest[end + len(close):]
    low = rest.lower()

    def ends_name(at):
        return at >= len(rest) or rest[at] in WS or rest[at] == ord(">")

    opens = (low.startswith(b"<!doctype html") and ends_name(14)) or (low.startswith(b"<html") and ends_name(5))
    return opens and not _loads_files(head) and not _template(head)


def _template(head):
    """A tag holding template syntax, or a text between tags that is only
    template tags."""
    i = 0
    while i < len(head):
        lt = head.find(b"<", i)
        lt = len(head) if lt < 0 else lt
        if _only_template_tags(head[i:lt]):
            return True
        if lt == len(head):
            return False
        gt = head.find(b">", lt)
        gt = len(head) if gt < 0 else gt + 1
        tag = head[lt:gt]
        if tag.startswith((b"<%", b"<?php")) or b"{{" in tag or b"{%" in tag:
            return True
        i = gt
    return False


def _only_template_tags(text):
    rest = text.strip(WS)
    if not rest:
        return False
    while rest:
        if rest.startswith(b"{%"):
            close = b"%}"
        elif rest.startswith(b"{{"):
            close = b"}}"
        else:
            return False
        k = rest.find(close, 2)
        if k < 0:
            return False
        rest = rest[k + 2:].lstrip(WS)
    return True


def _loads_files(head):
    i = head.find(b"<")
    while i >= 0:
        end = head.find(b">", i)
        tag = head[i + 1:len(head) if end < 0 else end].lower()
        name = _tag_name(tag)
        if name == b"link" and b"stylesheet" in tag:
            return True
        if name == b"script" and not tag.startswith(b"/"):
            return True
        i = head.find(b"<", i + 1)
    return False


def _tag_name(inner):
    if inner.startswith(b"/"):
        inner = inner[1:]
    n = 0
    while n < len(inner) and (chr(inner[n]).isascii() and chr(inner[n]).isalnum()):
        n += 1
    return inner[:n].lower()


def _entity(name):
    if name.startswith(b"#"):
        num = name[1:]
        hexa = num[:1] in (b"x", b"X")
        digits = num[1:] if hexa else num
        ok = b"0123456789abcdefABCDEF" if hexa else b"0123456789"
        if not digits or any(c not in ok for c in digits):
            return None
        code = int(digits, 16 if hexa else 10)
        if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
            return None
        return chr(code)
    return ENTITIES.get(name)


def _decode_entities(s):
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == ord("&"):
            semi = s.find(b";", i, i + 12)
            ch = _entity(s[i + 1:semi]) if semi >= 0 else None
            if ch is not None:
                out += ch.encode()
                i = semi + 1
                continue
        out.append(s[i])
        i += 1
    return bytes(out)


# WHATWG's labels that Python names otherwise (latin-1 and ascii are
# windows-1252 in HTML).
LABELS = {"iso-8859-1": "cp1252", "latin1": "cp1252", "l1": "cp1252", "ascii": "cp1252",
          "us-ascii": "cp1252", "windows-1252": "cp1252", "x-cp1252": "cp1252"}


def decoded(html):
    """A document as UTF-8: as it is when valid, else by its declared
    charset, else windows-1252 (fsim's html::decoded)."""
    try:
        html.decode("utf-8")
        return html
    except UnicodeDecodeError:
        pass
    low = html[:HEAD].lower()
    at = low.find(b"charset=")
    label = "windows-1252"
    if at >= 0:
        rest = html[at + 8:at + 8 + 64]
        if rest[:1] in (b'"', b"'"):
            rest = rest[1:]
        end = 0
        while end < len(rest) and (chr(rest[end]).isalnum() and rest[end] < 128 or rest[end:end + 1] in b"-_:."):
            end += 1
        label = rest[:end].decode("ascii", "replace").lower() or label
    codec = LABELS.get(label, label)
    try:
        return html.decode(codec, "replace").encode()
    except LookupError:
        return html.decode("cp1252", "replace").encode()


def text(html):
    """The text of html (bytes): a block a line, white space collapsed."""
    out = bytearray()
    line = bytearray()

    def flush():
        t = line.strip(WS)
        if t:
            out.extend(t + b"\n")
        line.clear()

    i, n = 0, len(html)
    while i < n:
        if html[i] != ord("<"):
            end = html.find(b"<", i)
            end = n if end < 0 else end
            run = _decode_entities(html[i:end]).decode("utf-8", "replace").encode()
            for b in run:
                if b in WS:
                    if line and not line.endswith(b" "):
                        line.append(32)
                else:
                    line.append(b)
            i = end
            continue
        if html.startswith(b"<!--", i):
            k = html.find(b"-->", i + 4)
            i = n if k < 0 else k + 3
            continue
        k = html.find(b">", i)
        end = n if k < 0 else k + 1
        name = _tag_name(html[i + 1:end])
        if name in BLOCKS:
            flush()
        opening = html[i + 1:i + 2] != b"/" and not html[:end].endswith(b"/>")
        i = end
        if opening and name in HIDDEN:
            i = _skip_hidden(html, i, name)
    flush()
    return bytes(out)


def _skip_hidden(html, start, name):
    k = html.find(b"</", start)
    while k >= 0:
        at = k + 2
        cand = html[at:at + len(name)]
        if len(cand) == len(name) and cand.lower() == name:
            e = html.find(b">", at)
            return len(html) if e < 0 else e + 1
        k = html.find(b"</", k + 2)
    return len(html)
