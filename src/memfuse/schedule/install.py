"""Putting a schedule in place with its scheduler, taking it out, and the record `status`
reads: which scheduler, which runs at which times, in which zone, since when.

Every scheduler leaves the user's own entries as they were (other lines, files memfuse did
not write, other jobs); every change is said.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.schedule import registry, writers
from memfuse.schedule.base import Machine, Scheduler, Writer, run_tool
from memfuse.schedule.plan import home
from memfuse.schedule.runs import Schedule
from memfuse.settings import Settings
from memfuse.state.folder import StateFolder
from memfuse.untrusted import UntrustedJSON, load_json

SCHEDULE_FILE = "schedule.json"  # the installed schedule, which `status` checks runs against


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
        if recorded_format(state) in (scheduler.name, None):
            state.remove(SCHEDULE_FILE)  # another format's schedule still runs: kept
        return Placed(schedule, files, changes + left_behind(state, recent))
    outcome = scheduler.install(schedule, files, machine)
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


def recorded_format(state: StateFolder) -> str | None:
    record = recorded(state)
    found = record.get("format") if record else None
    return found if isinstance(found, str) else None


def clear(schedule: Schedule, busy: list[Writer], zone: str | None) -> Schedule:
    return writers.clear_of(schedule, busy, zone)[0]
