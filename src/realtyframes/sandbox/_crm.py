"""CRM contacts and their activity for the sandbox (``/v1/contacts*`` and the legacy ``/api/getContacts``).

Contacts are generated once from the seed: ``n`` contacts created over the two years before ``as_of``
(more each month, as a growing business gets), a few bulk imports, and about another year of contacts
created after ``as_of`` that appear when the sandbox clock moves forward. A contact's activity is
generated on first use from ``(seed, contact number)``, so it is deterministic and costs nothing for
contacts nobody asks about.

>>> from datetime import UTC, datetime
>>> store = ContactStore(n=50, seed=1, as_of=datetime(2025, 6, 1, tzinfo=UTC))
>>> page = store.list({"Limit": "5"})
>>> page["total"], len(page["contacts"])
(50, 5)
"""

from __future__ import annotations

import builtins
import copy
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from realtyframes.sandbox._errors import SandboxError
from realtyframes.sandbox._query import PAGING, parse
from realtyframes.sandbox._spec import ACTIVITY_TYPES, SOURCES, STAGES

__all__ = ["ContactStore", "page_params"]

#: A list of JSON objects (a name of its own: ``ContactStore.list`` shadows ``list`` in the class).
Records = list[dict[str, Any]]

_PAST_DAYS = 730  # contacts visible at as_of were created over this many days
_FUTURE_DAYS = 365  # contacts created after as_of, revealed as the clock advances

