"""History backfill: what the first ``sync_listings`` pays for a market's full change history.

Baseline measured in the same run, on the same sandbox at the same clock: the first sync of the same
scope with ``history_since=False`` (the market only, no history). Reported: requests by kind (an
httpx event hook), wall time, history rows and the span they cover, and the ratios.
Command: ``.venv/bin/python benchmarks/run_all.py backfill``
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from _util import table

from realtyframes import Client
from realtyframes.sandbox import serve

AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
LISTINGS = 50_000
SCOPE = {"PropertyType": "Residential", "City": "Miami"}


def _first_sync(url: str, history_since: Any) -> dict[str, Any]:
    kinds: Counter[str] = Counter()

    def on_request(request: httpx.Request) -> None:
        kinds["feed" if request.url.path.endswith("/changes") else "search"] += 1

    with (
        tempfile.TemporaryDirectory(prefix="rf-bench-backfill-") as tmp,
        Client(
            base_url=url,
            cache_dir=Path(tmp),
            progress=False,
            event_hooks={"request": [on_request]},
        ) as client,
    ):
        t0 = time.perf_counter()
        market = client.sync_listings(history_since=history_since, **SCOPE)
        seconds = time.perf_counter() - t0
        history = client.listing_history(**SCOPE)
    span = (
        (history["ChangeTimestamp"].max() - history["ChangeTimestamp"].min()).days
        if len(history)
        else 0
    )
    return {
        "rows": len(market),
        "requests": sum(kinds.values()),
        "kinds": dict(kinds),
        "seconds": seconds,
        "history": len(history),
        "span": span,
    }


def run() -> str:
    with serve(listings=LISTINGS, seed=7, as_of=AS_OF) as url:
        _first_sync(url, False)  # warm-up: imports and the server's first answers
        without = _first_sync(url, False)
        with_ = _first_sync(url, None)
    rows = []
    for label, got in (("market only (`history_since=False`)", without), ("with backfill", with_)):
        rows.append(
            [
                label,
                f"{got['rows']:,}",
                f"{got['requests']:,} ({', '.join(f'{k} {v}' for k, v in sorted(got['kinds'].items()))})",
                f"{got['seconds']:.2f} s",
                f"{got['history']:,}",
                f"{got['span']} days",
            ]
        )
    ratio_requests = with_["requests"] / without["requests"]
    ratio_time = with_["seconds"] / without["seconds"]
    return "\n".join(
        [
            "## History backfill of a first sync",
            "",
            "Command: `.venv/bin/python benchmarks/run_all.py backfill`. Sandbox of "
            f"{LISTINGS:,} listings (seed 7, clock {AS_OF:%Y-%m-%d}), scope `{SCOPE}`, first sync "
            "into an empty cache; baseline: the same first sync with `history_since=False`, "
            "same run.",
            "",
            table(
                ["first sync", "listings", "requests", "time", "history rows", "history span"],
                rows,
            ),
            "",
            f"The backfill costs **{ratio_requests:.2f}×** the requests and **{ratio_time:.2f}×** "
            "the time of the market alone, once per scope; later syncs do not repeat it.",
        ]
    )
