"""Each fault option against a running server; faults stay off the admin routes and the docs."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from realtyframes.sandbox import Faults, validate_faults
from realtyframes.sandbox._faults import BAD_RECORD_KINDS, bad_record_kind, corrupt_record


def test_latency_is_added(start_sandbox) -> None:
    latency = 0.4
    sb = start_sandbox(latency_ms=latency * 1000)

    def fastest(http: httpx.Client, path: str) -> float:
        """The quickest of three answers (load on the machine only ever adds time)."""
        times = []
        for _ in range(3):
            started = time.perf_counter()
            assert http.get(path).status_code == 200
            times.append(time.perf_counter() - started)
        return min(times)

    with httpx.Client(base_url=sb.url) as http:
        http.get("/_sandbox/clock")  # connect first
        with_fault = fastest(http, "/v1/me")
        spared = fastest(http, "/_sandbox/clock")  # admin routes get no latency
    assert with_fault >= latency - 0.005  # never sooner than the added latency
    assert with_fault - spared >= latency / 2, (with_fault, spared)  # generous margin


def test_burst_429_every_n_requests(start_sandbox) -> None:
    sb = start_sandbox(faults=Faults(burst_429=2, burst_every=5, retry_after=3))
    with httpx.Client(base_url=sb.url) as http:
        answers = [http.get("/v1/me") for _ in range(10)]
        assert [r.status_code for r in answers] == [200, 200, 200, 429, 429] * 2
        refused = answers[3]
        assert refused.headers["Retry-After"] == "3"
        assert refused.json()["error"]["code"] == "rate_limit_exceeded"
        assert refused.headers["X-RateLimit-Remaining"] == "0"
        assert refused.headers["RateLimit"].endswith("remaining=0, reset=3")
        assert http.get("/openapi.json").status_code == 200  # not a data route
    assert sb.admin.faults.burst_429 == 4


def test_dropped_connection_mid_body(start_sandbox) -> None:
    sb = start_sandbox(faults=Faults(drop_rate=1.0))
    with httpx.Client(base_url=sb.url) as http:
        for _ in range(2):
            with pytest.raises(httpx.RemoteProtocolError):
                http.get("/v1/listings")
        assert http.get("/_sandbox/clock").status_code == 200  # the server survives
    assert sb.admin.faults.drops == 2


def test_truncated_json_body(start_sandbox, http_client: httpx.Client) -> None:
    sb = start_sandbox(faults=Faults(truncate_rate=1.0))
    response = http_client.get(f"{sb.url}/v1/listings")
    assert response.status_code == 200
    assert int(response.headers["content-length"]) == len(response.content) > 0
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.content)
    assert sb.admin.faults.truncated == 1


def test_nonjson_html_502(start_sandbox, http_client: httpx.Client) -> None:
    sb = start_sandbox(faults=Faults(nonjson_rate=1.0))
    response = http_client.get(f"{sb.url}/v1/analytics")
    assert response.status_code == 502
    assert response.headers["content-type"].startswith("text/html")
    assert "502 Bad Gateway" in response.text and "nginx" in response.text
    assert "X-RateLimit-Remaining" in response.headers
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_error_rate_share_is_about_right_and_deterministic(start_sandbox) -> None:
    def statuses(url: str) -> list[int]:
        with httpx.Client(base_url=url) as http:
            return [http.get("/v1/me").status_code for _ in range(80)]

    first = start_sandbox(faults=Faults(error_rate=0.25))
    second = start_sandbox(faults=Faults(error_rate=0.25))
    a, b = statuses(first.url), statuses(second.url)
    assert a == b  # same seed, same request sequence, same faults
    failures = sum(s != 200 for s in a)
    assert 8 <= failures <= 35
    assert set(a) <= {200, 500, 502, 503}


def test_drift_inserts_listings_on_each_search_page(start_sandbox) -> None:
    sb = start_sandbox(faults=Faults(drift=3))
    with httpx.Client(base_url=sb.url) as http:
        totals = [http.get("/v1/listings", params={"Limit": 5}).json()["total"] for _ in range(3)]
        http.get("/v1/me")  # not a search: no drift
        after = http.get("/v1/listings", params={"Limit": 5}).json()["total"]
        counts = http.get("/_sandbox/faults").json()  # served after the last page's insertion
    # each search page served inserts 3 new Active Residential listings after it is sent
    assert [t - totals[0] for t in totals] == [0, 3, 6]
    assert after == totals[0] + 9
    assert counts["drift_inserted"] == 12


def test_bad_records_are_corrupted_deterministically(start_sandbox) -> None:
    sb = start_sandbox(faults=Faults(bad_records=0.3))
    with httpx.Client(base_url=sb.url) as http:
        page = http.get("/v1/listings", params={"Limit": 50}).json()
        again = http.get("/v1/listings", params={"Limit": 50}).json()
    assert page == again  # the same records are corrupted the same way
    records = page["listings"]
    broken = [
        r
        for r in records
        if r["ListingId"] is None
        or r["ListPrice"] < 0
        or r.get("BedroomsTotal") == 999
        or (r.get("coordinates") or {}).get("lat") == 200.0
        or (r.get("ClosePrice") is not None and r["StandardStatus"] != "Closed")
        or r.get("PostalCode") == "3X1-"
    ]
    counters = sb.admin.faults
    assert counters.bad_records == 2 * len(broken)
    assert 5 <= len(broken) <= 30
    assert len(counters.bad_record_kinds) >= 3  # the kinds vary


def test_faults_spare_admin_and_openapi(start_sandbox) -> None:
    sb = start_sandbox(faults=Faults(error_rate=1.0, drop_rate=1.0))
    with httpx.Client(base_url=sb.url) as http:
        assert http.get("/_sandbox/clock").status_code == 200
        assert http.get("/openapi.json").status_code == 200
        assert http.get("/").status_code == 200
        counts = http.get("/_sandbox/faults").json()
    assert counts["requests"] == 0


def test_bad_record_helpers() -> None:
    kinds = {bad_record_kind(1, f"L{i}", 1.0) for i in range(200)}
    assert kinds == set(BAD_RECORD_KINDS)
    shares = sum(bad_record_kind(1, f"L{i}", 0.1) is not None for i in range(2000))
    assert 140 <= shares <= 260
    record = {
        "ListingId": "A",
        "ListPrice": 500000.0,
        "StandardStatus": "Closed",
        "ClosePrice": 1.0,
    }
    assert corrupt_record(record, "close_price_not_closed")["ListPrice"] < 0
    assert record["ListPrice"] == 500000.0  # a copy


@pytest.mark.parametrize(
    "faults",
    [
        Faults(error_rate=-0.1),
        Faults(drop_rate=1.5),
        Faults(burst_every=0),
        Faults(burst_429=5, burst_every=2),
    ],
)
def test_invalid_faults_refused(faults: Faults) -> None:
    with pytest.raises(ValueError, match="faults: "):
        validate_faults(faults)