_FIRST = (
    "Maria", "José", "Carlos", "Ana", "Luis", "Sofia", "Daniel", "Isabella", "Michael", "Jennifer",
    "David", "Jessica", "Gabriel", "Camila", "Alejandro", "Valentina", "Jean", "Marie", "Rachel",
    "Joshua", "Ashley", "Christopher", "Emily", "Ricardo", "Fernanda", "Lucas", "Beatriz", "Dmitri",
    "Olga", "Sarah", "Benjamin", "Rebecca", "Kevin", "Nicole", "Andrés", "Mariana", "Pierre",
    "Nathalie", "Robert", "Linda", "James", "Patricia", "Miguel", "Lucía", "Thiago", "Juliana",
    "Ethan", "Olivia", "Samuel", "Natasha", "Diego", "Paola", "Anthony", "Stephanie", "Marcus",
    "Tiffany", "Yolanda", "Reginald", "Ivan", "Elena",
)  # fmt: skip
_LAST = (
    "Rodriguez", "Gonzalez", "Hernandez", "Perez", "Garcia", "Martinez", "Lopez", "Fernandez",
    "Diaz", "Sanchez", "Ramirez", "Torres", "Morales", "Castillo", "Silva", "Santos", "Oliveira",
    "Pierre", "Jean-Baptiste", "Joseph", "Charles", "Smith", "Johnson", "Williams", "Brown", "Jones",
    "Miller", "Davis", "Wilson", "Anderson", "Cohen", "Levy", "Goldberg", "Friedman", "Katz",
    "Ivanov", "Petrova", "Kowalski", "Rossi", "Bianchi", "Thompson", "Jackson", "White", "Harris",
    "Clark", "Lewis", "Walker", "Young", "Allen", "King", "Wright", "Scott", "Green", "Baker",
    "Adams", "Nelson", "Mendoza", "Vargas", "Castro", "Rojas",
)  # fmt: skip
_LANGUAGES = (
    (("English",), 0.52),
    (("English", "Spanish"), 0.24),
    (("Spanish",), 0.09),
    (("English", "Portuguese"), 0.04),
    (("English", "Haitian Creole"), 0.03),
    (("English", "French"), 0.02),
    (("English", "Russian"), 0.02),
    (("English", "Hebrew"), 0.015),
    (("Portuguese", "Spanish"), 0.01),
    (("English", "Italian"), 0.015),
)
_CITIES = (
    ("Miami", ("33127", "33130", "33131", "33132", "33133", "33137", "33145", "33176"), 0.22),
    ("Miami Beach", ("33139", "33140", "33141"), 0.08),
    ("Coral Gables", ("33134", "33146"), 0.06),
    ("Aventura", ("33180",), 0.04),
    ("Doral", ("33166", "33178"), 0.05),
    ("Hialeah", ("33010", "33012", "33016"), 0.05),
    ("Fort Lauderdale", ("33301", "33304", "33308", "33316"), 0.12),
    ("Hollywood", ("33019", "33020", "33021"), 0.07),
    ("Pembroke Pines", ("33024", "33026", "33027"), 0.06),
    ("Weston", ("33326", "33327", "33331"), 0.04),
    ("Boca Raton", ("33431", "33432", "33433", "33486"), 0.10),
    ("Delray Beach", ("33444", "33483"), 0.05),
    ("West Palm Beach", ("33401", "33405"), 0.04),
    ("Sunny Isles Beach", ("33160",), 0.02),
)
_STREETS = (
    "NW 7th St", "SW 27th Ave", "Brickell Ave", "Collins Ave", "Ocean Dr", "Biscayne Blvd",
    "SW 8th St", "NE 2nd Ave", "Alton Rd", "Ponce de Leon Blvd", "Coral Way", "Las Olas Blvd",
    "N Federal Hwy", "SE 17th St", "Hollywood Blvd", "Sheridan St", "Pines Blvd", "Bonaventure Blvd",
    "NW 2nd Ave", "Palmetto Park Rd", "Atlantic Ave", "Clematis St", "S Flagler Dr", "NE 191st St",
    "Country Club Dr", "W 49th St", "NW 41st St", "Indian Creek Dr", "Bayshore Dr", "Sunset Dr",
)  # fmt: skip
_EMAIL_DOMAINS = ("example.com", "example.net", "example.org", "mail.example")
_AREA_CODES = ("305", "786", "954", "754", "561")
_SEARCHES = (
    "Miami Beach condos, 2+ beds, under $900k",
    "Fort Lauderdale waterfront homes, pool",
    "Coral Gables single family, 4+ beds",
    "Boca Raton 55+ communities",
    "Brickell rentals, 1 bed, under $3,500/mo",
    "Weston townhouses, under $650k",
    "Hollywood beach condos, ocean view",
    "Aventura condos with gym, 2 beds",
    "Doral new construction",
    "Delray Beach homes under $1.2M",
)
_EMAIL_SUBJECTS = (
    "New listings matching your search",
    "Price drop on a home you viewed",
    "Your monthly South Florida market update",
    "Open house this weekend",
    "Just sold in your neighborhood",
    "What is your home worth?",
)
_PAGES = ("/", "/listings", "/search", "/about", "/valuation", "/contact", "/blog/market-update")
_NOTES = (
    "Relocating from New York, wants to close before school starts.",
    "Prefers text messages in the evening.",
    "Pre-approved with a local lender; budget confirmed.",
    "Looking for a second home for the winter season.",
    "Investor: interested in condos that allow short-term rentals.",
    "Needs a pet-friendly building (two dogs).",
    "Wants waterfront with a boat dock.",
    "First-time buyer, asked for a list of lenders.",
    "Selling current home first; send a valuation.",
    "Met at the open house on Saturday.",
)
# Activity type weights by stage (same order as ACTIVITY_TYPES).
_TYPE_WEIGHTS = {
    "lead": (0.33, 0.30, 0.10, 0.20, 0.05, 0.0, 0.0, 0.02),
    "client": (0.15, 0.22, 0.05, 0.15, 0.16, 0.14, 0.06, 0.07),
    "active-client": (0.14, 0.25, 0.06, 0.14, 0.16, 0.15, 0.05, 0.05),
    "past-client": (0.10, 0.10, 0.02, 0.35, 0.15, 0.08, 0.06, 0.14),
}


