"""One command timed as a whole process: wall seconds from its start to its exit, and its own CPU
time and peak RSS as the kernel accounts them to the finished child (``os.wait4``). Output goes to
temporary files, so a command that writes a lot never blocks on a pipe."""
import os
import subprocess
import tempfile
import time
from collections import namedtuple

Run = namedtuple("Run", "seconds cpu rss_mb stdout stderr")


def run_process(cmd, env=None):
    """The ``Run`` of one execution of ``cmd`` (a list; items are turned into strings); exits with
    the command's stderr when it fails."""
    cmd = [str(c) for c in cmd]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed ({os.waitstatus_to_exitcode(status)}): {' '.join(cmd)}\n{stderr[-4000:]}")
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout, stderr)
