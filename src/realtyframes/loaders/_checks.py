"""Settings-style argument checks of the client and the loaders (QueryError before any request).

>>> check_flag("details", True)
True
>>> check_flag("progress", None, allow_none=True) is None
True
>>> check_flag("cache", "yes")
Traceback (most recent call last):
...
realtyframes.errors.QueryError: cache: expected True or False, got 'yes'; allowed: True, False
"""

from __future__ import annotations

from typing import Any, Literal, overload

import numpy as np

from realtyframes.errors import QueryError
from realtyframes.schemas import ON_INVALID, OnInvalid

__all__ = ["ON_INVALID", "check_count", "check_flag", "check_on_invalid"]


@overload
def check_flag(name: str, value: Any, *, allow_none: Literal[False] = False) -> bool: ...
@overload
def check_flag(name: str, value: Any, *, allow_none: Literal[True]) -> bool | None: ...
def check_flag(name: str, value: Any, *, allow_none: bool = False) -> bool | None:
    """``value`` if it is True or False (or None with ``allow_none``), else a QueryError."""
    if isinstance(value, bool) or (allow_none and value is None):
        return value  # type: ignore[no-any-return]
    expected = "True, False or None" if allow_none else "True or False"
    allowed = "True, False, None" if allow_none else "True, False"
    raise QueryError(name, f"expected {expected}, got {value!r}", allowed)


def check_count(name: str, value: Any) -> int | None:
    """``value`` as an int >= 1, or None; else a QueryError (``max_results``, ``chunk_size``).

    >>> check_count("max_results", 100), check_count("max_results", None)
    (100, None)
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise QueryError(name, f"{value!r} is not allowed", "an int >= 1, or None")
    return int(value)


def check_on_invalid(value: Any) -> OnInvalid:
    """``value`` if it is an ``on_invalid`` mode, else a QueryError naming the allowed ones."""
    if value not in ON_INVALID:
        raise QueryError("on_invalid", f"unknown value {value!r}", ON_INVALID)
    return value  # type: ignore[no-any-return]
