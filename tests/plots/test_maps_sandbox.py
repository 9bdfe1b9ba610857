"""The market map on the sandbox's South Florida market, as a reader sees it: county and coast
outlines under the data, zoomed to the data, hexagons holding the median of their sales, and
place names that never overlap (with a control on which the naive placement does overlap)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch
from matplotlib.path import Path as MplPath

import realtyframes as rf
from chart_checks import outside, overlapping_texts
from realtyframes.plots import maps
from realtyframes.report import MarketReportOptions, load_market_frames

DAY = "2026-06-29"  # a day before the shared sandbox's clock


@pytest.fixture(scope="module")
def listings(sandbox_url: str, tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The report's listings frame of the shared sandbox (14 cities in 3 counties)."""
    options = MarketReportOptions(as_of=DAY, source="test sandbox")
    cache = tmp_path_factory.mktemp("maps-cache")
    with rf.Client(base_url=sandbox_url, cache_dir=cache, progress=False) as client:
        return load_market_frames(client, options).listings


@pytest.fixture(scope="module")
def sales(listings: pd.DataFrame) -> pd.DataFrame:
    return listings[listings["StandardStatus"].astype("str") == "Closed"].reset_index(drop=True)


@pytest.fixture(scope="module")
def sales_map(sales: pd.DataFrame) -> Figure:
    fig = rf.plot.listing_map(sales, population="closed sales, last 12 months")
    assert isinstance(fig, Figure)
    return fig


