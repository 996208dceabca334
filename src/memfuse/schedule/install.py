"""Putting a schedule in place with its scheduler, taking it out, and the record `status`
reads: which scheduler, which runs at which times, in which zone, since when.

Every scheduler leaves the user's own entries as they were (other lines, files memfuse did
not write, other jobs); every change is said.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.schedule import registry, writers
from memfuse.schedule.base import Machine, Scheduler, Writer, run_tool
from memfuse.schedule.plan import home
from memfuse.schedule.runs import Schedule, due_between
from memfuse.settings import Settings
from memfuse.state.folder import StateFolder
from memfuse.untrusted import UntrustedJSON, load_json

SCHEDULE_FILE = "schedule.json"  # the installed schedule, which `status` checks runs against
_HHMM = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


def machine_for(
    settings: Settings, state: StateFolder, env: Mapping[str, str] | None = None
) -> Machine:
    """This machine, for a scheduler: the environment, the home, bounded tools, and a backup
    kept in the workspace's state folder."""

    def backup(name: str, text: str) -> str:
        state.ensure()
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
        state.write(f"{name}.before-{stamp}", text.encode("utf-8"))
        return str(state.path / f"{name}.before-{stamp}")

    return Machine(
        env=dict(os.environ if env is None else env), home=home(), tool=run_tool,
        which=shutil.which, backup=backup, state_dir=settings.state_dir,
        alert_failed_runs=settings.alert_failed_runs,
        alert_max_age_hours=settings.alert_max_age_hours,
    )  # fmt: skip


def writers_here(machine: Machine) -> list[Writer]:
    """The jobs on this machine that rewrite MEMORY.md, as each host of the registry says."""
    return [w for s in registry.every() for w in s.writers_here(machine)]


@dataclass(frozen=True)
class Placed:
    schedule: Schedule
    files: dict[str, str]
    changes: list[str]


def place(
    scheduler: Scheduler,
    schedule: Schedule,
    machine: Machine,
    state: StateFolder,
    now: datetime,
    recent: Path,
    *,
    remove: bool = False,
) -> Placed:
    """Install (or remove) the schedule; the record for `status` follows what was done."""
    files = scheduler.render(schedule, machine)
    state.ensure()
    if remove:
        changes = scheduler.remove(schedule, files, machine)
        kept = (recorded(state) or {}).get("format")
        if kept == scheduler.name or not isinstance(kept, str):
            state.remove(SCHEDULE_FILE)  # another format's schedule still runs: kept
        return Placed(schedule, files, changes + left_behind(state, recent))
    if scheduler.program and machine.which(scheduler.program) is None:
        # nothing written: a scheduler's own program is what puts its files to work
        raise MemfuseError(
            f"{scheduler.program} is not on this PATH. {ways_on(scheduler, machine)}"
        )
    try:
        outcome = scheduler.install(schedule, files, machine)
    except MemfuseError as exc:
        if scheduler.available(machine):
            raise
        raise MemfuseError(f"{exc}. {ways_on(scheduler, machine)}") from None
    if outcome.schedule != schedule:  # moved clear of another job's minute
        schedule = outcome.schedule
        files = scheduler.render(schedule, machine)
    alerts = scheduler.alerts(machine)
    record = {
        "format": scheduler.name,
        "label": schedule.label,
        "runs": {r.name: [f"{h:02d}:{m:02d}" for h, m in r.times] for r in schedule.runs},
        # Missed runs are counted from here on, in the zone the scheduler reads the times in.
        "installed": now.isoformat(timespec="seconds"),
        "zone": scheduler.zone(machine),
        "where": scheduler.where(schedule, machine),
        "alerts": alerts,
    }
    state.write(SCHEDULE_FILE, json.dumps(record, indent=2).encode("utf-8"))
    return Placed(schedule, files, [*outcome.changes, f"failures: {alerts}"])


