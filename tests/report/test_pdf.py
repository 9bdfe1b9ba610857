"""``--pdf``: the report printed by Chromium (through playwright) beside its HTML, read back with
pypdf. The client edition's PDF has one page per area (and a cover in a pack), the brand and the
disclaimer, and nothing internal or technical; ``--paper`` gives Letter or A4; ``--notify`` mails
the PDF itself; without the engine, ``--pdf`` fails before any load, naming what to install.

Needs Chromium (the Debian package ``chromium``) and the ``pdf`` extra; skips without Chromium
except in CI (``CI`` set), where it fails instead, as the browser test does.
"""

from __future__ import annotations

import importlib.abc
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pypdf
import pytest

import realtyframes as rf
from realtyframes.cli import main
from realtyframes.cli.config import EXIT_OK, EXIT_USAGE
from realtyframes.report import PAPERS, market_report, pdf_problem, write_pdf
from realtyframes.report.brand import Brand
from realtyframes.sandbox import RunningSandbox
from realtyframes.sandbox._spec import SOURCES, STAGES
from receivers import smtp_server

CITIES = ["Miami Beach", "Coral Gables"]
BRAND = "Sunshine Coast Realty"
DISCLAIMER = "Figures from the county MLS; deemed reliable, not guaranteed."
#: Points per inch: the PDF's page box is in points.
PT = 72
PAPER_POINTS = {"letter": (8.5 * PT, 11 * PT), "a4": (210 / 25.4 * PT, 297 / 25.4 * PT)}
#: Words of the brokerage's internal data: website analytics, CRM, leads (and the CRM's stages
#: and lead sources as the sandbox names them).
INTERNAL = re.compile(
    r"\b(visitors?|pageviews?|page views|conversions?|CRM|contacts?|leads?|funnel|"
    + "|".join(re.escape(s) for s in (*STAGES, *SOURCES))
    + r")\b",
    re.IGNORECASE,
)
#: Code identifiers: snake_case names, CamelCase field names, the Python API.
CODE = re.compile(
    r"\b[a-z]+_[a-z_]+\b|\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b|\b[a-z]+[A-Z][a-zA-Z]+\b|\brf\.|"
    r"\brealtyframes\b|\bdocs/"
)


@pytest.fixture
def engine() -> None:
    """The PDF engine (playwright and Chromium): a skip without it, a failure in CI."""
    problem = pdf_problem()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the PDF engine: {problem}")
        pytest.skip(problem)


def _text(pdf: Path) -> tuple[int, list[str]]:
    pages = pypdf.PdfReader(pdf).pages
    return len(pages), [p.extract_text() for p in pages]


