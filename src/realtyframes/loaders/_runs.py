"""Recording runs: every load (:func:`~realtyframes.loaders.run_load`) and sync
(:func:`~realtyframes.loaders.sync_listings`), each watch run and the report command append one
record to the run history of the session's cache (:func:`realtyframes.cache.append_run`).

A run counts the HTTP requests, retries and 429 answers of the session's connection pool between
its start and its end (runs of one client in several threads at once count each other's), takes
rows, quarantine and changes from the result the body returns (``run.result``) or what it sets
on the yielded :class:`Run`, and records a failure with the exception's class name as
``error_code``. A record that cannot be written is a :class:`~realtyframes.errors.CacheWarning`,
never a failed load; a flagged record is a :class:`~realtyframes.errors.RunAnomalyWarning`.

>>> with recorded(client.session, "report", "report", {"City": "Miami"}) as run:  # doctest: +SKIP
...     run.rows = 412
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pyarrow as pa

from realtyframes.cache import append_run, read_runs
from realtyframes.errors import CacheWarning, QueryError, RunAnomalyWarning
from realtyframes.loaders._base import LoadInfo, Session

__all__ = ["Run", "recorded", "run_history"]

logger = logging.getLogger("realtyframes")

#: Change kinds of a sync that are not "changed" (they have their own columns).
_OWN_KINDS = ("new", "removed")


@dataclass
class Run:
    """What the body of :func:`recorded` fills in: the ``result`` of a load or a sync, or
    ``rows`` / ``quarantined`` / ``counts`` (these win over the result's)."""

    result: LoadInfo | None = None

    rows: int | None = None
    quarantined: int | None = None
    counts: dict[str, Any] = field(default_factory=dict)
    #: Set by a body that ends without an exception yet failed (a watch whose message was not
    #: delivered, or whose scope stayed busy): the class name recorded as ``error_code``.
    failure: str | None = None
    record: dict[str, Any] | None = None  # the record written, once the run is over


def _from_load(info: LoadInfo | None, kind: str) -> dict[str, Any]:
    """Rows, quarantine and (syncs) new / changed / removed from a load's report."""
    if info is None:
        return {}
    found: dict[str, Any] = {
        "rows": info.rows,
        "quarantined": info.quarantined,
        "from_cache": info.from_cache,
    }
    changes = info.changes
    if kind == "sync" and changes is not None and "change" in changes:
        kinds = changes["change"].astype("str")
        found["new"] = int((kinds == "new").sum())
        found["removed"] = int((kinds == "removed").sum())
        found["changed"] = int(changes.loc[~kinds.isin(_OWN_KINDS), "ListingId"].nunique())
    return found


@contextmanager
def recorded(
    session: Session, kind: str, resource: str, scope: Mapping[str, Any] | None
) -> Iterator[Run]:
    """Record the block as one run of ``kind`` on ``resource`` with ``scope`` for ``session``
    (nothing when it keeps no cache; a QueryError, refused before any request, is no run)."""
    run = Run()
    cache = session.cache
    if cache is None:
        yield run
        return
    api = session.api
    before = api.request_counts()
    started = datetime.now(UTC)
    outcome, error_code, refused = "ok", None, False
    try:
        yield run
    except QueryError:
        refused = True
        raise
    except BaseException as exc:
        outcome, error_code = "failed", type(exc).__name__
        raise
    finally:
        if not refused:
            info = run.result
            fields = _from_load(info, kind)
            resumed = info.resumed_from if info is not None else None
            if run.rows is not None:
                fields["rows"] = run.rows
            if run.quarantined is not None:
                fields["quarantined"] = run.quarantined
            fields.update(run.counts)
            spent = api.request_counts() - before
            if outcome == "ok" and run.failure is not None:
                outcome, error_code = "failed", run.failure
            run.record = _append(
                cache.root,
                kind=kind,
                resource=resource,
                scope=scope,
                started=started,
                finished=datetime.now(UTC),
                host=api.cache_host(),
                account=api.fingerprint,
                outcome=outcome,
                error_code=error_code,
                resumed_from=None if resumed is None else resumed.isoformat(),
                requests=spent.requests,
                retries=spent.retries,
                throttled=spent.throttled,
                **(fields if outcome == "ok" else {}),
            )


def _append(root: Any, **fields: Any) -> dict[str, Any] | None:
    """:func:`append_run`; a failure to write is a warning (the load itself succeeded)."""
    try:
        record = append_run(root, **fields)
    except (OSError, pa.ArrowException) as exc:
        warnings.warn(
            f"could not append to the run history in {root}/runs ({type(exc).__name__}: {exc})",
            CacheWarning,
            stacklevel=4,
        )
        return None
    if record["anomaly"]:
        warnings.warn(
            f"{record['kind']} of {record['resource']} {record['scope']}: {record['anomaly']} "
            "(see client.runs())",
            RunAnomalyWarning,
            stacklevel=4,
        )
    return record


def run_history(session: Session, *, last: int | None = None, failed: bool = False) -> pd.DataFrame:
    """The run history of the session's cache, oldest first; ``last=N`` keeps the N latest,
    ``failed=True`` only failed runs (``rf.Client.runs``).

    >>> run_history(client.session, last=3)  # doctest: +SKIP
    """
    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 0):
        raise QueryError("last", f"{last!r} is not a count", "an int >= 0, or None")
    if not isinstance(failed, bool):
        raise QueryError("failed", f"{failed!r} is not a flag", "True or False")
    frame = read_runs(session.own_cache("runs").root)
    if failed:
        frame = frame[frame["outcome"] == "failed"]
    if last is not None:
        frame = frame.iloc[max(0, len(frame) - last) :]
    return frame.reset_index(drop=True)
