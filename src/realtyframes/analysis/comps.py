"""Comparable sales: ``rf.comps(market, listing)`` — the closed sales most like a listing, adjusted.

A comp is a Closed sale of the same PropertyType (and subtype, by default) within ``radius_km``
(great-circle distance on Latitude / Longitude), sold within ``months`` before the market's newest
timestamp, with bedrooms within ``beds_tolerance`` and living area within ``area_tolerance`` of
the subject's. Comps are ranked by a similarity score, lower is more alike (docs/metrics.md):

    score = distance_km / radius_km + months_ago / months
            + |area / subject_area - 1| / area_tolerance + |beds - subject_beds| / (beds_tolerance + 1)
            + min(|baths - subject_baths| / 2, 1) + min(|year_built - subject_year_built| / 20, 1)
            + (1 if another subtype) + (1 if waterfront differs) + (1 if another neighbourhood)

each term in [0, 1] for a comp that meets its rule, so no one rule dominates (an unknown bath
count, year built or waterfront counts 1, a column the market lacks 0; the neighbourhood is the
building where there is one, else the subdivision). Each comp is adjusted to the subject
for size, age, beds, baths and the market's change since its sale (:mod:`._comps_adjust`); the
estimate is the weighted median of the adjusted prices (weight 1 / (1 + score)), its range their
weighted 25th to 75th percentile (``attrs["estimate"]``), so the range always contains it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from realtyframes.analysis._common import (
    AnalysisInputError,
    check_columns,
    check_frame,
    check_number,
    to_float,
    to_utc,
)
from realtyframes.analysis._comps_adjust import (
    ADJUSTMENTS,
    Adjustments,
    adjust,
    fit_adjustments,
    weighted_quantile,
)
from realtyframes.errors import DataQualityWarning

__all__ = [
    "COMP_COLUMNS",
    "EARTH_RADIUS_KM",
    "MAX_PPSF_SPREAD",
    "MIN_COMPS",
    "SUBJECT_FACTS",
    "comps",
    "comps_warnings",
    "haversine_km",
    "neighbourhood",
    "subject_facts",
]

#: Mean Earth radius (IUGG), for great-circle distances.
EARTH_RADIUS_KM = 6371.0088
#: Columns added to the comps' listing columns, in order.
COMP_COLUMNS: tuple[str, ...] = (
    "distance_km",
    "months_ago",
    "ppsf",
    *ADJUSTMENTS,
    "adjusted_price",
    "score",
    "weight",
    "why",
)
#: The subject's facts kept in ``attrs["subject_facts"]`` (those the market has).
SUBJECT_FACTS: tuple[str, ...] = (
    "ListingId", "UnparsedAddress", "City", "PostalCode", "PropertyType", "PropertySubType",
    "BedroomsTotal", "BathroomsTotalInteger", "LivingArea", "YearBuilt", "WaterfrontYN",
    "SubdivisionName", "BuildingName", "StandardStatus", "ListPrice", "ClosePrice",
)  # fmt: skip
#: Largest ratio of the comps' highest to lowest $/sq ft before the spread is warned about.
MAX_PPSF_SPREAD = 2.0
#: Fewest comps for an estimate without a warning.
MIN_COMPS = 3
_NEEDED = (
    "ListingId",
    "StandardStatus",
    "PropertyType",
    "PropertySubType",
    "BedroomsTotal",
    "LivingArea",
    "ClosePrice",
    "CloseDate",
    "Latitude",
    "Longitude",
)
_SHOWN = ("UnparsedAddress", "City", "PostalCode", "SubdivisionName", "BuildingName",
          "PropertySubType", "BedroomsTotal", "BathroomsTotalInteger", "LivingArea", "YearBuilt",
          "WaterfrontYN", "ClosePrice", "CloseDate", "Latitude", "Longitude")  # fmt: skip
_DAYS_PER_MONTH = 30.4375


def haversine_km(lat1: Any, lon1: Any, lat2: Any, lon2: Any) -> np.ndarray:
    """Great-circle distance in km between points given in degrees (vectorised).

    >>> round(float(haversine_km(51.5074, -0.1278, 48.8566, 2.3522)))  # London - Paris
    344
    """
    p1, p2 = np.radians(np.asarray(lat1, dtype="float64")), np.radians(np.asarray(lat2, "float64"))
    dlat = p2 - p1
    dlon = np.radians(np.asarray(lon2, dtype="float64") - np.asarray(lon1, dtype="float64"))
    a = np.sin(dlat / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dlon / 2) ** 2
    return np.asarray(2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0))))


def _subject(market: pd.DataFrame, listing: Any, func: str) -> pd.Series:
    if isinstance(listing, pd.Series):
        return listing
    if isinstance(listing, pd.DataFrame) and len(listing) == 1:
        return listing.iloc[0]
    if isinstance(listing, str):
        found = market[market["ListingId"].astype("str") == listing]
        if len(found):
            return found.iloc[0]
        raise AnalysisInputError(f"{func}(): no listing {listing!r} in `market`")
    raise AnalysisInputError(
        f"{func}(): `listing` must be a ListingId or one row of the market, got "
        f"{type(listing).__name__}"
    )


def _number(row: pd.Series, column: str) -> float:
    value = pd.to_numeric(pd.Series([row.get(column)]), errors="coerce").iloc[0]
    return float(value) if not pd.isna(value) else float("nan")


def comps(
    market: pd.DataFrame,
    listing: Any,
    *,
    radius_km: float = 1.5,
    months: float = 6,
    max_results: int = 10,
    same_subtype: bool = True,
    beds_tolerance: int = 1,
    area_tolerance: float = 0.25,
) -> pd.DataFrame:
    """The closed sales most like ``listing`` (a ListingId or a row), most alike first, each
    adjusted to it.

    Columns: ListingId, the comp's address, city, subtype, beds, baths, area, year built, close
    price and date, coordinates, then ``distance_km``, ``months_ago``, ``ppsf`` (ClosePrice /
    LivingArea), the dollar adjustments ``adj_size``, ``adj_age``, ``adj_beds``, ``adj_baths``,
    ``adj_water``, ``adj_time``, ``adjusted_price`` (ClosePrice plus the adjustments), ``score``
    (lower is more alike; see the module), ``weight`` (its share of the estimate) and ``why``. ``attrs``:
    ``subject`` (its ListingId), ``subject_facts`` (address, type, beds, baths, area, year built,
    status and ask), ``estimate`` (value, low, high, ppsf, n), ``adjustments`` (the fitted
    coefficients, on how many sales), ``warnings`` (in plain words: too few comps, $/sq ft spread
    over 2x) and ``no_coordinates`` (closed sales without coordinates; also a
    ``DataQualityWarning``).

    >>> c = rf.comps(market, "A12345678", radius_km=2, months=12)  # doctest: +SKIP
    >>> c.attrs["estimate"]["value"], c[["UnparsedAddress", "adjusted_price", "score"]]  # doctest: +SKIP
    """
    func = "comps"
    check_frame(market, "market", func)
    check_columns(market, _NEEDED, "market", func)
    rules = _rules(radius_km, months, same_subtype, beds_tolerance, area_tolerance, func)
    if not isinstance(max_results, int) or isinstance(max_results, bool) or max_results < 1:
        raise AnalysisInputError(f"{func}(): `max_results` must be an integer >= 1")
    subject = _subject(market, listing, func)
    lat, lon = _number(subject, "Latitude"), _number(subject, "Longitude")
    if np.isnan(lat) or np.isnan(lon):
        raise AnalysisInputError(
            f"{func}(): the subject {subject['ListingId']!r} has no coordinates"
        )
    sales, closed_at, newest = _closed_sales(market, subject, func)
    fit = fit_adjustments(sales, closed_at, newest, func)
    pool, missing = _candidates(sales, subject, same_subtype, func)
    ago = (newest - closed_at[pool.index]).dt.total_seconds() / 86400 / _DAYS_PER_MONTH
    dist = haversine_km(
        lat,
        lon,
        to_float(pool["Latitude"], "Latitude", func).to_numpy(),
        to_float(pool["Longitude"], "Longitude", func).to_numpy(),
    )
    keep, score = _rules_and_score(pool, subject, dist, ago.to_numpy(), rules, func)
    out = pool[[c for c in ("ListingId", *_SHOWN) if c in pool.columns]].copy()
    out["distance_km"], out["months_ago"] = dist, ago.to_numpy()
    price, area_c = _floats(out, "ClosePrice", func), _floats(out, "LivingArea", func)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["ppsf"] = np.where(area_c > 0, price / area_c, np.nan)
    out = out[keep].assign(score=score[keep])
    out = out.sort_values(["score", "ListingId"], kind="stable").head(max_results)
    out = pd.concat([out, adjust(out, subject, out["months_ago"].to_numpy(), fit, func)], axis=1)
    weight = 1.0 / (1.0 + out["score"].to_numpy(dtype="float64"))
    out["weight"] = weight / weight.sum() if len(out) else weight
    area, beds = _number(subject, "LivingArea"), _number(subject, "BedroomsTotal")
    out["why"] = _why(out, subject, same_subtype, area, beds)
    out = out[[*[c for c in out.columns if c not in COMP_COLUMNS], *COMP_COLUMNS]]
    out = out.reset_index(drop=True)
    estimate = _estimate(out["adjusted_price"], out["weight"], area)
    out.attrs = {
        "subject": str(subject["ListingId"]),
        "subject_location": (lat, lon),
        "subject_facts": subject_facts(subject),
        "estimate": estimate,
        "adjustments": fit.as_dict(),
        "warnings": comps_warnings(out, subject, fit),
        "no_coordinates": missing,
        "rules": rules,
    }
    return out


def _rules(
    radius_km: float, months: float, same_subtype: bool, beds_tolerance: float,
    area_tolerance: float, func: str,
) -> dict[str, Any]:  # fmt: skip
    """The rules a comp must meet, checked (``attrs["rules"]``)."""
    return {
        "radius_km": check_number(radius_km, "radius_km", func, low=0.0, low_inclusive=False),
        "months": check_number(months, "months", func, low=0.0, low_inclusive=False),
        "same_subtype": same_subtype,
        "beds_tolerance": check_number(beds_tolerance, "beds_tolerance", func, low=0.0),
        "area_tolerance": check_number(area_tolerance, "area_tolerance", func, low=0.0),
    }


def _floats(frame: pd.DataFrame, column: str, func: str) -> np.ndarray:
    if column not in frame.columns:
        return np.full(len(frame), np.nan)
    return to_float(frame[column], column, func).to_numpy(dtype="float64")


def _closed_sales(
    market: pd.DataFrame, subject: pd.Series, func: str
) -> tuple[pd.DataFrame, pd.Series, pd.Timestamp]:
    """The closed sales of the subject's PropertyType up to the market's newest timestamp (the
    subject left out), their close times, and that newest timestamp."""
    closed_at = to_utc(market["CloseDate"], "CloseDate", func)
    newest = pd.Timestamp(max(
        to_utc(market[c], c, func).max()
        for c in ("CloseDate", "OriginalEntryTimestamp", "MajorChangeTimestamp")
        if c in market.columns
    ))  # fmt: skip
    text = {c: market[c].astype("str").to_numpy() for c in ("StandardStatus", "ListingId",
                                                            "PropertyType")}  # fmt: skip
    sale = (text["StandardStatus"] == "Closed") & closed_at.notna().to_numpy()
    sale &= (closed_at <= newest).to_numpy()
    sale &= text["ListingId"] != str(subject["ListingId"])
    sale &= text["PropertyType"] == str(subject["PropertyType"])
    return market[sale].reset_index(drop=True), closed_at[sale].reset_index(drop=True), newest


def _candidates(
    sales: pd.DataFrame, subject: pd.Series, same_subtype: bool, func: str
) -> tuple[pd.DataFrame, list[str]]:
    """The sales that may be comps (located; same subtype when asked) and the ids of those left
    out for want of coordinates (warned)."""
    ok = np.ones(len(sales), dtype=bool)
    if same_subtype:
        ok &= sales["PropertySubType"].astype("str").to_numpy() == str(subject["PropertySubType"])
    lat = to_float(sales["Latitude"], "Latitude", func).to_numpy()
    lon = to_float(sales["Longitude"], "Longitude", func).to_numpy()
    located = ~np.isnan(lat) & ~np.isnan(lon)
    missing = sales.loc[ok & ~located, "ListingId"].astype("str").tolist()
    if missing:
        warnings.warn(
            f"{func}(): {len(missing)} closed sales have no coordinates and cannot be comps "
            "(attrs['no_coordinates'])",
            DataQualityWarning,
            stacklevel=3,
        )
    return sales[ok & located], missing


def _rules_and_score(
    pool: pd.DataFrame,
    subject: pd.Series,
    dist: np.ndarray,
    ago: np.ndarray,
    rules: dict[str, Any],
    func: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Which candidates meet the rules, and each one's similarity score (see the module)."""
    area, beds = _number(subject, "LivingArea"), _number(subject, "BedroomsTotal")
    area_tol, beds_tol = rules["area_tolerance"], rules["beds_tolerance"]
    c_area, c_beds = _floats(pool, "LivingArea", func), _floats(pool, "BedroomsTotal", func)
    with np.errstate(invalid="ignore", divide="ignore"):
        area_gap = np.abs(c_area / area - 1.0)
        beds_gap = np.abs(c_beds - beds)
        keep = (dist <= rules["radius_km"]) & (ago >= 0) & (ago <= rules["months"])
        keep &= np.isnan(area) | (area_gap <= area_tol)
        keep &= np.isnan(beds) | (beds_gap <= beds_tol)
        score = dist / rules["radius_km"] + ago / rules["months"]
        score += np.nan_to_num(beds_gap / (beds_tol + 1))
        score += np.nan_to_num(area_gap / area_tol) if area_tol else 0.0
        for column, scale in (("BathroomsTotalInteger", 2.0), ("YearBuilt", 20.0)):
            if column in pool.columns:
                gap = np.abs(_floats(pool, column, func) - _number(subject, column)) / scale
                score += np.where(np.isnan(gap), 1.0, np.minimum(gap, 1.0))
    other = pool["PropertySubType"].astype("str").to_numpy() != str(subject["PropertySubType"])
    score = score + other.astype("float64")
    for column in ("WaterfrontYN", "_neighbourhood"):
        if column == "WaterfrontYN" and column not in pool.columns:
            continue
        theirs, mine = _place(pool, column), _place(subject.to_frame().T, column)[0]
        if column == "WaterfrontYN" or any(v is not None for v in theirs) or mine is not None:
            score += np.array([1.0 if v is None or v != mine else 0.0 for v in theirs])
    return keep, score


