"""Website analytics for the sandbox (``/v1/analytics``), aggregated on request from sessions.

About 13 months of sessions before ``as_of`` and a year after it (revealed as the sandbox clock
moves) are generated once, vectorised, from the seed: traffic that grows, dips on weekends, peaks in
the South-Florida winter season, newsletter spikes every other Tuesday and a few paid social
campaigns. Each session has a visitor (cookie: the same device, OS, browser and country on every
visit), a start time, a duration, the pages it viewed, a referrer, UTM tags and whether a lead form
was submitted. A query keeps the sessions that started in ``[now - Period, now)`` and match the
filters, then counts them, so a filtered answer is always a consistent subset of the unfiltered one.

>>> from datetime import UTC, datetime
>>> store = AnalyticsStore(seed=7, as_of=datetime(2025, 6, 1, tzinfo=UTC))
>>> answer = store.query({"Period": "7d", "Device": "mobile"})
>>> len(answer["timelines"]["visitors"])
7
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from realtyframes.sandbox._analytics_gen import DAY, generate
from realtyframes.sandbox._query import ANALYTICS, parse
from realtyframes.sandbox._spec import DEVICES, PERIODS, UTM_PARTS

__all__ = ["AnalyticsStore"]

_DAY = DAY


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _count_unique_pairs(
    group: np.ndarray, member: np.ndarray, n_members: int, n_groups: int
) -> np.ndarray:
    """For each group, how many distinct members occur with it (sort-based; fast for 1e5-1e6)."""
    if group.size == 0:
        return np.zeros(n_groups, dtype=np.int64)
    key = np.sort(group.astype(np.int64) * n_members + member)
    first = np.empty(key.size, dtype=bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    return np.bincount(key[first] // n_members, minlength=n_groups)


class AnalyticsStore:
    """Website sessions of the demo site, aggregated on request up to the sandbox clock ``now``.

    >>> from datetime import UTC, datetime
    >>> store = AnalyticsStore(as_of=datetime(2025, 6, 1, tzinfo=UTC))
    >>> whole = store.query({})
    >>> parts = [store.query({"Device": d})["overview"]["sessions"] for d in DEVICES]
    >>> sum(parts) == whole["overview"]["sessions"]
    True
    """

    def __init__(
        self,
        seed: int = 7,
        as_of: datetime | None = None,
        listing_ids: Sequence[str] | None = None,
    ) -> None:
        if as_of is None:
            as_of = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        self.seed = seed
        self.as_of = _utc(as_of)
        self._listing_ids = listing_ids
        self._now = self.as_of
        self._visitor_ids: dict[str, int] | None = None  # built on the first VisitorId query
        self._generate()

    # -- clock ---------------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        """The sandbox clock: sessions starting at or after it are not visible yet."""
        return self._now

    def set_now(self, dt: datetime) -> None:
        """Move the clock; the Period windows end at the new time.

        >>> from datetime import UTC, datetime, timedelta
        >>> store = AnalyticsStore(as_of=datetime(2025, 6, 1, tzinfo=UTC))
        >>> store.set_now(store.now + timedelta(days=1))
        >>> store.query({"Period": "24h"})["timelines"]["sessions"][0]["date"]
        '2025-06-01'
        """
        self._now = _utc(dt)

    # -- the operation -------------------------------------------------------------------------

    def query(self, params: Mapping[str, str]) -> dict[str, Any]:
        """The analytics result for ``Period`` and the filters (spec names; unknown names ignored).

        >>> from datetime import UTC, datetime
        >>> store = AnalyticsStore(as_of=datetime(2025, 6, 1, tzinfo=UTC))
        >>> store.query({"Period": "2w"})
        Traceback (most recent call last):
        ...
        realtyframes.sandbox._errors.SandboxError: 400 bad_request: Period: unknown value '2w'; allowed: 24h, 7d, 30d, 90d, 1y
        """
        query = parse(ANALYTICS, params)
        period = query["Period"]
        end = self._now.timestamp()
        start = end - PERIODS[period].total_seconds()
        lo = int(np.searchsorted(self._start, start, side="left"))
        hi = int(np.searchsorted(self._start, end, side="left"))
        selection = self._select(lo, hi, query)
        first_day = int(start // _DAY)
        last_day = int(np.ceil(end / _DAY)) - 1  # the day holding the last instant before `end`
        return self._aggregate(period, selection, lo, hi, first_day, last_day)

    # -- selection and aggregation -------------------------------------------------------------

    def _select(self, lo: int, hi: int, params: Mapping[str, str]) -> slice | np.ndarray:
        """Sessions in ``[lo, hi)`` matching the filters: a slice when unfiltered, else indices."""
        mask: np.ndarray | None = None

        def narrow(part: np.ndarray) -> None:
            nonlocal mask
            mask = part if mask is None else mask & part

        for name, (codes, names) in self._session_dims.items():
            value = params.get(name)
            if value is not None:
                code = names.get(value, -1)
                narrow(codes[lo:hi] == code)
        for name, (codes, names) in self._visitor_dims.items():
            value = params.get(name)
            if value is not None:
                code = names.get(value, -1)
                narrow(codes[self._visitor[lo:hi]] == code)
        visitor_id = params.get("VisitorId")
        if visitor_id is not None:
            narrow(self._visitor[lo:hi] == self._visitor_index().get(visitor_id, -1))
        page = params.get("Page")
        if page is not None:
            viewed = np.zeros(hi - lo, dtype=bool)
            code = self._page_index.get(page, -1)
            flo, fhi = self._offsets[lo], self._offsets[hi]
            hits = np.flatnonzero(self._flat_page[flo:fhi] == code) + flo
            viewed[self._flat_session[hits] - lo] = True
            narrow(viewed)
        if mask is None:
            return slice(lo, hi)
        return np.flatnonzero(mask) + lo

    def _aggregate(
        self,
        period: str,
        sel: slice | np.ndarray,
        lo: int,
        hi: int,
        first_day: int,
        last_day: int,
    ) -> dict[str, Any]:
        visitor = self._visitor[sel]
        npages = self._npages[sel]
        converted = self._converted[sel]
        n_visitors = self._n_visitors
        sessions = int(visitor.size)
        seen = np.zeros(n_visitors, dtype=bool)
        seen[visitor] = True
        unique_visitors = np.flatnonzero(seen)
        pageviews = int(npages.sum())
        conversions = int(converted.sum())
        bounces = int(np.count_nonzero(npages == 1))
        duration = float(self._duration[sel].sum())
        overview = {
            "visitors": int(unique_visitors.size),
            "pageviews": pageviews,
            "sessions": sessions,
            "conversions": conversions,
            "conversion_rate": round(conversions / sessions, 4) if sessions else 0.0,
            "bounce_rate": round(bounces / sessions, 4) if sessions else 0.0,
            "avg_session_seconds": round(duration / sessions, 1) if sessions else 0.0,
        }
        weights_pv = npages.astype(np.float64)
        timelines = self._timelines(sel, visitor, weights_pv, converted, first_day, last_day)

        def breakdown(
            codes: np.ndarray, labels: Sequence[str], skip_empty: bool = False
        ) -> list[dict[str, Any]]:
            k = len(labels)
            visitors = _count_unique_pairs(codes, visitor, n_visitors, k)
            return self._items(
                labels,
                visitors,
                np.bincount(codes, weights=weights_pv, minlength=k),
                np.bincount(codes, weights=converted, minlength=k),
                skip_empty,
            )

        def visitor_breakdown(
            by_visitor: np.ndarray, labels: Sequence[str]
        ) -> list[dict[str, Any]]:
            k = len(labels)
            codes = by_visitor[visitor]
            return self._items(
                labels,
                np.bincount(by_visitor[unique_visitors], minlength=k),
                np.bincount(codes, weights=weights_pv, minlength=k),
                np.bincount(codes, weights=converted, minlength=k),
            )

        result: dict[str, Any] = {"period": period, "overview": overview, "timelines": timelines}
        result["pages"] = self._pages_breakdown(sel, lo, hi)
        result["referrers"] = breakdown(self._referrer[sel], self._labels["Referrer"])
        result["countries"] = visitor_breakdown(self._country, self._labels["Country"])
        result["browsers"] = visitor_breakdown(self._browser, self._labels["Browser"])
        result["os"] = visitor_breakdown(self._os, self._labels["OS"])
        result["devices"] = visitor_breakdown(self._device, self._labels["Device"])
        result["utm"] = {
            part: breakdown(self._session_dims[name][0][sel], self._labels[name], skip_empty=True)
            for part, name in UTM_PARTS.items()
        }
        return result

    def _timelines(
        self,
        sel: slice | np.ndarray,
        visitor: np.ndarray,
        weights_pv: np.ndarray,
        converted: np.ndarray,
        first_day: int,
        last_day: int,
    ) -> dict[str, list[dict[str, Any]]]:
        """One point per day of the window and metric, zeros included."""
        n_visitors = self._n_visitors
        n_days = last_day - first_day + 1
        day = self._day[sel] - first_day
        timeline_values = {
            "visitors": _count_unique_pairs(day, visitor, n_visitors, n_days),
            "pageviews": np.bincount(day, weights=weights_pv, minlength=n_days),
            "sessions": np.bincount(day, minlength=n_days),
            "conversions": np.bincount(day, weights=converted, minlength=n_days),
        }
        dates = [
            (date(1970, 1, 1) + timedelta(days=first_day + i)).isoformat() for i in range(n_days)
        ]
        return {
            metric: [{"date": d, "value": int(v)} for d, v in zip(dates, values, strict=True)]
            for metric, values in timeline_values.items()
        }

    def _pages_breakdown(self, sel: slice | np.ndarray, lo: int, hi: int) -> list[dict[str, Any]]:
        flo, fhi = int(self._offsets[lo]), int(self._offsets[hi])
        page = self._flat_page[flo:fhi]
        session = self._flat_session[flo:fhi]
        if isinstance(sel, np.ndarray):
            chosen = np.zeros(hi - lo, dtype=bool)
            chosen[sel - lo] = True
            keep = chosen[session - lo]
            page, session = page[keep], session[keep]
        k = len(self._labels["Page"])
        visitors = _count_unique_pairs(page, self._visitor[session], self._n_visitors, k)
        # A converting session counts once for each distinct page it viewed.
        conv = self._converted[session]
        conv_pairs = _count_unique_pairs(page[conv], session[conv], self._offsets.size, k)
        return self._items(
            self._labels["Page"], visitors, np.bincount(page, minlength=k), conv_pairs
        )

    @staticmethod
    def _items(
        labels: Sequence[str],
        visitors: np.ndarray,
        pageviews: np.ndarray,
        conversions: np.ndarray,
        skip_empty: bool = False,
    ) -> list[dict[str, Any]]:
        present = np.flatnonzero(visitors > 0)
        if skip_empty:
            present = present[present != 0]  # code 0 is "" (no UTM tag)
        # Most visitors first; ties by pageviews, then name, so the order is deterministic.
        order = sorted(present.tolist(), key=lambda c: (-visitors[c], -pageviews[c], labels[c]))
        return [
            {
                "name": labels[c],
                "visitors": int(visitors[c]),
                "pageviews": int(pageviews[c]),
                "conversions": int(conversions[c]),
            }
            for c in order
        ]

    def _visitor_index(self) -> dict[str, int]:
        if self._visitor_ids is None:
            self._visitor_ids = {name: i for i, name in enumerate(self._visitor_names())}
        return self._visitor_ids

    def _visitor_names(self) -> list[str]:
        """Visitor ids as sent to the site's tracker: 16 hex digits, one per visitor code."""
        return [f"{int(v):016x}" for v in self._visitor_hash]

    # -- generation ----------------------------------------------------------------------------

    # -- generation ----------------------------------------------------------------------------

    def _generate(self) -> None:
        """Generate the sessions (:mod:`~realtyframes.sandbox._analytics_gen`); keep what queries need."""
        g = generate(self.seed, self.as_of, self._listing_ids)
        self._n_visitors = g.n_visitors
        self._visitor_hash = g.visitor_hash
        self._start = g.start
        self._day = g.day.astype(np.int64)
        self._visitor = g.visitor
        self._npages = g.npages.astype(np.int64)
        self._duration = g.duration
        self._converted = g.converted
        self._referrer = g.referrer.astype(np.int64)
        self._offsets = g.offsets
        self._flat_page = g.flat_page
        self._flat_session = g.flat_session
        self._country = g.country.astype(np.int64)
        self._browser = g.browser_code
        self._os = g.os_code
        self._device = g.device.astype(np.int64)
        self._labels: dict[str, list[str]] = {
            "Page": g.labels_page,
            "Referrer": g.ref_names,
            "Country": g.country_labels,
            "Browser": g.browser_labels,
            "OS": g.os_labels,
            "Device": list(DEVICES),
            "UtmSource": g.src_labels,
            "UtmMedium": g.med_labels,
            "UtmCampaign": g.camp_labels,
        }
        index = {
            name: {label: i for i, label in enumerate(labels)}
            for name, labels in self._labels.items()
        }
        self._page_index = index["Page"]
        self._session_dims = {
            "Referrer": (self._referrer, index["Referrer"]),
            "UtmSource": (g.utm_source, index["UtmSource"]),
            "UtmMedium": (g.utm_medium, index["UtmMedium"]),
            "UtmCampaign": (g.utm_campaign, index["UtmCampaign"]),
        }
        self._visitor_dims = {
            "Country": (self._country, index["Country"]),
            "Browser": (self._browser, index["Browser"]),
            "OS": (self._os, index["OS"]),
            "Device": (self._device, index["Device"]),
        }
