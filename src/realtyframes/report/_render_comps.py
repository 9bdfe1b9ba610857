"""The report's comps section: the comparable sales of the listings named by ``--comps``."""

from __future__ import annotations

import pandas as pd

from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, Section, esc
from realtyframes.report._html import render_table as _table
from realtyframes.report.compute import MarketReport

__all__ = ["comps_section"]


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
