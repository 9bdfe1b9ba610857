"""The client's RESO Data Dictionary map: the platform's listing fields from DD 2.0 Property
fields, and the filters of the platform's search as ``$filter`` terms.

Written by hand from the Data Dictionary 2.0's published field names (facts; no RESO file is
copied), independently of the sandbox's table: ``tests/reso/test_reso_fields.py`` compares the
two, so a misreading on either side shows.

>>> PROPERTY_FIELDS["ListingId"], PROPERTY_FIELDS["Latitude"]
('ListingId', 'Latitude')
>>> FILTERS["MinListPrice"]
('ListPrice', 'ge')
"""

from __future__ import annotations

from realtyframes._spec import FEATURE_FLAGS, PROPERTY_TYPES, STANDARD_STATUSES

__all__ = [
    "DD_VERSION",
    "EXTRA_PROPERTY_FIELDS",
    "FILTERS",
    "HISTORY_FIELDS",
    "LOOKUP_FIELDS",
    "MEDIA_FIELDS",
    "MEMBER_FIELDS",
    "OFFICE_FIELDS",
    "OPEN_HOUSE_FIELDS",
    "PROPERTY_FIELDS",
    "SORTS",
    "UNMAPPED_FILTERS",
]

#: The Data Dictionary version the map is written from.
DD_VERSION = "2.0"

#: Platform listing column -> DD 2.0 Property field (the search's summary fields).
PROPERTY_FIELDS: dict[str, str] = {
    "ListingId": "ListingId",
    "ListPrice": "ListPrice",
    "PreviousListPrice": "PreviousListPrice",
    "ClosePrice": "ClosePrice",
    "StandardStatus": "StandardStatus",
    "PropertyType": "PropertyType",
    "PropertySubType": "PropertySubType",
    "UnparsedAddress": "UnparsedAddress",
    "StreetNumber": "StreetNumber",
    "StreetDirPrefix": "StreetDirPrefix",
    "StreetName": "StreetName",
    "UnitNumber": "UnitNumber",
    "City": "City",
    "StateOrProvince": "StateOrProvince",
    "PostalCode": "PostalCode",
    "CountyOrParish": "CountyOrParish",
    "SubdivisionName": "SubdivisionName",
    "BuildingName": "BuildingName",
    "BedroomsTotal": "BedroomsTotal",
    "BathroomsTotalInteger": "BathroomsTotalInteger",
    "LivingArea": "LivingArea",
    "LotSizeSquareFeet": "LotSizeSquareFeet",
    "YearBuilt": "YearBuilt",
    "DaysOnMarket": "DaysOnMarket",
    "AssociationFee": "AssociationFee",
    "WaterfrontYN": "WaterfrontYN",
    "PoolPrivateYN": "PoolPrivateYN",
    "SeniorCommunityYN": "SeniorCommunityYN",
    "Latitude": "Latitude",  # the platform's coordinates.lat
    "Longitude": "Longitude",  # the platform's coordinates.lng
    "OriginalEntryTimestamp": "OriginalEntryTimestamp",
    "ModificationTimestamp": "ModificationTimestamp",
    "MajorChangeTimestamp": "MajorChangeTimestamp",
    "CloseDate": "CloseDate",
    "ListAgentMlsId": "ListAgentMlsId",
    "ListOfficeMlsId": "ListOfficeMlsId",
    "ListOfficeName": "ListOfficeName",
}
#: The Property lookup fields the platform's frames hold as categories, and their values: a
#: server's own values (enum members, local lookups) are mapped to these (:mod:`._metadata`).
LOOKUP_FIELDS: dict[str, tuple[str, ...]] = {
    "StandardStatus": STANDARD_STATUSES,
    "PropertyType": PROPERTY_TYPES,
}
#: DD Property fields the platform's search has no column for, kept under their DD names with
#: ``listings(reso_fields=True)`` (the buyer side of closed listings among them).
EXTRA_PROPERTY_FIELDS: tuple[str, ...] = (
    "ListingKey",
    "OriginalListPrice",
    "OnMarketDate",
    "PhotosChangeTimestamp",
    "ListAgentKey",
    "ListOfficeKey",
    "BuyerAgentKey",
    "BuyerAgentMlsId",
    "BuyerOfficeKey",
    "BuyerOfficeMlsId",
    "BuyerOfficeName",
    "OriginatingSystemName",
)

