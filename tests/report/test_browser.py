"""The HTML report in a real browser (headless Chromium), each edition: every chart decodes, the
console stays silent, the page renders (screenshot) and prints (PDF: the client edition one page
per area and the cover, on Letter and on A4).

Skips where no Chromium is installed, except in CI (``CI`` set), where it fails instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import realtyframes as rf
from realtyframes.report import MarketReportOptions, compute_market_report, load_market_frames
from realtyframes.report import write_market_report as write

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH, HEIGHT = 1280, 4000

#: Injected into a copy of the report (the report itself has no script): counts console errors
#: and warnings, error events (a resource that fails to load), and marks every image that did not
#: decode (naturalWidth == 0) once the page has loaded.
PROBE = """<script>
(() => {
  const root = document.documentElement;
  const bump = (name) => root.setAttribute(name, String(Number(root.getAttribute(name) || 0) + 1));
  for (const level of ["error", "warn"]) {
    const original = console[level];
    console[level] = (...args) => { bump("data-console-" + level); original.apply(console, args); };
  }
  window.addEventListener("error", () => bump("data-errors"), true);
  window.addEventListener("load", () => {
    const images = [...document.images];
    root.setAttribute("data-images", String(images.length));
    root.setAttribute(
      "data-broken", String(images.filter((i) => !i.complete || i.naturalWidth === 0).length));
    root.setAttribute(
      "data-natural", images.map((i) => i.naturalWidth + "x" + i.naturalHeight).join(","));
    const wide = [...document.querySelectorAll(".table-wrap")].filter(
      (w) => w.scrollWidth > w.clientWidth + 1);
    root.setAttribute("data-overflowing", wide.map(
      (w) => (w.querySelector("table") || w).getAttribute("data-table") || "?").join(","));
    root.setAttribute("data-loaded", "yes");
  });
})();
</script>"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(
                "CI needs headless Chromium (Debian package `chromium`; .ci/run installs it)"
            )
        pytest.skip("no Chromium installed (Debian package `chromium`)")
    return found


def run_chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def console_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if ":CONSOLE" in line]


class _Root(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, str | None] = {}
        self.images: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.attrs = dict(attrs)
        elif tag == "img":
            self.images.append(dict(attrs))


