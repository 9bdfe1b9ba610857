"""Generation of the sandbox's website sessions (the data behind ``/v1/analytics``).

About 13 months of sessions before ``as_of`` and a year after it, vectorised, from one generator
seeded with ``[seed, 0xA7]``: traffic that grows, dips on weekends, peaks in the South-Florida
winter season, newsletter spikes every other Tuesday and a few paid social campaigns. The steps of
:func:`generate` draw in a fixed order: reordering them changes every session. The tables below are
data (hand-tuned shares), hence their length.

>>> from datetime import UTC, datetime
>>> sessions = generate(7, datetime(2025, 6, 1, tzinfo=UTC))
>>> sessions.start.size == sessions.visitor.size
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from types import SimpleNamespace

import numpy as np

from realtyframes.sandbox import _analytics_data as data
from realtyframes.sandbox._spec import DEVICES
from realtyframes.sandbox._steps import keep

__all__ = ["DAY", "generate"]

DAY = 86_400
_PAST_DAYS = 396  # a year of windows plus a month
_FUTURE_DAYS = 365


def _norm(weights: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(weights, dtype=float)
    return array / array.sum()


def _conditional(
    rng: np.random.Generator,
    parent: np.ndarray,
    parents: Sequence[str],
    table: Mapping[str, tuple[tuple[str, float], ...]],
    labels: list[str],
) -> np.ndarray:
    """A label per row drawn by its parent's shares (OS by device, browser by OS), parents in order."""
    codes = np.zeros(parent.size, dtype=np.int64)
    for code, parent_name in enumerate(parents):
        where = np.flatnonzero(parent == code)
        opts = table[parent_name]
        picks = rng.choice(len(opts), size=where.size, p=_norm([w for _, w in opts]))
        codes[where] = np.array([labels.index(name) for name, _ in opts])[picks]
    return codes


def generate(
    seed: int, as_of: datetime, listing_ids: Sequence[str] | None = None
) -> SimpleNamespace:
    """Every session of the site: start, visitor, pages, referrer, UTM tags, conversion.
    ``listing_ids``: the MLS listings the site's listing pages show (the listing store's, so a
    page joins its listing); None: made-up ids."""
    rng = np.random.default_rng([seed, 0xA7])
    d = SimpleNamespace(as_of=as_of, seed=seed, listing_ids=listing_ids)
    steps = (_traffic, _sessions, _referrers, _visitors, _visitor_attributes, _pages, _page_paths,
             _durations, _conversions, _utm)  # fmt: skip
    for step in steps:
        step(rng, d)
    d.country_labels = [c for c, _ in data.COUNTRIES]
    return d


