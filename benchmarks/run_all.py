"""Run benchmarks and write docs/benchmarks.md.

Usage: ``.venv/bin/python benchmarks/run_all.py [name ...]`` (names: the bench_*.py stems without
``bench_``; default all). Each benchmark module has ``run() -> str`` returning a markdown section
(``## Title`` first) that states its command, its baseline (measured in the same run) and the ratios.
A partial run replaces only its own sections; each section carries the date and machine it ran on.
"""

from __future__ import annotations

import datetime as dt
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _util import machine  # noqa: E402

DOC = HERE.parent / "docs" / "benchmarks.md"
HEADER = (
    "# Benchmarks\n\n"
    "Each section names the command that produced it and when and where it ran; every ratio is\n"
    "against a baseline measured in the same run. Re-run all with `make bench`, or one with\n"
    "`.venv/bin/python benchmarks/run_all.py NAME`.\n"
)


def _sections(text: str) -> dict[str, str]:
    """Existing sections by title (a section runs from its ``## `` line to the next)."""
    out: dict[str, str] = {}
    title = None
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            title = line.strip()
            out[title] = ""
        if title is not None:
            out[title] += line
    return out


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    sections = _sections(DOC.read_text()) if argv and DOC.exists() else {}
    for name in names:
        mod = importlib.import_module(f"bench_{name.removeprefix('bench_')}")
        print(f"== {mod.__name__}", flush=True)
        title, _, body = mod.run().strip().partition("\n")
        stamp = f"\n_Ran {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {machine()}._\n"
        section = f"{title}\n{stamp}{body}\n"
        print(section, flush=True)
        sections[title.strip()] = section
    DOC.write_text(HEADER + "".join("\n" + s.strip() + "\n" for s in sections.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
