"""The one public surface: ``realtyframes.__all__``, derived from one declaration of each name."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import realtyframes as rf
from realtyframes import errors
from realtyframes._lazy import declared


def test_all_is_derived_from_the_one_declaration_of_each_name() -> None:
    # each public name is written once: errors.__all__ or one TYPE_CHECKING line of __init__.py
    assert rf.__all__ == sorted({*errors.__all__, "__version__", *rf._LAZY})
    assert len(rf.__all__) == len(set(rf.__all__))
    assert {"Client", "market_trends", "plot", "sandbox", "QueryError"} <= set(rf.__all__)
    assert not set(rf._LAZY) & set(errors.__all__)


def test_every_public_name_is_documented() -> None:
    for name in rf.__all__:
        if name != "__version__":
            assert (getattr(rf, name).__doc__ or "").strip(), name


def test_each_lazy_name_comes_from_its_declared_module() -> None:
    table, modules = declared(rf.__file__)
    assert table == rf._LAZY and modules == {"oauth", "plot", "sandbox"}
    for name, module in table.items():
        loaded = importlib.import_module(module)
        assert getattr(rf, name) is (loaded if name in modules else getattr(loaded, name)), name


def test_a_new_public_name_is_one_line(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from realtyframes import plots as plot\n"
        "    from realtyframes.analysis import market_trends as market_trends\n"
        "    from realtyframes.analysis import seasonally_adjust as seasonally_adjust\n",
        encoding="utf-8",
    )
    table, modules = declared(init)
    assert table == {
        "plot": "realtyframes.plots",
        "market_trends": "realtyframes.analysis",
        "seasonally_adjust": "realtyframes.analysis",
    }
    assert modules == {"plot"}


def test_touching_an_error_loads_no_data_library() -> None:
    # the errors are imported with the package: rf.MissingColumnsError (an analysis error) does
    # not import pandas, pandera or narwhals
    code = (
        "import sys, realtyframes as rf; "
        "assert issubclass(rf.MissingColumnsError, rf.AnalysisInputError); "
        "rf.ColumnTypeError; rf.QueryError; "
        "print(sorted(m for m in ('pandas', 'pandera', 'narwhals', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_every_exported_name_is_defined() -> None:
    for name in rf.__all__:
        assert getattr(rf, name) is not None, name


def test_error_classes_form_the_documented_tree() -> None:
    for cls in (
        rf.BadRequestError,
        rf.InvalidTokenError,
        rf.InsufficientScopeError,
        rf.NotFoundError,
        rf.RateLimitError,
        rf.ServerError,
    ):
        assert issubclass(cls, rf.ApiError)
    for cls in (rf.ConnectError, rf.RequestTimeoutError, rf.BadResponseError):
        assert issubclass(cls, rf.TransportError)
    assert issubclass(rf.ResponseMismatchError, rf.BadResponseError)
    assert not issubclass(rf.TransportError, rf.ApiError)
    assert issubclass(rf.QueryError, ValueError)
    assert issubclass(rf.ApiError, rf.RealtyFramesError)
    for cls in (rf.SchemaValidationError, rf.CacheLockTimeout, rf.AnalysisInputError):
        assert issubclass(cls, rf.RealtyFramesError)
    assert issubclass(rf.MissingColumnsError, KeyError)
    assert issubclass(rf.SchemaDriftWarning, rf.DataQualityWarning)
    assert issubclass(rf.DriftWarning, rf.DataQualityWarning)
    assert issubclass(rf.RunAnomalyWarning, rf.DataQualityWarning)


def test_sandbox_and_plot_namespaces() -> None:
    assert callable(rf.sandbox.serve)
    assert {"api_key", "client_id", "client_secret", "redirect_uri"} <= set(vars(rf.sandbox.DEMO))
    assert callable(rf.plot.price_drop_distribution)
    assert callable(rf.oauth.authorization_url)


def test_import_is_light_and_starts_nothing() -> None:
    # rf.plot and rf.sandbox load on first use: the CLI and scripts that only fetch stay quick.
    code = (
        "import sys, threading, realtyframes as rf; "
        "print(sorted(m for m in ('matplotlib', 'uvicorn', 'starlette') if m in sys.modules), "
        "threading.active_count()); rf.plot; rf.sandbox; print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[] 1", "True"]


_HELP_SCRIPT = """
import contextlib, io, sys
import realtyframes
HEAVY = ("pandas", "pandera", "pyarrow", "matplotlib", "numpy", "httpx")
print(sorted(m for m in HEAVY if m in sys.modules))
from realtyframes.cli import main
for argv in (["--help"], ["fetch", "listings", "--help"], ["report", "market", "--help"]):
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
        main(argv)
    assert "usage" in shown.getvalue(), argv
print(sorted(m for m in HEAVY if m in sys.modules if m != "httpx"))
"""


def test_import_and_cli_help_load_no_data_library() -> None:
    # every name but the errors is imported on first use: `import realtyframes` and
    # `realtyframes --help` load neither pandas, pandera, pyarrow nor matplotlib (the time it
    # takes is measured in benchmarks/bench_cli.py)
    out = subprocess.run(
        [sys.executable, "-c", _HELP_SCRIPT], capture_output=True, text=True, check=True
    )
    assert out.stdout.split("\n")[:2] == ["[]", "[]"], out.stdout + out.stderr


def test_lazy_names_are_the_public_ones() -> None:
    assert set(rf._LAZY) <= set(rf.__all__)
    assert {n for n in rf.__all__ if n not in rf._LAZY} <= set(vars(rf))  # eager: the errors
    assert sorted(dir(rf)) == dir(rf) and set(rf.__all__) <= set(dir(rf))


def test_subpackages_load_on_attribute_access() -> None:
    code = "import realtyframes as rf; print(rf.analysis.market_trends is rf.market_trends)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_the_tuning_settings_are_documented_variables_checked_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each is a known REALTYFRAMES_* variable (not refused as a misspelling), in docs/loading.md's
    # table with its default, and a bad value is a ConfigError naming it when the client is made
    from realtyframes._environment import KNOWN_VARIABLES, TUNING_VARIABLES
    from realtyframes._tuning import KNOBS

    docs = (Path(__file__).resolve().parents[1] / "docs" / "loading.md").read_text()
    assert set(KNOBS) == set(TUNING_VARIABLES) and len(KNOBS) == 3
    for knob in KNOBS.values():
        assert knob.variable in KNOWN_VARIABLES
        assert f"| `{knob.variable}` | {knob.default} " in docs, knob.variable
        assert knob.get({knob.variable: " 12 "}) == 12 and knob.get({}) == knob.default
        for bad in ("0", "-3", "2.5", "lots"):
            monkeypatch.setenv(knob.variable, bad)
            with pytest.raises(rf.ConfigError, match=knob.variable):
                rf.Client("http://127.0.0.1:9")  # nothing listens there: raised before a request
        monkeypatch.delenv(knob.variable)
