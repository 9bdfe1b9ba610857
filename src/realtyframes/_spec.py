"""The service spec's enumerations, stated once for the client side (api, schemas, loaders,
analysis).

The sandbox keeps its own copy on purpose: it is an independent implementation of the spec.

>>> "Land/Boat Docks" in PROPERTY_TYPES and "Residential Lease" in RENT_TYPES
True
>>> STANDARD_STATUSES
('Active', 'Active Under Contract', 'Pending', 'Closed')
"""

from __future__ import annotations

#: ``PropertyType`` values, in the spec's order.
PROPERTY_TYPES: tuple[str, ...] = (
    "Residential",
    "Residential Income",
    "Land",
    "Land/Boat Docks",
    "Commercial Sale",
    "Business Opportunity",
    "Residential Lease",
    "Commercial Lease",
)
#: The spec's "sale types" (it names neither sale nor rent for ``Land/Boat Docks``).
SALE_TYPES: tuple[str, ...] = (
    "Residential",
    "Residential Income",
    "Land",
    "Commercial Sale",
    "Business Opportunity",
)
#: The spec's "rent types".
RENT_TYPES: tuple[str, ...] = ("Residential Lease", "Commercial Lease")
#: Property types the analysis treats as the sale segment: the spec's sale types plus
#: ``Land/Boat Docks``, which the spec leaves unclassified (our decision, see docs/metrics.md).
SALE_SEGMENT: tuple[str, ...] = tuple(t for t in PROPERTY_TYPES if t not in RENT_TYPES)
#: Members of the analytics result that break the traffic down by one dimension.
BREAKDOWNS: tuple[str, ...] = ("pages", "referrers", "countries", "browsers", "os", "devices")
#: The search filter's ``Status`` values, in the filter's order.
STATUSES: tuple[str, ...] = ("Active", "Pending", "Closed", "Active Under Contract")
#: ``StandardStatus`` values: the field's documented three plus the search filter's fourth, in
#: the field's order (Active, Active Under Contract, Pending, Closed).
STANDARD_STATUSES: tuple[str, ...] = tuple(STATUSES[i] for i in (0, 3, 1, 2))
#: ``Subtypes`` allowed per PropertyType (the spec lists them for these two types only).
SUBTYPES: dict[str, tuple[str, ...]] = {
    "Residential": (
        "Single Family Residence",
        "Condominium",
        "Townhouse",
        "Villa",
        "Condo - Hotel",
        "1/2 Duplex",
        "Mobile Home",
    ),
    "Residential Lease": (
        "Single Family Residence",
        "Condominium",
        "Townhouse",
        "Villa",
        "Apartment",
        "Efficiency",
    ),
}
#: The listing search's ``Sort`` values.
SORTS: tuple[str, ...] = ("-listprice", "listprice", "-listdate", "beds", "baths")
#: The change feed's ``ChangeType`` values.
CHANGE_TYPES: tuple[str, ...] = ("price_change", "status_change")
#: Analytics ``Period`` values and the days each one spans.
PERIOD_DAYS: dict[str, float] = {"24h": 1, "7d": 7, "30d": 30, "90d": 90, "1y": 365}
#: Analytics ``Period`` values.
PERIODS: tuple[str, ...] = tuple(PERIOD_DAYS)
#: Members of the analytics ``overview`` object, in design.md's order (also the known timeline
#: metrics).
OVERVIEW_METRICS: tuple[str, ...] = (
    "visitors",
    "pageviews",
    "sessions",
    "conversions",
    "conversion_rate",
    "bounce_rate",
    "avg_session_seconds",
)
#: Analytics ``Device`` values.
DEVICES: tuple[str, ...] = ("desktop", "mobile", "tablet")
#: ``SeniorCommunity`` values (as query text).
SENIOR_COMMUNITY: tuple[str, ...] = ("true", "exclude")
#: The listing search's boolean feature filters.
FEATURE_FLAGS: tuple[str, ...] = (
    "Pool",
    "Waterfront",
    "Penthouse",
    "Furnished",
    "PetsAllowed",
    "Gated",
    "TennisCourt",
    "GolfCourse",
    "BoatDock",
    "ShortSale",
    "SeasonalRentals",
)
#: Records a page of a list operation holds at most (``Limit``; listings, changes, contacts).
MAX_PAGE_SIZE = 50
#: Records a page holds when ``Limit`` is omitted.
DEFAULT_PAGE_SIZE = 20
#: ListingIds one change-feed request may carry (more is a 400).
MAX_LISTING_IDS = 100
#: Defaults the service applies when an analytics parameter is omitted.
ANALYTICS_DEFAULTS: dict[str, str] = {"Period": "30d"}
#: Defaults the service applies when a listing-search parameter is omitted.
LISTING_DEFAULTS: dict[str, str] = {
    "PropertyType": PROPERTY_TYPES[0],
    "Status": STATUSES[0],
    "Sort": SORTS[0],
    "Offset": "0",
    "Limit": str(DEFAULT_PAGE_SIZE),
}
