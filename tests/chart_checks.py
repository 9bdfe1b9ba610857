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


def beyond_data(ax: Any, x: Any, y: Any, margin: float = 0.06) -> list[str]:
    """The sides of ``ax``'s limits that reach past its data (``x`` timestamps, ``y`` numbers;
    NaN ignored) by more than ``margin`` of the data's span (on x at least 7 days; on y, for a
    constant, ``margin`` of its size or 1 for zeros), and a bottom below 0 for data that are not:
    a chart never draws axes outside its data."""
    import matplotlib.dates as mdates
    import numpy as np
    import pandas as pd

    found: list[str] = []
    stamps = pd.to_datetime(pd.Series(x)).dropna()
    if len(stamps):
        first = mdates.date2num(stamps.min().to_pydatetime())
        last = mdates.date2num(stamps.max().to_pydatetime())
        pad = max((last - first) * margin, 7.0)
        left, right = ax.get_xlim()
        found += ["left"] if left < first - pad else []
        found += ["right"] if right > last + pad else []
    values = pd.to_numeric(pd.Series(y), errors="coerce").to_numpy(dtype="float64")
    finite = values[np.isfinite(values)]
    if len(finite):
        low, high = float(finite.min()), float(finite.max())
        span = high - low
        pad = span * margin if span > 0 else (abs(high) * margin if high != 0 else 1.0)
        bottom, top = ax.get_ylim()
        found += ["bottom"] if bottom < low - pad or (low >= 0 > bottom) else []
        found += ["top"] if top > high + pad else []
    return found
