"""Comparable sales: ``rf.comps(market, listing)`` — the closed sales most like a listing.

A comp is a Closed sale of the same PropertyType (and subtype, by default) within ``radius_km``
(great-circle distance on Latitude / Longitude), sold within ``months`` before the market's newest
timestamp, with bedrooms within ``beds_tolerance`` and living area within ``area_tolerance`` of
the subject's. Comps are ranked by a similarity score, lower is closer (docs/metrics.md):

    score = distance_km / radius_km + months_ago / months
            + |area / subject_area - 1| / area_tolerance + |beds - subject_beds| / (beds_tolerance + 1)

each term in [0, 1] for a comp that meets its rule, so no one rule dominates. The estimate is the
median comp $/sq ft × the subject's area, with the interquartile range of the comps' $/sq ft as
its range (``attrs["estimate"]``).
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
from realtyframes.errors import DataQualityWarning

__all__ = ["COMP_COLUMNS", "EARTH_RADIUS_KM", "comps", "haversine_km"]

#: Mean Earth radius (IUGG), for great-circle distances.
EARTH_RADIUS_KM = 6371.0088
#: Columns added to the comps' listing columns, in order.
COMP_COLUMNS: tuple[str, ...] = ("distance_km", "months_ago", "ppsf", "score", "why")
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
_SHOWN = ("UnparsedAddress", "City", "PostalCode", "PropertySubType", "BedroomsTotal",
          "LivingArea", "ClosePrice", "CloseDate", "Latitude", "Longitude")  # fmt: skip
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


def _number(row: pd.Series, column: str, func: str) -> float:
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
    """The closed sales most like ``listing`` (a ListingId or a row), closest first.

    Columns: ListingId, the comp's address, city, subtype, beds, area, close price and date,
    coordinates, then ``distance_km``, ``months_ago``, ``ppsf`` (ClosePrice / LivingArea),
    ``score`` (lower is closer; see the module) and ``why`` (the rules it met). ``attrs``:
    ``subject`` (its ListingId), ``estimate`` (value, low, high, ppsf, n) and ``no_coordinates``
    (closed sales left out for want of coordinates; also a ``DataQualityWarning``).

    >>> c = rf.comps(market, "A12345678", radius_km=2, months=12)  # doctest: +SKIP
    >>> c.attrs["estimate"]["value"], c[["UnparsedAddress", "distance_km", "why"]]  # doctest: +SKIP
    """
    func = "comps"
    check_frame(market, "market", func)
    check_columns(market, _NEEDED, "market", func)
    radius = check_number(radius_km, "radius_km", func, low=0.0, low_inclusive=False)
    span = check_number(months, "months", func, low=0.0, low_inclusive=False)
    area_tol = check_number(area_tolerance, "area_tolerance", func, low=0.0)
    beds_tol = check_number(beds_tolerance, "beds_tolerance", func, low=0.0)
    if not isinstance(max_results, int) or isinstance(max_results, bool) or max_results < 1:
        raise AnalysisInputError(f"{func}(): `max_results` must be an integer >= 1")
    subject = _subject(market, listing, func)
    lat, lon = _number(subject, "Latitude", func), _number(subject, "Longitude", func)
    area, beds = _number(subject, "LivingArea", func), _number(subject, "BedroomsTotal", func)
    if np.isnan(lat) or np.isnan(lon):
        raise AnalysisInputError(
            f"{func}(): the subject {subject['ListingId']!r} has no coordinates"
        )
    candidates, closed_at, newest, missing = _closed_sales(market, subject, same_subtype, func)
    dist = haversine_km(
        lat,
        lon,
        to_float(candidates["Latitude"], "Latitude", func).to_numpy(),
        to_float(candidates["Longitude"], "Longitude", func).to_numpy(),
    )
    ago = ((newest - closed_at).dt.total_seconds() / 86400 / _DAYS_PER_MONTH).to_numpy()
    c_area = to_float(candidates["LivingArea"], "LivingArea", func).to_numpy()
    c_beds = to_float(candidates["BedroomsTotal"], "BedroomsTotal", func).to_numpy()
    price = to_float(candidates["ClosePrice"], "ClosePrice", func).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        area_gap = np.abs(c_area / area - 1.0)
        beds_gap = np.abs(c_beds - beds)
        keep = (dist <= radius) & (ago >= 0) & (ago <= span)
        keep &= np.isnan(area) | (area_gap <= area_tol)
        keep &= np.isnan(beds) | (beds_gap <= beds_tol)
        score = dist / radius + ago / span + np.nan_to_num(beds_gap / (beds_tol + 1))
        score += np.nan_to_num(area_gap / area_tol) if area_tol else 0.0
        ppsf = np.where(c_area > 0, price / c_area, np.nan)
    out = candidates[[c for c in ("ListingId", *_SHOWN) if c in candidates.columns]].copy()
    out["distance_km"], out["months_ago"], out["ppsf"], out["score"] = dist, ago, ppsf, score
    out = out[keep]
    out = out.sort_values(["score", "ListingId"], kind="stable").head(max_results)
    out["why"] = _why(out, subject, same_subtype, area, beds)
    out = out.reset_index(drop=True)
    out.attrs = {
        "subject": str(subject["ListingId"]),
        "subject_location": (lat, lon),
        "estimate": _estimate(out["ppsf"], area),
        "no_coordinates": missing,
        "rules": {
            "radius_km": radius,
            "months": span,
            "same_subtype": same_subtype,
            "beds_tolerance": beds_tol,
            "area_tolerance": area_tol,
        },
    }
    return out


def _closed_sales(
    market: pd.DataFrame, subject: pd.Series, same_subtype: bool, func: str
) -> tuple[pd.DataFrame, pd.Series, pd.Timestamp, list[str]]:
    """Closed sales that may be comps (located, same type, not the subject), their close times,
    the market's newest timestamp, and the ids of closed sales without coordinates (warned)."""
    closed_at = to_utc(market["CloseDate"], "CloseDate", func)
    newest = max(
        to_utc(market[c], c, func).max()
        for c in ("CloseDate", "OriginalEntryTimestamp", "MajorChangeTimestamp")
        if c in market.columns
    )
    names = ("StandardStatus", "ListingId", "PropertyType", "PropertySubType")
    text = {c: market[c].astype("str").to_numpy() for c in names}
    sale = (text["StandardStatus"] == "Closed") & closed_at.notna().to_numpy()
    sale &= text["ListingId"] != str(subject["ListingId"])
    sale &= text["PropertyType"] == str(subject["PropertyType"])
    if same_subtype:
        sale &= text["PropertySubType"] == str(subject["PropertySubType"])
    lat = to_float(market["Latitude"], "Latitude", func).to_numpy()
    lon = to_float(market["Longitude"], "Longitude", func).to_numpy()
    located = ~np.isnan(lat) & ~np.isnan(lon)
    missing = market.loc[sale & ~located, "ListingId"].astype("str").tolist()
    if missing:
        warnings.warn(
            f"{func}(): {len(missing)} closed sales have no coordinates and cannot be comps "
            "(attrs['no_coordinates'])",
            DataQualityWarning,
            stacklevel=3,
        )
    return market[sale & located], closed_at[sale & located], pd.Timestamp(newest), missing


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


def _estimate(ppsf: pd.Series, area: float) -> dict[str, float | int]:
    """Median comp $/sq ft × the subject's area; range: the comps' interquartile $/sq ft."""
    known = ppsf.dropna()
    if not len(known) or np.isnan(area):
        nan = float("nan")
        return {"value": nan, "low": nan, "high": nan, "ppsf": nan, "n": len(known)}
    q1, median, q3 = np.percentile(known.to_numpy(), [25, 50, 75])
    return {"value": float(median * area), "low": float(q1 * area), "high": float(q3 * area),
            "ppsf": float(median), "n": len(known)}  # fmt: skip
