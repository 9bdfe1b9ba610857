"""The Parquet cache: atomic, locked, self-describing files other tools read directly.

>>> from realtyframes.cache import ParquetCache, account_fingerprint
>>> cache = ParquetCache("data/cache")  # doctest: +SKIP
"""

from realtyframes.cache._checkpoints import CHECKPOINT_MAX_AGE, Checkpoint
from realtyframes.cache._entries import (
    Entry,
    account_fingerprint,
    cache_key,
    is_fresh,
    normalise_params,
)
from realtyframes.cache._lock import CacheLockTimeout, file_lock, is_locked
from realtyframes.cache._store import META_KEY, READ_WAIT, CacheWarning, ParquetCache
from realtyframes.errors import CacheReadTimeout

__all__ = [
    "CHECKPOINT_MAX_AGE",
    "META_KEY",
    "READ_WAIT",
    "CacheLockTimeout",
    "CacheReadTimeout",
    "CacheWarning",
    "Checkpoint",
    "Entry",
    "ParquetCache",
    "account_fingerprint",
    "cache_key",
    "file_lock",
    "is_fresh",
    "is_locked",
    "normalise_params",
]
