"""Place names on a map that never overlap: a greedy placer measuring in display coordinates.

Each label, most important first, tries positions around its point (on it, right, left, above,
below, the corners; then farther out with a leader line to the point); the first whose drawn box
stays inside the map and clear of every label already placed (and of the ``avoid`` boxes) wins.
A label with no free position is left out. Boxes are measured after the map's limits are set, in
pixels, so the check is what a reader sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.path import Path
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

#: Offsets tried around a point, in points (dx, dy, ha, va); the first ring sits next to the point,
#: the second farther out, drawn with a leader line.
NEAR: tuple[tuple[float, float, str, str], ...] = (
    (6, 0, "left", "center"),
    (-6, 0, "right", "center"),
    (0, 6, "center", "bottom"),
    (0, -6, "center", "top"),
    (5, 5, "left", "bottom"),
    (-5, 5, "right", "bottom"),
    (5, -5, "left", "top"),
    (-5, -5, "right", "top"),
    (0, 0, "center", "center"),
)
CENTRED = (0.0, 0.0, "center", "center")
FAR_SCALE = 3.5  # the leader-line ring: NEAR's offsets times this
PAD_PX = 1.5  # labels keep this many pixels apart


@dataclass
class Label:
    """A name to place at ``(x, y)`` (data coordinates); ``props`` go to ``ax.annotate``.
    ``others``: further points to try, each only centred on it (a county name, anywhere in the
    county); with them the label is never moved off its points. ``within``: a region (data
    coordinates) the label's box must lie in (a county name inside its county, off its lines)."""

    text: str
    x: float
    y: float
    props: dict[str, Any] = field(default_factory=dict)
    others: Sequence[tuple[float, float]] = ()
    within: Path | None = None


def renderer_of(ax: Axes) -> RendererBase:
    """The renderer that will draw ``ax`` (an Agg canvas is attached to a bare Figure)."""
    figure: Any = ax.figure
    if not hasattr(figure.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)
    return figure.canvas.get_renderer()


def _fits(box: Bbox, inside: Bbox, taken: Sequence[Bbox]) -> bool:
    grown = box.expanded(1.0, 1.0).padded(PAD_PX)
    within = (box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0
              and box.y1 <= inside.y1)  # fmt: skip
    return within and not any(grown.overlaps(t) for t in taken)


Try = tuple[tuple[float, float], tuple[float, float, str, str], bool]  # point, offset, leader


def _tries(label: Label) -> list[Try]:
    point = (label.x, label.y)
    if label.others:
        return [(p, CENTRED, False) for p in (point, *label.others)]
    far = [((o[0] * FAR_SCALE, o[1] * FAR_SCALE, o[2], o[3]), True) for o in NEAR[:-1]]
    return [(point, o, leader) for o, leader in [*((o, False) for o in NEAR), *far]]


def _try(ax: Axes, label: Label, point: tuple[float, float],
         offset: tuple[float, float, str, str], leader: bool) -> Annotation:  # fmt: skip
    dx, dy, ha, va = offset
    halo = [patheffects.withStroke(linewidth=2.5, foreground="white")]
    arrow = {"arrowstyle": "-", "color": "0.35", "linewidth": 0.7, "shrinkA": 0, "shrinkB": 1}
    text = ax.annotate(
        label.text, point, xytext=(dx, dy), textcoords="offset points", ha=ha,
        va=va, path_effects=halo, arrowprops=arrow if leader else None, annotation_clip=False,
        **label.props,
    )  # fmt: skip
    text.set_in_layout(False)  # names sit inside the map: a layout engine never moves for them
    return text


def _inside(ax: Axes, box: Bbox, region: Path | None) -> bool:
    """Whether the corners and edge midpoints of ``box`` (pixels) lie in ``region`` (data)."""
    if region is None:
        return True
    xs = (box.x0 - PAD_PX, (box.x0 + box.x1) / 2, box.x1 + PAD_PX)
    ys = (box.y0 - PAD_PX, (box.y0 + box.y1) / 2, box.y1 + PAD_PX)
    points = ax.transData.inverted().transform([(x, y) for x in xs for y in ys])
    return bool(region.contains_points(points).all())


def text_box(text: Text, renderer: RendererBase) -> Bbox:
    """The drawn box of a text's words, in pixels (an annotation's without its leader line)."""
    if isinstance(text, Annotation):
        text.update_positions(renderer)
    return Text.get_window_extent(text, renderer)


def place(ax: Axes, labels: Sequence[Label], avoid: Sequence[Bbox] = ()) -> list[Annotation]:
    """Draw the ``labels`` (in order of importance) where they overlap nothing; return those
    placed. The axes' limits and position must be final.

    >>> place(ax, [Label("Aventura", -80.139, 25.957)])  # doctest: +SKIP
    """
    renderer = renderer_of(ax)
    ax.apply_aspect()  # the axes' drawn box, as the aspect makes it
    inside = ax.get_window_extent(renderer)
    taken: list[Bbox] = list(avoid)
    placed: list[Annotation] = []
    for label in labels:
        for point, offset, leader in _tries(label):
            text = _try(ax, label, point, offset, leader)
            box = text_box(text, renderer)
            if _fits(box, inside, taken) and _inside(ax, box, label.within):
                taken.append(box)
                placed.append(text)
                break
            text.remove()
    return placed


def overlapping(boxes: Sequence[tuple[str, Bbox]]) -> list[tuple[str, str]]:
    """The pairs of named boxes that overlap.

    >>> overlapping([("a", Bbox.from_extents(0, 0, 2, 2)), ("b", Bbox.from_extents(1, 1, 3, 3))])
    [('a', 'b')]
    """
    return [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if box_a.overlaps(box_b)
    ]