def _iso(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _ascii(text: str) -> str:
    flat = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(ch for ch in flat.lower() if ch.isalnum())


def page_params(params: Mapping[str, str]) -> tuple[int, int]:
    """``(Offset, Limit)`` from query parameters: defaults 0 and 20, Limit at most 50.

    >>> page_params({"Limit": "50"})
    (0, 50)
    """
    paging = parse(PAGING, params)
    return paging["Offset"], paging["Limit"]


class ContactStore:
    """The CRM contacts of the demo domain, visible up to the sandbox clock ``now``.

    >>> from datetime import UTC, datetime
    >>> store = ContactStore(n=20, seed=3, as_of=datetime(2025, 6, 1, tzinfo=UTC))
    >>> first = store.list({})["contacts"][0]
    >>> store.get(first["id"])["stage"] in STAGES
    True
    """

    def __init__(
        self,
        n: int = 500,
        seed: int = 7,
        as_of: datetime | None = None,
        domain: str = "demo-realty.example",
    ) -> None:
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        if as_of is None:
            as_of = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        self.seed = seed
        self.domain = domain
        self.as_of = _utc(as_of)
        self._now = self.as_of
        self._contacts: Records = []  # sorted by createdAt ascending
        self._created: np.ndarray = np.empty(0, dtype=np.int64)  # epoch seconds, ascending
        self._stage_by_index: builtins.list[str] = []
        self._index: dict[str, int] = {}
        self._activity: dict[int, Records] = {}
        self._generate(n)

    # -- clock ---------------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        """The sandbox clock: contacts and activity after it are not visible yet."""
        return self._now

    def set_now(self, dt: datetime) -> None:
        """Move the clock (forward reveals contacts created since; back hides them again).

        >>> from datetime import UTC, datetime, timedelta
        >>> store = ContactStore(n=10, as_of=datetime(2025, 6, 1, tzinfo=UTC))
        >>> store.set_now(store.now + timedelta(days=60))
        >>> store.list({})["total"] > 10
        True
        """
        self._now = _utc(dt)

    def _visible_count(self) -> int:
        return int(np.searchsorted(self._created, self._now.timestamp(), side="right"))

    # -- operations ----------------------------------------------------------------------------

    def list(self, params: Mapping[str, str]) -> dict[str, Any]:
        """One page of visible contacts, newest first; ``Offset``/``Limit`` as for listings.

        >>> from datetime import UTC, datetime
        >>> ContactStore(n=30, as_of=datetime(2025, 6, 1, tzinfo=UTC)).list({"Offset": "25"})["total"]
        30
        """
        offset, limit = page_params(params)
        visible = self._visible_count()
        start = visible - offset  # newest first: walk the ascending list backwards
        stop = max(start - limit, 0)
        items = [copy.deepcopy(self._contacts[i]) for i in range(start - 1, stop - 1, -1)]
        return {"total": visible, "offset": offset, "limit": limit, "contacts": items}

    def get(self, contact_id: str) -> dict[str, Any]:
        """One contact by id; 404 when unknown or created after ``now``.

        >>> from datetime import UTC, datetime
        >>> ContactStore(n=5, as_of=datetime(2025, 6, 1, tzinfo=UTC)).get("nope")
        Traceback (most recent call last):
        ...
        realtyframes.sandbox._errors.SandboxError: 404 not_found: contact 'nope' not found
        """
        return copy.deepcopy(self._contacts[self._visible_index(contact_id)])

    def activity(self, contact_id: str) -> dict[str, Any]:
        """The contact's activity up to ``now``, newest first; 404 for an unknown contact.

        >>> from datetime import UTC, datetime
        >>> store = ContactStore(n=5, as_of=datetime(2025, 6, 1, tzinfo=UTC))
        >>> cid = store.list({})["contacts"][0]["id"]
        >>> store.activity(cid)["contactId"] == cid
        True
        """
        index = self._visible_index(contact_id)
        now = _iso(self._now)
        records = [
            dict(r) for r in self._activity_of(index) if r["timestamp"] <= now
        ]  # same-format ISO strings compare in time order
        return {"contactId": self._contacts[index]["id"], "activity": records}

    def for_domain(self, domain: str) -> Records:
        """Every visible contact of ``domain`` (legacy ``/api/getContacts``); ``[]`` for others.

        >>> from datetime import UTC, datetime
        >>> ContactStore(n=5, as_of=datetime(2025, 6, 1, tzinfo=UTC)).for_domain("other.example")
        []
        """
        if domain != self.domain:
            return []
        visible = self._visible_count()
        return [copy.deepcopy(self._contacts[i]) for i in range(visible - 1, -1, -1)]

    # -- internals -----------------------------------------------------------------------------

    def _visible_index(self, contact_id: str) -> int:
        index = self._index.get(contact_id)
        if index is None or index >= self._visible_count():
            raise SandboxError(404, f"contact {contact_id!r} not found")
        return index

    def _generate(self, n: int) -> None:
        rng = np.random.default_rng([self.seed, 0xC0])
        as_of_s = self.as_of.timestamp()
        day = 86_400.0
        # Creation density grows linearly: 1 at -730 days, 2 at as_of, 2.5 at +365 days.
        n_future = round(n * 0.75)
        u_past = rng.random(n)
        x_past = -1.0 + np.sqrt(1.0 + 3.0 * u_past)  # inverse CDF of (1 + x) on [0, 1]
        u_future = rng.random(n_future)
        x_future = -2.0 + np.sqrt(4.0 + 2.25 * u_future)  # inverse CDF of (2 + x) on [0, 0.5]
        created_day = np.concatenate(
            [as_of_s / day - _PAST_DAYS + x_past * _PAST_DAYS, as_of_s / day + x_future * 2 * 365]
        )
        created_day = np.floor(created_day)
        # People sign up mostly between 8:00 and 23:00 Eastern (12:00-03:00 UTC).
        hours = (12 + rng.gamma(4.0, 2.2, created_day.size)) % 24
        created = created_day * day + hours * 3600 + rng.integers(0, 3600, created_day.size)
        past = np.arange(created.size) < n  # keep each side of as_of (as_of may not be midnight)
        created[past & (created >= as_of_s)] -= day
        created[~past & (created <= as_of_s)] += day
        source = rng.choice(len(SOURCES), size=created.size, p=(0.2, 0.28, 0.12, 0.26, 0.14, 0.0))
        # Two bulk imports early on (an old CRM's export): 8% of the past contacts.
        imports = rng.random(created.size) < 0.08
        imports &= created < as_of_s - 400 * day
        batch = np.where(rng.random(created.size) < 0.6, 700, 520)
        created[imports] = (
            np.floor(as_of_s / day - batch[imports]) * day + 15 * 3600 + rng.integers(0, 1800)
        )
        source[imports] = SOURCES.index("import")
        order = np.argsort(created, kind="stable")
        created = created[order].astype(np.int64)
        source = source[order]
        self._created = created
        age_days = (as_of_s - created) / day
        for i in range(created.size):
            contact = self._make_contact(rng, i, int(created[i]), SOURCES[source[i]], age_days[i])
            self._contacts.append(contact)
            self._index[contact["id"]] = i

    def _make_contact(
        self, rng: np.random.Generator, i: int, created: int, source: str, age_days: float
    ) -> dict[str, Any]:
        stage = self._pick_stage(rng, age_days, source)
        self._stage_by_index.append(stage)
        cid = f"{created & 0xFFFFFFFF:08x}{int(rng.integers(0, 2**63)):016x}"
        first = _FIRST[int(rng.integers(len(_FIRST)))]
        last = _LAST[int(rng.integers(len(_LAST)))]
        name = f"{first} {last}"
        style = int(rng.integers(4))
        local = [
            f"{_ascii(first)}.{_ascii(last)}",
            f"{_ascii(first)[0]}{_ascii(last)}",
            f"{_ascii(first)}{_ascii(last)}{int(rng.integers(1, 99))}",
            f"{_ascii(first)}_{_ascii(last)[:4]}{int(rng.integers(60, 99))}",
        ][style]
        email = f"{local}@{_EMAIL_DOMAINS[int(rng.integers(len(_EMAIL_DOMAINS)))]}"
        n_phones = int(rng.choice(3, p=(0.12, 0.7, 0.18)))
        phones = [
            f"+1 {_AREA_CODES[int(rng.integers(len(_AREA_CODES)))]}-555-0{int(rng.integers(100, 200))}"
            for _ in range(n_phones)
        ]
        langs_p = np.array([w for _, w in _LANGUAGES])
        langs = list(_LANGUAGES[int(rng.choice(len(_LANGUAGES), p=langs_p / langs_p.sum()))][0])
        street_address: str | None = None
        address: str | None = None
        if stage != "lead" or rng.random() < 0.45:
            city_p = np.array([w for _, _, w in _CITIES])
            city, zips, _ = _CITIES[int(rng.choice(len(_CITIES), p=city_p / city_p.sum()))]
            street_address = (
                f"{int(rng.integers(100, 20000))} {_STREETS[int(rng.integers(len(_STREETS)))]}"
            )
            if rng.random() < 0.35:
                street_address += f" Apt {int(rng.integers(1, 45))}{int(rng.integers(1, 20)):02d}"
            address = f"{street_address}, {city}, FL {zips[int(rng.integers(len(zips)))]}"
        slug = f"{_ascii(first)}{_ascii(last)}"
        social = rng.random(5)
        links: dict[str, str | None] = {
            "facebook": f"https://www.facebook.com/{slug}" if social[0] < 0.3 else None,
            "twitter": f"https://twitter.com/{slug}" if social[1] < 0.06 else None,
            "instagram": f"https://www.instagram.com/{slug}" if social[2] < 0.25 else None,
            "linkedin": f"https://www.linkedin.com/in/{slug}" if social[3] < 0.15 else None,
            "youtube": None,
            "website": f"https://{slug}.example" if social[4] < 0.04 else None,
            "whatsapp": (
                "https://wa.me/" + "".join(ch for ch in phones[0] if ch.isdigit())
                if phones and ("Spanish" in langs or "Portuguese" in langs)
                else None
            ),
            "service": f"https://{self.domain}/crm/contacts/{cid}",
        }
        created_iso = _iso(datetime.fromtimestamp(created, UTC))
        registered = source in ("signup form", "listing inquiry", "open house", "social")
        return {
            "id": cid,
            "name": name,
            "email": email,
            "phones": phones,
            "createdAt": created_iso,
            "stage": stage,
            "source": source,
            "image": (
                f"https://cdn.{self.domain}/crm/avatars/{cid}.jpg" if rng.random() < 0.35 else None
            ),
            "spokenLanguages": langs,
            "address": address,
            "streetAddress": street_address,
            "notes": _NOTES[int(rng.integers(len(_NOTES)))] if rng.random() < 0.55 else None,
            "links": links,
            "registration": {"date": created_iso[:10] if registered else None},
        }

    @staticmethod
    def _pick_stage(rng: np.random.Generator, age_days: float, source: str) -> str:
        if age_days < 0:  # created after as_of
            p = (0.86, 0.04, 0.10, 0.0)
        elif age_days < 120:
            p = (0.74, 0.08, 0.18, 0.0)
        elif age_days < 365:
            p = (0.62, 0.14, 0.14, 0.10)
        else:
            p = (0.55, 0.13, 0.08, 0.24)
        if source == "referral":  # referrals convert far better
            p = (p[0] * 0.5, p[1] * 1.6, p[2] * 1.6, p[3] * 1.6)
        weights = np.array(p) / sum(p)
        return STAGES[int(rng.choice(len(STAGES), p=weights))]

    def _activity_of(self, index: int) -> Records:
        cached = self._activity.get(index)
        if cached is None:
            cached = self._make_activity(index)
            self._activity[index] = cached
        return cached

    def _make_activity(self, index: int) -> Records:
        rng = np.random.default_rng([self.seed, 0xAC, index])
        contact = self._contacts[index]
        stage = self._stage_by_index[index]
        created = int(self._created[index])
        horizon = self.as_of.timestamp() + _FUTURE_DAYS * 86_400
        if stage == "lead":
            count, scale_days = 1 + int(rng.poisson(4)), 40.0
        elif stage == "past-client":
            count, scale_days = 6 + int(rng.poisson(10)), 240.0
        else:
            count, scale_days = 8 + int(rng.poisson(14)), 150.0
        gaps = rng.exponential(scale_days * 86_400, count)
        gaps[0] = rng.uniform(0, 600)  # the first touch is right at sign-up
        stamps = np.minimum(created + np.sort(gaps), horizon - 1).astype(np.int64)
        weights = np.array(_TYPE_WEIGHTS[stage])
        kinds = rng.choice(len(ACTIVITY_TYPES), size=count, p=weights / weights.sum())
        if contact["source"] in ("listing inquiry", "signup form"):
            kinds[0] = ACTIVITY_TYPES.index("listing_view" if index % 2 else "page_view")
        records = []
        for k in range(count):
            kind = ACTIVITY_TYPES[int(kinds[k])]
            ts = int(stamps[k])
            if kind in ("call", "showing"):  # office hours, 9:00-19:00 Eastern
                base = ts - ts % 86_400
                ts = max(base + 13 * 3600 + int(rng.integers(0, 10 * 3600)), created)
            record: dict[str, Any] = {
                "id": f"{ts & 0xFFFFFFFF:08x}{int(rng.integers(0, 2**63)):016x}",
                "type": kind,
                "timestamp": _iso(datetime.fromtimestamp(ts, UTC)),
                "description": "",
            }
            record.update(self._describe(rng, kind, contact))
            records.append(record)
        records.sort(key=lambda r: (r["timestamp"], r["id"]), reverse=True)
        return records

    @staticmethod
    def _describe(rng: np.random.Generator, kind: str, contact: dict[str, Any]) -> dict[str, Any]:
        city, zips, _ = _CITIES[int(rng.integers(len(_CITIES)))]
        addr = (
            f"{int(rng.integers(100, 20000))} {_STREETS[int(rng.integers(len(_STREETS)))]}, "
            f"{city}, FL {zips[0]}"
        )
        price = int(rng.lognormal(np.log(650_000), 0.6) // 5_000 * 5_000)
        if kind == "page_view":
            path = _PAGES[int(rng.integers(len(_PAGES)))]
            return {"description": f"Viewed {path}", "path": path}
        if kind == "listing_view":
            return {
                "description": f"Viewed listing {addr} (${price:,})",
                "address": addr,
                "listPrice": price,
            }
        if kind == "saved_search":
            search = _SEARCHES[int(rng.integers(len(_SEARCHES)))]
            return {"description": f"Saved search: {search}", "search": search}
        if kind == "email_open":
            subject = _EMAIL_SUBJECTS[int(rng.integers(len(_EMAIL_SUBJECTS)))]
            return {"description": f"Opened email: {subject}", "subject": subject}
        if kind == "call":
            direction = "inbound" if rng.random() < 0.4 else "outbound"
            seconds = int(rng.gamma(2.0, 150.0))
            return {
                "description": f"{direction.capitalize()} call, {seconds // 60} min {seconds % 60} s",
                "direction": direction,
                "durationSeconds": seconds,
            }
        if kind == "showing":
            return {"description": f"Showing at {addr}", "address": addr}
        if kind == "offer":
            amount = int(price * rng.uniform(0.9, 1.0) // 1_000 * 1_000)
            return {
                "description": f"Offer of ${amount:,} on {addr}",
                "address": addr,
                "amount": amount,
            }
        first = contact["name"].split(" ")[0]
        return {"description": f"Note: {first} - {_NOTES[int(rng.integers(len(_NOTES)))]}"}
