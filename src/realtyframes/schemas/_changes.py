"""The change-feed model (``GET /v1/listings/changes``): one row per reported change.

A ``price_change`` carries ``PreviousListPrice`` and ``ListPrice``; a ``status_change`` carries
``PreviousStatus`` and ``StandardStatus`` (design.md). The new values are the listing's values after
the change.

>>> ListingChange.to_schema().columns["ChangeType"].metadata["categories"]
('price_change', 'status_change')
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from realtyframes.schemas._listing import STANDARD_STATUSES, Enum, Price, Stamp, Str, UtcStamp

__all__ = ["CHANGE_TYPES", "ListingChange"]

#: ``ChangeType`` values (the change feed's filter of the same name).
CHANGE_TYPES: tuple[str, ...] = ("price_change", "status_change")


class ListingChange(pa.DataFrameModel):
    """One change of one listing.

    Checks: ListingId, ChangeType and ChangeTimestamp present; prices >= 0; statuses from the spec;
    a price change carries its new ListPrice, a status change its new StandardStatus.

    >>> valid, quarantined = validate(changes, ListingChange)  # doctest: +SKIP
    """

    ListingId: Series[Str] = pa.Field(nullable=False, str_length={"min_value": 1})
    ChangeType: Series[pd.CategoricalDtype] = Enum(CHANGE_TYPES, nullable=False)
    ChangeTimestamp: Series[UtcStamp] = Stamp(nullable=False)
    PreviousListPrice: Series[float] = Price()
    ListPrice: Series[float] = Price()
    PreviousStatus: Series[pd.CategoricalDtype] = Enum(STANDARD_STATUSES)
    StandardStatus: Series[pd.CategoricalDtype] = Enum(STANDARD_STATUSES)

    class Config:
        strict = False
        coerce = False

    @pa.dataframe_check(name="price_change_has_new_price")
    def _price_change_has_price(cls, df: pd.DataFrame) -> pd.Series:
        return (df["ChangeType"] != "price_change") | df["ListPrice"].notna()

    @pa.dataframe_check(name="status_change_has_new_status")
    def _status_change_has_status(cls, df: pd.DataFrame) -> pd.Series:
        return (df["ChangeType"] != "status_change") | df["StandardStatus"].notna()
