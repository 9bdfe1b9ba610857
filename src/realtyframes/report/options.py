"""What a market report covers (:class:`MarketReportOptions`) and the names it uses.

>>> MarketReportOptions(as_of="2026-06-30", window_days=30).period
'30d'
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from realtyframes._spec import PERIOD_DAYS
from realtyframes._spec import SALE_SEGMENT as SALE_TYPES
from realtyframes.errors import QueryError
from realtyframes.report.brand import Brand

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BY_CHOICES",
    "CONTACT_COLUMNS",
    "DATA_FILES",
    "EDITIONS",
    "EMBEDDED_SOURCE",
    "MARKET_FILES",
    "TRENDS_FREQS",
    "MarketReportOptions",
    "data_source",
    "describe_host",
    "period_for",
]

#: How the embedded sandbox is named in the report (its port changes from run to run).
EMBEDDED_SOURCE = "embedded sandbox (synthetic data)"
#: The market report's editions: "client" (one page per area, the market only: what a broker
#: forwards) and "analyst" (every view, the definitions with their formulas, the data files).
EDITIONS: tuple[str, ...] = ("client", "analyst")
#: Market dimensions the report groups by.
BY_CHOICES: tuple[str, ...] = ("City", "PostalCode", "PropertySubType")
#: The Trends section's recent view: rolling 4-week windows ending each week (Redfin's default
#: view), plain weeks, or months only (no weekly view).
TRENDS_FREQS: tuple[str, ...] = ("4W", "W", "M")
#: Columns of the contacts written next to the report (what the lead funnel uses; no personal
#: data such as names, e-mails or phones).
CONTACT_COLUMNS: tuple[str, ...] = ("id", "stage", "source", "createdAt")
#: The data files next to the report, in order: name -> what it holds.
DATA_FILES: dict[str, str] = {
    "listings": "the market's listings, every status (one row per ListingId)",
    "changes": "the price and status history of the market's listings (the change feed, "
    "backfilled by the first sync)",
    "since-last": "what changed since the previous sync of the market: one row per listing and "
    "kind of change (absent on a first run)",
    "contacts": "CRM contacts: id, stage, source, createdAt",
    "analytics-overview": "website analytics: headline numbers of the period",
    "analytics-timelines": "website analytics: one value per day and metric",
    "analytics-breakdowns": "website analytics: pages, referrers, countries, browsers, os, "
    "devices and UTM items (member, dimension, name, visitors, pageviews, conversions)",
}

#: The data files of the market report's editions (never the contacts or the website's
#: analytics: those are the brokerage report's).
MARKET_FILES: tuple[str, ...] = ("listings", "changes", "since-last")


def period_for(window_days: float) -> str:
    """The shortest analytics period that covers ``window_days`` (at most '1y').

    >>> period_for(90), period_for(14), period_for(400)
    ('90d', '30d', '1y')
    """
    for period, days in PERIOD_DAYS.items():
        if window_days <= days:
            return period
    return "1y"


def _parse_day(value: dt.date | str | None) -> dt.date:
    if value is None:
        return dt.datetime.now(dt.UTC).date()
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).date() if value.tzinfo else value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        raise QueryError("as_of", f"{value!r} is not a date", "YYYY-MM-DD") from None


@dataclass(frozen=True)
class MarketReportOptions:
    """What the report covers.

    - ``as_of``: the report date (its end is the end of the window; None = today, UTC).
    - ``window_days``: the trailing window of the market metrics and the price drops.
    - ``by``: the market dimension (City, PostalCode or PropertySubType).
    - ``cities``: limit the listings to these cities (empty: the whole market).
    - ``property_types``: the sale property types loaded (default Residential).
    - ``max_markets``: markets shown side by side (the given cities, else the largest markets).
    - ``top_drops``: rows of the top-price-drops table and chart.
    - ``source``: how the data source is named in the report (never a credential).
    - ``min_sample``: a median or ratio on fewer listings is shown as "–" (with a footnote).
    - ``subtypes``: the largest property subtypes compared side by side too (0: none).
    - ``comps``: ListingIds whose comparable sales the report shows.
    - ``trend_months``: months of the trend section.
    - ``trends_freq``: the Trends section's recent view, one of :data:`TRENDS_FREQS`: the last 26
      rolling 4-week periods ("4W", the default), weeks ("W"), or none beside the months ("M").
    - ``edition``: one of :data:`EDITIONS` ("client", the default, or "analyst").
    - ``areas``: the client edition's pack: the ``areas`` largest markets by ``by``, one page
      each after a cover (0: the cities asked for, else the whole market on one page).
    - ``brand``: the client edition's brand, agent and disclaimer (:class:`Brand`).

    >>> MarketReportOptions(as_of="2026-06-30").period
    '90d'
    """

    as_of: dt.date | str | None = None
    window_days: float = 90
    by: str = "City"
    cities: tuple[str, ...] = ()
    property_types: tuple[str, ...] = ("Residential",)
    max_markets: int = 8
    top_drops: int = 15
    source: str = EMBEDDED_SOURCE
    min_sample: int = 5
    subtypes: int = 4
    comps: tuple[str, ...] = ()
    trend_months: int = 24
    trends_freq: str = "4W"
    edition: str = "client"
    areas: int = 0
    brand: Brand = field(default_factory=Brand)

    def __post_init__(self) -> None:
        object.__setattr__(self, "comps", tuple(dict.fromkeys(str(c) for c in self.comps)))
        object.__setattr__(self, "as_of", _parse_day(self.as_of))
        object.__setattr__(self, "cities", tuple(dict.fromkeys(self.cities)))
        object.__setattr__(self, "property_types", tuple(dict.fromkeys(self.property_types)))
        if not self.property_types:
            raise QueryError("property_types", "empty", SALE_TYPES)
        for kind in self.property_types:
            if kind not in SALE_TYPES:
                raise QueryError(
                    "property_types",
                    f"{kind!r} is not a sale property type (the report covers the sale segment)",
                    SALE_TYPES,
                )
        if self.trends_freq not in TRENDS_FREQS:
            raise QueryError("trends_freq", f"unknown view {self.trends_freq!r}", TRENDS_FREQS)
        if self.edition not in EDITIONS:
            raise QueryError("edition", f"unknown edition {self.edition!r}", EDITIONS)
        if self.by not in BY_CHOICES:
            raise QueryError("by", f"unknown market dimension {self.by!r}", BY_CHOICES)
        wd = self.window_days
        if isinstance(wd, bool) or not isinstance(wd, int | float) or not 0 < wd <= 3650:
            raise QueryError(
                "window_days", f"{wd!r} is out of range", "a number of days in (0, 3650]"
            )
        for name, low, high in (("max_markets", 1, 100), ("top_drops", 1, 100),
                                ("min_sample", 0, 1000), ("subtypes", 0, 20),
                                ("trend_months", 2, 120), ("areas", 0, 50)):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise QueryError(
                    name, f"{value!r} is out of range", f"an integer from {low} to {high}"
                )
        for city in self.cities:
            if not isinstance(city, str) or not city.strip():
                raise QueryError("cities", f"{city!r} is not a city name", "non-empty names")

    @property
    def day(self) -> dt.date:
        """``as_of`` as a date."""
        assert isinstance(self.as_of, dt.date)
        return self.as_of

    @property
    def period(self) -> str:
        """The analytics period used for the traffic section."""
        return period_for(float(self.window_days))

    @property
    def stem(self) -> str:
        """The file-name stem: ``market-report-<date>`` plus the scope when not the default.

        >>> MarketReportOptions(as_of="2026-06-30", cities=("Miami Beach",), by="PostalCode").stem
        'market-report-2026-06-30-miami-beach-by-postalcode'
        """
        parts = [f"market-report-{self.day.isoformat()}"]
        parts += [_slug(c) for c in self.cities]
        if self.property_types != ("Residential",):
            parts += [_slug(t) for t in self.property_types]
        if self.by != "City":
            parts.append(f"by-{self.by.lower()}")
        if float(self.window_days) != 90:
            parts.append(f"{float(self.window_days):g}d")
        if self.areas:
            parts.append(f"{self.areas}-areas")
        if self.edition != "client":
            parts.append(self.edition)
        return "-".join(p for p in parts if p)

    @property
    def scopes(self) -> list[dict[str, str]]:
        """The market scopes the report syncs: one per city (the whole market without cities)
        and sale property type.

        >>> MarketReportOptions(cities=("Miami", "Doral")).scopes[1]
        {'City': 'Doral', 'PropertyType': 'Residential'}
        """
        places: list[dict[str, str]] = [{"City": c} for c in self.cities] or [{}]
        return [{**p, "PropertyType": t} for p in places for t in self.property_types]

    @property
    def as_of_timestamp(self) -> pd.Timestamp:
        """The end of the window: the last microsecond of ``as_of`` (UTC)."""
        import pandas as pd

        start = pd.Timestamp(self.day.isoformat(), tz="UTC")
        return (start + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1)).as_unit("us")

    @property
    def window_start(self) -> pd.Timestamp:
        """The (exclusive) start of the window."""
        import pandas as pd

        return self.as_of_timestamp - pd.Timedelta(days=float(self.window_days))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def data_source(client: Any) -> str:
    """Where a client's data comes from, for people and file metadata: the embedded sandbox
    (synthetic data), or the service's scheme://host[:port] (no path, user info or query).

    >>> data_source(rf.Client.sandbox())  # doctest: +SKIP
    'embedded sandbox (synthetic data)'
    """
    if client.embedded:
        return EMBEDDED_SOURCE
    kind = getattr(client, "source", "platform")
    where = describe_host(client.base_url)
    return where if kind == "platform" else f"{where} (RESO Web API, {kind.partition(':')[2]})"


def describe_host(url: str) -> str:
    """A URL reduced to scheme://host[:port] (no user info, path or query: nothing secret).

    >>> describe_host("https://user:pw@api.example.com/v1?api_key=x")
    'https://api.example.com'
    """
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else host
