"""Run benchmarks and update their sections of docs/benchmarks.md.

Usage: ``.venv/bin/python benchmarks/run_all.py [name ...]`` (names: the bench_*.py stems without
``bench_``; default all). Each benchmark module has ``run() -> str`` returning a markdown section
(``## Title`` first) that states its command, its baseline (measured in the same run) and the ratios.

A section runs from its ``## `` heading to the next one, and belongs to the benchmark its command
names (``benchmarks/run_all.py NAME``). A run replaces only the sections of the benchmarks it ran
(the first in place, any older duplicates dropped; a new one goes at the end) and leaves every
other section and the text above the first heading as they were; the file is written after each
benchmark, so one that fails keeps what the others wrote. Each section carries the date and
machine it ran on.
"""

from __future__ import annotations

import datetime as dt
import importlib
import re
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
_HEADING = re.compile(r"(?m)^(?=## )")
_COMMAND = re.compile(r"benchmarks/run_all\.py ([A-Za-z0-9_]+)")


def split(text: str) -> tuple[str, list[str]]:
    """The text above the first ``## `` heading, and the sections (each from its heading on).

    >>> split("# B\\n\\n## One\\na\\n## Two\\nb\\n")
    ('# B\\n\\n', ['## One\\na\\n', '## Two\\nb\\n'])
    """
    head, *sections = _HEADING.split(text)
    return head, sections


def owner(section: str) -> str | None:
    """The benchmark a section belongs to: the first ``run_all.py NAME`` its text names."""
    found = _COMMAND.search(section)
    return found.group(1) if found else None


def merge(text: str, name: str, section: str) -> str:
    """``text`` with the sections of benchmark ``name`` replaced by ``section`` (at the first's
    place; appended when it had none); every other section and the head kept as they were."""
    head, sections = split(text) if text.strip() else (HEADER, [])
    section = section.strip() + "\n"
    kept: list[str] = []
    placed = False
    for old in sections:
        if owner(old) != name:
            kept.append(old)
        elif not placed:
            kept.append(section)
            placed = True
    if not placed:
        kept.append(section)
    body = "\n".join(s.rstrip("\n") + "\n" for s in kept)
    return head.rstrip("\n") + "\n\n" + body


def section_of(name: str, produced: str, when: dt.datetime) -> str:
    """A benchmark's output as its section: heading, the stamp, its command if it did not say."""
    title, _, body = produced.strip().partition("\n")
    stamp = f"\n_Ran {when:%Y-%m-%d %H:%M} UTC on {machine()}._\n"
    if owner(body) != name:
        stamp += f"\nCommand: `.venv/bin/python benchmarks/run_all.py {name}`.\n"
    return f"{title}\n{stamp}{body}\n"


def main(argv: list[str], doc: Path = DOC) -> int:
    names = argv or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    for name in (n.removeprefix("bench_") for n in names):
        mod = importlib.import_module(f"bench_{name}")
        print(f"== {mod.__name__}", flush=True)
        section = section_of(name, mod.run(), dt.datetime.now(dt.UTC))
        print(section, flush=True)
        doc.write_text(merge(doc.read_text() if doc.exists() else "", name, section))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
