"""docs/reso.md states the field map and the vendor profiles the sandbox serves."""

from __future__ import annotations

import re
from pathlib import Path

from realtyframes.sandbox._reso_fields import DD_VERSION, RESOURCES
from realtyframes.sandbox._reso_vendors import PROFILES

DOC = Path(__file__).resolve().parents[2] / "docs" / "reso.md"


def test_the_field_map_table_is_the_served_one() -> None:
    text = DOC.read_text()
    assert f"RESO Data Dictionary {DD_VERSION}" in text
    for resource in RESOURCES.values():
        section = text.split(f"### {resource.name} (key `{resource.key}`)", 1)[1].split("###")[0]
        rows = re.findall(r"^\| `(\w+)` \| (Edm\.\w+) \| (.+) \|$", section, re.M)
        assert [(n, t, s) for n, t, s in rows] == [
            (f.name, f.edm, f.source) for f in resource.fields
        ]


def test_every_vendor_profile_is_documented() -> None:
    text = DOC.read_text()
    names = {"generic": "generic", "mlsgrid": "MLS Grid", "trestle": "Trestle", "bridge": "Bridge",
             "spark": "Spark"}  # fmt: skip
    assert set(names) == set(PROFILES)
    for title in names.values():
        assert re.search(rf"^\| {title}\b", text, re.M), title
