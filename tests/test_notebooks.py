"""The notebooks in notebooks/: committed without outputs, and each runs top to bottom on the
embedded sandbox (executed with nbclient, as a user would in Jupyter)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
EXPECTED = {
    "01_quickstart",
    "02_price_drops",
    "03_market_comparison",
    "04_website_traffic",
    "05_contacts_and_leads",
    "06_market_trends",
    "market_report",
}
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_the_notebooks_are_all_there() -> None:
    assert {p.stem for p in PATHS} == EXPECTED


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_committed_with_outputs_stripped(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    assert book.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in book.cells if c.cell_type == "code"]
    assert code
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]
    assert book.cells[0].cell_type == "markdown" and book.cells[0].source.startswith("# ")
    assert 'ROOT / "data" / "cache"' in "".join(c.source for c in code)


def test_market_report_has_a_papermill_parameters_cell() -> None:
    book = nbformat.read(NOTEBOOKS / "market_report.ipynb", as_version=4)
    tagged = [c for c in book.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and tagged[0].cell_type == "code"
    names = {line.split("=")[0].strip() for line in tagged[0].source.splitlines() if "=" in line}
    assert {"as_of", "cities", "by", "window_days", "out_dir"} <= names


def _inject(book: nbformat.NotebookNode, values: dict[str, object]) -> None:
    """Papermill-style: an ``injected-parameters`` cell right after the ``parameters`` cell."""
    for i, cell in enumerate(book.cells):
        if "parameters" in cell.metadata.get("tags", []):
            source = "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items())
            injected = nbformat.v4.new_code_cell(source)
            injected.metadata["tags"] = ["injected-parameters"]
            book.cells.insert(i + 1, injected)
            return
    raise AssertionError("no parameters cell")


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    if path.stem == "market_report":
        out = tmp_path / "reports"
        _inject(book, {"cities": ["Miami Beach", "Coral Gables"], "out_dir": str(out)})
    client = NotebookClient(
        book,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()
    errors = [
        o
        for c in book.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert errors == []
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    assert len(outputs) >= 3
    charts = sum("rf.plot." in c.source for c in book.cells if c.cell_type == "code")
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == charts  # each chart cell shows its figure
    if path.stem == "market_report":
        written = sorted(p.name for p in out.iterdir())
        assert any(n.endswith("-miami-beach-coral-gables.html") for n in written)
        # the page, the listings and their history (Parquet, CSV), the manifest (no contacts or
        # website analytics since #32); 2 more when the notebooks' cache already held this market
        core = [n for n in written if ".since-last." not in n]
        assert len(core) == 6 and len(written) in (6, 8)
    assert (ROOT / "data" / "cache").is_dir()
