"""One process measured whole: wall time, user and system CPU (wait4's
rusage, its descendants included), peak RSS (/usr/bin/time's, the
largest of the process and its descendants) and bytes read and written
(/proc/PID/io, read while the process is a zombie: rchar/wchar at the
system calls, read_bytes/write_bytes at the block layer, its reaped
descendants included). Also the stage wrapper of the out-of-core run:

    python3 proc.py LOG NAME PROGRAM ARGS...

runs PROGRAM ARGS, appends one JSON line (NAME, the arguments and the
figures above) to LOG and exits with PROGRAM's status. Standard library
only, no import of the package: it runs as a script inside the measured
memory group."""

import json
import os
import signal
import sys
import tempfile
import time

IO_FIELDS = ("rchar", "wchar", "read_bytes", "write_bytes")


def proc_io(pid):
    """The byte counters of /proc/PID/io, or {} where the file is missing."""
    try:
        with open(f"/proc/{pid}/io", encoding="ascii") as f:
            pairs = (line.split(":") for line in f if ":" in line)
            return {k.strip(): int(v) for k, v in pairs if k.strip() in IO_FIELDS}
    except OSError:
        return {}


def status_of(st):
    """(exit code, signal or 0) of a wait status."""
    if os.WIFSIGNALED(st):
        return 128 + os.WTERMSIG(st), os.WTERMSIG(st)
    return os.WEXITSTATUS(st), 0


def run_measured(args, stdout=None, stderr=None, env=None):
    """Runs ARGS (a list, PATH searched) to its end: a dict of its wall,
    user and sys seconds, peak RSS (KiB), I/O counters, exit status and
    killing signal. STDOUT and STDERR: None (inherited) or a file. The
    peak RSS is /usr/bin/time's: a process started from Python inherits
    Python's high-water mark in its rusage (exec keeps it), one started
    by time only time's few hundred KiB, as in the other sections."""
    fd, rss_file = tempfile.mkstemp(prefix="fsim-bench-rss.")
    os.close(fd)
    try:
        d = spawn_wait(["/usr/bin/time", "-f", "%M", "-o", rss_file, "--"] + list(args), stdout, stderr, env)
        with open(rss_file, encoding="ascii", errors="replace") as f:
            lines = f.read().strip().split("\n")
        d["rss_kib"] = int(lines[-1]) if lines[-1].isdigit() else None
        # time exits with 128 + N for a program killed by signal N, and says so.
        for line in lines:
            if line.startswith("Command terminated by signal "):
                d["signal"] = int(line.split()[-1])
    finally:
        os.remove(rss_file)
    return d


def spawn_wait(args, stdout, stderr, env):
    """run_measured's figures but the peak RSS (the rusage's, inherited)."""
    fa = []
    if stdout is not None:
        fa.append((os.POSIX_SPAWN_DUP2, stdout.fileno(), 1))
    if stderr is not None:
        fa.append((os.POSIX_SPAWN_DUP2, stderr.fileno(), 2))
    t0 = time.monotonic()
    # The signals Python ignores (SIGPIPE, and SIGINT in the wrapper) at
    # their default in the program, as subprocess leaves them.
    pid = os.posix_spawnp(args[0], args, os.environ if env is None else env, file_actions=fa,
                          setsigdef=(signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ))
    # Waited for without reaping: its /proc/PID/io stays readable.
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    wall = time.monotonic() - t0
    io = proc_io(pid)
    _, st, ru = os.wait4(pid, 0)
    status, sig = status_of(st)
    d = {"wall": round(wall, 3), "user": round(ru.ru_utime, 3), "sys": round(ru.ru_stime, 3),
         "status": status, "signal": sig}
    d.update({k: io.get(k) for k in IO_FIELDS})
    return d


def wrap_main(argv):
    """The wrapper: LOG NAME PROGRAM ARGS... (see the module's text)."""
    log, name, prog, args = argv[0], argv[1], argv[2], argv[3:]
    # An interrupt reaches the stage (same process group); the wrapper
    # waits for it to end and logs what it did.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    d = run_measured([prog] + args)
    d = dict({"stage": name, "args": args}, **d)
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(d) + "\n")
    return d["status"]


if __name__ == "__main__":
    sys.exit(wrap_main(sys.argv[1:]))
