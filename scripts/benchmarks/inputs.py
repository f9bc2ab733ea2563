"""The inputs the sections measure on: generated trees and files, kept in
$BENCH between runs (remade when the options they were made with change),
and the trees cut from make quality's corpus."""

import hashlib
import os
import shutil
import subprocess

from .measure import sh


def stamp(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def cached(tree, key, make):
    """TREE as made by MAKE(), remade unless TREE.done holds KEY."""
    done = tree + ".done"
    if stamp(done) != key:
        sh(f"rm -rf {tree} {done}")
        make()
        with open(done, "w", encoding="utf-8") as f:
            f.write(key + "\n")
    return tree


def gen(bench, opts, tree, quiet=False):
    """fsim-gen OPTS TREE."""
    sh(f"{bench.b}/fsim-gen {opts} {tree}", quiet=quiet)


def bulk_tree(bench, cfg):
    """The main tree: FILES text documents of ~SIZE bytes in 300 folders."""
    t = os.path.join(bench.w, "tree")
    # The stamp is tree.done next to the tree, as before.
    return cached(t, f"{cfg.files} {cfg.size}",
                  lambda: gen(bench, f"--bulk {cfg.files} --bulk-size {cfg.size} --bulk-dirs 300", t))


def big_file(bench, cfg, tree):
    """One file of BIG_MB MiB, text-like: the tree's documents concatenated."""
    big = os.path.join(bench.w, "big.txt")
    want = cfg.big_mb * 1048576
    if not os.path.isfile(big) or os.path.getsize(big) < cfg.big_mb * 1000000:
        open(big, "wb").close()
        while os.path.getsize(big) < want:
            sh(f"find {tree} -type f -name 'f00*' -print0 | sort -z | xargs -0 cat >> {big}")
        os.truncate(big, want)
    return big


def hard_tree(bench, key, opts):
    t = os.path.join(bench.w, f"hard-{key}")
    return cached(t, opts, lambda: gen(bench, opts, t))


def folders_tree(bench, cfg):
    t = os.path.join(bench.w, "folders-tree")
    opts = f"--catalogs {cfg.cat_locales} --catalog-releases {cfg.cat_releases}"
    return cached(t, f"{cfg.cat_locales} {cfg.cat_releases}", lambda: gen(bench, opts, t, quiet=True))


def gen_folders(bench, cfg):
    g = os.path.join(bench.w, f"gen-folders-{cfg.folders_files}-{cfg.folders_releases}")
    if not os.path.isfile(os.path.join(g, "verified.tsv")):
        sh(f"{bench.b}/examples/gen_folders {cfg.folders_files} {cfg.folders_releases} {g} 2>/dev/null")
    return g


def gen_pairs(bench, links):
    g = os.path.join(bench.w, f"gen-pairs-{links}")
    if not os.path.isfile(os.path.join(g, "verified.tsv")):
        sh(f"{bench.b}/examples/gen_pairs {links // 10} {links} {g} 2>/dev/null")
    return g


def documents_tree(bench, cfg):
    """The documents corpus of make quality, by scripts/quality/documents.py
    (the quality venv's python), remade when that script changes."""
    t = os.path.join(bench.w, "documents")
    with open("scripts/quality/documents.py", "rb") as f:
        key = hashlib.md5(f.read()).hexdigest()
    py = os.path.join(cfg.qdir, "venv", "bin", "python")
    env = dict(os.environ, QDIR=cfg.qdir)
    return cached(t, key, lambda: subprocess.run(
        [py, "scripts/quality/documents.py", "generate", t], check=True, env=env))


def link_copy(src, to):
    """SRC into folder TO as hard links (a copy across file systems)."""
    if sh(f"cp -al {src} {to}/ 2>/dev/null", check=False) != 0:
        sh(f"cp -a {src} {to}/")


def source_trees(bench, cfg):
    """Django + moment (whole, its locale folders, the rest) and bash from
    make quality's corpus, as folders of $BENCH."""
    w, corpus = bench.w, os.path.join(bench.w, "source-dm")
    dirs = {k: os.path.join(w, f"source-{k}") for k in ("rest", "locale", "bash")}
    for d in [corpus] + list(dirs.values()):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    allc = os.path.join(cfg.qdir, "corpus")
    for d in sorted(os.listdir(allc)):
        if os.path.isdir(os.path.join(allc, d)):
            link_copy(os.path.join(allc, d), dirs["bash"] if d.startswith("bash-") else corpus)
    sel = {"rest": "! -path '*/locale/*' ! -name '*.po' ! -name '*.mo'",
           "locale": "\\( -path '*/locale/*' -o -name '*.po' -o -name '*.mo' \\)"}
    for k, expr in sel.items():
        sh(f"(cd {corpus} && find . -type f {expr} -print0 | tar --null -T - -cf -) | tar -xf - -C {dirs[k]}")
    return {"whole": corpus, **dirs}


def release_trees(bench, releases):
    """RELEASES_TREE split: its top folders *-html (the built docs) and the
    others (the sources), as hard links."""
    src, html = os.path.join(bench.w, "releases-src"), os.path.join(bench.w, "releases-html")
    for d in (src, html):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for d in sorted(os.listdir(releases)):
        p = os.path.join(releases, d)
        if os.path.isdir(p):
            link_copy(p, html if d.endswith("-html") else src)
    return src, html


def scale_tree(bench, cfg, n):
    """N bulk files of ~SIZE bytes in 300 folders (the scale rows)."""
    opts = f"--bulk {n} --bulk-size {cfg.size} --bulk-dirs 300"
    d = os.path.join(bench.w, f"scale-{n}")
    return cached(d, opts, lambda: gen(bench, opts, d, quiet=True))


def overlap_tree(bench, cfg):
    """OVL_FILES overlapping extracts of one body (the overlap rows)."""
    opts = f"--overlap {cfg.ovl_files} --bulk-size {cfg.size} --bulk-dirs 300"
    d = os.path.join(bench.w, f"overlap-{cfg.ovl_files}")
    return cached(d, opts, lambda: gen(bench, opts, d, quiet=True))


def outofcore_opts(cfg):
    return f"--bulk {cfg.ooc_files} --bulk-size {cfg.size} --bulk-dirs 300"


def outofcore_tree(bench, cfg):
    """OOC_FILES bulk files of ~SIZE bytes in 300 folders (the out-of-core run)."""
    opts = outofcore_opts(cfg)
    d = os.path.join(bench.w, f"outofcore-{cfg.ooc_files}")
    return cached(d, opts, lambda: gen(bench, opts, d, quiet=True))
