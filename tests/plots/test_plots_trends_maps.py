"""Trend, inventory, map and comps charts: Figures with the right series, labels and marks."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

import realtyframes as rf
from realtyframes import plot

rng = np.random.default_rng(7)


def render(fig: Figure) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(io.BytesIO(), format="png", dpi=50)


@pytest.fixture(scope="module")
def trends() -> pd.DataFrame:
    months = pd.period_range("2025-01", "2026-06", freq="M")
    rows = []
    for city, base in (("Miami", 500_000.0), ("Doral", 400_000.0)):
        for i, m in enumerate(months):
            rows.append({"City": city, "period_begin": m.start_time, "period_end": m.end_time.normalize(),
                         "complete": True, "median_sale_price": base * (1 + 0.01 * i),
                         "active_listings": 50 + i, "pending_listings": 10, "new_listings": 20,
                         "homes_sold": 15})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["median_sale_price_yoy"] = frame.groupby("City")["median_sale_price"].pct_change(12)
    frame.attrs = {"by": ["City"], "freq": "M"}
    return frame


def test_market_trend_draws_a_line_per_market_with_yoy(trends: pd.DataFrame) -> None:
    fig = plot.market_trend(trends, "median_sale_price")
    ax = fig.axes[0]
    assert len(ax.lines) == 2
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["Doral (YoY +11.4%)", "Miami (YoY +11.4%)"]  # 1.17 / 1.05 - 1
    assert "Median sale price by month and City" in ax.get_title(loc="left")
    assert ax.get_ylabel() == "Median sale price (USD)"
    assert {ln.get_linestyle() for ln in ax.lines} == {"-"}
    render(fig)
    with pytest.raises(ValueError, match="`metric` must be one of"):
        plot.market_trend(trends, "bogus")


def test_inventory_trend_adds_markets_up(trends: pd.DataFrame) -> None:
    fig = plot.inventory_trend(trends)
    ax = fig.axes[0]
    active = next(ln for ln in ax.lines if "Active" in ln.get_label())
    assert active.get_ydata()[0] == 100  # 50 in each city
    bars = [c for c in ax.containers]
    assert len(bars) == 2 and bars[0].datavalues[0] == 40
    assert ax.get_ylabel() == "Listings (count)"
    render(fig)


@pytest.fixture(scope="module")
def market() -> pd.DataFrame:
    n = 60
    frame = pd.DataFrame(
        {
            "ListingId": [f"L{i}" for i in range(n)],
            "Latitude": 25.76 + rng.normal(0, 0.02, n),
            "Longitude": -80.19 + rng.normal(0, 0.02, n),
            "ListPrice": rng.uniform(3e5, 9e5, n),
            "LivingArea": rng.uniform(800, 2500, n),
            "ClosePrice": np.nan,
        }
    )
    frame.loc[3, ["Latitude", "Longitude"]] = np.nan
    return frame


def test_listing_map_is_offline_equal_distance_and_coloured(market: pd.DataFrame) -> None:
    fig = plot.listing_map(market, color="ppsf", marked=market.head(3), marked_label="comps")
    ax, bar = fig.axes
    assert "(1 without coordinates left out)" in ax.get_title(loc="left").replace("\n", " ")
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(points[0].get_offsets()) == 59 and len(points[1].get_offsets()) == 3
    expected = 1 / np.cos(np.radians(market["Latitude"].mean()))
    assert ax.get_aspect() == pytest.approx(expected, rel=1e-3)
    assert bar.get_ylabel().startswith("Price per sq ft")
    assert not ax.images  # no tiles
    render(fig)


def test_a_price_drop_map_takes_coordinates_from_the_market(market: pd.DataFrame) -> None:
    drops = pd.DataFrame({"ListingId": ["L1", "L2", "L3"], "drop_pct": [0.05, 0.1, 0.2]})
    fig = plot.listing_map(drops, color="drop_pct", market=market)
    ax, bar = fig.axes
    assert bar.get_ylabel() == "Latest price cut"
    assert len(ax.collections[0].get_offsets()) == 2  # L3 has no coordinates
    render(fig)


def test_comps_chart_marks_the_subject_and_gives_the_estimate(market: pd.DataFrame) -> None:
    comps = market.head(4).assign(ppsf=[500.0, 520.0, 480.0, 510.0])
    comps.attrs = {"subject": "S1", "subject_location": (25.76, -80.19),
                   "estimate": {"value": 505_000.0, "low": 495_000.0, "high": 512_500.0, "n": 4}}  # fmt: skip
    fig = plot.comps(comps)
    ax = fig.axes[0]
    assert "Comps for S1: estimate $505K ($495K–$512K, n=4)" in ax.get_title(loc="left").replace(
        "\n", " "
    )
    assert [t.get_text() for t in ax.texts] == ["1", "2", "3", "4"]
    assert ax.get_legend().get_texts()[0].get_text() == "subject S1"
    render(fig)


def test_new_charts_leave_matplotlib_state_alone(
    trends: pd.DataFrame, market: pd.DataFrame
) -> None:
    before = dict(matplotlib.rcParams)
    fig = Figure()
    ax = fig.add_subplot()
    assert plot.market_trend(trends, "active_listings", ax=ax) is ax
    render(plot.listing_map(market))
    assert dict(matplotlib.rcParams) == before
    assert rf.plot.listing_map is plot.listing_map
