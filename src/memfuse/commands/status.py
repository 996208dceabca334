"""`memfuse status`: the lifecycle at a glance, from `.memfuse/` alone (no store call, no lock).

Exits ESCALATED when something needs a person, so `memfuse status -q` is a monitoring probe.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.context import RunContext
from memfuse.errors import ExitCode
from memfuse.history import (
    LIFECYCLE,
    Alarm,
    History,
    RunRecord,
    assess,
    last_generation,
    lock_holder,
)
from memfuse.ledger import LedgerError, outcome_counts
from memfuse.output import CommandResult


def run(ctx: RunContext) -> CommandResult:
    s = ctx.settings
    runs, problem = History(s.state_dir).load()
    if problem:
        ctx.reporter.warn(problem)
    alarms: list[Alarm] = []
    commands: dict[str, Any] = {}
    lines = [f"memfuse status — {s.workspace}"]
    for name in LIFECYCLE:
        records = runs.get(name, [])
        alarm = assess(records, s.alert_policy, s.now, current=False)
        if alarm is not None:
            alarms.append(alarm)
        commands[name] = _command_view(records, alarm)
        lines.append(f"  {name:<8} {_command_line(records, s.now)}")

    recent = _recent_view(ctx)
    lines.append(f"  RECENT.md {recent['summary']}")
    ledger = _ledger_view(ctx, runs.get("sync", []))
    lines.append(f"  ledger   {ledger['summary']}")
    seen = last_generation(s.state_dir)
    lines.append(
        f"  store    agent-memory {seen[0]}.x (as `memfuse doctor` saw it, {seen[1][:16]})"
        if seen
        else "  store    generation unknown (run `memfuse doctor`)"
    )
    holder = lock_holder(s.state_dir)
    lines.append(f"  lock     {f'held by {holder}' if holder else 'free'}")
    for alarm in alarms:
        lines.append(f"needs a person: {alarm.line()}")
    if not alarms:
        lines.append("nothing needs a person")
    data = {
        "workspace": str(s.workspace),
        "commands": commands,
        "recent": {k: v for k, v in recent.items() if k != "summary"},
        "ledger": {k: v for k, v in ledger.items() if k != "summary"},
        "lock": holder,
        "generation": seen[0] if seen else None,
        "alarms": [a.line() for a in alarms],
    }
    code = ExitCode.ESCALATED if alarms else ExitCode.OK
    return CommandResult("status", data, tuple(lines), exit_code=code)


def _command_view(records: list[RunRecord], alarm: Alarm | None) -> dict[str, Any]:
    successes = [r for r in records if r.succeeded]
    return {
        "last_run": records[-1].to_json() if records else None,
        "last_success": successes[-1].started if successes else None,
        "alarm": alarm.reason if alarm else None,
    }


def _command_line(records: list[RunRecord], now: datetime) -> str:
    if not records:
        return "never run"
    last = records[-1]
    text = f"last run {_ago(last.at, now)}: {last.status}, store {last.store}"
    if last.counts:
        shown = ", ".join(f"{v} {k}" for k, v in last.counts.items() if v)
        text += f" ({shown or 'nothing to do'})"
    if not last.succeeded:
        successes = [r for r in records if r.succeeded]
        text += f"; last success {_ago(successes[-1].at, now)}" if successes else "; no success"
    return text


def _recent_view(ctx: RunContext) -> dict[str, Any]:
    path = ctx.settings.workspace / "RECENT.md"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return {"path": str(path), "exists": False, "age_hours": None, "summary": "missing"}
    written = datetime.fromtimestamp(info.st_mtime).astimezone()
    hours = round((ctx.settings.now - written).total_seconds() / 3600, 1)
    size = f"{info.st_size} bytes" if info.st_size else "empty"
    return {
        "path": str(path),
        "exists": True,
        "age_hours": hours,
        "bytes": info.st_size,
        "summary": f"written {_ago(written, ctx.settings.now)}, {size}",
    }


def _ledger_view(ctx: RunContext, syncs: list[RunRecord]) -> dict[str, Any]:
    try:
        counts = outcome_counts(ctx.settings.state_dir)
    except (LedgerError, UnsafePath) as exc:
        ctx.reporter.warn(str(exc))
        return {"outcomes": None, "summary": str(exc)}
    last_counts = syncs[-1].counts if syncs else {}
    view: dict[str, Any] = {
        "outcomes": counts,
        "positions": sum(counts.values()) if counts else 0,
        "rejected": (counts or {}).get("rejected", 0),
        "pending_retry": last_counts.get("failed", 0),
        "stale": last_counts.get("stale", 0),
    }
    if counts is None:
        view["summary"] = "no ledger yet (nothing synced)"
        return view
    stored = sum(v for k, v in counts.items() if k != "rejected")
    view["stored"] = stored
    view["summary"] = (
        f"{view['positions']} bullet(s): {stored} in the store, {view['rejected']} rejected"
        f" by its gate; last sync: {view['pending_retry']} pending retry, {view['stale']} stale"
    )
    return view


def _ago(moment: datetime, now: datetime) -> str:
    seconds = (now - moment).total_seconds()
    when = moment.strftime("%Y-%m-%d %H:%M")
    if seconds < 0:
        return when
    if seconds < 3600:
        return f"{when} ({int(seconds // 60)} min ago)"
    if seconds < 172800:
        return f"{when} ({seconds / 3600:.0f} h ago)"
    return f"{when} ({seconds / 86400:.0f} days ago)"
