"""Small shared helpers for the benchmarks: timing, percentiles, markdown output."""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    """Wall-clock seconds of ``repeat`` calls of ``fn``."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of values, nearest-rank."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(q / 100 * (len(s) - 1))))
    return s[k]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def machine() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


@contextmanager
def sandbox_process(*options: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``realtyframes sandbox --port 0 *options`` in its own process (its CPU and memory not
    counted with ours) -> (its base URL, the process); stopped on exit."""
    command = [sys.executable, "-m", "realtyframes.cli", "sandbox", "--port", "0", *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"serving (\S+)", line)
        if found is None:
            raise RuntimeError(f"the sandbox did not start: {line!r}")
        yield found.group(1), process
    finally:
        process.terminate()
        process.wait(timeout=30)
