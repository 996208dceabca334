"""The suite's temporary root in a tmpfs (tests/conftest.py, docs/decisions.md 415) only where
the tests can run there: the flows run programs they write into their temporary folders (a
stand-in `node`, `crontab`, `systemctl`), which a `noexec` mount refuses — as Docker mounts
/dev/shm, also when `--shm-size` gives it room."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import _in_memory

ROOMY = {"f_bavail": 1 << 20, "f_frsize": 4096}  # 4 GiB free


def _chosen(monkeypatch: pytest.MonkeyPatch, folder: Path, flags: int) -> str | None:
    monkeypatch.delenv("PYTEST_DEBUG_TEMPROOT", raising=False)
    monkeypatch.setattr(os, "statvfs", lambda _p: SimpleNamespace(**ROOMY, f_flag=flags))
    _in_memory(folder)
    return os.environ.get("PYTEST_DEBUG_TEMPROOT")


@pytest.mark.skipif(not hasattr(os, "ST_NOEXEC"), reason="statvfs says noexec on Linux only")
def test_a_noexec_tmpfs_is_not_the_temporary_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert _chosen(monkeypatch, tmp_path, os.ST_NOEXEC | os.ST_NOSUID) is None


def test_a_roomy_tmpfs_that_runs_programs_is_the_temporary_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert _chosen(monkeypatch, tmp_path, 0) == str(tmp_path)
