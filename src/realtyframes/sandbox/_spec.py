"""The service spec's enumerations, once for the whole sandbox.

The sandbox keeps its own list on purpose, independent of the client side's
(:mod:`realtyframes._spec`): two readings of the spec, so that a misreading on either side shows up
as a failing test. Every sandbox module (generation, validation, routes, OpenAPI) takes its
enumerations from here; codes used by the generators are positions in these tuples.

>>> STATUSES[0], PERIODS["7d"].days
('Active', 7)
"""

from __future__ import annotations

from datetime import timedelta

API_VERSION = "1"

# -- the sandbox's own paths -----------------------------------------------------------------------
#: The documentation host (the page error types and deprecation links point to).
DOCS_PATH = "/docs"
#: The machine-readable description of every route.
OPENAPI_PATH = "/openapi.json"
#: The MCP endpoint of the main host (announced by the index document); the docs host's is
#: ``DOCS_PATH + MCP_PATH``.
MCP_PATH = "/mcp"

# -- listings --------------------------------------------------------------------------------------
#: Property types (search filter ``PropertyType``), in the spec's order; the first is the default.
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
#: The spec's rent types (their ListPrice is a monthly rent).
LEASE_TYPES: frozenset[str] = frozenset({"Residential Lease", "Commercial Lease"})
#: Listing statuses (filter ``Status``) in the spec's order; the first is the default.
STATUSES: tuple[str, ...] = ("Active", "Pending", "Closed", "Active Under Contract")
#: Subtypes the spec lets ``Subtypes`` filter on, per property type (spec order).
FILTERABLE_SUBTYPES: dict[str, tuple[str, ...]] = {
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
#: Every filterable subtype once, in the spec's order.
SUBTYPES: tuple[str, ...] = tuple(
    dict.fromkeys(s for names in FILTERABLE_SUBTYPES.values() for s in names)
)
#: Sort orders of the search; the first is the default.
SORTS: tuple[str, ...] = ("-listprice", "listprice", "-listdate", "beds", "baths")
#: Kinds of change in the change feed.
CHANGE_TYPES: tuple[str, ...] = ("price_change", "status_change")
#: Values of ``SeniorCommunity``: only 55+ communities, or leave them out.
SENIOR_COMMUNITY: tuple[str, ...] = ("true", "exclude")
#: Boolean feature filters of the search and what each keeps.
FEATURE_FILTERS: dict[str, str] = {
    "Pool": "Only listings with a private pool",
    "Waterfront": "Waterfront listings",
    "Penthouse": "Penthouses",
    "Furnished": "Furnished listings",
    "PetsAllowed": "Listings that allow pets",
    "Gated": "Gated communities",
    "TennisCourt": "With a tennis court",
    "GolfCourse": "On or with a golf course",
    "BoatDock": "With a boat dock",
    "ShortSale": "Short sales",
    "SeasonalRentals": "Short-term (seasonal) leases",
}
#: Range filters of the search (``Min<name>`` and ``Max<name>``) and what they bound.
RANGE_FILTERS: dict[str, str] = {
    "ListPrice": "List price, USD",
    "BedroomsTotal": "Bedrooms; 0 means studio",
    "Bathrooms": "Bathrooms",
    "LivingArea": "Living area, sqft",
    "LotSize": "Lot size, sqft",
    "YearBuilt": "Year built",
    "AssociationFee": "Monthly HOA fee, USD",
}
DEFAULT_LIMIT = 20
MAX_LIMIT = 50
#: At most this many ids in one change-feed request.
MAX_LISTING_IDS = 100

# -- analytics -------------------------------------------------------------------------------------
#: The Period values and their length; ``DEFAULT_PERIOD`` when omitted.
PERIODS: dict[str, timedelta] = {
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
    "1y": timedelta(days=365),
}
DEFAULT_PERIOD = "30d"
DEVICES: tuple[str, ...] = ("desktop", "mobile", "tablet")
#: Exact-match filters of the analytics query (besides Period and Device).
ANALYTICS_FILTERS: dict[str, str] = {
    "Page": "Sessions that viewed this page path (exact match)",
    "Referrer": "Sessions from this referrer: a referrer name or Direct (exact match)",
    "Browser": "Browser name (exact match)",
    "Country": "Country name (exact match)",
    "OS": "Operating system (exact match)",
    "VisitorId": "One visitor (exact match)",
    "UtmSource": "UTM source (exact match; empty: sessions without one)",
    "UtmMedium": "UTM medium (exact match; empty: sessions without one)",
    "UtmCampaign": "UTM campaign name (exact match; empty: sessions without one)",
}
TIMELINE_METRICS: tuple[str, ...] = ("visitors", "pageviews", "sessions", "conversions")
BREAKDOWNS: tuple[str, ...] = ("pages", "referrers", "countries", "browsers", "os", "devices")
#: Parts of the ``utm`` breakdown and the filter each counts by.
UTM_PARTS: dict[str, str] = {
    "source": "UtmSource",
    "medium": "UtmMedium",
    "campaign": "UtmCampaign",
}

# -- contacts --------------------------------------------------------------------------------------
#: Contact stages, the spec's examples (lead, client, active-client) plus past-client.
STAGES: tuple[str, ...] = ("lead", "client", "active-client", "past-client")
#: Where contacts come from.
SOURCES: tuple[str, ...] = (
    "referral",
    "signup form",
    "open house",
    "listing inquiry",
    "social",
    "import",
)
#: Activity record types.
ACTIVITY_TYPES: tuple[str, ...] = (
    "page_view",
    "listing_view",
    "saved_search",
    "email_open",
    "call",
    "showing",
    "offer",
    "note",
)
#: Contact members in the order of the spec's legacy Contact table.
CONTACT_FIELDS: tuple[str, ...] = (
    "id",
    "name",
    "email",
    "phones",
    "createdAt",
    "stage",
    "source",
    "image",
    "spokenLanguages",
    "address",
    "streetAddress",
    "notes",
    "links",
    "registration",
)
#: Members of ``links``; ``service`` is the contact's page on the platform itself.
LINK_FIELDS: tuple[str, ...] = (
    "facebook",
    "twitter",
    "instagram",
    "linkedin",
    "youtube",
    "website",
    "whatsapp",
    "service",
)

# -- auth and errors -------------------------------------------------------------------------------
#: The spec's OAuth scopes, in documentation order, and what each allows.
SCOPE_TEXT: dict[str, str] = {
    "listings": "Search MLS listings, read listing details and the change feed",
    "contacts": "Read your CRM contacts and their activity",
    "analytics": "Read your website analytics",
}
SCOPES: tuple[str, ...] = tuple(SCOPE_TEXT)
#: Scopes an API key reaches (the spec: listings and analytics operations).
API_KEY_SCOPES: tuple[str, ...] = ("listings", "analytics")
#: Plans of an account; the first is the default.
PLANS: tuple[str, ...] = ("standard", "premium")
#: The spec's error table: status -> (code, message, type name of the legacy host's body).
ERRORS: dict[int, tuple[str, str, str]] = {
    400: ("bad_request", "Invalid or missing parameters", "BadRequestError"),
    401: ("invalid_token", "Invalid or expired access token", "Unauthorized"),
    403: ("insufficient_scope", "Token is missing the required OAuth scope", "Forbidden"),
    404: ("not_found", "Resource not found", "NotFoundError"),
    429: ("rate_limit_exceeded", "Rate limit exceeded", "TooManyRequests"),
    500: ("server_error", "Internal server error", "ServerError"),
}
