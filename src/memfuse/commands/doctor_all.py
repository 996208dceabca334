"""`memfuse doctor --all-agents`: `memfuse doctor` for every agent a host configures, each
with its own workspace and store (the server entry `cron --all-agents` gives it), one row
each — its failed checks, the store's generation — and one exit code, the worst.

Each row is `memfuse doctor` itself (memfuse.commands.doctor) on a context of the agent's own,
closed before the next: one store server at a time.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from memfuse.commands import cron_all, doctor
from memfuse.errors import ExitCode
from memfuse.report import Reporter
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.store.server_entry import mcporter_config_path

_WORST = (ExitCode.FATAL, ExitCode.NO_WORKSPACE, ExitCode.OK)


def run(ctx: RunContext) -> CommandResult:
    s = ctx.settings
    agents, notes = cron_all.roster(s, mcporter_config_path(s, os.environ))
    for note in notes:
        ctx.reporter.warn(note)
    rows: list[dict[str, Any]] = []
    codes: list[ExitCode] = []
    for agent in agents:
        reporter = Reporter()
        reporter.begin(ctx.reporter.mask, ctx.reporter.logger)
        mine = replace(s, workspace=agent.workspace, state_dir=None, server=agent.server)
        sub = RunContext(mine, reporter, seams=ctx.seams)
        try:
            done = doctor.run(sub)
        finally:
            sub.close()
        data = done.data
        failed = [f"{c['name']}: {c['detail']}" for c in data["checks"]
                  if not c["ok"] and c["critical"]]  # fmt: skip
        if agent.entry is not None and any(f"no server {agent.server!r}" in f for f in failed):
            # doctor's own fix (`--install-config`) would give it the shared database
            failed.append(
                f"{agent.server}: `memfuse cron --install --all-agents` writes this agent's"
                " entry, with a database of its own"
            )
        rows.append({"agent": agent.id, "workspace": str(agent.workspace),
                     "server": agent.server, "exit_code": int(done.exit_code),
                     "failed": failed, "generation": data.get("generation"),
                     "doctor": dict(data)})  # fmt: skip
        for warning in reporter.warnings:
            ctx.reporter.warn(f"agent {agent.id}: {warning}")
        codes.append(done.exit_code)
    code = next((c for c in _WORST if c in codes), ExitCode.OK)
    if any(c not in _WORST for c in codes):
        code = ExitCode.FATAL
    return CommandResult("doctor", {"agents": rows}, tuple(_lines(rows)), exit_code=code)


def _lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line per agent, from the data alone; what failed under it."""
    lines = ["memfuse doctor, every agent:"]
    for row in rows:
        generation = f", agent-memory {row['generation']}.x" if row.get("generation") else ""
        verdict = "ok" if not row["failed"] else f"{len(row['failed'])} failed"
        lines.append(
            f"  {row['agent']}: {verdict} (exit {row['exit_code']})  {row['workspace']},"
            f" store {row['server']}{generation}"
        )
        lines += [f"    FAIL {line}" for line in row["failed"]]
    return lines
