"""One load, top to bottom: :func:`run_load` validates the call, :func:`load` answers it from the
cache or fetches, validates and stores it.

1. ``run_load(session, endpoint, params, **options)``: the endpoint's :meth:`~Endpoint.call`
   refuses paging parameters, validates the filters (``api``), checks the loader's options once
   (:mod:`._checks`) and builds the cache key's parameters: QueryError before any request; the
   load is one run of the run history (:mod:`._runs`);
2. ``load(session, endpoint, call)``: the cache key (:func:`cache_key`); a fresh entry answers
   with zero requests (:func:`_from_cache`);
3. on a miss, the endpoint's fetch strategy (:mod:`._fetch`) runs with a checkpoint
   (:mod:`._resume`), shaping raw bodies into frames;
4. every frame is validated against its model, invalid rows to the quarantine (:func:`_check`);
5. the result is stored with its companions (:func:`_store`) and returned: a
   :class:`~realtyframes.loaders._base.LoadResult`.

Beside ``run_load``, what ``rf.Client``'s data methods need: the change feed's parameters from an
id list or Series (:func:`changes_params`), the analytics load, whose result is several frames
(:func:`load_analytics`), and where a resource's dataset is (:func:`dataset_path`).

>>> result = run_load(session, ENDPOINTS["listings"], {"City": "Miami"}, max_results=100)  # doctest: +SKIP
>>> result.frame, result.requests  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from realtyframes.api import caller_level as _caller_level
from realtyframes.api import refuse_none
from realtyframes.cache import Checkpoint
from realtyframes.errors import CacheLockTimeout, CacheWarning, DataQualityWarning, QueryError
from realtyframes.loaders._base import (
    Loaded,
    LoadResult,
    Session,
    ids_in,
    parquet_safe,
    validate_frame,
)
from realtyframes.loaders._checks import check_flag, check_on_invalid
from realtyframes.loaders._endpoint import Call, Endpoint
from realtyframes.loaders._resume import run_resumable
from realtyframes.loaders._runs import recorded
from realtyframes.loaders.endpoints import ENDPOINTS, TTLS
from realtyframes.schemas import Analytics, OnInvalid

logger = logging.getLogger("realtyframes.loaders")

__all__ = ["cache_key", "changes_params", "dataset_path", "load", "load_analytics", "run_load"]

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
    """Load ``endpoint`` with ``params`` (spec names; path identifiers too) and the loader's
    ``options`` (``max_results``, ``details``: the endpoint declares which): validate (QueryError
    before any request), then :func:`load`, recorded as one run. ``on_invalid`` None: the
    session's.

    >>> result = run_load(session, ENDPOINTS["listings"], {"City": "Miami"}, max_results=100)  # doctest: +SKIP
    >>> result.frame, result.requests  # doctest: +SKIP
    """
    resource = _resource(endpoint)
    mode = session.on_invalid if on_invalid is None else check_on_invalid(on_invalid)
    scope = {**params, **{k: v for k, v in options.items() if v not in (None, False)}}
    if mode != "quarantine":  # other rows: another scope, as in the cache key
        scope["on_invalid"] = mode
    with recorded(session, "load", resource, scope) as run:
        call = endpoint.call(params, options)
        refresh = check_flag("refresh", refresh)
        run.result = result = load(session, endpoint, call, refresh=refresh, on_invalid=mode)
    return result


def changes_params(
    listing_ids: str | Iterable[str], since: Any, change_type: Any
) -> dict[str, Any]:
    """The change feed's parameters (a Series or Index of ids: its non-null values as text).

    >>> changes_params(pd.Series(["A1", None]), "2026-01-01", None)["ListingIds"]
    ['A1']
    """
    if isinstance(listing_ids, pd.Series | pd.Index):
        listing_ids = listing_ids.dropna().astype(str).tolist()
    return {"Since": since, "ListingIds": listing_ids, "ChangeType": change_type}


def load_analytics(
    session: Session,
    period: str,
    filters: Mapping[str, Any],
    *,
    refresh: bool = False,
    on_invalid: OnInvalid | None = None,
) -> tuple[Analytics, LoadResult]:
    """Analytics of ``period`` with ``filters`` (spec names: Page, Referrer, Device ...); every
    member frame validated against its model; cached as the overview plus one companion file
    per member; one run of the run history."""
    if "Period" in filters:
        raise QueryError("Period", "give the period as period=...", "period='7d', '30d' ...")
    refuse_none({"period": period, **filters})
    params = {"Period": period, **filters}
    loaded = run_load(
        session, ENDPOINTS["analytics"], params, refresh=refresh, on_invalid=on_invalid
    )
    period_text = str(loaded.meta.get("period") or period)
    return Analytics(period=period_text, overview=loaded.frame, **loaded.members), loaded


def dataset_path(session: Session, resource: str) -> Path:
    """The root of ``resource``'s dataset in the session's cache (``rf.Client.dataset_path``):
    a known resource or companion (``"listings.media"``), else a QueryError.

    >>> dataset_path(client.session, "listings").name  # doctest: +SKIP
    'listings'
    """
    if not isinstance(resource, str) or resource.partition(".")[0] not in TTLS:
        raise QueryError("resource", f"unknown resource {resource!r}", sorted(TTLS))
    return session.own_cache("dataset_path").dataset_path(resource)


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
