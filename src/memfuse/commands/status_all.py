"""`memfuse status --all-agents`: `memfuse status` for every agent of the roster, each on a
context of its own, a row each and the worst exit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memfuse.errors import ExitCode
from memfuse.run.apart import as_agent
from memfuse.run.context import RunContext
from memfuse.run.history import LIFECYCLE
from memfuse.run.output import CommandResult
from memfuse.schedule import agents, registry
from memfuse.schedule import install as installing
from memfuse.state.folder import StateFolder
from memfuse.untrusted import one_line
from memfuse.views import status

# The worst first: what the one exit code is when rows differ.
_WORST = (ExitCode.FATAL, ExitCode.NO_WORKSPACE, ExitCode.ESCALATED, ExitCode.OK)


def run(ctx: RunContext) -> CommandResult:
    roster, notes = agents.roster(ctx.settings, None, store=False)
    for note in notes:
        ctx.reporter.warn(note)
    rows: list[dict[str, Any]] = []
    for agent in roster:
        workspace = str(agent.workspace)
        row: dict[str, Any] = {"agent": agent.id, "workspace": workspace}
        rows.append(row)
        if not agent.workspace.is_dir():
            gone = f"its workspace {one_line(workspace)} does not exist (not made yet, or gone)"
            row.update(exit_code=int(ExitCode.NO_WORKSPACE), alarms=[gone])
            continue
        done, warnings = as_agent(ctx, agent, status.run)
        data = done.data
        row.update(
            exit_code=int(done.exit_code),
            last={name: _last(data["commands"][name]) for name in LIFECYCLE},
            pending=data["ledger"].get("pending_retry", 0),
            alarms=list(data["alarms"]),
            warnings=warnings,
            status=dict(data),
        )
    machine = installing.machine_for(
        ctx.settings, StateFolder(Path("/nonexistent")), tool=ctx.seams.tool
    )
    for host in registry.every():
        for crossing in host.crossings(machine):
            ctx.reporter.warn(crossing)  # another agent's memory within reach
    codes = {row["exit_code"] for row in rows}
    code = next((c for c in _WORST if c in codes), ExitCode.OK)  # status gives no other
    result: dict[str, Any] = {"agents": rows}
    return CommandResult("status", result, tuple(_lines(rows)), exit_code=code)


def _last(view: dict[str, Any]) -> str:
    record = view.get("last_run")
    if not isinstance(record, dict):
        return "never"
    return f"{record.get('status', '?')} {str(record.get('started') or '')[:16]}".strip()


def _lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per agent, from the data alone; its alarms under it."""
    lines = ["memfuse status, every agent:"]
    for row in rows:
        last = row.get("last") or {}
        runs = ", ".join(f"{name} {last.get(name, '-')}" for name in LIFECYCLE)
        pending = row.get("pending", 0)
        head = f"  {one_line(row['agent'])}: exit {row['exit_code']}"
        tail = f"  ({runs}; {pending} pending)" if last else ""
        lines.append(f"{head}  {one_line(row['workspace'])}{tail}")
        lines += [f"    {alarm}" for alarm in row.get("alarms", [])]
    return lines
