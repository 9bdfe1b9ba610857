"""A RESO Web API source (OData v4, Data Dictionary 2.0): the same validated frames as the
platform source, read from any MLS's RESO server (MLS Grid, Trestle, Bridge, Spark, generic).

Below the Client and above the loaders: its searches are loader endpoints run by the loaders'
own machinery (cache, checkpoints, validation). Users meet it as ``rf.Client.reso(...)``;
``docs/reso.md`` (client section) says how it pages, filters and maps the fields.

>>> import realtyframes as rf
>>> client = rf.Client.reso("https://api.mlsgrid.com/v2", token="...", vendor="mlsgrid",
...                         originating_system="mfrmls")  # doctest: +SKIP
>>> client.listings(City="Tampa", MinListPrice=400_000)  # doctest: +SKIP
"""

from realtyframes.reso._budgets import BudgetExhaustedError, Budgets
from realtyframes.reso._config import RESO_KEYS, RESO_TABLE, read_reso_table, reso_arguments
from realtyframes.reso._fields import DD_VERSION, FILTERS, LOOKUP_FIELDS, PROPERTY_FIELDS
from realtyframes.reso._metadata import (
    Lookups,
    ServerMetadata,
    parse_metadata,
    read_metadata,
    server_lookups,
)
from realtyframes.reso._plan import plan_reso_listings, plan_reso_sync
from realtyframes.reso._profiles import (
    PROFILES,
    PROFILES_VERSION,
    VENDORS,
    Budget,
    VendorProfile,
    budgets_of,
    vendor_profile,
)
from realtyframes.reso._query import property_filter
from realtyframes.reso._settings import ResoSettings, client_credentials_token, reso_settings
from realtyframes.reso._source import ResoSource, listing_objects, with_source
from realtyframes.reso._sync import (
    HISTORY_SOURCE,
    ResoSync,
    reso_history,
    reso_sync,
    reso_sync_state,
)

__all__ = [
    "DD_VERSION",
    "FILTERS",
    "HISTORY_SOURCE",
    "LOOKUP_FIELDS",
    "PROFILES",
    "PROFILES_VERSION",
    "PROPERTY_FIELDS",
    "RESO_KEYS",
    "RESO_TABLE",
    "VENDORS",
    "Budget",
    "BudgetExhaustedError",
    "Budgets",
    "Lookups",
    "ResoSettings",
    "ResoSource",
    "ResoSync",
    "ServerMetadata",
    "VendorProfile",
    "budgets_of",
    "client_credentials_token",
    "listing_objects",
    "parse_metadata",
    "plan_reso_listings",
    "plan_reso_sync",
    "property_filter",
    "read_metadata",
    "read_reso_table",
    "reso_arguments",
    "reso_history",
    "reso_settings",
    "reso_sync",
    "reso_sync_state",
    "server_lookups",
    "vendor_profile",
    "with_source",
]
