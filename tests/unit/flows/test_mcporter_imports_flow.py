"""A run whose mcporter config lacks the server goes on through mcporter when mcporter is
there: mcporter merges the editors' configs in (Cursor's, Claude's…) even with `--config`,
unless the file says `"imports": []` (docs/reference.md, "mcporter 0.12"), so it may well start a
server memfuse cannot see. Only where mcporter is missing does the run stop at the config's
fault at once (docs/decisions.md 382, 420)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes import World

DAY = "2026-11-29"


def _config_without_the_server(tmp_path: Path) -> Path:
    path = tmp_path / "mcporter.json"
    path.write_text(json.dumps({"mcpServers": {"github": {"command": "gh"}}}))
    return path


def test_a_server_mcporter_imports_from_an_editor_config_is_still_reached(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mcporter = bin_dir / "mcporter"
    mcporter.write_text("#!/bin/sh\nexit 0\n")
    mcporter.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    config = _config_without_the_server(tmp_path)
    out = world.run("sync", "--now", f"{DAY}T10:00", "--mcporter-config", str(config))
    assert out.code == 0, out.stderr
    assert world.gateway.calls  # the transport was started: the store answered


def test_without_mcporter_the_configs_fault_stops_the_run_at_once(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    config = _config_without_the_server(tmp_path)
    out = world.run("sync", "--now", f"{DAY}T10:00", "--mcporter-config", str(config))
    assert out.code == 78 and "has no server 'agent-memory'" in out.stderr
    assert "mcporter not found" not in out.stderr
    assert world.gateway.calls == []
