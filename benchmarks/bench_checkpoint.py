"""Peak memory of a load resumed from a large checkpoint, against the same load uninterrupted.

A synthetic load of ``RF_BENCH_CHECKPOINT_MB`` (default 700, the issue's size; a comma-separated
list measures each size, e.g. ``200,700``) MB of answers: 200 KB pages of 100
listings each (JSON), generated deterministically. It goes through the cache's checkpoint API
exactly as a loader does: *uninterrupted*, each page is made, saved (``Checkpoint.put``), parsed
and its ids and prices kept, then the checkpoint is removed (``done``); *resumed*, a checkpoint
holding every page (written by an earlier run that was killed before storing) is opened and each
page is taken from it (``Checkpoint.get``), parsed and kept the same way. Each runs in a fresh
Python process that imports realtyframes, resets the kernel's high-water mark of its resident
memory (``/proc/self/clear_refs``) and then loads: *peak* is VmHWM, *held* is VmHWM minus the
resident memory just before the load. ``RF_BENCH_OLD_SRC`` (a ``src`` folder of an older
realtyframes, e.g. a worktree of main before #33) runs the same loads against that code too: its
checkpoint was a journal file read whole on resume.
Command: ``.venv/bin/python benchmarks/run_all.py checkpoint``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from typing import Any

from _util import table

SIZES = [int(mb) for mb in os.environ.get("RF_BENCH_CHECKPOINT_MB", "700").split(",")]
PAGE_LISTINGS = 100
GOAL = 1.5

_CHILD = textwrap.dedent(
    """
    import json, random, sys
    from realtyframes.cache import ParquetCache

    def status(name):
        for line in open("/proc/self/status"):
            if line.startswith(name + ":"):
                return int(line.split()[1]) * 1024

    root, mode, pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
    scope = {"host": "https://bench", "params": {"City": "Miami"}}
    key = "0" * 32

    def page(n):
        rng = random.Random(n)
        rows = [{"ListingId": f"L{n:05d}{i:03d}", "ListPrice": rng.randint(100_000, 5_000_000),
                 "PublicRemarks": "".join(rng.choices("abcdefghij ", k=1900))}
                for i in range(100)]
        return json.dumps({"total": pages * 100, "value": rows}).encode()

    cache = ParquetCache(root)
    if mode == "save":  # an earlier run, killed before it stored the load
        cp = cache.checkpoint("listings", key, scope)
        for n in range(pages):
            cp.put(f"/v1/listings?Offset={n * 100}", page(n))
        cp.close()
        sys.exit(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = status("VmRSS")
    cp = cache.checkpoint("listings", key, scope)
    ids, prices = [], []
    for n in range(pages):
        name = f"/v1/listings?Offset={n * 100}"
        body = cp.get(name) if mode == "resumed" else None
        if body is None:
            body = page(n)
            cp.put(name, body)
        rows = json.loads(body)["value"]
        ids += [r["ListingId"] for r in rows]
        prices += [r["ListPrice"] for r in rows]
    reused = cp.reused
    cp.done()
    print(json.dumps({"before": before, "peak": status("VmHWM"), "rows": len(ids),
                      "reused": reused}))
    """
)


def _measure(mode: str, root: str, pages: int, src: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, root, mode, str(pages)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout) if done.stdout.strip() else {}


def _loads(src: str | None, pages: int) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="rf-bench-checkpoint-") as tmp:
        found = {"uninterrupted": _measure("uninterrupted", f"{tmp}/a", pages, src)}
        _measure("save", f"{tmp}/b", pages, src)
        found["resumed"] = _measure("resumed", f"{tmp}/b", pages, src)
    if found["resumed"]["reused"] != pages or found["resumed"]["rows"] != pages * PAGE_LISTINGS:
        raise RuntimeError(f"the resumed load did not take every page from the checkpoint: {found}")
    return found


def run() -> str:
    codes = {"this version (SQLite)": None}
    if os.environ.get("RF_BENCH_OLD_SRC"):
        codes["before #33 (journal)"] = os.environ["RF_BENCH_OLD_SRC"]
    rows = []
    for mb in SIZES:
        pages = mb * 1024 * 1024 // (200 * 1024)
        for label, src in codes.items():
            started = time.perf_counter()
            got = _loads(src, pages)
            took = time.perf_counter() - started
            base, resumed = got["uninterrupted"], got["resumed"]
            held = {k: (v["peak"] - v["before"]) / 2**20 for k, v in got.items()}
            rows.append(
                [
                    f"{mb:,} MB ({pages:,} answers, {pages * PAGE_LISTINGS:,} listings)",
                    label,
                    f"{base['peak'] / 2**20:,.0f} MB ({held['uninterrupted']:,.0f} held)",
                    f"{resumed['peak'] / 2**20:,.0f} MB ({held['resumed']:,.0f} held)",
                    f"**{resumed['peak'] / base['peak']:.2f}x**",
                    f"{held['resumed'] / held['uninterrupted']:.2f}x",
                    f"{took / 60:.1f} min",
                ]
            )
    sizes = " and ".join(f"{mb:,} MB" for mb in SIZES)
    return "\n".join(
        [
            "## Resume from a large checkpoint: peak memory",
            "",
            "Command: `RF_BENCH_CHECKPOINT_MB="
            + ",".join(map(str, SIZES))
            + " .venv/bin/python benchmarks/run_all.py checkpoint`. "
            f"Checkpoints of {sizes} of answers (200 KB each, 100 synthetic listings an answer) "
            "through the checkpoint API as a loader uses it; each load in a fresh process, peak = "
            "VmHWM, held = VmHWM minus the resident memory just before the load. Goal (#33): the "
            f"resumed load peaks under {GOAL}x the uninterrupted one (at 700 MB). Load average at "
            f"the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}.",
            "",
            table(
                [
                    "checkpoint",
                    "code",
                    "uninterrupted: peak",
                    "resumed: peak",
                    "resumed / uninterrupted (peak)",
                    "(held)",
                    "time (3 processes: load, save, resume)",
                ],
                rows,
            ),
            "",
            "The state database serves one answer per `get` (a point query): a resume holds one "
            "page at a time, as the uninterrupted load does, whatever the checkpoint's size. What "
            "grows with the size in both columns alike is the load's own result (the ids and "
            "prices this synthetic load keeps: 3.5x as many listings at 700 MB as at 200 MB), not "
            "the checkpoint. "
            "The journal of 0.8 was read whole into memory to find its records, so its resume "
            "held every saved answer at once (2.43x at 200 MB; the issue measured 844 MB RSS "
            "against 169 MB at 700 MB).",
        ]
    )


if __name__ == "__main__":
    print(run())
