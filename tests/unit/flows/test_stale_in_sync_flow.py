"""sync's own check of the index tells the stale from the lost, as tidy's and doctor's do
(issue 47): a memory whose bullet no journal holds cannot be re-sent, so its line names
`sync --prune`, not "to be re-sent from the journals"."""

from __future__ import annotations

from tests.fakes import World
from tests.unit.flows.test_never_silent_flow import _forget

DAY = "2026-11-29"


def test_sync_verify_calls_a_memory_whose_bullet_is_gone_stale(world: World) -> None:
    world.journal(DAY, "## 09:30\n- Met Bob about the staging deploy\n- Called the landlord\n")
    assert world.run("sync", "--now", f"{DAY}T10:00").code == 0
    world.journal(DAY, "## 09:30\n- Met Bob about the staging deploy\n")  # one bullet deleted
    _forget(world, "Called the landlord")
    out = world.json("sync", "--verify", "--now", f"{DAY}T22:00")
    assert out.data["index"]["stale"] == 1 and out.data["index"]["lost"] == 0, out.data
    line = out.data["index_line"]
    assert "1 stale" in line and "sync --prune" in line and "re-sent from" not in line, line
    # A memory whose bullet is still there is lost, and re-sent, as before.
    _forget(world, "Met Bob about the staging deploy")
    again = world.json("sync", "--verify", "--now", f"{DAY}T23:00").data
    assert "1 lost, to be re-sent from the journals" in again["index_line"], again["index_line"]