def _place(frame: pd.DataFrame, column: str) -> list[Any]:
    """Each row's waterfront (True / False / None), or its :func:`neighbourhood`."""
    if column == "WaterfrontYN":
        return [None if pd.isna(v) else bool(v) for v in frame[column]]
    return neighbourhood(frame)


def neighbourhood(frame: pd.DataFrame) -> list[str | None]:
    """Each row's neighbourhood as the comps' score reads it: the building's name where it has
    one, else the subdivision's (None: neither).

    >>> neighbourhood(pd.DataFrame({"SubdivisionName": ["Hunters Run", "Brickell"],
    ...                             "BuildingName": [None, "Icon Tower"]}))
    ['Hunters Run', 'Icon Tower']
    """
    names: list[str | None] = [None] * len(frame)
    for name in ("SubdivisionName", "BuildingName"):  # the building wins
        if name in frame.columns:
            names = [n if v is None or pd.isna(v) or str(v) == "" else str(v)
                     for n, v in zip(names, frame[name], strict=True)]  # fmt: skip
    return names


def _why(
    out: pd.DataFrame, subject: pd.Series, same_subtype: bool, area: float, beds: float
) -> list[str]:
    reasons = []
    for row in out.itertuples(index=False):
        parts = [f"{row.distance_km:.2f} km away", f"sold {row.months_ago:.1f} months ago"]
        if same_subtype:
            parts.append(f"same subtype ({row.PropertySubType})")
        if not np.isnan(beds) and not pd.isna(row.BedroomsTotal):
            parts.append(f"{int(row.BedroomsTotal)} beds (subject {int(beds)})")
        if not np.isnan(area) and not pd.isna(row.LivingArea):
            parts.append(f"{row.LivingArea:,.0f} sq ft ({row.LivingArea / area - 1:+.0%})")
        reasons.append("; ".join(parts))
    return reasons


