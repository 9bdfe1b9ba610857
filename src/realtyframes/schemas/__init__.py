"""Pandera models of every resource, shaping of raw API bodies into typed frames, and validation.

>>> import realtyframes.schemas as rs
>>> listings, media = rs.listings_from_pages(page_bodies)  # doctest: +SKIP
>>> valid, quarantined = rs.validate(listings, rs.Listing)  # doctest: +SKIP
"""

from realtyframes.schemas._analytics import (
    ANALYTICS_MODELS,
    OVERVIEW_METRICS,
    UTM_DIMENSIONS,
    AnalyticsBreakdown,
    AnalyticsOverview,
    AnalyticsTimeline,
    AnalyticsUtm,
)
from realtyframes.schemas._analytics_result import BREAKDOWNS, Analytics
from realtyframes.schemas._changes import CHANGE_TYPES, ListingChange
from realtyframes.schemas._contacts import (
    LINK_MEMBERS,
    PERSONAL_COLUMNS,
    Contact,
    ContactActivity,
    holds_personal_data,
)
from realtyframes.schemas._listing import (
    DETAIL_FIELDS,
    PROPERTY_TYPES,
    STANDARD_STATUSES,
    SUMMARY_FIELDS,
    Listing,
    ListingMedia,
)
from realtyframes.schemas._quarantine import (
    ON_INVALID,
    QUARANTINE_REASON,
    DataQualityWarning,
    OnInvalid,
    SchemaDriftWarning,
    SchemaValidationError,
    conform,
    empty_frame,
    target_dtypes,
    validate,
)
from realtyframes.schemas._shape import (
    Shaped,
    activity_from_json,
    analytics_from_json,
    changes_from_pages,
    contacts_from_pages,
    give_back_memory,
    latest_per_listing,
    listings_from_pages,
    listings_from_record_batches,
    listings_from_records,
    shape_pages,
)

#: Version of the shaped frames' layout, recorded in cache metadata; bump on a breaking change.
SCHEMA_VERSION = 1

__all__ = [
    "ANALYTICS_MODELS",
    "BREAKDOWNS",
    "CHANGE_TYPES",
    "DETAIL_FIELDS",
    "LINK_MEMBERS",
    "ON_INVALID",
    "OVERVIEW_METRICS",
    "PERSONAL_COLUMNS",
    "PROPERTY_TYPES",
    "QUARANTINE_REASON",
    "SCHEMA_VERSION",
    "STANDARD_STATUSES",
    "SUMMARY_FIELDS",
    "UTM_DIMENSIONS",
    "Analytics",
    "AnalyticsBreakdown",
    "AnalyticsOverview",
    "AnalyticsTimeline",
    "AnalyticsUtm",
    "Contact",
    "ContactActivity",
    "DataQualityWarning",
    "Listing",
    "ListingChange",
    "ListingMedia",
    "OnInvalid",
    "SchemaDriftWarning",
    "SchemaValidationError",
    "Shaped",
    "activity_from_json",
    "analytics_from_json",
    "changes_from_pages",
    "conform",
    "contacts_from_pages",
    "empty_frame",
    "give_back_memory",
    "holds_personal_data",
    "latest_per_listing",
    "listings_from_pages",
    "listings_from_record_batches",
    "listings_from_records",
    "shape_pages",
    "target_dtypes",
    "validate",
]
