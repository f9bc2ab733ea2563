"""fsim's record files as lines, text or zstd: `make report` keeps the
chunk records, sorted records, partition, bins, pairs and verified pairs
zstd-compressed by default (COMPRESS=1), still lines after `zstd -dc`."""

import subprocess

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def compressed(path):
    """Whether a record file is zstd (`make report`'s default, COMPRESS=1)."""
    with open(path, "rb") as fh:
        return fh.read(4) == ZSTD_MAGIC


def record_lines(path):
    """The lines of a record file, text or zstd (through `zstd -dc`)."""
    if not compressed(path):
        with open(path) as fh:
            yield from fh
        return
    p = subprocess.Popen(["zstd", "-dcq", path], stdout=subprocess.PIPE, text=True)
    yield from p.stdout
    if p.wait() != 0:
        raise SystemExit(f"{path}: zstd -dc failed ({p.returncode})")
