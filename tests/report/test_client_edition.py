"""The client edition of the market report: one page per area from the same computation, the
market only (no website, lead or contact data, no code identifiers, no links to data files), its
figures those of ``rf.market_trends`` / ``rf.market_summary``, every chart's period the table's,
the summary written by its documented rules, the brand and the disclaimer on every page."""

from __future__ import annotations

import base64
import re
import warnings
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_html import parse, same

import realtyframes as rf
from realtyframes.errors import QueryError
from realtyframes.report import MarketReportOptions, compute_market_report, load_market_frames
from realtyframes.report import write_market_report as write
from realtyframes.report.brand import Brand, brand_from_config, check_logo
from realtyframes.report.local import LMU_METRICS, PriceChange, latest_month
from realtyframes.report.summary import plain_summary, price_sentence, speed_sentence, tilt

AS_OF = "2026-06-30"
#: Words of internal data that never appear on a client page.
INTERNAL = re.compile(r"visitor|pageview|conversion|\bCRM\b|\bleads?\b|contacts?\b|utm", re.I)
#: Code identifiers: snake_case names, dotted calls, comparisons, field names of the API.
CODE = re.compile(
    r"\b[a-z]+_[a-z_]+\b|\brf\.|==|StandardStatus|ListingId|CloseDate|\.parquet|\.csv"
)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40


class _Text(HTMLParser):
    """The visible text of a page (no attributes, no style)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._style = tag in ("style", "title")

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if not self._style:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A two-city client pack of a small sandbox with two years of history (fast)."""
    from realtyframes.sandbox import serve

    tmp = tmp_path_factory.mktemp("client")
    logo = tmp / "logo.png"
    logo.write_bytes(PNG)
    options = MarketReportOptions(
        as_of=AS_OF,
        source="test sandbox",
        cities=("Miami", "Fort Lauderdale"),
        brand=Brand(name="Sunshine Realty", logo=logo, agent="Ana Diaz, 305-555-0100"),
    )
    at = pd.Timestamp(AS_OF, tz="UTC")
    with (
        serve(seed=7, listings=6000, history_years=3, as_of=at) as url,
        rf.Client(base_url=url, cache_dir=tmp / "cache", progress=False) as client,
    ):
        frames = load_market_frames(client, options)
    report = compute_market_report(frames, options)
    files = write(report, tmp / "out", xlsx=True, workers=0)
    html = files.html.read_text(encoding="utf-8")
    return {"report": report, "files": files, "html": html, "parsed": parse(html)}


def test_a_pack_is_a_cover_then_one_page_per_area(pack: dict[str, Any]) -> None:
    html = pack["html"]
    assert html.count('<section class="cover">') == 1
    areas = re.findall(r'<section class="area" data-area="([^"]*)">', html)
    assert areas == ["Miami", "Fort Lauderdale"]
    assert "break-before: page" in html and "@page" in html
    assert html.index('class="cover"') < html.index('class="area"')


def test_the_client_page_holds_the_market_only(pack: dict[str, Any]) -> None:
    html, files = pack["html"], pack["files"]
    text = visible_text(html)
    assert not INTERNAL.search(text), INTERNAL.search(text)
    assert not CODE.search(text), CODE.search(text)
    assert "<a " not in html  # no links to data files (or anywhere)
    assert set(files.data) <= {"listings", "changes", "since-last"}
    sheets = pd.read_excel(files.workbook, sheet_name=None)
    assert not any("contact" in name.lower() for name in sheets)
    assert not any("analytics" in name.lower() for name in sheets)


def test_brand_logo_agent_and_default_disclaimer_on_every_page(pack: dict[str, Any]) -> None:
    html = pack["html"]
    pages = html.count('<section class="area"') + html.count('<section class="cover">')
    assert html.count("Sunshine Realty</span>") == pages
    assert html.count("Ana Diaz, 305-555-0100") == pages
    logos = re.findall(r'<img src="data:image/png;base64,([^"]+)" alt="Sunshine Realty">', html)
    assert len(logos) == pages and set(logos) == {base64.b64encode(PNG).decode()}  # embedded
    disclaimer = (
        f"Source: test sandbox, data as of {AS_OF}. Information deemed reliable, not guaranteed."
    )
    assert html.count(disclaimer) == pages


