"""Prose as one sentence a line: the mirror of fsim's `content::prose`
(src/content/prose.rs), so that the truth of the documents corpus compares
the texts of documents as fsim-verify does, sentence by sentence, whatever
the line breaks a writer or pdftotext put in them.

The rules (the Rust module's doc says why):
* white space is one space; a word broken by a hyphen at a line's end is
  joined when the next line starts with a letter; a hyphen (or soft
  hyphen) between two letters is left out of a word;
* a line ends after a sentence end (`.`, `!`, `?`, `;`, before closing
  quotes and brackets), after a heading (a line of at most 6 words ending
  no sentence and not with a colon, before a capital or a digit), after a word whose FNV-1a 32
  hash is a multiple of 8 once 24 words are on the line, and at 200 words;
* a text with more than 60 words per sentence end (a list, slides, a
  table) keeps its own lines, white space collapsed.

Both suites check one sample against the same digest
(`prose::tests::the_python_mirror_cuts_the_same`, test_truth.py).
"""

MIN_RUN = 24
MAX_RUN = 200
LIST_WORDS = 60
HEADING_WORDS = 6
CUT_ONE_IN = 8
CLOSING = ")]\"'\u2019\u201d\u00bb"


def sentences(text: bytes) -> bytes:
    """The text one sentence a line (not UTF-8: as it is)."""
    try:
        s = text.decode("utf-8")
    except UnicodeDecodeError:
        return text
    words = _words(s)
    ends = sum(1 for w, _ in words if _ends_sentence(w))
    if len(words) > LIST_WORDS * max(ends, 1):
        return _lines(s)
    out, line = [], []
    for word, heading in words:
        line.append(word)
        if (heading or _ends_sentence(word) or len(line) >= MAX_RUN
                or (len(line) >= MIN_RUN and _fnv(word) % CUT_ONE_IN == 0)):
            out.append(" ".join(line) + "\n")
            line = []
    if line:
        out.append(" ".join(line) + "\n")
    return "".join(out).encode("utf-8")


def _split_lines(s):
    """Rust's `str::lines`: split at `\\n`, a `\\r` before it dropped, no
    empty last line."""
    parts = s.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _ws(line):
    """Rust's `split_whitespace` (Unicode White_Space; Python's `split`
    also splits at the separators 0x1c-0x1f, which are not)."""
    out, cur = [], []
    for c in line:
        if c.isspace() and c not in "\x1c\x1d\x1e\x1f":
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(c)
    if cur:
        out.append("".join(cur))
    return out


def _lines(s):
    return "".join(" ".join(ws) + "\n" for ws in map(_ws, _split_lines(s)) if ws).encode("utf-8")


def _ends_sentence(word):
    return word.rstrip(CLOSING).endswith((".", "!", "?", ";"))


def _introduces(word):
    """A word that ends with a colon: a short line that does is no heading."""
    return word.rstrip(CLOSING).endswith(":")


def _fnv(word):
    h = 0x811C9DC5
    for b in word.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def _is_broken(w):
    return len(w) >= 2 and w[-1] in "-\u00ad" and w[-2].isalpha()


def _unhyphenated(w):
    """w without the hyphens between two letters."""
    if "-" not in w and "\u00ad" not in w:
        return w
    return "".join(c for i, c in enumerate(w)
                   if not (c in "-\u00ad" and 0 < i < len(w) - 1 and w[i - 1].isalpha() and w[i + 1].isalpha()))


