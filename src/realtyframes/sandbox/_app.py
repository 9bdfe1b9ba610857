"""The sandbox app: its state (:class:`SandboxAdmin`) and :func:`create_app`, routed from the
declarations in :mod:`realtyframes.sandbox.routes`.

One Starlette app serves every host of the spec (base, auth and legacy share the base URL).
Middleware, outermost first: rate limits (:mod:`~realtyframes.sandbox._middleware`: headers on
every answer, 429 when a quota is used up, 500 ``server_error`` for unhandled exceptions, never a
stack trace) -> faults (``/v1/*`` only) -> Starlette's exception handling (SandboxError and HTTP
errors rendered by :mod:`~realtyframes.sandbox._negotiate`). Paths match exactly: a trailing slash
(``/v1/listings/``) is a 404, never a redirect.

>>> from realtyframes.sandbox import SandboxOptions
>>> app = create_app(SandboxOptions(listings=200, contacts=20))  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware

from realtyframes.sandbox._auth import AuthRegistry
from realtyframes.sandbox._errors import SandboxError, bad_param
from realtyframes.sandbox._faults import FaultCounters, FaultsMiddleware, validate_faults
from realtyframes.sandbox._limits import RateLimiter
from realtyframes.sandbox._market_path import check_history_years
from realtyframes.sandbox._middleware import LimitsMiddleware
from realtyframes.sandbox._negotiate import ErrorRenderer, http_error, sandbox_error
from realtyframes.sandbox._options import DEMO, SandboxOptions
from realtyframes.sandbox._spec import DOCS_PATH, MCP_PATH
from realtyframes.sandbox.routes import (
    LEGACY_PATHS,
    SEARCH_PATH,
    SPARED_PATHS,
    starlette_routes,
)
from realtyframes.sandbox.routes.admin import iso

__all__ = ["SandboxAdmin", "build_admin", "create_app"]


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
    as_of = options.as_of.astimezone(UTC)
    return SandboxAdmin(
        options=options,
        listings=ListingStore(
            options.listings,
            options.seed,
            as_of=as_of,
            max_listing_ids=options.max_listing_ids,
            history_years=options.history_years,
        ),
        contacts=ContactStore(options.contacts, options.seed, as_of=as_of, domain=DEMO.domain),
        analytics=AnalyticsStore(options.seed, as_of=as_of),
    )


def create_app(options: SandboxOptions | None = None) -> Starlette:
    """The sandbox as an ASGI app (data generated now); ``app.state.admin`` holds its state.

    >>> app = create_app(SandboxOptions(listings=300, contacts=20))  # doctest: +SKIP
    >>> app.state.admin.now  # doctest: +SKIP
    """
    options = options or SandboxOptions()
    admin = build_admin(options)

    def on_search(count: int) -> None:
        admin.listings.insert_new(count)

    render_error = ErrorRenderer(
        LEGACY_PATHS, DOCS_PATH, protected=options.protected, mcp_path=MCP_PATH
    )
    app = Starlette(
        routes=starlette_routes(),
        middleware=[
            Middleware(LimitsMiddleware, admin=admin, render_error=render_error),
            Middleware(
                FaultsMiddleware,
                faults=options.faults,
                latency_ms=options.latency_ms,
                seed=options.seed,
                counters=admin.faults,
                render_error=render_error,
                on_search=on_search,
                search_path=SEARCH_PATH,
                spared=SPARED_PATHS,
            ),
        ],
        exception_handlers={SandboxError: sandbox_error, HTTPException: http_error},
    )
    # No 307 to the slash-less twin: /v1/listings/ is not an operation of the spec, and a
    # redirect would answer before authentication and validation. It is a 404 not_found.
    app.router.redirect_slashes = False
    app.state.admin = admin
    app.state.render_error = render_error
    return app