def test_the_local_market_update_equals_the_analysis_functions(pack: dict[str, Any]) -> None:
    """The month's figures are ``rf.market_trends``'s; the 12 months' counts its sums, and the
    12 months' medians ``rf.market_summary``'s over those 12 months; every median has its n."""
    report, values = pack["report"], pack["parsed"].values
    frames = report.frames
    month = latest_month(pd.Timestamp(AS_OF).date())
    assert month == pd.Timestamp("2026-06-01")
    trends = rf.market_trends(frames.listings, frames.history, freq="M", by="City",
                              start="2025-06-01", end=AS_OF)  # fmt: skip
    summary = rf.market_summary(frames.listings, by="City", as_of=AS_OF, window_days=365)
    for city in ("Miami", "Fort Lauderdale"):
        rows = trends[trends["City"] == city].set_index("period_begin")
        table = f"lmu-{city}"
        for metric, *_ in LMU_METRICS:
            shown = values[(table, metric, "month")][0]
            expected = rows.loc[month, metric]
            if metric in ("median_sale_price", "median_dom", "avg_sale_to_list"):
                n = rows.loc[month, f"{metric}_n"]
                assert f"n={int(n)}" in values[(table, metric, "month")][1]
            assert same(shown, expected), (city, metric)
        for metric in ("new_listings", "homes_sold", "pending_sales"):
            total = rows.loc[pd.Timestamp("2025-07-01") : month, metric].sum()
            assert same(values[(table, metric, "year")][0], float(total)), (city, metric)
        n12 = summary.loc[city, "homes_sold"]
        assert same(values[(table, "median_sale_price", "year")][0],
                    summary.loc[city, "median_sale_price"] if n12 >= 5 else None)  # fmt: skip
        assert f"n={int(n12)}" in values[(table, "median_sale_price", "year")][1]


def test_every_chart_states_the_period_of_its_table(pack: dict[str, Any]) -> None:
    """The monthly charts end with the table's month; the price chart with the quarter of the
    price change; each chart's title names its period and population (area, homes)."""
    html = pack["html"]
    report = pack["report"]
    for name, area in report.areas.items():
        page = html.split(f'data-area="{name}"', 1)[1].split("</section>", 1)[0]
        month = re.search(r'data-month="([\d-]+)"', page).group(1)
        charts = dict(re.findall(r'data-chart="(\w+)" data-period="([^"]*)"', page))
        assert set(charts) == {"prices", "sales", "supply", "map"}
        for monthly in ("sales", "supply"):
            assert charts[monthly].endswith(f"..{month}"), (name, monthly)
            assert (
                charts[monthly]
                == f"{pd.Timestamp(month) - pd.DateOffset(months=23):%Y-%m}..{month}"
            )
        quarter = pd.Period(area.change.period.replace(" ", ""), "Q")
        assert charts["prices"].endswith(f"..{quarter.start_time:%Y-%m}")
        assert area.change.period in html


def test_the_headline_price_change_is_the_index_with_its_band(pack: dict[str, Any]) -> None:
    report = pack["report"]
    for name, area in report.areas.items():
        sales = report.frames.listings[report.frames.listings["City"] == name]
        with warnings.catch_warnings():  # a thin base: the band below carries it
            warnings.simplefilter("ignore", rf.DataQualityWarning)
            index = rf.price_index(sales, freq="Q", base="2025-04-01", location="PostalCode")
        row = index[pd.to_datetime(index["period_begin"]) == pd.Timestamp("2026-04-01")].iloc[0]
        assert area.change.period == "2026 Q2" and area.change.earlier == "2025 Q2"
        assert area.change.change == pytest.approx(row["index"] / 100 - 1)
        assert area.change.low == pytest.approx(row["index_low"] / 100 - 1)
        assert area.change.high == pytest.approx(row["index_high"] / 100 - 1)


