"""The listings store: a deterministic synthetic market, its search, detail and change feed.

:class:`ListingStore` generates ``n`` listings visible at ``as_of``, entered over the
``history_years`` before it (plus the ones entered over the following ~12 months), from a seed
(:mod:`~realtyframes.sandbox._history`, :mod:`~realtyframes.sandbox._generate`,
:mod:`~realtyframes.sandbox._pricing`), keeps their state at the sandbox clock
(:mod:`~realtyframes.sandbox._state`) and answers the listings operations. Query strings are read
by :mod:`~realtyframes.sandbox._query`; no HTTP here: the routes call this class and render its
:class:`~realtyframes.sandbox._errors.SandboxError`.

>>> from datetime import UTC, datetime
>>> store = ListingStore(n=200, seed=7, as_of=datetime(2026, 5, 1, tzinfo=UTC))
>>> page = store.search({"City": "Miami", "Limit": "5"})
>>> page["limit"], len(page["listings"]) <= 5
(5, True)
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from realtyframes.sandbox import _market_data as md
from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._generate import GEN_SUBTYPES, derive, draw_listings, unit_text
from realtyframes.sandbox._history import draw_resales, entry_times
from realtyframes.sandbox._listing_text import detail_fields
from realtyframes.sandbox._market_path import (
    DEFAULT_HISTORY_YEARS,
    check_history_years,
    history_days,
    level_at,
)
from realtyframes.sandbox._pricing import (
    ACTIVE,
    CLOSED,
    DAY,
    INF_TS,
    LEASE_TYPE,
    PROPERTY_TYPE_CODES,
    draw_history,
    price_unit,
    round_price,
)
from realtyframes.sandbox._query import SEARCH, changes_params, parse
from realtyframes.sandbox._search import GROUPS, matching_rows
from realtyframes.sandbox._spec import MAX_LISTING_IDS, PROPERTY_TYPES, STATUSES
from realtyframes.sandbox._state import Snapshot, compute_state
from realtyframes.sandbox._tables import PREFIXES, Tables

__all__ = ["ListingStore"]

_ID = re.compile(r"A(\d{8})")
_PT = PROPERTY_TYPE_CODES


def _iso(ts: int) -> str:
    """Seconds since the epoch as ISO 8601 UTC with 'Z'."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _date(ts: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def _num(x: float) -> int | None:
    """A whole number for JSON, or None for NaN."""
    return None if x != x else int(x)


def _listing_id(num: int) -> str:
    return f"A{num:08d}"


