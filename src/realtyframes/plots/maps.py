"""Maps without a network: listings over county and coast outlines, and comps.

No tiles: the report must work offline. The outlines are the US Census Bureau's cartographic
boundaries shipped with the package (``plots/boundaries``, decoded by ``plots/_atlas.py``). A map
is zoomed to its data (a small margin), drawn equal-distance (one degree of longitude is
``cos(latitude)`` as wide as one of latitude) with a scale bar instead of latitude / longitude
ticks, coloured by the median per hexagon (enough values) or per point (a few), and its place
names never overlap (``plots/_labels.py``).
"""

from __future__ import annotations

import math
import textwrap
from typing import Any, Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch

from realtyframes.plots import _atlas, _labels
from realtyframes.plots._base import _axes, _done, _fmt, _label, _need, _no_data, _title, money
from realtyframes.plots._map_view import (
    ASPECT_RANGE,
    KM_PER_DEGREE,
    MARGIN,
    MIN_MARGIN_KM,
    View,
    _frame,
    _ground,
    _km_per_lon,
    map_view,
)

#: The view's rule (``plots/_map_view.py``) is part of what a map promises; its names here too.
__all__ = ["ASPECT_RANGE", "CLIP_PERCENTILES", "COLOR_CHOICES", "KM_PER_DEGREE", "MARGIN",
           "MIN_MARGIN_KM", "colour_range", "comps", "listing_map", "map_view"]  # fmt: skip

#: The colour scale of a map runs between these percentiles of its values (a few $3,871/sq ft
#: outliers would otherwise paint every other point one colour); the colour bar says so.
CLIP_PERCENTILES = (2.0, 98.0)
#: Fewer values than this are never clipped.
MIN_TO_CLIP = 20
#: Cities named on a map (near the median of their points), the largest first; a name that
#: would overlap another is left out.
MAX_PLACE_NAMES = 16
#: The largest map area of a new figure, inches (width, height).
MAP_BOX = (6.4, 6.0)
#: Hexagons: drawn from HEX_MIN_VALUES coloured values on (fewer are drawn as points), about
#: HEXES_ACROSS along the view's longer side; a hexagon is coloured from MIN_PER_HEX values.
HEX_MIN_VALUES = 100
HEXES_ACROSS = 40
MIN_HEX_KM = 0.5
MIN_PER_HEX = 3
#: The outlines are generalized for 1:10M: they are drawn on views whose shorter side is at
#: least this long on the ground, and left out of closer views, where they would misplace the coast.
MIN_OUTLINE_KM = 20.0
KM_PER_MILE = 1.609344
SEA, LAND = "#e4eef6", "#fbfaf6"

#: What ``listing_map`` can colour by, besides any numeric column: name -> (label, kind).
COLOR_CHOICES: dict[str, tuple[str, str]] = {
    "ppsf": ("Price per sq ft (list price; sale price if closed)", "money"),
    "drop_pct": ("Latest price cut", "percent"),
    "ListPrice": ("List price", "money"),
    "DaysOnMarket": ("Days on market", "count"),
}


def _ppsf(frame: pd.DataFrame) -> np.ndarray:
    price = pd.to_numeric(frame["ListPrice"], errors="coerce").to_numpy(dtype="float64")
    if "ClosePrice" in frame.columns:
        close = pd.to_numeric(frame["ClosePrice"], errors="coerce").to_numpy(dtype="float64")
        price = np.where(np.isnan(close), price, close)
    area = pd.to_numeric(frame["LivingArea"], errors="coerce").to_numpy(dtype="float64")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(area > 0, price / area, np.nan)


def colour_range(values: np.ndarray) -> tuple[float, float, bool, bool]:
    """The colour scale's ends (:data:`CLIP_PERCENTILES` of the finite values) and whether
    values lie below / above them.

    >>> colour_range(np.array([*range(1, 100), 10_000.0]))[1] < 200
    True
    """
    finite = values[np.isfinite(values)]
    if not len(finite):
        return 0.0, 1.0, False, False
    if len(finite) < MIN_TO_CLIP:  # a handful of points: every one of them is the scale
        return float(finite.min()), float(finite.max()), False, False
    low, high = (float(v) for v in np.percentile(finite, CLIP_PERCENTILES))
    if high <= low:
        low, high = float(finite.min()), float(finite.max())
    return low, high, bool((finite < low).any()), bool((finite > high).any())