def test_the_analyst_edition_has_every_view_and_no_web_data(
    pack: dict[str, Any], tmp_path: Path
) -> None:
    """One computation, two renderings: the analyst edition of the same frames."""
    import dataclasses

    frames = pack["report"].frames
    options = dataclasses.replace(pack["report"].options, edition="analyst")
    report = compute_market_report(frames, options)
    files = write(report, tmp_path, workers=0, xlsx=True)
    html = files.html.read_text(encoding="utf-8")
    assert files.html.name.endswith("-analyst.html")
    tables = {t for t, _, _ in parse(html).values}
    assert {"comparison", "trends", "top_drops"} <= tables
    assert not tables & {"traffic", "funnel", "lead_sources"}
    assert 'id="definitions"' in html and ".parquet" in html  # the data files are linked
    assert "contacts" not in html and "Website visitors" not in html
    sheets = pd.read_excel(files.workbook, sheet_name=None)
    assert not any("contact" in name.lower() for name in sheets)


# ----------------------------------------------------------------------------- summary rules


def test_rule_1_tilt_from_months_of_supply() -> None:
    assert tilt(3.99) == "a seller's market"
    assert tilt(4.0) == tilt(6.0) == "a balanced market"
    assert tilt(6.01) == "a buyer's market"
    assert tilt(float("nan")) is None


def _change(value: float, low: float, high: float) -> PriceChange:
    return PriceChange("2026 Q2", "2025 Q2", value, low, high, 80, 75, 5e5, 4.6e5, 0.087)


def test_rule_2_price_direction_from_the_band() -> None:
    assert "rose 6.0 %" in price_sentence(_change(0.06, 0.02, 0.10))
    assert "fell 5.0 %" in price_sentence(_change(-0.05, -0.09, -0.01))
    level = price_sentence(_change(0.03, -0.02, 0.08))
    assert "about level" in level and "+3.0 %" in level and "within the noise" in level
    none = PriceChange("2026 Q2", "2025 Q2", np.nan, np.nan, np.nan, 2, 3, np.nan, np.nan,
                       np.nan, reason="fewer than 5 sales")  # fmt: skip
    assert price_sentence(none).startswith("Too few sales")


def test_rule_2_a_band_too_wide_for_the_headline_gives_the_range_not_the_figure() -> None:
    """The page's headline shows no figure when the band is wider than FIRM_BAND; the summary
    then says the direction and the range, not a figure the headline withheld (Miami, 2026 Q3:
    "+12.6 %" in the summary beside "no firm figure" in the headline)."""
    wide_up = price_sentence(_change(0.126, 0.019, 0.245))
    assert "rose 1.9 to 24.5 %" in wide_up and "12.6" not in wide_up
    wide_down = price_sentence(_change(-0.13, -0.245, -0.019))
    assert "fell 1.9 to 24.5 %" in wide_down and "13.0" not in wide_down
    assert "rose 6.0 %" in price_sentence(_change(0.06, 0.02, 0.10))  # firm: the figure


def test_rule_3_speed_from_days_on_market() -> None:
    assert "faster than a year earlier (50 days)" in speed_sentence(44, 50, 30, "June 2026")
    assert "slower than" in speed_sentence(56, 50, 30, "June 2026")
    assert "about as fast as" in speed_sentence(47, 50, 30, "June 2026")
    assert speed_sentence(float("nan"), 50, 0, "June 2026") is None


def test_the_summary_uses_the_three_rules_in_order(pack: dict[str, Any]) -> None:
    area = next(iter(pack["report"].areas.values()))
    sentences = plain_summary(area.table, area.change)
    assert sentences == area.summary
    assert sentences[0].startswith("With ") and "market" in sentences[0]
    assert "Prices" in sentences[1]
    for sentence in sentences:
        assert sentence in pack["html"].replace("&#x27;", "'")


