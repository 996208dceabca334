"""launchd agents: property lists launchd reads, one per run, no quoting needed."""

from __future__ import annotations

import plistlib

import pytest

from memfuse.schedule import ParseError, ScheduleError, launchd
from tests.unit.schedule.samples import hostile_schedule, memfuse_schedule


def test_each_run_is_a_calendar_job_named_by_reverse_dns() -> None:
    files = launchd.render(memfuse_schedule())
    assert sorted(files) == [
        "org.memfuse.memfuse-ab12cd34.surface.plist",
        "org.memfuse.memfuse-ab12cd34.sync.plist",
        "org.memfuse.memfuse-ab12cd34.tidy.plist",
    ]
    job = plistlib.loads(files["org.memfuse.memfuse-ab12cd34.sync.plist"].encode())
    assert job["Label"] == "org.memfuse.memfuse-ab12cd34.sync"
    assert job["ProgramArguments"][:2] == ["/home/u/.local/bin/memfuse", "sync"]
    assert job["StartCalendarInterval"] == [{"Hour": 14, "Minute": 0}, {"Hour": 22, "Minute": 0}]
    assert job["EnvironmentVariables"]["SHELL"] == "/bin/sh"
    assert "KeepAlive" not in job and "RunAtLoad" not in job


def test_hostile_arguments_are_stored_verbatim() -> None:
    schedule = hostile_schedule()
    for text in launchd.render(schedule).values():
        job = plistlib.loads(text.encode())
        assert tuple(job["ProgramArguments"]) in {run.argv for run in schedule.runs}


def test_output_path_sends_stdout_and_stderr_to_a_file() -> None:
    files = launchd.render(memfuse_schedule(), output_path="/home/u/memfuse cron.log")
    job = plistlib.loads(next(iter(files.values())).encode())
    assert job["StandardOutPath"] == job["StandardErrorPath"] == "/home/u/memfuse cron.log"


def test_a_control_character_a_plist_cannot_hold_is_refused() -> None:
    schedule = hostile_schedule("/usr/bin/\x1bmemfuse")
    with pytest.raises(ScheduleError, match="launchd job"):
        launchd.render(schedule)


def test_only_memfuses_own_agents_are_recognised_as_generated() -> None:
    files = launchd.render(memfuse_schedule())
    assert all(launchd.is_generated(text, name) for name, text in files.items())
    name, text = next(iter(files.items()))
    assert not launchd.is_generated(text, "com.apple.mine.plist")  # renamed: not ours
    mine = plistlib.dumps({"Label": "com.example.backup"})
    assert not launchd.is_generated(mine, "com.example.backup.plist")
    assert not launchd.is_generated(b"not a plist", name)


def test_parse_runs_program_when_it_is_set_and_reads_odd_intervals_as_no_times() -> None:
    plist = plistlib.dumps(
        {
            "Label": "x",
            "Program": "/usr/bin/real",
            "ProgramArguments": ["shown-name", "arg"],
            "StartCalendarInterval": {"Hour": 3},  # every minute of 03:xx
        }
    )
    (job,) = launchd.parse({"x.plist": plist})
    assert job.argv == ("/usr/bin/real", "arg")
    assert job.times == () and job.env == ()


def test_parse_refuses_what_is_not_a_job() -> None:
    with pytest.raises(ParseError):
        launchd.parse({"x.plist": b"<plist"})
    with pytest.raises(ParseError, match="ProgramArguments"):
        launchd.parse({"x.plist": plistlib.dumps({"Label": "x", "ProgramArguments": [1]})})
