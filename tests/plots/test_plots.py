"""rf.plot: every chart renders to PNG with Agg; titles, axis labels, series; no global state."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

import realtyframes.plots as plot
from realtyframes.analysis import (
    MissingColumnsError,
    lead_funnel,
    market_summary,
    price_drops,
    traffic_summary,
)
from realtyframes.schemas import Analytics

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def render(fig: Figure) -> bytes:
    """Draw with the Agg canvas (no pyplot) and return the PNG bytes."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=60)
    data = buf.getvalue()
    assert data.startswith(PNG_MAGIC) and len(data) > 2000
    return data


def bars(ax: Axes) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


@pytest.fixture(scope="module")
def listings() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 120
    status = rng.choice(["Active", "Pending", "Closed"], n)
    lp = rng.integers(200, 1500, n) * 1000.0
    entry = pd.Timestamp("2024-03-01", tz="UTC") + pd.to_timedelta(rng.integers(0, 100, n), "D")
    return pd.DataFrame(
        {
            "ListingId": [f"L{i}" for i in range(n)],
            "UnparsedAddress": [f"{i} Collins Avenue, Unit {i * 3}, Miami Beach, FL" for i in range(n)],
            "City": rng.choice(["Miami", "Miami Beach", "Doral"], n),
            "PropertyType": "Residential",
            "StandardStatus": status,
            "ListPrice": lp,
            "PreviousListPrice": np.where(rng.random(n) < 0.5, lp * rng.uniform(1.02, 1.2, n), np.nan),
            "ClosePrice": np.where(status == "Closed", lp * rng.uniform(0.92, 1.05, n), np.nan),
            "LivingArea": rng.integers(600, 3000, n).astype(float),
            "DaysOnMarket": rng.integers(1, 120, n),
            "OriginalEntryTimestamp": entry,
            "MajorChangeTimestamp": entry + pd.to_timedelta(10, "D"),
            "CloseDate": (entry + pd.to_timedelta(30, "D")).where(status == "Closed"),
        }
    )  # fmt: skip


