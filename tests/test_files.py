"""The one atomic-write helper (:mod:`realtyframes._files`): all or nothing, private when asked."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from realtyframes._files import atomic_path, atomic_write_text


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = atomic_write_text(tmp_path / "report.html", "old")
    with pytest.raises(RuntimeError, match="disk full"), atomic_path(target) as tmp:
        tmp.write_text("half of the new", encoding="utf-8")
        raise RuntimeError("disk full")
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_the_temporary_file_is_hidden_next_to_the_target(tmp_path: Path) -> None:
    with atomic_path(tmp_path / "x.parquet") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".x.parquet.tmp-")
        tmp.write_bytes(b"data")
    assert (tmp_path / "x.parquet").read_bytes() == b"data"


def test_mode_makes_the_file_private_whatever_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "token.json"
    target.write_text("public")
    target.chmod(0o644)
    previous = os.umask(0o000)
    try:
        atomic_write_text(target, "secret", mode=0o600)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text(encoding="utf-8") == "secret"
