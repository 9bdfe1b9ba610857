"""One load, top to bottom: :func:`run_load` validates the call and records the run
(:func:`recorded`), :func:`load` answers it from the cache or fetches, validates and stores it.

1. ``run_load``: :func:`prepare_call` validates the call (QueryError before any request); the
   load is one run of the run history (:func:`recorded`: requests, retries and 429s counted on
   the session's pool; rows, quarantine and changes from ``run.result``; a failure by its
   exception's class; a record not written is a CacheWarning, a flagged one a RunAnomalyWarning);
2. ``load``: the cache key (:func:`cache_key`); a fresh entry answers with zero requests;
3. on a miss, the endpoint's fetch (:mod:`._fetch`) runs with a checkpoint (:mod:`._resume`);
4. every frame is validated, invalid rows to the quarantine (:func:`_check`);
5. the result is stored with its companions (:func:`_store`) and returned (a ``LoadResult``).

>>> result = run_load(session, ENDPOINTS["listings"], {"City": "Miami"}, max_results=100)  # doctest: +SKIP
>>> result.frame, result.requests  # doctest: +SKIP
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

from realtyframes.api import caller_level as _caller_level
from realtyframes.cache import Checkpoint, append_run
from realtyframes.errors import (
    CacheLockTimeout,
    CacheWarning,
    DataQualityWarning,
    QueryError,
    RunAnomalyWarning,
)
from realtyframes.loaders._base import (
    Call,
    Endpoint,
    Loaded,
    LoadInfo,
    LoadResult,
    Session,
    ids_in,
    parquet_safe,
    validate_frame,
)
from realtyframes.loaders._checkers import prepare_call
from realtyframes.loaders._checks import check_flag, check_on_invalid
from realtyframes.loaders._resume import run_resumable
from realtyframes.schemas import OnInvalid, give_back_memory

logger = logging.getLogger("realtyframes.loaders")

__all__ = ["Run", "cache_key", "load", "recorded", "run_load"]

#: Companions of an entry that are the load's own (the others are members of the result).
_OWN_EXTRAS = ("quarantine", "media")


def run_load(
    session: Session,
    endpoint: Endpoint,
    params: Mapping[str, Any],
    *,
    refresh: bool = False,
    on_invalid: OnInvalid | None = None,
    **options: Any,
) -> LoadResult:
    """Load ``endpoint`` with ``params`` (spec names, path identifiers too) and the loader's
    ``options`` (the endpoint declares which): validated (QueryError before any request), then
    :func:`load`, recorded as one run. ``on_invalid`` None: the session's.

    >>> result = run_load(session, ENDPOINTS["listings"], {"City": "Miami"}, max_results=100)  # doctest: +SKIP
    >>> result.frame, result.requests  # doctest: +SKIP
    """
    resource = _resource(endpoint)
    mode = session.on_invalid if on_invalid is None else check_on_invalid(on_invalid)
    scope = {**params, **{k: v for k, v in options.items() if v not in (None, False)}}
    if mode != "quarantine":  # other rows: another scope, as in the cache key
        scope["on_invalid"] = mode
    with recorded(session, "load", resource, scope) as run:
        call = prepare_call(endpoint, params, options)
        refresh = check_flag("refresh", refresh)
        run.result = result = load(session, endpoint, call, refresh=refresh, on_invalid=mode)
    return result


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


def load(
    session: Session,
    endpoint: Endpoint,
    call: Call,
    *,
    refresh: bool = False,
    on_invalid: OnInvalid = "quarantine",
) -> LoadResult:
    """A validated ``call`` of ``endpoint``: the cache's fresh entry, else fetch + validate +
    store; returns the valid frame with its report, a :class:`LoadResult`.

    A fresh cache entry answers with zero requests (``refresh`` skips it). On a miss the
    fetched frame (and each member frame) is validated (``on_invalid``), rows short of the
    server's total are reported, and the result is written with its ``quarantine``, ``media``
    and member companions. ``requests`` counts those made to check a resumed checkpoint.
    """
    resource = _resource(endpoint)
    cache = session.cache
    key = cache_key(session, endpoint, call, on_invalid) if cache is not None else None
    if key is not None and not refresh:
        cached = _from_cache(session, resource, key)
        if cached is not None:
            return cached
    fetched_at = datetime.now(UTC)
    fetch = endpoint.fetch
    assert fetch is not None

    def run(checkpoint: Checkpoint | None) -> Loaded:
        return fetch(session, endpoint, call, checkpoint)

    scope = {"resource": resource, "operation": endpoint.name, "key": key}
    resumed = run_resumable(cache, resource, key, scope, refresh=refresh, run=run, api=session.api)
    loaded = resumed.value
    checked = _check(endpoint, loaded, on_invalid)
    # a resumed load's data is as old as its first page
    fetched_at = resumed.resumed_from or fetched_at
    if key is not None:
        _store(session, endpoint, call, key, loaded, checked, fetched_at)
    if resumed.checkpoint is not None:
        resumed.checkpoint.done()  # stored (or returned uncached): nothing left to resume
    return LoadResult(
        resource=resource,
        rows=len(checked.valid),
        quarantined=len(checked.quarantined),
        requests=loaded.requests + resumed.checks,
        from_cache=False,
        fetched_at=fetched_at,
        total=loaded.total,
        warnings=tuple(checked.messages),
        quarantine=checked.quarantined,
        media=checked.media,
        key=key,
        resumed_requests=resumed.reused,
        resumed_from=resumed.resumed_from,
        frame=checked.valid,
        members=checked.members,
        meta=dict(loaded.meta),
    )


def _resource(endpoint: Endpoint) -> str:
    if endpoint.resource is None or endpoint.fetch is None:
        raise ValueError(f"{endpoint.name} is not a loader endpoint (raw JSON: ApiClient.call)")
    return endpoint.resource


def cache_key(session: Session, endpoint: Endpoint, call: Call, on_invalid: OnInvalid) -> str:
    """The entry key: host + operation + the call's normalised key parameters (+ ``on_invalid``
    unless the default) + the account's fingerprint (never a secret)."""
    assert session.cache is not None
    params = dict(call.key_params)
    if on_invalid != "quarantine":  # other modes keep other rows: their own entries
        params["on_invalid"] = on_invalid
    return session.cache.key(
        host=session.api.cache_host(endpoint.host),
        operation=endpoint.name,
        params=params,
        account=session.api.fingerprint,
    )


