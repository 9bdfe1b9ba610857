"""members(), offices(), open_houses(), media() on a RESO source: validated, typed, cached,
filtered by Data Dictionary fields; refused on the platform's client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import realtyframes as rf

_OPEN: list[rf.Client] = []


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _source(url: str, tmp_path: Path) -> rf.Client:
    client = rf.Client.reso(
        url + "/reso/odata", token="reso-token", cache_dir=tmp_path, progress=False
    )
    _OPEN.append(client)
    return client


@pytest.mark.parametrize(
    ("method", "resource", "key"),
    [
        ("members", "Member", "MemberKey"),
        ("offices", "Office", "OfficeKey"),
        ("open_houses", "OpenHouse", "OpenHouseKey"),
        ("media", "Media", "MediaKey"),
    ],
)
def test_each_resource_is_a_validated_cached_frame(
    sandbox_url: str, tmp_path: Path, method: str, resource: str, key: str
) -> None:
    client = _source(sandbox_url, tmp_path)
    frame = getattr(client, method)()
    count = httpx.get(
        f"{sandbox_url}/reso/odata/{resource}", params={"$count": "true", "$top": "1"}
    ).json()["@odata.count"]
    assert len(frame) == count > 0 and frame[key].is_unique
    assert frame.attrs["source"] == "reso:generic"
    assert str(frame["ModificationTimestamp"].dtype) == "datetime64[us, UTC]"
    assert client.last_load is not None and client.last_load.quarantined == 0
    again = getattr(client, method)()
    assert client.last_load.from_cache and client.last_load.requests == 0
    assert again.equals(frame)


def test_filters_are_data_dictionary_fields(sandbox_url: str, tmp_path: Path) -> None:
    client = _source(sandbox_url, tmp_path)
    offices = client.offices()
    office = str(offices["OfficeKey"].iloc[0])
    members = client.members(OfficeKey=office)
    assert len(members) > 0 and set(members["OfficeKey"]) == {office}
    photos = client.media(filter="Order eq 1")
    assert len(photos) > 0 and set(photos["Order"]) == {1}
    with pytest.raises(rf.QueryError, match="did you mean OfficeKey"):
        client.members(OfficeKy=office)


def test_the_platform_client_refuses_them(sandbox_url: str, tmp_path: Path) -> None:
    client = rf.Client(sandbox_url, api_key="k", cache_dir=tmp_path)
    _OPEN.append(client)
    with pytest.raises(rf.QueryError, match="a RESO source"):
        client.members()
