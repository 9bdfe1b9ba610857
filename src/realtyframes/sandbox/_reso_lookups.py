"""How the RESO face serves its lookup fields (StandardStatus, PropertyType, PropertySubType):
three ways MLS servers do it, switched by ``SandboxOptions.reso_lookups``.

- ``string`` (default): ``Edm.String`` fields holding the Data Dictionary's standard values
  (``Active Under Contract``), as the REST API does.
- ``enum``: each field typed by an ``EnumType`` of ``$metadata`` (namespace
  ``org.reso.metadata.enums``) whose members are OData names (``ActiveUnderContract``), each
  annotated ``RESO.OData.Metadata.StandardName`` with the standard value; records carry the
  member names.
- ``lookup``: ``Edm.String`` fields annotated ``RESO.OData.Metadata.LookupName``, holding the
  MLS's own values (``Under Contract``, ``Sold``); the ``Lookup`` entity set (RESO's Lookup
  resource, Web API proposal RCP-032) gives each value's ``StandardLookupValue``. Property also
  carries a local field, ``MRD_StatusLocal`` (the MLS's status value; local fields keep their
  prefix, as MRED's ``MRD_`` fields do on MLS Grid).

>>> encode("enum", "StandardStatus", "Active Under Contract"), encode("lookup", "StandardStatus", "Closed")
('ActiveUnderContract', 'Sold')
>>> member_name("Land/Boat Docks")
'LandBoatDocks'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import quoteattr

from realtyframes.sandbox._market_data import SUBTYPE_WEIGHTS
from realtyframes.sandbox._reso_fields import ResoField, Resource
from realtyframes.sandbox._spec import PROPERTY_TYPES, STATUSES

__all__ = [
    "ENUM_NAMESPACE",
    "LOCAL_FIELD",
    "LOCAL_VALUES",
    "LOOKUP",
    "LOOKUP_FIELDS",
    "LOOKUP_MODES",
    "encode",
    "enum_schema",
    "lookup_records",
    "member_name",
    "with_lookups",
]

#: ``SandboxOptions.reso_lookups`` values.
LOOKUP_MODES: tuple[str, ...] = ("string", "enum", "lookup")
#: The schema namespace of the enum types (``enum`` mode).
ENUM_NAMESPACE = "org.reso.metadata.enums"
#: The lookup fields of Property and their standard values (the sandbox's spec and market).
LOOKUP_FIELDS: dict[str, tuple[str, ...]] = {
    "StandardStatus": STATUSES,
    "PropertyType": PROPERTY_TYPES,
    "PropertySubType": tuple(dict.fromkeys(s for w in SUBTYPE_WEIGHTS.values() for s in w)),
}
#: ``lookup`` mode: the sandbox MLS's own value of each standard value (made up, as an MLS's are).
LOCAL_VALUES: dict[str, dict[str, str]] = {
    "StandardStatus": {
        "Active": "Active",
        "Pending": "Pending Sale",
        "Closed": "Sold",
        "Active Under Contract": "Under Contract",
    },
    "PropertyType": {
        "Residential": "Single Family/Condo",
        "Residential Income": "Multi-Family",
        "Land": "Vacant Land",
        "Land/Boat Docks": "Boat Dock",
        "Commercial Sale": "Commercial",
        "Business Opportunity": "Business",
        "Residential Lease": "Rental",
        "Commercial Lease": "Commercial Rental",
    },
    # an MLS that keeps its subtypes in capitals
    "PropertySubType": {v: v.upper() for v in LOOKUP_FIELDS["PropertySubType"]},
}
_STAMP = "2020-01-01T00:00:00Z"
#: ``lookup`` mode: a local field of Property (not in the Data Dictionary).
LOCAL_FIELD = "MRD_StatusLocal"
#: RESO's Lookup resource (the fields a client reads).
LOOKUP = Resource(
    "Lookup",
    "LookupKey",
    (
        ResoField("LookupKey", "Edm.String", "the lookup's name and the value's number"),
        ResoField("LookupName", "Edm.String", "the field's lookup (its LookupName annotation)"),
        ResoField("LookupValue", "Edm.String", "the value the records carry (the MLS's own)"),
        ResoField("StandardLookupValue", "Edm.String", "the Data Dictionary's value"),
        ResoField("LegacyODataValue", "Edm.String", "the value's OData enum member name"),
        ResoField("ModificationTimestamp", "Edm.DateTimeOffset", "a fixed time (" + _STAMP + ")"),
    ),
)


def member_name(value: str) -> str:
    """An OData enum member name for a standard value: its letters and digits, words joined."""
    name = "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", value) if w)
    return name if name[:1].isalpha() else "_" + name


def encode(mode: str, field: str, value: Any) -> Any:
    """The value a record of ``mode`` carries for the standard ``value`` of ``field``."""
    if value is None or mode == "string" or field not in LOOKUP_FIELDS:
        return value
    if mode == "enum":
        return member_name(value)
    return LOCAL_VALUES[field][value]


def lookup_records() -> list[dict[str, Any]]:
    """The ``Lookup`` entity set of ``lookup`` mode, in key order."""
    out = []
    for field, values in LOOKUP_FIELDS.items():
        for i, value in enumerate(values):
            out.append(
                {
                    "LookupKey": f"{field}-{i:03d}",
                    "LookupName": field,
                    "LookupValue": LOCAL_VALUES[field][value],
                    "StandardLookupValue": value,
                    "LegacyODataValue": member_name(value),
                    "ModificationTimestamp": _STAMP,
                }
            )
    return sorted(out, key=lambda r: r["LookupKey"])


def with_lookups(resources: Mapping[str, Resource], mode: str) -> dict[str, Resource]:
    """The face's resources under lookup ``mode``: Property's lookup fields typed by their enum
    (``enum``) or annotated with their LookupName and the ``Lookup`` set added (``lookup``)."""
    if mode not in LOOKUP_MODES:
        raise ValueError(f"reso_lookups: unknown mode {mode!r}; allowed: {', '.join(LOOKUP_MODES)}")
    out = dict(resources)
    if mode == "string":
        return out
    prop = out["Property"]
    changed = {}
    for f in prop.fields:
        if f.name in LOOKUP_FIELDS:
            if mode == "enum":
                changed[f.name] = ResoField(f.name, f"{ENUM_NAMESPACE}.{f.name}", f.source)
            else:
                changed[f.name] = ResoField(f.name, f.edm, f.source, lookup_name=f.name)
    out["Property"] = prop.with_fields(changed)
    if mode == "lookup":
        local = ResoField(LOCAL_FIELD, "Edm.String", "the MLS's own StandardStatus value")
        out["Property"] = out["Property"].with_field(local)
        out["Lookup"] = LOOKUP
    return out


def enum_schema(resources: Mapping[str, Resource]) -> list[str]:
    """The CSDL lines of the enum schema the resources' fields use (none in the other modes):
    one EnumType per lookup field, each member annotated with its standard value."""
    used = [
        f.name
        for r in resources.values()
        for f in r.fields
        if f.edm == f"{ENUM_NAMESPACE}.{f.name}" and f.name in LOOKUP_FIELDS
    ]
    if not used:
        return []
    lines = [
        f'    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="{ENUM_NAMESPACE}">'
    ]
    for name in dict.fromkeys(used):
        lines.append(f'      <EnumType Name="{name}">')
        for i, value in enumerate(LOOKUP_FIELDS[name]):
            lines += [
                f'        <Member Name="{member_name(value)}" Value="{i}">',
                f'          <Annotation Term="RESO.OData.Metadata.StandardName" String={quoteattr(value)}/>',
                "        </Member>",
            ]
        lines.append("      </EnumType>")
    lines.append("    </Schema>")
    return lines
