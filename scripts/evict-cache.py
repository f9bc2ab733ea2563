#!/usr/bin/env python3
"""Evict the files under each FOLDER from the page cache, as if the machine
had never read them: `posix_fadvise(DONTNEED)` on every regular file
(symlinks not followed), after a `sync` so that no page is dirty.

Needs no root, unlike `echo 3 > /proc/sys/vm/drop_caches`, and leaves the
rest of the cache (the programs, their libraries) as it was: the state of a
share larger than memory, where the repository and the earlier work folder
are on disk and everything else is not. docs/performance.md, "A tree
outside the page cache", measures runs after it:

    python3 scripts/evict-cache.py REPO [EARLIER_WORK ...]
"""

import os
import sys


def evict(root):
    """Evicts every regular file under ROOT; the number evicted."""
    n = 0
    for d, _, names in os.walk(root):
        for name in names:
            try:
                fd = os.open(os.path.join(d, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            except OSError:
                pass  # a FIFO or a device: no pages to evict
            finally:
                os.close(fd)
    return n


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: evict-cache.py FOLDER...")
    os.sync()
    for root in sys.argv[1:]:
        if not os.path.isdir(root):
            sys.exit(f"evict-cache.py: {root}: not a folder")
        print(f"{root}: {evict(root)} files evicted", file=sys.stderr)


if __name__ == "__main__":
    main()
