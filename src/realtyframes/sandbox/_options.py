"""Options of the embedded sandbox and its documented demo credentials.

Shared by every sandbox module. The sandbox imports nothing from the client side of the package.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime

from realtyframes.sandbox._market_path import DEFAULT_HISTORY_YEARS
from realtyframes.sandbox._spec import MAX_LISTING_IDS


@dataclass(frozen=True)
class DemoCredentials:
    """Credentials registered in a protected sandbox (documented, not secret)."""

    api_key: str = "rfk_demo_standard_0001"  # standard plan, domain demo-realty.example
    premium_api_key: str = "rfk_demo_premium_0002"  # premium plan, same domain
    empty_api_key: str = "rfk_demo_nocontacts_0003"  # standard plan, a domain with no contacts
    client_id: str = "rf-demo-app"
    client_secret: str = "rf-demo-secret-not-for-production"
    # loopback redirect: any port is accepted (RFC 8252 7.3)
    redirect_uri: str = "http://127.0.0.1:8765/callback"
    domain: str = "demo-realty.example"
    email: str = "demo@demo-realty.example"
    # protected mode: the /_sandbox/* admin routes' secret, in the X-Sandbox-Admin header
    admin_secret: str = "rf-sandbox-admin-demo"


DEMO = DemoCredentials()


@dataclass(frozen=True)
class Faults:
    """Faults for reliability tests and benchmarks; all off by default.

    Rates are shares of requests in [0, 1], drawn from a seeded generator (deterministic per server).
    """

    error_rate: float = 0.0  # share answered 500/502/503 (spec error body)
    burst_429: int = 0  # every `burst_every` requests, this many consecutive 429s (Retry-After set)
    burst_every: int = 20
    drop_rate: float = 0.0  # share whose connection is dropped mid-body
    truncate_rate: float = 0.0  # share whose JSON body is cut short (valid HTTP, broken JSON)
    nonjson_rate: float = 0.0  # share answered by an HTML 502 page, as from a proxy
    drift: int = 0  # listings inserted at the top of the market on each search page served
    bad_records: float = 0.0  # share of listing records corrupted (negative price, ...)
    retry_after: int = 1  # Retry-After seconds on fault 429s

    @classmethod
    def parse(cls, text: str) -> Faults:
        """Parse ``"error_rate=0.1,burst_429=3,drift=2"``; unknown names raise ValueError."""
        names = {f.name: f.type for f in dataclasses.fields(cls)}
        values: dict[str, float | int] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, raw = part.partition("=")
            name = name.strip()
            if name not in names:
                raise ValueError(f"unknown fault {name!r}; allowed: {', '.join(sorted(names))}")
            values[name] = int(raw) if names[name] in ("int", int) else float(raw)
        return cls(**values)  # type: ignore[arg-type]


def _today_utc() -> datetime:
    now = datetime.now(UTC)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class SandboxOptions:
    """How a sandbox server behaves. Same options (seed, sizes, as_of) give the same data."""

    seed: int = 7
    listings: int = 5000  # listings visible at as_of (the generated history also has future ones)
    history_years: int = DEFAULT_HISTORY_YEARS  # years of history before as_of the listings span
    contacts: int = 500
    as_of: datetime = field(default_factory=_today_utc)  # the sandbox clock at start, tz-aware UTC
    protected: bool = False  # False: open like the public sandbox; True: keys, OAuth, scopes
    rate_limit: tuple[int, float] | None = None  # (requests, window seconds); None = mode default
    latency_ms: float = 0.0  # added to every answer
    faults: Faults = field(default_factory=Faults)
    admin_secret: str = DEMO.admin_secret  # protected mode: X-Sandbox-Admin on admin routes
    max_listing_ids: int = MAX_LISTING_IDS  # the change feed's ListingIds limit (400 above it)
    # the RESO face (/reso/odata): whose rules it keeps (generic, mlsgrid, trestle, bridge, spark)
    reso_vendor: str = "generic"
    reso_budgets: str = ""  # overrides of the vendor's budgets, e.g. "hour=50,bytes_hour=10000"
    reso_budget_clock: str = "real"  # "manual": budget windows move only via /_sandbox/reso/usage
    reso_shared_timestamps: int = 0  # the first N Property records share one ModificationTimestamp
    reso_hidden_share: float = 0.01  # mlsgrid: share of listing keys with MlgCanView = false
    reso_lookups: str = "string"  # lookup values: "string" (standard), "enum" (EnumType), "lookup"

    def effective_rate_limit(self, plan: str = "standard") -> tuple[int, float]:
        """The quota in force: the option if given, else open 100000/60s, protected by plan."""
        if self.rate_limit is not None:
            return self.rate_limit
        if not self.protected:
            return (100_000, 60.0)
        return (300, 60.0) if plan == "premium" else (60, 60.0)
