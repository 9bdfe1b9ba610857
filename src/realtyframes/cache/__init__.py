"""The Parquet cache: immutable, self-describing generations other tools read directly as
datasets, and the cache's state (which generation is current, sync state, checkpoints, run
history, locks, watches) in one SQLite database.

>>> from realtyframes.cache import ParquetCache, account_fingerprint
>>> cache = ParquetCache("data/cache")  # doctest: +SKIP
>>> append_run("data/cache", kind="watch", resource="market", scope={"City": "Miami"})  # doctest: +SKIP
"""

from realtyframes.cache._checkpoints import CHECKPOINT_MAX_AGE, Checkpoint, SavedCheckpoint
from realtyframes.cache._entries import (
    Entry,
    account_fingerprint,
    cache_key,
    is_fresh,
    normalise_params,
)
from realtyframes.cache._layout import META_KEY
from realtyframes.cache._lock import Holder, file_lock, hold_scope, is_locked
from realtyframes.cache._runs import (
    QUARANTINE_JUMP,
    ROW_DROP_MIN,
    ROW_DROP_SHARE,
    RUN_COLUMNS,
    RUN_KINDS,
    RUNS,
    append_run,
    read_runs,
)
from realtyframes.cache._state import connect as state_connection
from realtyframes.cache._state import exists as state_exists
from realtyframes.cache._state import state_file
from realtyframes.cache._state import transaction as state_transaction
from realtyframes.cache._store import GRACE, READ_WAIT, ParquetCache
from realtyframes.errors import CacheLockTimeout, CacheReadTimeout, CacheWarning

__all__ = [
    "CHECKPOINT_MAX_AGE",
    "GRACE",
    "META_KEY",
    "QUARANTINE_JUMP",
    "READ_WAIT",
    "ROW_DROP_MIN",
    "ROW_DROP_SHARE",
    "RUNS",
    "RUN_COLUMNS",
    "RUN_KINDS",
    "CacheLockTimeout",
    "CacheReadTimeout",
    "CacheWarning",
    "Checkpoint",
    "Entry",
    "Holder",
    "ParquetCache",
    "SavedCheckpoint",
    "account_fingerprint",
    "append_run",
    "cache_key",
    "file_lock",
    "hold_scope",
    "is_fresh",
    "is_locked",
    "normalise_params",
    "read_runs",
    "state_connection",
    "state_exists",
    "state_file",
    "state_transaction",
]
