"""Never silent, part 3 (issue 47): a broken setup needs a person at once, and every message
names a way out that works."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes import World

DAY = "2026-11-29"


def _sync(world: World, at: str, *extra: str) -> int:
    return world.run("sync", "-q", "--now", f"{DAY}T{at}", *extra).code


def test_a_broken_setup_needs_a_person_from_its_first_run_until_the_next_good_one(
    world: World, tmp_path: Path
) -> None:
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    typo = tmp_path / "mcporter.jsn"
    assert _sync(world, "10:00", "--mcporter-config", str(typo)) == 78
    status = world.run("status", "--now", f"{DAY}T10:05")
    assert status.code == 4, status.stdout
    line = next(x for x in status.stdout.splitlines() if x.startswith("sync needs a person"))
    assert "setup is broken" in line and "since 2026-11-29 10:00" in line
    assert f"mcporter-config: {typo} does not exist" in line  # doctor's own words
    assert "every store call failed" not in status.stdout  # decision 262: not an outage
    assert "nothing needs a person" not in status.stdout
    probe = world.run("status", "-q", "--now", f"{DAY}T10:05")
    assert probe.code == 4 and f"{typo} does not exist" in probe.stderr
    data = world.json("status", "--now", f"{DAY}T10:05").data
    assert "setup is broken" in data["commands"]["sync"]["alarm"]
    # A second broken run keeps the first one's time; the next good run clears the alarm.
    assert _sync(world, "11:00", "--mcporter-config", str(typo)) == 78
    assert "since 2026-11-29 10:00" in world.run("status", "--now", f"{DAY}T11:05").stdout
    assert _sync(world, "12:00") == 0
    fine = world.run("status", "--now", f"{DAY}T12:05")
    assert fine.code == 0 and "nothing needs a person" in fine.stdout, fine.stdout


def test_status_before_anything_ran_or_was_scheduled_does_not_say_all_is_well(
    world: World,
) -> None:
    """What the README's install block closes with when one of its steps failed."""
    out = world.run("status")
    assert "nothing needs a person" not in out.stdout
    assert "not set up yet" in out.stdout and "memfuse cron --install" in out.stdout
    world.journal(DAY, "## Events\n- met Bob\n")
    assert _sync(world, "10:00") == 0
    assert "nothing needs a person" in world.run("status", "--now", f"{DAY}T10:05").stdout


def _config(tmp_path: Path, servers: dict[str, object]) -> Path:
    path = tmp_path / "mcporter.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path
