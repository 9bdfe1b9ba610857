"""County, state and coast outlines for the maps, offline: the US Census Bureau's cartographic
boundaries (2017) as packaged by us-atlas 3.0.1 (TopoJSON), shipped as ``boundaries/
counties-10m.npz`` (packed by :func:`pack_topojson`; see ``boundaries/README.md``), decoded once
per process and clipped to a map's view.

TopoJSON in short: every boundary line is stored once as an *arc* of quantized, delta-encoded
integer points; a polygon ring is a list of arc indices (``~i`` is arc ``i`` reversed). An arc two
counties share is a county line; an arc of the nation object is the coast (or a land border).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from itertools import chain
from typing import Any

import numpy as np
from matplotlib.path import Path
from matplotlib.transforms import Bbox

#: The boundary file shipped with the package: us-atlas 3.0.1's ``counties-10m.json`` packed
#: into numpy arrays by :func:`pack_topojson` (no JSON to parse at run time).
ATLAS_FILE = "counties-10m.npz"
#: Attribution drawn on every map that uses the outlines.
ATLAS_CREDIT = "Boundaries: US Census Bureau 2017 (generalized, 1:10M)"
#: The TopoJSON objects packed, and what the maps call them.
OBJECTS = ("counties", "states", "nation")

View = tuple[float, float, float, float]  # lon0, lat0, lon1, lat1


@dataclass(frozen=True)
class Region:
    """A county (or a piece of the nation's land): its name, its outline as one Path (clipped to
    the view it was asked for) and its bounds."""

    name: str
    path: Path
    bounds: np.ndarray  # lon0, lat0, lon1, lat1


@dataclass(frozen=True)
class Shapes:
    """Polygons of one kind: each shape's name, its rings (``ring_range[k]`` into ``rings``, each
    ring an array of arc references) and its bounds."""

    names: np.ndarray
    rings: list[np.ndarray]
    ring_range: np.ndarray  # (n, 2): first ring, ring after the last
    bounds: np.ndarray  # (n, 4)


@dataclass(frozen=True)
class Atlas:
    """The decoded boundaries: arcs as (n, 2) lon / lat arrays with their bounds, the arcs of each
    kind of line, and the counties and land as :class:`Shapes` (made into Paths only when a map
    needs them)."""

    arcs: list[np.ndarray]
    arc_bounds: np.ndarray  # (n_arcs, 4)
    county_lines: np.ndarray  # arc indices shared by two counties
    state_lines: np.ndarray  # arc indices shared by two states
    coast: np.ndarray  # arc indices of the nation's outline
    shapes: dict[str, Shapes]  # "county", "land"


def _polygons(geometry: dict[str, Any]) -> list[list[list[int]]]:
    if geometry["type"] == "Polygon":
        return [geometry["arcs"]]
    if geometry["type"] == "MultiPolygon":
        return list(geometry["arcs"])
    return []


def pack_topojson(topology: dict[str, Any]) -> dict[str, np.ndarray]:
    """A TopoJSON topology (us-atlas's ``counties-10m.json``) as the flat arrays of
    :data:`ATLAS_FILE`: the quantized deltas of every arc and its length, the transform, and per
    object the arc references of every ring and where each ring, polygon and geometry ends.

    >>> packed = pack_topojson({"arcs": [[[0, 0], [2, 0], [0, 2]]],
    ...     "transform": {"scale": [0.5, 0.5], "translate": [10, 20]},
    ...     "objects": {name: {"geometries": [{"type": "Polygon", "arcs": [[0]],
    ...                 "properties": {"name": "A"}}]} for name in OBJECTS}})
    >>> _arcs(packed)[0][0].tolist()
    [[10.0, 20.0], [11.0, 20.0], [11.0, 21.0]]
    """
    raw = topology["arcs"]
    out = {
        "deltas": np.array(list(chain.from_iterable(raw)), dtype=np.int32)[:, :2],
        "arc_lengths": np.array([len(arc) for arc in raw], dtype=np.int32),
        "scale": np.asarray(topology["transform"]["scale"], dtype="float64"),
        "translate": np.asarray(topology["transform"]["translate"], dtype="float64"),
    }
    for name in OBJECTS:
        refs: list[int] = []
        ring_ends: list[int] = []
        polygon_ends: list[int] = []
        geometry_ends: list[int] = []
        names: list[str] = []
        for geometry in topology["objects"][name]["geometries"]:
            for polygon in _polygons(geometry):
                for ring in polygon:
                    refs.extend(ring)
                    ring_ends.append(len(refs))
                polygon_ends.append(len(ring_ends))
            geometry_ends.append(len(polygon_ends))
            names.append(str(geometry.get("properties", {}).get("name", "")))
        out[f"{name}_refs"] = np.array(refs, dtype=np.int32)
        out[f"{name}_ring_ends"] = np.array(ring_ends, dtype=np.int32)
        out[f"{name}_polygon_ends"] = np.array(polygon_ends, dtype=np.int32)
        out[f"{name}_geometry_ends"] = np.array(geometry_ends, dtype=np.int32)
        out[f"{name}_names"] = np.array(names, dtype=str)
    return out


def _arcs(packed: Any) -> tuple[list[np.ndarray], np.ndarray]:
    """Every arc as lon / lat points (its delta-encoded integers summed, then scaled), and the
    arcs' bounds (lon0, lat0, lon1, lat1)."""
    lengths = packed["arc_lengths"].astype(np.int64)
    total = np.cumsum(packed["deltas"].astype(np.int64), axis=0)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    before = np.vstack([[0, 0], total])[starts]  # the running sum before each arc begins
    points = (total - np.repeat(before, lengths, axis=0)) * packed["scale"] + packed["translate"]
    bounds = np.hstack([np.minimum.reduceat(points, starts), np.maximum.reduceat(points, starts)])
    return [points[s : s + n] for s, n in zip(starts, lengths, strict=True)], bounds


def _unsigned(refs: np.ndarray) -> np.ndarray:
    return np.where(refs >= 0, refs, ~refs)


def _shapes(packed: Any, name: str, arc_bounds: np.ndarray, per_polygon: bool) -> Shapes:
    """The geometries of one object (or, ``per_polygon``, each of its polygons) as Shapes."""
    refs, ring_ends = packed[f"{name}_refs"], packed[f"{name}_ring_ends"].astype(np.int64)
    polygon_ends = packed[f"{name}_polygon_ends"].astype(np.int64)
    if per_polygon:
        ends, names = polygon_ends, np.full(len(polygon_ends), "land")
    else:
        geometry_ends = packed[f"{name}_geometry_ends"].astype(np.int64)
        ends = np.concatenate([[0], polygon_ends])[geometry_ends]
        names = packed[f"{name}_names"]
    ring_range = np.column_stack([np.concatenate([[0], ends[:-1]]), ends])
    ring_of_ref = np.repeat(np.arange(len(ring_ends)), np.diff(np.concatenate([[0], ring_ends])))
    shape_of_ring = np.repeat(np.arange(len(ends)), ring_range[:, 1] - ring_range[:, 0])
    bounds = np.tile([np.inf, np.inf, -np.inf, -np.inf], (len(ends), 1))
    owner = shape_of_ring[ring_of_ref]
    for column, reduce in ((0, np.minimum), (1, np.minimum), (2, np.maximum), (3, np.maximum)):
        reduce.at(bounds[:, column], owner, arc_bounds[_unsigned(refs), column])
    bounds[~np.isfinite(bounds)] = np.nan
    return Shapes(names, np.split(refs, ring_ends[:-1]), ring_range, bounds)


def _shared(refs: np.ndarray, n_arcs: int) -> np.ndarray:
    """Arc indices referenced twice in a collection (the lines between its geometries)."""
    return np.flatnonzero(np.bincount(_unsigned(refs), minlength=n_arcs) > 1)


@lru_cache(maxsize=1)
def atlas() -> Atlas:
    """The shipped boundaries, decoded once per process (a few hundredths of a second)."""
    with resources.files("realtyframes.plots").joinpath("boundaries", ATLAS_FILE).open("rb") as f:
        packed = dict(np.load(f, allow_pickle=False))
    arcs, bounds = _arcs(packed)
    return Atlas(
        arcs=arcs,
        arc_bounds=bounds,
        county_lines=_shared(packed["counties_refs"], len(arcs)),
        state_lines=_shared(packed["states_refs"], len(arcs)),
        coast=np.unique(_unsigned(packed["nation_refs"])),
        shapes={
            "county": _shapes(packed, "counties", bounds, per_polygon=False),
            "land": _shapes(packed, "nation", bounds, per_polygon=True),
        },
    )


def _ring(arcs: list[np.ndarray], refs: np.ndarray) -> np.ndarray:
    parts = [arcs[i] if i >= 0 else arcs[~i][::-1] for i in refs]
    return np.vstack([parts[0], *(p[1:] for p in parts[1:])])


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
    clipped to it (a little beyond, so no edge shows).

    >>> sorted(r.name for r in regions_in("county", (-80.3, 25.9, -80.1, 26.1)))
    ['Broward', 'Miami-Dade']
    """
    at = atlas()
    shapes = at.shapes[kind]
    pad = 0.05 * max(view[2] - view[0], view[3] - view[1])
    box = Bbox.from_extents(view[0] - pad, view[1] - pad, view[2] + pad, view[3] + pad)
    found = []
    for k in np.flatnonzero(_meets(shapes.bounds, view)):
        first, after = shapes.ring_range[k]
        rings = [_ring(at.arcs, shapes.rings[r]) for r in range(first, after)]
        if not rings:
            continue
        path = Path.make_compound_path(*(Path(r, closed=True) for r in rings))
        clipped: Path = path.clip_to_bbox(box)
        if np.asarray(clipped.vertices).size:
            found.append(Region(str(shapes.names[k]), clipped, shapes.bounds[k]))
    return found
