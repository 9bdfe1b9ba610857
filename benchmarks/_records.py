"""Realistic listing pages for the load benchmarks, made by the sandbox's own store in-process.

Every listing visible in a ``ListingStore`` (found by paging its search over each property type
and status) is turned into its full detail record (``PublicRemarks``, 5-20 ``Media``, every detail
field), and the records are grouped 50 to a page body as ``GET /v1/listings`` sends them:
``{"total","offset","limit","listings":[...]}``, compact JSON. Never timed; built in two processes
and kept in the temp folder (keyed by size, seed and the sandbox's source) for the next run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import realtyframes.sandbox
from realtyframes.sandbox._store import ListingStore

AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
SEED = 7
PAGE = 50
PROPERTY_TYPES = (
    "Residential",
    "Residential Income",
    "Land",
    "Land/Boat Docks",
    "Commercial Sale",
    "Business Opportunity",
    "Residential Lease",
    "Commercial Lease",
)
STATUSES = ("Active", "Active Under Contract", "Pending", "Closed")


def _ids(store: ListingStore, n: int) -> Iterator[str]:
    """ListingIds of the store, by property type and status, up to ``n``."""
    seen = 0
    for ptype in PROPERTY_TYPES:
        for status in STATUSES:
            offset = 0
            while True:
                params = {
                    "PropertyType": ptype,
                    "Status": status,
                    "Limit": str(PAGE),
                    "Offset": str(offset),
                }
                rows = store.search(params)["listings"]
                for row in rows:
                    yield row["ListingId"]
                    seen += 1
                    if seen == n:
                        return
                if len(rows) < PAGE:
                    break
                offset += PAGE


def detail_pages(n: int, *, seed: int = SEED, part: int = 0, parts: int = 1) -> list[bytes]:
    """``n`` distinct listings as detail records, in page bodies of 50 (compact JSON); with
    ``parts`` > 1, only the ``part``-th contiguous share of the pages.

    >>> pages = detail_pages(100)  # doctest: +SKIP
    """
    store = ListingStore(n=n, seed=seed, as_of=AS_OF)
    ids = list(_ids(store, n))
    if len(ids) != n:
        raise RuntimeError(f"the store has {len(ids)} visible listings, not {n}")
    starts = range(0, n, PAGE)
    share = -(-len(starts) // parts)
    pages = []
    for start in starts[part * share : (part + 1) * share]:
        records = [store.detail(i) for i in ids[start : start + PAGE]]
        body = {"total": n, "offset": start, "limit": PAGE, "listings": records}
        pages.append(json.dumps(body, separators=(",", ":")).encode())
    return pages


def write_pages(pages: Sequence[bytes], path: Path) -> None:
    """One body per line (compact JSON bodies have no raw newline)."""
    with open(path, "wb") as fh:
        for body in pages:
            fh.write(body)
            fh.write(b"\n")


def read_pages(path: Path, limit: int | None = None) -> list[bytes]:
    """The (first ``limit``) bodies :func:`write_pages` wrote, read line by line (no second copy
    of the file)."""
    out = []
    with open(path, "rb") as fh:
        for line in fh:
            if limit is not None and len(out) == limit:
                break
            out.append(line.rstrip(b"\n"))
    return out


def _source_digest() -> str:
    folder = Path(realtyframes.sandbox.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):  # the routes/ package too
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def pages_file(n: int, *, seed: int = SEED) -> tuple[Path, float | None]:
    """A file of ``n`` listings' page bodies (see :func:`write_pages`) and the seconds it took to
    build (``None``: reused from an earlier run with the same sandbox source).

    >>> path, seconds = pages_file(200_000)  # doctest: +SKIP
    """
    key = f"{n}-{seed}-{AS_OF:%Y%m%d}-{_source_digest()}"
    path = Path(tempfile.gettempdir()) / f"realtyframes-bench-pages-{key}.ndjson"
    if path.exists():
        return path, None
    t0 = time.perf_counter()
    with ProcessPoolExecutor(2) as pool:
        futures = [pool.submit(detail_pages, n, seed=seed, part=i, parts=2) for i in range(2)]
        pages = [body for f in futures for body in f.result()]
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    write_pages(pages, tmp)
    os.replace(tmp, path)
    return path, time.perf_counter() - t0