def _coordinates(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return frame["Latitude"].to_numpy(dtype=float), frame["Longitude"].to_numpy(dtype=float)


def test_county_lines_coast_and_land_are_drawn_under_the_data_inside_the_view(
    sales_map: Figure,
) -> None:
    ax = sales_map.axes[0]
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    lines = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(lines) >= 2  # county lines (Broward / Miami-Dade, Palm Beach) and the coast
    hexes = next(c for c in ax.collections if isinstance(c, PolyCollection))
    for collection in lines:
        assert collection.get_zorder() < hexes.get_zorder()
        for segment in collection.get_segments():  # clipped to the view before drawing
            assert (segment[:, 0] >= x0 - 1e-9).all() and (segment[:, 0] <= x1 + 1e-9).all()
            assert (segment[:, 1] >= y0 - 1e-9).all() and (segment[:, 1] <= y1 + 1e-9).all()
    land = [p for p in ax.patches if isinstance(p, PathPatch)]
    assert land and all(p.get_zorder() < hexes.get_zorder() for p in land)
    names = {t.get_text() for t in ax.texts}
    assert {"Broward County", "Palm Beach County"} & names  # counties named where they help
    assert any(t.startswith("Boundaries: US Census Bureau") for t in names)  # the source
    assert not ax.get_xticks().size and not ax.get_yticks().size  # no bare lat / lon axes
    assert any(t.endswith(" mi") for t in names)  # a scale bar instead
    assert outside(sales_map) == []


def test_the_map_is_zoomed_to_the_data_with_a_small_margin(
    sales: pd.DataFrame, sales_map: Figure
) -> None:
    """Every sale is inside the view; the view's long side (north-south here) runs at most the
    margin past the data; its short side is widened only to the smallest shape allowed."""
    lat, lon = _coordinates(sales)
    ax = sales_map.axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 < lon.min() and lon.max() < x1 and y0 < lat.min() and lat.max() < y1
    span = lat.max() - lat.min()
    pad = max(maps.MARGIN * span, maps.MIN_MARGIN_KM / maps.KM_PER_DEGREE)
    assert y0 == pytest.approx(lat.min() - pad) and y1 == pytest.approx(lat.max() + pad)
    assert lat.max() - lat.min() > 0.85 * (y1 - y0)  # no third of the frame empty
    middle = math.radians((y0 + y1) / 2)
    width, height = (x1 - x0) * math.cos(middle), y1 - y0
    assert width / height == pytest.approx(maps.ASPECT_RANGE[0])  # the narrowest shape allowed
    assert (lon.min() + lon.max()) / 2 == pytest.approx((x0 + x1) / 2)  # widened evenly
    assert ax.get_aspect() == pytest.approx(1 / math.cos(middle), rel=1e-3)  # distances read true
    box = ax.get_position()
    assert box.width * sales_map.get_figwidth() / (
        box.height * sales_map.get_figheight()
    ) == pytest.approx(width / height, rel=0.02)  # the figure is shaped like the view


def test_place_names_never_overlap_and_the_naive_placement_does(
    sales: pd.DataFrame, sales_map: Figure
) -> None:
    """The names of the 14 cities (Hallandale Beach is 2.5 km from Aventura) are placed around
    their points; no two drawn texts overlap. The control: the same names printed at each city's
    median point, as before, run into each other — and the check says so."""
    ax = sales_map.axes[0]
    assert overlapping_texts(sales_map) == []
    cities = set(sales["City"].astype("str"))
    named = {t.get_text() for t in ax.texts} & cities
    assert {"Hallandale Beach", "Aventura", "Sunny Isles Beach", "Hollywood"} <= named
    assert len(named) >= len(cities) - 1

    # the control, on the old map's geometry (7 x 6 in, constrained layout): the names printed
    # centred on each city's median point, as before, run into each other, and the check says so
    lat, lon = _coordinates(sales)
    old = Figure(figsize=(7.0, 6.0), layout="constrained")
    old_ax = old.add_subplot()
    old_ax.scatter(lon, lat, s=12)
    old_ax.set_aspect(1 / math.cos(math.radians(lat.mean())), adjustable="datalim")
    centres = sales.groupby("City").agg(lat=("Latitude", "median"), lon=("Longitude", "median"))
    for city, row in centres.iterrows():
        old_ax.annotate(str(city), (row["lon"], row["lat"]), ha="center", va="center",
                        fontsize=8, fontweight="bold")  # fmt: skip
    assert ("Aventura", "Hallandale Beach") in overlapping_texts(old)
    # the placer on that same geometry (the caller's Axes): no overlap, every name kept
    same = Figure(figsize=(7.0, 6.0), layout="constrained")
    placed = rf.plot.listing_map(sales, ax=same.add_subplot())
    assert overlapping_texts(same) == [] and outside(same) == []
    assert {t.get_text() for t in placed.texts} >= {"Hallandale Beach", "Aventura"}


def test_each_hexagon_holds_the_median_of_its_sales(sales: pd.DataFrame, sales_map: Figure) -> None:
    """The colour of a hexagon is the pandas median of the sale $/sq ft of the sales inside it,
    and only hexagons of at least MIN_PER_HEX sales are coloured; the hexagons are regular on the
    ground; the colour bar says what, of whom, and n."""
    ax, bar = sales_map.axes
    hexes = next(c for c in ax.collections if isinstance(c, PolyCollection))
    shape = hexes.get_paths()[0].vertices
    lat, lon = _coordinates(sales)
    ppsf = pd.Series(sales["ClosePrice"].to_numpy(float) / sales["LivingArea"].to_numpy(float))
    points = np.column_stack([lon, lat])
    values = np.asarray(hexes.get_array())
    assert len(values) >= 20
    for centre, value in zip(hexes.get_offsets(), values, strict=True):
        inside = MplPath(shape + centre).contains_points(points)
        assert inside.sum() >= maps.MIN_PER_HEX
        assert value == pytest.approx(ppsf[inside].median())
    middle = math.cos(math.radians(float(np.mean(ax.get_ylim()))))
    wide = (shape[:, 0].max() - shape[:, 0].min()) * middle
    tall = shape[:, 1].max() - shape[:, 1].min()
    assert tall / wide == pytest.approx(2 / math.sqrt(3), rel=0.03)  # a regular hexagon
    label = " ".join(bar.get_xlabel().split())
    assert label.startswith(
        "Median sale price per sq ft per hexagon of 3 or more, closed sales, last 12 months"
    )
    assert f"(n = {len(sales):,};" in label
    lo, hi = np.percentile(values, maps.CLIP_PERCENTILES)
    assert hexes.get_clim() == pytest.approx((lo, hi))  # the scale spans the medians drawn
    assert "Colours clipped to the 2nd–98th percentiles" in label


def test_a_few_listings_are_points_and_a_close_view_leaves_the_outlines_out(
    listings: pd.DataFrame,
) -> None:
    """Under HEX_MIN_VALUES values a map draws each listing; a view of one city (a few km) has
    no 1:10M outlines, which would put its coast in the wrong place."""
    active = listings[(listings["StandardStatus"].astype("str") == "Active")
                      & (listings["City"].astype("str") == "Miami Beach")]  # fmt: skip
    assert 0 < len(active) < maps.HEX_MIN_VALUES
    ax = rf.plot.listing_map(active).axes[0]
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(ax.collections[0].get_offsets()) == len(active)
    assert not [c for c in ax.collections if isinstance(c, LineCollection)] and not ax.patches
    assert not any(t.get_text().startswith("Boundaries") for t in ax.texts)


def test_the_example_map_in_the_docs_is_small() -> None:
    example = Path(__file__).parents[2] / "docs" / "map-example.png"
    assert example.exists() and example.stat().st_size < 300_000


def test_a_smaller_map_keeps_its_shape_and_its_names_apart(sales: pd.DataFrame) -> None:
    """``map_size`` bounds the map area of a new figure (a report page's panel); the view and its
    shape are the same, the names still never overlap (fewer may fit)."""
    fig = rf.plot.listing_map(sales, map_size=(3.0, 3.5))
    ax = fig.axes[0]
    box = ax.get_position()
    width, height = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
    assert height == pytest.approx(3.5) and width == pytest.approx(3.5 * maps.ASPECT_RANGE[0])
    assert overlapping_texts(fig) == [] and outside(fig) == []
    assert {t.get_text() for t in ax.texts} & {"Miami", "Fort Lauderdale", "West Palm Beach"}


def test_a_filled_map_takes_its_panels_shape_around_a_narrow_coast(sales: pd.DataFrame) -> None:
    """``fill=True`` (the client report's landscape panel): the view widens to ``map_size``'s
    shape, so the coast's strip sits in the land and sea around it; every sale stays in view.
    Control: without ``fill`` the same panel gets the strip's own narrow shape."""
    fig = rf.plot.listing_map(sales, map_size=(4.4, 2.4), fill=True)
    ax = fig.axes[0]
    box = ax.get_position()
    width, height = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
    assert width == pytest.approx(4.4) and height == pytest.approx(2.4)
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    lon, lat = sales["Longitude"].astype(float), sales["Latitude"].astype(float)
    assert x0 < lon.min() and lon.max() < x1 and y0 < lat.min() and lat.max() < y1
    assert overlapping_texts(fig) == [] and outside(fig) == []
    control = rf.plot.listing_map(sales, map_size=(4.4, 2.4))
    narrow = control.axes[0].get_position().width * control.get_figwidth()
    assert narrow == pytest.approx(2.4 * maps.ASPECT_RANGE[0])  # a third of the panel's width
