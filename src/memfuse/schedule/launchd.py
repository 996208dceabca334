"""launchd (macOS) agents: one property list per run, written with plistlib.

launchd passes ProgramArguments to the program as they are (no shell, no `%` or `$`), so
nothing is quoted. There is no KeepAlive or RunAtLoad: a run is one command that ends. Without
StandardOutPath/StandardErrorPath what a quiet run prints (a person is needed) goes nowhere, so
`output_path` names a file for it.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.parsers.expat import ExpatError

from memfuse.schedule import base
from memfuse.schedule.base import InstallOutcome, Machine, Scheduler
from memfuse.schedule.runs import Job, ParseError, Schedule, ScheduleError

DOMAIN = "org.memfuse"
_NOT_A_PLIST = (plistlib.InvalidFileException, ValueError, ExpatError)


def render(schedule: Schedule, *, output_path: str | None = None) -> dict[str, str]:
    """{file name: XML property list} for each run, named by its job's reverse-DNS Label."""
    files = {}
    for run in schedule.runs:
        label = f"{DOMAIN}.{schedule.label}.{run.name}"
        job: dict[str, Any] = {
            "Label": label,
            "ProgramArguments": list(run.argv),
            "EnvironmentVariables": dict(schedule.env),
            "StartCalendarInterval": [{"Hour": h, "Minute": m} for h, m in run.times],
        }
        if output_path is not None:
            job["StandardOutPath"] = job["StandardErrorPath"] = output_path
        try:
            text = plistlib.dumps(job, fmt=plistlib.FMT_XML, sort_keys=False).decode("utf-8")
        except ValueError as exc:  # XML 1.0 has no way to write most control characters
            raise ScheduleError(f"launchd job {label}: {exc}") from None
        files[f"{label}.plist"] = text
    return files


def is_generated(content: str | bytes, file_name: str) -> bool:
    """Whether an existing agent file is one memfuse wrote: a property list whose Label is
    its file name and starts with memfuse's domain (plists have no room for a marker)."""
    try:
        job = plistlib.loads(content.encode("utf-8") if isinstance(content, str) else content)
    except _NOT_A_PLIST:
        return False
    label = job.get("Label") if isinstance(job, dict) else None
    return (
        isinstance(label, str) and f"{label}.plist" == file_name and label.startswith(f"{DOMAIN}.")
    )


def parse(files: Mapping[str, str | bytes]) -> list[Job]:
    """The job of each property list: its program and arguments, environment and times."""
    return [_job(name, content) for name, content in files.items()]


def _job(name: str, content: str | bytes) -> Job:
    try:
        job = plistlib.loads(content.encode("utf-8") if isinstance(content, str) else content)
    except _NOT_A_PLIST as exc:
        raise ParseError(f"{name}: not a property list: {exc}") from None
    if not isinstance(job, dict):
        raise ParseError(f"{name}: the property list is not a dictionary")
    argv = job.get("ProgramArguments") or []
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise ParseError(f"{name}: ProgramArguments is not a list of strings")
    program = job.get("Program")
    if isinstance(program, str):  # launchd runs Program, with ProgramArguments as its argv
        argv = [program, *argv[1:]]
    if not argv:
        raise ParseError(f"{name}: neither Program nor ProgramArguments")
    env = job.get("EnvironmentVariables") or {}
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ParseError(f"{name}: EnvironmentVariables is not a dictionary of strings")
    intervals = job.get("StartCalendarInterval", [])
    intervals = [intervals] if isinstance(intervals, dict) else intervals
    times = _daily_times(intervals)
    when = ", ".join(f"{h:02}:{m:02}" for h, m in times) if times else repr(intervals)
    unread = tuple(f"{k}={job[k]}" for k in ("WorkingDirectory", "RootDirectory") if k in job)
    return Job(name, tuple(argv), tuple(env.items()), times, when, shlex.join(argv), unread)


def _daily_times(intervals: object) -> tuple[tuple[int, int], ...]:
    """(hour, minute) pairs when every interval names exactly an Hour and a Minute; ()
    otherwise (a missing key means "every", which is not a daily time)."""
    if not isinstance(intervals, list) or not intervals:
        return ()
    times = set()
    for interval in intervals:
        if not isinstance(interval, dict) or set(interval) != {"Hour", "Minute"}:
            return ()
        hour, minute = interval["Hour"], interval["Minute"]
        if type(hour) is not int or type(minute) is not int:
            return ()
        times.add((hour, minute))
    return tuple(sorted(times))


class Launchd(Scheduler):
    """Agents in ~/Library/LaunchAgents, written only over memfuse's own."""

    name = "launchd"
    summary = "macOS agents"
    source_help = "a plist file or folder"
    program = "launchctl"
    routes = "on this Mac, load them with launchctl" if sys.platform == "darwin" else ""

    def render(self, schedule: Schedule, machine: Machine) -> dict[str, str]:
        out = str(machine.state_dir / "launchd.out") if machine.state_dir else None
        return render(schedule, output_path=out)

    def read(self, files: dict[str, str]) -> list[Job]:
        return parse(files)

    def load(self, path: Path) -> dict[str, str]:
        return base.load_folder(path, (".plist",), {})

    def install(
        self, schedule: Schedule, files: dict[str, str], machine: Machine
    ) -> InstallOutcome:
        folder = agents_dir(machine)
        changes: list[str] = []
        written = base.write_own(folder, files, is_generated, changes)
        domain = f"gui/{os.getuid()}"
        with base.undone_on_failure(written):
            for name in files:
                label = name.removesuffix(".plist")
                machine.tool(["launchctl", "bootout", f"{domain}/{label}"], check=False)
                machine.tool(["launchctl", "bootstrap", domain, str(folder / name)])
                changes.append(f"loaded {label}")
        return InstallOutcome(schedule, changes)

    def remove(self, schedule: Schedule, files: dict[str, str], machine: Machine) -> list[str]:
        if machine.which("launchctl") is not None:
            for name in files:
                label = name.removesuffix(".plist")
                machine.tool(["launchctl", "bootout", f"gui/{os.getuid()}/{label}"], check=False)
        changes: list[str] = []
        base.remove_own(agents_dir(machine), files, is_generated, changes)
        return changes

    def where(self, schedule: Schedule, machine: Machine) -> str:
        return f"launchd agents {DOMAIN}.{schedule.label}.* in {agents_dir(machine)}"


def agents_dir(machine: Machine) -> Path:
    return machine.home / "Library" / "LaunchAgents"


SCHEDULER = Launchd()
