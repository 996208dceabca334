"""`memfuse doctor`: check each dependency (memfuse.setup.checks), or write agent-memory's
mcporter entry (memfuse.setup.entry, merged by memfuse.setup.merge); `--all-agents` (`run_all`):
a row for every agent of the roster (memfuse.schedule.agents), one at a time, the worst exit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memfuse.errors import ExitCode
from memfuse.recall import semantic
from memfuse.run import render
from memfuse.run.apart import as_agent
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import CheckRow, DoctorData, InstallConfigData, PrintConfigData
from memfuse.schedule import agents, registry
from memfuse.schedule import install as installing
from memfuse.setup import merge
from memfuse.setup.checks import Probe, run_checks
from memfuse.setup.entry import ServerSetup, database_folder, own_database, server_entry
from memfuse.store.diagnose import Check
from memfuse.store.server_entry import mcporter_config_path, servers_in
from memfuse.untrusted import one_line

__all__ = ["ServerSetup", "install_config", "print_config", "run", "run_all"]
_WORST = (ExitCode.FATAL, ExitCode.NO_WORKSPACE, ExitCode.OK)


def run(ctx: RunContext, *, show_config: bool = False) -> CommandResult:
    probe = Probe(
        settings=ctx.settings,
        workspace=ctx.workspace,
        classifier=ctx.classifier,
        reporter=ctx.reporter,
        store=lambda: ctx.store,
        server=lambda: ctx.server,
        server_said=ctx.server_said,
        server_log=ctx.workspace.state.server_log,
        transport_why=lambda: ctx.transport_why,
    )
    checks, generation = run_checks(probe)
    # recall by meaning: the model the `semantic` extra brings, or that it is not installed
    off = ctx.settings.semantic == "off"
    checks.append(Check("meaning", True, semantic.describe(ctx.embedder, off), critical=False))
    machine = installing.machine_for(ctx.settings, ctx.workspace.state, tool=ctx.seams.tool)
    for host in registry.every():  # a host's configuration memfuse cannot read: said
        if (unread := host.unread(machine)) is not None:
            checks.append(Check(f"{host.name}-config", False, unread, critical=False))
    for why in registry.refused():  # a scheduler plugin set aside: every other runs
        checks.append(Check("scheduler-plugin", False, why, critical=False))
    return _result(ctx, checks, generation, show_config=show_config)


def print_config(ctx: RunContext, setup: ServerSetup) -> CommandResult:
    """A new mcporter config holding only agent-memory's entry (for a file of memfuse's own;
    `--install-config` adds the entry to an existing file instead)."""
    home = Path(os.environ.get("HOME") or Path.home())
    entry, notes = server_entry(ctx.settings, home, setup)
    entry = own_database(entry, ctx.settings.server, ctx.settings.workspace, None)
    for note in notes:
        ctx.reporter.info(note)
    config = {"mcpServers": {ctx.settings.server: entry}}
    text = json.dumps(config, indent=2)
    data: PrintConfigData = {"mcporter_config": config, "text": text}
    return CommandResult("doctor", data, payload=text)


def install_config(ctx: RunContext, setup: ServerSetup, target: Path) -> CommandResult:
    """Add (or replace) agent-memory's entry in an mcporter config, keeping every other server
    and setting; the file as it was is kept beside it and the change shown as a diff, with
    every server's secrets masked (memfuse.setup.merge)."""
    home = Path(os.environ.get("HOME") or Path.home())
    entry, notes = server_entry(ctx.settings, home, setup, target=target)
    server = ctx.settings.server
    entry = own_database(entry, server, ctx.settings.workspace, servers_in(target).get(server))
    found, changes = merge.install(target, ctx.settings.server, entry)
    changes = notes + changes + database_folder(entry)
    data: InstallConfigData = {"path": found["path"], "backup": found["backup"],
                               "entry": found["entry"], "changes": changes}  # fmt: skip
    return CommandResult("doctor", data, tuple(render.install_config(data)))


def _row(check: Check) -> CheckRow:
    return {"name": check.name, "ok": check.ok, "detail": check.detail,
            "critical": check.critical}  # fmt: skip


def _result(
    ctx: RunContext, checks: list[Check], generation: int | None, *, show_config: bool
) -> CommandResult:
    failed = [c for c in checks if c.fault]
    data: DoctorData = {
        "checks": [_row(c) for c in checks],
        "config": dict(ctx.settings.describe()),
        "config_shown": show_config,
    }
    if generation is not None:
        data["generation"] = generation
    if failed:
        data["error"] = "critical check(s) failed: " + "; ".join(c.line() for c in failed)
    code = ExitCode.FATAL if failed else ExitCode.OK
    if not ctx.settings.workspace.is_dir():
        code = ExitCode.NO_WORKSPACE  # the same code as every other command gives it
    return CommandResult(
        command="doctor", data=data, human=tuple(render.doctor(data)), exit_code=code
    )


def run_all(ctx: RunContext) -> CommandResult:
    """`doctor` for every agent: one row each, the worst exit."""
    s = ctx.settings
    roster, notes = agents.roster(s, mcporter_config_path(s, os.environ))
    for note in notes:
        ctx.reporter.warn(note)
    rows: list[dict[str, Any]] = []
    codes: list[ExitCode] = []
    for agent in roster:
        done, _ = as_agent(ctx, agent, run)
        data = done.data
        failed = [f"{c['name']}: {c['detail']}" for c in data["checks"]
                  if not c["ok"] and c["critical"]]  # fmt: skip
        rows.append({"agent": agent.id, "workspace": str(agent.workspace),
                     "server": agent.server, "exit_code": int(done.exit_code),
                     "failed": failed, "generation": data.get("generation"),
                     "doctor": dict(data)})  # fmt: skip
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
            f"  {row['agent']}: {verdict} (exit {row['exit_code']})  {one_line(row['workspace'])},"
            f" store {row['server']}{generation}"
        )
        lines += [f"    FAIL {line}" for line in row["failed"]]
    return lines
