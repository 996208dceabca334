"""Issue 32, "one shape for every run": the rollback pause has one truth, its state file; an
old ledger's pause is moved there once, so a lost ledger can never undo it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
SINCE = f"{DAY}T21:00:00"


def _old_ledger_pause(world: World) -> Path:
    """What an older memfuse's rollback left: the pause as a ledger setting, no state file."""
    world.journal(DAY, "- Met Bob about the staging deploy\n- Decided to ship on Friday\n")
    assert world.run("sync", "--now", NOW).code == 0
    ledger = world.state / "ledger.sqlite3"
    db = sqlite3.connect(ledger)
    with db:
        db.execute("UPDATE entries SET outcome = 'withdrawn'")
        db.execute("INSERT INTO settings (key, value) VALUES ('paused', ?)", (SINCE,))
    db.close()
    (world.state / "sync-paused").unlink(missing_ok=True)
    return ledger


def _setting(ledger: Path) -> list[tuple[str]]:
    db = sqlite3.connect(ledger)
    try:
        return db.execute("SELECT value FROM settings WHERE key = 'paused'").fetchall()
    finally:
        db.close()


def _lose(ledger: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{ledger}{suffix}").unlink(missing_ok=True)


def test_an_old_ledgers_pause_moves_to_its_file_and_outlives_the_ledger(world: World) -> None:
    ledger = _old_ledger_pause(world)
    world.journal("2026-11-30", "- A new day's bullet about the billing migration\n")
    paused = world.json("sync", "--all", "--now", "2026-11-30T14:00")
    assert paused.data["paused_since"] == SINCE and paused.data["counts"]["added"] == 0
    assert (world.state / "sync-paused").read_text() == SINCE
    assert _setting(ledger) == []  # moved, not copied: the two cannot disagree
    _lose(ledger)
    after = world.json("sync", "--all", "--now", "2026-11-30T15:00")
    assert after.data["counts"]["added"] == 0 and after.data["paused_since"] == SINCE


def test_status_moves_an_old_pause_and_an_undo_lifts_it_for_good(world: World) -> None:
    ledger = _old_ledger_pause(world)
    status = world.json("status", "--now", "2026-12-01T22:00")
    assert status.data["paused_since"] == SINCE and status.code == 4  # past a day: an alarm
    assert (world.state / "sync-paused").read_text() == SINCE and _setting(ledger) == []
    assert world.json("rollback", "--undo", "--now", "2026-12-01T22:05").code == 0
    assert not (world.state / "sync-paused").exists()
    resumed = world.json("sync", "--now", "2026-12-01T22:10")
    counts = resumed.data["counts"]
    assert "paused_since" not in resumed.data
    assert counts["added"] + counts["skipped"] == 2  # sent again (the store still held them)
    assert world.json("status", "--now", "2026-12-01T22:15").data.get("paused_since") is None


def test_status_opens_the_ledger_once(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from memfuse.ledger import reader as ledger

    world.journal(DAY, "- Met Bob about the staging deploy\n- ok\n")  # one refused by the gate
    assert world.run("sync", "--now", NOW).code == 0
    opened: list[str] = []
    real = ledger.open_read_only

    def counted(*args: Any) -> Any:
        opened.append(args[1])
        return real(*args)

    monkeypatch.setattr(ledger, "open_read_only", counted)
    status = world.json("status", "--now", NOW)
    assert status.data["ledger"]["rejected"] == 1  # every read of the ledger was answered…
    assert opened == ["ledger.sqlite3"]  # …over one read-only connection
