"""The runnable examples in the package's docstrings stay true.

Examples that need a running server or network are marked ``+SKIP`` in the docstrings themselves;
every other example runs here.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import realtyframes

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(realtyframes.__path__, prefix="realtyframes.")
    if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
