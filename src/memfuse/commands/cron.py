"""`memfuse cron`: the five scheduled runs, for the scheduler this machine uses.

The schedule (memfuse.schedule.plan) is rendered by the scheduler `--format` names (one module
each, listed in memfuse.schedule.registry). `--install` puts it in place beside what is there
and `--remove` takes it out (memfuse.schedule.install); each install records the schedule in
the state folder, which `memfuse status` checks runs against. `--check [FILE]` tries each
memfuse job of a schedule the way its scheduler would run it (memfuse.schedule.check).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from memfuse.commands import cron_all
from memfuse.errors import ConfigError, ExitCode
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import CronCheckData, CronData
from memfuse.schedule import ParseError, ScheduleError, registry, writers
from memfuse.schedule import check as checking
from memfuse.schedule import install as installing
from memfuse.schedule.base import Machine, Scheduler, Writer
from memfuse.schedule.plan import build
from memfuse.schedule.runs import Schedule
from memfuse.untrusted import one_line

STDIN_LIMIT = 1 << 22


@dataclass(frozen=True)
class Request:
    fmt: str = ""  # the registry's default when empty
    archive: bool = False
    install: bool = False
    remove: bool = False
    check: bool = False
    file: str | None = None
    all_agents: bool = False  # every agent the scheduler's host lists (cron_all)
    workspaces: tuple[Path, ...] = ()  # several -w: one block per workspace (cron_all)


def run(ctx: RunContext, request: Request) -> CommandResult:
    s = ctx.settings
    scheduler = registry.get(request.fmt or registry.default())
    if request.all_agents or request.workspaces:
        return _every_agent(request, ctx, scheduler.name)
    machine = installing.machine_for(s, ctx.workspace.state)
    zone = scheduler.zone(machine)
    placing = request.install or request.remove
    busy = [] if placing and scheduler.own_writers else installing.writers_here(machine)
    try:
        schedule, _ = writers.clear_of(build(s, archive=request.archive), busy, zone)
        files = scheduler.render(schedule, machine)
    except ScheduleError as exc:
        raise ConfigError(f"no {scheduler.name} schedule can run this: {exc}") from None
    for unread in sorted({each.unread(machine) or "" for each in registry.every()} - {""}):
        ctx.reporter.warn(unread)  # its host's settings: taken as its defaults
    if request.check:
        return _check(ctx, scheduler, schedule, files, machine, busy, zone, request.file)
    changes: list[str] = []
    if placing:
        placed = installing.place(
            scheduler,
            schedule,
            machine,
            ctx.workspace.state,
            s.now,
            ctx.workspace.recent_md,
            remove=request.remove,
        )
        schedule, files, changes = placed.schedule, placed.files, placed.changes
    data: CronData = {
        "format": scheduler.name, "label": schedule.label, "files": files,
        "text": scheduler.printed(files), "notes": list(schedule.notes), "changes": changes,
    }  # fmt: skip
    if placing:
        return CommandResult("cron", data, tuple(render.cron_install(data)))
    return CommandResult("cron", data, payload=data["text"])


def _check(
    ctx: RunContext,
    scheduler: Scheduler,
    schedule: Schedule,
    files: dict[str, str],
    machine: Machine,
    busy: list[Writer],
    zone: str | None,
    file: str | None,
) -> CommandResult:
    given = files
    source = f"the {scheduler.name} schedule `memfuse cron` prints"
    try:
        if file == "-" and scheduler.stdin_ok:
            given, source = {"-": sys.stdin.read(STDIN_LIMIT)}, "stdin"
        elif file is not None:
            given, source = scheduler.load(Path(file)), file
        jobs = scheduler.read(given)
    except ParseError as exc:
        raise ConfigError(f"cannot read the {scheduler.name} schedule: {exc}") from None
    beside = scheduler.writers_in(given) or busy  # a checked job list says it better
    own = checking.own_settings(ctx.settings, schedule, machine.env, machine.home)
    timeout = max(checking.CHECK_TIMEOUT_FLOOR, ctx.settings.timeout * 6)
    rendered = files if file is None else None
    done = checking.check(
        scheduler, jobs, rendered, own, beside, zone, machine, timeout, file or "FILE"
    )
    data: CronCheckData = {"format": scheduler.name, "source": source, "jobs": list(done.jobs)}
    code = ExitCode.FATAL if done.failed or not done.found else ExitCode.OK
    if code != ExitCode.OK:
        data["error"] = (
            f"{done.failed} scheduled job(s) would fail" if done.found else "no memfuse job found"
        )
    elif done.unchecked:
        code = ExitCode.UNCHECKED
        data["error"] = (
            f"{done.unchecked} scheduled job(s) not tried: each names a store setup of its own"
        )
    return CommandResult("cron", data, tuple(render.cron_check(data)), exit_code=code)


def _every_agent(request: Request, ctx: RunContext, fmt: str) -> CommandResult:
    if request.file is not None:
        raise ConfigError("--all-agents checks every agent's own schedule, not a FILE")
    given = _given(request.workspaces, fmt) if request.workspaces else None
    if request.check:
        return cron_all.check(ctx, fmt, given)
    return cron_all.run(ctx, fmt, install=request.install, remove=request.remove, given=given)


def _given(workspaces: tuple[Path, ...], fmt: str) -> list[tuple[str, str]]:
    """(id, workspace) of each workspace several -w name, for a scheduler with no roster of its
    own: the id is the folder's name and a digest of its real path, so it stays the same from
    run to run and two folders of one name (or of one name but for case) never share a store."""
    if registry.get(fmt).lists_agents:
        raise ConfigError(
            f"{fmt} runs the agents its own configuration lists: --all-agents reads them;"
            " several -w are for "
            + ", ".join(s.name for s in registry.every() if not s.lists_agents)
        )
    listed: list[tuple[str, str]] = []
    for workspace in workspaces:
        real = os.path.realpath(os.path.expanduser(str(workspace)))
        if not Path(real).is_dir():
            raise ConfigError(f"workspace {one_line(str(workspace))} is not a folder")
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(real).name).strip("-_")[:40] or "workspace"
        digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:8]
        if any(real == seen for _, seen in listed):
            raise ConfigError(f"workspace {one_line(real)} is given twice")
        listed.append((f"{name}-{digest}".lower(), real))
    return listed