@pytest.fixture(scope="module")
def analytics() -> Analytics:
    def bd(names: list[str]) -> pd.DataFrame:
        v = np.arange(len(names), 0, -1) * 100
        return pd.DataFrame(
            {"name": names, "visitors": v, "pageviews": v * 2, "conversions": v // 20}
        )

    days = pd.date_range("2024-06-01", periods=14, freq="D", tz="UTC")
    timelines = pd.concat(
        [
            pd.DataFrame({"date": days, "metric": m, "value": np.linspace(a, b, 14)})
            for m, a, b in (("visitors", 100, 180), ("pageviews", 300, 420), ("conversions", 2, 9))
        ]
    )
    return Analytics(
        period="14d",
        overview=pd.DataFrame(
            {"visitors": [2000], "pageviews": [5000], "sessions": [2500], "conversions": [80],
             "conversion_rate": [0.032], "bounce_rate": [0.41], "avg_session_seconds": [95.0]}
        ),
        timelines=timelines,
        pages=bd(["/", "/listings", "/listing/123", "/contact"]),
        referrers=bd(["Google", "Direct", "Facebook", "Instagram", "Zillow", "Bing"]),
        countries=bd(["United States", "Canada", "Brazil"]),
        browsers=bd(["Chrome", "Safari"]),
        os=bd(["iOS", "Android", "Windows"]),
        devices=bd(["mobile", "desktop", "tablet"]),
        utm=pd.DataFrame(columns=["dimension", "name", "visitors", "pageviews", "conversions"]),
    )  # fmt: skip


@pytest.fixture(scope="module")
def contacts() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame(
        {
            "id": [f"c{i}" for i in range(60)],
            "stage": rng.choice(["lead", "lead", "client", "active-client", "past-client"], 60),
            "source": rng.choice(["web", "referral"], 60),
            "createdAt": pd.Timestamp("2024-04-01", tz="UTC")
            + pd.to_timedelta(rng.integers(0, 70, 60), "D"),
        }
    )


def test_price_drop_distribution(listings: pd.DataFrame) -> None:
    drops = price_drops(listings)
    fig = plot.price_drop_distribution(drops, bins=10)
    assert isinstance(fig, Figure)
    render(fig)
    (ax,) = fig.axes
    assert ax.get_title(loc="left") == f"Distribution of price cuts ({len(drops)} listings)"
    assert ax.get_xlabel() == "Price cut (% of previous list price)"
    assert ax.get_ylabel() == "Listings (count)"
    assert len(bars(ax)) == 1 and len(bars(ax)[0]) == 10  # one histogram, 10 bins
    assert len(ax.get_lines()) == 1  # the median line
    assert ax.xaxis.get_major_formatter()(0.25, 0) == "25%"


def test_top_price_drops(listings: pd.DataFrame) -> None:
    fig = plot.top_price_drops(price_drops(listings), top_n=7)
    render(fig)
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "Top 7 price cuts"
    assert "%" in ax.get_xlabel()
    assert len(bars(ax)) == 1 and len(bars(ax)[0]) == 7
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 7 and all(len(s) <= 38 for s in labels)  # long addresses shortened
    assert labels[0].startswith(str(price_drops(listings)["UnparsedAddress"].iloc[0])[:20])


def test_market_metric_with_previous_window(listings: pd.DataFrame) -> None:
    summary = market_summary(listings, window_days=45, compare_previous=True)
    fig = plot.market_metric(summary, "median_sale_price")
    render(fig)
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "Median sale price by City, last 45 days"
    assert ax.get_xlabel() == "Median sale price (USD)"
    assert len(bars(ax)) == 2  # current and previous window
    assert [len(c) for c in bars(ax)] == [3, 3]  # three cities
    assert ax.xaxis.get_major_formatter()(1_250_000, 0) == "$1.25M"
    assert ax.xaxis.get_major_formatter()(450_000, 0) == "$450K"
    share = plot.market_metric(market_summary(listings), "pct_active_with_price_drop")
    render(share)
    assert share.axes[0].xaxis.get_major_formatter()(0.5, 0) == "50%"
    assert len(bars(share.axes[0])) == 1
    with pytest.raises(ValueError, match="`metric` must be one of"):
        plot.market_metric(summary, "median_price")


def test_market_metrics_one_chart_per_metric(listings: pd.DataFrame) -> None:
    fig = plot.market_metrics(
        market_summary(listings), ["homes_sold", "median_dom", "months_of_supply"]
    )
    render(fig)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title(loc="left") for ax in visible] == [
        "Homes sold by City, last 90 days",
        "Median days on market by City, last 90 days",
        "Months of supply by City, last 90 days",
    ]
    assert [ax.get_xlabel() for ax in visible] == [
        "Homes sold (homes)",
        "Median days on market (days)",
        "Months of supply (months)",
    ]


def test_ppsf_boxplot(listings: pd.DataFrame) -> None:
    fig = plot.ppsf_boxplot(listings, by="City", price="list")
    render(fig)
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "List price per sq ft by City (active listings)"
    assert ax.get_xlabel() == "List price per sq ft (USD per sq ft)"
    assert len(ax.get_yticklabels()) == 3  # one box per city
    assert len(ax.patches) == 3  # three box bodies (patch_artist)
    sold = plot.ppsf_boxplot(listings, price="sale", markets=["Doral"], window_days=365)
    render(sold)
    assert [t.get_text() for t in sold.axes[0].get_yticklabels()] == ["Doral"]
    with pytest.raises(ValueError, match="'sale' or 'rent'"):
        plot.ppsf_boxplot(listings, segment="both")


def test_traffic_timeline(analytics: Analytics) -> None:
    fig = plot.traffic_timeline(analytics)
    render(fig)
    ax, twin = fig.axes
    assert ax.get_title(loc="left") == "Website traffic per day"
    assert ax.get_xlabel() == "Date (UTC)"
    assert ax.get_ylabel() == "Visitors / pageviews per day (count)"
    assert twin.get_ylabel() == "Conversions per day (count)"
    assert [line.get_label() for line in ax.get_lines()] == ["Visitors", "Pageviews"]
    assert len(bars(twin)) == 1 and len(bars(twin)[0]) == 14  # conversions, one bar per day
    assert bars(twin)[0][0].get_width() == pytest.approx(17 / 24)  # in days: visible bars
    assert len(ax.get_legend().get_texts()) == 3


