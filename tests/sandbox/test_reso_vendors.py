"""Vendor profiles of the RESO face: each published rule enforced by the sandbox, on loopback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from realtyframes.cli import main
from realtyframes.sandbox import RESO_VENDORS, RunningSandbox, serve
from realtyframes.sandbox._reso_vendors import SPARK_REPLICATION_TOKEN

Start = Callable[..., RunningSandbox]
SYSTEM = "OriginatingSystemName eq 'rfsandbox'"


def _get(client: httpx.Client, sandbox: RunningSandbox, path: str, **kw: Any) -> httpx.Response:
    return client.get(f"{sandbox.url}/reso/odata/{path}", **kw)


def _usage(client: httpx.Client, sandbox: RunningSandbox, advance: float | None = None) -> Any:
    url = f"{sandbox.url}/_sandbox/reso/usage"
    if advance is None:
        return client.get(url).json()
    return client.post(url, json={"advance_seconds": advance}).json()


def test_mlsgrid_requires_the_originating_system_filter(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid", reso_budgets="second=1000")
    for params in ({}, {"$filter": "City eq 'Miami'"}, {"$filter": f"{SYSTEM} or City eq 'Miami'"}):
        r = _get(http_client, sb, "Property", params=params)
        assert r.status_code == 400, params
        assert "OriginatingSystemName" in r.json()["error"]["message"]
    r = _get(http_client, sb, "Property", params={"$filter": f"{SYSTEM} and City eq 'Miami'"})
    assert r.status_code == 200 and r.json()["value"]
    other = _get(http_client, sb, "Property", params={"$filter": "OriginatingSystemName eq 'x'"})
    assert other.status_code == 200 and other.json()["value"] == []


def test_mlsgrid_top_caps_and_the_or_limit(start_sandbox: Start, http_client: httpx.Client) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid", reso_budgets="second=1000")
    cases = [
        ({"$top": "5001"}, 400, "at most 5000"),
        ({"$top": "1001", "$expand": "Media"}, 400, "at most 1000 with $expand"),
        ({"$top": "1000", "$expand": "Media"}, 200, ""),
        ({"$top": "5000"}, 200, ""),
    ]
    for params, status, text in cases:
        r = _get(http_client, sb, "Property", params={"$filter": SYSTEM, **params})
        assert r.status_code == status, (params, r.text)
        assert status == 200 or text in r.json()["error"]["message"]
    cities = ["Miami", "Doral", "Aventura", "Hialeah", "Coral Gables", "Homestead"]
    five = " or ".join(f"City eq '{c}'" for c in cities[:5])
    six = " or ".join(f"City eq '{c}'" for c in cities)
    ok = _get(http_client, sb, "Property", params={"$filter": f"{SYSTEM} and ({five})"})
    assert ok.status_code == 200
    bad = _get(http_client, sb, "Property", params={"$filter": f"{SYSTEM} and ({six})"})
    assert bad.status_code == 400 and "6 or-terms" in bad.json()["error"]["message"]


def test_mlsgrid_page_semantics_and_mlgcanview(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid", reso_budgets="second=1000", reso_hidden_share=0.05)
    rows, url = [], f"{sb.url}/reso/odata/Property"
    params: dict[str, str] | None = {
        "$filter": SYSTEM,
        "$top": "150",
        "$select": "ListingKey,MlgCanView",
    }
    next_url: str | None = url
    while next_url:
        body = http_client.get(next_url, params=params).json()
        params = None
        assert len(body["value"]) <= 150
        rows += body["value"]
        next_url = body.get("@odata.nextLink")
    keys = [x["ListingKey"] for x in rows]
    assert len(keys) == len(set(keys)) and len(keys) > 300  # $top is the page: nextLink to the end
    hidden = {x["ListingKey"] for x in rows if x["MlgCanView"] is False}
    assert 0.02 * len(keys) < len(hidden) < 0.08 * len(keys)
    visible = _get(
        http_client, sb, "Property",
        params={"$filter": f"{SYSTEM} and MlgCanView eq true", "$top": "5000", "$select": "ListingKey"},
    ).json()["value"]  # fmt: skip
    assert {x["ListingKey"] for x in visible} == set(keys) - hidden


def test_mlsgrid_suspends_the_token_past_a_budget_for_the_rest_of_the_window(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(
        reso_vendor="mlsgrid", reso_budgets="second=1000,hour=5", reso_budget_clock="manual"
    )
    params = {"$filter": SYSTEM, "$top": "10"}
    statuses = [_get(http_client, sb, "Property", params=params).status_code for _ in range(8)]
    assert statuses == [200] * 5 + [429] + [403] * 2
    refused = _get(http_client, sb, "Property", params=params)
    assert "suspended" in refused.json()["error"]["message"]
    assert int(refused.headers["Retry-After"]) > 0
    other = _get(http_client, sb, "Property", params=params, headers={"Authorization": "Bearer b"})
    assert other.status_code == 200  # a budget is per token
    usage = _usage(http_client, sb)["tokens"]["anonymous"]
    assert (usage["requests"], usage["refused_429"], usage["refused_403"]) == (5, 1, 3)
    assert usage["suspended"] and usage["suspended_by"] == "hour" and usage["peak"]["hour"] == 5
    assert all(
        "Bearer" not in label and label != "b" for label in _usage(http_client, sb)["tokens"]
    )
    _usage(http_client, sb, advance=3600)  # the window ends
    assert _get(http_client, sb, "Property", params=params).status_code == 200


def test_mlsgrid_per_second_rate_throttles_without_suspension(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(reso_vendor="mlsgrid", reso_budget_clock="manual")  # 2 requests/s
    params = {"$filter": SYSTEM, "$top": "1"}
    statuses = [_get(http_client, sb, "Property", params=params).status_code for _ in range(4)]
    assert statuses == [200, 200, 429, 429]
    _usage(http_client, sb, advance=1)
    assert _get(http_client, sb, "Property", params=params).status_code == 200
    usage = _usage(http_client, sb)
    assert usage["budgets"]["hour"] == {"seconds": 3600, "limit": 7200}
    assert usage["tokens"]["anonymous"]["peak"]["second"] == 2


def test_mlsgrid_bytes_budget(start_sandbox: Start, http_client: httpx.Client) -> None:
    sb = start_sandbox(
        reso_vendor="mlsgrid",
        reso_budgets="second=1000,bytes_hour=20000",
        reso_budget_clock="manual",
    )
    params = {"$filter": SYSTEM, "$top": "100"}
    first = _get(http_client, sb, "Property", params=params)
    assert first.status_code == 200 and len(first.content) > 20000
    second = _get(http_client, sb, "Property", params=params)
    assert second.status_code == 429 and "bytes_hour" in second.json()["error"]["message"]
    assert _get(http_client, sb, "Property", params=params).status_code == 403
    assert _usage(http_client, sb)["tokens"]["anonymous"]["bytes"] == len(first.content)


def test_trestle_top_cap(start_sandbox: Start, http_client: httpx.Client) -> None:
    sb = start_sandbox(reso_vendor="trestle")
    r = _get(http_client, sb, "Property", params={"$top": "1001"})
    assert r.status_code == 400 and "trestle allows at most 1000" in r.json()["error"]["message"]
    r = _get(http_client, sb, "Property", params={"$top": "300"})
    assert len(r.json()["value"]) == 300 and "$top=300" in r.json()["@odata.nextLink"]
    assert len(_get(http_client, sb, "Property").json()["value"]) == 10


def test_bridge_maxpagesize_cap_and_top_as_collection_size(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(reso_vendor="bridge", listings=1500)
    r = _get(http_client, sb, "Property", headers={"Prefer": "odata.maxpagesize=500"})
    assert r.headers["Preference-Applied"] == "odata.maxpagesize=200"
    assert len(r.json()["value"]) == 200
    rows, next_url = [], f"{sb.url}/reso/odata/Property?$top=450&$select=ListingKey"
    while next_url:
        body = http_client.get(next_url).json()
        assert len(body["value"]) <= 200
        rows += body["value"]
        next_url = body.get("@odata.nextLink")
    assert len(rows) == 450 == len({x["ListingKey"] for x in rows})  # $top bounds the whole answer
    small = _get(http_client, sb, "Property", headers={"Prefer": "odata.maxpagesize=50"})
    assert small.headers["Preference-Applied"] == "odata.maxpagesize=50"
    assert len(small.json()["value"]) == 50
    bad = _get(http_client, sb, "Property", headers={"Prefer": "odata.maxpagesize=lots"})
    assert bad.status_code == 400 and "maxpagesize" in bad.json()["error"]["message"]


def test_spark_page_cap_depends_on_the_replication_role(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(reso_vendor="spark", listings=1500)
    r = _get(http_client, sb, "Property", params={"$top": "26"})
    assert r.status_code == 400 and "without the replication role" in r.json()["error"]["message"]
    assert len(_get(http_client, sb, "Property").json()["value"]) == 25
    role = {"Authorization": f"Bearer {SPARK_REPLICATION_TOKEN}"}
    r = _get(http_client, sb, "Property", params={"$top": "1000"}, headers=role)
    assert r.status_code == 200 and len(r.json()["value"]) == 1000
    assert "$top=1000" in r.json()["@odata.nextLink"]
    assert (
        _get(http_client, sb, "Property", params={"$top": "1001"}, headers=role).status_code == 400
    )


def test_generic_honours_maxpagesize(start_sandbox: Start, http_client: httpx.Client) -> None:
    sb = start_sandbox()
    r = _get(http_client, sb, "Property", headers={"Prefer": "odata.maxpagesize=40"})
    assert (
        r.headers["Preference-Applied"] == "odata.maxpagesize=40" and len(r.json()["value"]) == 40
    )
    assert "Preference-Applied" not in _get(http_client, sb, "Property").headers


def test_protected_mode_needs_a_credential(start_sandbox: Start, http_client: httpx.Client) -> None:
    sb = start_sandbox(protected=True)
    r = _get(http_client, sb, "Property")
    assert r.status_code == 401 and set(r.json()["error"]) == {"code", "message"}
    ok = _get(http_client, sb, "Property", headers={"X-API-Key": "rfk_demo_standard_0001"})
    assert ok.status_code == 200


def test_a_vendor_that_does_not_exist_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert RESO_VENDORS == ("generic", "mlsgrid", "trestle", "bridge", "spark")
    unknown = pytest.raises(ValueError, match="reso_vendor: unknown vendor 'zillow'; allowed: gen")
    with unknown, serve(listings=50, reso_vendor="zillow"):
        pass
    with pytest.raises(SystemExit):
        main(["sandbox", "--reso-vendor", "zillow"])
    assert "unknown RESO vendor 'zillow'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sandbox", "--reso-lookups", "numbers"])
    assert "unknown lookup mode 'numbers'; allowed: string, enum, lookup" in capsys.readouterr().err
    budget = pytest.raises(ValueError, match="reso_budgets: unknown budget 'minute'")
    with budget, serve(listings=50, reso_vendor="mlsgrid", reso_budgets="minute=5"):
        pass


def test_the_command_line_switches_the_vendor(capsys: pytest.CaptureFixture[str]) -> None:
    from realtyframes.cli import build_parser
    from realtyframes.cli.sandbox import _announce, _options

    options = _options(build_parser().parse_args(["sandbox", "--reso-vendor", "mlsgrid"]))
    assert options.reso_vendor == "mlsgrid"
    assert _options(build_parser().parse_args(["sandbox"])).reso_vendor == "generic"
    lookups = _options(build_parser().parse_args(["sandbox", "--reso-lookups", "lookup"]))
    assert lookups.reso_lookups == "lookup"
    assert _options(build_parser().parse_args(["sandbox"])).reso_lookups == "string"
    _announce(options, "http://127.0.0.1:8642")
    assert "RESO Web API (OData v4, mlsgrid rules): http://127.0.0.1:8642/reso/odata" in (
        capsys.readouterr().out
    )


def test_the_face_counts_its_vendor_budgets_not_the_platform_quota(
    start_sandbox: Start, http_client: httpx.Client
) -> None:
    sb = start_sandbox(protected=True, rate_limit=(3, 60.0))
    key = {"X-API-Key": "rfk_demo_standard_0001"}
    for _ in range(5):
        r = _get(http_client, sb, "Property", params={"$top": "1"}, headers=key)
        assert r.status_code == 200 and "RateLimit" not in r.headers
    statuses = [http_client.get(f"{sb.url}/v1/me", headers=key).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
