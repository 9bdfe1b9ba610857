"""A RESO server's ``$metadata`` (CSDL XML): each entity type's fields and EDM types, its enum
types, its string lookups; and the lookups that turn the server's values into the platform's.

MLS servers carry a lookup field (StandardStatus, PropertyType) in one of three ways: the Data
Dictionary's standard values as ``Edm.String``; an ``EnumType`` whose members are OData names
(``ActiveUnderContract``), annotated ``RESO.OData.Metadata.StandardName``; or ``Edm.String``
annotated ``RESO.OData.Metadata.LookupName`` holding the MLS's own values, whose standard values
the ``Lookup`` resource gives (``LookupValue`` -> ``StandardLookupValue``; RESO Web API proposal
RCP-032). :func:`server_lookups` reads whichever the server uses and maps each value to the
platform's by its standard value (letters and digits compared, case aside): the frames get the
platform's values, filters send the server's. A value it cannot map is left as the server sent
it, so the row is quarantined by the listing model's check with the value in the reason, never
given a wrong status.

>>> xml = b'''<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">
... <edmx:DataServices><Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="x">
... <EntityType Name="Property"><Key><PropertyRef Name="ListingKey"/></Key>
... <Property Name="ListingKey" Type="Edm.String"/><Property Name="City" Type="Edm.String"/>
... </EntityType></Schema></edmx:DataServices></edmx:Edmx>'''
>>> parse_metadata(xml)["Property"]
{'ListingKey': 'Edm.String', 'City': 'Edm.String'}
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from realtyframes.errors import BadResponseError, QueryError
from realtyframes.reso._fields import LOOKUP_FIELDS, PROPERTY_FIELDS

__all__ = [
    "LOOKUP",
    "Lookups",
    "ServerMetadata",
    "lookup_filter",
    "parse_metadata",
    "read_metadata",
    "server_lookups",
]

_EDM = "{http://docs.oasis-open.org/odata/ns/edm}"
_STANDARD_NAME = "RESO.OData.Metadata.StandardName"
_LOOKUP_NAME = "RESO.OData.Metadata.LookupName"
#: The entity set of RESO's Lookup resource.
LOOKUP = "Lookup"


@dataclass(frozen=True)
class ServerMetadata:
    """What ``$metadata`` says: ``types`` (entity type -> {field: type}), ``enums`` (qualified
    enum type -> {member name: standard value, the member name where not annotated}),
    ``lookup_names`` (entity type -> {field: its LookupName annotation})."""

    types: dict[str, dict[str, str]]
    enums: dict[str, dict[str, str]] = field(default_factory=dict)
    lookup_names: dict[str, dict[str, str]] = field(default_factory=dict)


def _annotation(element: ET.Element, term: str) -> str | None:
    for note in element.findall(f"{_EDM}Annotation"):
        if note.get("Term") == term:
            return note.get("String")
    return None


def read_metadata(body: bytes) -> ServerMetadata:
    """The CSDL document ``body`` read; a body that is no CSDL XML is a
    :class:`~realtyframes.errors.BadResponseError`."""
    if b"<!DOCTYPE" in body[:2048] or b"<!ENTITY" in body[:4096]:
        raise BadResponseError("$metadata: a document type declaration is not accepted")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise BadResponseError(f"$metadata: not XML ({exc})") from None
    types: dict[str, dict[str, str]] = {}
    enums: dict[str, dict[str, str]] = {}
    lookups: dict[str, dict[str, str]] = {}
    for schema in root.iter(f"{_EDM}Schema"):
        prefixes = [p for p in (schema.get("Namespace"), schema.get("Alias")) if p]
        for enum in schema.findall(f"{_EDM}EnumType"):
            members = {
                m.get("Name", ""): _annotation(m, _STANDARD_NAME) or str(m.get("Name", ""))
                for m in enum.findall(f"{_EDM}Member")
            }
            for prefix in prefixes:
                enums[f"{prefix}.{enum.get('Name', '')}"] = members
        for entity in schema.findall(f"{_EDM}EntityType"):
            name = entity.get("Name", "")
            props = entity.findall(f"{_EDM}Property")
            types[name] = {p.get("Name", ""): p.get("Type", "") for p in props}
            named = {p.get("Name", ""): _annotation(p, _LOOKUP_NAME) for p in props}
            lookups[name] = {f: n for f, n in named.items() if n}
    if not types:
        raise BadResponseError("$metadata: no EntityType in the document")
    return ServerMetadata(types, enums, lookups)


def parse_metadata(body: bytes) -> dict[str, dict[str, str]]:
    """Entity type name -> {field: EDM type}, in the document's order (see :func:`read_metadata`)."""
    return read_metadata(body).types


def _plain(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.casefold())


