"""docs/architecture.md maps every module of ``src/realtyframes`` (one line each)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "realtyframes"
DOC = ROOT / "docs" / "architecture.md"


def test_every_module_has_its_line_in_the_architecture_map() -> None:
    text = DOC.read_text(encoding="utf-8")
    modules = sorted(p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py"))
    assert len(modules) > 100
    missing = [m for m in modules if f"- `{m}` — " not in text]
    assert missing == [], "add a line for each to docs/architecture.md, 'Every module'"


def test_the_map_names_no_module_that_is_gone() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Every module", 1)[1].split("\n## ", 1)[0]
    named = [line.split("`")[1] for line in section.splitlines() if line.startswith("- `")]
    assert named and all((SRC / name).exists() for name in named)
