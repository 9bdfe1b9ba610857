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

from realtyframes.sandbox._errors import bad_param

__all__ = ["BREAKDOWNS", "DEVICES", "FILTERS", "PERIODS", "TIMELINE_METRICS", "AnalyticsStore"]

#: The Period values and their length.
PERIODS: dict[str, timedelta] = {
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
    "1y": timedelta(days=365),
}
DEFAULT_PERIOD = "30d"
DEVICES: tuple[str, ...] = ("desktop", "mobile", "tablet")
#: Filter parameters of the spec (besides Period), all exact matches.
FILTERS: tuple[str, ...] = (
    "Page",
    "Referrer",
    "Browser",
    "Country",
    "OS",
    "Device",
    "VisitorId",
    "UtmSource",
    "UtmMedium",
    "UtmCampaign",
)
TIMELINE_METRICS: tuple[str, ...] = ("visitors", "pageviews", "sessions", "conversions")
BREAKDOWNS: tuple[str, ...] = ("pages", "referrers", "countries", "browsers", "os", "devices")

_DAY = 86_400
_PAST_DAYS = 396  # a year of windows plus a month
_FUTURE_DAYS = 365

# name, share of organic sessions, bounce probability, conversion multiplier, landing kinds
_REFERRERS: tuple[tuple[str, float, float, float], ...] = (
    ("Google", 0.385, 0.46, 1.0),
    ("Direct", 0.24, 0.38, 1.2),
    ("Facebook", 0.075, 0.62, 0.7),
    ("Instagram", 0.06, 0.66, 0.6),
    ("Zillow", 0.055, 0.36, 1.5),
    ("Realtor.com", 0.035, 0.38, 1.4),
    ("Bing", 0.03, 0.45, 1.0),
    ("Newsletter", 0.02, 0.40, 1.3),
    ("Yahoo", 0.012, 0.50, 0.9),
    ("DuckDuckGo", 0.01, 0.45, 1.0),
    ("YouTube", 0.015, 0.60, 0.6),
    ("LinkedIn", 0.01, 0.55, 0.8),
    ("Redfin", 0.02, 0.40, 1.3),
    ("Nextdoor", 0.013, 0.50, 1.1),
    ("ChatGPT", 0.02, 0.42, 1.1),
)
_COUNTRIES: tuple[tuple[str, float], ...] = (
    ("United States", 0.79),
    ("Canada", 0.04),
    ("Brazil", 0.025),
    ("Colombia", 0.02),
    ("Argentina", 0.015),
    ("Venezuela", 0.015),
    ("Mexico", 0.012),
    ("United Kingdom", 0.012),
    ("Germany", 0.008),
    ("France", 0.007),
    ("Spain", 0.007),
    ("Italy", 0.005),
    ("Israel", 0.005),
    ("Peru", 0.005),
    ("Dominican Republic", 0.005),
    ("Ecuador", 0.004),
    ("Chile", 0.004),
    ("Russia", 0.004),
    ("India", 0.004),
    ("Netherlands", 0.003),
)
_DEVICE_P = (0.38, 0.56, 0.06)
# OS by device, then browser by OS.
_OS: dict[str, tuple[tuple[str, float], ...]] = {
    "desktop": (("Windows", 0.55), ("macOS", 0.40), ("Linux", 0.03), ("ChromeOS", 0.02)),
    "mobile": (("iOS", 0.58), ("Android", 0.42)),
    "tablet": (("iPadOS", 0.75), ("Android", 0.25)),
}
_BROWSERS: dict[str, tuple[tuple[str, float], ...]] = {
    "Windows": (("Chrome", 0.70), ("Edge", 0.22), ("Firefox", 0.08)),
    "macOS": (("Safari", 0.50), ("Chrome", 0.45), ("Firefox", 0.05)),
    "Linux": (("Chrome", 0.6), ("Firefox", 0.4)),
    "ChromeOS": (("Chrome", 1.0),),
    "iOS": (("Safari", 0.85), ("Chrome", 0.15)),
    "iPadOS": (("Safari", 0.9), ("Chrome", 0.1)),
    "Android": (("Chrome", 0.80), ("Samsung Internet", 0.18), ("Firefox", 0.02)),
}
# Share of sessions per UTC hour: evenings Eastern (UTC-4/-5) are the peak.
_HOURS = np.array(
    [
        6,
        5,
        4,
        3,
        2,
        1.2,
        0.8,
        0.6,
        0.6,
        0.8,
        1.5,
        2.5,
        3.5,
        4.2,
        4.5,
        4.6,
        4.6,
        4.7,
        4.8,
        5,
        5.2,
        5.4,
        6.0,
        6.5,
    ]
)
_WEEKDAY = np.array([1.08, 1.0, 1.0, 0.98, 0.9, 0.84, 1.06])  # Monday first
_BLOG = (
    "south-florida-market-update",
    "best-miami-neighborhoods-for-families",
    "condo-special-assessments-explained",
    "how-much-is-my-home-worth",
    "first-time-buyer-guide-florida",
    "hurricane-insurance-what-buyers-should-know",
    "homestead-exemption-florida",
    "waterfront-homes-what-to-check",
    "55-plus-communities-boca-raton",
    "renting-vs-buying-in-miami",
    "new-construction-doral",
    "closing-costs-in-florida",
    "moving-to-fort-lauderdale",
    "seasonal-rentals-rules",
    "flood-zones-explained",
    "miami-beach-condo-guide",
    "selling-your-home-in-winter",
    "property-taxes-broward-vs-miami-dade",
)
_HOODS = (
    "brickell",
    "miami-beach",
    "coral-gables",
    "fort-lauderdale",
    "boca-raton",
    "aventura",
    "doral",
    "weston",
    "hollywood",
    "delray-beach",
    "coconut-grove",
    "key-biscayne",
)
# Page kinds: fixed paths, or families with many members.
_KINDS = ("home", "listings", "listing", "search", "blog", "hood", "valuation", "contact", "about",
          "sold", "open_houses", "team")  # fmt: skip
