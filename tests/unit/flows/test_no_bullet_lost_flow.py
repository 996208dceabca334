"""No bullet leaves the store in silence (issue 32): odd dates, encodings, restored times,
duplicates, a lost ledger."""

from __future__ import annotations

from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"


def test_an_extreme_date_is_named_and_skipped_by_every_command(world: World) -> None:
    world.journal(DAY, "- Alice wants the billing fix shipped before the Friday freeze\n")
    weekly = world.workspace / "memory" / "weekly"
    weekly.mkdir(parents=True)
    (weekly / "9999-12-31.md").write_text("# Week\n\n## 9999-12-31\n\n- from the end of time\n")
    world.journal("0001-01-01", "- from the start of time\n")
    synced = world.json("sync", "--now", NOW)
    assert synced.code == 0, synced.stderr
    assert synced.data["counts"]["added"] == 1, (synced.data, synced.stderr)
    assert "memory/weekly/9999-12-31.md" in synced.stderr
    assert "memory/0001-01-01.md" in synced.stderr
    for args in (("recall", "billing"), ("where", f"{DAY}#0000-1"), ("status",), ("surface",)):
        outcome = world.json(*args, "--now", NOW)
        assert outcome.code in (0, 4), (args, outcome.stderr)
        assert "internal error" not in outcome.stderr
    world.gateway.down = "missing"
    down = world.json("recall", "time", "--now", NOW)
    assert down.code == 0, down.stderr
    assert "internal error" not in down.stderr