def _words(s):
    """(word, ends a heading) in order, broken words joined."""
    out, broken, heading = [], None, None
    for line in _split_lines(s):
        ws = _ws(line)
        for n, w in enumerate(ws):
            last = n == len(ws) - 1
            if heading is not None:
                out[heading][1] = w[0].isupper() or w[0] in "0123456789"
                heading = None
            i, broken = broken, None
            w = _unhyphenated(w)
            if i is not None and n == 0 and w[0].isalpha():
                out[i][0] = out[i][0][:-1] + w
                if last and _is_broken(out[i][0]):
                    broken = i
            else:
                out.append([w, False])
                if last and _is_broken(w):
                    broken = len(out) - 1
        if not ws:
            broken = None
        elif len(ws) <= HEADING_WORDS and broken is None and (ws[0][0].isupper() or ws[0][0] in "0123456789"):
            # A heading starts with a capital or a digit (content::prose says why).
            i = len(out) - 1
            heading = None if _ends_sentence(out[i][0]) or _introduces(out[i][0]) else i
    return [(w, h) for w, h in out]



# Whether a text file reads as prose: the mirror of
# `content::prose::reads_as_prose` (src/content/prose.rs says why).
MAX_PROSE_BYTES = 16 << 20
MIN_WORDS = 50
WORD_SHARE = 80
WORDS_PER_END = 40
MAX_CODE_LINES = 5
MAX_INDENTED = 40
MIN_MEDIAN_LINE = 40
OPENING = "\"'([\u2018\u201c\u00ab"
TRAILING = ".,;:!?\"')]\u2019\u201d\u00bb"
INNER = "-'\u2019"
CODE_ENDS = b"{};=<>([\\|"
CODE_STARTS = b"{}<>#@$|"
CODE_PREFIXES = (b"//", b"/*", b".. ", b"```")
NEVER_PROSE = (b'"""', b"'''", b"#!", b'msgid "', b'msgstr "', b'msgctxt "')
ASCII_WS = b" \t\n\x0c\r"


def _letter(c):
    """A letter of a word: an ASCII letter, or any character past ASCII but
    the Latin-1 signs, the multiplication and division signs and the
    general punctuation block (one definition both languages compute
    alike, unlike their Unicode tables)."""
    o = ord(c)
    if o < 0x80:
        return c.isascii() and c.isalpha()
    return not (o < 0xC0 or o in (0xD7, 0xF7) or 0x2000 <= o < 0x2070)


def _is_word(tok):
    w = tok.lstrip(OPENING).rstrip(TRAILING)
    return bool(w) and _letter(w[0]) and all(_letter(c) or c in INNER for c in w)


def _is_code(t):
    """A trimmed line that is code, markup or a table row (a reST `#.`
    item is a list item, not a comment; a line that starts with a link's
    end wrapped from the line before is no tag)."""
    if t.startswith(b"#. ") or (t.startswith(b"<") and b">`" in t.split()[0]):
        return t[-1] in CODE_ENDS
    return (t[-1] in CODE_ENDS or t[0] in CODE_STARTS or t.startswith(CODE_PREFIXES)
            or b"\t" in t
            or (len(t) >= 3 and not any(chr(b).isalnum() or b >= 0x80 for b in t)))


def reads_as_prose(data: bytes) -> bool:
    """Whether a text file is prose, compared as sentences."""
    if len(data) > MAX_PROSE_BYTES or b"\0" in data:
        return False
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    tokens = words = ends = 0
    for line in _split_lines(s):
        for tok in _ws(line):
            tokens += 1
            if _is_word(tok):
                words += 1
                if tok.rstrip(CLOSING).endswith((".", "!", "?")):
                    ends += 1
    if words < MIN_WORDS or words * 100 < tokens * WORD_SHARE or words > ends * WORDS_PER_END:
        return False
    lengths, code, indented = [], 0, 0
    for line in data.split(b"\n"):
        t = line.strip(ASCII_WS)
        if not t:
            continue
        if t.startswith(NEVER_PROSE):
            return False
        lengths.append(len(t))
        code += _is_code(t)
        indented += line[:1] in (b" ", b"\t")
    lengths.sort()
    n = len(lengths)
    return (code * 100 <= n * MAX_CODE_LINES and indented * 100 <= n * MAX_INDENTED
            and lengths[(n - 1) // 2] >= MIN_MEDIAN_LINE)
