"""Where watches live: the ``watches`` table of the cache's state database
(``<cache_dir>/.rf/state.sqlite3``, mode 0600: notification URLs hold secrets), one row per watch
(its definition as JSON, and the name of its snapshot), and ``<cache_dir>/.watches/<name>.parquet``,
one snapshot per watch (the listings of its scope at its last run, what the next run compares
with). Edits are SQLite transactions (no lock file); the lock of a scope's sync is the cache's
(``loaders.sync_lock``). realtyframes 0.7's ``.watches/watches.json`` is moved into the table by
the first open of the cache.

The folder's name starts with a dot so the cache's own listing and clearing (resources are
lower-case names) never take it for a dataset; ``realtyframes cache clear`` leaves it.

>>> store = WatchStore(Path("~/.cache/realtyframes").expanduser())  # doctest: +SKIP
>>> store.load()  # doctest: +SKIP
{}
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from realtyframes._changes import DESCRIBE
from realtyframes._files import PRIVATE_MODE, atomic_path
from realtyframes.cache import state_connection, state_exists, state_transaction
from realtyframes.errors import QueryError
from realtyframes.loaders import sync_scope, validate_listing_search
from realtyframes.notify import NotifyTarget, parse_targets

__all__ = ["FOLDER", "LOCAL_FILTERS", "SNAPSHOT_COLUMNS", "Watch", "WatchStore", "check_name"]

FOLDER = ".watches"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: Filters on what moves (a listing enters and leaves them as prices change and days pass): the
#: sync keeps the whole market of the other filters, and these choose the watch's listings in it.
LOCAL_FILTERS: tuple[str, ...] = ("Status", "MinListPrice", "MaxListPrice", "MaxDaysOnMarket")
#: What a watch keeps of each listing between runs: what ``rf.market_changes`` compares and
#: describes, and what its filters read.
SNAPSHOT_COLUMNS: tuple[str, ...] = (
    "ListingId",
    "ListPrice",
    "StandardStatus",
    "DaysOnMarket",
    "OriginalEntryTimestamp",
    "ModificationTimestamp",
    "MajorChangeTimestamp",
    *DESCRIBE,
)


def check_name(name: object) -> str:
    """A watch's name: letters, digits, ``_ . -``, up to 64 characters, starting alphanumeric.

    >>> check_name("miami-under-900k")
    'miami-under-900k'
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise QueryError(
            "name",
            f"not a watch name: {name!r}",
            "letters, digits, '_', '.', '-' (up to 64, starting with a letter or digit)",
        )
    return name


@dataclass(frozen=True)
class Watch:
    """A saved search: the synced ``scope``, the ``filters`` choosing listings in it, where to
    notify (masked in every repr), a link template (``{ListingId}``) and when it last ran."""

    name: str
    scope: dict[str, str]
    filters: dict[str, str]
    notify: tuple[NotifyTarget, ...] = ()
    link: str | None = None
    last_run: str | None = None
    created: str | None = field(default=None, compare=False)

    @classmethod
    def define(
        cls,
        name: str,
        filters: Mapping[str, Any],
        *,
        notify: Any = None,
        link: str | None = None,
    ) -> Watch:
        """A new watch, every argument checked before any request."""
        check_name(name)
        if not isinstance(filters, Mapping):
            raise QueryError("filters", "expected listing search filters", "City=..., ...")
        params = validate_listing_search(dict(filters))
        local = {k: params.pop(k) for k in LOCAL_FILTERS if k in params}
        scope = sync_scope(params)
        if link is not None and (not isinstance(link, str) or "{ListingId}" not in link):
            raise QueryError(
                "link", f"not a link template: {link!r}", "a URL containing {ListingId}"
            )
        targets = tuple(parse_targets(notify))
        created = pd.Timestamp.now(tz="UTC").isoformat()
        return cls(name, scope, local, targets, link, None, created)

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "filters": self.filters,
            "notify": [t.url for t in self.notify],
            "link": self.link,
            "last_run": self.last_run,
            "created": self.created,
        }

    @classmethod
    def from_json(cls, name: str, data: Mapping[str, Any]) -> Watch:
        return cls(
            name,
            dict(data.get("scope") or {}),
            dict(data.get("filters") or {}),
            tuple(parse_targets(list(data.get("notify") or []))),
            data.get("link"),
            data.get("last_run"),
            data.get("created"),
        )

    def describe(self) -> str:
        """The scope and filters as ``City=Miami MaxListPrice=900000`` (no secrets)."""
        items = {**self.scope, **self.filters}
        return " ".join(f"{k}={v}" for k, v in items.items())


