"""The report's comps section: for each listing named by ``--comps``, the home (address, facts,
ask), the estimate with its range and n, plain-word warnings, and a broker's grid: each comparable
sale, its adjustments to the home and its adjusted price, most alike first by the similarity score
(docs/metrics.md, "Comparable sales")."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from realtyframes.analysis import neighbourhood
from realtyframes.report._charts import chart
from realtyframes.report._charts import render_chart as _figure
from realtyframes.report._html import Cell, Section, esc
from realtyframes.report._html import render_table as _table
from realtyframes.report.compute import MarketReport

__all__ = ["comps_section"]


#: The grid's rows: column, label, kind (the home's column shows its ask and facts; its
#: adjustment cells are blank).
_GRID: tuple[tuple[str, str, str], ...] = (
    ("UnparsedAddress", "Address", "text"),
    ("_neighbourhood", "Building or subdivision", "text"),
    ("CloseDate", "Sold on (home: status)", "date"),
    ("ClosePrice", "Sale price (home: ask)", "money"),
    ("LivingArea", "Sq ft", "count"),
    ("BedroomsTotal", "Beds", "count"),
    ("BathroomsTotalInteger", "Baths", "count"),
    ("YearBuilt", "Built", "year"),
    ("WaterfrontYN", "Waterfront", "yesno"),
    ("_miles", "Miles away", "number"),
    ("ppsf", "$/sq ft", "money"),
    ("adj_size", "Size adj.", "money"),
    ("adj_age", "Age adj.", "money"),
    ("adj_beds", "Beds adj.", "money"),
    ("adj_baths", "Baths adj.", "money"),
    ("adj_water", "Waterfront adj.", "money"),
    ("adj_time", "Market adj.", "money"),
    ("adjusted_price", "Adjusted price", "money"),
    ("weight", "Weight", "percent"),
    ("score", "Score", "number"),
)
#: Kilometres in a mile: the page speaks miles, as its map's scale bar does.
KM_PER_MILE = 1.609344
#: What the home's column shows in place of a sale's fact.
_SUBJECT_COLUMNS = {"ClosePrice": "ListPrice", "CloseDate": "StandardStatus"}


def _round3(value: float) -> float:
    """Three significant figures: 901,241 -> 901,000; 2,564,901 -> 2,560,000."""
    if pd.isna(value) or value == 0:
        return value
    from math import floor, log10

    digits = 2 - floor(log10(abs(value)))
    return float(round(value, digits))


def _count(value: object, one: str, many: str) -> str | None:
    if value is None or pd.isna(value):
        return None
    x = float(value)  # type: ignore[arg-type]
    return f"{x:,.0f} {one if x == 1 else many}" if x.is_integer() else f"{x:,.1f} {many}"


def facts_line(facts: dict[str, Any]) -> str:
    """The home in one line: its type, rooms, size, year built, status and ask.

    >>> facts_line({"PropertySubType": "Condominium", "BedroomsTotal": 2.0, "LivingArea": 1000.0,
    ...             "StandardStatus": "Active", "ListPrice": 513900.0})
    'Condominium · 2 beds · 1,000 sq ft · Active, asking $513,900'
    """
    parts = [
        facts.get("PropertySubType") or facts.get("PropertyType"),
        _count(facts.get("BedroomsTotal"), "bed", "beds"),
        _count(facts.get("BathroomsTotalInteger"), "bath", "baths"),
        _count(facts.get("LivingArea"), "sq ft", "sq ft"),
        f"built {facts['YearBuilt']:.0f}" if facts.get("YearBuilt") is not None else None,
    ]
    ask, sold = facts.get("ListPrice"), facts.get("ClosePrice")
    status = facts.get("StandardStatus") or "Listed"
    if status == "Closed":
        parts.append(f"sold for ${sold:,.0f}" if sold is not None else "sold")
        parts.append(f"last asked ${ask:,.0f}" if ask is not None else None)
    else:
        parts.append(f"{status}, asking ${ask:,.0f}" if ask is not None else f"{status}, no ask")
    return " · ".join(str(p) for p in parts if p)


def _estimate(facts: dict[str, Any], est: dict[str, float], min_sample: int) -> str:
    """The estimate in words beside the ask, rounded to what it can claim (three significant
    figures), with its n; below ``min_sample`` comps a visible notice instead of a firm figure."""
    from realtyframes.plots import money

    n = int(est.get("n", 0) or 0)
    value, low, high = (float(est.get(k, float("nan"))) for k in ("value", "low", "high"))
    if n == 0 or pd.isna(value):
        return '<p class="notice">No estimate: no comparable sale.</p>'
    ask = facts.get("ListPrice")
    text = (
        f"Estimate <strong>{esc(money(_round3(value)))}</strong> "
        f"(range {esc(money(_round3(low)))}–{esc(money(_round3(high)))}, n = {n} comps)"
    )
    if ask is not None and ask > 0:
        gap = value / ask - 1
        side = "above" if gap > 0 else "below"
        what = "its last ask" if facts.get("StandardStatus") == "Closed" else "an ask"
        text += f" against {what} of ${ask:,.0f} (the estimate is {abs(gap):.0%} {side} it)"
    if n < min_sample:
        return (
            f'<p class="notice">{text}. Only {n} comparable sale{"s" if n != 1 else ""}, '
            f"fewer than {min_sample}: too few for a firm estimate; read it as a rough guide.</p>"
        )
    return f"<p>{text}.</p>"


def _cell(value: Any, kind: str, row: str, column: str) -> Cell:
    """A grid cell; a year as the year ("1993"), not as a number ("1,993.0"); yes or no."""
    if kind == "yesno":
        flag = None if value is None or pd.isna(value) else ("Yes" if value else "No")
        return Cell(flag, "text", row=row, col=column)
    if kind == "year":
        year = None if value is None or pd.isna(value) else str(int(value))
        return Cell(year, "text", row=row, col=column)
    return Cell(value, kind, row=row, col=column)


def _street(address: object, city: object, home_city: object) -> str | None:
    """An address without its city, state and ZIP code when it is in the home's city."""
    if address is None or pd.isna(address):  # type: ignore[call-overload]
        return None
    street = str(address).split(", ")[0]
    return street if city == home_city or city is None else f"{street}, {city}"


