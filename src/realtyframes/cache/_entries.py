"""Cache entries and keys: the account fingerprint, normalised parameters and the key (secrets
redacted), an entry read back, freshness, and the file helpers of the store (names, private
folders, dead writers, categories)."""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from realtyframes._files import PRIVATE_MODE
from realtyframes._version import __version__

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
#: Names of parameters whose values never reach a file (cache footers, run records): a bare
#: ``key`` or one ending ``_key`` / ``-key`` / ``apikey``, tokens, secrets, passwords, auth,
#: credentials; not a record's key such as RESO's ``ListingKey``.
SECRET_PARAM = re.compile(
    r"(^|[_-])key$|api[_-]?key|token|secret|passw(or)?d|auth|credential", re.IGNORECASE
)
REDACTED = "<redacted>"
#: The ``user:password@`` of a URL, up to its last ``@`` (a password may hold one).
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/?#]*@", re.I)


class _ResourceTtl(enum.Enum):
    """Sentinel: the resource's own ttl (``None`` already means "never expires")."""

    DEFAULT = "resource default"


# --- keys -----------------------------------------------------------------------------------------


def account_fingerprint(secret: str | None, host: str) -> str:
    """A short, non-reversible id of the account behind ``secret`` on ``host``.

    HMAC-SHA256 keyed by the secret over the host, 16 hex digits; the secret itself is never
    stored. ``None`` (no credentials, e.g. the open sandbox) gives one anonymous id per host.

    >>> account_fingerprint(None, "http://127.0.0.1:8000") == account_fingerprint(None, "http://127.0.0.1:8000")
    True
    >>> account_fingerprint("key-a", "h") != account_fingerprint("key-b", "h")
    True
    """
    host_bytes = host.rstrip("/").lower().encode()
    if secret is None:
        return "anon-" + hashlib.sha256(b"realtyframes-anonymous\0" + host_bytes).hexdigest()[:11]
    return hmac.new(secret.encode(), host_bytes, hashlib.sha256).hexdigest()[:16]


def _norm_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        return _norm_value(value.item())
    if isinstance(value, datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=UTC)
        return stamp.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(sorted(_norm_value(v) for v in value))
    return str(value)


def normalise_params(params: Mapping[str, Any] | None) -> dict[str, str]:
    """Parameters as sorted ``name -> string``; ``None`` values dropped; lists sorted and joined.

    >>> normalise_params({"MaxListPrice": 500000.0, "City": "Miami", "Subtypes": ["Villa", "Condominium"], "Since": None})
    {'City': 'Miami', 'MaxListPrice': '500000', 'Subtypes': 'Condominium,Villa'}
    """
    items = (params or {}).items()
    return {
        str(k): _norm_value(v) for k, v in sorted(items, key=lambda kv: str(kv[0])) if v is not None
    }


def plain_host(host: str | None) -> str | None:
    """``host`` without a user and password (never stored).

    >>> plain_host("https://me:p@ss@api.example.com/v1"), plain_host("http://u:pw@[::1]:8000")
    ('https://api.example.com/v1', 'http://[::1]:8000')
    """
    return _USERINFO.sub(r"\1", host) if host else host


def stored_params(params: Mapping[str, Any] | None) -> dict[str, str]:
    """``params`` as a file keeps them: normalised, secret-looking names redacted."""
    return {
        k: REDACTED if SECRET_PARAM.search(k) else v for k, v in normalise_params(params).items()
    }


