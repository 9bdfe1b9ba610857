"""The RESO tests' clients: a platform client and a RESO client on one sandbox (``pair``), each
kept in ``OPEN`` and closed after its test by ``tests/reso/conftest.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import realtyframes as rf

#: The clients the running test made; ``tests/reso/conftest.py`` closes them after it.
OPEN: list[rf.Client] = []


def pair(url: str, tmp_path: Path, **reso: Any) -> tuple[rf.Client, rf.Client]:
    """A platform client and a RESO client (``reso``: ``Client.reso``'s options) on the sandbox
    at ``url``, sharing the cache at ``tmp_path``."""
    platform = rf.Client(url, api_key="k", cache_dir=tmp_path, progress=False)
    source = rf.Client.reso(
        url + "/reso/odata", token="reso-token", cache_dir=tmp_path, progress=False, **reso
    )
    OPEN.extend((platform, source))
    return platform, source