def _grid(listing_id: str, comps: pd.DataFrame) -> str:
    """The broker's grid: one row per fact, adjustment and result; the home's column (its ask
    and facts, no adjustments), then one column per comp, most alike first."""
    facts = comps.attrs.get("subject_facts", {})
    comps = comps.assign(_neighbourhood=neighbourhood(comps))
    if "distance_km" in comps.columns:
        comps = comps.assign(_miles=comps["distance_km"] / KM_PER_MILE)
    facts = {**facts, "_neighbourhood": neighbourhood(pd.DataFrame([facts]))[0]}
    columns = [(c, h, k) for c, h, k in _GRID if c in comps.columns]
    keys = [str(k) for k in comps["ListingId"]]
    home_city = facts.get("City")
    rows: list[list[Cell | str]] = []
    for column, heading, kind in columns:
        fact = facts.get(_SUBJECT_COLUMNS.get(column, column))
        if column == "ppsf" and facts.get("ListPrice") and facts.get("LivingArea"):
            fact = facts["ListPrice"] / facts["LivingArea"]
        values = list(comps[column])
        if column == "UnparsedAddress":
            cities = list(comps["City"]) if "City" in comps.columns else [None] * len(comps)
            fact = _street(fact, home_city, home_city)
            values = [_street(a, c, home_city) for a, c in zip(values, cities, strict=True)]
        shown = "text" if column == "CloseDate" else kind
        cells = [_cell(v, kind, column, key) for v, key in zip(values, keys, strict=True)]
        rows.append([heading, _cell(fact, shown, column, "subject"), *cells])
    return _table(
        f"comps_{listing_id}",
        ["", "Home", *[f"{rank}. {key}" for rank, key in enumerate(keys, start=1)]],
        rows,
        caption=_caption(comps.attrs.get("rules", {})),
        numeric_header=[False, True, *[True] * len(keys)],
    )


