"""The flow of `memfuse status` (and serve's `status` tool): the lifecycle at a glance, from
`.memfuse/` alone (no store call, no lock).

Exits ESCALATED when something needs a person, so `memfuse status -q` is a monitoring probe.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memfuse.confine import UnsafePath
from memfuse.errors import ExitCode
from memfuse.ledger.alarms import unheld_alarms, unreadable_alarms
from memfuse.ledger.ledger import LedgerError
from memfuse.ledger.reader import LedgerReader
from memfuse.run import render
from memfuse.run.context import Asking
from memfuse.run.history import LIFECYCLE, Alarm, History, RunRecord, assess, stamp
from memfuse.run.lock import lock_holder
from memfuse.run.output import CommandResult
from memfuse.run.results import CommandView, LedgerView, RecentView, ScheduleView, StatusData
from memfuse.schedule.install import SCHEDULE_FILE
from memfuse.schedule.install import describe as describe_schedule
from memfuse.schedule.runs import due_between
from memfuse.state.folder import last_generation, paused_since
from memfuse.untrusted import UntrustedJSON, load_json


def run(ctx: Asking) -> CommandResult:
    reader, trouble = _open_ledger(ctx)
    try:
        return _status(ctx, reader, trouble)
    finally:
        if reader is not None:
            reader.close()


def _status(ctx: Asking, reader: LedgerReader | None, trouble: str | None) -> CommandResult:
    s = ctx.settings
    state = ctx.workspace.state
    runs, problem = History(state).load(repair=False)
    lost = [problem] if problem else []  # the history itself cannot be read: an alarm
    alarms: list[Alarm] = []
    commands: dict[str, CommandView] = {}
    schedule = _installed_schedule(ctx)
    stopped: list[str] = []
    for name in LIFECYCLE:
        records = runs.get(name, [])
        alarm = assess(records, s.alert_policy, s.now, current=False)
        if alarm is not None:
            alarms.append(alarm)
        commands[name] = _command_view(records, alarm)
        missed = _missed(schedule, name, records, s.now)
        latest = missed[-1] if missed else None
        commands[name]["missed"] = latest.isoformat(timespec="minutes") if latest else None
        commands[name]["missed_runs"] = len(missed)
        if latest is None:
            continue
        if len(missed) >= MISSED_ALARM:
            stopped.append(
                f"{name} needs a person: it missed its last {len(missed)} scheduled runs"
                f" ({', '.join(stamp(m) for m in missed[-MISSED_ALARM:])}): the scheduler has"
                " stopped running it (`memfuse cron --check` tries the schedule)"
            )
        else:
            ctx.reporter.warn(
                f"{name} missed its {latest:%H:%M} run (none since {latest.isoformat()}):"
                " is the scheduler running it?"
            )
    seen = last_generation(state)
    data: StatusData = {
        "workspace": str(s.workspace),
        "state": str(state.path),
        "at": s.now.isoformat(),
        "commands": commands,
        "recent": _recent_view(ctx),
        "ledger": _ledger_view(ctx, reader, trouble, runs.get("sync", [])),
        "lock": lock_holder(state),
        "generation": seen[0] if seen else None,
        "generation_seen": seen[1] if seen else None,
        "alarms": [a.line() for a in alarms]
        + stopped
        + [f"memfuse needs a person: {p}" for p in lost],
    }
    data["alarms"] += unreadable_alarms(reader, SHOWN) + _set_aside_alarms(ctx)
    data["alarms"] += unheld_alarms(reader, s.now)
    data["schedule"] = _schedule_view(ctx)
    paused = paused_since(ctx.workspace.state)
    if paused is not None:
        data["paused_since"] = paused
        since = _when(paused)
        if since is None or s.now - since > PAUSE_ALARM_AFTER:
            data["alarms"].append(
                f"sync has been rolled back since {paused}: nothing reaches the store;"
                " `memfuse rollback --undo` resumes it"
            )
    code = ExitCode.ESCALATED if data["alarms"] else ExitCode.OK
    return CommandResult("status", data, tuple(render.status(data)), exit_code=code)


PAUSE_ALARM_AFTER = timedelta(hours=24)  # a rollback left in force longer needs a person


def _open_ledger(ctx: Asking) -> tuple[LedgerReader | None, str | None]:
    """The ledger, opened read-only once for every read here (None: there is none); or why it
    cannot be."""
    try:
        return LedgerReader.open(ctx.workspace.state), None
    except (LedgerError, UnsafePath) as exc:
        ctx.reporter.warn(str(exc))
        return None, str(exc)


def _when(text: str) -> datetime | None:
    try:
        since = datetime.fromisoformat(text)
    except ValueError:
        return None
    return since if since.tzinfo is not None else since.astimezone()


def _set_aside_alarms(ctx: Asking) -> list[str]:
    """A ledger memfuse had to move aside: what it held (a rollback, the rejected, what was
    pending) was rebuilt from the store as far as it could be; a person should look."""
    state = ctx.workspace.state
    return [
        f"the sync ledger could not be used and was moved aside to {state.path / name};"
        " sync rebuilt it from the store: check it, then delete that file"
        for name in state.set_aside(state.LEDGER)[:SHOWN]
    ]


def _command_view(records: list[RunRecord], alarm: Alarm | None) -> CommandView:
    successes = [r for r in records if r.succeeded]
    return {
        "last_run": records[-1].to_json() if records else None,
        "last_success": successes[-1].started if successes else None,
        "alarm": alarm.reason if alarm else None,
        "missed": None,
        "missed_runs": 0,
    }


def _schedule_view(ctx: Asking) -> ScheduleView:
    """Which schedule `memfuse cron --install` put in place: where, its next run, its alerts."""
    found = describe_schedule(ctx.workspace.state, ctx.settings.now)
    if found is None:
        return {"installed": False}
    at = found.next_run.isoformat(timespec="minutes") if found.next_run else None
    return {"installed": True, "format": found.format, "where": found.where, "zone": found.zone,
            "next_run": at, "next_command": found.next_command, "alerts": found.alerts}  # fmt: skip


MISSED_AFTER = timedelta(hours=1)  # a scheduled run may wait for the lock, then run a while
MISSED_ALARM = 2  # scheduled runs of a command missed in a row: the schedule has stopped
LOOKBACK = timedelta(days=8)  # how far back missed runs are counted (enough to pass the alarm)
_TIME = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


@dataclass(frozen=True)
class Installed:
    """The schedule `memfuse cron --install` recorded: the daily times by command, the zone
    the scheduler reads them in (None: this machine's local rules) and when it was put in
    place (None for a record older than the field)."""

    times: dict[str, tuple[time, ...]] = field(default_factory=dict)
    zone: tzinfo | None = None
    since: datetime | None = None


def _installed_schedule(ctx: Asking) -> Installed:
    """What `memfuse cron --install` recorded (nothing when none was, or the file is not
    memfuse's: it is state, read as untrusted all the same)."""
    try:
        raw = ctx.workspace.state.read(SCHEDULE_FILE, 64 * 1024)
        record = load_json(raw, limit=64 * 1024)
    except FileNotFoundError:
        return Installed()
    except (OSError, UnsafePath, UntrustedJSON) as exc:
        ctx.reporter.warn(f"the installed schedule cannot be read ({exc}): missed runs unchecked")
        return Installed()
    record = record if isinstance(record, dict) else {}
    runs = record.get("runs")
    found: dict[str, tuple[time, ...]] = {}
    for name, times in runs.items() if isinstance(runs, dict) else ():
        if name in LIFECYCLE and isinstance(times, list):
            matched = [m for t in times[:48] if isinstance(t, str) and (m := _TIME.fullmatch(t))]
            found[name] = tuple(time(int(m[1]), int(m[2])) for m in matched)
    zone: tzinfo | None = None
    if isinstance(record.get("zone"), str):
        try:
            zone = ZoneInfo(record["zone"])
        except (ValueError, OSError, ZoneInfoNotFoundError):
            ctx.reporter.warn(f"the installed schedule's zone {record['zone'][:60]!r} is unknown")
    since = None
    with contextlib.suppress(TypeError, ValueError):
        since = datetime.fromisoformat(record["installed"]) if "installed" in record else None
    if since is not None and since.utcoffset() is None:
        since = None
    return Installed(found, zone, since)


def _missed(
    schedule: Installed, name: str, records: list[RunRecord], now: datetime
) -> list[datetime]:
    """The scheduled moments of `name`, at least MISSED_AFTER ago, that no run followed:
    counted from the last run, and never from before the schedule was installed."""
    times = schedule.times.get(name, ())
    if not times:
        return []
    starts = [now - LOOKBACK, *(r.at for r in records[-1:])]
    if schedule.since is not None:
        starts.append(schedule.since)
    return due_between(times, schedule.zone, max(starts), now - MISSED_AFTER)


def _recent_view(ctx: Asking) -> RecentView:
    path = ctx.workspace.recent_md
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return {"path": str(path), "exists": False, "age_hours": None}
    written = datetime.fromtimestamp(info.st_mtime).astimezone()
    hours = round((ctx.settings.now - written).total_seconds() / 3600, 1)
    return {
        "path": str(path),
        "exists": True,
        "age_hours": hours,
        "written": written.isoformat(timespec="seconds"),
        "bytes": info.st_size,
    }


SHOWN = 10  # pending and rejected bullets listed; the rest are counted


def _ledger_view(
    ctx: Asking, reader: LedgerReader | None, trouble: str | None, syncs: list[RunRecord]
) -> LedgerView:
    if trouble is not None:
        return {"outcomes": None, "error": trouble}
    try:
        counts = reader.outcome_counts() if reader is not None else None
        pending = reader.pending() if reader is not None else []
        rejected = reader.rejected() if reader is not None else []
    except LedgerError as exc:
        ctx.reporter.warn(str(exc))
        return {"outcomes": None, "error": str(exc)}
    last_counts = syncs[-1].counts if syncs else {}
    view: LedgerView = {
        "outcomes": counts,
        "positions": sum(counts.values()) if counts else 0,
        "rejected": len(rejected),
        "pending_retry": len(pending),
        "stale": last_counts.get("stale", 0),
        "pending": [{"position": p, "at": a.at, "reason": a.reason} for p, a in pending[:SHOWN]],
        "rejections": [{"position": p, "reason": r} for p, r in rejected[:SHOWN]],
    }
    if counts is not None:
        view["stored"] = sum(v for k, v in counts.items() if k not in ("rejected", "withdrawn"))
    return view
