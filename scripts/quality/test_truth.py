#!/usr/bin/env python3
"""Known answers for the ground truth of `make quality` (truth.py): the byte
LCS of binary pairs (bytelcs.c), the line LCS of text pairs, and long lines
cut into pieces as fsim-verify cuts them.

    python3 scripts/quality/test_truth.py      (tests/rules/quality_truth.rs runs it)
"""
import hashlib
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htmltext  # noqa: E402
import prose  # noqa: E402
import truth  # noqa: E402


def dp_lcs(a, b):
    """Textbook O(n m) LCS length, the reference."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


class ByteTruth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.exe = truth.bytelcs_exe(cls.dir)
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def files(self, *datas):
        out = []
        for d in datas:
            ByteTruth.n += 1
            p = os.path.join(self.dir, f"f{ByteTruth.n}")
            with open(p, "wb") as fh:
                fh.write(d)
            out.append(p)
        return out

    def lcs(self, a, b):
        return truth.byte_lcs_many(self.exe, [tuple(self.files(a, b))])[0]

    def test_random_against_dp(self):
        # word boundaries of the bit vector (63, 64, 65, 128 ...), small and
        # large alphabets, shared middles (prefix/suffix trimming), empties
        rng = random.Random(17)
        cases = []
        for _ in range(120):
            n = rng.choice([0, 1, 2, 63, 64, 65, 127, 128, 129, 250])
            m = rng.choice([0, 1, 63, 64, 65, 130, 257])
            al = rng.choice([2, 4, 256])
            a = bytes(rng.randrange(al) for _ in range(n))
            b = bytes(rng.randrange(al) for _ in range(m))
            if rng.random() < 0.3:
                b = a[: n // 3] + b + a[n // 2:]
            cases.append((a, b))
        paths = [tuple(self.files(a, b)) for a, b in cases]
        got = truth.byte_lcs_many(self.exe, paths)
        self.assertEqual(got, [dp_lcs(a, b) for a, b in cases])

    def test_byte_inserted_every_200_bytes(self):
        # 100 KB; one byte inserted every 200 bytes: the original is a
        # subsequence of the edited file, so the LCS is the original's size
        rng = random.Random(1)
        a = bytes(rng.randrange(256) for _ in range(100_000))
        b = b"".join(a[i:i + 200] + bytes([rng.randrange(256)]) for i in range(0, len(a), 200))
        self.assertEqual(len(b), 100_500)
        self.assertEqual(self.lcs(a, b), 100_000)
        self.assertEqual(self.lcs(b, a), 100_000)

    def test_replaced_1k_block(self):
        # bytes 0..127 only; 1 KiB in the middle replaced by bytes 128..255,
        # which occur nowhere in the original: the LCS is everything else
        rng = random.Random(2)
        a = bytes(rng.randrange(128) for _ in range(100_000))
        b = a[:50_000] + bytes(128 + rng.randrange(128) for _ in range(1024)) + a[51_024:]
        self.assertEqual(len(b), len(a))
        self.assertEqual(self.lcs(a, b), 100_000 - 1024)

    def test_moved_block(self):
        # a 10 KB block moved from the front to the back (distinct byte
        # values per part, so exactly one of the two orders survives)
        rng = random.Random(3)
        x = bytes(rng.randrange(0, 100) for _ in range(10_000))
        y = bytes(rng.randrange(100, 200) for _ in range(50_000))
        self.assertEqual(self.lcs(x + y, y + x), 50_000)

    def test_exact_binary_and_text(self):
        # exact(): a binary pair is measured in bytes (its own cache file),
        # a text pair by diff's line LCS as before; pairs below the size
        # ratio or the byte-overlap bound are negatives (absent)
        rng = random.Random(4)
        # bytes 0..127; one byte in 100 replaced by one of 128..255 (none
        # of which occurs in the original): the LCS is everything else,
        # while the line truth would count only the unchanged stretches
        # between newlines
        base = bytes(rng.randrange(128) for _ in range(20_000)) + b"\0"
        scattered = bytearray(base)
        for i in range(0, len(scattered) - 1, 100):
            scattered[i] = 128 + rng.randrange(128)
        scattered = bytes(scattered)
        lo = bytes(rng.randrange(0, 100) for _ in range(5000)) + b"\0"
        hi = bytes(rng.randrange(101, 256) for _ in range(5000)) + b"\0"
        small = b"\0" + bytes(100)
        t1 = b"".join(b"line %d\n" % i for i in range(100))
        t2 = t1.replace(b"line 50\n", b"line fifty\n")
        pa, pb, pc, pd, pe, pt1, pt2 = self.files(base, scattered, lo, hi, small, t1, t2)
        binary = set()
        info = {}
        for p in (pa, pb, pc, pd, pe, pt1, pt2):
            d = open(p, "rb").read()
            h = hashlib.md5(d).hexdigest()
            info[p] = (h, len(d))
            if b"\0" in d:
                binary.add(h)
        lines = os.path.join(self.dir, "lines.tsv")
        byts = os.path.join(self.dir, "bytes.tsv")
        pairs = [(pa, pb), (pc, pd), (pa, pe), (pt1, pt2)]
        for attempt in range(2):  # the second answer comes from the caches
            out, st = truth.exact(pairs, info, lines, 1, None, binary, byts)

            def get(a, b):
                k = tuple(sorted((info[a][0], info[b][0])))
                return out.get(k)  # noqa: B023 (called at once)
            self.assertEqual(get(pa, pb), len(base) - 200)
            self.assertIsNone(get(pc, pd))   # no byte value in common: bound 1 (the NULs)
            self.assertIsNone(get(pa, pe))   # size ratio under RATIO_FLOOR
            self.assertEqual(get(pt1, pt2), len(t1) - len(b"line 50\n"))
            if attempt == 0:
                self.assertEqual((st["byte_lcs"], st["byte_bounded"]), (1, 1))
            else:
                self.assertEqual((st.get("byte_lcs", 0), st.get("byte_bounded", 0)), (0, 0))
        # the line cache holds the text pair only
        self.assertEqual(len(open(lines).read().splitlines()), 1)


def long_lines_sample():
    """The sample of src/stages/verify/long_lines.rs (`sample`)."""
    s = b"short line, kept whole;\n"
    for i in range(120):
        s += b'<row n="%d" v="%d">t%d</row>' % (i, i * 7919 % 1000, i % 13)
    s += b"\n"
    for i in range(150):
        s += b"function f%d(a,b){var c=a*%d;return c+b};" % (i, i)
    s += b"Q" * 700 + b"\n"
    for i in range(200):
        s += b'{"id": %d, "name": "n%d"},' % (i, i * 31 % 97)
    return s


class LongLines(unittest.TestCase):
    def test_the_sample_cuts_as_fsim_verify(self):
        # the same count and digest as the Rust test the_sample_cuts_as_the_truth_does
        ends, end = [], 0
        for t in truth.tokens(long_lines_sample()):
            end += len(t)
            ends.append(str(end))
        self.assertEqual(len(ends), 659)
        self.assertEqual(hashlib.md5(",".join(ends).encode()).hexdigest(),
                         "1707404f636ad6de2721e886512e517d")

    def test_short_lines_whole_and_pieces_bounded(self):
        self.assertEqual(truth.tokens(b"a, b;\nc"), [b"a, b;\n", b"c"])
        line = b"x" * (5 * truth.MAX_PIECE + 7)
        self.assertEqual([len(p) for p in truth.pieces(line)], [truth.MAX_PIECE] * 5 + [7])

    def test_one_line_xml_versions(self):
        # one changed attribute of a 16 KB one-line XML: one link at ~99 %,
        # cached as `pieces`; a whole-line figure cached before is not reused
        a = b"".join(b'<item id="%d" name="n%d">text %d</item>' % (i, i * 7 % 13, i)
                     for i in range(450))
        b = a.replace(b'<item id="200" ', b'<item id="200" changed="1" ')
        with tempfile.TemporaryDirectory() as d:
            pa, pb = os.path.join(d, "a.xml"), os.path.join(d, "b.xml")
            for p, x in ((pa, a), (pb, b)):
                with open(p, "wb") as fh:
                    fh.write(x)
            info = {p: (hashlib.md5(x).hexdigest(), len(x)) for p, x in ((pa, a), (pb, b))}
            key = tuple(sorted(v[0] for v in info.values()))
            cache = os.path.join(d, "cache.tsv")
            with open(cache, "w") as fh:
                fh.write(f"{key[0]}\t{key[1]}\t0\tdiff\n")
            out, st = truth.exact([(pa, pb)], info, cache, 1)
            self.assertEqual(st["diffed"], 1)
            self.assertGreater(out[key], 0.99 * len(b))
            self.assertLess(out[key], len(a))
            with open(cache) as fh:
                self.assertIn("\tpieces\n", fh.read())
            out, st = truth.exact([(pa, pb)], info, cache, 1)
            self.assertEqual(st["diffed"], 0)
            self.assertGreater(out[key], 0.99 * len(b))


class Prose(unittest.TestCase):
    def test_the_same_cut_as_fsims_content_prose(self):
        # src/content/prose.rs checks the same digest of the same sample.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        sample = os.path.join(root, "tests", "data", "documents", "prose-sample.txt")
        out = prose.sentences(open(sample, "rb").read())
        self.assertEqual((hashlib.md5(out).hexdigest(), len(out)),
                         ("34204af7c53629c1351f9ccf2c0860f6", 16167))

    def test_a_short_line_ending_with_a_colon_is_no_heading(self):
        # The cases of src/content/prose.rs's
        # a_short_line_ending_with_a_colon_is_no_heading and lists_keep_their_lines.
        want = b"Before you commit, run the checker, for example: To edit this page, rebuild it.\n"
        self.assertEqual(prose.sentences(b"Before you commit, run the checker, for example:\n"
                                         b"To edit this page, rebuild it.\n"), want)
        self.assertEqual(prose.sentences(b"Before you commit, run the checker, for\nexample:\n"
                                         b"To edit this page,\nrebuild it.\n"), want)
        items = "".join(f"item {i}:  minutes of the meeting, decided\n" for i in range(20)).encode()
        self.assertEqual(prose.sentences(items), items.replace(b":  ", b": "))

    def test_wraps_and_hyphens_do_not_change_the_sentences(self):
        docx = b"Terms\nThe contract starts on Monday. Payment is due within thirty days!\nIs it signed? Yes.\n"
        pdf = b"Terms\nThe contract starts\non Monday. Pay-\nment is due within\n  thirty   days!\nIs it\nsigned? Yes."
        want = b"Terms\nThe contract starts on Monday.\nPayment is due within thirty days!\nIs it signed?\nYes.\n"
        self.assertEqual(prose.sentences(docx), want)
        self.assertEqual(prose.sentences(pdf), want)

    def test_the_same_files_read_as_prose_as_for_fsim(self):
        # content::plaintext's tests check the same list.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        data = os.path.join(root, "tests", "data")
        kinds = set()
        with open(os.path.join(data, "prose-rule", "expected.tsv")) as fh:
            for line in fh:
                if line.startswith("#"):
                    continue
                name, what = line.rstrip("\n").split("\t")
                with open(os.path.join(data, name), "rb") as f:
                    self.assertEqual(prose.reads_as_prose(f.read()), what == "prose", name)
                kinds.add(what)
        self.assertEqual(kinds, {"prose", "raw"})


class HtmlText(unittest.TestCase):
    def test_the_sample_page_reads_as_fsims_content_html(self):
        # src/content/html.rs checks the same digests of the same page.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        page = open(os.path.join(root, "tests", "data", "documents", "page.html"), "rb").read()
        self.assertFalse(htmltext.is_document(page))  # it runs a script
        text = htmltext.text(page)
        view = prose.sentences(text)
        self.assertEqual((hashlib.md5(text).hexdigest(), len(text)), ("ce6a4840dd14754960baadc4d2427f6d", 353))
        self.assertEqual((hashlib.md5(view).hexdigest(), len(view)), ("5bd1ba1f870b3f7887abc5f33ed7f11b", 353))

    def test_a_page_is_read_in_its_charset(self):
        # The cases of src/content/html.rs's a_page_is_read_in_its_charset.
        def text_of(page):
            return htmltext.text(htmltext.decoded(page)).decode()
        self.assertEqual(text_of(b"<html><head><meta http-equiv=Content-Type content=\"text/html; "
                                 b"charset=windows-1252\"></head><body><p>Don\x92t pay \x80 5.</p>"),
                         "Don\u2019t pay \u20ac 5.\n")
        self.assertEqual(text_of(b"<html><body><p>Don\x92t.</p>"), "Don\u2019t.\n")
        self.assertEqual(text_of(b"<html><head><meta charset='iso-8859-15'></head><p>\xa4 caf\xe9</p>"),
                         "\u20ac caf\u00e9\n")
        self.assertEqual(text_of("<html><p>caf\u00e9 \u2019</p>".encode()), "caf\u00e9 \u2019\n")

    def test_documents_site_pages_and_templates(self):
        # The cases of src/content/html.rs's tests.
        for page in [b"<!DOCTYPE html>\n<html><head><style>p{margin:0}</style></head><body><p>Hi.</p>",
                     b"\xef\xbb\xbf  <!-- saved -->\n<HTML lang=en><BODY>Hi.",
                     b"<html xmlns:o=\"urn:x\">\n<head><link rel=File-List href=\"l_files/filelist.xml\">",
                     b"<!DOCTYPE html><html><body><p>Write {{ name }} to print it.</p><p>{{ x }} and a word.</p>"]:
            self.assertTrue(htmltext.is_document(page), page)
        for page in [b"<!DOCTYPE html>\n<html><head><link rel=\"stylesheet\" href=\"_static/basic.css\">",
                     b"<!DOCTYPE html><html><head><script type=\"text/javascript\" src=\"../script.js\">",
                     b"<!doctype html><html><head><script>var x = 1;</script></head>",
                     b"<!DOCTYPE html><html><body>{{ user.name }}", b"<p>A fragment.</p>", b"<htmlx>",
                     b"<!DOCTYPE html><html><body><p>\n  {% csrf_token %}\n  {{ form }} </p>",
                     b"<!DOCTYPE html><html><body><a href=\"{% url 'home' %}\">Home</a>",
                     b"<!-- never closed <html>", b""]:
            self.assertFalse(htmltext.is_document(page), page)


if __name__ == "__main__":
    unittest.main()