@pytest.fixture(scope="module")
def client_html(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    brand = Brand(name=BRAND, agent="Ana Diaz, 305-555-0101", disclaimer=DISCLAIMER)
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        files = market_report(client, as_of="2026-06-30", cities=CITIES, brand=brand,
                              out_dir=tmp_path_factory.mktemp("out"), source="test sandbox")  # fmt: skip
    return files.html


@pytest.fixture(scope="module")
def contact_ids(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    cache = tmp_path_factory.mktemp("cache")
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        return [str(i) for i in client.contacts()["id"]]


@pytest.mark.browser
@pytest.mark.parametrize("paper", PAPERS)
def test_the_client_pdf_has_a_cover_and_a_page_per_area_and_nothing_internal(
    client_html: Path,
    contact_ids: list[str],
    paper: str,
    tmp_path: Path,
    engine: None,
) -> None:
    pdf = write_pdf(client_html, tmp_path / f"client-{paper}.pdf", paper=paper)
    count, pages = _text(pdf)
    assert count == len(CITIES) + 1  # the cover with the comparison, then one page per area
    box = pypdf.PdfReader(pdf).pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx(PAPER_POINTS[paper], abs=1.5)
    for city, page in zip(CITIES, pages[1:], strict=True):
        assert city in page  # the area's own page
        assert all(other not in page for other in CITIES if other != city)
    text = "\n".join(pages)
    for page in pages:  # the brand and the disclaimer on every page
        assert BRAND in page
        assert DISCLAIMER in " ".join(page.split())
    assert INTERNAL.findall(text) == []
    assert CODE.findall(text) == []
    assert "StandardStatus" not in text and "ListingId" not in text
    words = set(re.findall(r"\S+", text))
    assert not words & set(contact_ids)


def test_the_checks_catch_what_they_look_for() -> None:
    """The controls: text with internal data and code identifiers is caught."""
    leaky = (
        "Website visitors 12,225 · conversion rate 2.5% · CRM contacts 500 · stage past-client "
        "· pct_active_with_price_drop · StandardStatus == Active · rf.market_summary · createdAt"
    )
    assert len(INTERNAL.findall(leaky)) == 5
    assert {"pct_active_with_price_drop", "StandardStatus", "rf.", "createdAt"} <= set(
        CODE.findall(leaky)
    )


@pytest.mark.browser
def test_the_page_breaks_of_the_print_css_are_honoured(tmp_path: Path, engine: None) -> None:
    """A page whose print CSS starts each area on a new page prints one page per area, whatever
    its own ``@page`` size says; a page without the breaks does not (the control)."""
    areas = "".join(
        f'<section class="area" data-area="A{i}"><h1>Area {i}</h1><p>text</p></section>'
        for i in range(3)
    )
    css = "@page { size: A5; } section.area + section.area { break-before: page; }"
    html = tmp_path / "areas.html"
    html.write_text(
        f"<!DOCTYPE html><html><head><style>{css}</style></head><body>{areas}</body></html>"
    )
    count, pages = _text(write_pdf(html, paper="letter"))
    assert count == 3 and [p.strip() for p in pages] == [
        "Area 0\ntext",
        "Area 1\ntext",
        "Area 2\ntext",
    ]
    box = pypdf.PdfReader(html.with_suffix(".pdf")).pages[0].mediabox
    assert (float(box.width), float(box.height)) == pytest.approx(PAPER_POINTS["letter"], abs=1.5)
    html.write_text(f"<!DOCTYPE html><html><body>{areas}</body></html>")
    assert _text(write_pdf(html))[0] == 1


@pytest.mark.browser
def test_report_market_pdf_is_written_beside_the_html_and_mailed(
    tmp_path: Path,
    start_sandbox: Callable[..., RunningSandbox],
    capsys: pytest.CaptureFixture[str],
    engine: None,
) -> None:
    sandbox = start_sandbox(listings=400)
    out = tmp_path / "reports"
    flags = [
        "--base-url",
        sandbox.url,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--chart-workers",
        "0",
    ]
    with smtp_server() as inbox:
        code = main(["report", "market", "--out", str(out), "--pdf", "--paper", "a4", "--brand-name", BRAND,
                     "--notify", inbox.url(), *flags])  # fmt: skip
    printed, err = capsys.readouterr()
    assert code == EXIT_OK, err
    html, pdf = (Path(line) for line in printed.split())
    assert pdf == html.with_suffix(".pdf") and pdf.parent == out
    assert pdf.read_bytes().startswith(b"%PDF-")
    count, pages = _text(pdf)  # the client edition of one area (the whole market): one page
    assert count == 1 and BRAND in pages[0]
    (mail,) = inbox.messages
    attached = [(p.get_filename(), p.get_payload(decode=True)) for p in mail.iter_attachments()]
    assert attached == [(pdf.name, pdf.read_bytes())]  # the PDF, byte for byte, not the HTML
    (part,) = mail.iter_attachments()
    assert part.get_content_type() == "application/pdf"


class _NoPlaywright(importlib.abc.MetaPathFinder):
    """An import system without playwright (as on a machine without the ``pdf`` extra)."""

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "playwright" or name.startswith("playwright."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@pytest.fixture
def no_playwright(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "meta_path", [_NoPlaywright(), *sys.meta_path])
    for name in [m for m in sys.modules if m == "playwright" or m.startswith("playwright.")]:
        monkeypatch.delitem(sys.modules, name)
    yield


@pytest.mark.parametrize("kind", ["market", "brokerage"])
@pytest.mark.parametrize("missing", ["package", "browser"])
def test_pdf_without_its_engine_fails_before_any_load_naming_what_to_install(
    kind: str,
    missing: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    if missing == "package":
        request.getfixturevalue("no_playwright")
    else:  # a PATH without any Chromium
        empty = tmp_path / "bin"
        empty.mkdir()
        monkeypatch.setenv("PATH", str(empty))
        assert shutil.which("chromium") is None
    out = tmp_path / "r"
    code = main(["report", kind, "--pdf", "--base-url", "http://127.0.0.1:9", "--out", str(out)])
    printed, err = capsys.readouterr()
    assert code == EXIT_USAGE
    (line,) = err.strip().splitlines()  # one line
    assert line.startswith(f"realtyframes report {kind}: error: --pdf: ")
    assert "pip install 'realtyframes[pdf]'" in line and "apt-get install chromium" in line
    assert ("playwright" in line) == (missing == "package")
    assert printed == "" and "ConnectError" not in err  # before any request
    assert not out.exists()


@pytest.mark.browser
def test_write_pdf_refuses_an_unknown_paper_and_keeps_private_reports_private(
    client_html: Path,
    tmp_path: Path,
    engine: None,
) -> None:
    with pytest.raises(
        rf.QueryError, match="paper: unknown paper size 'legal'; allowed: letter, a4"
    ):
        write_pdf(client_html, tmp_path / "x.pdf", paper="legal")
    assert not (tmp_path / "x.pdf").exists()
    old = os.umask(0o022)
    try:
        private = write_pdf(client_html, tmp_path / "private.pdf", private=True)
        public = write_pdf(client_html, tmp_path / "public.pdf")
    finally:
        os.umask(old)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(public.stat().st_mode) == 0o644


@pytest.mark.browser
def test_report_brokerage_pdf_is_private_and_shows_listings_by_address(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: None
) -> None:
    out = tmp_path / "internal"
    flags = ["--base-url", sandbox_url, "--cache-dir", str(tmp_path / "cache")]
    old = os.umask(0o022)
    try:
        code = main(["report", "brokerage", "--out", str(out), "--top", "3", "--pdf", *flags])
    finally:
        os.umask(old)
    printed, err = capsys.readouterr()
    assert code == EXIT_OK, err
    html, pdf = (Path(line) for line in printed.split())
    assert pdf == html.with_suffix(".pdf")
    assert stat.S_IMODE(pdf.stat().st_mode) == stat.S_IMODE(html.stat().st_mode) == 0o600
    text = " ".join(" ".join(_text(pdf)[1]).split())
    assert "Most viewed listings" in text and "Leads" in text
    top = pd.read_csv(out / html.name.replace(".html", ".top-listings.csv"))
    for address in top["Address"]:  # each listing by its address (the PDF may wrap a line)
        assert " ".join(address.split(",")[0].split()) in text


@pytest.mark.browser
def test_the_comps_page_prints_on_one_page_in_miles_with_the_prices_of_the_cover(
    sandbox_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: None
) -> None:
    """Two cities and ``--comps`` of an active Miami home: the cover, a page per area and one
    comps page (its map and disclaimer do not spill onto a page of their own); the grid speaks
    miles, as its map's scale bar does; the cover's price cell says "no firm figure", never
    "too few" beside 60 sales."""
    cache = tmp_path / "cache"
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        active = client.listings(City="Miami", Status="Active", PropertyType="Residential")
    subject = str(active.sort_values("ListingId")["ListingId"].iloc[len(active) // 2])
    code = main(["report", "market", "--city", "Miami", "--city", "Coral Gables", "--comps",
                 subject, "--pdf", "--as-of", "2026-06-30", "--base-url", sandbox_url,
                 "--cache-dir", str(cache), "--out", str(tmp_path / "out"), "--chart-workers",
                 "0", "--brand-name", BRAND])  # fmt: skip
    printed, err = capsys.readouterr()
    assert code == EXIT_OK, err
    html, pdf = (Path(line) for line in printed.split())
    assert pdf == html.with_suffix(".pdf")
    count, pages = _text(pdf)
    assert count == 1 + 2 + 1, [p[:60] for p in pages]  # cover, Miami, Coral Gables, comps
    comps = " ".join(pages[-1].split())
    assert comps.startswith(BRAND) and "Comparable sales" in comps
    assert "Miles away" in comps and "Km away" not in comps
    assert "deemed reliable, not guaranteed" in comps  # the disclaimer on the comps page itself
    assert "too few" not in " ".join(pages[0].split())
