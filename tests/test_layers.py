"""The layer order of ``shared/design.md``, checked on every import in ``src/`` (parsed with ``ast``).

```
cli                     command line (the only code that prints)
report, watch           scheduled reports; watches (saved searches that notify)
notify                  notifications through apprise (knows nothing about listings)
analysis / plots        pure DataFrame in/out, no HTTP (plots may import analysis, not the reverse)
Client                  _client.py: one account, its loaders and settings
loaders                 endpoint -> paged JSON -> validated DataFrame; sync
cache, oauth            Parquet store (may read the schemas); the OAuth flow
schemas, config         pandera models and shaping; _config (config file, REALTYFRAMES_*)
api                     httpx client
bottom                  _spec, _environment, errors, _version, _files
sandbox                 the embedded service: imports nothing from realtyframes outside itself
```

An import points downward or stays inside its own package. Imports inside functions (lazy ones)
and under ``TYPE_CHECKING`` count too: a lazy import is still a dependency. Three more rules:

- **no import circles** between modules (lazy and ``TYPE_CHECKING`` imports counted);
- **no registry filled at import time**: no module, while it is imported, mutates a module-level
  container of another module (directly, or by calling that module's function that does);
- **front doors**: no import of another package's private ``_x`` module (a package's ``_x`` is
  for that package; what others need is exported by its ``__init__``). Today's offenders are in
  :data:`PRIVATE_ALLOWED`, each with its reason; the list only shrinks (a stale entry fails).

Each checker takes a module set (path -> source), so each rule has a control case: a small
synthetic set that breaks it.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "realtyframes"

#: Rank of each top-level unit of the package; an import may only go to a lower rank or the same
#: unit. Units not listed (new modules) fail the test until they are placed.
RANKS: dict[str, float] = {
    "_version": 0,
    "_spec": 0,
    "_environment": 0,
    "_lazy": 0,
    "_deprecation": 0,  # renamed keywords: the old name warns for one release
    "_client_settings": 6.5,  # between the loaders it checks with and the Client
    "_changes": 2,
    "errors": 1,
    "_files": 1,
    "_tuning": 1.5,  # the tuning settings (REALTYFRAMES_* read at use): may raise a ConfigError
    "_display": 1,
    "_config": 4,
    "api": 3,
    "schemas": 4,
    "cache": 5,
    "oauth": 5,
    "loaders": 6,
    "reso": 6.3,  # the RESO Web API source: loader endpoints of its own, below the Client
    "_client_reso": 6.9,  # Client.reso and the RESO side of the data methods (a mixin)
    "_client": 7,
    "analysis": 8,
    "plots": 9,
    "notify": 9.5,  # apprise notifications: used by watches and the report command
    "watch": 10,
    "report": 10,
    "mcp_server": 10,
    "cli": 11,
    "__init__": 12,
}
#: Below the analysis layer nothing may import it; analysis and plots never reach HTTP or the cache.
NO_HTTP = {"analysis", "plots"}
HTTP_UNITS = {"api", "loaders", "_client", "cache", "oauth", "_config", "sandbox"}


#: Imports of another package's private module that are still there (importer, imported) -> why
#: (or a TODO to remove it). This list only shrinks: an entry that no longer occurs fails the test.
#: Empty since #25: the 34 that src/ had were exported through their packages' __init__.
PRIVATE_ALLOWED: dict[tuple[str, str], str] = {}

#: A module set: path under ``src/`` (``realtyframes/loaders/_sync.py``) -> its source.
Modules = dict[str, str]


def _src_modules() -> Modules:
    return {
        path.relative_to(SRC.parent).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SRC.rglob("*.py"))
    }


def _unit(module: str) -> str:
    """``realtyframes.loaders._sync`` -> ``loaders``; ``realtyframes`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _name_of(path: str) -> str:
    """``realtyframes/loaders/__init__.py`` -> ``realtyframes.loaders``."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_in(path: str, source: str, known: set[str]) -> list[tuple[int, str]]:
    """Every ``realtyframes`` module imported by the module at ``path`` (absolute or relative,
    lazy or not), with its line; ``from package import name`` is the module ``package.name`` when
    ``known`` has it, else ``package``."""
    tree = ast.parse(source, filename=path)
    here = _name_of(path)
    package = here if path.endswith("/__init__.py") else here.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name) for a in node.names if a.name.startswith("realtyframes")
            ]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "realtyframes" or target.startswith("realtyframes."):
                for alias in node.names:
                    member = f"{target}.{alias.name}"
                    found.append((node.lineno, member if member in known else target))
    return found


def _graph(modules: Modules) -> dict[str, list[tuple[int, str]]]:
    """Module name -> the modules it imports (each with its line)."""
    known = {_name_of(p) for p in modules}
    return {_name_of(p): _imports_in(p, src, known) for p, src in modules.items()}


def _imports(path: Path) -> list[tuple[int, str]]:
    """The imports of one file of ``src/`` (see :func:`_imports_in`)."""
    known = {_name_of(p) for p in _src_modules()}
    rel = path.relative_to(SRC.parent).as_posix()
    return _imports_in(rel, path.read_text(encoding="utf-8"), known)


def _rule(source: str, dest: str) -> str | None:
    """Why an import from unit ``source`` to unit ``dest`` breaks the layers, or ``None``."""
    if dest == source:
        return None
    if source == "sandbox":
        return "the sandbox imports nothing outside itself"
    if dest == "sandbox":
        return None  # the bottom: anything may start the embedded sandbox
    if source not in RANKS or dest not in RANKS:
        return "unit not placed in RANKS"
    if source in NO_HTTP and dest in HTTP_UNITS:
        return "analysis and plots never do HTTP"
    if RANKS[dest] >= RANKS[source]:
        return f"points upward ({source} -> {dest})"
    return None


def _violations() -> list[str]:
    problems: list[str] = []
    for module, imports in _graph(_src_modules()).items():
        for line, target in imports:
            why = _rule(_unit(module), _unit(target))
            if why:
                problems.append(f"{module}:{line} imports {target}: {why}")
    return problems


# -- no circles --------------------------------------------------------------------------------------
def circles(modules: Modules) -> list[list[str]]:
    """Every import circle of ``modules`` (strongly connected groups of two or more modules, or a
    module importing itself), each sorted; Tarjan's algorithm."""
    graph = {m: sorted({t for _, t in imports}) for m, imports in _graph(modules).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, []):
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


# -- no registry filled at import time -----------------------------------------------------------------
_MUTATORS = {"append", "extend", "insert", "update", "setdefault", "add", "__setitem__", "pop"}
_CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque"}


def _module_containers(tree: ast.Module) -> set[str]:
    """Names bound at module level to a mutable container (literal or constructor call)."""
    names: set[str] = set()
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        mutable = isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp)
        if isinstance(value, ast.Call):
            func = value.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            mutable = called in _CONTAINERS
        if mutable:
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _mutated(node: ast.AST) -> set[str]:
    """Names whose container ``node`` mutates (``x[k] = v``, ``del x[k]``, ``x.update(...)``),
    lazily nested functions left out."""
    names: set[str] = set()
    for sub in _walk_here(node):
        if isinstance(sub, ast.Assign | ast.AugAssign | ast.Delete):
            targets = sub.targets if isinstance(sub, ast.Assign | ast.Delete) else [sub.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    names.add(target.value.id)
        elif (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr in _MUTATORS
            and isinstance(sub.func.value, ast.Name)
        ):
            names.add(sub.func.value.id)
    return names


def _walk_here(node: ast.AST) -> list[ast.AST]:
    """``ast.walk`` of ``node`` without entering the functions and classes defined inside it."""
    out: list[ast.AST] = [node]
    todo = list(ast.iter_child_nodes(node))
    while todo:
        sub = todo.pop()
        out.append(sub)
        if not isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(sub))
    return out


def _called(node: ast.AST) -> set[str]:
    """Plain names called in ``node`` (``f(...)``), nested functions left out."""
    return {
        sub.func.id
        for sub in _walk_here(node)
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
    }


def _import_time(tree: ast.Module) -> tuple[list[ast.AST], dict[str, ast.AST]]:
    """The code that runs when the module is imported (module-level statements, decorators,
    class bodies, default values) and the module's functions by name."""
    functions: dict[str, ast.AST] = {}
    runs: list[ast.AST] = []

    def applied(decorators: list[ast.expr]) -> list[ast.AST]:  # ``@d`` is the call ``d(...)``
        return [ast.Call(d, [], []) if isinstance(d, ast.Name) else d for d in decorators]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions[node.name] = node
            runs += [*applied(node.decorator_list), *node.args.defaults, *node.args.kw_defaults]
        elif isinstance(node, ast.ClassDef):
            runs += [*applied(node.decorator_list), *node.bases]
            runs += [
                n for n in node.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
        else:
            runs.append(node)
    return [r for r in runs if r is not None], functions


def _foreign_names(path: str, tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Local name -> (module, name there) for every ``from realtyframes... import name``."""
    out: dict[str, tuple[str, str]] = {}
    here = _name_of(path)
    package = here if path.endswith("/__init__.py") else here.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("realtyframes"):
                for alias in node.names:
                    out[alias.asname or alias.name] = (module, alias.name)
    return out


def registries(modules: Modules) -> list[str]:
    """Each place where importing a module mutates another module's module-level container:
    directly (``TABLE[k] = v`` on an imported ``TABLE``) or by calling, at import time, a function
    of another module that mutates its own module's container (``register(x)``)."""
    trees = {_name_of(p): (p, ast.parse(src, filename=p)) for p, src in modules.items()}
    containers = {m: _module_containers(t) for m, (_, t) in trees.items()}
    mutators: dict[str, set[str]] = {}  # module -> its functions that mutate its containers
    for module, (_, tree) in trees.items():
        _, functions = _import_time(tree)
        mutators[module] = {
            name for name, fn in functions.items() if _mutated(fn) & containers[module]
        }
    problems: list[str] = []
    for module, (path, tree) in trees.items():
        foreign = _foreign_names(path, tree)
        runs, functions = _import_time(tree)
        seen: set[str] = set()
        todo = list(runs)
        while todo:  # the import-time code, and the module's own functions it calls
            node = todo.pop()
            for name in _called(node) & set(functions) - seen:
                seen.add(name)
                todo.append(functions[name])
            for name in _mutated(node) & set(foreign):
                owner, original = foreign[name]
                if original in containers.get(owner, set()):
                    problems.append(f"{module} mutates {owner}.{original} at import")
            for name in _called(node) & set(foreign):
                owner, original = foreign[name]
                if original in mutators.get(owner, set()):
                    problems.append(f"{module} calls {owner}.{original} at import (a registry)")
    return sorted(set(problems))


# -- front doors: no other package's private module ----------------------------------------------------
def private_imports(modules: Modules) -> list[tuple[str, str]]:
    """(importer, imported) for each import of a private module (a ``_x`` part in its name) from
    outside the package that holds it; the root package's own ``_x`` modules are shared by all."""
    found: set[tuple[str, str]] = set()
    for module, imports in _graph(modules).items():
        for _, target in imports:
            parts = target.split(".")
            for i, part in enumerate(parts[1:], start=1):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(parts[:i])
                    if not (module == owner or module.startswith(owner + ".")):
                        found.add((module, target))
                    break
    return sorted(found)


def against_allowed(
    found: list[tuple[str, str]], allowed: dict[tuple[str, str], str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(new offenders, stale allow-list entries): both must be empty."""
    return sorted(set(found) - set(allowed)), sorted(set(allowed) - set(found))


# -- tests: a public name is imported from its front door ----------------------------------------------
TESTS = Path(__file__).resolve().parent


def _private_owner(module: str) -> str | None:
    """``realtyframes.api._errors`` -> ``realtyframes.api`` (the package that owns the private
    module); ``None`` for a module with no private part."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def public_spelling(module: str, name: str) -> str | None:
    """Where ``name`` of the private ``module`` is exported under the same name, or ``None``: the
    owning package's ``__all__`` or ``realtyframes``' (the same object, imported for real)."""
    owner = _private_owner(module)
    if owner is None or name.startswith("_"):
        return None
    value = getattr(importlib.import_module(module), name, None)
    for package in dict.fromkeys([owner, "realtyframes"]):
        front = importlib.import_module(package)
        if name in getattr(front, "__all__", ()) and getattr(front, name, None) is value:
            return f"{package}.{name}"
    return None


def private_imports_of_public_names(
    files: Modules, exported: Callable[[str, str], str | None] = public_spelling
) -> list[str]:
    """``path:line`` and the public spelling for each ``from realtyframes...._x import name`` (lazy
    ones too) of a name that the package exports: a test imports it from the front door. A unit
    test of a private helper (a name exported nowhere) keeps its private import."""
    found: list[str] = []
    for path, source in files.items():
        for node in ast.walk(ast.parse(source, filename=path)):
            module = node.module if isinstance(node, ast.ImportFrom) and not node.level else None
            if not (module and module.startswith("realtyframes") and _private_owner(module)):
                continue
            for alias in node.names:
                public = exported(module, alias.name)
                if public:
                    found.append(f"{path}:{node.lineno} {module}.{alias.name}: {public}")
    return sorted(found)


def _test_files() -> Modules:
    return {
        path.relative_to(TESTS.parent).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != Path(__file__).name  # its control cases name private modules on purpose
    }


# -- the tests -----------------------------------------------------------------------------------------
def test_every_import_points_downward() -> None:
    assert _violations() == []


def test_no_import_circles() -> None:
    assert circles(_src_modules()) == []


def test_no_registry_is_filled_at_import_time() -> None:
    assert registries(_src_modules()) == []


def test_no_new_import_of_another_package_s_private_module() -> None:
    new, stale = against_allowed(private_imports(_src_modules()), PRIVATE_ALLOWED)
    assert new == [], "export these through the package's __init__ instead"
    assert stale == [], "fixed: remove them from PRIVATE_ALLOWED (the list only shrinks)"
    assert all(why.strip() for why in PRIVATE_ALLOWED.values()), "each entry says why"


def test_the_check_sees_imports() -> None:
    """Guard against a checker that passes because it parses nothing."""
    loaders = [
        p
        for p in SRC.rglob("*.py")
        if _unit(_name_of(p.relative_to(SRC.parent).as_posix())) == "loaders"
    ]
    assert loaders, "no loaders modules found"
    targets = {t for p in loaders for _, t in _imports(p)}
    assert any(_unit(t) == "api" for t in targets)


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        ("analysis", "api", "never do HTTP"),
        ("api", "loaders", "points upward"),
        ("plots", "report", "points upward"),
        ("sandbox", "errors", "imports nothing outside"),
        ("report", "newthing", "not placed"),
    ],
)
def test_the_rules_bite(source: str, target: str, message: str) -> None:
    why = _rule(source, target)
    assert why is not None and message in why


def test_relative_imports_resolve() -> None:
    assert _unit("realtyframes.loaders._sync") == "loaders"
    assert _unit("realtyframes") == "__init__"
    found = _imports_in(
        "realtyframes/loaders/_a.py",
        "from . import _b\nfrom ..api import x\n",
        {"realtyframes.loaders._b"},
    )
    assert found == [(1, "realtyframes.loaders._b"), (2, "realtyframes.api")]


# -- control cases: each rule catches a synthetic module set that breaks it --------------------------
def test_a_circle_is_caught_lazy_and_type_checking_imports_too() -> None:
    modules = {
        "realtyframes/loaders/__init__.py": "",
        "realtyframes/loaders/_a.py": "def f():\n    from realtyframes.loaders import _b\n",
        "realtyframes/loaders/_b.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from realtyframes.loaders._c import C\n"
        ),
        "realtyframes/loaders/_c.py": "from realtyframes.loaders._a import f\n",
        "realtyframes/loaders/_d.py": "from realtyframes.loaders._a import f\n",
    }
    assert circles(modules) == [
        ["realtyframes.loaders._a", "realtyframes.loaders._b", "realtyframes.loaders._c"]
    ]
    modules["realtyframes/loaders/_c.py"] = ""
    assert circles(modules) == []


def test_a_registry_filled_at_import_is_caught() -> None:
    table = {
        "realtyframes/api/__init__.py": "",
        "realtyframes/api/_ops.py": (
            "OPERATIONS: dict[str, object] = {}\ndef register(op):\n    OPERATIONS[op.name] = op\n"
        ),
    }
    by_call = {
        **table,
        "realtyframes/loaders/endpoints.py": (
            "from realtyframes.api._ops import register\n"
            "def _declare(*ops):\n    for op in ops:\n        register(op)\n    return ops\n"
            "ENDPOINTS = _declare(1, 2)\n"
        ),
    }
    assert registries(by_call) == [
        "realtyframes.loaders.endpoints calls realtyframes.api._ops.register at import (a registry)"
    ]
    direct = {
        **table,
        "realtyframes/loaders/x.py": "from realtyframes.api._ops import OPERATIONS\nOPERATIONS['x'] = 1\n",
    }
    assert registries(direct) == [
        "realtyframes.loaders.x mutates realtyframes.api._ops.OPERATIONS at import"
    ]
    decorated = {
        **table,
        "realtyframes/loaders/y.py": "from realtyframes.api._ops import register\n@register\nclass Y:\n    pass\n",
    }
    assert registries(decorated) == [
        "realtyframes.loaders.y calls realtyframes.api._ops.register at import (a registry)"
    ]
    at_run_time = {
        **table,
        "realtyframes/loaders/z.py": "from realtyframes.api._ops import register\ndef later():\n    register(1)\n",
    }
    assert registries(at_run_time) == []


def test_an_import_of_another_package_s_private_module_is_caught() -> None:
    modules = {
        "realtyframes/__init__.py": "",
        "realtyframes/_spec.py": "",
        "realtyframes/api/__init__.py": "from realtyframes.api._engine import x\n",
        "realtyframes/api/_engine.py": "from realtyframes._spec import S\n",
        "realtyframes/loaders/__init__.py": "",
        "realtyframes/loaders/_paging.py": (
            "from realtyframes.api._engine import _caller_level\n"
            "from realtyframes.api import ApiClient\n"
        ),
        "realtyframes/cli/__init__.py": "from realtyframes.api import _engine\n",
    }
    found = private_imports(modules)
    assert found == [
        ("realtyframes.cli", "realtyframes.api._engine"),
        ("realtyframes.loaders._paging", "realtyframes.api._engine"),
    ]
    allowed = {
        ("realtyframes.cli", "realtyframes.api._engine"): "TODO: export it from api",
        ("realtyframes.report.x", "realtyframes.api._http"): "fixed since",
    }
    new, stale = against_allowed(found, allowed)
    assert new == [("realtyframes.loaders._paging", "realtyframes.api._engine")]
    assert stale == [("realtyframes.report.x", "realtyframes.api._http")]


def test_tests_import_public_names_from_the_front_door() -> None:
    assert private_imports_of_public_names(_test_files()) == [], "import these from the package"


def test_a_test_importing_a_public_name_from_a_private_module_is_caught() -> None:
    files = {
        "tests/a.py": "from realtyframes.api._errors import error_from_response\n",
        "tests/b.py": "def t():\n    from realtyframes._client import Client\n",
        "tests/c.py": "from realtyframes.api._retry import _backoff, parse_retry_after\n",
        "tests/d.py": "from realtyframes.api import error_from_response\nfrom realtyframes import Client\n",
    }
    assert private_imports_of_public_names(files) == [
        "tests/a.py:1 realtyframes.api._errors.error_from_response: realtyframes.api.error_from_response",
        "tests/b.py:2 realtyframes._client.Client: realtyframes.Client",
    ]