def _from_cache(session: Session, resource: str, key: str) -> LoadResult | None:
    """The fresh cache entry ``key`` of ``resource`` (zero requests), else None."""
    cache = session.cache
    assert cache is not None
    entry = cache.read(resource, key)
    if entry is None or not cache.is_fresh(entry):
        return None
    meta = entry.meta
    logger.debug("cache hit %s/%s (%d rows)", resource, key, len(entry.frame))
    return LoadResult(
        resource=resource,
        rows=len(entry.frame),
        quarantined=int(meta.get("quarantined") or 0),
        requests=0,
        from_cache=True,
        fetched_at=entry.fetched_at,
        total=meta.get("total"),
        warnings=tuple(meta.get("load_warnings") or ()),
        quarantine=entry.extra.get("quarantine", pd.DataFrame()),
        media=entry.extra.get("media"),
        key=key,
        frame=entry.frame,
        members={k: v for k, v in entry.extra.items() if k not in _OWN_EXTRAS},
        meta=dict(meta),
    )


@dataclass
class _Checked:
    """A fetched result after validation: valid rows, valid members, quarantine, messages."""

    valid: pd.DataFrame
    members: dict[str, pd.DataFrame]
    quarantined: pd.DataFrame
    messages: list[str]
    media: pd.DataFrame | None


def _check(endpoint: Endpoint, loaded: Loaded, on_invalid: OnInvalid) -> _Checked:
    """Validate the frame against ``endpoint.model`` and each member against its own
    (``on_invalid``); report quarantined and missing
    rows. Quarantined rows of member frames carry a ``_member`` column."""
    messages = list(loaded.warnings)
    fetched = len(loaded.frame)
    valid, quarantined = validate_frame(loaded.frame, endpoint.model, on_invalid)
    members: dict[str, pd.DataFrame] = {}
    if loaded.members:
        parts = [quarantined.assign(_member=endpoint.resource)] if len(quarantined) else []
        for name, (member, model) in loaded.members.items():
            members[name], bad = validate_frame(member, model, on_invalid)
            fetched += len(member)
            if len(bad):
                parts.append(bad.assign(_member=name))
        if parts:
            quarantined = pd.concat(parts, ignore_index=True)
    if len(quarantined):
        messages.append(
            f"{endpoint.resource}: {len(quarantined)} of {fetched} rows quarantined "
            "(see client.last_load.quarantine, column _quarantine_reason)"
        )
    if loaded.expected is not None and fetched < loaded.expected and not loaded.warnings:
        message = (
            f"{endpoint.resource}: {fetched} rows received but the server's total promises "
            f"{loaded.expected}; {loaded.expected - fetched} are missing"
        )
        messages.append(message)
        _warn(message)
    media = loaded.media
    if media is not None and len(quarantined) and "ListingId" in media:
        media = media.loc[ids_in(media["ListingId"], valid["ListingId"])].reset_index(drop=True)
    return _Checked(valid, members, quarantined, messages, media)


def _store(
    session: Session,
    endpoint: Endpoint,
    call: Call,
    key: str,
    loaded: Loaded,
    checked: _Checked,
    at: datetime,
) -> None:
    """Write the valid frame with its companions; a cache that cannot be written is a warning."""
    cache, api = session.cache, session.api
    assert cache is not None
    companions: dict[str, pd.DataFrame] = {"quarantine": parquet_safe(checked.quarantined)}
    if checked.media is not None:
        companions["media"] = checked.media
    companions.update(checked.members)
    meta = {
        "host": api.cache_host(endpoint.host),
        "operation": endpoint.name,
        "params": dict(call.key_params),
        "account": api.fingerprint,
        "fetched_at": at,
        "total": loaded.total,
        "requests": loaded.requests,
        "load_warnings": list(checked.messages),
        **loaded.meta,
    }
    give_back_memory()  # what fetching and validating freed, before the write needs more
    try:
        cache.write(_resource(endpoint), key, checked.valid, meta, extra_frames=companions)
    except (OSError, CacheLockTimeout, pa.ArrowException) as exc:
        _warn(
            f"could not store {endpoint.resource} in the cache at {cache.root} "
            f"({type(exc).__name__}: {exc}); the data is returned uncached",
            CacheWarning,
        )


def _warn(message: str, category: type[Warning] = DataQualityWarning) -> None:
    warnings.warn(message, category, stacklevel=_caller_level())