@pytest.mark.parametrize(
    ("func", "title", "xlabel", "n"),
    [
        (plot.top_sources, "Top traffic sources", "Visitors", 5),
        (plot.countries, "Top countries", "Visitors", 3),
        (plot.top_pages, "Top pages", "Visitors", 4),
        (plot.devices, "Visitors by device", "Share of visitors (%)", 3),
    ],
)
def test_breakdown_charts(analytics: Analytics, func, title: str, xlabel: str, n: int) -> None:
    fig = func(analytics, top_n=5) if func is not plot.devices else func(analytics)
    render(fig)
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == title
    assert ax.get_xlabel().startswith(xlabel)
    assert len(bars(ax)) == 1 and len(bars(ax)[0]) == n
    # a TrafficSummary works as input too
    again = func(traffic_summary(analytics, top_n=5))
    assert len(bars(again.axes[0])[0]) == n


def test_lead_charts(contacts: pd.DataFrame) -> None:
    funnel = lead_funnel(contacts)
    fig = plot.lead_funnel(funnel)
    render(fig)
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "Lead funnel (contacts at or past each stage)"
    assert ax.get_xlabel().startswith("Contacts (count")
    assert [t.get_text() for t in ax.get_yticklabels()] == list(funnel.stages)
    assert len(bars(ax)[0]) == 4
    weekly = plot.leads_per_week(contacts)  # a contacts frame works too
    render(weekly)
    wax = weekly.axes[0]
    assert wax.get_title(loc="left") == "New leads per week"
    assert wax.get_ylabel() == "New leads (contacts created)"
    assert len(bars(wax)[0]) == len(funnel.weekly)
    assert bars(wax)[0][0].get_width() == pytest.approx(5.0)  # 5 days wide, Monday to Friday
    assert [b.get_height() for b in bars(wax)[0]] == list(funnel.weekly["new_leads"])


def test_drawing_on_a_given_axes_returns_it(listings: pd.DataFrame, analytics: Analytics) -> None:
    fig = Figure(figsize=(10, 4))
    left, right = fig.subplots(1, 2)
    assert plot.price_drop_distribution(price_drops(listings), ax=left) is left
    assert plot.top_sources(analytics, ax=right) is right
    render(fig)
    assert left.get_title(loc="left").startswith("Distribution of price cuts")
    with pytest.raises(TypeError, match="`ax` must be a matplotlib Axes"):
        plot.devices(analytics, ax="left")


def test_empty_inputs_draw_a_no_data_chart(listings: pd.DataFrame) -> None:
    none = price_drops(listings, min_drop_pct=0.99)
    for fig in (
        plot.price_drop_distribution(none),
        plot.top_price_drops(none),
        plot.market_metric(market_summary(listings.iloc[0:0]), "homes_sold"),
    ):
        render(fig)
        assert [t.get_text() for t in fig.axes[0].texts] == ["No data"]
    with pytest.raises(MissingColumnsError, match="'drop_pct'"):
        plot.price_drop_distribution(listings)


def test_no_global_matplotlib_state(listings: pd.DataFrame, analytics: Analytics) -> None:
    before = dict(matplotlib.rcParams)
    render(plot.market_metric(market_summary(listings), "homes_sold"))
    render(plot.traffic_timeline(analytics))
    assert dict(matplotlib.rcParams) == before
    for path in sorted(Path(plot.__file__).parent.glob("*.py")):  # every module of rf.plot
        _assert_no_global_state(ast.parse(path.read_text()))


def _assert_no_global_state(tree: ast.Module) -> None:
    imported = {
        alias.name if isinstance(node, ast.Import) else f"{node.module}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not any("pyplot" in name for name in imported)
    global_state = {"rcParams", "rc", "rcdefaults", "use", "style"}
    assert not any(isinstance(n, ast.Attribute) and n.attr in global_state for n in ast.walk(tree))
