"""`memfuse doctor`: check each dependency and show the effective configuration; or write
agent-memory's mcporter entry. The checks are memfuse.setup.checks', the entry
memfuse.setup.entry's."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memfuse.errors import ExitCode
from memfuse.recall import semantic
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import CheckRow, DoctorData, InstallConfigData, PrintConfigData
from memfuse.setup.checks import Probe, run_checks
from memfuse.setup.entry import ServerSetup, database_folder, server_entry
from memfuse.store.diagnose import Check

__all__ = ["ServerSetup", "install_config", "print_config", "run"]


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
    checks.append(Check("meaning", True, semantic.describe(ctx.embedder), critical=False))
    return _result(ctx, checks, generation, show_config=show_config)


def print_config(ctx: RunContext, setup: ServerSetup) -> CommandResult:
    """A new mcporter config holding only agent-memory's entry (for a file of memfuse's own;
    `--install-config` adds the entry to an existing file instead)."""
    home = Path(os.environ.get("HOME") or Path.home())
    entry, notes = server_entry(ctx.settings, home, setup)
    for note in notes:
        ctx.reporter.info(note)
    config = {"mcpServers": {ctx.settings.server: entry}}
    text = json.dumps(config, indent=2)
    data: PrintConfigData = {"mcporter_config": config, "text": text}
    return CommandResult("doctor", data, payload=text)


def install_config(ctx: RunContext, setup: ServerSetup, target: Path) -> CommandResult:
    """Add (or replace) agent-memory's entry in an mcporter config, keeping every other server
    and setting; the file as it was is kept beside it and the change shown as a diff, with
    every server's secrets masked (memfuse.commands.install_config)."""
    from memfuse.commands import install_config as merge

    home = Path(os.environ.get("HOME") or Path.home())
    entry, notes = server_entry(ctx.settings, home, setup, target=target)
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
