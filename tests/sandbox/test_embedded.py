"""The embedded sandbox object: shared, reference-counted, stopped with the last reference."""

from __future__ import annotations

import subprocess
import sys

import pytest

import realtyframes
from realtyframes.sandbox import (
    EMBEDDED_HISTORY_YEARS,
    EMBEDDED_LISTINGS,
    SandboxOptions,
    embedded,
)


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


#: The test below in a fresh interpreter: a process's embedded sandbox is shared by everything
#: in it, so a server of the test's own needs a process of its own.
REFERENCES = """
import httpx
from realtyframes.sandbox import embedded

starts = []
first = embedded(on_start=starts.append)
second = embedded(on_start=starts.append)
assert first is second and starts == [first] and first.references == 2
assert httpx.get(f"{first.url}/v1/me").json()["email"] == "demo@demo-realty.example"
first.release()
assert not second.stopped
with second:
    assert "1 reference" in repr(second)
assert second.stopped
try:
    httpx.get(f"{first.url}/v1/me", timeout=2)
    raise AssertionError("the server still answers after the last release")
except httpx.TransportError:
    pass
try:
    second.release()
    raise AssertionError("a release without a reference was accepted")
except RuntimeError as exc:
    assert "without a reference" in str(exc), exc
third = embedded(lazy=True)  # the last release forgot it: the next reference, a new server
assert third is not second and not third.started
third.release()
print("ok")
"""


def test_references_share_one_server_and_the_last_release_stops_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", REFERENCES], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
