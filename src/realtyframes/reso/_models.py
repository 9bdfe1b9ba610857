"""Pandera models of the RESO resources the platform has no frame for: Member, Office,
OpenHouse, Media (Data Dictionary 2.0 names), and the shaping of their records into typed frames.

>>> frame = shape_records("Office", [{"OfficeKey": "O1", "OfficeName": "Bay Realty"}])
>>> list(frame.columns)[:3], str(frame["OfficeKey"].dtype)
(['OfficeKey', 'OfficeMlsId', 'OfficeName'], 'str')
"""

from __future__ import annotations

from typing import Any, TypeAlias

import pandas as pd
import pandera.pandas as pa
from pandera.typing import Series

from realtyframes.reso._fields import MEDIA_FIELDS, MEMBER_FIELDS, OFFICE_FIELDS, OPEN_HOUSE_FIELDS

__all__ = ["MODELS", "RESOURCES", "Media", "Member", "Office", "OpenHouse", "shape_records"]

_Str: TypeAlias = pd.StringDtype
_Stamp: TypeAlias = pd.DatetimeTZDtype
_STAMP = {"unit": "us", "tz": "UTC"}


def _text() -> Any:
    return pa.Field(nullable=True)


def _key() -> Any:
    return pa.Field(nullable=False, unique=True, str_length={"min_value": 1})


def _stamp() -> Any:
    return pa.Field(nullable=True, dtype_kwargs=_STAMP)


class Member(pa.DataFrameModel):
    """One member (agent) per row, by MemberKey."""

    MemberKey: Series[_Str] = _key()
    MemberMlsId: Series[_Str] = _text()
    MemberFirstName: Series[_Str] = _text()
    MemberLastName: Series[_Str] = _text()
    MemberFullName: Series[_Str] = _text()
    MemberEmail: Series[_Str] = _text()
    MemberStatus: Series[_Str] = _text()
    OfficeKey: Series[_Str] = _text()
    OfficeMlsId: Series[_Str] = _text()
    OfficeName: Series[_Str] = _text()
    ModificationTimestamp: Series[_Stamp] = _stamp()
    OriginatingSystemName: Series[_Str] = _text()


class Office(pa.DataFrameModel):
    """One office per row, by OfficeKey."""

    OfficeKey: Series[_Str] = _key()
    OfficeMlsId: Series[_Str] = _text()
    OfficeName: Series[_Str] = _text()
    OfficeStatus: Series[_Str] = _text()
    OfficeStateOrProvince: Series[_Str] = _text()
    ModificationTimestamp: Series[_Stamp] = _stamp()
    OriginatingSystemName: Series[_Str] = _text()


class OpenHouse(pa.DataFrameModel):
    """One open house per row, by OpenHouseKey; start before end."""

    OpenHouseKey: Series[_Str] = _key()
    ListingKey: Series[_Str] = pa.Field(nullable=False)
    ListingId: Series[_Str] = _text()
    OpenHouseDate: Series[_Stamp] = _stamp()
    OpenHouseStartTime: Series[_Stamp] = _stamp()
    OpenHouseEndTime: Series[_Stamp] = _stamp()
    OpenHouseType: Series[_Str] = _text()
    OpenHouseStatus: Series[_Str] = _text()
    ShowingAgentKey: Series[_Str] = _text()
    ModificationTimestamp: Series[_Stamp] = _stamp()
    OriginatingSystemName: Series[_Str] = _text()

    @pa.dataframe_check(name="starts_before_it_ends")
    def _starts_before_it_ends(cls, df: pd.DataFrame) -> pd.Series:
        start, end = df["OpenHouseStartTime"], df["OpenHouseEndTime"]
        return start.isna() | end.isna() | (start <= end)


class Media(pa.DataFrameModel):
    """One media item per row, by MediaKey; Order >= 0."""

    MediaKey: Series[_Str] = _key()
    ResourceRecordKey: Series[_Str] = pa.Field(nullable=False)
    ResourceRecordID: Series[_Str] = _text()
    ResourceName: Series[_Str] = _text()
    MediaCategory: Series[_Str] = _text()
    MediaURL: Series[_Str] = _text()
    Order: Series[pd.Int64Dtype] = pa.Field(nullable=True, ge=0)
    ShortDescription: Series[_Str] = _text()
    ModificationTimestamp: Series[_Stamp] = _stamp()
    OriginatingSystemName: Series[_Str] = _text()


#: Resource -> (model, fields, key field, the client's method and cache folder).
RESOURCES: dict[str, tuple[Any, tuple[str, ...], str, str]] = {
    "Member": (Member, MEMBER_FIELDS, "MemberKey", "members"),
    "Office": (Office, OFFICE_FIELDS, "OfficeKey", "offices"),
    "OpenHouse": (OpenHouse, OPEN_HOUSE_FIELDS, "OpenHouseKey", "open_houses"),
    "Media": (Media, MEDIA_FIELDS, "MediaKey", "media"),
}
MODELS: dict[str, Any] = {name: row[0] for name, row in RESOURCES.items()}


def shape_records(resource: str, records: list[dict[str, Any]]) -> pd.DataFrame:
    """Records of ``resource`` -> a typed frame (the model's columns and dtypes; local fields
    the server adds are kept after them, as text)."""
    model, fields, key, _ = RESOURCES[resource]
    extra = sorted({k for r in records for k in r} - set(fields) - {"@odata.etag"})
    frame = pd.DataFrame.from_records(records, columns=[*fields, *extra])
    schema = model.to_schema()
    out: dict[str, pd.Series] = {}
    for name in frame.columns:
        column = frame[name]
        spec = schema.columns.get(name)
        dtype = str(spec.dtype) if spec is not None else "str"
        if dtype.startswith("datetime64"):
            out[name] = pd.to_datetime(column, utc=True, format="ISO8601").astype(
                "datetime64[us, UTC]"
            )
        elif dtype == "Int64":
            out[name] = pd.to_numeric(column).astype("Int64")
        else:
            out[name] = column.astype("str").where(column.notna())
    shaped = pd.DataFrame(out, index=frame.index)
    return shaped.drop_duplicates(key, keep="last").reset_index(drop=True)
