"""Names a package imports on first use (PEP 562), so that importing it stays cheap.

>>> getattr_, dir_ = lazy("realtyframes", {"QueryError": "realtyframes.errors"}, {}, ["QueryError"])
>>> getattr_("QueryError").__name__
'QueryError'

:func:`lazy_declared` reads the lazy names from the package's own ``if TYPE_CHECKING:`` imports
(the one place they are written: type checkers and editors read the same lines) and derives
``__all__`` from them, on first use.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["declared", "lazy", "lazy_declared"]


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
        module_name, _, attribute = module_name.partition(":")
        module = importlib.import_module(module_name)
        value = module if name in modules else getattr(module, attribute or name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *public})

    return getattr_, dir_


def declared(path: str | Path) -> tuple[dict[str, str], frozenset[str]]:
    """The names the module at ``path`` imports under ``if TYPE_CHECKING:``: name -> module, and
    the names that are modules themselves (``from realtyframes import plots as plot``).

    >>> import realtyframes
    >>> table, modules = declared(realtyframes.__file__)
    >>> table["Client"], table["plot"], "plot" in modules
    ('realtyframes._client', 'realtyframes.plots', True)
    """
    import ast  # only on first use: ``import realtyframes`` stays light

    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    modules: set[str] = set()
    for node in tree.body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.ImportFrom) or statement.module is None:
                continue
            for alias in statement.names:
                name = alias.asname or alias.name
                if "." not in statement.module:  # ``from package import module``
                    table[name] = f"{statement.module}.{alias.name}"
                    modules.add(name)
                elif alias.asname in (None, alias.name):
                    table[name] = statement.module
                else:  # ``from module import attr as other``: "module:attr"
                    table[name] = f"{statement.module}:{alias.name}"
    return table, frozenset(modules)


def lazy_declared(
    package: str, path: str | Path, namespace: MutableMapping[str, Any], eager: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """:func:`lazy` for the names ``path`` (the package's ``__init__``) imports under
    ``if TYPE_CHECKING:``; ``__all__`` is ``eager`` plus those names, sorted, and ``_LAZY`` the
    table (both worked out on first use, then kept in ``namespace``)."""
    found: list[tuple[Callable[[str], Any], Callable[[], list[str]]]] = []

    def resolved() -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
        if not found:
            table, modules = declared(path)
            public = sorted({*eager, *table})
            namespace["_LAZY"], namespace["__all__"] = table, public
            found.append(lazy(package, table, namespace, public, modules=modules))
        return found[0]

    def getattr_(name: str) -> Any:
        if name in ("__all__", "_LAZY"):
            resolved()
            return namespace[name]
        return resolved()[0](name)

    def dir_() -> list[str]:
        return resolved()[1]()

    return getattr_, dir_