def _ordinal(value: float) -> str:
    """2 -> '2nd', 98 -> '98th', 11 -> '11th'."""
    n = int(value)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{value:g}{suffix}"


def _bar(ax: Axes, drawn: Any, cax: Axes | None, text: str, kind: str, extend: str) -> None:
    """A horizontal colour bar under the map (on ``cax`` when its figure was laid out for it)."""
    where: dict[str, Any] = {"cax": cax} if cax is not None else {"ax": ax, "shrink": 0.8}
    bar = ax.figure.colorbar(drawn, orientation="horizontal", format=_fmt(kind), extend=extend,
                             pad=0.03, **where)  # fmt: skip
    bar.ax.tick_params(labelsize=8)
    width = bar.ax.get_position().width * _figure_of(ax).get_figwidth()
    bar.set_label(_wrap(text, width, 8.5), fontsize=8.5, parse_math=False)


def _figure_of(ax: Axes) -> Figure:
    """The top-level Figure that ``ax`` is drawn on."""
    figure = ax.get_figure(root=True)
    if not isinstance(figure, Figure):  # pragma: no cover - an Axes always has a root figure
        raise TypeError("the map's Axes is on no Figure")
    return figure


def _wrap(text: str, width_in: float, size: float, em: float = 0.55) -> str:
    """``text`` wrapped to lines about ``width_in`` inches wide at font ``size``."""
    chars = max(20, int(width_in * 72 / (size * em)))  # em: a character's mean width
    return "\n".join(textwrap.fill(part, chars) for part in text.split("\n"))


# ----------------------------------------------------------------------------- the view


def _map_figure(
    view: View, title: str, bar_text: str, box: tuple[float, float] = MAP_BOX
) -> tuple[Figure, Axes, Axes, str]:
    """A figure sized to the view's shape: the map, a colour bar under it, room for the title
    (returned wrapped) and the credit. Laid out by hand: no layout engine's measuring pass."""
    width, height = _ground(view)
    aspect = width / height
    if aspect >= box[0] / box[1]:
        map_w, map_h = box[0], box[0] / aspect
    else:
        map_w, map_h = box[1] * aspect, box[1]
    fig_w = max(map_w + 0.4, 4.8)
    left = (fig_w - map_w) / 2
    title = _wrap(title, fig_w - left - 0.1, 12, em=0.62)  # bold
    top = 0.2 + 0.22 * (title.count("\n") + 1)
    bottom = 0.3 + 0.14 + 0.25 + 0.16 * (_wrap(bar_text, map_w, 8.5).count("\n") + 1)
    fig_h = top + map_h + bottom
    fig = Figure(figsize=(fig_w, fig_h))
    ax = fig.add_axes((left / fig_w, bottom / fig_h, map_w / fig_w, map_h / fig_h))
    cax = fig.add_axes((left / fig_w, (bottom - 0.3) / fig_h, map_w / fig_w, 0.14 / fig_h))
    return fig, ax, cax, title


def _base_map(
    ax: Axes | None, view: View, title: str, bar_text: str, size: tuple[float, float]
) -> tuple[Figure | None, Axes, Axes | None]:
    """The map's axes (a new figure shaped to the view, or ``ax``) with its title, outlines and
    frame; and the colour bar's axes of a new figure."""
    if ax is not None:
        _title(ax, title)
        fig, cax = None, None
    else:
        fig, ax, cax, title = _map_figure(view, title, bar_text, size)
        ax.set_title(title, loc="left", parse_math=False, fontsize=12, fontweight="bold", pad=8)
    _outlines(ax, view)
    _frame(ax, view)
    return fig, ax, cax


def _outlines(ax: Axes, view: View) -> None:
    """Sea, land, county lines, state lines and the coast, each clipped to the view, and their
    source; nothing on a view closer than :data:`MIN_OUTLINE_KM`."""
    if min(_ground(view)) < MIN_OUTLINE_KM:
        return
    _credit(ax)
    ax.set_facecolor(SEA)
    for region in _atlas.regions_in("land", view):
        ax.add_patch(PathPatch(region.path, facecolor=LAND, edgecolor="none", zorder=0.5))
    styles = {"county": ("0.55", 0.7, (0, (4, 2))), "state": ("0.35", 1.0, "solid"),
              "coast": ("#7c9cb5", 0.9, "solid")}  # fmt: skip
    for kind, (colour, width, dashes) in styles.items():
        lines = _atlas.lines_in(kind, view)
        if lines:
            ax.add_collection(LineCollection(lines, colors=colour, linewidths=width,
                                             linestyles=dashes, zorder=1), autolim=False)  # fmt: skip


