"""The report's market sections: comparison (with the largest subtypes), trends, maps, comps."""

from __future__ import annotations

import pandas as pd

from realtyframes.analysis import MARKET_METRICS, REFERENCE_LABEL, SAMPLE_SIZE_OF
from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, Section, esc
from realtyframes.report._html import render_table as _table
from realtyframes.report._render_common import label, metric_kind
from realtyframes.report.compute import MarketReport, thin

__all__ = [
    "SHORT_LABELS",
    "TABLE_METRICS",
    "comps_section",
    "maps_section",
    "market_section",
]

#: Market metrics shown in the comparison table, in order.
TABLE_METRICS: tuple[str, ...] = MARKET_METRICS
#: Row labels of the comparison table.
SHORT_LABELS: dict[str, str] = {
    "active_listings": "Active listings",
    "new_listings": "New listings",
    "pending_sales": "Pending sales",
    "homes_sold": "Homes sold",
    "median_list_price": "Median list price",
    "median_list_ppsf": "Median list $/sq ft",
    "median_sale_price": "Median sale price",
    "median_sale_ppsf": "Median sale $/sq ft",
    "median_dom": "Median days on market",
    "avg_sale_to_list": "Avg sale-to-list",
    "pct_sold_above_list": "Sold above list",
    "months_of_supply": "Months of supply",
    "pct_active_with_price_drop": "Active whose last price change was a cut (any time)",
}


def market_section(report: MarketReport) -> Section:
    from realtyframes import plots

    o = report.options
    comp = report.comparison
    table = comparison_table(
        "comparison",
        comp,
        o.min_sample,
        f"{', '.join(o.property_types)}; window: the {float(o.window_days):g} days to "
        f"{o.day.isoformat()}. '{REFERENCE_LABEL}' is the whole market of the report. "
        f"— n=…: fewer than {o.min_sample} listings behind the value, not shown.",
    )
    if report.subtypes is not None:
        table += comparison_table(
            "subtypes",
            report.subtypes,
            o.min_sample,
            f"The {len(report.subtypes.columns) - 1} largest property subtypes, same window; "
            f"'{REFERENCE_LABEL}' is the whole market. — n=…: below the minimum sample.",
        )
    shown = report.summary.reindex(pd.Index(report.markets, tupleize_cols=True, name=o.by))
    shown.attrs = dict(report.summary.attrs)
    charts = [
        _figure(
            chart(plots.market_metrics, shown),
            f"Market metrics by {o.by}: median sale price, price per sq ft, homes sold, months of "
            "supply, days on market, share with a price drop",
            "market_metrics",
        ),
        '<div class="grid2">'
        + "".join(
            _figure(
                chart(
                    plots.ppsf_boxplot,
                    report.frames.listings,
                    by=o.by,
                    price=price,
                    markets=report.markets,
                    as_of=o.day,
                    window_days=float(o.window_days),
                ),
                f"{price.capitalize()} price per square foot by {o.by}",
                "ppsf_boxplot" if price == "sale" else "ppsf_boxplot_list",
            )
            for price in ("sale", "list")
        )
        + "</div>",
    ]
    intro = (
        f"Markets by {o.by}: {len(report.summary):,} in the data, the {len(report.markets)} "
        "largest shown side by side"
        if not (o.cities and o.by == "City")
        else f"Markets by {o.by}: the cities asked for"
    ) + ". Every metric is defined under Definitions at the end of this report."
    return Section("markets", "Market comparison", table + "".join(charts), intro)


def comparison_table(table_id: str, comp: pd.DataFrame, min_sample: int, caption: str) -> str:
    """Metrics as rows, markets as columns; every median or ratio with its n
    (``SAMPLE_SIZE_OF``), shown as "—" on fewer than ``min_sample`` listings, never as a firm
    figure."""
    from realtyframes.plots import METRIC_LABELS

    columns = list(comp.columns)
    hidden = thin(comp, min_sample)
    rows: list[list[Cell | str]] = []
    for metric in TABLE_METRICS:
        cells: list[Cell | str] = [SHORT_LABELS.get(metric, METRIC_LABELS[metric][0])]
        for col in columns:
            value, kind = comp.loc[metric, col], metric_kind(metric)
            n = comp.loc[SAMPLE_SIZE_OF[metric], col] if metric in SAMPLE_SIZE_OF else None
            note = None if n is None or pd.isna(n) else f"n={int(n)}"  # every median has its n
            shown = None if hidden.loc[metric, col] else value
            cells.append(Cell(shown, kind, row=metric, col=label(col), note=note))
        rows.append(cells)
    return _table(
        table_id,
        ["Metric", *[label(c) for c in columns]],
        rows,
        caption=caption,
        numeric_header=[False] + [True] * len(columns),
    )


