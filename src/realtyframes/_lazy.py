"""Names a package imports on first use (PEP 562), so that importing it stays cheap.

>>> getattr_, dir_ = lazy("realtyframes", {"QueryError": "realtyframes.errors"}, {}, ["QueryError"])
>>> getattr_("QueryError").__name__
'QueryError'
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

__all__ = ["lazy"]


def lazy(
    package: str,
    table: Mapping[str, str],
    namespace: MutableMapping[str, Any],
    public: Sequence[str],
    *,
    modules: frozenset[str] = frozenset(),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for ``package``: ``table`` maps each lazy name to
    the module defining it (``modules``: names that are the module itself); the value is kept in
    ``namespace`` (the package's globals) after the first use."""

    def getattr_(name: str) -> Any:
        module_name = table.get(name)
        if module_name is None:  # a subpackage (``rf.analysis``) loads like ``import`` would
            if name.startswith("__") or importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")
        module = importlib.import_module(module_name)
        value = module if name in modules else getattr(module, name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *public})

    return getattr_, dir_
