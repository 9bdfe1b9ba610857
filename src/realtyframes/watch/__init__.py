"""Watches: saved searches that report, on each run, what changed since their last run.

A watch is a scope (listing search filters the sync follows: ``City``, ``PostalCode``,
``PropertyType`` ...) and filters on what moves (``Status``, ``Min/MaxListPrice``,
``MaxDaysOnMarket``, applied to the synced market), with apprise URLs to notify. Stored in the
cache folder (``_store``: the state database's ``watches`` table, 0600); a run (``_run``) syncs the scope
once, compares with the watch's last run through ``rf.market_changes``, and sends one message
(``_message``) when something changed.

>>> import realtyframes as rf
>>> watches = rf.Watches(rf.Client())  # doctest: +SKIP
>>> watches.add("miami", City="Miami", MaxListPrice=900_000,
...             notify=["mailtos://me:app-password@smtp.example.com?to=me@example.com"])  # doctest: +SKIP
>>> [r.counts for r in watches.run()]  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from realtyframes.errors import QueryError
from realtyframes.loaders import default_cache_dir
from realtyframes.notify import NOTIFY_DEADLINE
from realtyframes.watch._message import MAX_ROWS, watch_message
from realtyframes.watch._run import (
    DEFAULT_WAIT,
    WatchResult,
    finish_run,
    matching,
    run_watches,
    scope_id,
)
from realtyframes.watch._store import LOCAL_FILTERS, Watch, WatchStore, check_name

if TYPE_CHECKING:
    from realtyframes._client import Client

__all__ = [
    "DEFAULT_WAIT",
    "LOCAL_FILTERS",
    "MAX_ROWS",
    "Watch",
    "WatchResult",
    "WatchStore",
    "Watches",
    "finish_run",
    "matching",
    "run_watches",
    "scope_id",
    "watch_message",
]


_Results = list[WatchResult]
_Names = list[str]


def _named(name: object) -> str:
    """A watch name given to this API: a control character (``"miami\\n"``) is refused before
    the name's pattern is read (``$`` of a pattern matches before a final newline)."""
    if isinstance(name, str) and not name.isprintable():
        raise QueryError(
            "name", f"not a watch name: {name!r} holds a control character", "printable names"
        )
    return check_name(name)


class Watches:
    """The watches kept in a client's cache folder: add, list, remove, run.

    >>> watches = rf.Watches(client)  # doctest: +SKIP
    >>> watches.add("doral", City="Doral", Status="Active", notify="json://hooks.example.com/in")  # doctest: +SKIP
    >>> watches.list()  # doctest: +SKIP
    """

    def __init__(
        self, client: Client | None = None, *, cache_dir: str | os.PathLike[str] | None = None
    ) -> None:
        if client is not None and not client.settings.cache:
            raise QueryError(
                "client",
                "watches keep their state in the cache; this client was made with cache=False",
                "a client with a cache",
            )
        self._client = client
        if client is not None:
            root = client.dataset_path("market").parent
        else:  # add, list and remove need no client: the cache folder alone
            root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self._store = WatchStore(root)

    def add(
        self,
        name: str,
        *,
        notify: str | Sequence[str] | None = None,
        link: str | None = None,
        replace: bool = False,
        **filters: Any,
    ) -> Watch:
        """Save a watch: ``filters`` are listing search filters (``City=``, ``MaxListPrice=``
        ...); ``notify`` apprise URLs; ``link`` a listing page template with ``{ListingId}``.
        Everything is checked before it is saved; a name in use needs ``replace=True`` (a
        replaced watch with the same scope and filters goes on from its last run; another
        search starts afresh).

        >>> watches.add("miami", City="Miami", MaxListPrice=900_000)  # doctest: +SKIP
        """
        watch = Watch.define(_named(name), filters, notify=notify, link=link)
        with self._store.editing() as watches:
            if name in watches and not replace:
                raise QueryError("name", f"a watch named {name!r} exists", "a new name, or replace")
            old = watches.get(name)
            if old is not None and (old.scope, old.filters) == (watch.scope, watch.filters):
                # only the targets or the link changed: the watch goes on from its last run
                watch = dataclasses.replace(watch, last_run=old.last_run, created=old.created)
            elif old is not None:
                self._store.drop_snapshot(name)  # another search: it starts afresh
            watches[name] = watch
        return watch

    def remove(self, name: str) -> None:
        """Forget a watch (and its snapshot).

        >>> watches.remove("miami")  # doctest: +SKIP
        """
        _named(name)
        with self._store.editing() as watches:
            if name not in watches:
                raise QueryError("name", f"no watch named {name!r}", sorted(watches) or "none")
            del watches[name]
            self._store.drop_snapshot(name)

    def names(self) -> _Names:
        """The watches' names, sorted.

        >>> watches.names()  # doctest: +SKIP
        ['doral', 'miami']
        """
        return sorted(self._store.load())

    def get(self, name: str) -> Watch:
        """One watch by name."""
        watches = self._store.load()
        if _named(name) not in watches:
            raise QueryError("name", f"no watch named {name!r}", sorted(watches) or "none")
        return watches[name]

    def list(self) -> pd.DataFrame:
        """One row per watch: name, scope, filters, notify (masked URLs), link, last_run.

        >>> watches.list()[["name", "scope", "notify"]]  # doctest: +SKIP
        """
        rows = [
            {
                "name": w.name,
                "scope": " ".join(f"{k}={v}" for k, v in w.scope.items()),
                "filters": " ".join(f"{k}={v}" for k, v in w.filters.items()),
                "notify": ", ".join(str(t) for t in w.notify),
                "link": w.link or "",
                "last_run": w.last_run or "",
            }
            for w in self._store.load().values()
        ]
        columns = ["name", "scope", "filters", "notify", "link", "last_run"]
        return pd.DataFrame(rows, columns=columns).astype("string")

    def run(
        self,
        *names: str,
        always: bool = False,
        wait: float = DEFAULT_WAIT,
        notify_deadline: float = NOTIFY_DEADLINE,
    ) -> _Results:
        """Run the named watches (all when none is named): sync each scope once, report and
        notify what changed since each watch's last run. ``always``: send a message even when
        nothing changed. ``wait``: seconds to wait for another process syncing the same scope;
        past it, that scope's watches come back ``busy`` (nothing synced, ``ok`` False) and the
        other scopes' watches still run. A notification not delivered is in ``result.failed``
        (logged, masked; the next run reports the same changes again). ``notify_deadline``:
        seconds each notification target has in all (default 60); past it the sending is
        abandoned: not delivered, ``result.error`` and the run record say ``NotificationTimeout``.

        >>> for result in watches.run("miami"): print(result.counts)  # doctest: +SKIP
        """
        if self._client is None:
            raise QueryError("client", "running watches needs a client", "Watches(client)")
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < 1e7:
            raise QueryError("wait", f"expected seconds, got {wait!r}", "a number >= 0")
        deadline = notify_deadline
        if isinstance(deadline, bool) or not isinstance(deadline, int | float) or not deadline > 0:
            raise QueryError(
                "notify_deadline", f"expected seconds, got {deadline!r}", "a number > 0"
            )
        watches = self._store.load()
        for name in names:
            if _named(name) not in watches:
                raise QueryError("name", f"no watch named {name!r}", sorted(watches) or "none")
        chosen = [watches[n] for n in dict.fromkeys(names)] if names else list(watches.values())
        return run_watches(
            self._client,
            self._store,
            chosen,
            always=always,
            wait=float(wait),
            deadline=float(deadline),
        )

    def __repr__(self) -> str:
        return f"Watches({sorted(self._store.load())!r})"