def _traffic(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """Sessions per day: growth, season, weekday; newsletter spikes; paid campaigns."""
    as_of_day = int(d.as_of.timestamp() // DAY)
    days = np.arange(as_of_day - _PAST_DAYS, as_of_day + _FUTURE_DAYS)
    rel = (days - as_of_day) / 365.0
    weekday = (days + 3) % 7  # 1970-01-01 was a Thursday (3 with Monday = 0)
    doy = (days - 0) % 365.25
    season = 1 + 0.16 * np.cos(2 * np.pi * (doy - 45) / 365.25)  # peak mid-February
    growth = 210.0 * np.exp(0.3 * rel)  # about +35% a year
    mu = growth * season * data.WEEKDAY[weekday] * rng.gamma(25.0, 1 / 25.0, days.size)
    organic = rng.poisson(mu)
    ref_names = [r[0] for r in data.REFERRERS]
    nl = ref_names.index("Newsletter")
    # Newsletter every other Tuesday: a spike that day and a tail the next.
    newsletter_day = (weekday == 1) & ((days // 7) % 2 == 0)
    newsletter = rng.poisson(np.where(newsletter_day, 0.35 * mu, 0.0))
    newsletter[1:] += rng.poisson(np.where(newsletter_day[:-1], 0.1 * mu[:-1], 0.0))
    # Paid social campaigns: a few windows of two to three weeks.
    campaigns = ("spring-open-houses", "luxury-waterfront", "home-valuation-offer",
                 "new-construction-doral", "winter-season-rentals")  # fmt: skip
    campaign_of_day = np.full(days.size, -1)
    starts = np.sort(rng.choice(np.arange(0, days.size - 25, 30), size=7, replace=False))
    for j, s in enumerate(starts):
        campaign_of_day[s : s + int(rng.integers(14, 22))] = j % len(campaigns)
    paid = rng.poisson(np.where(campaign_of_day >= 0, 0.12 * mu, 0.0))
    keep(d, locals())


def _sessions(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """One row per session: its day, origin and start time, in time order."""
    counts = d.organic + d.newsletter + d.paid
    n = int(counts.sum())
    day = np.repeat(d.days, counts)
    # Per-session origin: 0 organic, 1 newsletter, 2 paid campaign (same day order as counts).
    origin = np.repeat(
        np.tile(np.array([0, 1, 2], dtype=np.int8), d.days.size),
        np.stack([d.organic, d.newsletter, d.paid], axis=1).ravel(),
    )
    campaign_idx = np.repeat(d.campaign_of_day, counts)
    hour = rng.choice(24, size=n, p=_norm(data.HOURS))
    start = day.astype(np.int64) * DAY + hour * 3600 + rng.integers(0, 3600, n)
    order = np.argsort(start, kind="stable")
    start, day, origin, campaign_idx = (
        start[order],
        day[order],
        origin[order],
        campaign_idx[order],
    )
    keep(d, locals())


def _referrers(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """The referrer of each session."""
    referrer = rng.choice(len(data.REFERRERS), size=d.n, p=_norm([r[1] for r in data.REFERRERS]))
    referrer[d.origin == 1] = d.nl
    paid_sess = d.origin == 2
    referrer[paid_sess] = np.where(
        rng.random(int(paid_sess.sum())) < 0.6,
        d.ref_names.index("Facebook"),
        d.ref_names.index("Instagram"),
    )
    keep(d, locals())


def _visitors(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """Visitors: a share of sessions come back from an earlier session's visitor."""
    returning = rng.random(d.n) < np.where(d.referrer == d.ref_names.index("Direct"), 0.5, 0.22)
    returning[0] = False
    lag = rng.geometric(1 / 1500, d.n)
    parent = np.arange(d.n) - lag
    parent = np.where(returning & (parent >= 0), parent, np.arange(d.n))
    while True:  # pointer jumping: every session points at its visitor's first session
        nxt = parent[parent]
        if np.array_equal(nxt, parent):
            break
        parent = nxt
    is_first = parent == np.arange(d.n)
    first_rank = np.cumsum(is_first) - 1
    visitor = first_rank[parent].astype(np.int64)
    n_visitors = int(is_first.sum())
    visitor_hash = rng.integers(0, 2**63, n_visitors, dtype=np.int64) | (1 << 60)
    keep(d, locals())


def _visitor_attributes(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """Visitor-constant attributes: device, OS, browser, country."""
    device = rng.choice(len(DEVICES), size=d.n_visitors, p=_norm(data.DEVICE_P))
    os_labels = sorted({name for opts in data.OS.values() for name, _ in opts})
    browser_labels = sorted({name for opts in data.BROWSERS.values() for name, _ in opts})
    os_code = _conditional(rng, device, DEVICES, data.OS, os_labels)
    browser_code = _conditional(rng, os_code, os_labels, data.BROWSERS, browser_labels)
    country = rng.choice(
        len(data.COUNTRIES), size=d.n_visitors, p=_norm([w for _, w in data.COUNTRIES])
    )
    keep(d, locals())


def _pages(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """Pages: how many, the landing page by referrer, then the rest."""
    mobile = d.device[d.visitor] == DEVICES.index("mobile")
    bounce_p = np.array([r[2] for r in data.REFERRERS])[d.referrer] + np.where(mobile, 0.05, -0.03)
    bounced = rng.random(d.n) < bounce_p
    npages = np.where(bounced, 1, 2 + rng.negative_binomial(2, 0.4, d.n)).clip(1, 30)
    offsets = np.zeros(d.n + 1, dtype=np.int64)
    np.cumsum(npages, out=offsets[1:])
    total = int(offsets[-1])
    flat_session = np.repeat(np.arange(d.n), npages)
    is_landing = np.zeros(total, dtype=bool)
    is_landing[offsets[:-1]] = True
    landing_table = np.array(
        [_norm(data.LANDING.get(name, data.LANDING["default"])) for name in d.ref_names]
    )
    landing_cum = np.cumsum(landing_table, axis=1)
    flat_kind = rng.choice(len(data.KINDS), size=total, p=_norm(data.NEXT))
    u = rng.random(d.n)
    landing_kind = (u[:, None] > landing_cum[d.referrer]).sum(axis=1).clip(0, len(data.KINDS) - 1)
    flat_kind[is_landing] = landing_kind
    keep(d, locals())


def _page_paths(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """The path of every page viewed."""
    labels_page: list[str] = []
    flat_page = np.zeros(d.total, dtype=np.int64)
    listing_ids = [
        f"A{11_000_000 + int(x)}" for x in rng.choice(900_000, data.N_LISTINGS, replace=False)
    ]
    if d.listing_ids:  # the store's listings, drawn on their own stream (the rest stays the same)
        own = np.random.default_rng([d.seed, 0xA8])
        count = min(data.N_LISTINGS, len(d.listing_ids))
        listing_ids = [str(d.listing_ids[i]) for i in own.choice(len(d.listing_ids), count, False)]
    families = {
        "listing": [f"/listings/{lid}" for lid in listing_ids],
        "blog": [f"/blog/{slug}" for slug in data.BLOG],
        "hood": [f"/neighborhoods/{slug}" for slug in data.HOODS],
    }
    for k, name in enumerate(data.KINDS):
        paths = families.get(name) or list(data.KIND_PATHS[name])
        base = len(labels_page)
        labels_page.extend(paths)
        where = np.flatnonzero(d.flat_kind == k)
        zipf = 1.0 / np.arange(1, len(paths) + 1) ** 0.9
        flat_page[where] = base + rng.choice(len(paths), size=where.size, p=_norm(zipf))
    keep(d, locals())


def _durations(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """Durations: a short look for bounces, a dwell per page otherwise."""
    dwell = rng.lognormal(np.log(38.0), 0.9, d.total)
    dwell[d.is_landing] = 0.0
    duration = np.bincount(d.flat_session, weights=dwell, minlength=d.n)
    duration += np.where(d.bounced, rng.lognormal(np.log(12.0), 1.1, d.n), rng.uniform(5, 30, d.n))
    duration = np.minimum(duration, 3 * 3600).round().astype(np.int64)
    keep(d, locals())


def _conversions(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """Conversions: a lead form (contact, valuation, listing inquiry)."""
    form_kinds = np.isin(d.flat_kind, [data.KINDS.index("contact"), data.KINDS.index("valuation")])
    saw_form = np.bincount(d.flat_session, weights=form_kinds, minlength=d.n) > 0
    saw_listing = (
        np.bincount(
            d.flat_session, weights=d.flat_kind == data.KINDS.index("listing"), minlength=d.n
        )
        > 0
    )
    p_conv = 0.002 + 0.004 * np.minimum(d.npages - 1, 8) + np.where(saw_form, 0.10, 0.0)
    p_conv += np.where(saw_listing, 0.006, 0.0)
    p_conv *= 0.7 * np.array([r[3] for r in data.REFERRERS])[d.referrer]
    converted = rng.random(d.n) < p_conv
    keep(d, locals())


def _utm(rng: np.random.Generator, d: SimpleNamespace) -> None:
    """UTM tags (code 0 is the empty tag)."""
    src_labels = ["", "google", "bing", "facebook", "instagram", "newsletter", "qr"]
    med_labels = ["", "cpc", "paid_social", "email", "print"]
    month_names = sorted(
        {
            d.strftime("%Y-%m")
            for d in (date(1970, 1, 1) + timedelta(days=int(x)) for x in d.days[::14])
        }
    )
    camp_labels = ["", "brand", "miami-condos", "home-valuation", "always-on-retargeting",
                   "open-house-signs", *d.campaigns, *(f"market-update-{m}" for m in month_names)]  # fmt: skip
    utm_source = np.zeros(d.n, dtype=np.int64)
    utm_medium = np.zeros(d.n, dtype=np.int64)
    utm_campaign = np.zeros(d.n, dtype=np.int64)
    r = rng.random(d.n)
    google = (d.referrer == d.ref_names.index("Google")) & (r < 0.18)
    utm_source[google], utm_medium[google] = src_labels.index("google"), med_labels.index("cpc")
    utm_campaign[google] = rng.choice([1, 2, 3], size=int(google.sum()), p=[0.5, 0.3, 0.2])
    bing = (d.referrer == d.ref_names.index("Bing")) & (r < 0.2)
    utm_source[bing], utm_medium[bing], utm_campaign[bing] = 2, 1, 1
    for name, code in (("Facebook", 3), ("Instagram", 4)):
        social = (d.referrer == d.ref_names.index(name)) & ((r < 0.35) | d.paid_sess)
        utm_source[social], utm_medium[social] = code, med_labels.index("paid_social")
        in_campaign = social & (d.campaign_idx >= 0)
        utm_campaign[social] = camp_labels.index("always-on-retargeting")
        utm_campaign[in_campaign] = 6 + d.campaign_idx[in_campaign]
    news = d.referrer == d.nl
    utm_source[news], utm_medium[news] = (
        src_labels.index("newsletter"),
        med_labels.index("email"),
    )
    months = np.array(
        [
            (date(1970, 1, 1) + timedelta(days=int(x))).strftime("%Y-%m")
            for x in range(d.days[0], d.days[-1] + 1)
        ]
    )
    month_of = months[d.day[news] - d.days[0]]
    month_code = {m: camp_labels.index(f"market-update-{m}") for m in month_names}
    utm_campaign[news] = [month_code.get(m, 0) for m in month_of]
    qr = (d.referrer == d.ref_names.index("Direct")) & (r < 0.03)
    utm_source[qr], utm_medium[qr] = src_labels.index("qr"), med_labels.index("print")
    utm_campaign[qr] = camp_labels.index("open-house-signs")
    keep(d, locals())
