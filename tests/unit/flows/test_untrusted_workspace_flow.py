"""Every byte under the workspace is the agent's: hostile files cost a warning, never a hang,
a write outside, or a program run. In-process against the fake store; the installed-binary
proofs are in tests/integration/test_untrusted_workspace.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.fakes import World, digest

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"


def test_a_fifo_a_device_link_and_an_oversize_journal_each_cost_one_warning(
    world: World,
) -> None:
    world.journal(DAY, "- Shipped the billing fix\n")
    memory = world.workspace / "memory"
    os.mkfifo(memory / "2026-11-28.md")
    (memory / "2026-11-27.md").symlink_to("/dev/zero")
    with (memory / "2026-11-26.md").open("wb") as big:
        big.truncate(2 * 1024 * 1024)
    (world.workspace / ".memfuse").mkdir()
    (world.workspace / ".memfuse" / "config.toml").write_text("max_file_mib = 1\n")
    out = world.json("sync", "--days", "7", "--now", NOW)
    assert out.code == 0, out.stderr
    warnings = out.envelope["warnings"]
    assert [w for w in warnings if "2026-11-28.md" in w] == [
        f"{memory / '2026-11-28.md'} is a FIFO, not a regular file; skipped"
    ]
    assert len([w for w in warnings if "2026-11-27.md" in w and "outside" in w]) == 1
    assert len([w for w in warnings if "2026-11-26.md" in w and "1 MiB read limit" in w]) == 1
    assert out.data["counts"]["added"] == 1
    # The lock is free: the next run gets it at once.
    assert world.json("sync", "--now", NOW).code == 0


def test_recent_md_linking_out_of_the_workspace_is_refused_target_untouched(
    world: World, decoy: Path
) -> None:
    world.journal(DAY, "- Shipped the billing fix\n")
    (world.workspace / "RECENT.md").symlink_to(decoy / ".bashrc")
    before = digest(decoy)
    out = world.run("surface", "--now", NOW)
    assert out.code == 1
    assert "RECENT.md is a symbolic link" in out.stderr and "untouched" in out.stderr
    assert digest(decoy) == before


def test_tidy_writes_no_backup_or_weekly_through_an_archive_link_out(
    world: World, decoy: Path
) -> None:
    (world.workspace / "MEMORY.md").write_text("# Memory\n- 当前最重要的事：发版\n")
    world.journal("2026-11-01", "- Old bullet from November\n")
    assert world.run("sync", "--all", "--now", NOW).code == 0
    (world.workspace / "memory" / "archive").symlink_to(decoy / "sub")
    (world.workspace / "memory" / "weekly").symlink_to(decoy)
    before = digest(decoy)
    out = world.json("tidy", "--archive", "--now", NOW)
    assert out.code == 0, out.stderr
    assert any("MEMORY.md is not backed up" in w for w in out.envelope["warnings"])
    assert any("not archiving 2026-11-01.md" in w for w in out.envelope["warnings"])
    assert digest(decoy) == before
    assert (world.workspace / "memory" / "2026-11-01.md").exists()  # nothing lost


def test_a_memory_md_that_is_a_fifo_is_skipped_with_a_warning(world: World) -> None:
    os.mkfifo(world.workspace / "MEMORY.md")
    out = world.json("tidy", "--now", NOW)
    assert out.code == 0, out.stderr
    assert any("MEMORY.md" in w and "FIFO" in w for w in out.envelope["warnings"])


def test_a_dot_memfuse_link_in_the_workspace_is_neither_followed_nor_a_stop(
    world: World, decoy: Path
) -> None:
    """memfuse's state is not in the workspace: a `.memfuse` the agent made a link changes
    nothing but the workspace config it would hold, which is skipped with a warning."""
    world.journal(DAY, "- Shipped the billing fix\n")
    (decoy / "config.toml").write_text("jobs = 1\n")
    (world.workspace / ".memfuse").symlink_to(decoy)
    before = digest(decoy)
    out = world.json("sync", "--now", NOW)
    assert out.code == 0, out.stderr
    assert out.data["counts"]["added"] == 1
    assert any("outside the workspace" in w and "skipped" in w for w in out.envelope["warnings"])
    assert digest(decoy) == before


def test_a_state_folder_that_is_a_link_is_refused(world: World, decoy: Path) -> None:
    world.journal(DAY, "- Shipped the billing fix\n")
    world.state.parent.mkdir(parents=True)
    world.state.symlink_to(decoy)
    before = digest(decoy)
    out = world.run("sync", "--now", NOW)
    assert out.code == 1
    assert "is a symbolic link" in out.stderr
    assert digest(decoy) == before
    assert world.gateway.calls == []


def test_state_files_are_private(world: World) -> None:
    world.journal(DAY, "- Shipped the billing fix\n")
    assert world.run("sync", "--now", NOW).code == 0
    state = world.state
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    for name in ("ledger.sqlite3", "lock", "memfuse.log"):
        assert stat.S_IMODE((state / name).stat().st_mode) == 0o600, name


def test_a_ledger_link_planted_in_the_state_folder_is_moved_aside(
    world: World, decoy: Path
) -> None:
    world.journal(DAY, "- Shipped the billing fix\n")
    world.state.mkdir(parents=True, mode=0o700)
    (world.state / "ledger.sqlite3").symlink_to(decoy / "new.db")
    out = world.json("sync", "--now", NOW)
    assert out.code == 0, out.stderr
    assert any("ledger.sqlite3 is a symbolic link" in w and "moved aside" in w
               for w in out.envelope["warnings"])  # fmt: skip
    assert not (decoy / "new.db").exists()
    assert not (world.state / "ledger.sqlite3").is_symlink()
    assert world.json("sync", "--date", DAY, "--now", NOW).data["counts"]["unchanged"] == 1


def test_keywords_and_caps_from_the_workspace_config_still_apply(world: World) -> None:
    (world.workspace / ".memfuse").mkdir()
    (world.workspace / ".memfuse" / "config.toml").write_text(
        '[classify]\nknowledge = ["decided"]\n[surface]\nevent_cap = 1\n'
    )
    world.journal(
        DAY,
        "- We decided to ship on Friday\n- Met Bob about the billing migration\n"
        "- Reviewed the staging deploy checklist\n",
    )
    out = world.json("sync", "--explain", "--now", NOW)
    assert out.envelope["warnings"] == []
    assert [e["type"] for e in out.data["explain"]] == ["knowledge", "event", "event"]
    surfaced = world.json("surface", "--now", NOW)
    assert surfaced.data["sections"]["event"] == 1


def test_a_journal_hard_linked_to_a_file_outside_is_not_read_and_is_an_alarm(
    world: World, decoy: Path
) -> None:
    world.journal(DAY, "- Shipped the billing fix\n")
    os.link(decoy / "sub" / "notes.md", world.workspace / "memory" / "2026-11-28.md")
    out = world.json("sync", "--days", "7", "--now", NOW)
    assert out.code == 0, out.stderr
    assert any("2026-11-28.md has 2 hard links" in w for w in out.envelope["warnings"])
    assert list(world.gateway.journal_uris().values()) == ["Shipped the billing fix"]
    status = world.run("status", "--now", NOW)
    assert status.code == 4
    assert "memory/2026-11-28.md cannot be read" in status.stdout + status.stderr
    recalled = world.json("recall", "private", "--now", NOW)
    assert "private" not in str(recalled.data["results"])
