"""OpenClaw's Gateway cron: isolated jobs whose command runs exactly memfuse's argv."""

from __future__ import annotations

import json

import pytest

from memfuse.schedule import ParseError
from memfuse.schedule.openclaw import jobs as openclaw
from tests.unit.schedule.samples import hostile_schedule, memfuse_schedule


def test_each_run_is_an_isolated_job_on_a_cron_expression() -> None:
    jobs = openclaw.jobs(memfuse_schedule())
    assert [(j["declarationKey"], j["schedule"]) for j in jobs] == [
        ("memfuse:memfuse-ab12cd34-sync", {"kind": "cron", "expr": "0 14,22 * * *"}),
        ("memfuse:memfuse-ab12cd34-surface", {"kind": "cron", "expr": "5 14,22 * * *"}),
        ("memfuse:memfuse-ab12cd34-tidy", {"kind": "cron", "expr": "0 3 * * *"}),
    ]
    sync = jobs[0]
    assert sync["sessionTarget"] == "isolated"
    assert sync["delivery"] == {"mode": "announce", "bestEffort": True}


def test_a_timezone_can_be_asked_for() -> None:
    (job, *_) = openclaw.jobs(memfuse_schedule(), tz="Europe/Berlin")
    assert job["schedule"]["tz"] == "Europe/Berlin"


def test_a_run_with_two_minutes_is_two_jobs_that_read_back_as_one() -> None:
    schedule = hostile_schedule()
    assert openclaw.job_names(schedule) == [
        "memfuse-0f0f0f0f-sync", "memfuse-0f0f0f0f-sync-2", "memfuse-0f0f0f0f-tidy",
    ]  # fmt: skip
    jobs = openclaw.parse(*openclaw.render(schedule).values())
    assert [job.times for job in jobs] == [((14, 0), (22, 0), (22, 30)), ((3, 0),)]


def test_command_payloads_run_the_argv_with_no_model_in_between() -> None:
    (job, *_) = openclaw.jobs(memfuse_schedule())
    assert job["payload"]["kind"] == "command"
    assert job["payload"]["argv"][:2] == ["/home/u/.local/bin/memfuse", "sync"]
    assert job["payload"]["env"]["SHELL"] == "/bin/sh"


def test_ids_go_after_a_double_dash() -> None:
    assert openclaw.remove_command("--all")[-2:] == ("--", "--all")


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
        "old-runner", "memfuse sync (workspace)", "memfuse surface (workspace)",
        "memfuse tidy (workspace)",
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


def test_an_agent_turns_exec_line_reads_back_as_the_job_it_runs() -> None:
    """memfuse writes command jobs only; an agent turn's `exec:` line (a job list made by hand
    or by an older memfuse) is still read, as sh would split it."""
    message = "Run it.\nexec: SHELL=/bin/sh A='b c' /usr/bin/memfuse sync -q --workspace '/w/x y'"
    listed = [{"name": "by-hand", "schedule": {"kind": "cron", "expr": "0 14 * * *"},
               "payload": {"kind": "agentTurn", "message": message}}]  # fmt: skip
    (job,) = openclaw.parse(json.dumps(listed))
    assert job.argv == ("/usr/bin/memfuse", "sync", "-q", "--workspace", "/w/x y")
    assert dict(job.env) == {"SHELL": "/bin/sh", "A": "b c"} and job.times == ((14, 0),)
