"""Putting a schedule in place with its scheduler, taking it out, and the record `status`
reads: which scheduler, which runs at which times, in which zone, since when.

Every scheduler leaves the user's own entries as they were (other lines, files memfuse did
not write, other jobs); every change is said.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.schedule import registry, writers
from memfuse.schedule.base import Machine, MemoryRewriter, Scheduler, ToolRunner, run_tool
from memfuse.schedule.plan import home
from memfuse.schedule.runs import Schedule, due_between
from memfuse.settings import Settings
from memfuse.state.folder import StateFolder
from memfuse.untrusted import UntrustedJSON, load_json

SCHEDULE_FILE = "schedule.json"  # the installed schedule, which `status` checks runs against
_HHMM = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


def machine_for(
    settings: Settings,
    state: StateFolder,
    env: Mapping[str, str] | None = None,
    *,
    tool: ToolRunner = run_tool,
) -> Machine:
    """This machine, for a scheduler: the environment, the home, bounded tools, and a backup
    kept in the workspace's state folder."""

    def backup(name: str, text: str) -> str:
        state.ensure()
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
        state.write(f"{name}.before-{stamp}", text.encode("utf-8"))
        return str(state.path / f"{name}.before-{stamp}")

    return Machine(
        env=dict(os.environ if env is None else env), home=home(), tool=tool,
        which=shutil.which, backup=backup, state_dir=settings.state_dir,
        alert_failed_runs=settings.alert_failed_runs,
        alert_max_age_hours=settings.alert_max_age_hours,
    )  # fmt: skip


def writers_here(machine: Machine) -> list[MemoryRewriter]:
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
    setup: str = "",
    given: str = "",
) -> Placed:
    """Install (or remove) the schedule; the record for `status` follows what was done;
    `given`: the flags a retry of the install repeats."""
    files = scheduler.render(schedule, machine)
    state.ensure()
    if remove:
        changes = scheduler.remove(schedule, files, machine)
        kept = recorded(state)
        if kept is None or kept.format in (None, scheduler.name):
            state.remove(SCHEDULE_FILE)  # another format's schedule still runs: kept
        return Placed(schedule, files, changes + left_behind(state, recent))
    if scheduler.program and machine.which(scheduler.program) is None:
        # nothing written: a scheduler's own program is what puts its files to work
        raise MemfuseError(
            f"{scheduler.program} is not on this PATH. {ways_on(scheduler, machine, given)}"
        )
    try:
        outcome = scheduler.install(schedule, files, machine)
    except MemfuseError as exc:
        if scheduler.available(machine):
            raise
        raise MemfuseError(f"{exc}. {ways_on(scheduler, machine, given)}") from None
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
        "setup": setup,  # the store setup its jobs run with (Settings.store_setup)
    }
    state.write(SCHEDULE_FILE, json.dumps(record, indent=2).encode("utf-8"))
    return Placed(schedule, files, [*outcome.changes, f"failures: {alerts}"])


def ways_on(missing: Scheduler, machine: Machine, given: str = "") -> str:
    """What a machine without this scheduler can do instead: the schedulers it has, how to
    get this one, or a schedule printed for one of the user's own."""
    here = [s for s in registry.every() if s is not missing and s.available(machine)]
    ways = [
        f"`memfuse cron --format {s.name} --install{given}` ({s.summary}: on this machine)"
        for s in here
    ]
    if missing.routes:
        ways += [
            f"{missing.routes}, then `memfuse cron --format {missing.name} --install{given}` again"
        ]
    ways += [
        f"{s.routes}, then `memfuse cron --format {s.name} --install{given}`"
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


@dataclass(frozen=True)
class Recorded:
    """The schedule `memfuse cron --install` recorded: its format (None: the record names
    none), the daily times by command, the zone the scheduler reads them in (`zone` None:
    this machine's local rules), when it was put in place (None for a record older than the
    field), where it lives and where a failed run was reported, as written then."""

    format: str | None
    times: dict[str, tuple[time, ...]]
    zone_name: str | None
    zone: tzinfo | None
    since: datetime | None
    where: str | None
    alerts: str | None
    setup: str | None = None


def recorded(state: StateFolder, warn: Callable[[str], None] = lambda _m: None) -> Recorded | None:
    """The recorded schedule, read as untrusted state; None when there is none or it cannot
    be read (said to `warn`, as is a zone this machine does not know)."""
    try:
        record = load_json(state.read(SCHEDULE_FILE, 64 * 1024), limit=64 * 1024)
    except FileNotFoundError:
        return None
    except (OSError, UnsafePath, UntrustedJSON, MemfuseError, ValueError) as exc:
        warn(f"the installed schedule cannot be read ({exc}): missed runs unchecked")
        return None
    if not isinstance(record, dict):
        return None
    runs = record.get("runs")
    times: dict[str, tuple[time, ...]] = {}
    for name, listed in runs.items() if isinstance(runs, dict) else ():
        if isinstance(listed, list):
            found = [m for t in listed[:48] if isinstance(t, str) and (m := _HHMM.fullmatch(t))]
            times[str(name)] = tuple(time(int(m[1]), int(m[2])) for m in found)
    zone_name = record["zone"] if isinstance(record.get("zone"), str) else None
    zone = writers.zone_of(zone_name)
    if zone_name and zone is None:
        warn(f"the installed schedule's zone {zone_name[:60]!r} is unknown")
    since = None
    with contextlib.suppress(TypeError, ValueError):
        since = datetime.fromisoformat(record["installed"]) if "installed" in record else None

    def text(key: str, most: int = 500) -> str | None:
        value = record.get(key)
        return value[:most] if isinstance(value, str) else None

    return Recorded(
        format=text("format", 40), times=times, zone_name=zone_name, zone=zone,
        since=since if since is not None and since.utcoffset() is not None else None,
        where=text("where"), alerts=text("alerts"), setup=text("setup", 40),
    )  # fmt: skip


def next_run(schedule: Recorded, now: datetime) -> tuple[datetime, str] | None:
    """The next of the schedule's runs within two days, and its command."""
    upcoming = [
        (found[0], name)
        for name, clock in schedule.times.items()
        if (found := due_between(clock, schedule.zone, now, now + timedelta(days=2)))
    ]
    return min(upcoming) if upcoming else None
