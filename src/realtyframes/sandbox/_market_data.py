"""Static tables behind the sandbox's synthetic South-Florida-like listings market.

Cities with their county, postal codes, centre coordinates, price level, streets, subdivisions and
condo buildings; property types and subtypes with their shares and generation parameters. Pure
data (the tables are data, hence the module's length): the generator in
:mod:`realtyframes.sandbox._generate` draws from it; the text vocabularies of the detail fields are
in :mod:`realtyframes.sandbox._listing_text`.
"""

from __future__ import annotations

from dataclasses import dataclass

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

# Generation parameters per subtype (data: tuned by hand, one row a subtype): area median / sigma /
# min / max (sqft; 0 = no living area), sqft per bedroom, min and max bedrooms (-1 = not
# applicable), price factor.
SUBTYPE_PARAMS: dict[str, tuple[float, float, float, float, float, int, int, float]] = {
    "Single Family Residence": (2300, 0.35, 900, 12000, 650, 2, 7, 1.00),
    "Condominium": (1150, 0.40, 400, 6000, 600, 0, 5, 0.92),
    "Townhouse": (1600, 0.25, 900, 3500, 600, 2, 4, 0.78),
    "Villa": (1400, 0.25, 800, 3000, 620, 2, 3, 0.72),
    "Condo - Hotel": (550, 0.30, 300, 1500, 700, 0, 1, 1.05),
    "1/2 Duplex": (1300, 0.25, 700, 2500, 600, 2, 3, 0.68),
    "Mobile Home": (1000, 0.20, 500, 1800, 450, 2, 3, 0.30),
    "Apartment": (950, 0.30, 450, 2200, 550, 0, 3, 0.85),
    "Efficiency": (420, 0.15, 250, 600, 10**6, 0, 0, 0.80),
    "Duplex": (2200, 0.25, 1200, 4000, 550, 4, 6, 0.62),
    "Triplex": (3300, 0.25, 1800, 5500, 550, 5, 9, 0.58),
    "Quadruplex": (4200, 0.25, 2400, 7000, 550, 6, 12, 0.55),
    "Multi Family": (7000, 0.40, 3500, 30000, 600, 8, 40, 0.50),
    "Residential Lot": (0, 0, 0, 0, 0, -1, -1, 1.0),
    "Commercial Land": (0, 0, 0, 0, 0, -1, -1, 1.5),
    "Acreage": (0, 0, 0, 0, 0, -1, -1, 0.4),
    "Boat Dock": (0, 0, 0, 0, 0, -1, -1, 1.0),
    "Boat Slip": (0, 0, 0, 0, 0, -1, -1, 0.7),
    "Office": (3500, 0.80, 800, 60000, 0, -1, -1, 0.75),
    "Retail": (3000, 0.70, 600, 40000, 0, -1, -1, 0.80),
    "Industrial": (12000, 0.70, 2000, 120000, 0, -1, -1, 0.35),
    "Warehouse": (15000, 0.70, 2000, 150000, 0, -1, -1, 0.30),
    "Mixed Use": (6000, 0.60, 1500, 50000, 0, -1, -1, 0.70),
    "Restaurant": (2500, 0.40, 800, 9000, 0, -1, -1, 1.0),
    "Service": (1500, 0.40, 500, 6000, 0, -1, -1, 1.0),
    "Franchise": (2000, 0.40, 600, 6000, 0, -1, -1, 1.0),
}
#: Median days from entry to a first contract, per property type.
CONTRACT_DAYS: dict[str, float] = {
    "Residential": 50,
    "Residential Income": 75,
    "Land": 110,
    "Land/Boat Docks": 80,
    "Commercial Sale": 130,
    "Business Opportunity": 140,
    "Residential Lease": 24,
    "Commercial Lease": 85,
}
#: Subtypes that are houses (lots, garages, possibly pools and docks).
HOUSE_SUBTYPES: frozenset[str] = frozenset(
    {"Single Family Residence", "Townhouse", "Villa", "1/2 Duplex"}
)
#: Cities whose leases are more often seasonal.
BEACH_CITIES: frozenset[str] = frozenset(
    {"Miami Beach", "Sunny Isles Beach", "Hallandale Beach", "Fort Lauderdale", "Delray Beach"}
)

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
