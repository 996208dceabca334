"""Never silent for long: run history, escalation after repeated failures, `memfuse status`."""

from __future__ import annotations

import json
import re

import pytest

from memfuse.run.results import AlarmData
from tests.fakes import World

DAY = "2026-11-29"
JOURNAL = "- Met Bob about the staging deploy today\n- Reviewed the billing migration plan\n"


def _sync(world: World, at: str, *extra: str) -> tuple[int, str, str]:
    out = world.run("sync", "-q", "--now", f"{DAY}T{at}", *extra)
    return out.code, out.stdout, out.stderr


def test_three_runs_with_the_store_unreachable_escalate_and_a_good_run_clears_it(
    world: World,
) -> None:
    world.journal(DAY, JOURNAL)
    world.gateway.down = "failed"
    first = _sync(world, "10:00")
    second = _sync(world, "12:00")
    assert first == (0, "", "")  # one bad run is best-effort: exit 0, nothing for cron to mail
    assert second == (0, "", "")
    code, stdout, stderr = _sync(world, "14:00")
    assert code == 4
    assert stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "every store call failed in the last 3 runs, since 2026-11-29 10:00" in lines[0]
    assert "it has never succeeded" in lines[0]

    world.gateway.down = None
    assert _sync(world, "16:00") == (0, "", "")
    world.gateway.down = "failed"
    assert _sync(world, "18:00") == (0, "", "")  # the streak starts over


def test_no_success_for_longer_than_the_max_age_escalates(world: World) -> None:
    world.journal(DAY, JOURNAL)
    assert _sync(world, "08:00")[0] == 0
    world.gateway.down = "timeout"
    assert world.run("sync", "-q", "--now", "2026-11-30T06:00").code == 0
    late = world.run("sync", "-q", "--now", "2026-11-30T09:00")
    assert late.code == 4
    assert "no successful run since 2026-11-29 08:00" in late.stderr


def test_escalation_is_in_the_envelope_and_configurable_only_by_the_user(world: World) -> None:
    world.journal(DAY, JOURNAL)
    world.gateway.down = "failed"
    config = world.workspace / ".memfuse"
    config.mkdir()
    # The agent may not silence the alarm from its own workspace.
    (config / "config.toml").write_text("[alert]\nfailed_runs = 100\n")
    for at in ("10:00", "11:00"):
        assert world.json("sync", "--now", f"{DAY}T{at}").code == 0
    out = world.json("sync", "--now", f"{DAY}T12:00")
    assert out.code == 4
    assert out.envelope["status"] == "escalated"  # agrees with exit 4
    assert out.data["alarm"]["since"].startswith(f"{DAY}T10:00")
    assert set(out.data["alarm"]) == set(AlarmData.__required_keys__)
    assert any("alert.failed_runs: not applied" in w for w in out.envelope["warnings"])

    user = world.workspace.parent / "xdg" / "memfuse"
    user.mkdir(parents=True)
    (user / "config.toml").write_text("[alert]\nfailed_runs = 5\n")
    env = {"XDG_CONFIG_HOME": str(user.parent)}
    assert world.json("sync", "--now", f"{DAY}T13:00", env=env).code == 0


def test_a_dry_run_or_a_locked_run_is_not_history(world: World) -> None:
    world.journal(DAY, JOURNAL)
    world.gateway.down = "failed"
    for at in ("10:00", "11:00", "12:00"):
        assert world.run("sync", "--dry-run", "-q", "--now", f"{DAY}T{at}").code == 0
    runs = world.state / "runs.json"
    assert not runs.exists() or json.loads(runs.read_text())["sync"] == []


def test_status_shows_the_lifecycle_and_exits_4_when_a_person_is_needed(world: World) -> None:
    world.journal(DAY, JOURNAL)
    assert world.run("sync", "--now", f"{DAY}T14:00").code == 0
    assert world.run("surface", "--now", f"{DAY}T14:05").code == 0

    fine = world.json("status", "--now", f"{DAY}T15:00")
    assert fine.code == 0
    sync = fine.data["commands"]["sync"]
    assert sync["last_run"]["counts"]["added"] == 2
    assert sync["last_run"]["store"] == "ok"
    assert sync["last_success"].startswith(f"{DAY}T14:00")
    assert fine.data["commands"]["tidy"]["last_run"] is None
    assert fine.data["ledger"]["stored"] == 2
    assert fine.data["recent"]["exists"] is True
    assert fine.data["lock"] is None
    assert fine.data["alarms"] == []

    human = world.run("status", "--now", f"{DAY}T14:30")
    assert re.search(
        r"sync     last run 2026-11-29 14:00 [+-]\d\d:\d\d \(30 min ago\): ok, store ok \(2 added",
        human.stdout,
    )
    assert "tidy     never run" in human.stdout
    assert "nothing needs a person" in human.stdout
    assert world.run("status", "-q", "--now", f"{DAY}T15:00").stdout == ""

    # Cron stopped: two days without a sync is an alarm even though the last one was fine.
    stopped = world.json("status", "--now", "2026-12-01T15:00")
    assert stopped.code == 4
    assert any(
        "sync needs a person: no run since 2026-11-29 14:00" in a for a in stopped.data["alarms"]
    )
    quiet = world.run("status", "-q", "--now", "2026-12-01T15:00")
    assert quiet.code == 4
    assert quiet.stdout == ""
    assert quiet.stderr.startswith("memfuse status: sync needs a person: no run since")
    told = world.run("status", "--now", "2026-12-01T15:00").stdout
    assert "sync needs a person: no run since" in told
    assert "needs a person: sync needs a person" not in told  # said once, not twice


def test_status_reports_a_failing_streak_and_a_held_lock(world: World) -> None:
    import fcntl
    import os

    world.journal(DAY, JOURNAL)
    world.gateway.down = "missing"
    for at in ("10:00", "11:00", "12:00"):
        world.run("sync", "-q", "--now", f"{DAY}T{at}")
    lock = world.state / "lock"
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, b"pid 4242 sync\n")
    try:
        out = world.json("status", "--now", f"{DAY}T12:30")
    finally:
        os.close(fd)
    assert out.code == 4
    assert out.data["lock"] == "pid 4242 sync"
    assert out.data["commands"]["sync"]["last_run"]["store"] == "failed"
    assert "every store call failed in the last 3 runs" in out.data["commands"]["sync"]["alarm"]


@pytest.mark.parametrize("damage", ["not json", "a folder", "nested too deep"])
def test_a_damaged_history_is_an_alarm_and_starts_afresh(world: World, damage: str) -> None:
    """The history is what the alarms are computed from: one that cannot be read is itself an
    alarm (exit 4), and it is moved aside so that the next run's alarms work again."""
    world.journal(DAY, JOURNAL)
    state = world.state
    state.mkdir(parents=True, mode=0o700)
    runs = state / "runs.json"
    if damage == "a folder":
        runs.mkdir()
    else:
        runs.write_text("{not json" if damage == "not json" else "[" * 100_000)
    assert world.json("status", "--now", f"{DAY}T09:00").code == 4
    out = world.json("sync", "--now", f"{DAY}T10:00")
    assert out.code == 4
    assert "run history" in out.data["alarm"]["reason"]
    assert json.loads(runs.read_text())["sync"][0]["status"] == "ok"
    assert [p.name for p in state.glob("runs.json.bad-*")]
    assert world.json("sync", "--now", f"{DAY}T11:00").code == 0