def cache_key(*, host: str, operation: str, params: Mapping[str, Any] | None, account: str) -> str:
    """The entry key: SHA-256 of host + operation + normalised params + account fingerprint.

    >>> len(cache_key(host="h", operation="listings", params={"City": "Miami"}, account="anon"))
    32
    """
    doc = {
        "host": host.rstrip("/").lower(),
        "operation": operation,
        "params": normalise_params(params),
        "account": account,
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# --- entries --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One cached result: the frame, its companion frames and its metadata."""

    resource: str
    key: str
    path: Path
    frame: pd.DataFrame
    meta: dict[str, Any]
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def fetched_at(self) -> datetime:
        """When the data was fetched (tz-aware UTC)."""
        return datetime.fromisoformat(self.meta["fetched_at"])

    @property
    def params(self) -> dict[str, str]:
        """The request parameters the entry answers (secrets redacted)."""
        return dict(self.meta.get("params") or {})


def is_fresh(entry: Entry, ttl: timedelta | float | None, *, now: datetime | None = None) -> bool:
    """Whether ``entry`` is younger than ``ttl`` (a timedelta or seconds; ``None``: never expires).

    >>> is_fresh(entry, timedelta(hours=1))  # doctest: +SKIP
    True
    """
    if ttl is None:
        return True
    seconds = ttl.total_seconds() if isinstance(ttl, timedelta) else float(ttl)
    return ((now or datetime.now(UTC)) - entry.fetched_at).total_seconds() <= seconds


def _check_name(value: str, what: str, pattern: re.Pattern[str]) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise ValueError(f"{what}: {value!r} is not allowed; allowed: {pattern.pattern}")
    return value


#: Cache files can hold personal data (contacts): readable by their owner only, like the token file.
FILE_MODE = PRIVATE_MODE
DIR_MODE = 0o700


def _private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents with exactly :data:`DIR_MODE` (umask ignored)."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=DIR_MODE, exist_ok=True)  # another writer may have made it meanwhile
        os.chmod(path, DIR_MODE)


def _categories(frame: pd.DataFrame) -> dict[str, Any]:
    """Category lists of categorical columns (Parquet drops them for a frame without rows)."""
    cats = {
        str(name): [str(c) for c in frame[name].cat.categories]
        for name, dtype in frame.dtypes.items()
        if isinstance(dtype, pd.CategoricalDtype) and frame[name].cat.categories.dtype != "float64"
    }
    return {"categories": cats} if cats else {}


def _restore_categories(frame: pd.DataFrame, meta: Mapping[str, Any]) -> pd.DataFrame:
    fixes = {}
    for name, cats in (meta.get("categories") or {}).items():
        if name in frame.columns and isinstance(frame[name].dtype, pd.CategoricalDtype):
            current = frame[name].cat.categories
            if len(current) != len(cats) or current.tolist() != cats:
                fixes[name] = frame[name].cat.set_categories(pd.Index(cats, dtype="str"))
    return frame.assign(**fixes) if fixes else frame


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, Linux), to tell a reused PID."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def pid_alive(pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` runs (and is the one that ``started`` then, when given)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # (no PID is that large)
        return False
    except OSError:
        pass  # another user's process, or cannot tell: alive
    return started is None or process_start(pid) in (None, started)


def entry_doc(
    resource: str,
    key: str,
    frame: pd.DataFrame,
    meta: Mapping[str, Any] | None,
    extras: Mapping[str, pd.DataFrame],
) -> dict[str, Any]:
    """The metadata document of a new generation of an entry (written in each of its files):
    what the caller gives, checked, and what the cache sets itself (the generation, rows, the
    categories, who wrote it); raises before any file is touched if it cannot be stored."""
    from realtyframes.schemas import SCHEMA_VERSION

    given = dict(meta or {})
    fetched = given.pop("fetched_at", None) or datetime.now(UTC)
    if isinstance(fetched, str):
        fetched = datetime.fromisoformat(fetched.replace("Z", "+00:00"))
    if fetched.tzinfo is None:
        raise ValueError("meta: fetched_at must be timezone-aware")
    generation = secrets.token_hex(8)
    doc: dict[str, Any] = {
        "resource": resource,
        "key": key,
        "host": plain_host(str(host) if (host := given.pop("host", None)) else host),
        "operation": given.pop("operation", resource),
        "params": stored_params(given.pop("params", None)),
        "account": given.pop("account", None),
        "schema_version": given.pop("schema_version", SCHEMA_VERSION),
        "fetched_at": fetched.astimezone(UTC).isoformat(),
        "rows": len(frame),
        **_categories(frame),
        "generation": generation,
        "written_by": f"realtyframes {__version__}",
        "extras": {
            name: {"rows": len(df), "generation": generation} for name, df in extras.items()
        },
    }
    if "quarantine" in extras:
        doc["quarantined"] = len(extras["quarantine"])
    reserved = sorted(set(given) & (set(doc) | {"categories", "quarantined", "role"}))
    if reserved:
        raise ValueError(f"meta: {', '.join(reserved)} are set by the cache, not the caller")
    doc.update(given)
    json.dumps(doc)  # fails here, before any file is touched, if not serialisable
    return doc
