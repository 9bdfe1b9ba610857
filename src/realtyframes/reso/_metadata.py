"""A RESO server's ``$metadata`` (CSDL XML): each entity type's fields and EDM types.

>>> xml = b'''<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">
... <edmx:DataServices><Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="x">
... <EntityType Name="Property"><Key><PropertyRef Name="ListingKey"/></Key>
... <Property Name="ListingKey" Type="Edm.String"/><Property Name="City" Type="Edm.String"/>
... </EntityType></Schema></edmx:DataServices></edmx:Edmx>'''
>>> parse_metadata(xml)["Property"]
{'ListingKey': 'Edm.String', 'City': 'Edm.String'}
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from realtyframes.errors import BadResponseError

__all__ = ["parse_metadata"]

_EDM = "{http://docs.oasis-open.org/odata/ns/edm}"


def parse_metadata(body: bytes) -> dict[str, dict[str, str]]:
    """Entity type name -> {field: EDM type}, in the document's order; a body that is no CSDL
    XML is a :class:`~realtyframes.errors.BadResponseError`."""
    if b"<!DOCTYPE" in body[:2048] or b"<!ENTITY" in body[:4096]:
        raise BadResponseError("$metadata: a document type declaration is not accepted")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise BadResponseError(f"$metadata: not XML ({exc})") from None
    types: dict[str, dict[str, str]] = {}
    for entity in root.iter(f"{_EDM}EntityType"):
        fields = {p.get("Name", ""): p.get("Type", "") for p in entity.findall(f"{_EDM}Property")}
        types[entity.get("Name", "")] = fields
    if not types:
        raise BadResponseError("$metadata: no EntityType in the document")
    return types
