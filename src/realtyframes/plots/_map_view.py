"""The view of a map: the data's bounds with a margin, in a range of shapes, drawn
equal-distance (one degree of longitude is ``cos(latitude)`` as wide as one of latitude)."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.axes import Axes

from realtyframes.plots import _atlas

__all__ = ["ASPECT_RANGE", "KM_PER_DEGREE", "MARGIN", "MIN_MARGIN_KM", "View", "map_view"]

#: The view: the data's bounds plus MARGIN of their span on each side (at least MIN_MARGIN_KM),
#: widened (or heightened) only as far as needed to keep its ground width / height in ASPECT_RANGE.
MARGIN = 0.05
MIN_MARGIN_KM = 1.0
ASPECT_RANGE = (0.6, 1.8)
KM_PER_DEGREE = 111.195  # of latitude

View = _atlas.View


def _km_per_lon(lat: float) -> float:
    return KM_PER_DEGREE * max(math.cos(math.radians(lat)), 0.01)


def map_view(
    lat: np.ndarray,
    lon: np.ndarray,
    min_margin_km: float = MIN_MARGIN_KM,
    aspect_range: tuple[float, float] = ASPECT_RANGE,
) -> View:
    """``(lon0, lat0, lon1, lat1)``: the points' bounds with :data:`MARGIN` (at least
    ``min_margin_km``) on each side, widened or heightened to ``aspect_range`` (ground width
    / height).

    >>> [round(v, 3) for v in map_view(np.array([25.7, 26.7]), np.array([-80.3, -80.0]))]
    [-80.518, 25.65, -79.782, 26.75]
    """
    lat0, lat1, lon0, lon1 = np.nanmin(lat), np.nanmax(lat), np.nanmin(lon), np.nanmax(lon)
    per_lon = _km_per_lon((lat0 + lat1) / 2)
    pad_lat = max(MARGIN * (lat1 - lat0), min_margin_km / KM_PER_DEGREE)
    pad_lon = max(MARGIN * (lon1 - lon0), min_margin_km / per_lon)
    lat0, lat1, lon0, lon1 = lat0 - pad_lat, lat1 + pad_lat, lon0 - pad_lon, lon1 + pad_lon
    width, height = (lon1 - lon0) * per_lon, (lat1 - lat0) * KM_PER_DEGREE
    low, high = aspect_range
    if width < low * height:
        grow = (low * height - width) / per_lon / 2
        lon0, lon1 = lon0 - grow, lon1 + grow
    elif width > high * height:
        grow = (width / high - height) / KM_PER_DEGREE / 2
        lat0, lat1 = lat0 - grow, lat1 + grow
    return float(lon0), float(lat0), float(lon1), float(lat1)


def _ground(view: View) -> tuple[float, float]:
    """The view's width and height in km."""
    per_lon = _km_per_lon((view[1] + view[3]) / 2)
    return (view[2] - view[0]) * per_lon, (view[3] - view[1]) * KM_PER_DEGREE


def _frame(ax: Axes, view: View) -> None:
    """Limits on the view, equal distance, no latitude / longitude ticks."""
    ax.set_xlim(view[0], view[2])
    ax.set_ylim(view[1], view[3])
    ratio = KM_PER_DEGREE / _km_per_lon((view[1] + view[3]) / 2)
    ax.set_aspect(ratio, adjustable="box")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_color("0.6")
        spine.set_linewidth(0.8)
