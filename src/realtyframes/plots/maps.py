"""Maps without a network: listings as points on longitude / latitude, and comps.

No tiles and no basemap: the report must work offline. The axes are equal-distance (one degree of
longitude is drawn ``cos(latitude)`` as wide as one of latitude), so distances read true.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from realtyframes.plots._base import (
    _axes,
    _done,
    _fmt,
    _label,
    _need,
    _no_data,
    _style,
    _title,
    money,
)

__all__ = ["CLIP_PERCENTILES", "COLOR_CHOICES", "colour_range", "comps", "listing_map"]

#: The colour scale of a map runs between these percentiles of its values (a few $3,871/sq ft
#: outliers would otherwise paint every other point one colour); the colour bar says so.
CLIP_PERCENTILES = (2.0, 98.0)
#: Fewer values than this are never clipped.
MIN_TO_CLIP = 20
#: Cities named on a map (at the median of their points), the largest first.
MAX_PLACE_NAMES = 12

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


def _colour_bar(ax: Axes, points: Any, values: np.ndarray, label: str, kind: str) -> None:
    """A colour bar clipped at robust percentiles, saying so (and where) in its label."""
    low, high, below, above = colour_range(values)
    points.set_clim(low, high)
    extend = {(False, False): "neither", (True, False): "min", (False, True): "max"}.get(
        (below, above), "both"
    )
    bar = ax.figure.colorbar(points, ax=ax, shrink=0.8, pad=0.02, format=_fmt(kind), extend=extend)
    if below or above:
        lo, hi = (_ordinal(v) for v in CLIP_PERCENTILES)
        label += f"\n(colours clipped to the {lo}–{hi} percentiles: {_label(low, kind)}–"
        label += f"{_label(high, kind)})"
    bar.set_label(label, fontsize=9)


def _place_names(ax: Axes, frame: pd.DataFrame, lat: np.ndarray, lon: np.ndarray) -> None:
    """Each city's name at the median of its points (the largest :data:`MAX_PLACE_NAMES`)."""
    if "City" not in frame.columns:
        return
    places = pd.DataFrame({"City": frame["City"].astype("str").to_numpy(), "lat": lat, "lon": lon})
    places = places.dropna()
    centres = places.groupby("City").agg(lat=("lat", "median"), lon=("lon", "median"),
                                         n=("lat", "size"))  # fmt: skip
    halo = [patheffects.withStroke(linewidth=2.5, foreground="white")]
    for city, row in centres.nlargest(MAX_PLACE_NAMES, "n").iterrows():
        ax.annotate(str(city), (row["lon"], row["lat"]), ha="center", va="center", fontsize=8,
                    fontweight="bold", color="0.15", path_effects=halo, zorder=5)  # fmt: skip


def _degrees(value: float, _pos: object = None) -> str:
    return f"{value:.2f}°"


def _equal_distance(ax: Axes, lat: np.ndarray) -> None:
    middle = float(np.nanmean(lat)) if len(lat) else 0.0
    ax.set_aspect(1 / max(math.cos(math.radians(middle)), 0.01), adjustable="datalim")
    ax.set_xlabel("Longitude")
    ax.set_ylabel("Latitude")
    for axis in (ax.xaxis, ax.yaxis):  # few, short labels: they never run together
        axis.set_major_locator(MaxNLocator(nbins=4))
        axis.set_major_formatter(FuncFormatter(_degrees))
    _style(ax, "y")
    ax.grid(axis="x", color="0.9", linewidth=0.6)


def _located(frame: pd.DataFrame, coordinates: pd.DataFrame | None) -> pd.DataFrame:
    """``frame`` with Latitude / Longitude (from ``coordinates`` by ListingId when it has none)."""
    if {"Latitude", "Longitude"} <= set(frame.columns) or coordinates is None:
        return frame
    where = coordinates[["ListingId", "Latitude", "Longitude"]].drop_duplicates("ListingId")
    return frame.merge(where, on="ListingId", how="left")