def _caption(rules: dict[str, Any]) -> str:
    kind = "same type and subtype" if rules.get("same_subtype", True) else "same type"
    return (
        f"Closed sales most like the home ({kind}, within "
        f"{rules.get('radius_km', 3) / KM_PER_MILE:.1f} miles and "
        f"{rules.get('months', 12):g} months, beds ±{rules.get('beds_tolerance', 1):g}, area "
        f"±{rules.get('area_tolerance', 0.25):.0%}), most alike first by the score: 0 is a twin "
        "of the home; distance, time since the sale, size, beds, baths, age and subtype each add "
        "up to 1 as they differ, and another waterfront or building or subdivision adds 1. Each "
        "sale is adjusted to the home for its size, age, beds, baths and waterfront by what these "
        "are worth in the market's closed sales, and for the market's change since it sold. The estimate is the weighted median of the adjusted prices (a more alike "
        "sale weighs more), its range their weighted middle half. The home's column shows its ask."
    )


#: How the page names each coefficient's unit: the change its adjustment is for.
_WORTH = {
    "adj_size": "10% more living area",
    "adj_age": "a year newer",
    "adj_beds": "a bedroom more",
    "adj_baths": "a bathroom more",
    "adj_water": "on the water",
}
_PLACE = {"PostalCode": "ZIP code", "City": "city"}


def worth_line(fit: dict[str, Any]) -> str:
    """What each difference is worth in the market's closed sales, in words (empty without a fit).

    >>> worth_line({"coefficients": {"adj_size": 0.9, "adj_beds": 0.0, "adj_time": 0.04},
    ...             "n": 305, "location": "PostalCode", "reason": None})
    "What a difference is worth in the market's 305 closed sales (same ZIP code and subtype): 10% more living area +9.0%, a bedroom more 0%; prices +4.1% a year."
    """
    if fit.get("reason") or not fit.get("coefficients"):
        return ""
    worth = fit["coefficients"]
    parts = []
    for column, words in _WORTH.items():
        if column in worth:
            unit = math.log(1.1) if column == "adj_size" else 1.0
            change = math.expm1(worth[column] * unit)
            parts.append(f"{words} {change:+.1%}" if change else f"{words} 0%")
    place = _PLACE.get(str(fit.get("location")), "location")
    drift = math.expm1(worth.get("adj_time", 0.0))
    return (
        f"What a difference is worth in the market's {fit.get('n', 0):,} closed sales (same "
        f"{place} and subtype): {', '.join(parts)}; prices {drift:+.1%} a year."
    )


def _one(listing_id: str, comps: pd.DataFrame, min_sample: int) -> str:
    from realtyframes import plots

    facts = comps.attrs.get("subject_facts", {})
    fit = comps.attrs.get("adjustments", {})
    address = facts.get("UnparsedAddress") or f"Listing {listing_id}"
    warned = "".join(f'<p class="notice">{esc(w)}</p>' for w in comps.attrs.get("warnings", []))
    return (
        f"<h3>{esc(address)}</h3>"
        f"<p>{esc(facts_line(facts))} (listing {esc(listing_id)}).</p>"
        + _estimate(facts, comps.attrs.get("estimate", {}), min_sample)
        + warned
        + _grid(listing_id, comps)
        + (f'<p class="note">{esc(line)}</p>' if (line := worth_line(fit)) else "")
        + _figure(chart(plots.comps, comps), f"Comps of {address} on a map", f"comps_{listing_id}")
    )


def comps_section(report: MarketReport) -> Section | None:
    """The comparable sales of the listings named by ``--comps`` (None when none were named); an
    id that is not in the market, or cannot be compared, gets a note in its place."""
    if not report.options.comps:
        return None
    parts = []
    for listing_id in report.options.comps:
        if listing_id in report.comps:
            parts.append(_one(listing_id, report.comps[listing_id], report.options.min_sample))
        else:
            note = report.comps_notes.get(listing_id, f"No comparable sales for {listing_id}.")
            parts.append(f'<p class="notice">{esc(note)}</p>')
    return Section("comps", "Comparable sales", "".join(parts))
