"""The flow of `memfuse status` (and serve's `status` tool): the lifecycle at a glance, from
the state folder alone (no store call, no lock); ESCALATED when something needs a person."""

from __future__ import annotations

import os
from datetime import datetime, timedelta

from memfuse.confine import UnsafePath
from memfuse.errors import ExitCode
from memfuse.ledger.alarms import unheld_alarms, unreadable_alarms
from memfuse.ledger.ledger import LedgerError
from memfuse.ledger.reader import LedgerReader
from memfuse.run import render
from memfuse.run.context import Asking
from memfuse.run.history import LIFECYCLE, Alarm, History, RunRecord, assess, by_schedule, stamp
from memfuse.run.lock import lock_holder
from memfuse.run.output import CommandResult
from memfuse.run.results import CommandView, LedgerView, RecentView, ScheduleView, StatusData
from memfuse.schedule import registry
from memfuse.schedule.install import Recorded, machine_for, next_run, recorded
from memfuse.schedule.runs import due_between
from memfuse.state.folder import last_generation, paused_since
from memfuse.store import owner
from memfuse.store.connect import find_server


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
    schedule = recorded(state, ctx.reporter.warn)
    stopped: list[str] = []
    for name in LIFECYCLE:
        records, manual = by_schedule(runs.get(name, []), schedule.setup if schedule else None)
        alarm = assess(records, s.alert_policy, s.now, current=False)
        if alarm is not None:
            alarms.append(alarm)
        commands[name] = _command_view(runs.get(name, []), alarm)
        commands[name]["manual"] = manual
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
        # status's times are shown in the installed schedule's zone, its next run's
        "at": (
            s.now.astimezone(schedule.zone) if schedule and schedule.zone else s.now
        ).isoformat(),
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
    data["alarms"] += [why for why in [owner.check(s, find_server(s))] if why]  # another's store
    data["schedule"] = _schedule_view(ctx, schedule)
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
    """The ledger, opened read-only for every read here (None: none), or why it cannot be."""
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
    """A ledger moved aside was rebuilt from the store as far as it could be: look."""
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


def _schedule_view(ctx: Asking, found: Recorded | None) -> ScheduleView:
    """Which schedule `memfuse cron --install` put in place: where, its next run, and where a
    failed run is reported, as its scheduler's configuration says now."""
    if found is None or found.format is None:
        return {"installed": False}
    first = next_run(found, ctx.settings.now)
    alerts = None
    if found.format in registry.names():
        machine = machine_for(ctx.settings, ctx.workspace.state)
        alerts = registry.get(found.format).alerts(machine)
    return {"installed": True, "format": found.format, "where": found.where or found.format,
            "zone": found.zone_name[:60] if found.zone_name else None,
            "next_run": first[0].isoformat(timespec="minutes") if first else None,
            "next_command": first[1] if first else None,
            "alerts": alerts or found.alerts}  # fmt: skip


MISSED_AFTER = timedelta(hours=1)  # a scheduled run may wait for the lock, then run a while
MISSED_ALARM = 2  # scheduled runs of a command missed in a row: the schedule has stopped
LOOKBACK = timedelta(days=8)  # how far back missed runs are counted (enough to pass the alarm)


def _missed(
    schedule: Recorded | None, name: str, records: list[RunRecord], now: datetime
) -> list[datetime]:
    """The scheduled moments of `name`, at least MISSED_AFTER ago, that no run followed:
    counted from the last run, and never from before the schedule was installed."""
    times = schedule.times.get(name, ()) if schedule is not None else ()
    if schedule is None or not times:
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
