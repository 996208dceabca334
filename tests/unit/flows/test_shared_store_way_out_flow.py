"""Issue 50: agents that already share one database get a way out that loses nothing — each
gets its own store (`cron --install --all-agents`), `rollback --shared-with` forgets from the
shared one only what this workspace's ledger says memfuse made for it (none another ledger
holds), `rollback --undo` and `sync --all` send its bullets again, to its own store."""

from __future__ import annotations

from pathlib import Path

from tests.fakes import FakeGateway, World

TUE = "2026-12-01"
HOME = "## 09:00\n- The garden needs watering on Fridays\n- Prefers green tea in the morning\n"
WORK = "## 14:00\n- The payments migration ships in March\n- Prefers green tea in the morning\n"


def contents(gateway: FakeGateway) -> set[str]:
    return set(gateway.journal_uris().values())


def test_a_shared_store_is_split_without_losing_a_memory(world: World, tmp_path: Path) -> None:
    home = world
    work = World(tmp_path / "work", world.gateway)  # the one shared database
    work.journal(TUE, WORK)
    home.journal("2026-11-30", HOME)
    # work first: the bullet both journals hold is work's memory, home's ledger records it too
    assert work.run("sync", "--all", "--now", f"{TUE}T15:00").code == 0
    assert home.run("sync", "--all", "--now", f"{TUE}T15:05").code == 0
    shared = contents(world.gateway)
    assert len(shared) == 3

    dry = work.json("rollback", "--dry-run", "--shared-with", str(home.workspace))
    assert dry.code == 0, dry.stdout
    plain = work.json("rollback", "--dry-run")  # without it: home's would go too
    assert len(plain.data["plan"]["forget"]) > len(dry.data["plan"]["forget"]) == 1

    out = work.json("rollback", "--shared-with", str(home.workspace), "--now", f"{TUE}T16:00")
    assert out.code == 0, out.stdout
    assert out.data["counts"] == {"forgotten": 1, "another workspace's": 1}
    said = work.run("rollback", "--dry-run", "--shared-with", str(home.workspace)).stdout
    assert "1 kept (another workspace's ledger holds it too)" in said
    left = contents(world.gateway)
    assert left == shared - {"The payments migration ships in March"}
    assert "Prefers green tea in the morning" in left  # home's ledger holds it: it stays
    assert "The garden needs watering on Fridays" in left

    own = World(work.workspace, FakeGateway(tmp_path / "work-store.db"))  # its own database
    assert own.json("rollback", "--undo", "--now", f"{TUE}T16:05").data["withdrawn"] == 2
    resent = own.json("sync", "--all", "--now", f"{TUE}T16:10")
    assert resent.code == 0, resent.stdout
    assert contents(own.gateway) == {
        "The payments migration ships in March",
        "Prefers green tea in the morning",
    }


def test_shared_with_needs_another_workspace_that_synced(world: World, tmp_path: Path) -> None:
    world.journal(TUE, WORK)
    assert world.run("sync", "--all", "--now", f"{TUE}T15:00").code == 0
    never = tmp_path / "never"
    (never / "memory").mkdir(parents=True)
    out = world.json("rollback", "--shared-with", str(never))
    assert out.code == 2 and "has no sync ledger" in out.data["error"]
    itself = world.json("rollback", "--shared-with", str(world.workspace))
    assert itself.code == 2 and "not this one" in itself.data["error"]
    assert len(contents(world.gateway)) == 2  # nothing forgotten
