"""benchmarks/run_all.py updates only the sections of the benchmarks it ran (issue 33)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import run_all  # noqa: E402


def test_a_run_replaces_its_own_sections_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "benchmarks.md"
    shutil.copy(ROOT / "docs" / "benchmarks.md", doc)
    before = doc.read_text()
    head, sections = run_all.split(before)
    others = [s for s in sections if run_all.owner(s) != "full_load"]
    assert len(sections) - len(others) >= 1 and others  # the copy has both kinds
    (tmp_path / "bench_full_load.py").write_text(
        'def run():\n    return "## Full load: a tiny run\\n\\nCommand: '
        '`.venv/bin/python benchmarks/run_all.py full_load`. 1 page.\\n"\n'
    )
    (tmp_path / "bench_brand_new.py").write_text(
        'def run():\n    return "## New\\n\\nfigures\\n"\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("bench_full_load", "bench_brand_new"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    assert run_all.main(["full_load", "brand_new"], doc=doc) == 0

    after_head, after = run_all.split(doc.read_text())
    assert after_head == head  # the text above the first heading, byte for byte
    ours = [s for s in after if run_all.owner(s) == "full_load"]
    assert len(ours) == 1 and "a tiny run" in ours[0] and "1 page." in ours[0]
    first = next(i for i, s in enumerate(sections) if run_all.owner(s) == "full_load")
    assert after[first] == ours[0]  # in the place of the first one it replaced
    assert [s.strip() for s in after if s not in ours][:-1] == [s.strip() for s in others]
    assert after[-1].startswith("## New\n") and run_all.owner(after[-1]) == "brand_new"


def test_merge_into_an_empty_file_starts_with_the_header() -> None:
    text = run_all.merge("", "cli", "## CLI\n\nCommand: `benchmarks/run_all.py cli`.\n")
    assert text.startswith(run_all.HEADER) and text.endswith(
        "## CLI\n\nCommand: `benchmarks/run_all.py cli`.\n"
    )
