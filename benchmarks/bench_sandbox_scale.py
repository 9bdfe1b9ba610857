"""Sandbox at scale: start-up and filtered search latency at 1,000,000 listings.

Goals (issue 12, "a million-listing market"): the embedded sandbox at 1,000,000 listings starts
in <= 8 s on a 2-core machine, and a filtered search page there has p50 under 20 ms.
Start-up = ``serve(listings=N)`` until its URL is yielded (the data generated, the server
listening), each run in a fresh interpreter (median of 3); the interpreter's start and the imports
are shown apart. Baselines measured in the same run: start-up at 200,000 listings (the size of
``bench_sandbox``), and for the search the index document (``GET /v1``) on the same server, i.e.
the bare HTTP round trip. The queries are bench_sandbox's.
Command: ``.venv/bin/python benchmarks/run_all.py sandbox_scale``
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from _util import ms, pct, table
from bench_sandbox import AS_OF, QUERIES, REPEAT

N = 1_000_000
BASE_N = 200_000
RUNS = 3
STARTUP_GOAL = 8.0  # seconds, at N
SEARCH_GOAL = 0.020  # seconds, search p50 at N

#: What one fresh interpreter runs: start a sandbox of argv[1] listings, time it (and the search
#: if argv[2] is "search"), print one JSON line.
_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import httpx
from datetime import datetime
from realtyframes.sandbox import serve
sys.path.insert(0, sys.argv[3])
from bench_sandbox import QUERIES, REPEAT
from _util import timed
n, search = int(sys.argv[1]), sys.argv[2] == "search"
as_of = datetime.fromisoformat(sys.argv[4])
t1 = time.perf_counter()
out = {"imports": t1 - t0}
with serve(listings=n, seed=7, as_of=as_of) as url:
    out["startup"] = time.perf_counter() - t1
    if search:
        with httpx.Client(base_url=url, timeout=60) as http:
            t = time.perf_counter()
            http.get("/v1/listings", params=QUERIES[0]).raise_for_status()
            out["first_search"] = time.perf_counter() - t
            http.get("/v1").raise_for_status()
            out["base"] = timed(lambda: http.get("/v1").raise_for_status(), REPEAT * 2)
            lat = []
            for q in QUERIES:
                http.get("/v1/listings", params=q).raise_for_status()
                lat += timed(
                    lambda q=q: http.get("/v1/listings", params=q).raise_for_status(), REPEAT
                )
            out["search"] = lat
print(json.dumps(out))
"""


@dataclass
class Run:
    """One fresh interpreter's timings (seconds); the search lists only in a run that timed it."""

    imports: float
    startup: float
    process: float  # spawn to exit
    first_search: float = 0.0
    base: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)


def _child(n: int, search: bool) -> Run:
    argv = [
        sys.executable,
        "-c",
        _CHILD,
        str(n),
        "search" if search else "startup",
        str(Path(__file__).resolve().parent),
        AS_OF.isoformat(),
    ]
    t0 = time.perf_counter()
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    process = time.perf_counter() - t0
    return Run(process=process, **json.loads(done.stdout.strip().splitlines()[-1]))


def _startups(n: int) -> list[Run]:
    """RUNS fresh-interpreter start-ups of n listings; the first also times the search."""
    return [_child(n, search=i == 0) for i in range(RUNS)]


def run() -> str:
    sizes = {BASE_N: _startups(BASE_N), N: _startups(N)}
    base_startup = statistics.median(r.startup for r in sizes[BASE_N])
    startup_rows = []
    search_rows = []
    for n, runs in sizes.items():
        startup = statistics.median(r.startup for r in runs)
        startup_rows.append(
            [
                f"{n:,}",
                f"{startup:.2f} s",
                ", ".join(f"{r.startup:.2f}" for r in runs),
                f"{statistics.median(r.imports for r in runs):.2f} s",
                f"{statistics.median(r.process for r in runs):.2f} s",
                "baseline" if n == BASE_N else f"{startup / base_startup:.2f}x",
            ]
        )
        first = runs[0]
        search_rows.append(
            [
                f"{n:,}",
                ms(pct(first.base, 50)),
                ms(pct(first.search, 50)),
                ms(pct(first.search, 95)),
                f"{pct(first.search, 50) / pct(first.base, 50):.1f}x",
                ms(first.first_search),
            ]
        )
    startup_n = statistics.median(r.startup for r in sizes[N])
    search_n = pct(sizes[N][0].search, 50)
    startup_ok = startup_n <= STARTUP_GOAL
    search_ok = search_n < SEARCH_GOAL
    return "\n".join(
        [
            "## Sandbox at 1,000,000 listings: start-up and filtered search",
            "",
            "Command: `.venv/bin/python benchmarks/run_all.py sandbox_scale`. Start-up = "
            f"`serve(listings=N, seed=7)` until its URL is yielded (data generated, server "
            f"listening), each run in a fresh interpreter, median of {RUNS}; imports = "
            "`httpx` and `realtyframes.sandbox` before it; process = the whole child, "
            "interpreter start to exit. Baseline for start-up: 200,000 listings in the same run. "
            f"Search: bench_sandbox's {len(QUERIES)} filtered queries x {REPEAT} requests over one "
            "keep-alive connection (after one warm-up request each) in the first run; baseline = "
            "`GET /v1` on the same server. First search = the first request of the server "
            "(its sort order is computed then). "
            f"Goals: start-up <= {STARTUP_GOAL:g} s and search p50 < {SEARCH_GOAL * 1000:g} ms "
            f"at {N:,} listings.",
            "",
            table(
                [
                    "listings",
                    "start-up (median)",
                    "runs (s)",
                    "imports",
                    "process",
                    "vs 200,000",
                ],
                startup_rows,
            ),
            "",
            table(
                [
                    "listings",
                    "baseline p50 (`GET /v1`)",
                    "search p50",
                    "search p95",
                    "search / baseline",
                    "first search",
                ],
                search_rows,
            ),
            "",
            f"Start-up at {N:,}: {startup_n:.2f} s, goal <= {STARTUP_GOAL:g} s "
            f"{'met' if startup_ok else '**missed**'}. Search p50 at {N:,}: "
            f"{search_n * 1000:.1f} ms, goal < {SEARCH_GOAL * 1000:g} ms "
            f"{'met' if search_ok else '**missed**'}. Load average at the end: "
            + ", ".join(f"{x:.1f}" for x in os.getloadavg())
            + " (the machine may be shared with other work: runs vary).",
        ]
    )


if __name__ == "__main__":
    print(run())
