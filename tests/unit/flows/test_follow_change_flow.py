"""Issue 25: nothing written is lost to time. A plain sync follows what changed, whatever the
day; every Markdown form memfuse produces (archived days, weekly roll-ups) is part of the
truth; a person can ask where a bullet is; a rollback is one command. In-process, against the
scripted store."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from tests.fakes import World

MON = "2026-11-30"  # a Monday
TUE = "2026-12-01"
WED = "2026-12-02"
JOURNAL = "## 14:00\n- Met Bob about the billing migration plan\n- Alice prefers async updates\n"


def stored(world: World) -> set[str]:
    return set(world.gateway.journal_uris().values())


def test_a_bullet_written_after_the_days_last_sync_is_sent_the_next_day(world: World) -> None:
    path = world.journal(TUE, JOURNAL)
    assert world.json("sync", "--now", f"{TUE}T22:00").data["counts"]["added"] == 2
    with path.open("a") as journal:  # 23:30: the agent appends after the last sync of the day
        journal.write("## 23:30\n- Late note: the payments dry run is booked for Friday\n")
    next_day = world.json("sync", "--now", f"{WED}T14:00")
    assert next_day.data["dates"] == [TUE]
    assert next_day.data["counts"]["added"] == 1
    assert "Late note: the payments dry run is booked for Friday" in stored(world)
    quiet = world.json("sync", "--now", f"{WED}T22:00")  # nothing changed: nothing read
    assert (quiet.data["dates"], quiet.data["calls"]) == ([], 1)


def test_a_call_that_failed_at_2200_is_retried_by_the_next_days_sync(world: World) -> None:
    world.journal(TUE, JOURNAL)
    world.gateway.down = "timeout"
    failed = world.json("sync", "--now", f"{TUE}T22:00")
    assert failed.data["counts"]["failed"] == 2
    status = world.json("status", "--now", f"{TUE}T22:05")
    assert status.data["ledger"]["pending_retry"] == 2
    assert "injected timeout" in status.data["ledger"]["pending"][0]["reason"]
    world.gateway.down = None
    next_day = world.json("sync", "--now", f"{WED}T14:00")
    assert next_day.data["counts"]["added"] == 2
    assert stored(world) == {"Met Bob about the billing migration plan",
                             "Alice prefers async updates"}  # fmt: skip
    assert world.json("status", "--now", f"{WED}T14:05").data["ledger"]["pending_retry"] == 0


def test_an_archived_week_is_restored_after_the_store_is_deleted(world: World) -> None:
    """Before: 43 lost, `re-sent from the journals`, 17 restored — the archived days were read
    nowhere. Now they are read where they live, and the counts say what happened."""
    days = [f"2026-11-{d:02d}" for d in range(16, 23)]  # a week, archived below
    topics = ["invoice export", "cutover rehearsal", "queue alert tuning", "runbook review",
              "Hamburg offsite", "replication password", "schema freeze"]  # fmt: skip
    for day, topic in zip(days, topics, strict=True):
        world.journal(day, f"## 09:00\n- Worked on the {topic} with the team today\n")
    world.journal(TUE, JOURNAL)
    assert world.json("sync", "--all", "--now", f"{TUE}T22:00").data["counts"]["added"] == 9
    rolled = world.json("tidy", "--archive", "--now", f"{WED}T03:00")
    assert len(rolled.data["archive"]["archived"]) == 7
    (world.workspace / "memory" / "archive" / f"{days[0]}.md").unlink()  # only the weekly has it
    Path(world.gateway.db_path).unlink()  # the store's database is gone
    out = world.json("sync", "--now", f"{WED}T14:00")
    assert out.data["index"]["lost"] == 9
    assert out.data["counts"]["restored"] == 9
    assert out.data["lost_left"] == 0
    assert len(stored(world)) == 9
    again = world.json("sync", "--verify", "--all", "--now", f"{WED}T15:00")
    assert (again.data["index"]["lost"], again.data["counts"]["restored"]) == (0, 0)


@pytest.mark.parametrize("argv", [("status",), ("recall", "billing"), ("cron",), ("sync",),
                                  ("surface",), ("tidy",), ("where", "billing"), ("doctor",)])  # fmt: skip
def test_a_workspace_that_does_not_exist_is_an_error_everywhere(
    world: World, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    from typer.testing import CliRunner

    from memfuse.cli import app

    missing = tmp_path / "no-such-workspace"
    result = CliRunner().invoke(app, [*argv, "-w", str(missing), "--json"])
    assert result.exit_code == 66, result.stdout
    assert not missing.exists()


def test_a_run_refused_by_the_lock_is_recorded_and_shown(world: World) -> None:
    world.journal(TUE, JOURNAL)
    assert world.run("sync", "--now", f"{TUE}T14:00").code == 0
    lock = world.state / "lock"
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert world.run("surface", "--now", f"{TUE}T14:05").code == 75
    finally:
        os.close(fd)
    status = world.json("status", "--now", f"{TUE}T14:10")
    last = status.data["commands"]["surface"]["last_run"]
    assert (last["status"], last["exit_code"]) == ("locked", 75)
    assert "locked" in world.run("status", "--now", f"{TUE}T14:10").stdout


def test_where_answers_for_a_text_a_uri_and_a_line(world: World) -> None:
    world.journal(TUE, JOURNAL + "- Fix\n")  # too short for the gate: rejected, with a reason
    world.gateway.gate = True
    assert world.run("sync", "--now", f"{TUE}T22:00").code == 0
    by_text = world.json("where", "billing migration", "--now", f"{TUE}T22:05")
    row = by_text.data["bullets"][0]
    assert row["location"] == f"memory/{TUE}.md:2"
    assert row["uri"] == f"event://journal/{TUE}#1400-1"
    assert (row["outcome"], row["in_store"], row["created_by_memfuse"]) == ("added", True, True)
    assert [a["outcome"] for a in row["attempts"]] == ["added"]
    by_uri = world.json("where", row["uri"], "--now", f"{TUE}T22:05").data["bullets"]
    by_line = world.json("where", f"memory/{TUE}.md:2", "--now", f"{TUE}T22:05").data["bullets"]
    assert [b["position"] for b in by_uri] == [b["position"] for b in by_line] == [row["position"]]
    refused = world.json("where", "Fix", "--now", f"{TUE}T22:05").data["bullets"]
    gate = next(b for b in refused if b["text"] == "Fix")
    assert gate["outcome"] == "rejected" and "Gate rejected" in gate["attempts"][-1]["reason"]
    assert gate["in_store"] is False
    status = world.json("status", "--now", f"{TUE}T22:05").data["ledger"]
    assert status["rejections"][0]["reason"].startswith("Gate rejected")


def test_rollback_forgets_memfuses_memories_and_pauses_sync_until_undone(world: World) -> None:
    world.journal(TUE, JOURNAL)
    assert world.run("sync", "--now", f"{TUE}T14:00").code == 0
    world.gateway.direct("remember", {"content": "The user's own memory, kept by the agent",
                                      "type": "knowledge", "uri": "knowledge://user/own"})  # fmt: skip
    dry = world.json("rollback", "--dry-run", "--now", f"{TUE}T15:00")
    assert dry.data["counts"]["forget"] == 2 and len(stored(world)) == 2  # nothing changed
    out = world.json("rollback", "--now", f"{TUE}T15:00")
    assert out.code == 0, out.stderr
    assert out.data["counts"]["forgotten"] == 2
    assert stored(world) == set()
    kept = world.gateway.direct("recall_path", {"uri": "knowledge://user/own"})
    assert kept["found"] is True  # only memfuse's own memories are forgotten
    world.journal(WED, "- A new day's bullet about the billing migration\n")
    paused = world.json("sync", "--all", "--now", f"{WED}T14:00")
    assert paused.data["counts"]["added"] == 0 and paused.data["calls"] == 1
    assert paused.data["paused_since"] == out.data["paused_since"]
    assert stored(world) == set()
    assert world.json("rollback", "--undo", "--now", f"{WED}T15:00").data["withdrawn"] == 2
    resumed = world.json("sync", "--now", f"{WED}T16:00")
    assert resumed.data["counts"]["added"] == 3
    assert len(stored(world)) == 3
