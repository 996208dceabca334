"""The store is a derived index: memfuse notices what it lost, rebuilds it, and respects what
it forgot on purpose (issue 13), in-process against the fake store."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import World

DAYS = ("2026-11-27", "2026-11-28", "2026-11-29")
NOW = "2026-11-29T22:00"


def week(world: World) -> int:
    """Three journals, four bullets each (2 events, 1 knowledge, 1 emotion)."""
    topics = (
        ("Met Bob about the staging deploy", "Reviewed the billing migration checklist",
         "Remember: Alice prefers release notes in English", "今天很开心，终于修好了登录问题"),
        ("Paired with Carol on the search indexer", "Booked flights to Lisbon for the offsite",
         "Rule: never deploy on Fridays after noon", "有点担心下周的发布会"),
        ("Drafted the quarterly roadmap for payments", "Called the landlord about the leak",
         "Dana always wants meeting notes within an hour", "收到礼物，好感动"),
    )  # fmt: skip
    for day, (one, two, three, four) in zip(DAYS, topics, strict=True):
        world.journal(day, f"## 09:30\n- {one}\n- {two}\n- {three}\n- {four}\n")
    out = world.json("sync", "--days", "3", "--now", NOW)
    assert out.code == 0 and out.data["counts"]["added"] == 12, out.stdout
    return 12


def ledger_rows(world: World) -> list[tuple[object, ...]]:
    db = sqlite3.connect(world.state / "ledger.sqlite3")
    try:
        return db.execute("SELECT * FROM entries ORDER BY position").fetchall()
    finally:
        db.close()


def test_a_deleted_database_is_restored_by_the_next_plain_sync_exactly_once(
    world: World,
) -> None:
    total = week(world)
    before = world.gateway.journal_uris()
    Path(world.gateway.db_path).unlink()  # a reinstall, a new machine, a migration gone wrong

    out = world.json("sync", "--now", NOW)  # no flag, today's scope only
    assert out.code == 0
    assert out.data["counts"]["restored"] == total
    assert out.data["counts"]["added"] == 0
    assert out.data["index"] == {
        "expected": total,
        "present": 0,
        "lost": total,
        "forgotten": 0,
        "altered": 0,
    }
    assert world.gateway.journal_uris() == before
    assert world.gateway.count("remember") == 2 * total  # each one re-sent once

    human = world.run("sync", "--now", NOW)
    assert human.code == 0
    again = world.json("sync", "--now", NOW)
    assert again.data["counts"]["restored"] == 0
    assert again.data["calls"] == 1  # the probe: the store is whole again
    assert world.gateway.count("remember") == 2 * total


def test_the_reset_is_said_in_one_line(world: World) -> None:
    week(world)
    Path(world.gateway.db_path).unlink()
    out = world.run("sync", "--now", NOW)
    lines = [line for line in out.stdout.splitlines() if line.strip().startswith("index:")]
    assert lines == [
        "  index: 12 of 12 memories memfuse stored are gone from the store:"
        " 12 lost (the store was reset?), to be re-sent from the journals"
    ]
    assert "  restored 12; nothing lost remains" in out.stdout.splitlines()


def test_memories_forgotten_behind_memfuses_back_are_restored_by_verify(world: World) -> None:
    week(world)
    listing = world.gateway.direct("recall_path", {"uri": "event://journal/"})["memories"]
    gone = sorted(m["uri"] for m in listing)[:5]
    for uri in gone:
        memory = world.gateway.direct("recall_path", {"uri": uri})["memory"]
        world.gateway.direct("forget", {"id": memory["id"], "hard": True})
    sent = world.gateway.count("remember")

    out = world.json("sync", "--verify", "--now", NOW)
    assert out.code == 0
    assert out.data["counts"]["restored"] == 5
    assert world.gateway.count("remember") - sent == 5
    resent = [a["uri"] for t, a in world.gateway.calls[-8:] if t == "remember"]
    assert sorted(resent) == gone
    assert set(gone) <= set(world.gateway.journal_uris())


def test_memories_the_store_deleted_by_decay_are_forgotten_not_resent(world: World) -> None:
    week(world)
    later = datetime(2026, 11, 29, 22, tzinfo=UTC) + timedelta(days=60)
    world.gateway.clock.now = later
    world.gateway.direct("reflect", {"phase": "all"})
    left = world.gateway.journal_uris()
    assert not any(uri.startswith("event://") for uri in left)  # 2.2 deleted the P3 events
    sent = world.gateway.count("remember")

    out = world.json("sync", "--now", later.strftime("%Y-%m-%dT%H:%M"))
    assert out.code == 0
    assert out.data["index"]["forgotten"] == 6
    assert out.data["index"]["lost"] == 0
    assert out.data["counts"]["restored"] == 0
    assert world.gateway.count("remember") == sent
    again = world.json("sync", "--verify", "--now", later.strftime("%Y-%m-%dT%H:%M"))
    assert again.data["index"] == {
        "expected": 6,
        "present": 6,
        "lost": 0,
        "forgotten": 0,
        "altered": 0,
    }
    assert world.gateway.count("remember") == sent


def test_a_store_that_cannot_be_listed_changes_nothing(world: World) -> None:
    week(world)
    rows = ledger_rows(world)
    Path(world.gateway.db_path).unlink()
    world.gateway.failing["recall_path"] = "timeout"
    sent = world.gateway.count("remember")

    out = world.json("sync", "--now", NOW)
    assert out.code == 0
    assert "index" not in out.data
    assert any("the index was not verified" in w for w in out.envelope["warnings"])
    assert world.gateway.count("remember") == sent  # never a mass re-send
    assert ledger_rows(world) == rows


def test_tidy_verifies_after_reflect_and_the_next_sync_restores(world: World) -> None:
    week(world)
    Path(world.gateway.db_path).unlink()
    out = world.json("tidy", "--now", NOW)
    assert out.code == 0
    assert out.data["index"]["lost"] == 12
    restored = world.json("sync", "--now", NOW)
    assert restored.data["counts"]["restored"] == 12


def test_doctor_shows_index_health(world: World) -> None:
    week(world)
    fine = world.json("doctor", "--now", NOW)
    check = next(c for c in fine.data["checks"] if c["name"] == "index")
    assert check["ok"] is True
    assert "12 in the ledger at journal URIs, 12 in the store, 0 lost" in check["detail"]
    Path(world.gateway.db_path).unlink()
    broken = world.json("doctor", "--now", NOW)
    check = next(c for c in broken.data["checks"] if c["name"] == "index")
    assert check["ok"] is False
    assert "12 lost" in check["detail"] and "memfuse sync --verify" in check["detail"]


def test_sync_hands_the_journals_it_read_to_the_index_instead_of_reading_them_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 41: the recall index is refreshed from the journals sync already parsed (when
    their files have not changed since); a journal edited after sync read it is read anew."""
    from memfuse.workspace.layout import Workspace

    world.journal("2026-11-28", "## 09:30\n- Met Bob about the staging deploy\n")
    world.journal("2026-11-29", "## 10:00\n- Reviewed the billing migration plan\n")
    real = Workspace.read_day
    reads: list[str] = []

    def counted(self: Workspace, day: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(day.isoformat())
        return real(self, day, *args, **kwargs)

    monkeypatch.setattr(Workspace, "read_day", counted)
    out = world.json("sync", "--now", "2026-11-29T22:00")
    assert out.data["recall_index_refreshed"] == 2
    assert sorted(reads) == ["2026-11-28", "2026-11-29"]  # once each: by sync, not again
    found = world.json(
        "recall", "staging deploy", "--without", "store", "--now", "2026-11-29T22:05"
    )
    assert "Met Bob about the staging deploy" in [r["content"] for r in found.data["results"]]
