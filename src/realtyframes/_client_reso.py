"""``rf.Client.reso``: a Client on any MLS's RESO Web API (a mixin of
:class:`~realtyframes.Client`; the source itself is :mod:`realtyframes.reso`).

>>> client = rf.Client.reso("https://api.mlsgrid.com/v2", token="...", vendor="mlsgrid",
...                         originating_system="mfrmls")  # doctest: +SKIP
>>> client.listings(City="Tampa")  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pandas as pd

from realtyframes._client_settings import refuse_source_options, with_request_hook
from realtyframes.api import RetryPolicy
from realtyframes.errors import QueryError
from realtyframes.loaders import (
    SYNC_RESOURCE,
    SYNC_WAIT,
    LoadResult,
    Plan,
    Session,
    recorded,
    refuse_none,
    run_load,
    sync_lock,
    sync_scope,
)
from realtyframes.reso import (
    Budgets,
    ResoSource,
    budgets_of,
    client_credentials_token,
    plan_reso_listings,
    plan_reso_sync,
    reso_history,
    reso_settings,
    reso_sync,
    reso_sync_state,
    with_source,
)

if TYPE_CHECKING:
    from realtyframes.schemas import OnInvalid


class _ResoRuns:
    """A RESO client's replication as its session's sync (``Session.sync``), with the plans
    ``loaders.plan_sync`` / ``plan_listings`` ask for instead of the platform's."""

    def __init__(self, client: ResoMixin) -> None:
        assert client._reso is not None
        self.client, self.reso = client, client._reso

    def __call__(
        self,
        scope: Mapping[str, Any],
        *,
        refresh: bool = False,
        history_since: Any = None,
        wait: float | None = SYNC_WAIT,
        **ignored: Any,
    ) -> LoadResult:
        """``scope`` replicated as one recorded run, under the scope's lock (the platform sync's),
        its market labelled with the source. ``scope``'s ``reconcile`` (True / False) forces or
        skips the key reconcile; ``ignored``: the platform sync's ``chunk_size`` and ``progress``."""
        session, scope = self.client._session, dict(scope)
        reconcile = scope.pop("reconcile", None)
        started = datetime.now(UTC)
        with recorded(session, "sync", SYNC_RESOURCE, sync_scope(scope)) as record:
            done = reso_sync(
                self.reso, session.cache, scope, refresh=refresh, history_since=history_since,
                reconcile=reconcile, wait=wait, lock=sync_lock(session, scope),
            )  # fmt: skip
            record.result = result = LoadResult(
                resource=SYNC_RESOURCE,
                rows=len(done.market),
                quarantined=len(done.quarantine),
                requests=done.requests,
                from_cache=done.from_cache,
                fetched_at=started,
                quarantine=done.quarantine,
                changes=done.changes,
                frame=with_source(done.market, self.reso.settings.label),
            )
        return result

    def plan_sync(
        self, scope: Mapping[str, Any], *, refresh: bool = False, history_since: Any = None
    ) -> Plan:
        """The RESO requests of ``sync_listings(**scope)`` (``reconcile`` in ``scope`` too)."""
        scope = dict(scope)
        reconcile = scope.pop("reconcile", None)
        return plan_reso_sync(self.reso, self.client._session.cache, scope, refresh=refresh,
                              history_since=history_since, reconcile=reconcile)  # fmt: skip

    def plan_listings(
        self, filters: Mapping[str, Any], *, max_results: int | None = None, details: bool = False
    ) -> Plan:
        """The RESO requests of ``listings(**filters, max_results=)``."""
        return plan_reso_listings(self.reso, filters, max_results=max_results, details=details)


