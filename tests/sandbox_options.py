"""The options of the tests' sandboxes, importable by a test module (``conftest`` is not: under
xdist another directory's conftest may answer to that name).

>>> SMALL["listings"]
400
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

#: The fixed sandbox clock of the shared servers.
AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
#: Options of the shared servers.
SESSION_OPTIONS: dict[str, Any] = {"seed": 7, "listings": 3000, "as_of": AS_OF}
#: Default size of the servers started by ``start_sandbox`` (fast to generate): one year of
#: history, so that even a small market has many listings open at the clock (the tests of
#: loading, paging and syncing need them; the shared servers have the default 3 years).
SMALL: dict[str, Any] = {"listings": 400, "contacts": 60, "history_years": 1}