#: The platform's search filters -> (DD field, operator). ``eq`` text filters compare exactly.
FILTERS: dict[str, tuple[str, str]] = {
    "Status": ("StandardStatus", "eq"),
    "PropertyType": ("PropertyType", "eq"),
    "Subtypes": ("PropertySubType", "in"),
    "City": ("City", "eq"),
    "PostalCode": ("PostalCode", "eq"),
    "StreetNumber": ("StreetNumber", "eq"),
    "StreetName": ("StreetName", "eq"),
    "UnitNumber": ("UnitNumber", "eq"),
    "BuildingName": ("BuildingName", "contains"),
    "SubdivisionName": ("SubdivisionName", "eq"),
    "MinListPrice": ("ListPrice", "ge"),
    "MaxListPrice": ("ListPrice", "le"),
    "MinBedroomsTotal": ("BedroomsTotal", "ge"),
    "MaxBedroomsTotal": ("BedroomsTotal", "le"),
    "MinBathrooms": ("BathroomsTotalInteger", "ge"),
    "MaxBathrooms": ("BathroomsTotalInteger", "le"),
    "MinLivingArea": ("LivingArea", "ge"),
    "MaxLivingArea": ("LivingArea", "le"),
    "MinLotSize": ("LotSizeSquareFeet", "ge"),
    "MaxLotSize": ("LotSizeSquareFeet", "le"),
    "MinYearBuilt": ("YearBuilt", "ge"),
    "MaxYearBuilt": ("YearBuilt", "le"),
    "MinAssociationFee": ("AssociationFee", "ge"),
    "MaxAssociationFee": ("AssociationFee", "le"),
    "MaxDaysOnMarket": ("DaysOnMarket", "le"),
    "Pool": ("PoolPrivateYN", "eq"),
    "Waterfront": ("WaterfrontYN", "eq"),
    "SeniorCommunity": ("SeniorCommunityYN", "senior"),
    "Agent": ("ListAgentMlsId", "eq"),
    "Broker": ("ListOfficeMlsId", "eq"),
    "Since": ("OriginalEntryTimestamp", "gt"),
}
#: Platform filters with no Data Dictionary 2.0 counterpart in Property (use ``filter=``).
UNMAPPED_FILTERS: tuple[str, ...] = tuple(f for f in FEATURE_FLAGS if f not in FILTERS)
#: The platform's ``Sort`` values -> ``$orderby`` (ties broken by the key).
SORTS: dict[str, str] = {
    "-listprice": "ListPrice desc",
    "listprice": "ListPrice asc",
    "-listdate": "OriginalEntryTimestamp desc",
    "beds": "BedroomsTotal asc",
    "baths": "BathroomsTotalInteger asc",
}

#: The other resources' columns: DD 2.0 field names, kept as they are.
MEMBER_FIELDS: tuple[str, ...] = (
    "MemberKey",
    "MemberMlsId",
    "MemberFirstName",
    "MemberLastName",
    "MemberFullName",
    "MemberEmail",
    "MemberStatus",
    "OfficeKey",
    "OfficeMlsId",
    "OfficeName",
    "ModificationTimestamp",
    "OriginatingSystemName",
)
OFFICE_FIELDS: tuple[str, ...] = (
    "OfficeKey",
    "OfficeMlsId",
    "OfficeName",
    "OfficeStatus",
    "OfficeStateOrProvince",
    "ModificationTimestamp",
    "OriginatingSystemName",
)
OPEN_HOUSE_FIELDS: tuple[str, ...] = (
    "OpenHouseKey",
    "ListingKey",
    "ListingId",
    "OpenHouseDate",
    "OpenHouseStartTime",
    "OpenHouseEndTime",
    "OpenHouseType",
    "OpenHouseStatus",
    "ShowingAgentKey",
    "ModificationTimestamp",
    "OriginatingSystemName",
)
MEDIA_FIELDS: tuple[str, ...] = (
    "MediaKey",
    "ResourceRecordKey",
    "ResourceRecordID",
    "ResourceName",
    "MediaCategory",
    "MediaURL",
    "Order",
    "ShortDescription",
    "ModificationTimestamp",
    "OriginatingSystemName",
)
#: The Data Dictionary's change log (HistoryTransactional) fields a sync reads.
HISTORY_FIELDS: tuple[str, ...] = (
    "HistoryTransactionalKey",
    "ResourceName",
    "ResourceRecordKey",
    "ResourceRecordID",
    "FieldName",
    "PreviousValue",
    "NewValue",
    "ChangeType",
    "ModificationTimestamp",
    "OriginatingSystemName",
)
