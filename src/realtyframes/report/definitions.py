"""Every metric's definition as a table, read from ``docs/metrics.md`` (shipped in the package as
``realtyframes/analysis/metrics.md``; ``docs/metrics.md`` links to it), for the workbook's
"Definitions" sheet: one definition per metric, written once.

>>> defs = metric_definitions()
>>> defs.loc[defs["metric"] == "homes_sold", "section"].iloc[0]
'Market metrics (rf.market_summary)'
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources import files

import pandas as pd

__all__ = ["REPORT_TERMS", "WEB_SECTIONS", "market_definitions", "metric_definitions", "plain_text"]

#: Definition sections of the website's and the CRM's data (the brokerage report's, not the
#: market report's).
WEB_SECTIONS: tuple[str, ...] = ("Traffic", "Leads")

#: Terms of the report's own views (not columns of one analysis table), defined here once.
REPORT_TERMS: tuple[tuple[str, str], ...] = (
    (
        "4W",
        "a rolling 4-week period: the 4 weeks (Monday to Sunday, UTC) ending each Sunday, one "
        "row per week, so neighbouring rows share 3 weeks (Redfin's 4-week view); flows are "
        "counted over the 4 weeks, stocks at the period's end",
    ),
    (
        "_sa",
        "seasonally adjusted: the series with the part that recurs every year at the same "
        "time of year removed, by STL (statsmodels; seasonal-trend decomposition by loess) on the "
        "complete months the data cover, at least 3 years; prices multiplicatively, counts "
        "additively (rf.seasonally_adjust)",
    ),
    (
        "tier",
        "a price tier: bottom = sales from the 5th to the 35th percentile of the market's "
        "sale prices in the period, middle = 35th to 65th, top = 65th to 95th (Zillow's bands); "
        "the 10 % at either end are in no tier (rf.market_trends(tiers=True))",
    ),
    (
        "sale_band_low / sale_band_high",
        "a tier's band edges: the sale prices at its lower and upper percentile in that period",
    ),
)
_ROW = re.compile(r"^\|\s*`([A-Za-z_.][\w.]*)`\s*\|(.*)\|\s*$")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


def plain_text(markdown: str) -> str:
    """Markdown of a table cell as plain text (for a workbook cell or an HTML page): no ``**``,
    backticks or link targets.

    >>> plain_text("**Land/Boat Docks**, see `avg_sale_to_list` and [metrics](docs/metrics.md)")
    'Land/Boat Docks, see avg_sale_to_list and metrics'
    """
    text = _LINK.sub(r"\1", markdown)
    return text.replace("**", "").replace("`", "").replace("<br>", " ").strip()


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


@lru_cache(maxsize=1)
def _text() -> str:
    return files("realtyframes.analysis").joinpath("metrics.md").read_text(encoding="utf-8")


def metric_definitions() -> pd.DataFrame:
    """Columns ``section``, ``metric``, ``definition`` (the other cells of its row, each with its
    column's header, as plain text), in the order of ``docs/metrics.md``; a metric named in
    several tables keeps a definition per table it is in (the trend's ``active_listings`` is not
    the summary's)."""
    rows: list[dict[str, str]] = []
    section, header = "", list[str]()
    for line in _text().splitlines():
        if line.startswith("## "):
            section = plain_text(line[3:])
        elif line.startswith("|") and not header:
            header = _cells(line)
        elif not line.startswith("|"):
            header = []
        found = _ROW.match(line)
        if found and header:
            values = _cells(line)[1:]
            parts = [
                f"{plain_text(h)}: {plain_text(v)}"
                for h, v in zip(header[1:], values, strict=False)
                if v
            ]
            rows.append(
                {"section": section, "metric": found.group(1), "definition": "; ".join(parts)}
            )
    rows += [
        {"section": "Report terms", "metric": term, "definition": text}
        for term, text in REPORT_TERMS
    ]
    frame = pd.DataFrame(rows, columns=["section", "metric", "definition"])
    return frame.drop_duplicates(["section", "metric"], keep="first").reset_index(drop=True)


def market_definitions() -> pd.DataFrame:
    """:func:`metric_definitions` without the website's and the CRM's sections (what the
    market report's editions carry).

    >>> "Leads (rf.lead_funnel)" in set(market_definitions()["section"])
    False
    """
    defs = metric_definitions()
    internal = defs["section"].astype("str").str.startswith(WEB_SECTIONS).to_numpy()
    return defs[~internal].reset_index(drop=True)
