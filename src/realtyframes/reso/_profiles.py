"""RESO Web API vendor profiles, the client's side: one versioned table of what each vendor
publishes (page sizes, required filters, budgets) and how the client pages it.

Written from the vendors' published rules (``docs/reso.md`` names each source), independently
of the sandbox's own table: a misreading on one side fails ``tests/reso/test_reso_profiles.py``.

>>> PROFILES["mlsgrid"].page_cap, PROFILES["bridge"].paging
(5000, 'maxpagesize')
>>> vendor_profile("remax")
Traceback (most recent call last):
...
realtyframes.errors.QueryError: vendor: unknown vendor 'remax'; allowed: generic, mlsgrid, trestle, bridge, spark
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from realtyframes.errors import QueryError

__all__ = [
    "BUDGET_WINDOWS",
    "PROFILES",
    "PROFILES_VERSION",
    "VENDORS",
    "Budget",
    "VendorProfile",
    "budgets_of",
    "vendor_profile",
]

#: Bumped whenever a rule below changes.
PROFILES_VERSION = "2026-11-28"


@dataclass(frozen=True)
class Budget:
    """One published budget: at most ``limit`` requests (or bytes, ``unit="bytes"``) per
    ``seconds``-long window."""

    seconds: int
    limit: int
    unit: Literal["requests", "bytes"] = "requests"


@dataclass(frozen=True)
class VendorProfile:
    """How one vendor's RESO Web API is read.

    ``paging``: ``"top"`` (``$top`` is the page size, ``@odata.nextLink`` continues) or
    ``"maxpagesize"`` (the page size goes in ``Prefer: odata.maxpagesize``; ``$top`` would bound
    the whole answer). ``page``: the page size the client asks for by default; ``page_cap``:
    the most a page may hold (``page_size=`` above it is refused; ``page_cap_expand`` with
    ``$expand``). ``requires_system``: every query
    filters ``OriginatingSystemName`` (``originating_system=`` is then required);
    ``initial_filter``: and-ed to a full load; ``delete_flag``: a Boolean field whose ``false``
    means "delete this record from your copy". ``max_or_terms``: the most ``or`` terms in a
    ``$filter``. ``budgets``: name -> :class:`Budget`. ``retries_429``: how many failed answers
    (429, 5xx) a request retries (a vendor that suspends tokens gets none: its 429 stops the
    run, recorded, instead of a retry that would be counted against the account).
    """

    name: str
    paging: Literal["top", "maxpagesize"]
    page: int
    page_cap: int | None = None
    page_cap_expand: int | None = None
    requires_system: bool = False
    initial_filter: str | None = None
    delete_flag: str | None = None
    max_or_terms: int | None = None
    budgets: dict[str, Budget] = field(default_factory=dict)
    retries_429: int = 2
    source: str = ""


PROFILES: dict[str, VendorProfile] = {
    "generic": VendorProfile(
        "generic",
        "maxpagesize",
        page=1000,
        source="OASIS OData v4.0 Part 1 (Protocol) 8.2.8.3, odata.maxpagesize",
    ),
    "mlsgrid": VendorProfile(
        "mlsgrid",
        "top",
        page=5000,
        page_cap=5000,
        page_cap_expand=1000,
        requires_system=True,
        initial_filter="MlgCanView eq true",
        delete_flag="MlgCanView",
        max_or_terms=5,
        budgets={
            "second": Budget(1, 2),
            "hour": Budget(3600, 7200),
            "day": Budget(86_400, 40_000),
            "bytes_hour": Budget(3600, 4 * 1024**3, "bytes"),
        },
        retries_429=0,
        source="MLS Grid Web API documentation v2: Rate limits, Replication, Query options",
    ),
    "trestle": VendorProfile(
        "trestle",
        "top",
        page=1000,
        page_cap=1000,
        source="Trestle WebAPI documentation (Cotality): Query limits, Media",
    ),
    "bridge": VendorProfile(
        "bridge",
        "maxpagesize",
        page=200,
        page_cap=200,
        source="Bridge API documentation: Pagination; Bridge's 2025-07-29 $top change",
    ),
    "spark": VendorProfile(
        "spark",
        "top",
        page=25,
        page_cap=1000,
        source="Spark API documentation: Replication (25 per call, 1,000 with the role)",
    ),
}
#: The vendors' names, in the table's order.
VENDORS: tuple[str, ...] = tuple(PROFILES)


#: Budget names and their windows (seconds); ``bytes_hour`` counts bytes.
BUDGET_WINDOWS: dict[str, int] = {"second": 1, "hour": 3600, "day": 86_400, "bytes_hour": 3600}


def budgets_of(profile: VendorProfile, overrides: object = None) -> dict[str, Budget]:
    """The profile's budgets with ``overrides`` ({name: limit}) applied; bad ones refused.

    >>> budgets_of(PROFILES["mlsgrid"], {"hour": 50})["hour"]
    Budget(seconds=3600, limit=50, unit='requests')
    """
    merged = dict(profile.budgets)
    if overrides is None:
        return merged
    if not isinstance(overrides, dict):
        raise QueryError("budgets", f"expected a dict of limits, got {overrides!r}", "{'hour': 50}")
    for name, limit in overrides.items():
        if name not in BUDGET_WINDOWS:
            raise QueryError("budgets", f"unknown budget {name!r}", tuple(BUDGET_WINDOWS))
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise QueryError("budgets", f"{name}: expected an integer >= 1, got {limit!r}", "1+")
        window = BUDGET_WINDOWS[name]
        merged[name] = (
            Budget(window, limit, "bytes") if name == "bytes_hour" else Budget(window, limit)
        )
    return merged


def vendor_profile(name: object) -> VendorProfile:
    """The profile of vendor ``name``; an unknown one is a QueryError before any request.

    >>> vendor_profile("trestle").page_cap
    1000
    """
    if not isinstance(name, str) or name not in PROFILES:
        raise QueryError("vendor", f"unknown vendor {name!r}", VENDORS)
    return PROFILES[name]
