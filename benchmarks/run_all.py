"""Run every benchmark and write docs/benchmarks.md.

Usage: ``.venv/bin/python benchmarks/run_all.py [name ...]`` (names: the bench_*.py stems; default all).
Each benchmark module has ``run() -> str`` returning a markdown section that states its command,
its baseline (measured in the same run) and the ratios against it.
"""

from __future__ import annotations

import datetime as dt
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import machine  # noqa: E402


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem for p in HERE.glob("bench_*.py"))
    sections = []
    for name in names:
        mod = importlib.import_module(name if name.startswith("bench_") else f"bench_{name}")
        print(f"== {mod.__name__}", flush=True)
        section = mod.run()
        print(section, flush=True)
        sections.append(section)
    doc = HERE.parent / "docs" / "benchmarks.md"
    header = (
        "# Benchmarks\n\n"
        f"Latest run: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {machine()}.\n"
        "Each section names the command that produced it; every ratio is against a baseline measured\n"
        "in the same run. Re-run all with `make bench` (or `.venv/bin/python benchmarks/run_all.py`).\n\n"
    )
    if argv and doc.exists():  # partial run: replace only the sections that ran
        old = doc.read_text()
        parts = {s.split("\n", 1)[0]: s for s in old.split("\n## ")[1:]}
        for s in sections:
            parts[s.removeprefix("## ").split("\n", 1)[0]] = s.removeprefix("## ")
        body = "\n## ".join(["", *parts.values()]).lstrip("\n")
        doc.write_text(header + body.rstrip() + "\n")
    else:
        doc.write_text(header + "\n\n".join(sections).rstrip() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
