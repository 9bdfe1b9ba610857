"""Trend, inventory, map and comps charts: Figures with the right series, labels and marks."""

from __future__ import annotations

import io
import re

import matplotlib
import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure

import realtyframes as rf
from chart_checks import overlapping_texts, overlapping_ticks
from realtyframes import plot

rng = np.random.default_rng(7)


def render(fig: Figure) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(io.BytesIO(), format="png", dpi=50)


def bar_label(bar: Axes) -> str:
    """A map's colour bar label (under the map), on one line."""
    return " ".join(bar.get_xlabel().split())


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


def _with_partial(trends: pd.DataFrame) -> pd.DataFrame:
    """The same series with their last month not over yet (``complete`` False)."""
    frame = trends.copy()
    last = frame["period_begin"] == frame["period_begin"].max()
    frame.loc[last, "complete"] = False
    frame.attrs = dict(trends.attrs)
    return frame


def test_each_point_sits_at_its_own_period_label_and_the_partial_one_is_hollow(
    trends: pd.DataFrame,
) -> None:
    """A month's point is drawn at the month's start, where its tick label is (not at its end,
    under the next month's label); the month not over yet is a hollow marker on a dotted line
    reached from the last whole month, and the legend says so."""
    partial = _with_partial(trends)
    fig = plot.market_trend(partial, "median_sale_price")
    ax = fig.axes[0]
    render(fig)
    doral = partial[partial["City"] == "Doral"].sort_values("period_begin")
    solid, dotted = ax.lines[0], ax.lines[1]
    assert list(solid.get_xdata()) == list(doral["period_begin"].iloc[:-1])
    assert solid.get_linestyle() == "-" and solid.get_markerfacecolor() != "white"
    assert list(dotted.get_xdata()) == list(doral["period_begin"].iloc[-2:])
    assert dotted.get_linestyle() == ":" and dotted.get_markerfacecolor() == "white"
    # every month's tick is at the start of a month, and each point is on a month start
    ticks = [mdates.num2date(t) for t in ax.get_xticks()]
    assert all(t.day == 1 for t in ticks)
    assert all(t.day == 1 for t in doral["period_begin"])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[-1] == plot.PARTIAL_LABEL
    # the YoY in the legend is the last complete month's, not the partial one's
    expected = doral["median_sale_price"].iloc[-2] / doral["median_sale_price"].iloc[-14] - 1
    assert labels[0] == f"Doral (YoY {expected:+.1%})"

    fig = plot.inventory_trend(partial)
    ax = fig.axes[0]
    active = [ln for ln in ax.lines if ln.get_color() == rf.plot.PALETTE[0]]
    assert [ln.get_markerfacecolor() == "white" for ln in active] == [False, True]
    assert list(active[0].get_xdata()) == sorted(set(doral["period_begin"].iloc[:-1]))
    pale = [b for b in ax.patches if b.get_alpha() == 0.35]
    assert len(pale) == 2  # the partial month's two bars
    render(fig)


def test_many_markets_highlight_the_largest_few(trends: pd.DataFrame) -> None:
    """Eight markets are never eight lines in six colours: the largest four in colour (with their
    YoY), the rest thin grey lines under one legend entry."""
    frames = []
    for i, city in enumerate("ABCDEFGH"):
        one = trends[trends["City"] == "Miami"].assign(City=city)
        one["median_sale_price_n"] = 10 * (i + 1)  # H is the largest market
        frames.append(one)
    many = pd.concat(frames, ignore_index=True)
    many.attrs = dict(trends.attrs)
    fig = plot.market_trend(many, "median_sale_price")
    ax = fig.axes[0]
    coloured = [ln for ln in ax.lines if ln.get_color() != "0.75" and len(ln.get_xdata())]
    grey = [ln for ln in ax.lines if ln.get_color() == "0.75" and len(ln.get_xdata())]
    assert len(coloured) == plot.HIGHLIGHTED == 4 and len(grey) == 4
    assert len({ln.get_color() for ln in coloured}) == 4
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [lab.split(" ")[0] for lab in labels[:4]] == ["E", "F", "G", "H"]
    assert labels[4] == "4 other markets (grey)"
    render(fig)
    named = plot.market_trend(many, "median_sale_price", highlight=["B", "A"]).axes[0]
    colours = {ln.get_label().split(" ")[0]: ln.get_color() for ln in named.lines[:8]}
    assert colours["B"] == plot.PALETTE[0] and colours["A"] == plot.PALETTE[1]  # named, in order
    assert sum(ln.get_color() == "0.75" for ln in named.lines if len(ln.get_xdata())) == 6


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
    lat = market["Latitude"].dropna()
    expected = 1 / np.cos(np.radians((lat.min() + lat.max()) / 2))  # at the view's middle
    assert ax.get_aspect() == pytest.approx(expected, rel=1e-2)
    assert bar_label(bar).startswith("Price per sq ft")
    assert "(n = 59)" in bar_label(bar)
    assert not ax.images  # no tiles
    render(fig)


def test_a_price_drop_map_takes_coordinates_from_the_market(market: pd.DataFrame) -> None:
    drops = pd.DataFrame({"ListingId": ["L1", "L2", "L3"], "drop_pct": [0.05, 0.1, 0.2]})
    fig = plot.listing_map(drops, color="drop_pct", market=market)
    ax, bar = fig.axes
    # two points: no clipping, nothing to say
    assert bar_label(bar) == "Latest price cut, listings (n = 2)."
    assert len(ax.collections[0].get_offsets()) == 2  # L3 has no coordinates
    render(fig)


