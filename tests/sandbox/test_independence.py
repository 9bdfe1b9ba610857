"""The sandbox is a second reading of the spec: it imports nothing from the client side."""

from __future__ import annotations

import ast
from pathlib import Path

import realtyframes.sandbox
from realtyframes.sandbox import routes

SANDBOX = Path(realtyframes.sandbox.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_sandbox_imports_nothing_from_the_rest_of_the_package() -> None:
    outside = {
        f"{path.relative_to(SANDBOX)}: {name}"
        for path in SANDBOX.rglob("*.py")
        for name in _imported_modules(path)
        if name.split(".")[0] == "realtyframes" and not name.startswith("realtyframes.sandbox")
    }
    assert outside == set()


def test_every_path_is_declared_once() -> None:
    paths = [e.path for e in routes.ENDPOINTS]
    assert len(paths) == len(set(paths))
    assert routes.SEARCH_PATH in paths and set(paths) >= routes.LEGACY_PATHS