def _scale_bar(ax: Axes, view: View, lat: np.ndarray, lon: np.ndarray) -> None:
    """A bar of a round number of miles, about a fifth of the map wide, in the bottom corner
    with the fewest listings."""
    width_km, _ = _ground(view)
    miles = max((m for m in (0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200) if m * KM_PER_MILE
                 <= width_km / 5), default=0.25)  # fmt: skip
    span = miles * KM_PER_MILE / _km_per_lon((view[1] + view[3]) / 2)
    dx, dy = view[2] - view[0], view[3] - view[1]
    left_count = int(((lon < view[0] + 0.3 * dx) & (lat < view[1] + 0.12 * dy)).sum())
    right_count = int(((lon > view[2] - 0.3 * dx) & (lat < view[1] + 0.12 * dy)).sum())
    x0 = view[0] + 0.04 * dx if left_count <= right_count else view[2] - 0.04 * dx - span
    y0 = view[1] + 0.035 * dy
    ax.plot([x0, x0 + span], [y0, y0], color="0.2", linewidth=2.2, solid_capstyle="butt",
            zorder=6)  # fmt: skip
    ax.annotate(f"{miles:g} mi", (x0 + span / 2, y0), xytext=(0, 3), textcoords="offset points",
                ha="center", va="bottom", fontsize=7.5, color="0.2", zorder=6)  # fmt: skip


def _credit(ax: Axes) -> None:
    ax.annotate(_atlas.ATLAS_CREDIT, (1, 0), xycoords="axes fraction", xytext=(0, -2),
                textcoords="offset points", ha="right", va="top", fontsize=6, color="0.45")  # fmt: skip


# ----------------------------------------------------------------------------- names


def _city_labels(frame: pd.DataFrame, lat: np.ndarray, lon: np.ndarray) -> list[_labels.Label]:
    """Each city's name at the median of its points (the largest :data:`MAX_PLACE_NAMES`)."""
    if "City" not in frame.columns:
        return []
    places = pd.DataFrame({"City": frame["City"].astype("str").to_numpy(), "lat": lat, "lon": lon})
    centres = (
        places.dropna()
        .groupby("City")
        .agg(lat=("lat", "median"), lon=("lon", "median"), n=("lat", "size"))
    )
    style = {"fontsize": 8, "fontweight": "bold", "color": "0.12", "zorder": 7}
    return [
        _labels.Label(str(city), float(row["lon"]), float(row["lat"]), style)
        for city, row in centres.nlargest(MAX_PLACE_NAMES, "n").iterrows()
    ]


def _county_labels(view: View, lat: np.ndarray, lon: np.ndarray) -> list[_labels.Label]:
    """Where two or more counties show, each one's name at the spots of it farthest from the
    listings (tried in that order), so it names the county without hiding the data."""
    counties = _atlas.regions_in("county", view)
    if len(counties) < 2:
        return []
    per_lon = _km_per_lon((view[1] + view[3]) / 2)
    gx, gy = np.meshgrid(
        np.linspace(view[0], view[2], 11)[1:-1], np.linspace(view[1], view[3], 13)[1:-1]
    )
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    style = {"fontsize": 8.5, "fontstyle": "italic", "color": "0.4", "zorder": 4}
    found = []
    for county in counties:
        spots = grid[county.path.contains_points(grid)]
        if not len(spots):
            continue
        dx = (spots[:, :1] - lon[None, :]) * per_lon
        dy = (spots[:, 1:] - lat[None, :]) * KM_PER_DEGREE
        far = np.sqrt(dx**2 + dy**2).min(axis=1) if len(lat) else np.zeros(len(spots))
        order = [(float(spots[i, 0]), float(spots[i, 1])) for i in np.argsort(-far)[:12]]
        x, y = order[0]
        name = f"{county.name} County"
        found.append(_labels.Label(name, x, y, style, others=order[1:], within=county.path))
    return found


