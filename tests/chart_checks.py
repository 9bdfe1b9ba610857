"""Checks of drawn matplotlib Figures, as a reader sees them: nothing past the figure's edges,
no tick labels running into each other. Each check has a control in the tests that makes it fail.
"""

from __future__ import annotations

import itertools
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg


def outside(fig: Any) -> list[str]:
    """What of a drawn Figure reaches past its edges (a cut title, a legend off the page): the
    tight box of everything drawn, against the figure's own box (inches, 0.02 of slack)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    tight = fig.get_tightbbox(canvas.get_renderer())
    width, height = fig.get_size_inches()
    slack = 0.02
    sides = {"left": tight.x0 < -slack, "bottom": tight.y0 < -slack,
             "right": tight.x1 > width + slack, "top": tight.y1 > height + slack}  # fmt: skip
    return [side for side, over in sides.items() if over]


def overlapping_ticks(fig: Any) -> list[tuple[str, str]]:
    """Pairs of visible tick labels of one axis whose drawn boxes overlap (labels that run
    together), on every Axes of the Figure (colour bars included)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    found: list[tuple[str, str]] = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
            for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
                if box_a.overlaps(box_b):
                    found.append((a, b))
    return found


def overlapping_texts(fig: Any) -> list[tuple[str, str]]:
    """Pairs of visible texts drawn inside one Axes (place names, the scale bar's, the credit)
    whose drawn boxes overlap; an annotation's box is its words, not its leader line."""
    from matplotlib.text import Annotation, Text

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    found: list[tuple[str, str]] = []
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_visible() and t.get_text()]
        for t in texts:
            if isinstance(t, Annotation):
                t.update_positions(renderer)
        boxes = [(t.get_text(), Text.get_window_extent(t, renderer)) for t in texts]
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
            if box_a.overlaps(box_b):
                found.append((a, b))
    return found
