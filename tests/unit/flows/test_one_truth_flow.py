"""Issue 32, "one shape for every run": status reads the ledger over one read-only connection.
(The rollback pause's one truth, its state file, is test_no_bullet_lost_flow's.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"


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
