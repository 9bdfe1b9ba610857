"""Run a load in a child process and SIGKILL it after a given number of requests, with its last
requests in flight: the resume tests of both sources (tests/loaders/test_resume.py,
tests/reso/test_reso_resume.py).

The child's request hook lets the first ``sent`` requests go (each counted in a file and told on
stdout as ``r``); the next one says ``w`` and waits forever, so the parent kills the process once
a worker is free again (the earlier answers have arrived) without a sleep or a clock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

_HOOK = """
import os, sys, threading
import realtyframes as rf
counted, stop, *args = sys.argv[1:]
fd = os.open(counted, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
lock, sent = threading.Lock(), [0]

def hook(request):
    with lock:
        go = sent[0] < int(stop)
        if go:
            sent[0] += 1
            os.write(fd, b"r")
        os.write(1, b"r" if go else b"w")
    if not go:
        threading.Event().wait()
"""


def run_and_kill(load: str, counted: Path, sent: int, *args: str) -> int:
    """Run ``load`` (Python text using ``args`` and ``hook``, the request hook to install) in a
    process; SIGKILL it once it has sent ``sent`` requests and the next one waits; return the
    requests it sent (counted in the file ``counted``)."""
    paths = [str(SRC), os.environ.get("PYTHONPATH", "")]
    child = subprocess.Popen(
        [sys.executable, "-c", _HOOK + load, str(counted), str(sent), *args],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None  # a byte per request: block until one past `sent` waits
        told = child.stdout.read(sent + 1)
        assert told == b"r" * sent + b"w", "the load ended before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.communicate()
    assert child.returncode == -signal.SIGKILL
    return counted.stat().st_size
