"""Small multiples (``rf.plot.trend_panels``, ``rf.plot.traffic_panels``) and the price index
chart (``rf.plot.price_index``): what each draws, read off the figure objects, and that nothing
leaves the figure or runs together."""

from __future__ import annotations

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from chart_checks import beyond_data, outside, overlapping_ticks
from realtyframes import plot


@pytest.fixture(scope="module")
def quarters() -> pd.DataFrame:
    """Six markets by quarter, the last quarter not over; market "F" the largest."""
    periods = pd.period_range("2024Q3", "2026Q2", freq="Q")
    rows = []
    for k, city in enumerate("ABCDEF"):
        for i, q in enumerate(periods):
            rows.append({"City": city, "period_begin": q.start_time,
                         "period_end": q.end_time.normalize(), "complete": i < len(periods) - 1,
                         "median_sale_price": 400_000.0 * (1 + 0.1 * k) * (1 + 0.01 * i),
                         "median_sale_price_n": 10 * (k + 1) + i, "homes_sold": 10 * (k + 1) + i,
                         "median_dom": 90.0 + i})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame.attrs = {"by": ["City"], "freq": "Q"}
    return frame


def test_trend_panels_draw_a_panel_per_metric_with_one_legend(quarters: pd.DataFrame) -> None:
    metrics = ["median_sale_price", "homes_sold", "median_dom"]
    fig = plot.trend_panels(quarters, metrics)
    assert isinstance(fig, Figure) and fig.get_layout_engine() is None  # fixed margins
    axes = fig.axes
    assert len(axes) == 3
    assert [ax.get_title(loc="left") for ax in axes] == [
        "Median sale price (USD)", "Homes sold (homes)", "Median days on market (days)"]  # fmt: skip
    # the same market has the same colour in every panel; the four largest are in colour
    for ax in axes:
        coloured = {ln.get_color() for ln in ax.lines if ln.get_color() != "0.75"}
        assert len(coloured) == plot.HIGHLIGHTED
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    # each coloured market with the sales behind its latest complete quarter's median
    assert labels[0] == "C: n=36 sales in 2026 Q1"
    assert "F: n=66 sales in 2026 Q1" in labels
    assert labels[-2:] == ["2 other markets (grey)", plot.PARTIAL_LABEL]
    assert fig._suptitle is not None and fig._suptitle.get_text() == "By quarter and City"
    # the partial quarter: a hollow point on a dotted line from the last complete one
    dotted = [ln for ln in axes[0].lines if ln.get_linestyle() == ":" and len(ln.get_xdata())]
    assert dotted and all(ln.get_markerfacecolor() == "white" for ln in dotted)
    last = quarters["period_begin"].max()
    assert {mdates.num2date(mdates.date2num(ln.get_xdata()[-1])).date() for ln in dotted} == {
        last.date()}  # fmt: skip
    assert outside(fig) == [] and overlapping_ticks(fig) == []
    with pytest.raises(ValueError, match="`metric` must be one of"):
        plot.trend_panels(quarters, ["bogus"])
    with pytest.raises(ValueError, match="at least one metric"):
        plot.trend_panels(quarters, [])


@pytest.fixture(scope="module")
def index() -> pd.DataFrame:
    months = pd.period_range("2025-01", "2026-06", freq="M")
    value = 100 * np.exp(0.004 * np.arange(len(months)))
    frame = pd.DataFrame({
        "period_begin": months.start_time, "period_end": months.end_time.normalize(),
        "index": value, "index_low": value * 0.92, "index_high": value * 1.08,
        "n": np.arange(len(months)) + 40, "median_index": value * (1 + 0.1 * np.sin(np.arange(len(months)))),
        "complete": [True] * (len(months) - 1) + [False],
    })  # fmt: skip
    frame.loc[0, ["index", "index_low", "index_high"]] = 100.0
    frame.attrs = {"method": "hedonic", "freq": "M", "base": pd.Timestamp("2025-01-01"), "by": []}
    return frame


def test_price_index_chart_shows_the_band_the_sales_and_the_median(index: pd.DataFrame) -> None:
    fig = plot.price_index(index)
    top, bars = fig.axes
    assert fig._suptitle.get_text() == "Constant-quality price index (hedonic), 100 = Jan 2025"
    (band,) = [c for c in top.collections if isinstance(c, PolyCollection)]
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(index["index_low"].min())
    assert ys.max() == pytest.approx(index["index_high"].max())
    solid = [ln for ln in top.lines if ln.get_linestyle() == "-" and len(ln.get_xdata()) > 2]
    assert len(solid) == 1 and np.allclose(solid[0].get_ydata(), index["index"].iloc[:-1])
    dashed = [ln for ln in top.lines if ln.get_linestyle() == "--" and len(ln.get_xdata()) > 2]
    assert len(dashed) == 1 and np.allclose(dashed[0].get_ydata(), index["median_index"].iloc[:-1])
    assert any(list(ln.get_ydata()) == [100, 100] for ln in top.lines)  # the base level
    # a bar per month: the complete months full, the month not over pale
    heights = [p.get_height() for p in bars.patches]
    assert sum(h > 0 for h in heights) == len(index)
    assert sorted(h for h in heights if h > 0) == sorted(index["n"].tolist())
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[0] == "95 % band of the index" and plot.PARTIAL_LABEL in labels
    # the median is indexed to the index's own base period, named as the title names it
    assert "Median sale price, 100 = Jan 2025 (moves with the mix sold)" in labels
    assert outside(fig) == [] and overlapping_ticks(fig) == []
    assert len(plot.price_index(index, median=None).axes[0].lines) == len(top.lines) - 2
    grouped = index.copy()
    grouped.attrs = {**index.attrs, "by": ["City"]}
    with pytest.raises(ValueError, match="draws one index"):
        plot.price_index(grouped)


def test_a_panel_never_draws_axes_outside_its_data() -> None:
    """``--trends-freq W --city Miami --as-of 2024-02-01``: weeks of a thin market, where a share
    had one finite week (0 %) and the panel ran from 2021 to 2025 and from -5.5 % to +5.5 %
    (matplotlib's limits around a single point). Each panel's limits now lie within its data's
    periods and values plus a margin; the control (matplotlib's own limits) fails the check."""
    weeks = pd.date_range("2023-08-07", periods=26, freq="W-MON")
    frame = pd.DataFrame({"period_begin": weeks, "period_end": weeks + pd.Timedelta(days=6),
                          "complete": [True] * 25 + [False],
                          "homes_sold": np.arange(26) % 7,
                          "off_market_in_two_weeks": [np.nan] * 5 + [0.0] + [np.nan] * 20,
                          "price_cut_share": [0.0] * 26})  # fmt: skip
    frame.attrs = {"by": [], "freq": "W"}
    metrics = ["homes_sold", "off_market_in_two_weeks", "price_cut_share"]
    fig = plot.trend_panels(frame, metrics, ncols=3)
    for ax, metric in zip(fig.axes, metrics, strict=True):
        assert beyond_data(ax, frame["period_begin"], frame[metric]) == [], metric
    # the control: one point left to matplotlib's autoscaling
    control = Figure().add_subplot()
    control.plot(frame["period_begin"].iloc[[5]], [0.0], marker="o")
    assert beyond_data(control, frame["period_begin"], [0.0]) == ["left", "right", "bottom"]
