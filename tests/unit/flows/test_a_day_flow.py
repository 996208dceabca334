"""A day with memfuse (issue 58): the mistyped command, the doctor before setup, the small
things a person meets in the first week."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes import World
from tests.unit.flows.test_cron_flow import fake_crontab

DAY = "2026-11-29"


def _sync(world: World, at: str, *extra: str) -> int:
    return world.run("sync", "-q", "--now", f"{DAY}T{at}", *extra).code


def test_a_manual_run_with_another_setup_is_said_and_puts_no_alarm_on_the_schedule(
    world: World, tools: Path, tmp_path: Path
) -> None:
    fake_crontab(tools, None)
    config = tmp_path / "mcporter.json"
    config.write_text(json.dumps({"mcpServers": {"agent-memory": {"command": "sh"}}}))
    given = ("--mcporter-config", str(config))
    assert world.json("cron", "--install", *given, "--now", f"{DAY}T09:00").code == 0
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    assert _sync(world, "14:00", *given) == 0
    # A person at the terminal mistypes the config: that run fails (78), and says why.
    typo = tmp_path / "mcporter.jsn"
    assert _sync(world, "15:00", "--mcporter-config", str(typo)) == 78
    status = world.run("status", "--now", f"{DAY}T15:10")
    assert status.code == 0, status.stdout
    assert "a manual run failed" in status.stdout and f"{typo} does not exist" in status.stdout
    assert " needs a person:" not in status.stdout
    out = world.json("status", "--now", f"{DAY}T15:10")
    assert "a manual run failed" in out.data["commands"]["sync"]["manual"]
    # A scheduled run since: the manual one is history, no longer said.
    assert _sync(world, "16:00", *given) == 0
    assert "a manual run" not in world.run("status", "--now", f"{DAY}T16:10").stdout
    # The schedule's own runs still decide: three with the store down are the alarm.
    world.gateway.down = "failed"
    codes = [_sync(world, at, *given) for at in ("17:00", "18:00", "19:00")]
    assert codes[-1] == 4, codes
    assert _sync(world, "19:30", "--mcporter-config", str(typo)) == 78  # says its own cause
    assert world.run("status", "--now", f"{DAY}T19:40").code == 4
