"""The one public surface: ``realtyframes.__all__`` is exactly the documented names."""

from __future__ import annotations

import subprocess
import sys

import realtyframes as rf

DOCUMENTED = {
    # client and its settings (design.md "Public face")
    "Client",
    "ClientSettings",
    "RetryPolicy",
    "oauth",
    "sandbox",
    # analysis and plots
    "price_drops",
    "price_drop_summary",
    "market_summary",
    "market_trends",
    "market_changes",
    "comps",
    "price_index",
    "seasonally_adjust",
    "compare_markets",
    "traffic_summary",
    "lead_funnel",
    "TrafficSummary",
    "LeadFunnel",
    "Analytics",
    "LoadInfo",
    "Plan",
    "plot",
    # watches and notifications (docs/scheduling.md)
    "Watches",
    "WatchResult",
    "NotificationError",
    "ScopeBusyError",
    # exceptions and warnings
    "RealtyFramesError",
    "QueryError",
    "ConfigError",
    "ApiError",
    "BadRequestError",
    "InvalidTokenError",
    "InsufficientScopeError",
    "NotFoundError",
    "RateLimitError",
    "ServerError",
    "TransportError",
    "ConnectError",
    "RequestTimeoutError",
    "BadResponseError",
    "ResponseMismatchError",
    "OAuthError",
    "ApiDeprecationWarning",
    "AnalysisInputError",
    "MissingColumnsError",
    "ColumnTypeError",
    "SchemaValidationError",
    "CacheLockTimeout",
    "CacheReadTimeout",
    "DataQualityWarning",
    "SchemaDriftWarning",
    "DriftWarning",
    "RunAnomalyWarning",
    "CacheWarning",
    "__version__",
}


def test_all_is_exactly_the_documented_names() -> None:
    assert set(rf.__all__) == DOCUMENTED
    assert len(rf.__all__) == len(set(rf.__all__))
    assert rf.__all__ == sorted(rf.__all__)


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
    eager = {n for n in rf.__all__ if n in vars(rf)} - set(rf._LAZY)
    assert set(rf._LAZY) <= set(rf.__all__)
    assert {n for n in rf.__all__ if n not in rf._LAZY} <= eager | set(vars(rf))
    assert sorted(dir(rf)) == dir(rf) and set(rf.__all__) <= set(dir(rf))


def test_subpackages_load_on_attribute_access() -> None:
    code = "import realtyframes as rf; print(rf.analysis.market_trends is rf.market_trends)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
