"""A run the workspace lock refused says nothing of the store's setup: it does not clear the
alarm of a broken setup (decision 380) — only a run whose setup holds does (decision 422)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memfuse.run.lock import WorkspaceLock
from memfuse.state.folder import StateFolder
from tests.fakes import World, state_of

DAY = "2026-11-29"


def test_a_locked_out_run_does_not_clear_a_broken_setups_alarm(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-mcporter"))  # decision 420
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    typo = ("--mcporter-config", str(tmp_path / "mcporter.jsn"))
    assert world.run("sync", "-q", "--now", f"{DAY}T10:00", *typo).code == 78
    with WorkspaceLock(StateFolder(state_of(world.workspace)), "tidy"):
        assert world.run("sync", "-q", "--now", f"{DAY}T11:00", *typo).code == 75
    status = world.run("status", "--now", f"{DAY}T11:05")
    assert status.code == 4, status.stdout
    assert "its store's setup is broken (exit 78 since 2026-11-29 10:00" in status.stdout
    assert world.run("sync", "-q", "--now", f"{DAY}T12:00").code == 0  # the setup holds
    assert world.run("status", "--now", f"{DAY}T12:05").code == 0