@dataclass(frozen=True)
class Lookups:
    """The server's values of the platform's lookup fields: ``decoding`` (field -> {server
    value: platform value}), ``encoding`` (field -> {platform value: server value}),
    ``enum_types`` (field -> its qualified enum type, for enum literals), ``unmapped`` (field ->
    {server value: why it has no platform value}). Empty: the server uses standard values."""

    decoding: dict[str, dict[str, str]] = field(default_factory=dict)
    encoding: dict[str, dict[str, str]] = field(default_factory=dict)
    enum_types: dict[str, str] = field(default_factory=dict)
    unmapped: dict[str, dict[str, str]] = field(default_factory=dict)

    def decode(self, resource: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``records`` of ``resource`` with the platform's values (changed in place): Property's
        lookup fields, and HistoryTransactional's PreviousValue/NewValue of a lookup field."""
        if not self.decoding:
            return records
        if resource == "Property":
            for name, table in self.decoding.items():
                for r in records:
                    value = r.get(name)
                    if value is not None:
                        r[name] = table.get(value, value)
        elif resource == "HistoryTransactional":
            for r in records:
                changes = self.decoding.get(r.get("FieldName") or "")
                if changes is not None:
                    for key in ("PreviousValue", "NewValue"):
                        if r.get(key) is not None:
                            r[key] = changes.get(r[key], r[key])
        return records

    def literal(self, name: str, value: str) -> str:
        """The ``$filter`` literal of the platform's ``value`` of lookup field ``name``: the
        server's value, as an enum literal where the field is an enum; a value the server's
        lookup does not have is a QueryError."""
        table = self.encoding.get(name)
        if table is None:
            return "'" + value.replace("'", "''") + "'"
        if value not in table:
            raise QueryError(
                name,
                f"the server's lookup has no value for {value!r}",
                tuple(table),
            )
        quoted = "'" + table[value].replace("'", "''") + "'"
        enum = self.enum_types.get(name)
        return f"{enum}{quoted}" if enum else quoted


def _pairs(
    meta: ServerMetadata, name: str, rows: Callable[[], list[dict[str, Any]]]
) -> tuple[list[tuple[str, str]], str | None] | None:
    """(server value, standard value) pairs of Property field ``name`` and its enum type; None
    where the field is a plain string (standard values)."""
    kind = meta.types.get("Property", {}).get(name)
    if kind in meta.enums:
        return list(meta.enums[kind].items()), kind
    lookup = meta.lookup_names.get("Property", {}).get(name)
    if lookup is None:
        return None
    found = [r for r in rows() if r.get("LookupName") == lookup and r.get("LookupValue")]
    return [(str(r["LookupValue"]), str(r.get("StandardLookupValue") or r["LookupValue"]))
            for r in found], None  # fmt: skip


def server_lookups(
    meta: ServerMetadata, rows: Callable[[list[str]], list[dict[str, Any]]]
) -> Lookups:
    """The lookups of the platform's columns on a server with ``meta``: StandardStatus and
    PropertyType (:data:`LOOKUP_FIELDS`) mapped to the platform's values; any other column the
    server types by an enum or a LookupName (PropertySubType ...) to its standard value.
    ``rows(names)`` reads the Lookup resource's records of those LookupNames (called only where
    a field is a string lookup; once, for all of them).

    >>> meta = ServerMetadata({"Property": {"StandardStatus": "e.Status"}},
    ...                       {"e.Status": {"ActiveUnderContract": "ActiveUnderContract", "Gone": "Gone"}})
    >>> found = server_lookups(meta, lambda names: [])
    >>> found.decoding["StandardStatus"], found.unmapped["StandardStatus"]["Gone"][:24]
    ({'ActiveUnderContract': 'Active Under Contract'}, "standard value 'Gone' is")
    """
    names = meta.lookup_names.get("Property", {})
    columns = [
        f for f in dict.fromkeys(PROPERTY_FIELDS.values()) if f in meta.types.get("Property", {})
    ]
    wanted = sorted({names[n] for n in columns if n in names})
    read: list[list[dict[str, Any]]] = []

    def once() -> list[dict[str, Any]]:
        if not read:
            read.append(rows(wanted))
        return read[0]

    out = Lookups()
    for name in columns:
        found = _pairs(meta, name, once)
        if found is None:
            continue
        pairs, enum = found
        if name in LOOKUP_FIELDS:
            _map(out, name, LOOKUP_FIELDS[name], pairs)
        else:  # a text column: the standard value, whatever it is
            out.decoding[name] = dict(pairs)
            out.encoding[name] = {standard: server for server, standard in reversed(pairs)}
        if enum is not None:
            out.enum_types[name] = enum
    return out


def _map(out: Lookups, name: str, allowed: Iterable[str], pairs: list[tuple[str, str]]) -> None:
    plain = {_plain(v): v for v in allowed}
    decoding: dict[str, str] = {}
    encoding: dict[str, str] = {}
    unmapped: dict[str, str] = {}
    for server, standard in pairs:
        platform = plain.get(_plain(standard)) or plain.get(_plain(server))
        if platform is None:
            unmapped[server] = (
                f"standard value {standard!r} is none of the platform's {name} values"
            )
            continue
        decoding[server] = platform
        encoding.setdefault(platform, server)
    out.decoding[name] = decoding
    out.encoding[name] = encoding
    out.unmapped[name] = unmapped


def lookup_filter(names: Iterable[str]) -> str:
    """The ``$filter`` of the Lookup records of LookupNames ``names`` (``or``-ed).

    >>> lookup_filter(["StandardStatus", "PropertyType"])
    "LookupName eq 'StandardStatus' or LookupName eq 'PropertyType'"
    """
    return " or ".join("LookupName eq '" + n.replace("'", "''") + "'" for n in names)