def maps_section(report: MarketReport) -> Section:
    """Active listings on a map, coloured by price per square foot (drawn offline)."""
    from realtyframes import plots

    listings = report.frames.listings
    active = listings[listings["StandardStatus"].astype("str") == "Active"]
    if active.empty:
        return Section("map", "Map of the market", '<p class="empty">No active listings.</p>')
    title = f"{len(active):,} active listings by list price per sq ft"
    body = _figure(
        chart(plots.listing_map, active, color="ppsf", title=title),
        "Active listings by list price per square foot (no map tiles: drawn offline)",
        "market_map",
    )
    return Section("map", "Map of the market", body)


_COMP_TABLE: tuple[tuple[str, str, str], ...] = (
    ("UnparsedAddress", "Address", "text"),
    ("PropertySubType", "Type", "text"),
    ("BedroomsTotal", "Beds", "count"),
    ("LivingArea", "Sq ft", "count"),
    ("ClosePrice", "Sold for", "money"),
    ("CloseDate", "Sold", "date"),
    ("distance_km", "Km away", "number"),
    ("ppsf", "$/sq ft", "money"),
    ("why", "Why", "text"),
)


def _estimate(listing_id: str, est: dict[str, float], min_sample: int) -> str:
    """The comps estimate in words, rounded to what it can claim (three significant figures),
    with its n; below ``min_sample`` comps a visible warning instead of a firm figure."""
    from realtyframes.plots import money

    n = int(est.get("n", 0) or 0)
    value, low, high = (float(est.get(k, float("nan"))) for k in ("value", "low", "high"))
    if n == 0 or pd.isna(value):
        return f'<p class="notice">No estimate for {esc(listing_id)}: no comparable sale.</p>'
    text = (
        f"Estimate for {esc(listing_id)}: <strong>{esc(money(_round3(value)))}</strong> "
        f"(range {esc(money(_round3(low)))}–{esc(money(_round3(high)))}, n={n} comps)"
    )
    if n < min_sample:
        return (
            f'<p class="notice">{text}. Only {n} comparable sale{"s" if n != 1 else ""}, '
            f"fewer than {min_sample}: too few for a firm estimate; read it as a rough guide.</p>"
        )
    return f"<p>{text}.</p>"


def _round3(value: float) -> float:
    """Three significant figures: 901,241 -> 901,000; 2,564,901 -> 2,560,000."""
    if pd.isna(value) or value == 0:
        return value
    from math import floor, log10

    digits = 2 - floor(log10(abs(value)))
    return float(round(value, digits))


def comps_section(report: MarketReport) -> Section | None:
    """The comparable sales of the listings named by ``--comps`` (None when none were named)."""
    from realtyframes import plots

    if not report.options.comps:
        return None
    parts = []
    for listing_id, comps in report.comps.items():
        est = comps.attrs.get("estimate", {})
        parts.append(_estimate(listing_id, est, report.options.min_sample))
        rows: list[list[Cell | str]] = []
        for rank, row in enumerate(comps.itertuples(index=False), start=1):
            key = str(row.ListingId)
            rows.append([f"{rank}. {key}", *[Cell(getattr(row, c), k, row=key, col=c)
                                             for c, _, k in _COMP_TABLE]])  # fmt: skip
        parts.append(
            _table(
                f"comps_{listing_id}",
                ["Comp", *[h for _, h, _ in _COMP_TABLE]],
                rows,
                caption=f"Closed sales most like {listing_id} (same type and subtype, within 3 km "
                "and 12 months, beds ±1, area ±25 %), closest first. Estimate: the comps' median "
                "$/sq ft × its area; range: their interquartile $/sq ft × its area.",
            )
            + _figure(
                chart(plots.comps, comps), f"Comps of {listing_id} on a map", f"comps_{listing_id}"
            )
        )
    body = "".join(parts) or '<p class="empty">None of the listings named was found.</p>'
    return Section("comps", "Comparable sales", body)
