"""The price index chart for ``rf.price_index``: the index with its band, the sales behind each
period, and (when given) the median sale price indexed to the same base for contrast."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from realtyframes.plots._base import PALETTE, _need, _style
from realtyframes.plots.panels import _margins, _period_name
from realtyframes.plots.trends import PARTIAL_LABEL, PARTIAL_STYLE, _dates, _split

__all__ = ["price_index"]


def price_index(index: pd.DataFrame, *, median: str | None = "median_index") -> Figure:
    """The index (100 at its base period) as a line in its 95 % band, the number of sales (or
    pairs) behind each period as bars under it, and the ``median`` column (the median sale price
    indexed to the same base, e.g. from ``rf.market_trends``; None: not drawn) as a dashed grey
    line; a period not over (``complete`` False) is a hollow point on a dotted line. One index
    (no ``by`` groups).

    >>> idx = rf.price_index(market, history)  # doctest: +SKIP
    >>> rf.plot.price_index(idx, median=None)  # doctest: +SKIP
    """
    _need(index, ["period_begin", "index", "index_low", "index_high", "n"], "index",
          "price_index")  # fmt: skip
    if index.attrs.get("by"):
        raise ValueError("plot.price_index(): draws one index; select one `by` group first")
    fig = Figure(figsize=(11.0, 4.8))
    _margins(fig, left=0.85, right=0.25, top=0.55, bottom=0.9, wspace=0.2, hspace=0.12)
    grid = fig.add_gridspec(2, 1, height_ratios=(3.2, 1.0))
    ax = fig.add_subplot(grid[0])
    bars = fig.add_subplot(grid[1], sharex=ax)
    rows = index.sort_values("period_begin").reset_index(drop=True)
    x = pd.to_datetime(rows["period_begin"])
    base = index.attrs.get("base")
    method = str(index.attrs.get("method", "hedonic")).replace("_", "-")
    freq = str(index.attrs.get("freq", "M"))
    where = f"100 = {_period_name(base, freq)}" if base is not None else "100 at the base period"
    fig.suptitle(f"Constant-quality price index ({method}), {where}", x=0.85 / 11.0, ha="left",
                 fontsize=12, fontweight="bold")  # fmt: skip
    ax.fill_between(x, rows["index_low"].astype("float64"), rows["index_high"].astype("float64"),
                    color=PALETTE[0], alpha=0.18, linewidth=0, label="95 % band of the index")  # fmt: skip
    ax.axhline(100, color="0.5", linewidth=0.8, zorder=1)
    done, partial = _split(rows)
    lines: list[tuple[str, dict[str, Any], str]] = [
        (
            "index",
            {"color": PALETTE[0], "linewidth": 2.0},
            "Price index (homes of constant quality)",
        )
    ]
    if median is not None and median in rows:
        lines.append((median, {"color": "0.35", "linewidth": 1.2, "linestyle": "--"},
                      f"Median sale price, {where} (moves with the mix sold)"))  # fmt: skip
    for column, style, text in lines:
        ax.plot(pd.to_datetime(done["period_begin"]), done[column].astype("float64"), marker="o",
                markersize=3, label=text, **style)  # fmt: skip
        if len(partial):
            ax.plot(pd.to_datetime(partial["period_begin"]), partial[column].astype("float64"),
                    marker="o", markersize=4, label="_nolegend_", **{**style, **PARTIAL_STYLE})  # fmt: skip
    if len(partial):
        ax.plot([], [], color="0.3", marker="o", label=PARTIAL_LABEL, **PARTIAL_STYLE)
    ax.set_ylabel("Index (base = 100)")
    ax.tick_params(labelbottom=False, labelsize=8)
    _style(ax, "y")
    width = (x.diff().median() if len(x) > 1 else pd.Timedelta(days=30)) * 0.7
    complete = rows["complete"].astype(bool) if "complete" in rows else pd.Series(True, rows.index)
    counts = rows["n"].astype("float64").to_numpy()
    bars.bar(x, np.where(complete, counts, 0), width=width, color=PALETTE[0], alpha=0.55)
    bars.bar(x, np.where(complete, 0, counts), width=width, color=PALETTE[0], alpha=0.2)
    noun = "pairs" if method == "repeat-sales" else "sales"
    bars.set_ylabel(f"{noun.capitalize()} (n)", fontsize=9)
    bars.tick_params(labelsize=8)
    _style(bars, "y")
    _dates(bars)
    fig.legend(*ax.get_legend_handles_labels(), loc="lower left", ncols=2, frameon=False,
               fontsize=8, bbox_to_anchor=(0.85 / 11.0, 0.01))  # fmt: skip
    return fig
