"""Every client a RESO test makes (``reso_clients.OPEN``) is closed after it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reso_clients import OPEN


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    while OPEN:
        OPEN.pop().close()
