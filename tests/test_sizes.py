"""Size limits of the source (``style.md``: modules under ~500 lines, functions under ~80).

- every module in ``src/realtyframes`` has at most :data:`MODULE_LINES` lines;
- every function's body, its docstring not counted, has at most :data:`FUNCTION_LINES` lines;
- the engine room (``api``, ``loaders``, ``cache`` and the client modules, issue #33) stays within
  :data:`ENGINE_ROOM_LINES`: it may grow only by a change that raises the budget here, with the
  feature that needs the lines named in ``docs/decisions.md``.

Each checker takes sources (name -> text), so each rule has a control case that breaks it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "realtyframes"
MODULE_LINES = 500
FUNCTION_LINES = 80
#: ``wc -l`` of the engine room's modules: 12,290 after #33's last round (10,951 when #33 was
#: filed; the state database, its migration, the injected clock and the RESO client added 1,126).
ENGINE_ROOM_LINES = 12_400
ENGINE_ROOM = ("api/*.py", "loaders/*.py", "cache/*.py", "_client*.py")


def sources(patterns: Iterable[str] = ("**/*.py",)) -> dict[str, str]:
    return {
        path.relative_to(SRC).as_posix(): path.read_text(encoding="utf-8")
        for pattern in patterns
        for path in sorted(SRC.glob(pattern))
    }


def long_modules(modules: Mapping[str, str]) -> list[str]:
    lengths = {name: len(text.splitlines()) for name, text in modules.items()}
    return [f"{name}: {n} lines" for name, n in lengths.items() if n > MODULE_LINES]


def long_functions(modules: Mapping[str, str]) -> list[str]:
    """Functions whose body, without the docstring, is longer than :data:`FUNCTION_LINES`."""
    found = []
    for name, text in modules.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body
                if (
                    len(body) > 1
                    and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                ):
                    body = body[1:]
                lines = (node.end_lineno or 0) - body[0].lineno + 1
                if lines > FUNCTION_LINES:
                    found.append(f"{name}:{node.lineno} {node.name}: {lines} lines")
    return found


def total_lines(modules: Mapping[str, str]) -> int:
    return sum(len(text.splitlines()) for text in modules.values())


def test_no_module_over_the_limit() -> None:
    assert long_modules(sources()) == []


def test_no_function_over_the_limit() -> None:
    assert long_functions(sources()) == []


def test_the_engine_room_stays_within_its_budget() -> None:
    modules = sources(ENGINE_ROOM)
    assert len(modules) > 40  # the globs still find the rooms
    assert total_lines(modules) <= ENGINE_ROOM_LINES


def test_the_checks_bite() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES + 1))
    long = f'def f():\n    """Doc."""\n{body}\n'
    assert long_functions({"m.py": long}) == ["m.py:1 f: 81 lines"]
    assert long_functions({"m.py": long.replace("    x0 = 0\n", "")}) == []  # the doc is free
    assert long_modules({"m.py": "x = 1\n" * (MODULE_LINES + 1)}) == ["m.py: 501 lines"]
    assert long_modules({"m.py": "x = 1\n" * MODULE_LINES}) == []
    assert total_lines({"a.py": "a\nb\n", "b.py": "c\n"}) == 3