# ----------------------------------------------------------------------------- brand


def test_a_logo_must_be_an_image(tmp_path: Path) -> None:
    text = tmp_path / "logo.png"
    text.write_text("not an image")
    with pytest.raises(QueryError, match="not a PNG, JPEG or SVG"):
        check_logo(text)
    svg = tmp_path / "logo.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    assert check_logo(svg) == svg


def test_the_brand_comes_from_flags_over_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[report]\nbrand_name = "From file"\nagent = "File Agent"\n')
    brand = brand_from_config(config, brand_name="From flag", brand_logo=None, agent=None,
                              disclaimer=None)  # fmt: skip
    assert (brand.name, brand.agent) == ("From flag", "File Agent")
    config.write_text('[report]\nbrand_nme = "typo"\n')
    with pytest.raises(QueryError, match="unknown key"):
        brand_from_config(config)


def test_cli_checks_edition_and_logo_before_any_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], start_sandbox: Callable[..., Any]
) -> None:
    from realtyframes.cli import main

    bad = tmp_path / "logo.png"
    bad.write_text("hello")
    out = tmp_path / "out"
    for argv in (["--edition", "brokers"], ["--brand-logo", str(bad)]):
        with pytest.raises(SystemExit) as stop:
            main(["report", "market", "--out", str(out), "--base-url", "http://127.0.0.1:9", *argv])
        assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'brokers'" in err and "is not a PNG, JPEG or SVG image" in err
    assert not out.exists()


def test_the_price_drop_share_chart_says_any_time_as_its_table_does(pack: dict[str, Any]) -> None:
    """The comparison's "Active whose last price change was a cut (any time)" is a stock, not a
    90-day figure: its chart said "last 90 days" and plotted the any-time share (the control:
    homes sold is a 90-day figure and says so)."""
    from realtyframes.report._render_market import SHORT_LABELS

    summary = pack["report"].summary
    share = rf.plot.market_metric(summary, "pct_active_with_price_drop")
    title = share.axes[0].get_title(loc="left")
    assert "last 90 days" not in title and "any time" in title
    assert "(any time)" in SHORT_LABELS["pct_active_with_price_drop"]
    sold = rf.plot.market_metric(summary, "homes_sold").axes[0].get_title(loc="left")
    assert sold.endswith("last 90 days")


def test_the_config_file_may_hold_a_report_table(tmp_path: Path) -> None:
    """The settings reader leaves the ``[report]`` table to the report (it refused any table)."""
    from realtyframes._config import load_settings

    config = tmp_path / "config.toml"
    config.write_text('base_url = "http://127.0.0.1:9"\n\n[report]\nbrand_name = "Sunshine"\n')
    settings = load_settings({}, env={}, config_path=config)
    assert settings.base_url == "http://127.0.0.1:9"
    assert brand_from_config(settings.config_path).name == "Sunshine"


def test_a_long_chart_title_stays_inside_its_figure() -> None:
    """A long area name and a two-year span: the title's type shrinks to fit the chart (it ran
    off the right edge, "… Nov 2024 – Oct 202"); the control at a fixed 10 pt runs out."""
    from chart_checks import outside
    from realtyframes.report._client_charts import supply_chart

    months = pd.DataFrame({
        "period_begin": pd.date_range("2024-11-01", periods=24, freq="MS"),
        "active_listings": np.arange(24) + 10.0, "months_of_supply": np.linspace(2, 5, 24),
    })  # fmt: skip
    title = ("Homes for sale (month end) and months supply, Nov 2024 – Oct 2026\n"
             "Hallandale Beach, residential")  # fmt: skip
    fig = supply_chart(months, title)
    assert outside(fig) == []
    fig._suptitle.set_fontsize(10)  # the control: the old fixed size
    assert "right" in outside(fig)
