"""County, state and coast outlines for the maps, offline: the US Census Bureau's cartographic
boundaries (2017) as packaged by us-atlas 3.0.1 (``boundaries/counties-10m.json.gz``, TopoJSON;
see ``boundaries/README.md``), decoded once per process and clipped to a map's view.

TopoJSON in short: every boundary line is stored once as an *arc* of quantized, delta-encoded
integer points; a polygon ring is a list of arc indices (``~i`` is arc ``i`` reversed). An arc two
counties share is a county line; an arc of the nation object is the coast (or a land border).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
from matplotlib.path import Path
from matplotlib.transforms import Bbox

#: The boundary file shipped with the package (us-atlas 3.0.1, ``counties-10m.json``, gzipped).
ATLAS_FILE = "counties-10m.json.gz"
#: Attribution drawn on every map that uses the outlines.
ATLAS_CREDIT = "Boundaries: US Census Bureau 2017 (generalized, 1:10M)"

View = tuple[float, float, float, float]  # lon0, lat0, lon1, lat1


@dataclass(frozen=True)
class Region:
    """A county (or the nation's land): its name, its outline as one Path, and its bounds."""

    name: str
    path: Path
    bounds: np.ndarray  # lon0, lat0, lon1, lat1


@dataclass(frozen=True)
class Atlas:
    """The decoded boundaries: arcs as (n, 2) lon / lat arrays with their bounds, the arcs of each
    kind of line, and the polygons of the counties and of the land (TopoJSON geometries, made
    into Paths only when a map needs them) with their bounds."""

    arcs: tuple[np.ndarray, ...]
    arc_bounds: np.ndarray  # (n_arcs, 4)
    county_lines: np.ndarray  # arc indices shared by two counties
    state_lines: np.ndarray  # arc indices shared by two states
    coast: np.ndarray  # arc indices of the nation's outline
    polygons: dict[str, tuple[list[dict[str, Any]], np.ndarray]]  # kind -> geometries, bounds


def _decode_arcs(topology: dict[str, Any]) -> list[np.ndarray]:
    """Every arc as lon / lat points: the delta-encoded integers summed per arc, then scaled."""
    raw = topology["arcs"]
    lengths = np.fromiter((len(a) for a in raw), dtype=np.int64, count=len(raw))
    flat = np.fromiter(
        (v for arc in raw for point in arc for v in point[:2]),
        dtype=np.int64,
        count=int(lengths.sum()) * 2,
    ).reshape(-1, 2)
    total = np.cumsum(flat, axis=0)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    before = np.vstack([[0, 0], total])[starts]  # the running sum before each arc begins
    absolute = total - np.repeat(before, lengths, axis=0)
    scale = np.asarray(topology["transform"]["scale"], dtype="float64")
    shift = np.asarray(topology["transform"]["translate"], dtype="float64")
    points = absolute * scale + shift
    return np.split(points, np.cumsum(lengths)[:-1])


def _ring(arcs: list[np.ndarray], indices: list[int]) -> np.ndarray:
    parts = [arcs[i] if i >= 0 else arcs[~i][::-1] for i in indices]
    return np.vstack([parts[0], *(p[1:] for p in parts[1:])])


def _polygons(geometry: dict[str, Any]) -> list[list[list[int]]]:
    if geometry["type"] == "Polygon":
        return [geometry["arcs"]]
    if geometry["type"] == "MultiPolygon":
        return list(geometry["arcs"])
    return []


def _region(arcs: list[np.ndarray], geometry: dict[str, Any]) -> Region | None:
    rings = [_ring(arcs, ring) for polygon in _polygons(geometry) for ring in polygon]
    if not rings:
        return None
    path = Path.make_compound_path(*(Path(r, closed=True) for r in rings))
    stacked = np.vstack(rings)
    bounds = np.array([*stacked.min(axis=0), *stacked.max(axis=0)])
    return Region(str(geometry.get("properties", {}).get("name", "")), path, bounds)


def _shared(geometries: list[dict[str, Any]]) -> np.ndarray:
    """Arc indices used by two geometries of a collection (the lines between them)."""
    used: dict[int, int] = {}
    for geometry in geometries:
        for polygon in _polygons(geometry):
            for ring in polygon:
                for i in ring:
                    key = i if i >= 0 else ~i
                    used[key] = used.get(key, 0) + 1
    return np.array(sorted(k for k, n in used.items() if n > 1), dtype=np.int64)


def _bounds(arc_bounds: np.ndarray, geometries: list[dict[str, Any]]) -> np.ndarray:
    """Each geometry's lon / lat bounds, from those of its arcs."""
    out = np.full((len(geometries), 4), np.nan)
    for k, geometry in enumerate(geometries):
        used = [i if i >= 0 else ~i for p in _polygons(geometry) for r in p for i in r]
        if used:
            b = arc_bounds[used]
            out[k] = [b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()]
    return out


@lru_cache(maxsize=1)
def atlas() -> Atlas:
    """The shipped boundaries, decoded once per process (about 0.1 s)."""
    blob = resources.files("realtyframes.plots").joinpath("boundaries", ATLAS_FILE).read_bytes()
    topology = json.loads(gzip.decompress(blob))
    arcs = _decode_arcs(topology)
    bounds = np.array([[*a.min(axis=0), *a.max(axis=0)] for a in arcs])
    objects = topology["objects"]
    nation = objects["nation"]["geometries"]
    coast = sorted(
        {i if i >= 0 else ~i for g in nation for p in _polygons(g) for r in p for i in r}
    )
    land = [{"type": "Polygon", "arcs": p, "properties": {"name": "land"}}
            for g in nation for p in _polygons(g)]  # fmt: skip
    counties = objects["counties"]["geometries"]
    return Atlas(
        arcs=tuple(arcs),
        arc_bounds=bounds,
        county_lines=_shared(objects["counties"]["geometries"]),
        state_lines=_shared(objects["states"]["geometries"]),
        coast=np.array(coast, dtype=np.int64),
        polygons={
            "county": (counties, _bounds(bounds, counties)),
            "land": (land, _bounds(bounds, land)),
        },
    )


def _meets(bounds: np.ndarray, view: View) -> np.ndarray:
    """Which of the (n, 4) ``bounds`` overlap the ``view``."""
    bounds = np.atleast_2d(bounds)
    return (
        (bounds[:, 0] <= view[2])
        & (bounds[:, 2] >= view[0])
        & (bounds[:, 1] <= view[3])
        & (bounds[:, 3] >= view[1])
    )


def lines_in(kind: str, view: View) -> list[np.ndarray]:
    """The arcs of one kind (``"county"``, ``"state"``, ``"coast"``) that reach into ``view``.

    >>> len(lines_in("coast", (-80.4, 25.6, -80.0, 26.8))) > 0
    True
    """
    at = atlas()
    chosen = {"county": at.county_lines, "state": at.state_lines, "coast": at.coast}[kind]
    inside = chosen[_meets(at.arc_bounds[chosen], view)] if len(chosen) else chosen
    return [piece for i in inside for piece in clip_line(at.arcs[i], view)]


def clip_line(line: np.ndarray, view: View) -> list[np.ndarray]:
    """The parts of a polyline inside ``view`` (Liang-Barsky on every segment at once; a
    segment crossing the view without a vertex in it is kept too).

    >>> clip_line(np.array([[0.0, 0.0], [4.0, 0.0]]), (1.0, -1.0, 2.0, 1.0))[0].tolist()
    [[1.0, 0.0], [2.0, 0.0]]
    """
    start, delta = line[:-1], np.diff(line, axis=0)
    low, high = np.zeros(len(start)), np.ones(len(start))
    keep = np.ones(len(start), dtype=bool)
    for p, q in (
        (-delta[:, 0], start[:, 0] - view[0]),
        (delta[:, 0], view[2] - start[:, 0]),
        (-delta[:, 1], start[:, 1] - view[1]),
        (delta[:, 1], view[3] - start[:, 1]),
    ):
        with np.errstate(divide="ignore", invalid="ignore"):
            t = q / p
        keep &= ~((p == 0) & (q < 0))
        low = np.where(p < 0, np.maximum(low, t), low)
        high = np.where(p > 0, np.minimum(high, t), high)
    keep &= low <= high
    pieces: list[list[np.ndarray]] = []
    joined = False  # the previous segment reached its end unclipped
    for k in np.flatnonzero(keep):
        a, b = start[k] + low[k] * delta[k], start[k] + high[k] * delta[k]
        if joined and low[k] == 0 and keep[k - 1] and k > 0:
            pieces[-1].append(b)
        else:
            pieces.append([a, b])
        joined = bool(high[k] == 1)
    return [np.array(piece) for piece in pieces]


def regions_in(kind: str, view: View) -> list[Region]:
    """The counties (``"county"``) or land polygons (``"land"``) reaching into ``view``, each
    clipped to it (a little beyond, so no edge shows)."""
    at = atlas()
    geometries, bounds = at.polygons[kind]
    pad = 0.05 * max(view[2] - view[0], view[3] - view[1])
    box = Bbox.from_extents(view[0] - pad, view[1] - pad, view[2] + pad, view[3] + pad)
    found = []
    for k in np.flatnonzero(_meets(bounds, view)):
        region = _region(list(at.arcs), geometries[k])
        if region is None:
            continue
        clipped: Path = region.path.clip_to_bbox(box)
        if np.asarray(clipped.vertices).size:
            found.append(Region(region.name, clipped, region.bounds))
    return found
