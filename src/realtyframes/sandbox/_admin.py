"""Everything one sandbox app holds (:class:`SandboxAdmin`: options, stores, credentials, rate
limiter, fault counters, the clock) and :func:`build_admin`, which generates it.

``create_app`` puts it on ``app.state.admin``; the middleware and the routes read it from there
(``routes._declare.admin_of``), so they need its type only, from here, below them all.

>>> iso(datetime(2026, 6, 30, tzinfo=UTC))
'2026-06-30T00:00:00Z'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from realtyframes.sandbox._auth import AuthRegistry
from realtyframes.sandbox._errors import bad_param
from realtyframes.sandbox._faults import FaultCounters, validate_faults
from realtyframes.sandbox._limits import RateLimiter
from realtyframes.sandbox._market_path import check_history_years
from realtyframes.sandbox._options import DEMO, SandboxOptions
from realtyframes.sandbox._reso_vendors import profile as reso_profile

__all__ = ["SandboxAdmin", "build_admin", "iso"]


def iso(dt: datetime) -> str:
    """An aware datetime as ISO 8601 UTC with 'Z'."""
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class SandboxAdmin:
    """Everything one sandbox app holds; ``app.state.admin`` (tests read counters from it)."""

    options: SandboxOptions
    listings: Any
    contacts: Any
    analytics: Any
    auth: AuthRegistry = field(default_factory=AuthRegistry)
    limiter: RateLimiter | None = None
    faults: FaultCounters = field(default_factory=FaultCounters)
    reso: Any = None  # the RESO face (ResoService) over ``listings``

    def __post_init__(self) -> None:
        if self.limiter is None:
            self.limiter = RateLimiter(self.options.effective_rate_limit)

    @property
    def stores(self) -> tuple[Any, ...]:
        """The data stores whose clocks move together."""
        return (self.listings, self.contacts, self.analytics)

    @property
    def now(self) -> datetime:
        """The sandbox clock (as of which data is visible)."""
        return self.listings.now  # type: ignore[no-any-return]

    def set_now(self, when: datetime) -> None:
        """Move the clock of every store to ``when`` (tz-aware; forward only)."""
        if when.tzinfo is None:
            raise bad_param("now", "needs a time zone (e.g. 2026-07-01T00:00:00Z)")
        when = when.astimezone(UTC)
        if when < self.now:
            raise bad_param("now", f"the clock only moves forward; it is {iso(self.now)}")
        for store in self.stores:
            store.set_now(when)


def build_admin(options: SandboxOptions) -> SandboxAdmin:
    """Generate the data of ``options`` (the slow part) and wrap it in a SandboxAdmin."""
    from realtyframes.sandbox._analytics import AnalyticsStore
    from realtyframes.sandbox._crm import ContactStore
    from realtyframes.sandbox._reso_odata import ResoService
    from realtyframes.sandbox._store import ListingStore

    validate_faults(options.faults)
    if options.as_of.tzinfo is None:
        raise ValueError("as_of: needs a time zone (e.g. datetime(2026, 6, 30, tzinfo=UTC))")
    if options.rate_limit is not None:
        count, window = options.rate_limit
        if count < 1 or window <= 0:
            raise ValueError(
                f"rate_limit: expected (requests >= 1, window > 0), got {options.rate_limit}"
            )
    if options.latency_ms < 0:
        raise ValueError(f"latency_ms: must be >= 0, got {options.latency_ms}")
    check_history_years(options.history_years)
    vendor = reso_profile(options.reso_vendor, options.reso_budgets)
    if options.reso_budget_clock not in ("real", "manual"):
        raise ValueError(f"reso_budget_clock: {options.reso_budget_clock!r}; allowed: real, manual")
    if not 0.0 <= options.reso_hidden_share <= 1.0:
        raise ValueError(
            f"reso_hidden_share: must be within [0, 1], got {options.reso_hidden_share}"
        )
    if options.reso_shared_timestamps < 0:
        raise ValueError(
            f"reso_shared_timestamps: must be >= 0, got {options.reso_shared_timestamps}"
        )
    as_of = options.as_of.astimezone(UTC)
    listings = ListingStore(
        options.listings,
        options.seed,
        as_of=as_of,
        max_listing_ids=options.max_listing_ids,
        history_years=options.history_years,
    )
    reso = ResoService(
        listings,
        vendor,
        shared_timestamps=options.reso_shared_timestamps,
        hidden_share=options.reso_hidden_share,
        manual_clock=options.reso_budget_clock == "manual",
        lookups=options.reso_lookups,
    )
    return SandboxAdmin(
        options=options,
        listings=listings,
        contacts=ContactStore(options.contacts, options.seed, as_of=as_of, domain=DEMO.domain),
        # the website's listing pages show the market's listings (a page joins its listing)
        analytics=AnalyticsStore(options.seed, as_of=as_of, listing_ids=listings.on_market_ids()),
        reso=reso,
    )
