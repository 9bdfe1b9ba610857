"""Short reprs and notebook HTML for results that bundle several DataFrames.

>>> import pandas as pd
>>> print(bundle_repr("Analytics", "30d", {"overview": pd.DataFrame({"a": [1]})}))
Analytics(period='30d')
  overview  1 x 1
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import pandas as pd

__all__ = ["bundle_html", "bundle_repr"]

#: Rows of each member shown in a notebook.
HTML_ROWS = 10


def bundle_repr(kind: str, period: str | None, frames: Mapping[str, pd.DataFrame]) -> str:
    """One line for the bundle, then one per member with its shape."""
    width = max((len(name) for name in frames), default=0)
    lines = [f"{kind}(period={period!r})"]
    lines += [f"  {name:<{width}}  {f.shape[0]} x {f.shape[1]}" for name, f in frames.items()]
    return "\n".join(lines)


def bundle_html(kind: str, period: str | None, frames: Mapping[str, pd.DataFrame]) -> str:
    """Each member as a collapsible table (its first rows) under a one-line heading."""
    parts = [f"<p><strong>{html.escape(kind)}</strong> (period {html.escape(str(period))})</p>"]
    for name, frame in frames.items():
        shown = frame.head(HTML_ROWS).to_html(max_cols=12, border=0)
        parts.append(
            f"<details><summary>{html.escape(name)} ({frame.shape[0]} x {frame.shape[1]})"
            f"</summary>{shown}</details>"
        )
    return "\n".join(parts)