def _place(ax: Axes, labels: list[_labels.Label]) -> None:
    """Place ``labels`` clear of each other and of what is drawn in words on the map already
    (the scale bar, the credit, a legend), once the axes have their final place."""
    figure = _figure_of(ax)
    if figure.get_layout_engine() is not None:
        figure.draw_without_rendering()  # a caller's figure: its layout places the axes first
    renderer = _labels.renderer_of(ax)
    legend = ax.get_legend()
    avoid = [t.get_window_extent(renderer) for t in ax.texts]
    avoid += [a.get_window_extent(renderer) for a in [*ax.lines, *([legend] if legend else [])]]
    _labels.place(ax, labels, avoid)


# ----------------------------------------------------------------------------- colour


def _population(data: pd.DataFrame, color: str) -> tuple[str, str]:
    """What the colour is (``"sale price per sq ft"`` ...) and of which listings, from the
    frame: its statuses and, for sales, their months."""
    status = data["StandardStatus"].astype("str") if "StandardStatus" in data.columns else None
    closed = bool(status is not None and (status == "Closed").all())
    active = bool(status is not None and (status == "Active").all())
    what = COLOR_CHOICES.get(color, (color, ""))[0]
    if color == "ppsf":
        what = "sale price per sq ft" if closed else "list price per sq ft" if active else what
    who = "closed sales" if closed else "active listings" if active else "listings"
    if closed and "CloseDate" in data.columns:
        days = pd.to_datetime(data["CloseDate"], errors="coerce", utc=True).dropna()
        if len(days):
            who += f" {days.min():%b %Y}–{days.max():%b %Y}"
    return what[:1].lower() + what[1:], who


def _hexagons(ax: Axes, lon: np.ndarray, lat: np.ndarray, values: np.ndarray, view: View) -> Any:
    """Hexagons (regular on the ground) coloured by the median of their values, those with at
    least :data:`MIN_PER_HEX`; the points of the others as grey dots under them."""
    width, height = _ground(view)
    side = max(max(width, height) / HEXES_ACROSS, MIN_HEX_KM)  # a hexagon's width, km
    sx = side / _km_per_lon((view[1] + view[3]) / 2)
    sy = math.sqrt(3) * side / KM_PER_DEGREE  # matplotlib's hexagons are sx wide, 2 sy / 3 tall
    grid = (max(1, round((view[2] - view[0]) / sx)), max(1, round((view[3] - view[1]) / sy)))
    ax.scatter(lon, lat, s=3, color="0.45", linewidths=0, zorder=2)
    return ax.hexbin(lon, lat, C=values, reduce_C_function=np.median, mincnt=MIN_PER_HEX,
                     gridsize=grid, extent=(view[0], view[2], view[1], view[3]), cmap="viridis", linewidths=0.4,
                     edgecolors="white", alpha=0.92, zorder=3)  # fmt: skip


def _points(ax: Axes, lon: np.ndarray, lat: np.ndarray, values: np.ndarray) -> Any:
    order = np.argsort(np.nan_to_num(values, nan=-np.inf))  # the highest drawn on top
    return ax.scatter(lon[order], lat[order], c=values[order], cmap="viridis", s=36,
                      edgecolors="white", linewidths=0.5, plotnonfinite=True, zorder=3)  # fmt: skip