def _utc_seconds(dt: datetime, name: str) -> int:
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware (UTC), got {dt!r}")
    return int(dt.timestamp() // 1)


class ListingStore:
    """A deterministic synthetic listings market with a movable clock.

    ``n`` listings are visible at ``as_of``, entered over the ``history_years`` before it (with
    the season, the price level and the resales of :mod:`~realtyframes.sandbox._history`);
    listings, price changes and status changes of the 12 months after ``as_of`` appear, at the
    same pace, as the clock moves.

    >>> from datetime import UTC, datetime
    >>> store = ListingStore(n=100, seed=1, as_of=datetime(2026, 5, 1, tzinfo=UTC))
    >>> first = store.search({"Limit": "1"})["listings"][0]
    >>> store.detail(first["ListingId"])["ListPrice"] == first["ListPrice"]
    True
    """

    def __init__(
        self,
        n: int = 5000,
        seed: int = 7,
        *,
        as_of: datetime,
        max_listing_ids: int = MAX_LISTING_IDS,
        history_years: int = DEFAULT_HISTORY_YEARS,
    ) -> None:
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        if max_listing_ids < 1:
            raise ValueError(f"max_listing_ids must be >= 1, got {max_listing_ids}")
        self.history_years = check_history_years(history_years)
        self.max_listing_ids = max_listing_ids
        as_of_s = _utc_seconds(as_of, "as_of")
        self._seed = seed
        self._as_of = as_of.astimezone(UTC)
        self._lock = threading.Lock()
        self._inserted_batches = 0
        year = self._as_of.year
        self._year = year
        # condo buildings stand before the history starts
        first_year = time.gmtime(as_of_s - history_days(self.history_years) * DAY).tm_year
        self._tables = Tables(seed, n, first_year)
        rng = np.random.default_rng([seed, 1])

        # entry times: n in the history (visible at as_of), the next year's at the same pace
        entry = entry_times(rng, as_of_s, n, self.history_years)
        ids = (
            10_000_000
            + int(rng.integers(0, 5_000_000))
            + np.cumsum(1 + rng.geometric(0.25, len(entry)))
        )
        level = level_at(entry, as_of_s)
        entry_year = entry.astype("datetime64[s]").astype("datetime64[Y]").astype(np.int64) + 1970
        cols = draw_listings(rng, self._tables, entry, entry_year, level=level)
        del entry_year
        cols.update(draw_history(rng, cols["ptype"], entry, cols["p0"]))
        cols["entry"] = entry
        cols["id"] = ids.astype(np.int64)
        draw_resales(np.random.default_rng([seed, 3]), cols, level)
        del level
        derive(cols, self._tables)
        self._n_base = len(entry)
        self._snap = Snapshot(cols, compute_state(cols, as_of_s), {})
        self._now = self._as_of

    # -- clock ---------------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        """The sandbox clock (starts at ``as_of``)."""
        return self._now

    def set_now(self, dt: datetime) -> None:
        """Move the clock forward to ``dt`` and recompute every listing's state.

        >>> from datetime import UTC, datetime, timedelta
        >>> s = ListingStore(n=50, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> s.set_now(s.now + timedelta(days=30)); s.now.day
        31
        """
        now_s = _utc_seconds(dt, "now")
        with self._lock:
            if dt < self._now:
                raise ValueError(
                    f"the clock only moves forward: {dt.isoformat()} < {self._now.isoformat()}"
                )
            snap = self._snap
            self._snap = Snapshot(snap.cols, compute_state(snap.cols, now_s), snap.static_orders)
            self._now = dt.astimezone(UTC)

    # -- read access for other faces of the same market (the OData face) -------------------------

    @property
    def seed(self) -> int:
        """The generator seed of this market."""
        return self._seed

    @property
    def tables(self) -> Tables:
        """The market's lookup tables (cities, agents, offices)."""
        return self._tables

    @property
    def snapshot(self) -> Snapshot:
        """The columns and the state at the clock (replaced as a whole when either changes)."""
        return self._snap

    def summaries(self, snap: Snapshot, rows: np.ndarray) -> list[dict[str, Any]]:
        """The search's records of ``rows`` of ``snap`` (what ``GET /v1/listings`` answers).

        >>> from datetime import UTC, datetime
        >>> s = ListingStore(n=50, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> len(s.summaries(s.snapshot, np.array([0, 1])))
        2
        """
        return self._summaries(snap, rows)

    def detail_of(self, snap: Snapshot, row: int, record: Mapping[str, Any]) -> dict[str, Any]:
        """The detail-only fields (remarks, features, ``Media``) of ``row``, given its summary."""
        return detail_fields(self._seed, snap.cols, row, record)

    def on_market_ids(self) -> list[str]:
        """The ListingIds of the listings for sale at the clock (Active, Pending or under
        contract; what the brokerage's website shows), oldest entry first.

        >>> from datetime import UTC, datetime
        >>> ListingStore(n=50, as_of=datetime(2026, 5, 1, tzinfo=UTC)).on_market_ids()[0][:1]
        'A'
        """
        snap = self._snap
        rows = np.flatnonzero(snap.state.visible & (snap.state.status != CLOSED))
        return [_listing_id(int(i)) for i in snap.cols["id"][rows]]

    # -- drift fault ---------------------------------------------------------------------------

    def insert_new(self, k: int, property_type: str = "Residential") -> None:
        """Insert ``k`` new Active listings entered now, priced above every listing of the market.

        The drift fault: a client paging by ``-listprice`` sees everything shift down by ``k``.

        >>> from datetime import UTC, datetime
        >>> s = ListingStore(n=50, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> before = s.search({})["total"]; s.insert_new(2); s.search({})["total"] - before
        2
        """
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        if k == 0:
            return
        if property_type not in _PT:
            raise ValueError(f"unknown property_type {property_type!r}; allowed: {', '.join(_PT)}")
        with self._lock:
            snap = self._snap
            c, st = snap.cols, snap.state
            now_s = st.now
            self._inserted_batches += 1
            rng = np.random.default_rng([self._seed, 2, self._inserted_batches])
            pt = _PT[property_type]
            base = np.zeros(len(c["entry"]), dtype=bool)
            base[: self._n_base] = True
            market = base & (st.group == pt * GROUPS + ACTIVE)
            top = float(st.list_price[market].max()) if market.any() else 1_000_000.0
            entry = np.full(k, now_s, dtype=np.int64)
            new = draw_listings(rng, self._tables, entry, self._year, np.full(k, pt, dtype=np.int8))
            lease = np.full(k, LEASE_TYPE[pt])
            price = round_price(top * rng.uniform(1.01, 1.12, k), lease, rng)
            price = np.maximum(price, top + price_unit(np.array([top]), lease))
            new["p0"] = price
            new["pc_ts"] = np.full((k, 3), INF_TS, dtype=np.int64)
            new["prices"] = np.repeat(price[:, None], 4, axis=1)
            new["st_ts"] = np.full((k, 4), INF_TS, dtype=np.int64)
            new["st_code"] = np.concatenate(
                [np.zeros((k, 1), np.int8), np.full((k, 4), -1, np.int8)], axis=1
            )
            new["close_ts"] = np.full(k, INF_TS, dtype=np.int64)
            new["close_price"] = np.full(k, np.nan)
            new["entry"] = entry
            last_id = int(c["id"][-1]) if len(c["id"]) else 10_000_000
            new["id"] = last_id + np.cumsum(1 + rng.geometric(0.25, k))
            new["prop"] = new["id"]
            derive(new, self._tables)
            cols = {name: np.concatenate([c[name], new[name]]) for name in c}
            self._snap = Snapshot(cols, compute_state(cols, now_s), {})

    # -- search --------------------------------------------------------------------------------

    def search(self, params: Mapping[str, str]) -> dict[str, Any]:
        """``GET /v1/listings``: every filter of the spec's table; raw query strings in.

        >>> from datetime import UTC, datetime
        >>> s = ListingStore(n=300, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> r = s.search({"PropertyType": "Residential Lease", "MaxListPrice": "3000", "Limit": "3"})
        >>> all(x["ListPrice"] <= 3000 for x in r["listings"])
        True
        """
        q = parse(SEARCH, params)
        snap = self._snap
        idx = matching_rows(snap, q, self._tables)
        offset, limit = q["Offset"], q["Limit"]
        page = idx[offset : offset + limit]
        return {
            "total": len(idx),
            "offset": offset,
            "limit": limit,
            "listings": self._summaries(snap, page),
        }

    def _summaries(self, snap: Snapshot, rows: np.ndarray) -> list[dict[str, Any]]:
        c, st, t = snap.cols, snap.state, self._tables
        if len(rows) == 0:
            return []
        g = {name: c[name][rows].tolist() for name in _SUMMARY_COLS}
        lp, pp = st.list_price[rows].tolist(), st.prev_price[rows].tolist()
        status, major, dom = (
            st.status[rows].tolist(),
            st.major_ts[rows].tolist(),
            st.dom[rows].tolist(),
        )
        out = []
        for i in range(len(rows)):
            closed = status[i] == CLOSED
            prefix = PREFIXES[g["prefix"][i]] or None
            street = t.streets[g["street"][i]]
            unit = unit_text(g["unit"][i]) or None
            city = t.city_names[g["city"][i]]
            zip_ = t.zips[g["zip"][i]]
            snum = str(g["number"][i])
            line = " ".join(x for x in (snum, prefix, street) if x)
            if unit:
                line += f" #{unit}"
            sub, bld, agent = g["subdiv"][i], g["building"][i], g["agent"][i]
            office = int(t.agent_office[agent])
            out.append(
                {
                    "ListingId": _listing_id(g["id"][i]),
                    "ListPrice": _num(lp[i]),
                    "PreviousListPrice": _num(pp[i]),
                    "ClosePrice": _num(g["close_price"][i]) if closed else None,
                    "StandardStatus": STATUSES[status[i]],
                    "PropertyType": PROPERTY_TYPES[g["ptype"][i]],
                    "PropertySubType": GEN_SUBTYPES[g["sub"][i]],
                    "UnparsedAddress": f"{line}, {city}, {md.STATE} {zip_}",
                    "StreetNumber": snum,
                    "StreetDirPrefix": prefix,
                    "StreetName": street,
                    "UnitNumber": unit,
                    "City": city,
                    "StateOrProvince": md.STATE,
                    "PostalCode": zip_,
                    "CountyOrParish": t.city_county[g["city"][i]],
                    "SubdivisionName": t.sub_names[sub] if sub >= 0 else None,
                    "BuildingName": t.buildings[bld] if bld >= 0 else None,
                    "BedroomsTotal": _num(g["beds"][i]),
                    "BathroomsTotalInteger": _num(g["baths"][i]),
                    "LivingArea": _num(g["area"][i]),
                    "LotSizeSquareFeet": _num(g["lot"][i]),
                    "YearBuilt": _num(g["year"][i]),
                    "DaysOnMarket": dom[i],
                    "AssociationFee": _num(g["hoa"][i]),
                    "WaterfrontYN": g["waterfront"][i],
                    "PoolPrivateYN": g["pool"][i],
                    "SeniorCommunityYN": g["senior"][i],
                    "coordinates": {"lng": g["lng"][i], "lat": g["lat"][i]},
                    "OriginalEntryTimestamp": _iso(g["entry"][i]),
                    "ModificationTimestamp": _iso(major[i]),
                    "MajorChangeTimestamp": _iso(major[i]),
                    "CloseDate": _date(g["close_ts"][i]) if closed else None,
                    "ListAgentMlsId": t.agent_ids[agent],
                    "ListOfficeMlsId": t.office_ids[office],
                    "ListOfficeName": t.office_names[office],
                }
            )
        return out

    # -- detail --------------------------------------------------------------------------------

    def _row(self, snap: Snapshot, listing_id: str) -> int | None:
        m = _ID.fullmatch(listing_id)
        if m is None:
            return None
        num = int(m.group(1))
        ids = snap.cols["id"]
        row = int(np.searchsorted(ids, num))
        if row >= len(ids) or ids[row] != num or not snap.state.visible[row]:
            return None
        return row

    def detail(self, listing_id: str) -> dict[str, Any]:
        """``GET /v1/listings/{ListingId}``: every field of the spec's Listing, Media included.

        >>> from datetime import UTC, datetime
        >>> s = ListingStore(n=200, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> lid = s.search({"Limit": "1"})["listings"][0]["ListingId"]
        >>> 5 <= len(s.detail(lid)["Media"]) <= 20
        True
        """
        snap = self._snap
        row = self._row(snap, listing_id)
        if row is None:
            raise SandboxError(404, f"no listing {listing_id!r}")
        record = self._summaries(snap, np.array([row]))[0]
        record.update(detail_fields(self._seed, snap.cols, row, record))
        return record

    # -- change feed ---------------------------------------------------------------------------

    def changes(self, params: Mapping[str, str]) -> dict[str, Any]:
        """``GET /v1/listings/changes``: price and status changes with Since < time <= now.

        >>> from datetime import UTC, datetime, timedelta
        >>> s = ListingStore(n=200, as_of=datetime(2026, 5, 1, tzinfo=UTC))
        >>> ids = ",".join(x["ListingId"] for x in s.search({"Limit": "50"})["listings"])
        >>> r = s.changes({"Since": "2025-01-01", "ListingIds": ids})
        >>> all(ch["ChangeType"] in ("price_change", "status_change") for ch in r["changes"])
        True
        """
        q = parse(changes_params(self.max_listing_ids), params)
        since, change_type = q["Since"], q["ChangeType"]
        offset, limit = q["Offset"], q["Limit"]
        snap = self._snap
        c, now = snap.cols, snap.state.now
        found = {r for r in (self._row(snap, s) for s in q["ListingIds"]) if r is not None}
        events: list[tuple[int, int, int, dict[str, Any]]] = []
        kinds = (
            ("price_change", "pc_ts", "prices", "PreviousListPrice", "ListPrice", _num),
            ("status_change", "st_ts", "st_code", "PreviousStatus", "StandardStatus", _status),
        )
        for row in sorted(found):
            lid = _listing_id(int(c["id"][row]))
            for order, (kind, ts_col, value_col, before, after, show) in enumerate(kinds):
                if change_type not in (None, kind):
                    continue
                values = c[value_col][row].tolist()
                for i, ts in enumerate(c[ts_col][row].tolist()):
                    if since < ts <= now:
                        rec = {
                            "ListingId": lid,
                            "ChangeType": kind,
                            "ChangeTimestamp": _iso(ts),
                            before: show(values[i]),
                            after: show(values[i + 1]),
                        }
                        events.append((ts, row, order, rec))
        events.sort(key=lambda e: e[:3])
        return {
            "total": len(events),
            "offset": offset,
            "limit": limit,
            "changes": [e[3] for e in events[offset : offset + limit]],
        }


def _status(code: int) -> str:
    return STATUSES[code]


_SUMMARY_COLS = (
    "id",
    "ptype",
    "sub",
    "prefix",
    "street",
    "unit",
    "number",
    "city",
    "zip",
    "subdiv",
    "building",
    "beds",
    "baths",
    "area",
    "lot",
    "year",
    "hoa",
    "waterfront",
    "pool",
    "senior",
    "lng",
    "lat",
    "entry",
    "close_ts",
    "close_price",
    "agent",
)
