"""The run history: one row per load, sync, report or watch run in the ``runs`` table of the
cache's state database, appended in one transaction and flagged against the previous run of its
scope (:func:`anomaly`); docs/cache.md, "The run history".

>>> record = append_run("data/cache", kind="watch", resource="market", scope={"City": "Miami"},
...                     rows=1506, outcome="ok")  # doctest: +SKIP
>>> read_runs("data/cache").tail(1)  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._version import __version__
from realtyframes.cache._entries import REDACTED, SECRET_PARAM, normalise_params, plain_host
from realtyframes.cache._runs_table import (
    _INTS,
    RUN_COLUMNS,
    frame_of,
    insert_record,
    stamp,
    time_text,
)
from realtyframes.cache._state import connect, select, transaction

__all__ = [
    "QUARANTINE_JUMP",
    "ROW_DROP_MIN",
    "ROW_DROP_SHARE",
    "RUNS",
    "RUN_COLUMNS",
    "RUN_KINDS",
    "anomaly",
    "append_run",
    "read_runs",
    "scope_key",
]

#: The table of the run history in the cache's state database (the folder of realtyframes 0.7's
#: run records, moved into it by the first open).
RUNS = "runs"
#: What appends records.
RUN_KINDS = ("load", "sync", "report", "watch")
#: A run whose rows fall by more than this share of the previous run of its scope is flagged.
ROW_DROP_SHARE = 0.20
#: ... when that previous run had at least this many rows (smaller scopes swing by chance).
ROW_DROP_MIN = 20
#: A run whose quarantined share of rows rises by more than this (absolute) is flagged.
QUARANTINE_JUMP = 0.05


def scope_text(scope: Mapping[str, Any] | None) -> str:
    """The scope as sorted JSON: values normalised as in cache keys, credential-like names
    ``<redacted>``, id lists longer than 10 as their count and a digest.

    >>> scope_text({"City": "Miami", "Pool": True, "api_key": "s3cret"})
    '{"City": "Miami", "Pool": "true", "api_key": "<redacted>"}'
    >>> "50 ids sha256:" in scope_text({"ListingIds": [str(i) for i in range(50)]})
    True
    """
    shown: dict[str, Any] = {}
    for name, value in dict(scope or {}).items():
        if SECRET_PARAM.search(str(name)):
            shown[name] = REDACTED
        elif isinstance(value, list | tuple | set | frozenset) and len(value) > 10:
            items = sorted(str(v) for v in value)
            digest = hashlib.sha256(",".join(items).encode()).hexdigest()[:16]
            shown[name] = f"{len(items)} ids sha256:{digest}"
        else:
            shown[name] = value
    return json.dumps(normalise_params(shown), sort_keys=True)


def scope_key(kind: str, resource: str, scope: str, host: str | None, account: str | None) -> str:
    """What makes two runs "the same scope": kind, resource, scope, host and account (16 hex).

    >>> len(scope_key("load", "listings", '{"City": "Miami"}', "https://h", "acct"))
    16
    """
    text = json.dumps([kind, resource, scope, host, account])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_runs(root: str | os.PathLike[str]) -> pd.DataFrame:
    """Every run record under the cache ``root``, oldest first (an empty frame with
    :data:`RUN_COLUMNS` when there is none). Reading creates nothing (but moves the run
    records of a cache of realtyframes 0.7 into the database once).

    >>> read_runs("data/cache")[["started", "kind", "resource", "requests", "outcome"]]  # doctest: +SKIP
    """
    query = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs ORDER BY started, run_id"
    return frame_of(select(Path(root).expanduser(), query))


def anomaly(record: Mapping[str, Any], last: Mapping[str, Any] | None) -> str | None:
    """Why ``record`` is flagged against ``last``, the latest successful run of its scope with
    rows, not dated in the future (:func:`_latest_ok`), or None: rows down by more than
    :data:`ROW_DROP_SHARE` (when ``last`` had :data:`ROW_DROP_MIN` rows or more), the quarantined
    share of rows up by more than :data:`QUARANTINE_JUMP`.

    >>> anomaly({"outcome": "ok", "rows": 70, "quarantined": 0}, {"rows": 100, "quarantined": 0})
    'rows fell 30% against the previous run of this scope (100 -> 70; flagged above 20%)'
    """
    if record.get("outcome") != "ok" or record.get("rows") is None or last is None:
        return None
    rows, before = int(record["rows"]), int(last["rows"])
    found = []
    if before >= ROW_DROP_MIN and before - rows > ROW_DROP_SHARE * before:
        found.append(
            f"rows fell {(before - rows) / before:.0%} against the previous run of this scope "
            f"({before} -> {rows}; flagged above {ROW_DROP_SHARE:.0%})"
        )
    quarantined = int(record.get("quarantined") or 0)
    then = int(last["quarantined"] or 0)
    share = quarantined / (rows + quarantined) if rows + quarantined else 0.0
    share_before = then / (before + then) if before + then else 0.0
    if share - share_before > QUARANTINE_JUMP:
        found.append(
            f"quarantined share rose from {share_before:.1%} to {share:.1%} "
            f"(flagged above +{QUARANTINE_JUMP:.0%})"
        )
    return "; ".join(found) or None


def append_run(
    root: str | os.PathLike[str],
    *,
    kind: str,
    resource: str,
    scope: Mapping[str, Any] | None = None,
    started: datetime | None = None,
    finished: datetime | None = None,
    host: str | None = None,
    account: str | None = None,
    outcome: str = "ok",
    error_code: str | None = None,
    resumed_from: str | None = None,
    **counts: Any,
) -> dict[str, Any]:
    """Append one run record to the history under the cache ``root`` and return it (with its
    ``anomaly``, compared with the previous successful run of the same scope). ``kind``: one of
    :data:`RUN_KINDS`; ``outcome``: ``"ok"`` or ``"failed"``; ``error_code``: the exception's
    class name or the exit code. ``counts``: ``requests``, ``retries``, ``throttled``, ``rows``,
    ``quarantined``, ``new``, ``changed``, ``removed`` (None: unknown) and ``from_cache``.
    ``host`` loses any user and password; scope values with credential-like names are
    redacted. The record is committed whole, in one transaction.

    >>> append_run(client.dataset_path("listings").parent, kind="watch", resource="market",
    ...            scope={"City": "Miami"}, rows=1506, new=3, changed=5, removed=0)  # doctest: +SKIP
    """
    if kind not in RUN_KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {', '.join(RUN_KINDS)}")
    if outcome not in ("ok", "failed"):
        raise ValueError(f"outcome: {outcome!r} is not 'ok' or 'failed'")
    unknown = set(counts) - {*_INTS, "from_cache"}
    if unknown:
        raise TypeError(f"append_run: unexpected fields {sorted(unknown)}")
    text = scope_text(scope)
    host = plain_host(host)
    record: dict[str, Any] = {
        "run_id": secrets.token_hex(8),
        "started": stamp(started),
        "finished": stamp(finished),
        "kind": kind,
        "resource": resource,
        "scope": text,
        "scope_key": scope_key(kind, resource, text, host, account),
        "host": host,
        "account": account,
        **{name: None if counts.get(name) is None else int(counts[name]) for name in _INTS},
        "from_cache": bool(counts.get("from_cache", False)),
        "outcome": outcome,
        "error_code": error_code,
        "anomaly": None,
        "toolkit_version": __version__,
        "resumed_from": resumed_from,
    }
    with connect(Path(root).expanduser()) as db, transaction(db):
        record["anomaly"] = anomaly(record, _latest_ok(db, record["scope_key"]))
        insert_record(db, record)
    return record


def _latest_ok(db: sqlite3.Connection, key: str) -> dict[str, Any] | None:
    """The latest successful record of scope ``key`` with rows, not dated in the future: a
    record from a clock set ahead (or a bad ``started=``) is never a baseline."""
    row = db.execute(
        "SELECT rows, quarantined FROM runs WHERE scope_key = ? AND outcome = 'ok'"
        " AND rows IS NOT NULL AND started <= ? ORDER BY started DESC, run_id DESC LIMIT 1",
        (key, time_text(datetime.now(UTC))),
    ).fetchone()
    return None if row is None else {"rows": row[0], "quarantined": row[1]}
