"""Static tables behind the sandbox's synthetic South-Florida-like listings market.

Cities with their county, postal codes, centre coordinates, price level, streets, subdivisions and
condo buildings; property types and subtypes with their shares; the vocabularies of the detail-only
text fields. Pure data: the generator in :mod:`realtyframes.sandbox._listings` draws from it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The spec's property types (search filter ``PropertyType``), in the spec's order.
PROPERTY_TYPES: tuple[str, ...] = (
    "Residential",
    "Residential Income",
    "Land",
    "Land/Boat Docks",
    "Commercial Sale",
    "Business Opportunity",
    "Residential Lease",
    "Commercial Lease",
)
LEASE_TYPES: frozenset[str] = frozenset({"Residential Lease", "Commercial Lease"})

#: Share of each property type in the generated market (mostly Residential and Residential Lease).
PROPERTY_TYPE_WEIGHTS: dict[str, float] = {
    "Residential": 0.50,
    "Residential Income": 0.04,
    "Land": 0.04,
    "Land/Boat Docks": 0.01,
    "Commercial Sale": 0.04,
    "Business Opportunity": 0.03,
    "Residential Lease": 0.30,
    "Commercial Lease": 0.04,
}

#: Listing statuses (search filter ``Status``); codes are the positions.
STATUSES: tuple[str, ...] = ("Active", "Active Under Contract", "Pending", "Closed")

#: Subtypes the spec lets ``Subtypes`` filter on, per property type (spec order).
FILTERABLE_SUBTYPES: dict[str, tuple[str, ...]] = {
    "Residential": (
        "Single Family Residence",
        "Condominium",
        "Townhouse",
        "Villa",
        "Condo - Hotel",
        "1/2 Duplex",
        "Mobile Home",
    ),
    "Residential Lease": (
        "Single Family Residence",
        "Condominium",
        "Townhouse",
        "Villa",
        "Apartment",
        "Efficiency",
    ),
}

#: Subtypes generated per property type, with their shares.
SUBTYPE_WEIGHTS: dict[str, dict[str, float]] = {
    "Residential": {
        "Single Family Residence": 0.40,
        "Condominium": 0.38,
        "Townhouse": 0.10,
        "Villa": 0.04,
        "Condo - Hotel": 0.02,
        "1/2 Duplex": 0.03,
        "Mobile Home": 0.03,
    },
    "Residential Lease": {
        "Single Family Residence": 0.24,
        "Condominium": 0.40,
        "Townhouse": 0.10,
        "Villa": 0.04,
        "Apartment": 0.19,
        "Efficiency": 0.03,
    },
    "Residential Income": {"Duplex": 0.5, "Triplex": 0.2, "Quadruplex": 0.2, "Multi Family": 0.1},
    "Land": {"Residential Lot": 0.6, "Commercial Land": 0.25, "Acreage": 0.15},
    "Land/Boat Docks": {"Boat Dock": 0.6, "Boat Slip": 0.4},
    "Commercial Sale": {
        "Office": 0.3,
        "Retail": 0.25,
        "Industrial": 0.15,
        "Warehouse": 0.15,
        "Mixed Use": 0.15,
    },
    "Business Opportunity": {
        "Restaurant": 0.35,
        "Retail": 0.25,
        "Service": 0.25,
        "Franchise": 0.15,
    },
    "Commercial Lease": {"Office": 0.4, "Retail": 0.35, "Industrial": 0.1, "Warehouse": 0.15},
}

#: Subtypes that are units in a building (unit numbers, HOA, possibly a named condo building).
UNIT_SUBTYPES: frozenset[str] = frozenset(
    {"Condominium", "Condo - Hotel", "Apartment", "Efficiency"}
)


@dataclass(frozen=True)
class Subdivision:
    """A neighbourhood or planned community of a city."""

    name: str
    price: float = 1.0  # price multiplier against the city level
    waterfront: float = 0.1  # share of waterfront homes
    gated: float = 0.1  # share of homes in a gated section
    golf: bool = False
    tennis: bool = False
    senior: bool = False  # 55+ community
    hoa: bool = False  # single-family homes pay an association fee


@dataclass(frozen=True)
class City:
    """A city of the synthetic market."""

    name: str
    county: str
    zips: tuple[str, ...]
    lat: float
    lng: float
    psf: float  # typical sale price per square foot of living area, USD
    weight: float  # share of the market's listings
    prefixes: tuple[str, ...]  # street direction prefixes in use ("" = none)
    streets: tuple[str, ...]  # named streets (numbered streets are added by the generator)
    subdivisions: tuple[Subdivision, ...]
    buildings: tuple[str, ...]  # condo buildings


S = Subdivision

CITIES: tuple[City, ...] = (
    City(
        "Miami",
        "Miami-Dade",
        ("33125", "33127", "33128", "33129", "33130", "33131", "33132", "33133", "33137", "33138"),
        25.7617,
        -80.1918,
        560.0,
        0.17,
        ("NW", "NE", "SW", "SE"),
        ("Biscayne Blvd", "Brickell Ave", "Flagler St", "Coral Way", "Bayshore Dr", "Main Hwy"),
        (
            S("Brickell", 1.25, 0.30, 0.0),
            S("Edgewater", 1.05, 0.25, 0.0),
            S("Coconut Grove", 1.45, 0.20, 0.15, tennis=True),
            S("Little Havana", 0.70, 0.02, 0.0),
            S("Upper East Side", 1.10, 0.15, 0.05),
            S("Shenandoah", 0.95, 0.0, 0.0),
            S("Wynwood", 0.95, 0.0, 0.0),
        ),
        (
            "Brickell Bay Tower",
            "One Biscayne Residences",
            "Bayfront Park Towers",
            "Edgewater Grand",
            "Grove Harbour Residences",
            "Icon Bayshore",
            "Metropolitan Miami",
            "Quantum Bay Residences",
        ),
    ),
    City(
        "Miami Beach",
        "Miami-Dade",
        ("33139", "33140", "33141"),
        25.7907,
        -80.1300,
        900.0,
        0.09,
        ("",),
        ("Collins Ave", "Ocean Dr", "Alton Rd", "Pine Tree Dr", "Indian Creek Dr", "West Ave"),
        (
            S("South Beach", 1.15, 0.35, 0.0),
            S("Mid Beach", 1.20, 0.45, 0.05),
            S("North Beach", 0.85, 0.30, 0.0),
            S("La Gorce", 1.80, 0.60, 0.30, golf=True, hoa=True),
            S("Sunset Islands", 2.20, 0.90, 0.80, hoa=True),
        ),
        (
            "Continuum Ocean Residences",
            "Setai Beach Residences",
            "Portofino Tower",
            "Mosaic on the Bay",
            "Flamingo South Beach",
            "Bentley Bay",
            "Decoplage",
        ),
    ),
    City(
        "Fort Lauderdale",
        "Broward",
        ("33301", "33304", "33305", "33306", "33308", "33311", "33312", "33315", "33316"),
        26.1224,
        -80.1373,
        480.0,
        0.11,
        ("NE", "NW", "SE", "SW"),
        (
            "Las Olas Blvd",
            "Federal Hwy",
            "Bayview Dr",
            "Galt Ocean Dr",
            "Sunrise Blvd",
            "Andrews Ave",
        ),
        (
            S("Las Olas Isles", 2.00, 0.95, 0.0, hoa=False),
            S("Victoria Park", 1.20, 0.25, 0.0),
            S("Coral Ridge", 1.40, 0.55, 0.05, golf=True),
            S("Rio Vista", 1.45, 0.45, 0.0),
            S("Harbor Beach", 2.10, 0.90, 0.70, hoa=True),
            S("Riverland", 0.75, 0.10, 0.0),
            S("Galt Ocean Mile", 1.05, 0.40, 0.0),
        ),
        (
            "Las Olas River Residences",
            "Galt Ocean Club",
            "Harbourage Place",
            "Sunrise Harbor Tower",
            "New River Lofts",
            "Coral Ridge Towers",
        ),
    ),
    City(
        "Hollywood",
        "Broward",
        ("33019", "33020", "33021", "33024"),
        26.0112,
        -80.1495,
        380.0,
        0.07,
        ("N", "S", ""),
        ("Hollywood Blvd", "Ocean Dr", "Sheridan St", "Johnson St", "Harrison St"),
        (
            S("Hollywood Lakes", 1.30, 0.30, 0.0),
            S("Emerald Hills", 1.25, 0.10, 0.40, golf=True, tennis=True, hoa=True),
            S("Hollywood Hills", 0.95, 0.05, 0.0),
            S("Hollywood Beach", 1.10, 0.40, 0.0),
            S("Park East", 0.80, 0.05, 0.05),
        ),
        ("Oceanview Towers Hollywood", "Beach Club Hollywood", "Tides at Hollywood Beach"),
    ),
    City(
        "Boca Raton",
        "Palm Beach",
        ("33431", "33432", "33433", "33434", "33486", "33487", "33496", "33498"),
        26.3683,
        -80.1289,
        450.0,
        0.09,
        ("NW", "NE", "SW", "SE"),
        ("Palmetto Park Rd", "Glades Rd", "Ocean Blvd", "Federal Hwy", "Camino Real", "Yamato Rd"),
        (
            S("Boca West", 1.10, 0.05, 0.95, golf=True, tennis=True, hoa=True),
            S("Royal Palm Yacht and Country Club", 2.40, 0.85, 0.95, golf=True, hoa=True),
            S("Boca Pointe", 1.00, 0.05, 0.95, golf=True, tennis=True, hoa=True),
            S(
                "Century Village Boca",
                0.45,
                0.0,
                0.90,
                golf=True,
                tennis=True,
                senior=True,
                hoa=True,
            ),
            S("Mizner Park", 1.30, 0.0, 0.10),
            S("Boca Square", 1.05, 0.0, 0.0),
            S("Timbercreek", 0.90, 0.10, 0.85, tennis=True, hoa=True),
        ),
        ("Mizner Grand", "Palmetto Park Towers", "Boca Beach Residences", "Camino Real Club"),
    ),
    City(
        "Coral Gables",
        "Miami-Dade",
        ("33134", "33143", "33146"),
        25.7215,
        -80.2684,
        720.0,
        0.05,
        ("", "SW"),
        (
            "Alhambra Cir",
            "Granada Blvd",
            "Ponce de Leon Blvd",
            "Sunset Dr",
            "Anastasia Ave",
            "Segovia St",
        ),
        (
            S("Gables Estates", 2.60, 0.95, 0.90, hoa=True),
            S("Cocoplum", 2.10, 0.70, 0.90, hoa=True),
            S("Coral Gables Biltmore", 1.35, 0.0, 0.05, golf=True),
            S("Granada", 1.20, 0.0, 0.0, golf=True),
            S("Coral Gables Section", 1.00, 0.05, 0.0),
        ),
        ("Gables Village Residences", "Ponce Tower", "Merrick Park Residences"),
    ),
    City(
        "Aventura",
        "Miami-Dade",
        ("33180",),
        25.9565,
        -80.1392,
        520.0,
        0.06,
        ("NE",),
        ("Country Club Dr", "Yacht Club Dr", "Biscayne Blvd", "Island Blvd"),
        (
            S("Williams Island", 1.35, 0.70, 0.95, tennis=True, hoa=True),
            S("Turnberry Isle", 1.25, 0.40, 0.80, golf=True, tennis=True, hoa=True),
            S("Aventura Lakes", 0.90, 0.30, 0.20),
            S("Golden Glades Village", 0.75, 0.05, 0.0, senior=True, hoa=True),
        ),
        (
            "Aventura Marina Tower",
            "Turnberry Towers",
            "Williams Island Residences",
            "Yacht Club at Aventura",
            "Parc Central Aventura",
        ),
    ),
    City(
        "Hallandale Beach",
        "Broward",
        ("33009",),
        25.9812,
        -80.1484,
        450.0,
        0.05,
        ("NE", "SE", "S"),
        ("Ocean Dr", "Hallandale Beach Blvd", "Diplomat Pkwy", "Three Islands Blvd"),
        (
            S("Golden Isles", 1.50, 0.80, 0.30, hoa=True),
            S("Three Islands", 0.85, 0.40, 0.50, tennis=True, hoa=True),
            S("Hallandale Park", 0.70, 0.0, 0.0),
            S("Hemispheres", 0.80, 0.50, 0.20, senior=True, hoa=True),
        ),
        ("Beachwalk Residences", "Hemispheres Towers", "Duo Oceanfront", "Parker Plaza"),
    ),
    City(
        "Pompano Beach",
        "Broward",
        ("33060", "33062", "33064", "33069"),
        26.2379,
        -80.1248,
        360.0,
        0.07,
        ("NE", "NW", "SE", "SW", "N", "S"),
        ("Atlantic Blvd", "Ocean Blvd", "Federal Hwy", "Copans Rd", "Pompano Beach Blvd"),
        (
            S("Palm Aire", 0.75, 0.05, 0.60, golf=True, tennis=True, senior=True, hoa=True),
            S("Cypress Harbor", 1.25, 0.85, 0.0),
            S("Lighthouse Point Shores", 1.40, 0.80, 0.0),
            S("Pompano Beach Highlands", 0.65, 0.0, 0.0),
            S("Harbor Village", 1.10, 0.60, 0.0),
        ),
        ("Sabbia Beach", "Plaza at Oceanside", "Pompano Pier Residences"),
    ),
    City(
        "Delray Beach",
        "Palm Beach",
        ("33444", "33445", "33446", "33483", "33484"),
        26.4615,
        -80.0728,
        420.0,
        0.06,
        ("NW", "NE", "SW", "SE"),
        ("Atlantic Ave", "Ocean Blvd", "Swinton Ave", "Linton Blvd", "Lake Ida Rd"),
        (
            S("Kings Point", 0.45, 0.05, 0.90, golf=True, tennis=True, senior=True, hoa=True),
            S("Seagate", 2.00, 0.70, 0.05),
            S("Lake Ida", 1.05, 0.30, 0.0),
            S("Delray Dunes", 1.10, 0.05, 0.90, golf=True, hoa=True),
            S("Pineapple Grove", 1.20, 0.0, 0.0),
        ),
        ("Atlantic Plaza Delray", "Ocean Delray Residences", "Seagate Towers"),
    ),
    City(
        "West Palm Beach",
        "Palm Beach",
        ("33401", "33405", "33407", "33409", "33411", "33412", "33417"),
        26.7153,
        -80.0534,
        380.0,
        0.09,
        ("N", "S", ""),
        ("Flagler Dr", "Clematis St", "Okeechobee Blvd", "Dixie Hwy", "Olive Ave"),
        (
            S("El Cid", 1.80, 0.40, 0.0),
            S("Flamingo Park", 1.20, 0.0, 0.0),
            S("Century Village West Palm", 0.30, 0.0, 0.90, tennis=True, senior=True, hoa=True),
            S("Ibis Golf and Country Club", 1.05, 0.10, 0.95, golf=True, tennis=True, hoa=True),
            S("Northwood", 0.85, 0.15, 0.0),
            S("Villages of Palm Beach Lakes", 0.75, 0.20, 0.40, hoa=True),
        ),
        (
            "Flagler Waterview Tower",
            "Trump Plaza West Palm",
            "Clematis Residences",
            "Phillips Point",
        ),
    ),
    City(
        "Doral",
        "Miami-Dade",
        ("33122", "33166", "33172", "33178"),
        25.8195,
        -80.3553,
        400.0,
        0.05,
        ("NW",),
        ("Doral Blvd", "Park Blvd", "Doral Meadow Dr"),
        (
            S("Doral Park", 1.00, 0.20, 0.60, golf=True, tennis=True, hoa=True),
            S("Downtown Doral", 1.10, 0.0, 0.20, hoa=True),
            S("Doral Isles", 1.15, 0.50, 0.90, hoa=True),
            S("Costa del Sol", 1.05, 0.10, 0.80, golf=True, tennis=True, hoa=True),
        ),
        ("Downtown Doral Towers", "Doral Park Residences", "Midtown Doral"),
    ),
    City(
        "Sunny Isles Beach",
        "Miami-Dade",
        ("33160",),
        25.9429,
        -80.1234,
        780.0,
        0.04,
        ("", "NE"),
        ("Collins Ave", "Sunny Isles Blvd", "Atlantic Isle"),
        (
            S("Golden Shores", 1.60, 0.60, 0.20),
            S("Sunny Isles Oceanfront", 1.20, 0.80, 0.0),
            S("Poinciana Island", 1.30, 0.90, 0.95, tennis=True, hoa=True),
        ),
        (
            "Porsche Design Residences",
            "Jade Ocean",
            "Acqualina Residences",
            "Ocean Four",
            "Muse Residences",
        ),
    ),
    City(
        "Boynton Beach",
        "Palm Beach",
        ("33426", "33435", "33436", "33437"),
        26.5318,
        -80.0905,
        330.0,
        0.05,
        ("NW", "NE", "SW", "SE"),
        ("Boynton Beach Blvd", "Woolbright Rd", "Congress Ave", "Gateway Blvd"),
        (
            S("Valencia Lakes", 0.85, 0.20, 0.95, tennis=True, senior=True, hoa=True),
            S("Hunters Run", 0.95, 0.15, 0.95, golf=True, tennis=True, senior=True, hoa=True),
            S("Boynton Isles", 1.25, 0.80, 0.0),
            S("Leisureville", 0.55, 0.10, 0.0, golf=True, senior=True, hoa=True),
            S("Chapel Hill", 0.80, 0.0, 0.0),
        ),
        ("Marina Village Boynton", "Casa Costa"),
    ),
)

STATE = "FL"
ORIGINATING_SYSTEM_KEY = "rfsmls"
ORIGINATING_SYSTEM_NAME = "Realtyframes Sandbox MLS"

#: Words for generated brokerage names.
OFFICE_WORDS: tuple[str, ...] = (
    "Coastal",
    "Atlantic",
    "Bayside",
    "Palm",
    "Harbor",
    "Sunshine",
    "Oceanfront",
    "Keystone",
    "Biscayne",
    "Intracoastal",
    "Gulfstream",
    "Emerald",
    "Coral",
    "Mangrove",
    "Pelican",
    "Sandpiper",
    "Tropic",
    "Southern",
    "Lighthouse",
    "Seabreeze",
)
OFFICE_SUFFIXES: tuple[str, ...] = (
    "Realty",
    "Properties",
    "Real Estate",
    "Realty Group",
    "Homes",
    "International Realty",
    "Luxury Properties",
    "Brokers",
)

# --- vocabularies of the detail-only text fields --------------------------------------------------

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
