"""RESO Web API vendor profiles as data: page sizes, required filters, budgets, local fields.

One versioned table (:data:`PROFILES`, :data:`PROFILES_VERSION`); ``docs/reso.md`` gives each
vendor's published rule and its source. Where a vendor publishes nothing (a default page size),
the value is the sandbox's choice and says so there.

>>> PROFILES["mlsgrid"].top_cap, PROFILES["mlsgrid"].top_cap_expand
(5000, 1000)
>>> profile("bridge", "").top_means
'collection'
>>> profile("mlsgrid", "hour=50").budgets["hour"]
(3600, 50)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

__all__ = [
    "BUDGET_NAMES",
    "PROFILES",
    "PROFILES_VERSION",
    "SPARK_REPLICATION_TOKEN",
    "VendorProfile",
    "profile",
]

#: Bumped whenever a profile's rule changes (the table is the record of what the sandbox enforces).
PROFILES_VERSION = "2026-11-28"
#: Spark: a bearer token holding the replication role in the sandbox (documented, not secret).
SPARK_REPLICATION_TOKEN = "rf-demo-spark-replication"
#: Budget names: request windows (seconds) and the bytes-per-hour budget.
BUDGET_NAMES: dict[str, int] = {"second": 1, "hour": 3600, "day": 86_400, "bytes_hour": 3600}


@dataclass(frozen=True)
class VendorProfile:
    """What one vendor's server does with a query; the sandbox enforces it.

    ``top_means``: ``"page"`` ($top is the page size, nextLink continues to the end) or
    ``"collection"`` ($top bounds the whole answer, pages come from ``odata.maxpagesize``).
    ``budgets``: name -> (window seconds, limit); ``second`` throttles (429), the others suspend
    the token for the rest of the window (429 once, then 403).
    """

    name: str
    top_means: str
    default_page: int
    top_cap: int | None = None
    top_cap_expand: int | None = None
    top_cap_no_role: int | None = None  # Spark: without the replication role
    max_page: int | None = None  # cap on odata.maxpagesize (collection semantics)
    honours_maxpagesize: bool = False
    required_filter: str | None = None  # a field every query must filter with eq
    max_or_terms: int | None = None
    local_fields: tuple[str, ...] = ()  # e.g. MlgCanView
    budgets: dict[str, tuple[int, int]] = field(default_factory=dict)

    def top_limit(self, expand: bool, replication: bool) -> int | None:
        """The largest ``$top`` a query may give (None: no cap)."""
        if self.top_cap_no_role is not None and not replication:
            return self.top_cap_no_role
        if expand and self.top_cap_expand is not None:
            return self.top_cap_expand
        return self.top_cap


PROFILES: dict[str, VendorProfile] = {
    "generic": VendorProfile(
        "generic", "collection", default_page=100, max_page=1000, honours_maxpagesize=True
    ),
    "mlsgrid": VendorProfile(
        "mlsgrid",
        "page",
        default_page=1000,
        top_cap=5000,
        top_cap_expand=1000,
        required_filter="OriginatingSystemName",
        max_or_terms=5,
        local_fields=("MlgCanView",),
        budgets={
            "second": (1, 2),
            "hour": (3600, 7200),
            "day": (86_400, 40_000),
            "bytes_hour": (3600, 4 * 1024**3),
        },
    ),
    "trestle": VendorProfile("trestle", "page", default_page=10, top_cap=1000),
    "bridge": VendorProfile(
        "bridge", "collection", default_page=10, max_page=200, honours_maxpagesize=True
    ),
    "spark": VendorProfile("spark", "page", default_page=25, top_cap=1000, top_cap_no_role=25),
}


def profile(name: str, budgets: str = "") -> VendorProfile:
    """The profile ``name``, its budgets overridden by ``"hour=50,bytes_hour=10000"`` (tests).

    >>> profile("nope", "")
    Traceback (most recent call last):
    ...
    ValueError: reso_vendor: unknown vendor 'nope'; allowed: generic, mlsgrid, trestle, bridge, spark
    """
    if name not in PROFILES:
        raise ValueError(f"reso_vendor: unknown vendor {name!r}; allowed: {', '.join(PROFILES)}")
    chosen = PROFILES[name]
    if not budgets.strip():
        return chosen
    merged = dict(chosen.budgets)
    for part in filter(None, (p.strip() for p in budgets.split(","))):
        key, _, raw = part.partition("=")
        key = key.strip()
        if key not in BUDGET_NAMES:
            allowed = ", ".join(BUDGET_NAMES)
            raise ValueError(f"reso_budgets: unknown budget {key!r}; allowed: {allowed}")
        if not raw.strip().isdigit() or int(raw) < 1:
            raise ValueError(f"reso_budgets: {key} must be an integer >= 1, got {raw!r}")
        merged[key] = (BUDGET_NAMES[key], int(raw))
    return dataclasses.replace(chosen, budgets=merged)
