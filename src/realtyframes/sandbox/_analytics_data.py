"""Hand-tuned shares behind the sandbox's website sessions (data: one row a referrer, country, ...).

:mod:`realtyframes.sandbox._analytics_gen` draws from these tables.

>>> round(sum(share for _, share, _, _ in REFERRERS), 3)
1.0
"""

from __future__ import annotations

import numpy as np

# name, share of organic sessions, bounce probability, conversion multiplier, landing kinds
REFERRERS: tuple[tuple[str, float, float, float], ...] = (
    ("Google", 0.385, 0.46, 1.0),
    ("Direct", 0.24, 0.38, 1.2),
    ("Facebook", 0.075, 0.62, 0.7),
    ("Instagram", 0.06, 0.66, 0.6),
    ("Zillow", 0.055, 0.36, 1.5),
    ("Realtor.com", 0.035, 0.38, 1.4),
    ("Bing", 0.03, 0.45, 1.0),
    ("Newsletter", 0.02, 0.40, 1.3),
    ("Yahoo", 0.012, 0.50, 0.9),
    ("DuckDuckGo", 0.01, 0.45, 1.0),
    ("YouTube", 0.015, 0.60, 0.6),
    ("LinkedIn", 0.01, 0.55, 0.8),
    ("Redfin", 0.02, 0.40, 1.3),
    ("Nextdoor", 0.013, 0.50, 1.1),
    ("ChatGPT", 0.02, 0.42, 1.1),
)
COUNTRIES: tuple[tuple[str, float], ...] = (
    ("United States", 0.79),
    ("Canada", 0.04),
    ("Brazil", 0.025),
    ("Colombia", 0.02),
    ("Argentina", 0.015),
    ("Venezuela", 0.015),
    ("Mexico", 0.012),
    ("United Kingdom", 0.012),
    ("Germany", 0.008),
    ("France", 0.007),
    ("Spain", 0.007),
    ("Italy", 0.005),
    ("Israel", 0.005),
    ("Peru", 0.005),
    ("Dominican Republic", 0.005),
    ("Ecuador", 0.004),
    ("Chile", 0.004),
    ("Russia", 0.004),
    ("India", 0.004),
    ("Netherlands", 0.003),
)
DEVICE_P = (0.38, 0.56, 0.06)
# OS by device, then browser by OS.
OS: dict[str, tuple[tuple[str, float], ...]] = {
    "desktop": (("Windows", 0.55), ("macOS", 0.40), ("Linux", 0.03), ("ChromeOS", 0.02)),
    "mobile": (("iOS", 0.58), ("Android", 0.42)),
    "tablet": (("iPadOS", 0.75), ("Android", 0.25)),
}
BROWSERS: dict[str, tuple[tuple[str, float], ...]] = {
    "Windows": (("Chrome", 0.70), ("Edge", 0.22), ("Firefox", 0.08)),
    "macOS": (("Safari", 0.50), ("Chrome", 0.45), ("Firefox", 0.05)),
    "Linux": (("Chrome", 0.6), ("Firefox", 0.4)),
    "ChromeOS": (("Chrome", 1.0),),
    "iOS": (("Safari", 0.85), ("Chrome", 0.15)),
    "iPadOS": (("Safari", 0.9), ("Chrome", 0.1)),
    "Android": (("Chrome", 0.80), ("Samsung Internet", 0.18), ("Firefox", 0.02)),
}
# Share of sessions per UTC hour: evenings Eastern (UTC-4/-5) are the peak.
HOURS = np.array(
    [
        6,
        5,
        4,
        3,
        2,
        1.2,
        0.8,
        0.6,
        0.6,
        0.8,
        1.5,
        2.5,
        3.5,
        4.2,
        4.5,
        4.6,
        4.6,
        4.7,
        4.8,
        5,
        5.2,
        5.4,
        6.0,
        6.5,
    ]
)
WEEKDAY = np.array([1.08, 1.0, 1.0, 0.98, 0.9, 0.84, 1.06])  # Monday first
BLOG = (
    "south-florida-market-update",
    "best-miami-neighborhoods-for-families",
    "condo-special-assessments-explained",
    "how-much-is-my-home-worth",
    "first-time-buyer-guide-florida",
    "hurricane-insurance-what-buyers-should-know",
    "homestead-exemption-florida",
    "waterfront-homes-what-to-check",
    "55-plus-communities-boca-raton",
    "renting-vs-buying-in-miami",
    "new-construction-doral",
    "closing-costs-in-florida",
    "moving-to-fort-lauderdale",
    "seasonal-rentals-rules",
    "flood-zones-explained",
    "miami-beach-condo-guide",
    "selling-your-home-in-winter",
    "property-taxes-broward-vs-miami-dade",
)
HOODS = (
    "brickell",
    "miami-beach",
    "coral-gables",
    "fort-lauderdale",
    "boca-raton",
    "aventura",
    "doral",
    "weston",
    "hollywood",
    "delray-beach",
    "coconut-grove",
    "key-biscayne",
)
# Page kinds: fixed paths, or families with many members.
KINDS = ("home", "listings", "listing", "search", "blog", "hood", "valuation", "contact", "about",
          "sold", "open_houses", "team")  # fmt: skip
KIND_PATHS = {
    "home": ("/",),
    "listings": ("/listings",),
    "search": ("/search",),
    "valuation": ("/valuation",),
    "contact": ("/contact",),
    "about": ("/about",),
    "sold": ("/sold",),
    "open_houses": ("/open-houses",),
    "team": ("/team",),
}
# Landing-page kind weights by referrer (missing referrers use "default").
LANDING = {
    "default": (0.25, 0.12, 0.30, 0.08, 0.12, 0.06, 0.03, 0.01, 0.01, 0.01, 0.01, 0.0),
    "Direct": (0.55, 0.12, 0.14, 0.06, 0.03, 0.02, 0.03, 0.02, 0.01, 0.01, 0.01, 0.0),
    "Zillow": (0.05, 0.03, 0.85, 0.01, 0.0, 0.0, 0.02, 0.02, 0.02, 0.0, 0.0, 0.0),
    "Realtor.com": (0.05, 0.03, 0.85, 0.01, 0.0, 0.0, 0.02, 0.02, 0.02, 0.0, 0.0, 0.0),
    "Redfin": (0.05, 0.03, 0.85, 0.01, 0.0, 0.0, 0.02, 0.02, 0.02, 0.0, 0.0, 0.0),
    "Newsletter": (0.05, 0.10, 0.30, 0.0, 0.50, 0.02, 0.02, 0.0, 0.0, 0.01, 0.0, 0.0),
    "Facebook": (0.10, 0.10, 0.45, 0.0, 0.12, 0.03, 0.15, 0.0, 0.0, 0.0, 0.05, 0.0),
    "Instagram": (0.12, 0.10, 0.45, 0.0, 0.10, 0.03, 0.15, 0.0, 0.0, 0.0, 0.05, 0.0),
    "Google": (0.20, 0.10, 0.30, 0.06, 0.16, 0.10, 0.05, 0.01, 0.01, 0.01, 0.0, 0.0),
}
# Kind weights for pages after the landing page.
NEXT = (0.08, 0.15, 0.42, 0.10, 0.05, 0.05, 0.04, 0.04, 0.02, 0.02, 0.02, 0.01)
N_LISTINGS = 320
