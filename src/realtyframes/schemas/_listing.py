"""Listing and listing-media models, the spec's listing enumerations and shared field helpers.

Column names are the spec's field names. ``coordinates`` arrives flattened to ``Latitude`` and
``Longitude``; ``Media`` is its own long frame (:class:`ListingMedia`). The summary fields (what a
search returns) are required columns; the detail-only fields are optional (``required=False``).

>>> Listing.to_schema().columns["StandardStatus"].metadata["categories"]
('Active', 'Active Under Contract', 'Pending', 'Closed')
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypeAlias

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from realtyframes._spec import PROPERTY_TYPES, STANDARD_STATUSES

__all__ = [
    "DETAIL_FIELDS",
    "PROPERTY_TYPES",
    "STANDARD_STATUSES",
    "SUMMARY_FIELDS",
    "Listing",
    "ListingMedia",
]


# --- shared field helpers (also used by the changes, contacts and analytics models) -------------
Price = partial(pa.Field, ge=0, nullable=True)
Area = partial(pa.Field, ge=0, nullable=True)
Count = partial(pa.Field, ge=0, nullable=True)
Text = partial(pa.Field, nullable=True)
Flag = partial(pa.Field, nullable=True)
Stamp = partial(pa.Field, nullable=True, dtype_kwargs={"unit": "us", "tz": "UTC"})
Detail = partial(pa.Field, nullable=True, required=False)
DetailCount = partial(pa.Field, ge=0, nullable=True, required=False)
#: Timestamp columns: tz-aware UTC, microseconds.
UtcStamp: TypeAlias = pd.DatetimeTZDtype
#: Free text: pandas 3's default string dtype (``str``, pyarrow-backed, NaN as missing).
Str: TypeAlias = pd.StringDtype


def Enum(values: Sequence[str], *, nullable: bool = True, **kwargs: Any) -> Any:
    """A closed enumeration: a categorical column with the full fixed category list.

    The categories travel in the field's metadata so shaping, validation and the cache all give the
    same ``CategoricalDtype`` (frames concatenate and round-trip through Parquet).
    """
    cats = tuple(values)
    return pa.Field(isin=list(cats), nullable=nullable, metadata={"categories": cats}, **kwargs)


def _year_bounds() -> tuple[int, int]:
    """1800 .. next year, computed when a check runs (never at import)."""
    return 1800, datetime.now(UTC).year + 1


def _in_years(series: pd.Series) -> pd.Series:
    low, high = _year_bounds()
    return series.isna() | ((series >= low) & (series <= high))


class Listing(pa.DataFrameModel):
    """One listing per row; summary fields always present, detail fields when fetched.

    Checks: prices, areas, fees and counts >= 0; BedroomsTotal and BathroomsTotalInteger 0-50;
    YearBuilt (and TaxYear) from 1800 to next year; Latitude -90..90, Longitude -180..180;
    PostalCode ``12345`` or ``12345-6789``; StandardStatus and PropertyType from the spec;
    ListingId unique and non-null; ClosePrice and CloseDate only on Closed listings.

    >>> import realtyframes.schemas as rs
    >>> valid, quarantined = rs.validate(frame, rs.Listing)  # doctest: +SKIP
    """

    ListingId: Series[Str] = pa.Field(nullable=False, unique=True, str_length={"min_value": 1})
    ListPrice: Series[float] = Price()
    PreviousListPrice: Series[float] = Price()
    ClosePrice: Series[float] = Price()
    StandardStatus: Series[pd.CategoricalDtype] = Enum(STANDARD_STATUSES)
    PropertyType: Series[pd.CategoricalDtype] = Enum(PROPERTY_TYPES)
    PropertySubType: Series[Str] = Text()
    UnparsedAddress: Series[Str] = Text()
    StreetNumber: Series[Str] = Text()
    StreetDirPrefix: Series[Str] = Text()
    StreetName: Series[Str] = Text()
    UnitNumber: Series[Str] = Text()
    City: Series[Str] = Text()
    StateOrProvince: Series[Str] = Text(str_matches=r"^[A-Z]{2}$")
    PostalCode: Series[Str] = Text(str_matches=r"^\d{5}(?:-\d{4})?$")
    CountyOrParish: Series[Str] = Text()
    SubdivisionName: Series[Str] = Text()
    BuildingName: Series[Str] = Text()
    BedroomsTotal: Series[pd.Int64Dtype] = Count(le=50)
    BathroomsTotalInteger: Series[pd.Int64Dtype] = Count(le=50)
    LivingArea: Series[float] = Area()
    LotSizeSquareFeet: Series[float] = Area()
    YearBuilt: Series[pd.Int64Dtype] = pa.Field(nullable=True)
    DaysOnMarket: Series[pd.Int64Dtype] = Count()
    AssociationFee: Series[float] = Price()
    Latitude: Series[float] = pa.Field(nullable=True, in_range={"min_value": -90, "max_value": 90})
    Longitude: Series[float] = pa.Field(
        nullable=True, in_range={"min_value": -180, "max_value": 180}
    )
    OriginalEntryTimestamp: Series[UtcStamp] = Stamp()
    ModificationTimestamp: Series[UtcStamp] = Stamp()
    MajorChangeTimestamp: Series[UtcStamp] = Stamp()
    CloseDate: Series[UtcStamp] = Stamp()
    WaterfrontYN: Series[pd.BooleanDtype] = Flag()
    PoolPrivateYN: Series[pd.BooleanDtype] = Flag()
    SeniorCommunityYN: Series[pd.BooleanDtype] = Flag()
    ListAgentMlsId: Series[Str] = Text()
    ListOfficeMlsId: Series[Str] = Text()
    ListOfficeName: Series[Str] = Text()
    # --- detail only -------------------------------------------------------------------------
    YearBuiltDetails: Series[Str] = Detail()
    TaxAnnualAmount: Series[float] = Detail(ge=0)
    TaxYear: Series[pd.Int64Dtype] = Detail()
    GarageSpaces: Series[pd.Int64Dtype] = DetailCount()
    CoveredSpaces: Series[pd.Int64Dtype] = DetailCount()
    Stories: Series[pd.Int64Dtype] = DetailCount()
    WaterfrontFeatures: Series[object] = Detail()
    PoolFeatures: Series[object] = Detail()
    PublicRemarks: Series[Str] = Detail()
    ListingTerms: Series[Str] = Detail()
    Furnished: Series[Str] = Detail()
    View: Series[Str] = Detail()
    PetsAllowed: Series[Str] = Detail()
    ParkingFeatures: Series[Str] = Detail()
    ConstructionMaterials: Series[Str] = Detail()
    ArchitecturalStyle: Series[Str] = Detail()
    Roof: Series[Str] = Detail()
    Cooling: Series[Str] = Detail()
    Heating: Series[Str] = Detail()
    Flooring: Series[Str] = Detail()
    Appliances: Series[Str] = Detail()
    InteriorFeatures: Series[Str] = Detail()
    ExteriorFeatures: Series[Str] = Detail()
    CommunityFeatures: Series[Str] = Detail()
    LaundryFeatures: Series[Str] = Detail()
    WindowFeatures: Series[Str] = Detail()
    Sewer: Series[Str] = Detail()
    WaterSource: Series[Str] = Detail()
    LeaseTerm: Series[Str] = Detail()
    LeaseAmountFrequency: Series[Str] = Detail()
    SpecialListingConditions: Series[Str] = Detail()
    VirtualTourURLUnbranded: Series[Str] = Detail()
    DirectionFaces: Series[Str] = Detail()
    LotFeatures: Series[Str] = Detail()
    Levels: Series[Str] = Detail()
    OriginatingSystemKey: Series[Str] = Detail()
    OriginatingSystemName: Series[Str] = Detail()

    class Config:
        strict = False  # fields the server adds are kept
        coerce = False  # a type change is reported, never coerced silently

    @pa.check("YearBuilt", "TaxYear", name="year_from_1800_to_next_year")
    def _year_range(cls, series: pd.Series) -> pd.Series:
        return _in_years(series)

    @pa.dataframe_check(name="close_price_only_on_closed")
    def _close_price_only_on_closed(cls, df: pd.DataFrame) -> pd.Series:
        return df["ClosePrice"].isna() | (df["StandardStatus"] == "Closed")

    @pa.dataframe_check(name="close_date_only_on_closed")
    def _close_date_only_on_closed(cls, df: pd.DataFrame) -> pd.Series:
        return df["CloseDate"].isna() | (df["StandardStatus"] == "Closed")


class ListingMedia(pa.DataFrameModel):
    """A listing's photos, long: one row per (ListingId, Order).

    >>> media.groupby("ListingId").size()  # doctest: +SKIP
    """

    ListingId: Series[Str] = pa.Field(nullable=False)
    Order: Series[pd.Int64Dtype] = Count()
    MediaURL: Series[Str] = Text()
    ShortDescription: Series[Str] = Text()

    class Config:
        strict = False
        coerce = False
        unique = ("ListingId", "Order")


def _field_names(model: type[pa.DataFrameModel], *, required: bool) -> tuple[str, ...]:
    cols = model.to_schema().columns
    return tuple(name for name, col in cols.items() if col.required == required)


#: Columns of a search result (``coordinates`` as Latitude/Longitude).
SUMMARY_FIELDS: tuple[str, ...] = _field_names(Listing, required=True)
#: Columns only a listing detail carries.
DETAIL_FIELDS: tuple[str, ...] = _field_names(Listing, required=False)
