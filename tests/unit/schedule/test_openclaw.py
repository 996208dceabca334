"""OpenClaw's Gateway cron: isolated jobs whose exec line runs exactly memfuse's argv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memfuse.schedule import ParseError, openclaw
from tests.unit.schedule.samples import argv_printer, hostile_schedule, memfuse_schedule


def test_each_run_is_an_isolated_agent_turn_on_a_cron_expression() -> None:
    jobs = openclaw.jobs(memfuse_schedule())
    assert [(j["name"], j["schedule"]) for j in jobs] == [
        ("memfuse-ab12cd34-sync", {"kind": "cron", "expr": "0 14,22 * * *"}),
        ("memfuse-ab12cd34-surface", {"kind": "cron", "expr": "5 14,22 * * *"}),
        ("memfuse-ab12cd34-tidy", {"kind": "cron", "expr": "0 3 * * *"}),
    ]
    sync = jobs[0]
    assert sync["sessionTarget"] == "isolated"
    assert sync["payload"]["kind"] == "agentTurn"
    assert sync["delivery"] == {"mode": "announce", "bestEffort": True}
    exec_lines = [ln for ln in sync["payload"]["message"].split("\n") if ln.startswith("exec: ")]
    assert exec_lines == [
        "exec: SHELL=/bin/sh PATH=/home/u/.local/bin:/usr/local/bin:/usr/bin:/bin"
        " /home/u/.local/bin/memfuse sync -q --wait 300 --workspace /home/u/.openclaw/workspace"
        " --mcporter /usr/bin/mcporter"
    ]


def test_a_timezone_and_quiet_delivery_can_be_asked_for() -> None:
    (job, *_) = openclaw.jobs(memfuse_schedule(), tz="Europe/Berlin", announce=False)
    assert job["schedule"]["tz"] == "Europe/Berlin"
    assert job["delivery"] == {"mode": "none"}


def test_the_exec_line_through_sh_gives_exactly_the_argv(tmp_path: Path) -> None:
    schedule = hostile_schedule(argv_printer(tmp_path))
    (job, _tidy) = openclaw.parse(*openclaw.render(schedule).values())
    done = subprocess.run(["/bin/sh", "-c", job.command], capture_output=True, check=True)
    assert tuple(done.stdout.decode().split("\0")[:-1]) == schedule.runs[0].argv


def test_a_run_with_two_minutes_is_two_jobs_that_read_back_as_one() -> None:
    schedule = hostile_schedule()
    assert openclaw.job_names(schedule) == [
        "memfuse-0f0f0f0f-sync", "memfuse-0f0f0f0f-sync-2", "memfuse-0f0f0f0f-tidy",
    ]  # fmt: skip
    jobs = openclaw.parse(*openclaw.render(schedule).values())
    assert [job.times for job in jobs] == [((14, 0), (22, 0), (22, 30)), ((3, 0),)]


def test_command_payloads_run_the_argv_with_no_model_in_between() -> None:
    (job, *_) = openclaw.jobs(memfuse_schedule(), payload="command")
    assert job["payload"]["kind"] == "command"
    assert job["payload"]["argv"][:2] == ["/home/u/.local/bin/memfuse", "sync"]
    assert job["payload"]["env"]["SHELL"] == "/bin/sh"


def test_add_commands_match_the_jobs() -> None:
    schedule = memfuse_schedule()
    (first, *_) = openclaw.add_commands(schedule, openclaw="/usr/bin/openclaw", tz="UTC")
    job = openclaw.jobs(schedule, tz="UTC")[0]
    assert first[:4] == ("/usr/bin/openclaw", "cron", "add", "--json")
    # Every value glued to its flag: one starting with a dash is never read as an option.
    assert all(a.startswith("--") for a in first[3:])
    flags = dict(a.split("=", 1) for a in first[3:] if "=" in a)
    assert flags["--name"] == job["name"] and flags["--cron"] == "0 14,22 * * *"
    assert flags["--declaration-key"] == "memfuse:" + job["name"]  # idempotent
    assert flags["--session"] == "isolated" and flags["--tz"] == "UTC"
    assert flags["--message"] == job["payload"]["message"]
    assert "--exact" in first  # never staggered away from the minute
    (command_add, *_) = openclaw.add_commands(schedule, payload="command", announce=False)
    argv = json.loads(openclaw.flag_value(command_add, "--command-argv") or "")
    assert tuple(argv) == schedule.runs[0].argv
    assert command_add[-1] == "--no-deliver"


def test_ids_go_after_a_double_dash() -> None:
    assert openclaw.remove_command("--all")[-2:] == ("--", "--all")
    assert openclaw.alert_command("--force")[-2:] == ("--", "--force")


def test_parse_reads_the_gateways_jobs_file_and_skips_jobs_that_are_not_commands() -> None:
    ours = openclaw.jobs(memfuse_schedule())
    foreign = [
        {"name": "Morning brief", "schedule": {"kind": "cron", "expr": "0 7 * * *"},
         "payload": {"kind": "agentTurn", "message": "Summarize overnight updates."}},
        {"name": "Reminder", "schedule": {"kind": "at", "at": "2026-02-01T16:00:00Z"},
         "payload": {"kind": "systemEvent", "text": "check the docs"}},
        {"id": "old-runner", "schedule": {"kind": "every", "everyMs": 60000},
         "payload": {"kind": "command", "command": "/usr/bin/probe", "args": ["-v"]}},
    ]  # fmt: skip
    store = json.dumps({"version": 1, "jobs": [*foreign, *ours]})
    jobs = openclaw.parse(store)
    assert [j.source for j in jobs] == [
        "old-runner", "memfuse-ab12cd34-sync", "memfuse-ab12cd34-surface", "memfuse-ab12cd34-tidy",
    ]  # fmt: skip
    assert jobs[0].argv == ("/usr/bin/probe", "-v") and jobs[0].times == ()


@pytest.mark.parametrize(
    "text",
    ["not json", '{"no": "jobs"}', "[1]",
     '[{"payload": {"kind": "agentTurn", "message": "exec: /a\\nexec: /b"}}]'],
)  # fmt: skip
def test_parse_refuses_what_it_cannot_read_exactly(text: str) -> None:
    with pytest.raises(ParseError):
        openclaw.parse(text)
