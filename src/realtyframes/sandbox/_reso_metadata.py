"""``$metadata`` (OData v4 CSDL XML, EDMX 4.0) and the service document of the RESO face.

Written from :mod:`~realtyframes.sandbox._reso_fields`: one EntityType per resource (its key, its
fields), the Media navigation from Property, one EntityContainer.

>>> from realtyframes.sandbox._reso_fields import RESOURCES
>>> xml = metadata_xml(RESOURCES)
>>> xml.startswith('<?xml version="1.0"'), 'Namespace="org.reso.metadata"' in xml
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import quoteattr

from realtyframes.sandbox._reso_fields import NAMESPACE, Resource
from realtyframes.sandbox._reso_lookups import enum_schema

__all__ = ["EXPANDS", "metadata_xml", "service_document"]

EDMX = "http://docs.oasis-open.org/odata/ns/edmx"
EDM = "http://docs.oasis-open.org/odata/ns/edm"
#: Navigation properties: resource -> {name: (target resource, the target's field holding our key)}.
EXPANDS: dict[str, dict[str, tuple[str, str]]] = {
    "Property": {"Media": ("Media", "ResourceRecordKey")}
}


#: Decimal facets: money and areas to the cent, coordinates to 8 places.
_DECIMAL = {name: ' Precision="12" Scale="8"' for name in ("Latitude", "Longitude")}


def _entity_type(resource: Resource) -> list[str]:
    lines = [
        f"      <EntityType Name={quoteattr(resource.name)}>",
        f'        <Key><PropertyRef Name="{resource.key}"/></Key>',
    ]
    for f in resource.fields:
        nullable = ' Nullable="false"' if f.name == resource.key else ""
        scale = _DECIMAL.get(f.name, ' Precision="14" Scale="2"') if f.edm == "Edm.Decimal" else ""
        if f.lookup_name is None:
            lines.append(f'        <Property Name="{f.name}" Type="{f.edm}"{nullable}{scale}/>')
            continue
        lines += [
            f'        <Property Name="{f.name}" Type="{f.edm}"{nullable}{scale}>',
            f'          <Annotation Term="RESO.OData.Metadata.LookupName" String="{f.lookup_name}"/>',
            "        </Property>",
        ]
    for nav, (target, _) in EXPANDS.get(resource.name, {}).items():
        lines.append(
            f'        <NavigationProperty Name="{nav}" Type="Collection({NAMESPACE}.{target})"/>'
        )
    lines.append("      </EntityType>")
    return lines


def metadata_xml(resources: Mapping[str, Resource]) -> str:
    """The CSDL XML document of ``resources`` (OData 4.0)."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<edmx:Edmx xmlns:edmx="{EDMX}" Version="4.0">',
        "  <edmx:DataServices>",
        f'    <Schema xmlns="{EDM}" Namespace="{NAMESPACE}">',
    ]
    for resource in resources.values():
        lines += _entity_type(resource)
    lines.append('      <EntityContainer Name="Default">')
    for resource in resources.values():
        navs = EXPANDS.get(resource.name, {})
        if not navs:
            lines.append(
                f'        <EntitySet Name="{resource.name}" EntityType="{NAMESPACE}.{resource.name}"/>'
            )
            continue
        lines.append(
            f'        <EntitySet Name="{resource.name}" EntityType="{NAMESPACE}.{resource.name}">'
        )
        for nav, (target, _) in navs.items():
            lines.append(f'          <NavigationPropertyBinding Path="{nav}" Target="{target}"/>')
        lines.append("        </EntitySet>")
    lines += ["      </EntityContainer>", "    </Schema>", *enum_schema(resources)]
    lines += ["  </edmx:DataServices>", "</edmx:Edmx>"]
    return "\n".join(lines) + "\n"


def service_document(base: str, resources: Mapping[str, Resource]) -> dict[str, Any]:
    """The JSON service document: every entity set and its URL."""
    return {
        "@odata.context": f"{base}/$metadata",
        "value": [{"name": r, "kind": "EntitySet", "url": r} for r in resources],
    }