def listing_map(
    frame: pd.DataFrame,
    color: str = "ppsf",
    *,
    market: pd.DataFrame | None = None,
    marked: pd.DataFrame | None = None,
    marked_label: str = "marked",
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure | Axes:
    """Listings as points on longitude / latitude, coloured by ``color`` (``"ppsf"``,
    ``"drop_pct"`` for a ``price_drops`` frame, or any numeric column), with a colour bar;
    ``marked`` rows (comps, price cuts ...) are ringed. A frame without coordinates (e.g.
    ``rf.price_drops``) takes them from ``market`` by ListingId. Rows without coordinates are
    left out and counted in the title.

    >>> rf.plot.listing_map(market[market.StandardStatus == "Active"], color="ppsf")  # doctest: +SKIP
    >>> rf.plot.listing_map(drops, color="drop_pct", market=market)  # doctest: +SKIP
    """
    data = _located(frame, market)
    needed = ["Latitude", "Longitude"] + (
        ["ListPrice", "LivingArea"] if color == "ppsf" else [color]
    )
    _need(data, needed, "frame", "listing_map")
    label, kind = COLOR_CHOICES.get(color, (color, "number"))
    values = (
        _ppsf(data)
        if color == "ppsf"
        else pd.to_numeric(data[color], errors="coerce").to_numpy(dtype="float64")
    )
    lat = pd.to_numeric(data["Latitude"], errors="coerce").to_numpy(dtype="float64")
    lon = pd.to_numeric(data["Longitude"], errors="coerce").to_numpy(dtype="float64")
    ok = ~np.isnan(lat) & ~np.isnan(lon)
    fig, ax = _axes(ax, (7.0, 6.0))
    heading = title or f"{len(data):,} listings by {label.lower()}"
    if not ok.any():
        _no_data(ax, heading)
        return _done(fig, ax)
    missing = int((~ok).sum())
    heading += f" ({missing:,} without coordinates left out)" if missing else ""
    order = np.argsort(np.nan_to_num(values[ok], nan=-np.inf))  # the highest drawn on top
    points = ax.scatter(lon[ok][order], lat[ok][order], c=values[ok][order], cmap="viridis",
                        s=40 if ok.sum() < 300 else 12, alpha=0.85, linewidths=0,
                        plotnonfinite=True)  # fmt: skip
    _colour_bar(ax, points, values[ok], label, kind)
    _place_names(ax, data[ok], lat[ok], lon[ok])
    if marked is not None and len(marked):
        where = _located(marked, market)
        ax.scatter(where["Longitude"], where["Latitude"], s=80, facecolors="none",
                   edgecolors="#c44e52", linewidths=1.5, label=marked_label)  # fmt: skip
        ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    _equal_distance(ax, lat[ok])
    _title(ax, heading)
    return _done(fig, ax)


def comps(comps_frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure | Axes:
    """The comps of ``rf.comps`` around their subject (a star), coloured by sale $/sq ft and
    numbered by rank; the title gives the estimate and its range.

    >>> rf.plot.comps(rf.comps(market, "A12345678"))  # doctest: +SKIP
    """
    _need(comps_frame, ["Latitude", "Longitude", "ppsf"], "comps", "comps")
    fig, ax = _axes(ax, (7.0, 6.0))
    est: dict[str, Any] = comps_frame.attrs.get("estimate") or {}
    subject = comps_frame.attrs.get("subject", "the subject")
    title = f"Comps for {subject}"
    if est.get("n"):
        title += f": estimate {money(est['value'])} ({money(est['low'])}–{money(est['high'])}, n={est['n']})"
    if comps_frame.empty:
        _no_data(ax, title)
        return _done(fig, ax)
    points = ax.scatter(comps_frame["Longitude"], comps_frame["Latitude"], c=comps_frame["ppsf"],
                        cmap="viridis", s=60, edgecolors="0.2", linewidths=0.5)  # fmt: skip
    for rank, row in enumerate(comps_frame.itertuples(index=False), start=1):
        ax.annotate(str(rank), (row.Longitude, row.Latitude), xytext=(4, 4),
                    textcoords="offset points", fontsize=8)  # fmt: skip
    where = comps_frame.attrs.get("subject_location")
    if where is not None:
        ax.scatter([where[1]], [where[0]], marker="*", s=220, color="#c44e52", edgecolors="0.2",
                   label=f"subject {subject}")  # fmt: skip
        ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    ppsf = pd.to_numeric(comps_frame["ppsf"], errors="coerce").to_numpy(dtype="float64")
    _colour_bar(ax, points, ppsf, "Sale price per sq ft (USD)", "money")
    lats = [*comps_frame["Latitude"].astype("float64"), *([where[0]] if where else [])]
    _equal_distance(ax, np.asarray(lats))
    _title(ax, title)
    return _done(fig, ax)