_KIND_PATHS = {
    "home": ("/",),
    "listings": ("/listings",),
    "search": ("/search",),
    "valuation": ("/valuation",),
    "contact": ("/contact",),
    "about": ("/about",),
    "sold": ("/sold",),
    "open_houses": ("/open-houses",),
    "team": ("/team",),
}
# Landing-page kind weights by referrer (missing referrers use "default").
_LANDING = {
    "default": (0.25, 0.12, 0.30, 0.08, 0.12, 0.06, 0.03, 0.01, 0.01, 0.01, 0.01, 0.0),
    "Direct": (0.55, 0.12, 0.14, 0.06, 0.03, 0.02, 0.03, 0.02, 0.01, 0.01, 0.01, 0.0),
    "Zillow": (0.05, 0.03, 0.85, 0.01, 0.0, 0.0, 0.02, 0.02, 0.02, 0.0, 0.0, 0.0),
    "Realtor.com": (0.05, 0.03, 0.85, 0.01, 0.0, 0.0, 0.02, 0.02, 0.02, 0.0, 0.0, 0.0),
    "Redfin": (0.05, 0.03, 0.85, 0.01, 0.0, 0.0, 0.02, 0.02, 0.02, 0.0, 0.0, 0.0),
    "Newsletter": (0.05, 0.10, 0.30, 0.0, 0.50, 0.02, 0.02, 0.0, 0.0, 0.01, 0.0, 0.0),
    "Facebook": (0.10, 0.10, 0.45, 0.0, 0.12, 0.03, 0.15, 0.0, 0.0, 0.0, 0.05, 0.0),
    "Instagram": (0.12, 0.10, 0.45, 0.0, 0.10, 0.03, 0.15, 0.0, 0.0, 0.0, 0.05, 0.0),
    "Google": (0.20, 0.10, 0.30, 0.06, 0.16, 0.10, 0.05, 0.01, 0.01, 0.01, 0.0, 0.0),
}
# Kind weights for pages after the landing page.
_NEXT = (0.08, 0.15, 0.42, 0.10, 0.05, 0.05, 0.04, 0.04, 0.02, 0.02, 0.02, 0.01)
_N_LISTINGS = 320


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _norm(weights: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(weights, dtype=float)
    return array / array.sum()


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

    def __init__(self, seed: int = 7, as_of: datetime | None = None) -> None:
        if as_of is None:
            as_of = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        self.seed = seed
        self.as_of = _utc(as_of)
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
        period = params.get("Period", DEFAULT_PERIOD)
        if period not in PERIODS:
            raise bad_param("Period", f"unknown value {period!r}", PERIODS)
        device = params.get("Device")
        if device is not None and device not in DEVICES:
            raise bad_param("Device", f"unknown value {device!r}", DEVICES)
        end = self._now.timestamp()
        start = end - PERIODS[period].total_seconds()
        lo = int(np.searchsorted(self._start, start, side="left"))
        hi = int(np.searchsorted(self._start, end, side="left"))
        selection = self._select(lo, hi, params)
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
        n_days = last_day - first_day + 1
        day = self._day[sel] - first_day
        weights_pv = npages.astype(np.float64)
        timeline_values = {
            "visitors": _count_unique_pairs(day, visitor, n_visitors, n_days),
            "pageviews": np.bincount(day, weights=weights_pv, minlength=n_days),
            "sessions": np.bincount(day, minlength=n_days),
            "conversions": np.bincount(day, weights=converted, minlength=n_days),
        }
        dates = [
            (date(1970, 1, 1) + timedelta(days=first_day + i)).isoformat() for i in range(n_days)
        ]
        timelines = {
            metric: [{"date": d, "value": int(v)} for d, v in zip(dates, values, strict=True)]
            for metric, values in timeline_values.items()
        }

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
            for part, name in (
                ("source", "UtmSource"),
                ("medium", "UtmMedium"),
                ("campaign", "UtmCampaign"),
            )
        }
        return result

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

    def _generate(self) -> None:
        rng = np.random.default_rng([self.seed, 0xA7])
        as_of_day = int(self.as_of.timestamp() // _DAY)
        days = np.arange(as_of_day - _PAST_DAYS, as_of_day + _FUTURE_DAYS)
        rel = (days - as_of_day) / 365.0
        weekday = (days + 3) % 7  # 1970-01-01 was a Thursday (3 with Monday = 0)
        doy = (days - 0) % 365.25
        season = 1 + 0.16 * np.cos(2 * np.pi * (doy - 45) / 365.25)  # peak mid-February
        growth = 210.0 * np.exp(0.3 * rel)  # about +35% a year
        mu = growth * season * _WEEKDAY[weekday] * rng.gamma(25.0, 1 / 25.0, days.size)
        organic = rng.poisson(mu)
        ref_names = [r[0] for r in _REFERRERS]
        nl = ref_names.index("Newsletter")
        # Newsletter every other Tuesday: a spike that day and a tail the next.
        newsletter_day = (weekday == 1) & ((days // 7) % 2 == 0)
        newsletter = rng.poisson(np.where(newsletter_day, 0.35 * mu, 0.0))
        newsletter[1:] += rng.poisson(np.where(newsletter_day[:-1], 0.1 * mu[:-1], 0.0))
        # Paid social campaigns: a few windows of two to three weeks.
        campaigns = ("spring-open-houses", "luxury-waterfront", "home-valuation-offer",
                     "new-construction-doral", "winter-season-rentals")  # fmt: skip
        campaign_of_day = np.full(days.size, -1)
        starts = np.sort(rng.choice(np.arange(0, days.size - 25, 30), size=7, replace=False))
        for j, s in enumerate(starts):
            campaign_of_day[s : s + int(rng.integers(14, 22))] = j % len(campaigns)
        paid = rng.poisson(np.where(campaign_of_day >= 0, 0.12 * mu, 0.0))

        counts = organic + newsletter + paid
        n = int(counts.sum())
        day = np.repeat(days, counts)
        # Per-session origin: 0 organic, 1 newsletter, 2 paid campaign (same day order as counts).
        origin = np.repeat(
            np.tile(np.array([0, 1, 2], dtype=np.int8), days.size),
            np.stack([organic, newsletter, paid], axis=1).ravel(),
        )
        campaign_idx = np.repeat(campaign_of_day, counts)
        hour = rng.choice(24, size=n, p=_norm(_HOURS))
        start = day.astype(np.int64) * _DAY + hour * 3600 + rng.integers(0, 3600, n)
        order = np.argsort(start, kind="stable")
        start, day, origin, campaign_idx = (
            start[order],
            day[order],
            origin[order],
            campaign_idx[order],
        )

        # Referrers.
        referrer = rng.choice(len(_REFERRERS), size=n, p=_norm([r[1] for r in _REFERRERS]))
        referrer[origin == 1] = nl
        paid_sess = origin == 2
        referrer[paid_sess] = np.where(
            rng.random(int(paid_sess.sum())) < 0.6,
            ref_names.index("Facebook"),
            ref_names.index("Instagram"),
        )

        # Visitors: a share of sessions come back from an earlier session's visitor.
        returning = rng.random(n) < np.where(referrer == ref_names.index("Direct"), 0.5, 0.22)
        returning[0] = False
        lag = rng.geometric(1 / 1500, n)
        parent = np.arange(n) - lag
        parent = np.where(returning & (parent >= 0), parent, np.arange(n))
        while True:  # pointer jumping: every session points at its visitor's first session
            nxt = parent[parent]
            if np.array_equal(nxt, parent):
                break
            parent = nxt
        is_first = parent == np.arange(n)
        first_rank = np.cumsum(is_first) - 1
        visitor = first_rank[parent].astype(np.int64)
        n_visitors = int(is_first.sum())
        self._n_visitors = n_visitors
        self._visitor_hash = rng.integers(0, 2**63, n_visitors, dtype=np.int64) | (1 << 60)

        # Visitor-constant attributes.
        device = rng.choice(len(DEVICES), size=n_visitors, p=_norm(_DEVICE_P))
        os_labels = sorted({name for opts in _OS.values() for name, _ in opts})
        browser_labels = sorted({name for opts in _BROWSERS.values() for name, _ in opts})
        os_code = np.zeros(n_visitors, dtype=np.int64)
        for d, dev in enumerate(DEVICES):
            where = np.flatnonzero(device == d)
            opts = _OS[dev]
            picks = rng.choice(len(opts), size=where.size, p=_norm([w for _, w in opts]))
            os_code[where] = np.array([os_labels.index(name) for name, _ in opts])[picks]
        browser_code = np.zeros(n_visitors, dtype=np.int64)
        for o, os_name in enumerate(os_labels):
            where = np.flatnonzero(os_code == o)
            opts = _BROWSERS[os_name]
            picks = rng.choice(len(opts), size=where.size, p=_norm([w for _, w in opts]))
            browser_code[where] = np.array([browser_labels.index(name) for name, _ in opts])[picks]
        country = rng.choice(len(_COUNTRIES), size=n_visitors, p=_norm([w for _, w in _COUNTRIES]))

        # Pages: how many, the landing page by referrer, then the rest.
        mobile = device[visitor] == DEVICES.index("mobile")
        bounce_p = np.array([r[2] for r in _REFERRERS])[referrer] + np.where(mobile, 0.05, -0.03)
        bounced = rng.random(n) < bounce_p
        npages = np.where(bounced, 1, 2 + rng.negative_binomial(2, 0.4, n)).clip(1, 30)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(npages, out=offsets[1:])
        total = int(offsets[-1])
        flat_session = np.repeat(np.arange(n), npages)
        is_landing = np.zeros(total, dtype=bool)
        is_landing[offsets[:-1]] = True
        landing_table = np.array(
            [_norm(_LANDING.get(name, _LANDING["default"])) for name in ref_names]
        )
        landing_cum = np.cumsum(landing_table, axis=1)
        flat_kind = rng.choice(len(_KINDS), size=total, p=_norm(_NEXT))
        u = rng.random(n)
        landing_kind = (u[:, None] > landing_cum[referrer]).sum(axis=1).clip(0, len(_KINDS) - 1)
        flat_kind[is_landing] = landing_kind

        labels_page: list[str] = []
        flat_page = np.zeros(total, dtype=np.int64)
        listing_ids = [
            f"A{11_000_000 + int(x)}" for x in rng.choice(900_000, _N_LISTINGS, replace=False)
        ]
        families = {
            "listing": [f"/listings/{lid}" for lid in listing_ids],
            "blog": [f"/blog/{slug}" for slug in _BLOG],
            "hood": [f"/neighborhoods/{slug}" for slug in _HOODS],
        }
        for k, name in enumerate(_KINDS):
            paths = families.get(name) or list(_KIND_PATHS[name])
            base = len(labels_page)
            labels_page.extend(paths)
            where = np.flatnonzero(flat_kind == k)
            zipf = 1.0 / np.arange(1, len(paths) + 1) ** 0.9
            flat_page[where] = base + rng.choice(len(paths), size=where.size, p=_norm(zipf))

        # Durations: a short look for bounces, a dwell per page otherwise.
        dwell = rng.lognormal(np.log(38.0), 0.9, total)
        dwell[is_landing] = 0.0
        duration = np.bincount(flat_session, weights=dwell, minlength=n)
        duration += np.where(bounced, rng.lognormal(np.log(12.0), 1.1, n), rng.uniform(5, 30, n))
        duration = np.minimum(duration, 3 * 3600).round().astype(np.int64)

        # Conversions: a lead form (contact, valuation, listing inquiry).
        form_kinds = np.isin(flat_kind, [_KINDS.index("contact"), _KINDS.index("valuation")])
        saw_form = np.bincount(flat_session, weights=form_kinds, minlength=n) > 0
        saw_listing = (
            np.bincount(flat_session, weights=flat_kind == _KINDS.index("listing"), minlength=n) > 0
        )
        p_conv = 0.002 + 0.004 * np.minimum(npages - 1, 8) + np.where(saw_form, 0.10, 0.0)
        p_conv += np.where(saw_listing, 0.006, 0.0)
        p_conv *= 0.7 * np.array([r[3] for r in _REFERRERS])[referrer]
        converted = rng.random(n) < p_conv

        # UTM tags (code 0 is the empty tag).
        src_labels = ["", "google", "bing", "facebook", "instagram", "newsletter", "qr"]
        med_labels = ["", "cpc", "paid_social", "email", "print"]
        month_names = sorted(
            {
                d.strftime("%Y-%m")
                for d in (date(1970, 1, 1) + timedelta(days=int(x)) for x in days[::14])
            }
        )
        camp_labels = ["", "brand", "miami-condos", "home-valuation", "always-on-retargeting",
                       "open-house-signs", *campaigns, *(f"market-update-{m}" for m in month_names)]  # fmt: skip
        utm_source = np.zeros(n, dtype=np.int64)
        utm_medium = np.zeros(n, dtype=np.int64)
        utm_campaign = np.zeros(n, dtype=np.int64)
        r = rng.random(n)
        google = (referrer == ref_names.index("Google")) & (r < 0.18)
        utm_source[google], utm_medium[google] = src_labels.index("google"), med_labels.index("cpc")
        utm_campaign[google] = rng.choice([1, 2, 3], size=int(google.sum()), p=[0.5, 0.3, 0.2])
        bing = (referrer == ref_names.index("Bing")) & (r < 0.2)
        utm_source[bing], utm_medium[bing], utm_campaign[bing] = 2, 1, 1
        for name, code in (("Facebook", 3), ("Instagram", 4)):
            social = (referrer == ref_names.index(name)) & ((r < 0.35) | paid_sess)
            utm_source[social], utm_medium[social] = code, med_labels.index("paid_social")
            in_campaign = social & (campaign_idx >= 0)
            utm_campaign[social] = camp_labels.index("always-on-retargeting")
            utm_campaign[in_campaign] = 6 + campaign_idx[in_campaign]
        news = referrer == nl
        utm_source[news], utm_medium[news] = (
            src_labels.index("newsletter"),
            med_labels.index("email"),
        )
        months = np.array(
            [
                (date(1970, 1, 1) + timedelta(days=int(x))).strftime("%Y-%m")
                for x in range(days[0], days[-1] + 1)
            ]
        )
        month_of = months[day[news] - days[0]]
        month_code = {m: camp_labels.index(f"market-update-{m}") for m in month_names}
        utm_campaign[news] = [month_code.get(m, 0) for m in month_of]
        qr = (referrer == ref_names.index("Direct")) & (r < 0.03)
        utm_source[qr], utm_medium[qr] = src_labels.index("qr"), med_labels.index("print")
        utm_campaign[qr] = camp_labels.index("open-house-signs")

        # Keep what queries need.
        self._start = start
        self._day = day.astype(np.int64)
        self._visitor = visitor
        self._npages = npages.astype(np.int64)
        self._duration = duration
        self._converted = converted
        self._referrer = referrer.astype(np.int64)
        self._offsets = offsets
        self._flat_page = flat_page
        self._flat_session = flat_session
        self._country = country.astype(np.int64)
        self._browser = browser_code
        self._os = os_code
        self._device = device.astype(np.int64)
        self._labels: dict[str, list[str]] = {
            "Page": labels_page,
            "Referrer": ref_names,
            "Country": [c for c, _ in _COUNTRIES],
            "Browser": browser_labels,
            "OS": os_labels,
            "Device": list(DEVICES),
            "UtmSource": src_labels,
            "UtmMedium": med_labels,
            "UtmCampaign": camp_labels,
        }
        index = {
            name: {label: i for i, label in enumerate(labels)}
            for name, labels in self._labels.items()
        }
        self._page_index = index["Page"]
        self._session_dims = {
            "Referrer": (self._referrer, index["Referrer"]),
            "UtmSource": (utm_source, index["UtmSource"]),
            "UtmMedium": (utm_medium, index["UtmMedium"]),
            "UtmCampaign": (utm_campaign, index["UtmCampaign"]),
        }
        self._visitor_dims = {
            "Country": (self._country, index["Country"]),
            "Browser": (self._browser, index["Browser"]),
            "OS": (self._os, index["OS"]),
            "Device": (self._device, index["Device"]),
        }