def probe(tmp: Path, html: str, name: str, width: int = WIDTH) -> tuple[_Root, list[str]]:
    """Load ``html`` with the probe script in Chromium (a window ``width`` px wide); the dumped
    DOM and the console lines."""
    page = tmp / name
    page.write_text(html.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    size = f"--window-size={width},{HEIGHT}"
    result = run_chromium(tmp, "--virtual-time-budget=10000", size, "--dump-dom", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    root = _Root()
    root.feed(result.stdout)
    assert root.attrs.get("data-loaded") == "yes", result.stdout[:500]
    return root, console_lines(result.stderr)


#: The editions rendered: the client edition as a pack of two cities, and the analyst edition.
EDITIONS = {
    "client": {"cities": ("Miami", "Fort Lauderdale"), "edition": "client"},
    "analyst": {"edition": "analyst"},
}


@pytest.fixture(scope="module", params=list(EDITIONS))
def report_html(
    request: pytest.FixtureRequest, sandbox_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    options = MarketReportOptions(as_of="2026-06-30", source="test sandbox",
                                  **EDITIONS[request.param])  # fmt: skip
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        frames = load_market_frames(client, options)
    return write(compute_market_report(frames, options), tmp_path_factory.mktemp("out")).html


def _client(path: Path) -> bool:
    return '<section class="area"' in path.read_text(encoding="utf-8")


def test_the_probe_sees_console_errors_and_broken_images(tmp_path: Path) -> None:
    """The checks below can fail: a page with a console error and broken images is caught."""
    page = (
        "<!DOCTYPE html><html><head></head><body>"
        '<img src="data:image/png;base64,AAAA"><img src="missing.png">'
        '<script>console.error("deliberate")</script></body></html>'
    )
    root, console = probe(tmp_path, page, "control.html")
    assert root.attrs["data-broken"] == "2"
    assert root.attrs["data-console-error"] == "1"
    assert int(root.attrs.get("data-errors") or 0) >= 1
    assert any("deliberate" in line for line in console)


def test_every_chart_decodes_and_the_console_is_silent(report_html: Path, tmp_path: Path) -> None:
    html = report_html.read_text(encoding="utf-8")
    root, console = probe(tmp_path, html, "report.html")
    assert console == []
    assert root.attrs.get("data-console-error") is None
    assert root.attrs.get("data-console-warn") is None
    assert root.attrs.get("data-errors") is None
    images = [i for i in root.images if str(i.get("src", "")).startswith("data:image/png")]
    least = 8 if _client(report_html) else 10  # the client pack: 4 charts a page
    assert int(str(root.attrs["data-images"])) == len(root.images) == len(images) >= least
    assert root.attrs["data-broken"] == "0"
    natural = str(root.attrs["data-natural"]).split(",")
    declared = [f"{i['width']}x{i['height']}" for i in root.images]
    assert natural == declared  # each PNG decoded at its full size


def test_wide_tables_fit_1200_px_without_a_scroll(report_html: Path, tmp_path: Path) -> None:
    """At 1,200 px no table needs a horizontal scroll (the comparison of eight markets cut off
    "Aventura" and "All markets"); the control, a table wider than the page, is caught."""
    wide = "".join(f"<td>{'x' * 40}</td>" for _ in range(12))
    control = (
        "<!DOCTYPE html><html><head><style>td { white-space: nowrap }</style></head><body>"
        f'<div class="table-wrap" style="overflow-x: auto"><table data-table="too-wide"><tr>{wide}'
        "</tr></table></div></body></html>"
    )
    root, _ = probe(tmp_path, control, "control.html", width=1200)
    assert root.attrs["data-overflowing"] == "too-wide"
    root, _ = probe(tmp_path, report_html.read_text(encoding="utf-8"), "fit.html", width=1200)
    assert root.attrs["data-overflowing"] == ""


def test_screenshot_shows_the_report(report_html: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    result = run_chromium(
        tmp_path,
        "--hide-scrollbars",
        f"--window-size={WIDTH},{HEIGHT}",
        f"--screenshot={shot}",
        report_html.as_uri(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert console_lines(result.stderr) == []
    image = Image.open(shot)
    assert image.size == (WIDTH, HEIGHT)
    gray = np.asarray(image.convert("L"), dtype=float)
    header, body = gray[:200], gray[200:]
    assert header.min() < 80  # the title is drawn in dark ink
    assert (body < 250).mean() > 0.05  # tables and charts fill the page
    # the page is centred and no wider than the window: the right margin stays blank
    assert (gray[:, WIDTH - 40 :] > 250).mean() > 0.99
    colours = np.asarray(image.convert("RGB")).reshape(-1, 3)[::97]
    assert len(np.unique(colours, axis=0)) > 50  # charts, not just text


def test_full_page_screenshot_covers_every_section(report_html: Path, tmp_path: Path) -> None:
    """The whole page as one image, kept as a test artifact (``test-artifacts/``) for review."""
    root, _ = probe(tmp_path, report_html.read_text(encoding="utf-8"), "sections.html")
    html = report_html.read_text(encoding="utf-8")
    client = _client(report_html)
    anchors = (
        ('class="cover"', 'data-area="Miami"', 'data-area="Fort Lauderdale"')
        if client
        else ('id="since-last"', 'id="trends"', 'id="markets"', 'id="price-drops"', 'id="map"')
    )
    for anchor in anchors:
        assert anchor in html, anchor
    assert 'id="traffic"' not in html and 'id="leads"' not in html  # the brokerage report's
    artifacts = Path(__file__).resolve().parents[2] / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    edition = "client" if client else "analyst"
    shot = artifacts / f"market-report-{edition}-full-page.png"
    result = run_chromium(
        tmp_path,
        "--hide-scrollbars",
        f"--window-size={WIDTH},16000",
        f"--screenshot={shot}",
        report_html.as_uri(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    image = Image.open(shot)
    gray = np.asarray(image.convert("L"), dtype=float)
    rows = (gray < 250).mean(axis=1)
    filled = np.flatnonzero(rows > 0.01)
    assert filled.max() > (2000 if client else 8000)  # every page / section drawn
    assert root.attrs["data-broken"] == "0"


@pytest.mark.parametrize("paper", ["Letter", "A4"])
def test_report_prints_to_pdf(report_html: Path, tmp_path: Path, paper: str) -> None:
    """The client edition prints one page per area plus the cover, on Letter and on A4."""
    html = report_html.read_text(encoding="utf-8")
    page = tmp_path / f"print-{paper}.html"
    page.write_text(html.replace("@page { size: Letter;", f"@page {{ size: {paper};"), "utf-8")
    pdf = tmp_path / "report.pdf"
    result = run_chromium(
        tmp_path, "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()
    )
    assert result.returncode == 0, result.stderr[-2000:]
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", data))
    if _client(report_html):
        areas = html.count('<section class="area"') + html.count('<section class="cover">')
        assert pages == areas == 3, pages
    else:
        assert 3 <= pages <= 30, pages