def _located(frame: pd.DataFrame, coordinates: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` with Latitude / Longitude (and City) from ``coordinates`` by ListingId when it
    has none."""
    if {"Latitude", "Longitude"} <= set(frame.columns) or coordinates is None:
        return frame
    city = ["City"] if "City" in coordinates.columns and "City" not in frame.columns else []
    where = coordinates[["ListingId", "Latitude", "Longitude", *city]]  # city: to name places
    return frame.merge(where.drop_duplicates("ListingId"), on="ListingId", how="left")


#: Room kept under a new map for the colour bar's note on clipping.
_CLIP_ROOM = " Colours clipped to the 2nd–98th percentiles ($1,000–$1,000)."


def _what_and_who(
    data: pd.DataFrame, color: str, population: str | None, hexes: bool, n: int
) -> str:
    """The colour bar's words: what the colour is, of which listings, and n."""
    what, who = _population(data, color)
    who = population or who
    if hexes:
        return (f"Median {what} per hexagon of {MIN_PER_HEX} or more, {who} (n = {n:,}; "
                "grey dots: in hexagons with fewer).")  # fmt: skip
    return f"{what[:1].upper()}{what[1:]}, {who} (n = {n:,})."


def _bar_text(values: np.ndarray, label: str, kind: str) -> tuple[str, float, float, str]:
    """The colour bar's label (saying when the scale is clipped), its ends and its extension."""
    low, high, below, above = colour_range(values)
    if below or above:
        lo, hi = (_ordinal(v) for v in CLIP_PERCENTILES)
        label += f" Colours clipped to the {lo}–{hi} percentiles ({_label(low, kind)}–"
        label += f"{_label(high, kind)})."
    extend = {(False, False): "neither", (True, False): "min", (False, True): "max"}
    return label, low, high, extend.get((below, above), "both")


def _ringed(ax: Axes, marked: pd.DataFrame, label: str) -> None:
    ax.scatter(marked["Longitude"], marked["Latitude"], s=80, facecolors="none",
               edgecolors="#c44e52", linewidths=1.5, label=label, zorder=5)  # fmt: skip
    ax.legend(frameon=True, framealpha=0.9, edgecolor="none", fontsize=8, loc="upper left")


def listing_map(
    frame: pd.DataFrame,
    color: str = "ppsf",
    *,
    market: pd.DataFrame | None = None,
    marked: pd.DataFrame | None = None,
    marked_label: str = "marked",
    title: str | None = None,
    population: str | None = None,
    style: Literal["auto", "hexagons", "points"] = "auto",
    map_size: tuple[float, float] = MAP_BOX,
    fill: bool = False,
    ax: Axes | None = None,
) -> Figure | Axes:
    """Listings on a map of their counties and coast, zoomed to them: coloured by ``color``
    (``"ppsf"``, ``"drop_pct"`` for a ``price_drops`` frame, or any numeric column) as the
    median per hexagon (from :data:`HEX_MIN_VALUES` values; ``style="points"`` or
    ``"hexagons"`` to choose), with a colour bar saying what, of whom (``population``, e.g.
    ``"closed sales, last 12 months"``; by default read from the frame's statuses and dates) and
    n. City and county names never overlap. ``marked`` rows (comps, price cuts ...) are ringed. A
    frame without coordinates (``rf.price_drops``) takes them from ``market`` by ListingId; rows
    without coordinates are left out and counted in the title. Drawn offline. A new figure takes
    the view's shape, its map at most ``map_size`` (width, height) inches; ``fill=True`` widens
    (or heightens) the view to ``map_size``'s shape instead, so a narrow coast fills a report's
    fixed panel with the land around it; or pass ``ax``.

    >>> rf.plot.listing_map(sales, population="closed sales, last 12 months")  # doctest: +SKIP
    >>> rf.plot.listing_map(drops, color="drop_pct", market=market)  # doctest: +SKIP
    """
    data = _located(frame, market)
    _need(data, ["Latitude", "Longitude", *(["ListPrice", "LivingArea"] if color == "ppsf"
                                            else [color])], "frame", "listing_map")  # fmt: skip
    kind = COLOR_CHOICES.get(color, (color, "number"))[1]
    values = (
        _ppsf(data)
        if color == "ppsf"
        else pd.to_numeric(data[color], errors="coerce").to_numpy(dtype="float64")
    )
    lat = pd.to_numeric(data["Latitude"], errors="coerce").to_numpy(dtype="float64")
    lon = pd.to_numeric(data["Longitude"], errors="coerce").to_numpy(dtype="float64")
    ok = ~np.isnan(lat) & ~np.isnan(lon)
    heading = title or f"{len(data):,} listings by {_population(data, color)[0]}"
    if not ok.any():
        fig, ax = _axes(ax, (7.0, 6.0))
        _no_data(ax, heading)
        return _done(fig, ax)
    missing = int((~ok).sum())
    heading += f" ({missing:,} without coordinates left out)" if missing else ""
    rings = _located(marked, market) if marked is not None and len(marked) else None
    view = map_view(
        np.concatenate(
            [lat[ok], *([rings["Latitude"].to_numpy(float)] if rings is not None else [])]
        ),
        np.concatenate(
            [lon[ok], *([rings["Longitude"].to_numpy(float)] if rings is not None else [])]
        ),
        aspect_range=(map_size[0] / map_size[1],) * 2 if fill else ASPECT_RANGE,
    )
    coloured = ok & np.isfinite(values)
    hexes = style == "hexagons" or (style == "auto" and coloured.sum() >= HEX_MIN_VALUES)
    text = _what_and_who(data[ok], color, population, hexes, int(coloured.sum()))
    fig, ax, cax = _base_map(ax, view, heading, text + _CLIP_ROOM, map_size)
    if hexes:
        drawn = _hexagons(ax, lon[coloured], lat[coloured], values[coloured], view)
    else:
        drawn = _points(ax, lon[ok], lat[ok], values[ok])
    # the scale spans what is drawn: the hexagons' medians, or the points
    text, low, high, extend = _bar_text(np.asarray(drawn.get_array(), dtype=float), text, kind)
    drawn.set_clim(low, high)
    _bar(ax, drawn, cax, text, kind, extend)
    if rings is not None:
        _ringed(ax, rings, marked_label)
    _scale_bar(ax, view, lat[ok], lon[ok])
    ok_lat, ok_lon = lat[ok], lon[ok]
    _place(ax, _city_labels(data[ok], ok_lat, ok_lon) + _county_labels(view, ok_lat, ok_lon))
    return _done(fig, ax)


def comps(comps_frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure | Axes:
    """The comps of ``rf.comps`` around their subject (a star) on a map of their counties and
    coast, coloured by sale $/sq ft and numbered by rank; the title gives the estimate and its
    range.

    >>> rf.plot.comps(rf.comps(market, "A12345678"))  # doctest: +SKIP
    """
    _need(comps_frame, ["Latitude", "Longitude", "ppsf"], "comps", "comps")
    est: dict[str, Any] = comps_frame.attrs.get("estimate") or {}
    facts = comps_frame.attrs.get("subject_facts") or {}  # the home by address, as a page says
    subject = facts.get("UnparsedAddress") or comps_frame.attrs.get("subject", "the subject")
    title = f"Comps for {subject}"
    if est.get("n"):
        title += f": estimate {money(est['value'])} ({money(est['low'])}–{money(est['high'])}, n={est['n']})"
    if comps_frame.empty:
        fig, ax = _axes(ax, (7.0, 6.0))
        _no_data(ax, title)
        return _done(fig, ax)
    where = comps_frame.attrs.get("subject_location")
    lat = comps_frame["Latitude"].to_numpy(dtype="float64")
    lon = comps_frame["Longitude"].to_numpy(dtype="float64")
    view = map_view(np.append(lat, where[0]) if where else lat,
                    np.append(lon, where[1]) if where else lon, min_margin_km=0.3)  # fmt: skip
    ppsf = pd.to_numeric(comps_frame["ppsf"], errors="coerce").to_numpy(dtype="float64")
    text = f"Sale price per sq ft of the comps (n = {int(np.isfinite(ppsf).sum())})."
    text, low, high, extend = _bar_text(ppsf, text, "money")
    fig, ax, cax = _base_map(ax, view, title, text, MAP_BOX)
    points = ax.scatter(lon, lat, c=ppsf, cmap="viridis", s=60, edgecolors="0.2",
                        linewidths=0.5, zorder=3)  # fmt: skip
    points.set_clim(low, high)
    if where is not None:
        ax.scatter([where[1]], [where[0]], marker="*", s=220, color="#c44e52", edgecolors="0.2",
                   label=f"subject {subject}", zorder=5)  # fmt: skip
        ax.legend(frameon=True, framealpha=0.9, edgecolor="none", fontsize=8, loc="upper left")
    _bar(ax, points, cax, text, "money", extend)
    _scale_bar(ax, view, lat, lon)
    ranks = [_labels.Label(str(k), float(x), float(y), {"fontsize": 8, "zorder": 6})
             for k, (x, y) in enumerate(zip(lon, lat, strict=True), start=1)]  # fmt: skip
    _place(ax, ranks)  # numbered by rank; the numbers of comps in one building kept apart
    return _done(fig, ax)
