"""Fixtures the flows share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of stand-ins for a scheduler's commands, first on PATH; systemd's units under
    the test's own config folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return bin_dir