def _estimate(adjusted: pd.Series, weight: pd.Series, area: float) -> dict[str, float | int]:
    """The weighted median of the adjusted prices; range: their weighted 25th-75th percentile."""
    values = adjusted.to_numpy(dtype="float64")
    w = weight.to_numpy(dtype="float64")
    n = int(np.isfinite(values).sum())
    low, value, high = (weighted_quantile(values, w, q) for q in (0.25, 0.5, 0.75))
    ppsf = value / area if area > 0 else float("nan")
    return {"value": value, "low": low, "high": high, "ppsf": ppsf, "n": n}


def subject_facts(subject: pd.Series) -> dict[str, Any]:
    """The subject's facts (:data:`SUBJECT_FACTS` that it has) as plain Python values.

    >>> subject_facts(pd.Series({"ListingId": "A1", "LivingArea": 1200.0, "ListPrice": None}))
    {'ListingId': 'A1', 'LivingArea': 1200.0, 'ListPrice': None}
    """
    facts: dict[str, Any] = {}
    for name in SUBJECT_FACTS:
        if name not in subject.index:
            continue
        value = subject[name]
        if pd.isna(value):
            facts[name] = None
        elif isinstance(value, bool | np.bool_):
            facts[name] = bool(value)
        elif isinstance(value, np.integer | np.floating | int | float):
            facts[name] = float(value)
        else:
            facts[name] = str(value)
    return facts