def test_a_map_clips_its_colour_scale_says_so_and_names_its_places(market: pd.DataFrame) -> None:
    """One outlier ($40,000/sq ft) must not paint every other point one colour: the scale runs
    between the 2nd and 98th percentiles and the colour bar says so; cities are named."""
    frame = market.assign(City=np.where(np.arange(len(market)) % 2, "Doral", "Miami"))
    frame.loc[0, "ListPrice"] = 40_000 * float(frame.loc[0, "LivingArea"])
    fig = plot.listing_map(frame, color="ppsf")
    ax, bar = fig.axes
    ppsf = (frame["ListPrice"] / frame["LivingArea"]).drop(index=3)  # row 3 has no coordinates
    low, high = np.percentile(ppsf, [2, 98])
    assert ax.collections[0].get_clim() == pytest.approx((low, high))
    assert high < 2_000 < 40_000 == pytest.approx(ppsf.max())
    assert "clipped to the 2nd–98th percentiles" in bar_label(bar)
    names = sorted(t.get_text() for t in ax.texts)
    assert names == ["1 mi", "Doral", "Miami"]  # the scale bar's and the cities' names
    render(fig)
    drops = frame[["ListingId"]].assign(drop_pct=np.linspace(0.01, 0.2, len(frame)))
    drops.loc[0, "drop_pct"] = 0.9  # a percent scale is clipped too, its ends as percents
    bar = plot.listing_map(drops, color="drop_pct", market=frame).axes[1]
    assert re.search(r"percentiles \(\d+\.\d%–\d+\.\d%\)", bar_label(bar)), bar_label(bar)


def test_comps_chart_marks_the_subject_and_gives_the_estimate(market: pd.DataFrame) -> None:
    comps = market.head(4).assign(ppsf=[500.0, 520.0, 480.0, 510.0])
    comps.attrs = {"subject": "S1", "subject_location": (25.76, -80.19),
                   "estimate": {"value": 505_000.0, "low": 495_000.0, "high": 512_500.0, "n": 4}}  # fmt: skip
    fig = plot.comps(comps)
    ax = fig.axes[0]
    assert "Comps for S1: estimate $505K ($495K–$512K, n=4)" in ax.get_title(loc="left").replace(
        "\n", " "
    )
    # numbered by rank; the 4th comp (the market's row 3) has no coordinates: not on the map
    assert [t.get_text() for t in ax.texts if t.get_text().isdigit()] == ["1", "2", "3"]
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


def test_no_tick_labels_run_together(trends: pd.DataFrame, market: pd.DataFrame) -> None:
    """The maps' longitude labels (-80.1925 ...) ran into each other; the check fails on a
    crowded control axis."""
    crowded = Figure(figsize=(3, 2))
    crowded.add_subplot().set_xticks(range(12), [f"label {i:02d}" for i in range(12)])
    assert overlapping_ticks(crowded)
    comps = market.assign(ppsf=market["ListPrice"] / market["LivingArea"]).dropna(
        subset=["Latitude"]
    )
    comps.attrs = {"subject": "L0", "subject_location": (25.76, -80.19),
                   "estimate": {"value": 5e5, "low": 4e5, "high": 6e5, "n": 12}}  # fmt: skip
    figures = {
        "market_trend": plot.market_trend(_with_partial(trends), "median_sale_price"),
        "inventory_trend": plot.inventory_trend(_with_partial(trends)),
        "listing_map": plot.listing_map(market),
        "comps": plot.comps(comps),
    }
    found = {name: overlapping_ticks(fig) for name, fig in figures.items()}
    assert {name: pairs for name, pairs in found.items() if pairs} == {}


def test_comps_in_one_building_get_numbers_that_do_not_overlap(market: pd.DataFrame) -> None:
    """Three comps at one address (a condo building) and one nearby: every rank is shown, none
    over another (they were printed on top of each other)."""
    comps = market.iloc[[0, 0, 0, 1]].assign(ppsf=[500.0, 510.0, 490.0, 520.0])
    comps.attrs = {"subject": "S1", "subject_location": (25.76, -80.19)}
    fig = plot.comps(comps)
    assert [t.get_text() for t in fig.axes[0].texts if t.get_text().isdigit()] == [
        "1",
        "2",
        "3",
        "4",
    ]
    assert overlapping_texts(fig) == []


def test_comps_chart_names_the_home_by_its_address(market: pd.DataFrame) -> None:
    """A client reads an address, not a listing id: ``subject_facts`` (what ``rf.comps`` keeps)
    gives the title and the legend; without it the id stands, as above."""
    comps = market.head(4).assign(ppsf=[500.0, 520.0, 480.0, 510.0])
    comps.attrs = {"subject": "S1", "subject_location": (25.76, -80.19),
                   "subject_facts": {"UnparsedAddress": "8662 Boynton Beach Blvd"}}  # fmt: skip
    ax = plot.comps(comps).axes[0]
    title = ax.get_title(loc="left").replace("\n", " ")
    assert "Comps for 8662 Boynton Beach Blvd" in title and "S1" not in title
    assert ax.get_legend().get_texts()[0].get_text() == "subject 8662 Boynton Beach Blvd"
