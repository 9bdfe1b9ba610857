"""Renamed keywords, one declaration each: the old name keeps working for one release.

``@renamed(changes="history")`` on a function makes ``f(changes=x)`` warn a
:class:`DeprecationWarning` naming the new keyword and run ``f(history=x)``; giving both the old
and the new name (by keyword or by position) is a :class:`TypeError` naming both. The signature
``help()`` and editors show is the function's own (new names only); :func:`renamed_in` reads a
function's renames. A renamed dataclass field also gets :func:`renamed_attribute`. The glossary
of docs/architecture.md says which name means what.

>>> @renamed(n="top_n")
... def top(rows: list[int], top_n: int = 2) -> list[int]:
...     return sorted(rows)[-top_n:]
>>> import warnings
>>> with warnings.catch_warnings(record=True) as seen:
...     warnings.simplefilter("always")
...     top([3, 1, 2], n=1)
[3]
>>> str(seen[0].message)
'top(): `n` is renamed `top_n`; `n` still works in this release, with this warning, and goes in realtyframes 0.3'
>>> top([3, 1, 2], 1, n=1)
Traceback (most recent call last):
...
TypeError: top(): got both `n` (the old name) and `top_n`; pass `top_n` only
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = ["REMOVED_IN", "renamed", "renamed_attribute", "renamed_in"]

#: The release in which the old names go (they work, with a warning, until then).
REMOVED_IN = "0.3"

P = ParamSpec("P")
R = TypeVar("R")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def renamed(**old_to_new: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorator: each ``old=new`` keyword of the function renamed, the old name deprecated."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        params = inspect.signature(func).parameters
        for old, new in old_to_new.items():
            if new not in params or old in params:
                raise ValueError(
                    f"renamed({old}={new!r}): `{new}` must be a parameter, `{old}` not"
                )
        positional = [p.name for p in params.values() if p.kind in _POSITIONAL]
        name = func.__qualname__.removesuffix(".__init__")

        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            for old, new in old_to_new.items():
                if old in kwargs:
                    _take(kwargs, old, new, new in positional[: len(args)], name)
            return func(*args, **kwargs)

        wrapper.__renamed__ = dict(old_to_new)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def renamed_attribute(old: str, new: str) -> Any:
    """A read-only property ``old`` that warns and returns ``self.<new>`` (a renamed field; pair
    it with ``@renamed`` on the class's ``__init__``)."""

    def read(self: Any) -> Any:
        warnings.warn(
            f"{type(self).__name__}.{old} is renamed .{new}; .{old} still works in this release, "
            f"with this warning, and goes in realtyframes {REMOVED_IN}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, new)

    return property(read, doc=f"Old name of ``{new}`` (a DeprecationWarning).")


def _take(kwargs: dict[str, Any], old: str, new: str, by_position: bool, name: str) -> None:
    """Move ``kwargs[old]`` to ``kwargs[new]`` with the warning, or refuse both given."""
    if new in kwargs or by_position:
        raise TypeError(f"{name}(): got both `{old}` (the old name) and `{new}`; pass `{new}` only")
    warnings.warn(
        f"{name}(): `{old}` is renamed `{new}`; `{old}` still works in this release, with this "
        f"warning, and goes in realtyframes {REMOVED_IN}",
        DeprecationWarning,
        stacklevel=3,
    )
    kwargs[new] = kwargs.pop(old)


def renamed_in(func: Callable[..., Any]) -> dict[str, str]:
    """The renamed keywords ``{old: new}`` of ``func`` (empty when none were)."""
    return dict(getattr(func, "__renamed__", {}))
