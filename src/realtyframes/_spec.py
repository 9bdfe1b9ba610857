"""The service spec's enumerations, stated once for the client side (api, schemas, analysis).

The sandbox keeps its own copy on purpose: it is an independent implementation of the spec.

>>> "Land/Boat Docks" in PROPERTY_TYPES and "Residential Lease" in RENT_TYPES
True
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
#: ``StandardStatus`` values: the field's documented three plus the search filter's fourth.
STANDARD_STATUSES: tuple[str, ...] = ("Active", "Active Under Contract", "Pending", "Closed")
