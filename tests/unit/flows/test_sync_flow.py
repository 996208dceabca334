"""`memfuse sync` in-process against the fake store."""

from __future__ import annotations

from tests.fakes import World

DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
JOURNAL = """## 09:30 standup
- Alice wants the billing fix shipped before the Friday freeze
- 今天很开心，终于修好了登录问题

## 14:00
- Remember to rotate the staging database credentials monthly
"""


def test_sync_sends_each_bullet_once_and_a_resync_calls_nothing(world: World) -> None:
    world.journal(DAY, JOURNAL)
    first = world.json("sync", "--now", NOW)
    assert first.code == 0, first.stderr
    assert first.data["counts"]["added"] == 3
    assert set(world.gateway.journal_uris()) == {
        f"event://journal/{DAY}#0930-1",
        f"emotion://journal/{DAY}#0930-2",
        f"knowledge://journal/{DAY}#1400-1",
    }
    before = len(world.gateway.calls)
    again = world.json("sync", "--now", NOW)
    assert again.data["dates"] == []  # a plain sync reads only what changed: nothing did
    assert again.data["calls"] == 1  # the status probe only: nothing is re-sent
    assert world.gateway.calls[before:] == [("status", {})]
    named = world.json("sync", "--date", DAY, "--now", NOW)  # read by name: all unchanged
    assert (named.data["counts"]["unchanged"], named.data["calls"]) == (3, 1)


def test_sync_with_the_store_down_loses_nothing(world: World) -> None:
    world.journal(DAY, JOURNAL)
    world.gateway.down = "missing"
    down = world.json("sync", "--now", NOW)
    assert down.code == 0
    assert down.envelope["status"] == "degraded"
    assert down.data["counts"]["failed"] == 3
    world.gateway.down = None
    back = world.json("sync", "--now", NOW)
    assert back.data["counts"]["added"] == 3


def test_sync_data_keeps_its_keys_in_their_order(world: World) -> None:
    """`--json` data is made from one typed report (memfuse.sync.engine.SyncReport): its keys, and
    the counts' keys, come in the order scripts have always read them."""
    first = ["dry_run", "counts", "dates", "calls", "stale", "rejected", "pruned", "scope", "plan"]
    counts = ["added", "updated", "merged", "skipped", "rejected", "failed", "unchanged",
              "stale", "restored"]  # fmt: skip
    dry = world.json("sync", "--dry-run", "--explain", "--now", NOW).data
    assert list(dry) == [*first, "explain", "accounting", "today_journal", "would_send"]
    assert list(dry["counts"]) == counts
    world.journal(DAY, JOURNAL)
    real = world.json("sync", "--now", NOW).data
    assert list(real) == [*first, "accounting", "resent", "refolded", "recall_index_refreshed"]
    assert list(real["counts"]) == counts and real["counts"]["added"] == 3
