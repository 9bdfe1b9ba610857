"""The client's RESO tables (field map, vendor profiles) against the sandbox's, written apart:
a misreading of the Data Dictionary or of a vendor's rule on either side fails here."""

from __future__ import annotations

from realtyframes.reso import PROFILES
from realtyframes.reso import _fields as client_fields
from realtyframes.sandbox import _reso_fields as sandbox_fields
from realtyframes.sandbox._reso_vendors import PROFILES as SANDBOX_PROFILES
from realtyframes.schemas import SUMMARY_FIELDS


def test_every_mapped_property_field_is_one_the_face_serves() -> None:
    served = set(sandbox_fields.PROPERTY.types)
    mapped = set(client_fields.PROPERTY_FIELDS.values()) | set(client_fields.EXTRA_PROPERTY_FIELDS)
    assert mapped <= served
    assert served - mapped == set()  # every served field is mapped or kept under its name
    assert client_fields.DD_VERSION == sandbox_fields.DD_VERSION


def test_the_map_covers_every_summary_column_of_the_platform() -> None:
    assert set(client_fields.PROPERTY_FIELDS) == set(SUMMARY_FIELDS)


def test_the_filters_name_served_fields() -> None:
    served = set(sandbox_fields.PROPERTY.types)
    assert {field for field, _ in client_fields.FILTERS.values()} <= served
    orderby = {s.split()[0] for s in client_fields.SORTS.values()}
    assert orderby <= served


def test_the_other_resources_have_the_same_fields() -> None:
    ours = {
        "Member": client_fields.MEMBER_FIELDS,
        "Office": client_fields.OFFICE_FIELDS,
        "OpenHouse": client_fields.OPEN_HOUSE_FIELDS,
        "Media": client_fields.MEDIA_FIELDS,
        "HistoryTransactional": client_fields.HISTORY_FIELDS,
    }
    for name, fields in ours.items():
        assert tuple(f.name for f in sandbox_fields.RESOURCES[name].fields) == fields, name


def test_the_vendor_rules_agree() -> None:
    assert set(PROFILES) == set(SANDBOX_PROFILES)
    for name, ours in PROFILES.items():
        theirs = SANDBOX_PROFILES[name]
        assert ours.paging == ("top" if theirs.top_means == "page" else "maxpagesize"), name
        cap = theirs.top_cap if theirs.top_means == "page" else theirs.max_page
        if name == "generic":  # OData sets no cap: the sandbox's is its own choice
            assert ours.page_cap is None and cap is not None and ours.page <= cap
        else:
            assert ours.page_cap == cap, name
        assert ours.page_cap_expand == theirs.top_cap_expand, name
        assert ours.requires_system == (theirs.required_filter == "OriginatingSystemName"), name
        assert ours.max_or_terms == theirs.max_or_terms, name
        assert ours.delete_flag in (None, *theirs.local_fields), name
        budgets = {k: (b.seconds, b.limit) for k, b in ours.budgets.items()}
        assert budgets == theirs.budgets, name


def test_docs_state_the_clients_field_map() -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "reso.md").read_text()
    section = text.split("| Platform column | DD 2.0 Property field |", 1)[1].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \|$", section, re.M)
    assert rows == list(client_fields.PROPERTY_FIELDS.items())
    section = text.split("| Platform filter | DD field | OData |", 1)[1].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| `(\w+)` \|$", section, re.M)
    assert [(n, (f, o)) for n, f, o in rows] == list(client_fields.FILTERS.items())
