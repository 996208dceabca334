"""Every Markdown form is a journal (issue 32): a late note to a day already archived, a bullet
written into a weekly roll-up, and a day whose forms cannot all be read. In-process, against
the scripted store."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from memfuse.workspace.layout import Workspace
from tests.fakes import World

DAY = "2026-11-16"  # a Monday
LATER = "2026-11-30"  # two weeks on: DAY is old enough to archive
FIRST = "## 14:00\n- Met Bob about the billing migration plan\n- Alice prefers async updates\n"
LATE = "Late note: the billing dry run moved to Friday"
WRITTEN_IN = "Carol owns the invoice export from now on"


def held(world: World) -> dict[str, str]:
    """The journal memories in the store, text by URI."""
    return world.gateway.journal_uris()


def archived_day(world: World) -> Path:
    """DAY written, synced and rolled up: its daily in memory/archive/, a section of its week."""
    world.journal(DAY, FIRST)
    assert world.json("sync", "--now", f"{DAY}T22:00").data["counts"]["added"] == 2
    rolled = world.json("tidy", "--archive", "--now", f"{LATER}T03:00")
    assert [r["date"] for r in rolled.data["archive"]["archived"]] == [DAY], rolled.stderr
    return world.workspace / "memory" / "weekly" / f"{DAY}.md"


def test_a_late_note_to_an_archived_day_is_synced_without_moving_the_others(
    world: World,
) -> None:
    archived_day(world)
    before = held(world)
    world.journal(DAY, f"## 14:00\n- {LATE}\n")  # a new daily beside the archived copy
    late = world.json("sync", "--now", f"{LATER}T14:00")
    assert late.code == 0, late.stderr
    assert late.data["counts"]["added"] == 1, late.data["counts"]
    assert late.data["counts"]["stale"] == 0  # the archived bullets are still the day's
    now = held(world)
    assert {u: t for u, t in now.items() if u in before} == before  # nothing overwritten
    assert LATE in now.values()
    (uri,) = [u for u, t in now.items() if t == LATE]
    assert uri.endswith(f"{DAY}#1400-3")  # the next free place, not the first bullet's
    where = world.json("where", LATE, "--now", f"{LATER}T14:00")
    assert where.data["bullets"][0]["location"].startswith(f"memory/{DAY}.md:")
    pruned = world.json("sync", "--all", "--prune", "--now", f"{LATER}T14:10")
    assert pruned.data["pruned"] == [] and held(world) == now


def test_archiving_a_late_note_keeps_it_in_the_store_the_roll_up_and_recall(
    world: World,
) -> None:
    weekly = archived_day(world)
    world.journal(DAY, f"## 14:00\n- {LATE}\n")
    world.json("sync", "--now", f"{LATER}T14:00")
    synced = held(world)
    again = world.json("tidy", "--archive", "--now", f"{LATER}T15:00")
    assert [r["date"] for r in again.data["archive"]["archived"]] == [DAY], again.stderr
    archive = world.workspace / "memory" / "archive"
    assert (archive / f"{DAY}.md").read_text() == FIRST  # the first copy is left as it was
    assert (archive / f"{DAY}.1.md").read_text() == f"## 14:00\n- {LATE}\n"
    rollup = weekly.read_text()
    assert rollup.count(f"## {DAY}") == 2 and LATE in rollup  # the roll-up shows it too
    after = world.json("sync", "--all", "--prune", "--now", f"{LATER}T16:00")
    assert after.data["counts"]["added"] == after.data["counts"]["updated"] == 0
    assert after.data["pruned"] == [] and after.data["stale"] == []
    assert held(world) == synced
    recalled = world.json("recall", "billing dry run Friday", "--now", f"{LATER}T16:00")
    assert any(LATE in hit["content"] for hit in recalled.data["results"]), recalled.data
    # a second tidy changes nothing: the roll-up already shows every bullet of the day
    assert world.json("tidy", "--archive", "--now", f"{LATER}T17:00").data["archive"] == {
        "archived": [],
        "refused": [],
    }
    assert weekly.read_text() == rollup


def test_a_bullet_written_into_a_weekly_roll_up_is_synced_from_there(world: World) -> None:
    weekly = archived_day(world)
    with weekly.open("a") as rollup:
        rollup.write(f"- {WRITTEN_IN}\n")
    synced = world.json("sync", "--now", f"{LATER}T14:00")
    assert synced.data["counts"]["added"] == 1, (synced.data["counts"], synced.stderr)
    assert WRITTEN_IN in held(world).values()
    where = world.json("where", WRITTEN_IN, "--now", f"{LATER}T14:00")
    assert where.data["bullets"][0]["location"].startswith(f"memory/weekly/{DAY}.md:")


def test_a_late_daily_is_not_archived_before_its_bullets_are_synced(world: World) -> None:
    archived_day(world)
    late = world.journal(DAY, f"- {LATE}\n")
    refused = world.json("tidy", "--archive", "--now", f"{LATER}T03:00")
    assert refused.data["archive"]["refused"] == [{"date": DAY, "unsynced": 1}]
    assert late.exists()


def test_a_day_whose_archived_copy_cannot_be_read_sends_and_drops_nothing(world: World) -> None:
    archived_day(world)
    before = held(world)
    copy = world.workspace / "memory" / "archive" / f"{DAY}.md"
    copy.unlink()
    copy.symlink_to("/etc/hostname")  # a link out of the workspace: never read
    world.journal(DAY, f"## 14:00\n- {LATE}\n")
    synced = world.json("sync", "--all", "--prune", "--now", f"{LATER}T14:00")
    # the late note's place depends on the copy: it is not sent over a synced bullet's URI
    assert synced.data["counts"]["added"] == synced.data["counts"]["updated"] == 0
    assert synced.data["pruned"] == [] and held(world) == before
    status = world.json("status", "--now", f"{LATER}T14:05")
    assert status.code == 4 and f"memory/archive/{DAY}.md" in status.stdout + status.stderr
    refused = world.json("tidy", "--archive", "--now", f"{LATER}T15:00")
    assert refused.data["archive"]["archived"] == [] and "cannot be read" in refused.stderr


def test_a_roll_up_that_cannot_be_read_takes_nothing_it_held_out_of_the_store(
    world: World,
) -> None:
    weekly = archived_day(world)
    with weekly.open("a") as rollup:
        rollup.write(f"- {WRITTEN_IN}\n")
    world.json("sync", "--now", f"{LATER}T14:00")
    assert WRITTEN_IN in held(world).values()
    os.chmod(weekly, 0)
    if os.access(weekly, os.R_OK):  # running as root: a folder cannot be read as a file
        weekly.unlink()
        weekly.mkdir()
    pruned = world.json("sync", "--all", "--prune", "--now", f"{LATER}T15:00")
    assert pruned.data["pruned"] == [], pruned.data
    assert WRITTEN_IN in held(world).values()


def test_the_days_forms_are_read_in_order_and_each_archived_copy_counts(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    (memory / "archive").mkdir(parents=True)
    (memory / "weekly").mkdir()
    for name in (f"{DAY}.md", f"{DAY}.2.md", f"{DAY}.10.md", f"{DAY}.1.md", f"{DAY}.01.md"):
        (memory / "archive" / name).write_text("- x\n")
    (memory / f"{DAY}.md").write_text("- y\n")
    (memory / "weekly" / f"{DAY}.md").write_text(f"## {DAY}\n- z\n")
    forms = Workspace(tmp_path).sources()[date.fromisoformat(DAY)]
    assert [(f.kind, f.path.relative_to(memory).as_posix()) for f in forms] == [
        ("archived", f"archive/{DAY}.md"),
        ("archived", f"archive/{DAY}.1.md"),
        ("archived", f"archive/{DAY}.2.md"),
        ("archived", f"archive/{DAY}.10.md"),
        ("daily", f"{DAY}.md"),
        ("weekly", f"weekly/{DAY}.md"),
    ]


def test_recall_shows_each_bullet_of_a_day_once_whatever_the_forms_hold(world: World) -> None:
    weekly = archived_day(world)
    world.json("recall", "billing migration", "--now", f"{LATER}T14:00")  # the index, warm
    with weekly.open("a") as rollup:
        rollup.write(f"- {WRITTEN_IN}\n")
    world.gateway.down = "missing"  # the journals alone
    found = world.json("recall", "who owns the invoice export", "--now", f"{LATER}T14:00")
    (carol,) = [hit for hit in found.data["results"] if hit["content"] == WRITTEN_IN]
    assert carol["location"].startswith(f"memory/weekly/{DAY}.md:")
    again = world.json("recall", "billing migration plan", "--now", f"{LATER}T14:00")
    contents = [hit["content"] for hit in again.data["results"]]
    assert contents.count("Met Bob about the billing migration plan") == 1, again.data