def ways_on(missing: Scheduler, machine: Machine) -> str:
    """What a machine without this scheduler can do instead: the schedulers it has, how to
    get this one, or a schedule printed for one of the user's own."""
    here = [s for s in registry.every() if s is not missing and s.available(machine)]
    ways = [
        f"`memfuse cron --format {s.name} --install` ({s.summary}: on this machine)" for s in here
    ]
    if missing.routes:
        ways += [f"{missing.routes}, then `memfuse cron --format {missing.name} --install` again"]
    ways += [
        f"{s.routes}, then `memfuse cron --format {s.name} --install`"
        for s in registry.every()
        if s is not missing and s not in here and s.routes
    ]
    ways += ["`memfuse cron --format F` prints the schedule for you to install by hand"]
    return "Ways on from here: " + "; ".join(ways)


def left_behind(state: StateFolder, recent: Path) -> list[str]:
    """What removing the schedule leaves, so nobody takes it for gone: memfuse's state, the
    backups in it, RECENT.md, and the store."""
    return [
        f"left memfuse's state folder {state.path} (the ledger, the run history, the backups"
        " memfuse kept in it): remove it yourself if you are done with memfuse",
        f"left {recent} as the last surface wrote it, and the journals",
        "left every memory in agent-memory's store: memfuse never forgets them on removal",
    ]


def recorded(state: StateFolder) -> dict[str, object] | None:
    """The recorded schedule; None when there is none or it cannot be read."""
    try:
        record = load_json(state.read(SCHEDULE_FILE, 64 * 1024), limit=64 * 1024)
    except (OSError, UnsafePath, UntrustedJSON, MemfuseError, ValueError):
        return None
    return record if isinstance(record, dict) else None


@dataclass(frozen=True)
class Described:
    """The installed schedule as `status` shows it."""

    format: str
    where: str
    zone: str | None
    next_command: str | None
    next_run: datetime | None
    alerts: str | None


def describe(
    state: StateFolder, now: datetime, env: Mapping[str, str] | None = None
) -> Described | None:
    """Which schedule is installed, where, its next run, and where a failed run is reported
    as its scheduler says now (read when asked: a webhook added since the install counts);
    None when none is recorded."""
    record = recorded(state)
    if record is None or not isinstance(record.get("format"), str):
        return None
    zone_name = record.get("zone") if isinstance(record.get("zone"), str) else None
    zone = writers.zone_of(str(zone_name) if zone_name else None)
    runs = record.get("runs")
    upcoming: list[tuple[datetime, str]] = []
    for name, times in runs.items() if isinstance(runs, dict) else ():
        clock = [
            time(int(t[:2]), int(t[3:]))
            for t in (times if isinstance(times, list) else [])[:48]
            if isinstance(t, str) and _HHMM.fullmatch(t)
        ]
        found = due_between(tuple(clock), zone, now, now + timedelta(days=2))
        upcoming += [(found[0], str(name))] if found else []
    first = min(upcoming) if upcoming else None

    def text(key: str) -> str | None:
        value = record.get(key)
        return value[:500] if isinstance(value, str) else None

    return Described(
        format=str(record["format"])[:40], where=text("where") or str(record["format"])[:40],
        zone=str(zone_name)[:60] if zone_name else None,
        next_command=first[1] if first else None, next_run=first[0] if first else None,
        alerts=alerts_now(str(record["format"]), env) or text("alerts"),
    )  # fmt: skip


def alerts_now(fmt: str, env: Mapping[str, str] | None = None) -> str | None:
    """Where the scheduler `fmt` reports a failed run, read from its configuration now (no
    process is started); None for a format this memfuse does not know."""
    if fmt not in registry.names():
        return None
    machine = Machine(
        env=dict(os.environ if env is None else env), home=home(), tool=run_tool,
        which=shutil.which, backup=lambda _name, _text: "",
    )  # fmt: skip
    return registry.get(fmt).alerts(machine)
