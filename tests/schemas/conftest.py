"""Realistic raw records for the schema tests (the sandbox is not imported here)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

CITIES = (
    ("Miami", "Miami-Dade", ("33131", "33133", "33137"), 25.76, -80.19),
    ("Miami Beach", "Miami-Dade", ("33139", "33140"), 25.79, -80.13),
    ("Fort Lauderdale", "Broward", ("33301", "33304-1203"), 26.12, -80.14),
    ("Boca Raton", "Palm Beach", ("33431", "33432"), 26.37, -80.13),
)
SUBTYPES = ("Single Family Residence", "Condominium", "Townhouse", "Villa")
STATUSES = ("Active", "Active Under Contract", "Pending", "Closed")
ROOMS = ("Living Room", "Kitchen", "Primary Bedroom", "Bathroom", "Balcony", "Aerial View")
REMARK_WORDS = (
    "Stunning", "renovated", "waterfront", "home", "with", "impact", "windows", "and", "a",
    "chef's", "kitchen", "steps", "from", "the", "beach", "in", "sought-after", "neighborhood",
)  # fmt: skip
AS_OF = datetime(2025, 6, 1, tzinfo=UTC)


def iso(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def listing_record(
    i: int,
    rng: random.Random | None = None,
    *,
    detail: bool = False,
    media: tuple[int, int] = (5, 20),
    remarks: bool = True,
) -> dict[str, Any]:
    """One realistic listing object as a search (or, with ``detail``, the detail operation) gives."""
    rng = rng or random.Random(i)
    city, county, zips, lat, lng = CITIES[i % len(CITIES)]
    status = STATUSES[rng.randrange(4)]
    subtype = SUBTYPES[rng.randrange(len(SUBTYPES))]
    condo = subtype == "Condominium"
    living = float(rng.randrange(600, 4500))
    price = float(round(living * rng.uniform(300, 900), -3))
    cut = rng.random() < 0.3
    entered = AS_OF - timedelta(days=rng.randrange(5, 500), seconds=rng.randrange(86400))
    modified = entered + timedelta(days=rng.randrange(0, 5), hours=rng.randrange(24))
    closed = status == "Closed"
    number = str(rng.randrange(100, 20000))
    street = ("Collins Ave", "Ocean Dr", "Las Olas Blvd", "Palmetto Park Rd")[i % 4]
    unit = str(rng.randrange(101, 4500)) if condo else None
    zip_code = zips[rng.randrange(len(zips))]
    rec: dict[str, Any] = {
        "ListingId": f"A{10_000_000 + i}",
        "ListPrice": price,
        "PreviousListPrice": float(round(price * 1.05, -3)) if cut else None,
        "ClosePrice": float(round(price * rng.uniform(0.93, 1.02), -3)) if closed else None,
        "StandardStatus": status,
        "PropertyType": "Residential",
        "PropertySubType": subtype,
        "UnparsedAddress": f"{number} {street}{' #' + unit if unit else ''}, {city}, FL {zip_code}",
        "StreetNumber": number,
        "StreetDirPrefix": None,
        "StreetName": street,
        "UnitNumber": unit,
        "City": city,
        "StateOrProvince": "FL",
        "PostalCode": zip_code,
        "CountyOrParish": county,
        "SubdivisionName": "Bayfront Estates",
        "BuildingName": "Ocean Tower" if condo else None,
        "BedroomsTotal": rng.randrange(0, 6),
        "BathroomsTotalInteger": rng.randrange(1, 5),
        "LivingArea": living,
        "LotSizeSquareFeet": None if condo else float(rng.randrange(4000, 20000)),
        "YearBuilt": rng.randrange(1925, 2025),
        "DaysOnMarket": (AS_OF - entered).days,
        "AssociationFee": float(rng.randrange(200, 1500)) if condo else None,
        "coordinates": {
            "lng": lng + rng.uniform(-0.05, 0.05),
            "lat": lat + rng.uniform(-0.05, 0.05),
        },
        "OriginalEntryTimestamp": iso(entered),
        "ModificationTimestamp": iso(modified),
        "MajorChangeTimestamp": iso(modified),
        "CloseDate": (modified + timedelta(days=30)).strftime("%Y-%m-%d") if closed else None,
        "WaterfrontYN": rng.random() < 0.3,
        "PoolPrivateYN": rng.random() < 0.4,
        "SeniorCommunityYN": rng.random() < 0.05,
        "ListAgentMlsId": f"AG{rng.randrange(1000, 9999)}",
        "ListOfficeMlsId": f"OF{rng.randrange(100, 999)}",
        "ListOfficeName": "Coastal Realty Group",
    }
    if remarks:
        words = [
            REMARK_WORDS[rng.randrange(len(REMARK_WORDS))] for _ in range(rng.randrange(40, 120))
        ]
        rec["PublicRemarks"] = " ".join(words) + ". Call today!"
    lo, hi = media
    if hi:
        rec["Media"] = [
            {
                "Order": k,
                "MediaURL": f"https://cdn.example/photos/{rec['ListingId']}/{k}.jpg",
                "ShortDescription": ROOMS[k % len(ROOMS)],
            }
            for k in range(rng.randrange(lo, hi + 1))
        ]
    if detail:
        rec.update(
            {
                "YearBuiltDetails": "Resale",
                "TaxAnnualAmount": round(price * 0.018, 2),
                "TaxYear": 2024,
                "GarageSpaces": 0 if condo else 2,
                "CoveredSpaces": 1,
                "Stories": 1 if condo else 2,
                "WaterfrontFeatures": [{"name": "Canal Front"}, {"name": "Seawall"}]
                if rec["WaterfrontYN"]
                else [],
                "PoolFeatures": [{"name": "Heated"}] if rec["PoolPrivateYN"] else [],
                "ListingTerms": "Cash, Conventional",
                "Furnished": "Unfurnished",
                "View": "Ocean",
                "PetsAllowed": "Yes",
                "Appliances": "Dishwasher, Dryer, Refrigerator",
                "Levels": "One",
                "OriginatingSystemKey": "rfsmls",
                "OriginatingSystemName": "Realtyframes Sandbox MLS",
            }
        )
    return rec


def page(
    records: Sequence[dict[str, Any]],
    *,
    total: int | None = None,
    offset: int = 0,
    key: str = "listings",
) -> bytes:
    """A page body exactly as the service sends it (compact JSON)."""
    body = {
        "total": total if total is not None else len(records),
        "offset": offset,
        "limit": 50,
        key: list(records),
    }
    return json.dumps(body, separators=(",", ":")).encode()


def pages_of(
    records: Sequence[dict[str, Any]], size: int = 50, key: str = "listings"
) -> list[bytes]:
    return [
        page(records[o : o + size], total=len(records), offset=o, key=key)
        for o in range(0, len(records), size)
    ]


def change_record(i: int, kind: str = "price_change") -> dict[str, Any]:
    ts = iso(AS_OF - timedelta(hours=i))
    rec: dict[str, Any] = {
        "ListingId": f"A{10_000_000 + i}",
        "ChangeType": kind,
        "ChangeTimestamp": ts,
    }
    if kind == "price_change":
        rec |= {"PreviousListPrice": 500_000.0 + i, "ListPrice": 480_000.0 + i}
    else:
        rec |= {"PreviousStatus": "Active", "StandardStatus": "Pending"}
    return rec


def contact_record(i: int) -> dict[str, Any]:
    return {
        "id": f"c{i:04d}",
        "name": f"Maria Rodriguez {i}",
        "email": f"maria{i}@example.com",
        "phones": ["+1 305-555-0101", "+1 786-555-0199"][: 1 + i % 2],
        "createdAt": iso(AS_OF - timedelta(days=i)),
        "stage": ("lead", "client", "active-client")[i % 3],
        "source": "referral",
        "image": None,
        "spokenLanguages": ["English", "Spanish"] if i % 2 else ["English"],
        "address": "100 Ocean Dr, Miami Beach, FL 33139",
        "streetAddress": "100 Ocean Dr",
        "notes": "Looking for a 2/2 condo",
        "links": {
            "facebook": f"https://www.facebook.com/maria{i}",
            "twitter": None,
            "instagram": None,
            "linkedin": None,
            "youtube": None,
            "website": None,
            "whatsapp": None,
            "service": f"https://demo-realty.example/crm/contacts/c{i:04d}",
        },
        "registration": {"date": (AS_OF - timedelta(days=i)).strftime("%Y-%m-%d")},
    }


class Records:
    """The record factories, as one fixture (tests use ``rec.listing(3)``, ``rec.pages_of(...)``)."""

    listing = staticmethod(listing_record)
    page = staticmethod(page)
    pages_of = staticmethod(pages_of)
    change = staticmethod(change_record)
    contact = staticmethod(contact_record)
    iso = staticmethod(iso)
    as_of = AS_OF


@pytest.fixture(scope="session")
def rec() -> type[Records]:
    return Records
