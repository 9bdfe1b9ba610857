"""The detail-only text fields of a listing (remarks, features, Media), drawn per listing on demand.

Each listing's fields come from its own generator, ``random.Random(f"{seed}:{ListingId}")``, in a
fixed order, consistent with its filter columns (a Pool listing has PoolFeatures, ...). The
vocabularies are data.

>>> rng = random.Random("7:A00000001")
>>> _pick(rng, ("Cash", "FHA", "VA"), 1, 1) in ("Cash", "FHA", "VA")
True
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np

from realtyframes.sandbox import _market_data as md
from realtyframes.sandbox._spec import LEASE_TYPES

__all__ = ["detail_fields"]

# -- vocabularies (data) ---------------------------------------------------------------------------
WATER_FEATURES = (
    "Ocean Front",
    "Bay Front",
    "Intracoastal Front",
    "Canal Front",
    "Lake Front",
    "Ocean Access",
    "Seawall",
    "No Fixed Bridges",
    "Fixed Bridge(s)",
    "Boat Lift",
)
BOAT_DOCK = "Boat Dock"
POOL_FEATURES = ("In Ground", "Heated", "Salt Water", "Screen Enclosure", "Infinity", "Spa/Hot Tub")
VIEWS_WATER = ("Ocean", "Bay", "Intracoastal", "Canal", "Lake")
VIEWS_DRY = ("Garden", "City", "Pool", "Golf Course", "Park/Greenbelt", "Other")
PARKING = (
    "Attached Garage",
    "Driveway",
    "Assigned Parking",
    "Covered Parking",
    "Valet",
    "Guest Parking",
    "Circular Driveway",
)
CONSTRUCTION = ("Concrete Block", "Stucco", "CBS Construction", "Frame", "Brick")
STYLES_HOUSE = ("Mediterranean", "Contemporary", "Ranch", "Key West", "Modern", "Colonial")
STYLES_UNIT = ("High Rise", "Mid Rise", "Low Rise", "Garden")
ROOFS = ("Barrel Roof", "Flat Tile", "Concrete", "Metal", "Shingle", "Built-Up")
COOLING = ("Central Air", "Ceiling Fan(s)", "Electric", "Wall/Window Unit(s)")
HEATING = ("Central", "Electric", "Heat Pump")
FLOORING = ("Tile", "Marble", "Wood", "Vinyl", "Porcelain", "Carpet")
APPLIANCES = (
    "Dishwasher",
    "Disposal",
    "Dryer",
    "Electric Range",
    "Gas Range",
    "Microwave",
    "Refrigerator",
    "Washer",
    "Wine Cooler",
    "Ice Maker",
)
INTERIOR = (
    "Walk-In Closet(s)",
    "Split Bedroom",
    "High Ceilings",
    "Kitchen Island",
    "Pantry",
    "Built-in Features",
    "Elevator",
    "Volume Ceilings",
)
PENTHOUSE = "Penthouse"
EXTERIOR = (
    "Balcony",
    "Patio",
    "Fence",
    "Lighting",
    "Outdoor Grill",
    "Deck",
    "Barbecue",
    "Open Porch",
)
COMMUNITY = (
    "Clubhouse",
    "Community Pool",
    "Fitness Center",
    "Sidewalks",
    "Street Lights",
    "Park",
    "Bike Storage",
    "Concierge",
    "Doorman",
)
GATED = "Gated"
TENNIS = "Tennis Court(s)"
GOLF = "Golf"
SENIOR = "55+ Community"
LAUNDRY = ("Laundry Room", "In Unit", "Common Area", "Washer Hookup", "Inside")
WINDOWS = ("Impact Glass", "Hurricane Shutters", "Blinds", "Sliding", "Casement")
DIRECTIONS = ("North", "South", "East", "West", "Northeast", "Northwest", "Southeast", "Southwest")
LOT_FEATURES = ("Corner Lot", "Cul-De-Sac", "Landscaped", "Sprinklers Automatic", "Zero Lot Line")
LISTING_TERMS = ("Cash", "Conventional", "FHA", "VA", "Seller Financing")
LEASE_TERMS_LONG = ("12 Months", "12 Months", "12 Months", "6 Months", "24 Months")
LEASE_TERM_SEASONAL = "Short Term Lease"
PETS_YES = ("Yes", "Breed Restrictions", "Size Limit")
PETS_NO = "No"
CONDITION_SHORT_SALE = "Short Sale"
CONDITIONS_OTHER = ("Real Estate Owned", "Probate Listing")
MEDIA_ROOMS = (
    "Living Room",
    "Kitchen",
    "Primary Bedroom",
    "Primary Bathroom",
    "Dining Room",
    "Bedroom",
    "Bathroom",
    "Balcony",
    "Lobby",
    "Fitness Center",
    "Aerial View",
    "Floor Plan",
    "Laundry",
    "Garage",
    "Backyard",
)

FURNISHED_VALUES = ("Unfurnished", "Furnished")  # codes 0, 1; -1 = null
PETS_VALUES = (PETS_NO, *PETS_YES)  # codes 0..3; -1 = null
CONDITIONS = ("Standard", CONDITION_SHORT_SALE, *CONDITIONS_OTHER)  # codes 0..3
_LAND_TYPES = ("Land", "Land/Boat Docks")
_COMMERCIAL_TYPES = ("Commercial Sale", "Commercial Lease", "Business Opportunity")


def detail_fields(
    seed: int, c: Mapping[str, np.ndarray], row: int, rec: Mapping[str, Any]
) -> dict[str, Any]:
    """Remarks, features and Media of one listing, consistent with its filter columns.

    A resale's structure (stories, parking, features) is its home's: drawn from the generator of
    the home's first listing (``prop``), the rest from its own.
    """
    lid = rec["ListingId"]
    rng = random.Random(f"{seed}:{lid}")
    prop = int(c["prop"][row])
    home = rng if prop == int(c["id"][row]) else random.Random(f"{seed}:A{prop:08d}")
    ptype, sub = rec["PropertyType"], rec["PropertySubType"]
    x = SimpleNamespace(
        lid=lid,
        ptype=ptype,
        sub=sub,
        lease=ptype in LEASE_TYPES,
        land=ptype in _LAND_TYPES,
        commercial=ptype in _COMMERCIAL_TYPES,
        unit_sub=sub in md.UNIT_SUBTYPES,
        house=sub in md.HOUSE_SUBTYPES,
        waterfront=rec["WaterfrontYN"],
        pool=rec["PoolPrivateYN"],
        penthouse=bool(c["penthouse"][row]),
        gated=bool(c["gated"][row]),
        tennis=bool(c["tennis"][row]),
        golf=bool(c["golf"][row]),
        senior=rec["SeniorCommunityYN"],
        seasonal=bool(c["seasonal"][row]),
        boat_dock=bool(c["boat_dock"][row]),
        entry_year=int(rec["OriginalEntryTimestamp"][:4]),
        year=rec["YearBuilt"],
        furnished=int(c["furnished"][row]),
        pets=int(c["pets"][row]),
        condition=int(c["condition"][row]),
        orig_price=float(c["prices"][row][0]),
    )
    structure = _structure(home, x)  # the order of these three calls is the order of the draws
    terms = _terms_and_media(rng, x)
    finishes = _finishes(rng, x, rec)
    media = terms.pop("Media")  # the record's order: terms, structure, Media, finishes
    return {**terms, **structure, "Media": media, **finishes}


def _structure(rng: random.Random, x: SimpleNamespace) -> dict[str, Any]:
    """Water and pool features, stories, parking spaces, interior and community features."""
    water: list[dict[str, str]] = []
    if x.waterfront:
        water = [{"Feature": f} for f in rng.sample(WATER_FEATURES, rng.randint(1, 3))]
        if x.boat_dock:
            water.append({"Feature": BOAT_DOCK})
    pool_features = (
        [{"Feature": f} for f in rng.sample(POOL_FEATURES, rng.randint(1, 3))] if x.pool else []
    )
    stories = None
    if not x.land:
        if x.sub == "Single Family Residence":
            stories = rng.choice((1, 1, 1, 2, 2, 3))
        elif x.sub == "Townhouse":
            stories = rng.choice((2, 2, 3))
        elif x.commercial:
            stories = rng.randint(1, 4)
        elif x.ptype == "Residential Income":
            stories = rng.choice((1, 2))
        else:
            stories = 1
    x.levels = None if stories is None else ("One", "Two", "Three Or More")[min(stories, 3) - 1]
    garage = None if x.land else (rng.choice((0, 1, 2, 2, 2, 3)) if x.house else 0)
    covered = None if x.land else (rng.randint(1, 2) if x.unit_sub else garage)
    interior = None
    if not x.land and not x.commercial:
        interior = _pick(rng, INTERIOR, 1, 4)
        if x.penthouse:
            interior = f"{PENTHOUSE}, {interior}"
    x.interior = interior
    community = [
        name
        for name, present in (
            (GATED, x.gated),
            (TENNIS, x.tennis),
            (GOLF, x.golf),
            (SENIOR, x.senior),
        )
        if present
    ]
    if not x.commercial and rng.random() < 0.8:
        community += rng.sample(COMMUNITY, rng.randint(1, 3))
    x.community = community
    return {
        "GarageSpaces": garage,
        "CoveredSpaces": covered,
        "Stories": stories,
        "WaterfrontFeatures": water,
        "PoolFeatures": pool_features,
    }


def _terms_and_media(rng: random.Random, x: SimpleNamespace) -> dict[str, Any]:
    """View, lease term, tax, construction age and the photos."""
    if x.waterfront:
        x.view = ", ".join(rng.sample(VIEWS_WATER, rng.randint(1, 2)))
    elif x.land or rng.random() < 0.2:
        x.view = None
    else:
        x.view = rng.choice(VIEWS_DRY)
    lease_term = None
    if x.ptype == "Residential Lease":
        lease_term = LEASE_TERM_SEASONAL if x.seasonal else rng.choice(LEASE_TERMS_LONG)
    elif x.ptype == "Commercial Lease":
        lease_term = rng.choice(("12 Months", "36 Months", "60 Months"))
    x.lease_term = lease_term
    tax = None if x.lease else round(x.orig_price * rng.uniform(0.012, 0.021))
    year, entry_year = x.year, x.entry_year
    built = None if year is None else ("New Construction" if year >= entry_year - 1 else "Resale")
    n_media = rng.randint(5, 20)
    rooms = list(MEDIA_ROOMS)
    if x.pool:
        rooms.append("Pool")
    if x.waterfront:
        rooms += ["Water View", "Dock" if x.boat_dock else "Waterfront"]
    first = (
        "Lot"
        if x.land
        else ("Building Exterior" if x.unit_sub or x.commercial else "Front Exterior")
    )
    captions = [first, *rng.choices(rooms, k=n_media - 1)]
    media = [
        {
            "Order": i + 1,
            "MediaURL": f"https://media.example.com/rf-sandbox/{x.lid}/{i + 1:02d}.jpg",
            "ShortDescription": caption,
        }
        for i, caption in enumerate(captions)
    ]
    return {
        "YearBuiltDetails": built,
        "TaxAnnualAmount": tax,
        "TaxYear": None if x.lease else entry_year - 1,
        "Media": media,
    }


def _finishes(rng: random.Random, x: SimpleNamespace, rec: Mapping[str, Any]) -> dict[str, Any]:
    """Remarks and the finishes, drawn in the order of the keys below."""
    land, unit_sub, commercial, lease = x.land, x.unit_sub, x.commercial, x.lease
    return {
        "PublicRemarks": _remarks(rng, rec, x.penthouse, x.boat_dock, x.seasonal, x.gated, x.golf),
        "ListingTerms": None if lease else _pick(rng, LISTING_TERMS, 1, 4),
        "Furnished": FURNISHED_VALUES[x.furnished] if x.furnished >= 0 else None,
        "View": x.view,
        "PetsAllowed": PETS_VALUES[x.pets] if x.pets >= 0 else None,
        "ParkingFeatures": None if land else _pick(rng, PARKING, 1, 3),
        "ConstructionMaterials": None if land else _pick(rng, CONSTRUCTION, 1, 2),
        "ArchitecturalStyle": None
        if land
        else rng.choice(STYLES_UNIT if unit_sub else STYLES_HOUSE),
        "Roof": None if land or unit_sub else rng.choice(ROOFS),
        "Cooling": None if land else _pick(rng, COOLING, 1, 2),
        "Heating": None if land else rng.choice(HEATING),
        "Flooring": None if land else _pick(rng, FLOORING, 1, 3),
        "Appliances": None if land or commercial else _pick(rng, APPLIANCES, 3, 7),
        "InteriorFeatures": x.interior,
        "ExteriorFeatures": None if land else _pick(rng, EXTERIOR, 1, 3),
        "CommunityFeatures": ", ".join(x.community) or None,
        "LaundryFeatures": None if land or commercial else rng.choice(LAUNDRY),
        "WindowFeatures": None if land else _pick(rng, WINDOWS, 1, 2),
        "Sewer": None
        if land
        else ("Septic Tank" if x.house and rng.random() < 0.12 else "Public Sewer"),
        "WaterSource": None if land else ("Well" if x.house and rng.random() < 0.04 else "Public"),
        "LeaseTerm": x.lease_term,
        "LeaseAmountFrequency": "Monthly" if lease else None,
        "SpecialListingConditions": CONDITIONS[x.condition],
        "VirtualTourURLUnbranded": f"https://tours.example.com/rf-sandbox/{x.lid}"
        if rng.random() < 0.4
        else None,
        "DirectionFaces": None if x.ptype == "Land/Boat Docks" else rng.choice(DIRECTIONS),
        "LotFeatures": None if unit_sub or commercial else _pick(rng, LOT_FEATURES, 1, 2),
        "Levels": x.levels,
        "OriginatingSystemKey": md.ORIGINATING_SYSTEM_KEY,
        "OriginatingSystemName": md.ORIGINATING_SYSTEM_NAME,
    }


def _pick(rng: random.Random, pool: tuple[str, ...], lo: int, hi: int) -> str:
    k = rng.randint(lo, min(hi, len(pool)))
    return ", ".join(sorted(rng.sample(pool, k), key=pool.index))


def _remarks(
    rng: random.Random,
    rec: Mapping[str, Any],
    penthouse: bool,
    boat_dock: bool,
    seasonal: bool,
    gated: bool,
    golf: bool,
) -> str:
    sub, city = rec["PropertySubType"], rec["City"]
    place = rec["BuildingName"] or rec["SubdivisionName"] or city
    beds, baths, area = rec["BedroomsTotal"], rec["BathroomsTotalInteger"], rec["LivingArea"]
    adjective = rng.choice(
        ("Bright", "Spacious", "Updated", "Elegant", "Charming", "Renovated", "Stunning")
    )
    if beds is not None:
        rooms = "studio" if beds == 0 else f"{beds}-bedroom, {baths}-bath"
        text = f"{adjective} {rooms} {sub.lower()} in {place}"
    else:
        text = f"{adjective} {sub.lower()} opportunity in {place}"
    if area:
        text += f" with {area:,} sq ft"
    parts = [text + "."]
    if penthouse:
        parts.append("Penthouse residence with private elevator access and wraparound terrace.")
    if rec["WaterfrontYN"]:
        parts.append(
            "Waterfront setting with a private boat dock."
            if boat_dock
            else "Waterfront setting with open water views."
        )
    if rec["PoolPrivateYN"]:
        parts.append("Private pool and covered patio for year-round entertaining.")
    if rec["SeniorCommunityYN"]:
        parts.append("Located in a 55+ active-adult community.")
    if gated:
        parts.append("Guard-gated community.")
    if golf:
        parts.append("Golf course community.")
    if seasonal:
        parts.append("Available for the season; short-term lease.")
    parts.append(
        rng.choice(
            (
                f"Minutes from the best of {city}'s shopping, dining and beaches.",
                "Impact windows and doors throughout.",
                "Move-in ready; easy to show.",
                "Close to schools, parks and major highways.",
            )
        )
    )
    return " ".join(parts)