class WatchStore:
    """The watches of one cache folder (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.folder = self.root / FOLDER
        self._local = threading.local()  # .db: the connection of this thread's edit

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        """A write transaction: the edit's in progress, else a new one."""
        editing = getattr(self._local, "db", None)
        if editing is not None:
            yield editing
            return
        with state_connection(self.root) as db, state_transaction(db):
            yield db

    @contextmanager
    def editing(self) -> Iterator[dict[str, Watch]]:
        """The watches, in one write transaction (other processes wait); written back when the
        block ends without an error."""
        with state_connection(self.root) as db, state_transaction(db):
            watches = _rows(db)
            before = dict(watches)
            self._local.db = db
            try:
                yield watches
            finally:
                self._local.db = None
            now = pd.Timestamp.now(tz="UTC").isoformat()
            for name in set(before) - set(watches):
                db.execute("DELETE FROM watches WHERE name = ?", (name,))
            for name, watch in watches.items():
                if before.get(name) != watch or name not in before:
                    definition = json.dumps(watch.to_json(), sort_keys=True)
                    db.execute(
                        "INSERT INTO watches (name, definition, updated) VALUES (?, ?, ?)"
                        " ON CONFLICT (name) DO UPDATE SET definition = excluded.definition,"
                        " updated = excluded.updated",
                        (check_name(name), definition, now),
                    )

    def load(self) -> dict[str, Watch]:
        """Every watch by name ({} when none was added; asking creates nothing)."""
        if not self._stored():
            return {}
        with state_connection(self.root) as db:
            return _rows(db)

    def _stored(self) -> bool:
        """Whether there is anything to read (the database, or 0.7's watches file it takes in)."""
        return state_exists(self.root) or (self.folder / "watches.json").exists()

    def snapshot_path(self, name: str) -> Path:
        return self.folder / f"{check_name(name)}.parquet"

    def read_snapshot(self, name: str) -> pd.DataFrame | None:
        """The listings of the watch's scope at its last run, or None before its first run."""
        if not self._stored():
            return None
        with state_connection(self.root) as db:
            row = db.execute("SELECT snapshot FROM watches WHERE name = ?", (name,)).fetchone()
        path = self.folder / row[0] if row and row[0] else None
        return pd.read_parquet(path) if path is not None and path.exists() else None

    def write_snapshot(self, name: str, market: pd.DataFrame) -> None:
        """Keep ``market``'s :data:`SNAPSHOT_COLUMNS` for the next run (atomic, 0600), and its
        name in the watch's row."""
        self.folder.mkdir(parents=True, exist_ok=True)
        columns = [c for c in SNAPSHOT_COLUMNS if c in market.columns]
        path = self.snapshot_path(name)
        with atomic_path(path, mode=PRIVATE_MODE) as tmp:
            market[columns].reset_index(drop=True).to_parquet(tmp, index=False)
        with self._writing() as db:
            db.execute("UPDATE watches SET snapshot = ? WHERE name = ?", (path.name, name))

    def drop_snapshot(self, name: str) -> None:
        self.snapshot_path(name).unlink(missing_ok=True)
        if self._stored():
            with self._writing() as db:
                db.execute("UPDATE watches SET snapshot = NULL WHERE name = ?", (name,))


def _rows(db: Any) -> dict[str, Watch]:
    rows = db.execute("SELECT name, definition FROM watches ORDER BY name").fetchall()
    return {name: Watch.from_json(name, json.loads(definition)) for name, definition in rows}


def private_mode(path: Path) -> int:
    """The permission bits of ``path`` (for checks)."""
    return os.stat(path).st_mode & 0o777