class ResoMixin:
    """``Client.reso`` and the RESO side of the data methods."""

    _session: Session
    _reso: ResoSource | None = None
    _kept: Callable[[LoadResult], LoadResult]  # the Client's

    @classmethod
    def reso(
        cls,
        base_url: str,
        *,
        token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        token_url: str | None = None,
        vendor: str = "generic",
        originating_system: str | None = None,
        page_size: int | None = None,
        history: str = "auto",
        budgets: dict[str, int] | None = None,
        budget_clock: Callable[[], float] | None = None,
        **options: Any,
    ) -> Any:
        """A Client on a RESO Web API server (OData v4, Data Dictionary 2.x): ``listings``,
        ``sync_listings`` and ``listing_history`` give the platform source's frames.

        ``vendor``: ``"generic"``, ``"mlsgrid"``, ``"trestle"``, ``"bridge"`` or ``"spark"``
        (its published rules: page sizes, required filters, budgets; :mod:`realtyframes.reso`).
        ``originating_system``: the MLS's system name (required by MLS Grid). ``token`` (an
        access token) or ``client_id`` + ``client_secret`` + ``token_url`` (client credentials).
        ``budgets``: the vendor's budgets overridden (``{"hour": 5000}``: a
        share of the account's, when other tools use it too); they are kept across runs in the
        cache's state, and a run that would pass one stops with
        :class:`~realtyframes.reso.BudgetExhaustedError` saying when it may go on
        (``budget_clock``: the clock they are counted by, epoch seconds; tests).
        ``page_size``: records per page (the vendor's cap at most). ``history``: ``"auto"``
        (the server's HistoryTransactional when it has one, else synthesised from successive
        versions) or ``"synthesised"``. ``options``: the Client's
        (``cache_dir``, ``cache``, ``ttl``, ``timeout``, ``progress``, ``on_invalid`` ...). Bad
        input is one :class:`~realtyframes.QueryError` before any request.

        >>> client = Client.reso("https://api.bridgedataoutput.com/api/v2/OData/test",
        ...                      token="...", vendor="bridge")  # doctest: +SKIP
        """
        refuse_source_options(options, "a RESO client", "Client.reso's arguments")
        settings = reso_settings(
            base_url,
            vendor=vendor,
            token=token,
            client_id=client_id,
            client_secret=client_secret,
            token_url=token_url,
            originating_system=originating_system,
            page_size=page_size,
            history=history,
        )
        limits = budgets_of(settings.profile, budgets)
        if limits and "retry" not in options and "max_retries" not in options:
            # a vendor that suspends tokens: stop after few refusals, with a resume point
            options["retry"] = RetryPolicy(max_retries=settings.profile.retries_429)
        access = settings.token or client_credentials_token(settings)
        hooks = with_request_hook(options.pop("event_hooks", None), settings.request_hook())
        client = cls(  # type: ignore[call-arg]
            settings.base_url, token=access, event_hooks=hooks, **options
        )
        kept = None
        if limits:
            session = client._session
            root = session.cache.root if session.cache is not None else None
            account = f"{settings.profile.name}:{session.api.fingerprint}"
            kept = Budgets(limits, account, root, clock=budget_clock or time.time)
        client._reso = ResoSource(client._session.api, settings, kept)
        client._session = client._sourced(client._session)
        return client

    def _sourced(self, session: Session) -> Session:
        """``session`` with this client's RESO sync, if it has a RESO source: the loaders'
        ``sync_listings`` (the report, watches, the MCP server) replicate over RESO, and their
        plans count RESO pages."""
        if self._reso is None:
            return session
        if self._reso.api is not session.api:  # a copy's RESO requests go with its options
            self._reso = copy.copy(self._reso)
            self._reso.api = session.api
        return dataclasses.replace(session, sync=_ResoRuns(self))

    @property
    def source(self) -> str:
        """Where this client's frames come from: ``"platform"`` or ``"reso:<vendor>"`` (also
        each RESO frame's ``attrs["source"]``)."""
        return self._reso.settings.label if self._reso is not None else "platform"

    def _reso_listings(
        self,
        filters: Mapping[str, Any],
        max_results: int | None,
        details: bool,
        refresh: bool,
        on_invalid: OnInvalid | None,
    ) -> pd.DataFrame:
        assert self._reso is not None
        filters = dict(filters)
        reso_fields = filters.pop("reso_fields", False)
        refuse_none(filters)
        if details:
            raise QueryError(
                "details", "not available on a RESO source", "details=False, or reso_fields=True"
            )
        endpoint = self._reso.endpoint()
        result = run_load(
            self._session,
            endpoint,
            filters,
            refresh=refresh,
            on_invalid=on_invalid,
            max_results=max_results,
            reso_fields=reso_fields,
        )
        return with_source(self._kept(result).frame, self._reso.settings.label)

    def _reso_sync_state(self, scope: Mapping[str, Any]) -> dict[str, Any] | None:
        assert self._reso is not None
        return reso_sync_state(self._reso, self._session.cache, scope)

    def _reso_history(self, scope: Mapping[str, Any]) -> pd.DataFrame:
        assert self._reso is not None
        history = reso_history(self._reso, self._session.cache, scope)
        return with_source(history, self._reso.settings.label)

    def _reso_read(
        self, resource: str, filters: Mapping[str, Any], refresh: bool, on_invalid: Any
    ) -> pd.DataFrame:
        if self._reso is None:
            raise QueryError(
                resource,
                "the platform's API has no such resource",
                "a RESO source: rf.Client.reso(base_url, ...)",
            )
        refuse_none(filters)
        endpoint = self._reso.resource_endpoint(resource)
        result = run_load(self._session, endpoint, filters, refresh=refresh, on_invalid=on_invalid)
        return with_source(self._kept(result).frame, self._reso.settings.label)

    def members(
        self, *, refresh: bool = False, on_invalid: OnInvalid | None = None, **filters: Any
    ) -> pd.DataFrame:
        """The MLS's members (agents) from a RESO source: one row per MemberKey, Data Dictionary
        columns, validated and cached. ``filters``: DD fields (``MemberStatus="Active"``) or raw
        ``filter=`` OData text.

        >>> client.members(OfficeKey="O51618")  # doctest: +SKIP
        """
        return self._reso_read("Member", filters, refresh, on_invalid)

    def offices(
        self, *, refresh: bool = False, on_invalid: OnInvalid | None = None, **filters: Any
    ) -> pd.DataFrame:
        """The MLS's offices from a RESO source: one row per OfficeKey (see :meth:`members`).

        >>> client.offices()  # doctest: +SKIP
        """
        return self._reso_read("Office", filters, refresh, on_invalid)

    def open_houses(
        self, *, refresh: bool = False, on_invalid: OnInvalid | None = None, **filters: Any
    ) -> pd.DataFrame:
        """Open houses from a RESO source: one row per OpenHouseKey (see :meth:`members`).

        >>> client.open_houses(filter="OpenHouseDate ge 2026-07-01")  # doctest: +SKIP
        """
        return self._reso_read("OpenHouse", filters, refresh, on_invalid)

    def media(
        self, *, refresh: bool = False, on_invalid: OnInvalid | None = None, **filters: Any
    ) -> pd.DataFrame:
        """Media (photos) from a RESO source: one row per MediaKey (see :meth:`members`).

        >>> client.media(ResourceRecordKey="A10607949")  # doctest: +SKIP
        """
        return self._reso_read("Media", filters, refresh, on_invalid)
