"""Sandbox: start-up time and filtered search latency at 200,000 listings.

Goal (issue 2): a filtered search page at 200,000 listings has p50 under 50 ms on a 2-core machine.
Baseline measured in the same run: the index document (`GET /v1`), i.e. the bare HTTP round trip of
the same server and client, so the ratio shows what the search itself costs.
Command: ``.venv/bin/python benchmarks/run_all.py sandbox``
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import httpx
from _util import ms, pct, table, timed

from realtyframes.sandbox import serve

N = 200_000
AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
QUERIES: list[dict[str, str]] = [
    {"PropertyType": "Residential", "Status": "Active", "Limit": "50"},
    {"City": "Miami Beach", "MinListPrice": "500000", "MaxListPrice": "2000000", "Limit": "50"},
    {
        "PropertyType": "Residential Lease",
        "MinBedroomsTotal": "2",
        "Pool": "true",
        "Sort": "-listdate",
        "Limit": "50",
    },
    {"Status": "Closed", "City": "Boca Raton", "Sort": "listprice", "Offset": "200", "Limit": "50"},
    {
        "Subtypes": "Condominium,Townhouse",
        "Waterfront": "true",
        "MaxDaysOnMarket": "90",
        "Limit": "50",
    },
]
REPEAT = 40


def run() -> str:
    rows = []
    for n in (5_000, N):
        t0 = time.perf_counter()
        with serve(listings=n, seed=7, as_of=AS_OF) as url:
            startup = time.perf_counter() - t0
            with httpx.Client(base_url=url, timeout=30) as http:
                http.get("/v1").raise_for_status()
                base = timed(lambda: http.get("/v1").raise_for_status(), REPEAT * 2)
                lat = []
                for q in QUERIES:
                    http.get("/v1/listings", params=q).raise_for_status()
                    lat += timed(
                        lambda q=q: http.get("/v1/listings", params=q).raise_for_status(), REPEAT
                    )
        rows.append(
            [
                f"{n:,}",
                f"{startup:.2f} s",
                ms(pct(base, 50)),
                ms(pct(lat, 50)),
                ms(pct(lat, 95)),
                f"{pct(lat, 50) / pct(base, 50):.1f}x",
            ]
        )
    return (
        "## Sandbox: start-up and filtered search\n\n"
        "Command: `.venv/bin/python benchmarks/run_all.py sandbox`. "
        f"{len(QUERIES)} filtered queries x {REPEAT} requests over one keep-alive connection; "
        "baseline = `GET /v1` (index document) on the same server in the same run. "
        "Goal: search p50 < 50 ms at 200,000 listings.\n\n"
        + table(
            [
                "listings",
                "start-up (build data + serve)",
                "baseline p50",
                "search p50",
                "search p95",
                "search / baseline",
            ],
            rows,
        )
        + "\n"
    )


if __name__ == "__main__":
    print(run())
