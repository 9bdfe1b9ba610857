"""The OData face's resources and fields: RESO Data Dictionary 2.0 names, their EDM types and
where each comes from in the sandbox's market (the REST API's field, or how it is derived).

Field names are facts of the RESO Data Dictionary 2.0 (written here by hand from the published
names, not copied from RESO's files). One table serves ``$metadata``, the ``$filter``/``$select``
checks and ``docs/reso.md``.

>>> PROPERTY.key, RESOURCES["Media"].key
('ListingKey', 'MediaKey')
>>> RESOURCES["Property"].types["ListPrice"]
'Edm.Decimal'
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "DD_VERSION",
    "HISTORY",
    "MLG_CAN_VIEW",
    "NAMESPACE",
    "PROPERTY",
    "RESOURCES",
    "ResoField",
    "Resource",
]

#: The Data Dictionary version the names follow.
DD_VERSION = "2.0"
#: The schema namespace of ``$metadata`` (RESO's own).
NAMESPACE = "org.reso.metadata"
#: MLS Grid's local field: False marks a record the replica must delete.
MLG_CAN_VIEW = "MlgCanView"


@dataclass(frozen=True)
class ResoField:
    """One field: its DD name, EDM type and source in the sandbox (a REST field or a rule);
    ``lookup_name``: the Lookup resource's name of its values (a string lookup's annotation)."""

    name: str
    edm: str
    source: str
    lookup_name: str | None = None


@dataclass(frozen=True)
class Resource:
    """One entity set: its name, key and fields in ``$metadata`` order."""

    name: str
    key: str
    fields: tuple[ResoField, ...]
    types: dict[str, str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", {f.name: f.edm for f in self.fields})

    def with_field(self, extra: ResoField) -> Resource:
        """This resource with one more field (a vendor's local field)."""
        return Resource(self.name, self.key, (*self.fields, extra))

    def with_fields(self, changed: dict[str, ResoField]) -> Resource:
        """This resource with the fields named in ``changed`` replaced (same order)."""
        return Resource(self.name, self.key, tuple(changed.get(f.name, f) for f in self.fields))


S, D, INT, B = "Edm.String", "Edm.Decimal", "Edm.Int32", "Edm.Boolean"
T, DATE = "Edm.DateTimeOffset", "Edm.Date"
_SAME = "same name in the REST search"


def _same(*names_types: tuple[str, str]) -> tuple[ResoField, ...]:
    return tuple(ResoField(n, t, _SAME) for n, t in names_types)


PROPERTY = Resource(
    "Property",
    "ListingKey",
    (
        ResoField("ListingKey", S, "ListingId (the sandbox's listing number is its key)"),
        *_same(("ListingId", S), ("StandardStatus", S), ("ListPrice", D)),
        ResoField("OriginalListPrice", D, "the first price of the listing's price history"),
        *_same(("PreviousListPrice", D)),
        ResoField("ClosePrice", D, "ClosePrice (Closed listings only)"),
        ResoField("CloseDate", DATE, "CloseDate (Closed listings only)"),
        *_same(
            ("PropertyType", S),
            ("PropertySubType", S),
            ("UnparsedAddress", S),
            ("StreetNumber", S),
            ("StreetDirPrefix", S),
            ("StreetName", S),
            ("UnitNumber", S),
            ("City", S),
            ("StateOrProvince", S),
            ("PostalCode", S),
            ("CountyOrParish", S),
            ("SubdivisionName", S),
            ("BuildingName", S),
            ("BedroomsTotal", INT),
            ("BathroomsTotalInteger", INT),
            ("LivingArea", D),
            ("LotSizeSquareFeet", D),
            ("YearBuilt", INT),
            ("DaysOnMarket", INT),
            ("AssociationFee", D),
            ("WaterfrontYN", B),
            ("PoolPrivateYN", B),
            ("SeniorCommunityYN", B),
        ),
        ResoField("Latitude", D, "coordinates.lat"),
        ResoField("Longitude", D, "coordinates.lng"),
        *_same(("OriginalEntryTimestamp", T), ("ModificationTimestamp", T)),
        *_same(("MajorChangeTimestamp", T)),
        ResoField("OnMarketDate", DATE, "the date of OriginalEntryTimestamp"),
        ResoField(
            "PhotosChangeTimestamp", T, "OriginalEntryTimestamp (photos come with the listing)"
        ),
        ResoField("ListAgentKey", S, "ListAgentMlsId"),
        *_same(("ListAgentMlsId", S)),
        ResoField("ListOfficeKey", S, "ListOfficeMlsId"),
        *_same(("ListOfficeMlsId", S), ("ListOfficeName", S)),
        ResoField("BuyerAgentKey", S, "derived from the seed (Closed listings only)"),
        ResoField("BuyerAgentMlsId", S, "BuyerAgentKey"),
        ResoField("BuyerOfficeKey", S, "the buyer agent's office"),
        ResoField("BuyerOfficeMlsId", S, "BuyerOfficeKey"),
        ResoField("BuyerOfficeName", S, "the buyer agent's office"),
        ResoField("OriginatingSystemName", S, "the sandbox's MLS name (SandboxOptions)"),
    ),
)

_SYSTEM = ResoField("OriginatingSystemName", S, "the sandbox's MLS name")
_TABLES_TS = "the first listing's entry time (the roster predates the history)"

MEMBER = Resource(
    "Member",
    "MemberKey",
    (
        ResoField("MemberKey", S, "the agent's MLS id (ListAgentMlsId, BuyerAgentMlsId)"),
        ResoField("MemberMlsId", S, "the agent's MLS id"),
        ResoField("MemberFirstName", S, "derived from the seed"),
        ResoField("MemberLastName", S, "derived from the seed"),
        ResoField("MemberFullName", S, "first and last name"),
        ResoField("MemberEmail", S, "derived from the name (example.com)"),
        ResoField("MemberStatus", S, "'Active'"),
        ResoField("OfficeKey", S, "the agent's office (ListOfficeMlsId)"),
        ResoField("OfficeMlsId", S, "the agent's office"),
        ResoField("OfficeName", S, "the agent's office (ListOfficeName)"),
        ResoField("ModificationTimestamp", T, _TABLES_TS),
        _SYSTEM,
    ),
)
OFFICE = Resource(
    "Office",
    "OfficeKey",
    (
        ResoField("OfficeKey", S, "ListOfficeMlsId"),
        ResoField("OfficeMlsId", S, "ListOfficeMlsId"),
        ResoField("OfficeName", S, "ListOfficeName"),
        ResoField("OfficeStatus", S, "'Active'"),
        ResoField("OfficeStateOrProvince", S, "the market's state"),
        ResoField("ModificationTimestamp", T, _TABLES_TS),
        _SYSTEM,
    ),
)
OPEN_HOUSE = Resource(
    "OpenHouse",
    "OpenHouseKey",
    (
        ResoField("OpenHouseKey", S, "ListingKey and the open house's number"),
        ResoField("ListingKey", S, "the listing's key"),
        ResoField("ListingId", S, "the listing's number"),
        ResoField("OpenHouseDate", DATE, "the Sundays after entry, derived from the seed"),
        ResoField("OpenHouseStartTime", T, "13:00 on OpenHouseDate (UTC)"),
        ResoField("OpenHouseEndTime", T, "16:00 on OpenHouseDate (UTC)"),
        ResoField("OpenHouseType", S, "'Public'"),
        ResoField("OpenHouseStatus", S, "'Active'"),
        ResoField("ShowingAgentKey", S, "the listing agent"),
        ResoField("ModificationTimestamp", T, "the listing's OriginalEntryTimestamp"),
        _SYSTEM,
    ),
)
MEDIA = Resource(
    "Media",
    "MediaKey",
    (
        ResoField("MediaKey", S, "ListingKey and Media Order"),
        ResoField("ResourceRecordKey", S, "the listing's key"),
        ResoField("ResourceRecordID", S, "the listing's number"),
        ResoField("ResourceName", S, "'Property'"),
        ResoField("MediaCategory", S, "'Photo'"),
        ResoField("MediaURL", S, "Media[].MediaURL of the REST detail"),
        ResoField("Order", INT, "Media[].Order of the REST detail"),
        ResoField("ShortDescription", S, "Media[].ShortDescription of the REST detail"),
        ResoField("ModificationTimestamp", T, "the listing's OriginalEntryTimestamp"),
        _SYSTEM,
    ),
)
_CHANGE = "the change feed's record (GET /v1/listings/changes)"
HISTORY = Resource(
    "HistoryTransactional",
    "HistoryTransactionalKey",
    (
        ResoField("HistoryTransactionalKey", S, "ListingKey, the field and the change's number"),
        ResoField("ResourceName", S, "'Property'"),
        ResoField("ResourceRecordKey", S, "the listing's key"),
        ResoField("ResourceRecordID", S, "the listing's number"),
        ResoField("FieldName", S, "'ListPrice' (price_change) or 'StandardStatus' (status_change)"),
        ResoField("PreviousValue", S, "PreviousListPrice or PreviousStatus of " + _CHANGE),
        ResoField("NewValue", S, "ListPrice or StandardStatus of " + _CHANGE),
        ResoField(
            "ChangeType", S, "'Price Change'; for a status, the new status ('Back On Market')"
        ),
        ResoField("ModificationTimestamp", T, "ChangeTimestamp of " + _CHANGE),
        _SYSTEM,
    ),
)
#: Every entity set of the face, by name.
RESOURCES: dict[str, Resource] = {
    r.name: r for r in (PROPERTY, MEMBER, OFFICE, OPEN_HOUSE, MEDIA, HISTORY)
}