def comps_warnings(out: pd.DataFrame, subject: pd.Series, fit: Adjustments) -> list[str]:
    """What a reader must know before trusting the estimate, in plain words: fewer than
    :data:`MIN_COMPS` comps, their $/sq ft spread over :data:`MAX_PPSF_SPREAD` to 1, no
    adjustments, a characteristic of the subject unknown."""
    found: list[str] = []
    n = len(out)
    if n < MIN_COMPS:
        count = "No comparable sale" if n == 0 else f"Only {n} comparable sale{'s' * (n > 1)}"
        found.append(f"{count}: fewer than {MIN_COMPS}, too few for a firm estimate.")
    ppsf = out["ppsf"].to_numpy(dtype="float64") if n else np.array([])
    ppsf = ppsf[np.isfinite(ppsf) & (ppsf > 0)]
    if len(ppsf) >= 2 and ppsf.max() / ppsf.min() > MAX_PPSF_SPREAD:
        found.append(
            f"The comparable sales' prices per square foot differ by more than {MAX_PPSF_SPREAD:g} "
            f"to 1 (${ppsf.min():,.0f} to ${ppsf.max():,.0f}): these homes are less alike than "
            "their size, age and rooms show (location, view, condition), so the estimate is "
            "uncertain."
        )
    if fit.reason is not None:
        found.append("The sales are not adjusted for size, age, beds or baths: the market has "
                     "too few closed sales with those facts to measure what each is worth.")  # fmt: skip
    for column, (characteristic, words) in ADJUSTMENTS.items():
        known = characteristic in subject.index and not pd.isna(subject[characteristic])
        if column != "adj_time" and not known and fit.coefficients.get(column):
            found.append(f"The home's {words} is not known: no adjustment for it.")
    return found
