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
and under ``TYPE_CHECKING`` count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
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
    "_client_settings": 6.5,  # between the loaders it checks with and the Client
    "_changes": 2,
    "errors": 1,
    "_files": 1,
    "_display": 1,
    "_config": 4,
    "api": 3,
    "schemas": 4,
    "cache": 5,
    "oauth": 5,
    "loaders": 6,
    "_client_runs": 6.7,  # plan_* and runs() of the Client (a mixin)
    "_runs": 6.8,  # run recording at the Client's and the report's entry points
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


def _unit(module: str) -> str:
    """``realtyframes.loaders._sync`` -> ``loaders``; ``realtyframes`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _root_member(name: str) -> str:
    """``from realtyframes import name``: the module ``name``, else an attribute of the root."""
    is_module = (SRC / f"{name}.py").exists() or (SRC / name).is_dir()
    return f"realtyframes.{name}" if is_module else "realtyframes"


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every ``realtyframes`` module imported by ``path`` (absolute or relative), with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
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
            if target == "realtyframes":  # `from realtyframes import x`: a module, or the root's
                found += [(node.lineno, _root_member(a.name)) for a in node.names]
            elif target.startswith("realtyframes."):
                found.append((node.lineno, target))
    return found


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
    for path in sorted(SRC.rglob("*.py")):
        source = _unit(_module_name(path))
        for line, target in _imports(path):
            why = _rule(source, _unit(target))
            if why:
                problems.append(f"{path.relative_to(SRC.parent)}:{line} imports {target}: {why}")
    return problems


def test_every_import_points_downward() -> None:
    assert _violations() == []


def test_the_check_sees_imports() -> None:
    """Guard against a checker that passes because it parses nothing."""
    loaders = [p for p in SRC.rglob("*.py") if _unit(_module_name(p)) == "loaders"]
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


def test_relative_imports_resolve(tmp_path: Path) -> None:
    assert _unit("realtyframes.loaders._sync") == "loaders"
    assert _unit("realtyframes") == "__init__"
