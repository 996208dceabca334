"""A day with memfuse (issue 58): the mistyped command, the doctor before setup, the small
things a person meets in the first week."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def test_runs_count_all_when_none_has_the_schedules_setup(
    world: World, tools: Path, tmp_path: Path
) -> None:
    """A schedule whose setup no run has (it changed since the install, or has not run yet):
    the rule must never make its failures silent — every run counts, as before."""
    fake_crontab(tools, None)
    assert world.json("cron", "--install", "--now", f"{DAY}T09:00").code == 0
    typo = tmp_path / "mcporter.jsn"
    assert _sync(world, "10:00", "--mcporter-config", str(typo)) == 78
    assert world.run("status", "--now", f"{DAY}T10:10").code == 4


def _failed(rows: list[dict[str, object]]) -> list[object]:
    return [r["name"] for r in rows if not r["ok"] and r["critical"]]


def test_doctor_before_setup_leads_with_agent_memory_then_its_entry(world: World) -> None:
    """The README's steps in their order: agent-memory (step 2), its entry (step 3)."""
    world.gateway.down = "failed"
    out = world.json("doctor")
    assert _failed(out.data["checks"])[:2] == ["agent-memory", "mcporter-config"]
    lines = [line for line in world.run("doctor").stdout.splitlines() if line.startswith("FAIL")]
    assert lines[0].startswith("FAIL  agent-memory agent-memory is not installed here")


def test_doctor_before_setup_does_not_fail_on_mcporter_the_chosen_transport_does_not_need(
    tmp_path: Path,
) -> None:
    """No mcporter on a machine where nothing is set up yet: with agent-memory's entry
    written, `auto` starts the server itself — mcporter is a warning, unless chosen."""
    from typer.testing import CliRunner

    from memfuse.cli import app

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    gone = ("--mcporter", str(tmp_path / "no-mcporter"))

    def doctor(*extra: str) -> dict[str, dict[str, object]]:
        result = CliRunner().invoke(app, ["doctor", "-w", str(ws), *gone, *extra, "--json"])
        return {r["name"]: r for r in json.loads(result.stdout)["data"]["checks"]}

    rows = doctor()
    assert _failed(list(rows.values())) == ["agent-memory", "mcporter-config"]
    assert not rows["mcporter"]["ok"] and "needed only with --transport mcporter" in str(
        rows["mcporter"]["detail"]
    )
    assert "mcporter" in _failed(list(doctor("--transport", "mcporter").values()))


def test_the_install_retry_line_keeps_the_mcporter_flags_the_user_gave(
    world: World, tools: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tools))  # no crontab: the install says the ways on
    config = tmp_path / "my mcporter.json"
    given = ("--mcporter", "/opt/mcporter/bin/mcporter", "--mcporter-config", str(config))
    error = world.json("cron", "--install", *given).data["error"]
    retry = "--install --mcporter /opt/mcporter/bin/mcporter --mcporter-config"
    assert f"`memfuse cron --format crontab {retry} '{config}'` again" in error
    assert f"`memfuse cron --format systemd {retry} '{config}'`" in error


def test_cron_check_shows_each_job_line_whole(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dry_runs: list[list[str]]
) -> None:
    """A real job line is 150–250 characters (its paths): it was cut at 90, unmarked."""
    printed = world.json("cron").data["text"]
    table = tmp_path / "memfuse.cron"
    table.write_text(printed + "\n")
    out = world.run("cron", "--check", str(table))
    jobs = [line for line in out.stdout.splitlines() if line.startswith("  line")]
    assert len(jobs) == 3, out.stdout
    commands = [job["command"] for job in world.json("cron", "--check", str(table)).data["jobs"]]
    assert all(any(line.endswith(c) for line in jobs) for c in commands), (commands, jobs)


def test_a_mistyped_workspace_gets_a_did_you_mean(world: World) -> None:
    from typer.testing import CliRunner

    from memfuse.cli import app

    meant = world.workspace.parent / "myagent"
    (meant / "memory").mkdir(parents=True)
    typo = world.workspace.parent / "myagnet"
    out = CliRunner().invoke(app, ["status", "-w", str(typo)], obj=world.seams)
    assert out.exit_code == 66
    assert f"{typo} does not exist; did you mean {meant}?" in out.stderr


def test_status_shows_times_in_the_installed_schedules_zone(world: World) -> None:
    """A machine on UTC whose scheduler reads its times in Europe/Berlin (CRON_TZ, a timer):
    a run at 13:00 UTC is shown at 14:00 +01:00, beside the schedule's next run."""
    world.journal(DAY, "## Events\n- met Bob about the staging deploy\n")
    assert _sync(world, "13:00+00:00") == 0
    record = {"format": "crontab", "runs": {"sync": ["14:00", "22:00"]},
              "installed": f"{DAY}T08:00:00+00:00", "zone": "Europe/Berlin"}  # fmt: skip
    (world.state / "schedule.json").write_text(json.dumps(record))
    out = world.run("status", "--now", f"{DAY}T13:30+00:00").stdout
    assert f"last run {DAY} 14:00 +01:00 (30 min ago)" in out, out
    assert f"next: sync at {DAY} 22:00 +01:00 Europe/Berlin" in out, out


def test_tidys_consistency_line_says_what_was_compared_and_found(world: World) -> None:
    """ "consistency check: OK, 1 related" told a newcomer nothing."""
    from tests.unit.flows.test_rerank_routine_flow import recall_answer

    (world.workspace / "MEMORY.md").write_text(
        "# MEMORY\n- Alice prefers dark mode in every editor\n"
    )
    same_subject = "Alice uses dark mode in the terminal too"
    world.gateway.texts["recall"] = recall_answer([same_subject, "met Bob about the deploy"])
    out = world.run("tidy", "--now", f"{DAY}T03:00")
    assert out.code == 0, out.stdout
    line = next(x for x in out.stdout.splitlines() if "consistency check" in x)
    assert "2 recent memories read against MEMORY.md, no contradiction" in line, line
    assert "1 add to something it already holds" in line, line


def test_surfaces_store_query_and_its_limits_are_settings(world: World) -> None:
    from tests.unit.flows.test_rerank_routine_flow import recall_limits, user_config

    user_config('[surface]\nquery = "this week, what mattered"\nrecall_limit = 12\n')
    assert world.run("surface", "-q", "--now", f"{DAY}T22:05").code == 0
    asked = [args for tool, args in world.gateway.calls if tool == "recall"]
    assert [a["query"] for a in asked] == ["this week, what mattered"]
    assert recall_limits(world) == [12]
    shown = world.json("doctor", "--show-config").data["config"]
    assert shown["surface.query"] == "this week, what mattered"
    assert shown["surface.knowledge_listed"] == "20" and shown["surface.emotion_listed"] == "10"
