"""Charts for the analysis results (``rf.plot``): matplotlib Figures, never pyplot global state.

Every chart function takes ``ax=None``: without it a new :class:`matplotlib.figure.Figure` is
built (not registered with pyplot) and returned; with it the chart is drawn on that Axes, which is
returned (``market_metrics``, several charts on one Figure, always returns a new Figure). Axes are labelled with units; prices are formatted as currency, fractions as percents.
No function changes ``matplotlib.rcParams`` or imports pyplot.

>>> import realtyframes as rf                                         # doctest: +SKIP
>>> fig = rf.plot.market_metric(rf.market_summary(listings), "median_sale_price")  # doctest: +SKIP
>>> fig.savefig("median_sale_price.png", dpi=150)                     # doctest: +SKIP
"""

from realtyframes.plots._base import METRIC_LABELS, PALETTE, money
from realtyframes.plots.index import price_index
from realtyframes.plots.maps import COLOR_CHOICES, comps, listing_map
from realtyframes.plots.market import (
    market_metric,
    market_metrics,
    ppsf_boxplot,
    price_drop_distribution,
    top_price_drops,
)
from realtyframes.plots.panels import seasonal_panels, traffic_panels, trend_panels
from realtyframes.plots.trends import HIGHLIGHTED, PARTIAL_LABEL, inventory_trend, market_trend
from realtyframes.plots.web import (
    countries,
    devices,
    lead_funnel,
    leads_per_week,
    top_pages,
    top_sources,
    traffic_timeline,
)

__all__ = [
    "COLOR_CHOICES",
    "HIGHLIGHTED",
    "METRIC_LABELS",
    "PALETTE",
    "PARTIAL_LABEL",
    "comps",
    "countries",
    "devices",
    "inventory_trend",
    "lead_funnel",
    "leads_per_week",
    "listing_map",
    "market_metric",
    "market_metrics",
    "market_trend",
    "money",
    "ppsf_boxplot",
    "price_drop_distribution",
    "price_index",
    "seasonal_panels",
    "top_pages",
    "top_price_drops",
    "top_sources",
    "traffic_panels",
    "traffic_timeline",
    "trend_panels",
]
