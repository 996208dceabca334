"""`memfuse surface` when writing RECENT.md goes wrong, in-process: the old file always stays."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from memfuse import confine
from tests.fakes import World

NOW = "2026-02-28T14:05:00+00:00"
JOURNAL_TODAY = (
    "## 09:00\n- Reviewed the 2.5 release checklist\n- 今天很开心\n"
    "## 13:00\n- We must keep the changelog current\n"
)
OLD = b"# RECENT.md\n\nold and precious\n"


@pytest.fixture
def offline(world: World) -> World:
    """Today's journal, an earlier RECENT.md, and a store that cannot be reached."""
    world.journal("2026-02-28", JOURNAL_TODAY)
    (world.workspace / "RECENT.md").write_bytes(OLD)
    world.gateway.down = "missing"
    return world


def test_a_render_error_leaves_the_old_file_and_exits_1(
    offline: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kw: object) -> str:
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr("memfuse.commands.surface.recent_md", broken)
    out = offline.json("surface", "--now", NOW)
    assert out.code == 1
    assert out.envelope["status"] == "failed"
    assert "renderer exploded" in out.data["error"]
    assert (offline.workspace / "RECENT.md").read_bytes() == OLD


def test_a_full_disk_leaves_the_old_file_and_exits_1(
    offline: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    def enospc(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(
        "memfuse.confine.WorkspaceFiles.write",
        lambda self, path, data, **kw: confine.write_atomic(self.root, path, data, write=enospc),
    )
    out = offline.run("surface", "--now", NOW)
    assert out.code == 1
    assert "cannot write" in out.stderr and "No space left" in out.stderr
    assert (offline.workspace / "RECENT.md").read_bytes() == OLD
    assert sorted(p.name for p in offline.workspace.iterdir()) == ["RECENT.md", "memory"]


def test_stdout_prints_the_file_and_writes_nothing(offline: World) -> None:
    (offline.workspace / "RECENT.md").unlink()
    out = offline.run("surface", "--stdout", "--now", NOW)
    assert out.code == 0
    assert out.stdout.startswith("# RECENT.md\n\n_auto-updated: 2026-02-28 14:05_\n")
    assert "Reviewed the 2.5 release checklist" in out.stdout
    assert not (offline.workspace / "RECENT.md").exists()


def test_nothing_is_left_behind_in_the_workspace_but_recent_md(offline: World) -> None:
    (offline.workspace / "RECENT.md").unlink()  # OLD holds a line of its own: it would be kept
    for _run in range(2):  # the second replaces a RECENT.md that memfuse wrote: nothing to keep
        assert offline.run("surface", "--now", NOW).code == 0
        names = sorted(p.name for p in Path(offline.workspace).iterdir())
        assert names == ["RECENT.md", "memory"]  # memfuse's own state lives outside it


def test_a_store_answer_nested_200_000_deep_is_a_failed_call_and_surface_falls_back(
    offline: World,
) -> None:
    """Issue 29: such an answer crashed the run with RecursionError, and no RECENT.md."""
    offline.gateway.down = None
    deep = "[" * 200_000 + "]" * 200_000
    for tool in ("recall", "recall_path"):
        offline.gateway.texts[tool] = deep
    out = offline.json("surface", "--now", NOW)
    assert out.code == 0, out.stderr
    assert out.data["source"] == "journals"
    assert (offline.workspace / "RECENT.md").exists()
