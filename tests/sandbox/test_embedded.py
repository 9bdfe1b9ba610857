"""The embedded sandbox object: shared, reference-counted, stopped with the last reference."""

from __future__ import annotations

import httpx
import pytest

import realtyframes
from realtyframes.sandbox import (
    EMBEDDED_HISTORY_YEARS,
    EMBEDDED_LISTINGS,
    EmbeddedSandbox,
    SandboxOptions,
    embedded,
)
from realtyframes.sandbox import _embedded as embedded_module


def test_identity_is_the_data_and_the_package_version() -> None:
    """The cache identity of the embedded sandbox: byte-identical to what the client used. Its
    market is larger than ``SandboxOptions``' default (a default report's months need sales) and
    its history a year longer (the report's covered months need 3 years for a seasonal
    adjustment), with as many listings a year of history as twice the default over 3 years."""
    options = SandboxOptions(listings=EMBEDDED_LISTINGS, history_years=EMBEDDED_HISTORY_YEARS)
    default = SandboxOptions()
    assert EMBEDDED_HISTORY_YEARS == default.history_years + 1 == 4
    per_year = default.listings * 2 / default.history_years
    assert pytest.approx(per_year, rel=0.03) == EMBEDDED_LISTINGS / EMBEDDED_HISTORY_YEARS
    sandbox = embedded()
    try:
        assert sandbox.options == options
        assert sandbox.identity == (
            f"realtyframes-sandbox:seed={options.seed}:listings={options.listings}:"
            f"history_years={options.history_years}:as_of={options.as_of:%Y-%m-%d}:v{realtyframes.__version__}"
        )
    finally:
        sandbox.release()


def test_references_share_one_server_and_the_last_release_stops_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embedded_module, "_current", None)  # a server of this test's own
    starts: list[EmbeddedSandbox] = []
    first = embedded(on_start=starts.append)
    second = embedded(on_start=starts.append)
    assert first is second and starts == [first] and first.references == 2
    assert httpx.get(f"{first.url}/v1/me").json()["email"] == "demo@demo-realty.example"
    first.release()
    assert not second.stopped
    with second:
        assert "1 reference" in repr(second)
    assert second.stopped and embedded_module.current() is None
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{first.url}/v1/me", timeout=2)
    with pytest.raises(RuntimeError, match="without a reference"):
        second.release()
