"""Issue 54: memfuse writes only the files it owns, and never through a link it did not make.
RECENT.md, RECENT.kept.md, the roll-ups, the MEMORY.md backups and the note's journal are
read and written as regular files of one name; a link (symbolic or hard), a folder, a FIFO
in their place is refused by name before anything is read or written, and what memfuse
cannot read whole it never writes over. The installed-binary proofs with real files are in
tests/integration/test_own_files.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fakes import World
from tests.unit.flows.test_serve_flow import DAY, JOURNAL, NOW, ok, service

MEMORY_MD = "# Memory\n- The person's own fact, written by hand\n"
NEW_YEAR = "## 09:00\n- A bullet of New Year's day\n"


def files(world: World) -> dict[str, bytes]:
    """Every regular file of the workspace (links followed), by name: what a run may not touch."""
    found: dict[str, bytes] = {}
    for path in sorted(world.workspace.rglob("*")):
        if path.is_file() and not path.is_symlink() and ".memfuse" not in path.parts:
            found[str(path.relative_to(world.workspace))] = path.read_bytes()
    return found


def planted(world: World) -> None:
    world.journal(DAY, JOURNAL)
    world.journal("2026-01-01", NEW_YEAR)
    (world.workspace / "MEMORY.md").write_text(MEMORY_MD)


@pytest.mark.parametrize("target", ["MEMORY.md", "memory/2026-01-01.md"])
def test_surface_never_writes_recent_md_through_a_link_inside_the_workspace(
    world: World, target: str
) -> None:
    """On main, RECENT.md linked to MEMORY.md had surface replace MEMORY.md with RECENT.md's
    text (and copy MEMORY.md's facts into RECENT.kept.md first)."""
    planted(world)
    (world.workspace / "RECENT.md").symlink_to(target)
    before = files(world)
    out = world.run("surface", "--now", NOW)
    assert out.code != 0
    assert f"{world.workspace / 'RECENT.md'} is a symbolic link" in out.stderr
    assert "not rewritten" in out.stderr
    assert files(world) == before  # nothing read into a copy, nothing written
    assert os.readlink(world.workspace / "RECENT.md") == target


def test_surface_never_writes_a_recent_md_with_another_name(world: World) -> None:
    planted(world)
    os.link(world.workspace / "MEMORY.md", world.workspace / "RECENT.md")
    out = world.run("surface", "--now", NOW)
    assert out.code != 0 and "RECENT.md has 2 hard links" in out.stderr
    assert (world.workspace / "MEMORY.md").read_text() == MEMORY_MD


def test_the_kept_lines_never_go_through_a_link_to_a_journal(world: World) -> None:
    """On main, RECENT.kept.md linked to a journal was rewritten with the kept lines: the
    journal's bullets gone. Now the link is named and the lines are kept in the state folder."""
    planted(world)
    assert world.run("surface", "--now", NOW).code == 0
    recent = world.workspace / "RECENT.md"
    recent.write_text(recent.read_text() + "- A line the person added by hand\n")
    (world.workspace / "RECENT.kept.md").symlink_to("memory/2026-01-01.md")
    out = world.json("surface", "--now", NOW)
    assert out.code == 0, out.stderr
    assert (world.workspace / "memory" / "2026-01-01.md").read_text() == NEW_YEAR
    assert any("RECENT.kept.md is a symbolic link" in w for w in out.envelope["warnings"]), (
        out.envelope["warnings"]
    )
    kept = Path(out.data["user_lines"]["copy"])
    assert kept.parent != world.workspace and "by hand" in kept.read_text()


def test_a_recent_md_too_big_to_read_whole_is_never_written_over(world: World) -> None:
    """On main, a 1.3 MiB RECENT.md under `max_file_mib = 1` was read as nothing to keep and
    replaced: the person's lines in it lost without a word."""
    planted(world)
    (world.workspace / ".memfuse").mkdir()
    (world.workspace / ".memfuse" / "config.toml").write_text("max_file_mib = 1\n")
    mine = "".join(
        f"- The person's line {n}, written over a year of mornings\n" for n in range(24_000)
    )
    (world.workspace / "RECENT.md").write_text(mine)
    assert (world.workspace / "RECENT.md").stat().st_size > 1.25 * 1024 * 1024
    out = world.run("surface", "--now", NOW)
    assert out.code != 0
    assert "RECENT.md is 1.3 MiB, above the 1 MiB read limit" in out.stderr, out.stderr
    assert "not rewritten" in out.stderr
    assert (world.workspace / "RECENT.md").read_text() == mine


@pytest.mark.parametrize("target", ["2026-01-01.md", "../MEMORY.md", "../RECENT.md"])
def test_a_note_never_goes_through_a_link_in_place_of_todays_journal(
    world: World, target: str
) -> None:
    """On main, `memory/<today>.md -> 2026-01-01.md` had the note appended to New Year's day
    and answered under today's path and URI; to MEMORY.md or RECENT.md, stored never."""
    planted(world)
    (world.workspace / "RECENT.md").write_text("# Recent\n")
    today = world.workspace / "memory" / f"{DAY}.md"
    today.unlink()
    today.symlink_to(target)
    before = files(world)
    answer = service(world).call("note", {"text": "Decided: ship on Friday"})
    assert answer.error
    assert f"memory/{DAY}.md is a symbolic link" in answer.text and "nothing written" in answer.text
    assert files(world) == before


def test_a_note_never_writes_into_a_folder_or_fifo_in_place_of_todays_journal(
    world: World,
) -> None:
    today = world.workspace / "memory" / f"{DAY}.md"
    today.mkdir(parents=True)
    answer = service(world).call("note", {"text": "Into a folder?"})
    assert answer.error and "is a directory" in answer.text and "nothing written" in answer.text
    assert list(today.iterdir()) == []
    today.rmdir()
    os.mkfifo(today)
    answer = service(world).call("note", {"text": "Into a FIFO?"})
    assert answer.error and "FIFO" in answer.text


def test_a_note_answers_the_file_it_really_wrote(world: World) -> None:
    planted(world)
    data = ok(service(world).call("note", {"text": "Decided: ship on Friday"}))["data"]
    today = world.workspace / "memory" / f"{DAY}.md"
    assert data["file"] == f"memory/{DAY}.md" and data["uri"].endswith(f"/{DAY}#2200-1")
    assert today.read_text().endswith("- Decided: ship on Friday\n")
    assert (world.workspace / "memory" / "2026-01-01.md").read_text() == NEW_YEAR


def test_tidy_never_rolls_up_or_backs_up_through_a_link(world: World) -> None:
    """On main, a week's roll-up linked to MEMORY.md had the old day appended to MEMORY.md,
    and a backup's name linked to a journal not there yet made that journal of MEMORY.md."""
    (world.workspace / "MEMORY.md").write_text(MEMORY_MD)
    world.journal("2026-11-02", "- Old bullet from November\n")
    assert world.run("sync", "--all", "--now", NOW).code == 0
    weekly = world.workspace / "memory" / "weekly"
    weekly.mkdir()
    (weekly / "2026-11-02.md").symlink_to("../../MEMORY.md")
    archive = world.workspace / "memory" / "archive"
    archive.mkdir()
    (archive / "MEMORY.md.bak-2026-11-29").symlink_to("../2026-11-28.md")
    before = files(world)
    out = world.json("tidy", "--archive", "--now", NOW)
    warnings = "\n".join(out.envelope["warnings"])
    assert "2026-11-02.md is a symbolic link" in warnings, warnings
    assert "MEMORY.md.bak-2026-11-29 is a symbolic link" in warnings, warnings
    assert files(world) == before
    assert not (world.workspace / "memory" / "2026-11-28.md").exists()


@pytest.mark.parametrize("target", ["../../MEMORY.md", "outside", "a FIFO", "a folder"])
def test_a_link_in_place_of_todays_backup_is_no_backup(
    world: World, tmp_path: Path, target: str
) -> None:
    """Review of issue 54: a link at today's backup name to a file that exists (MEMORY.md
    itself, or any file outside) made tidy say "backup for today exists", with no warning,
    and make none: the agent kept MEMORY.md from ever being backed up. Such a name is no
    backup: refused and named, as a link to nothing already was."""
    memory_md = world.workspace / "MEMORY.md"
    memory_md.write_text(MEMORY_MD)
    archive = world.workspace / "memory" / "archive"
    archive.mkdir(parents=True)
    if target == "outside":
        target = str(tmp_path / "elsewhere.md")
        Path(target).write_text("not a backup\n")
    backup = archive / "MEMORY.md.bak-2026-11-29"
    if target.startswith("a "):  # named as it is, not taken for today's backup
        os.mkfifo(backup) if target == "a FIFO" else backup.mkdir()
    else:
        backup.symlink_to(target)
    out = world.json("tidy", "--now", NOW)
    warnings = "\n".join(out.envelope["warnings"])
    assert "MEMORY.md is not backed up" in warnings and "bak-2026-11-29" in warnings, warnings
    assert out.envelope["data"]["memory_md"]["backup"] is None
    assert memory_md.read_text() == MEMORY_MD
