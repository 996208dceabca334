"""`memfuse cron --check`: try each memfuse job of a schedule the way its scheduler would run it.

Each memfuse job is tried as docs/operations.md says: this memfuse, never the job's program,
with the operator's own settings and `--dry-run --json`; what the job sets that would change
what runs is a finding (schedule/trial.py), never used.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from memfuse.schedule import trial, writers
from memfuse.schedule.base import Machine, MemoryRewriter, Scheduler, tail
from memfuse.schedule.plan import memfuse_command
from memfuse.schedule.runs import Job, Schedule
from memfuse.settings import Settings
from memfuse.store.connect import choose_transport, find_server
from memfuse.store.server_entry import mcporter_config_path

CHECK_TIMEOUT_FLOOR = 120.0
_STDERR_AWAY = re.compile(r"(^|\s)(2>|&>|>&)")


class JobCheck(TypedDict):
    job: str
    command: str
    when: str
    ok: bool
    findings: list[str]
    problems: list[str]
    # The store settings the job names instead of the operator's: it was not tried (issue 47).
    unchecked: NotRequired[list[str]]


@dataclass(frozen=True)
class Checked:
    jobs: list[JobCheck]
    failed: int
    found: int  # memfuse jobs (and checker runs) tried
    unchecked: int = 0  # jobs not tried: they name a store setup of their own


def check(
    scheduler: Scheduler,
    jobs: list[Job],
    files: dict[str, str] | None,
    settings: Settings,
    schedule: Schedule,
    busy: list[MemoryRewriter],
    machine: Machine,
    source: str = "FILE",
) -> Checked:
    """Every memfuse job in `jobs` (read from `source`) tried with these settings; `files`
    also go through the scheduler's own checker; `busy` (rewriting MEMORY.md) listed after."""
    own = own_settings(settings, schedule, machine.env, machine.home)
    zone = scheduler.zone(machine)
    timeout = max(CHECK_TIMEOUT_FLOOR, settings.timeout * 6)
    again = ["memfuse", "cron", "--format", scheduler.name, "--check", source]
    checks = [
        c for job in jobs
        if (c := check_job(job, timeout, own, scheduler.shell, again)) is not None
    ]  # fmt: skip
    if files is not None:
        for what, problems in scheduler.verify(files, machine):
            checks.append({"job": what, "command": what, "when": "", "ok": not problems,
                           "findings": [], "problems": problems})  # fmt: skip
    flag_clashes(jobs, checks, busy, zone)
    failed = sum(1 for c in checks if not c["ok"])
    unchecked = sum(1 for c in checks if c["ok"] and c.get("unchecked"))
    found = len(checks)
    checks += [
        {"job": w.name, "command": "(not memfuse's: it rewrites MEMORY.md)",
         "when": writers.shown(w, zone), "ok": True, "findings": [], "problems": []}
        for w in busy
    ]  # fmt: skip
    return Checked(checks, failed, found, unchecked)


def own_settings(
    settings: Settings, schedule: Schedule, env: Mapping[str, str], home: Path
) -> trial.Own:
    """This memfuse and the operator's own settings, which every trial runs with."""
    argv = schedule.runs[0].argv
    store = {flag: argv[i + 1] for i, flag in enumerate(argv[:-1]) if flag in trial.STORE_FLAGS}
    found = mcporter_config_path(settings, env)  # the one this memfuse reads unnamed
    if found is not None:
        store.setdefault("--mcporter-config", str(found))
    server = find_server(settings)
    transport, _why = choose_transport(settings, server)
    command = "" if isinstance(server, Exception) else server.command
    return trial.Own(
        memfuse=tuple(memfuse_command()),
        store=store,
        workspace=settings.workspace,
        state_dir=settings.state_dir,
        env=dict(env),
        home=home.as_posix(),
        needs_node=transport == "mcporter" or command == "node",
    )


def flag_clashes(
    jobs: list[Job], checks: list[JobCheck], busy: list[MemoryRewriter], zone: str | None
) -> None:
    """A memfuse run that reads MEMORY.md in the minute another job rewrites it fails."""
    for job in jobs:
        if trial.subcommand(job.argv)[0] not in writers.MEMORY_READERS:
            continue
        for writer in busy:
            shared = sorted(set(writers.in_zone(writer, zone)) & set(job.times))
            check = next((c for c in checks if c["job"] == job.source), None)
            if not shared or check is None:
                continue
            at = writers.hhmm(tuple(shared))
            when = (
                f" (its {writers.shown(writer, zone)})" if writer.zone not in (None, zone) else ""
            )
            check["problems"].append(
                f"runs at {at}, the minute {writer.name!r} rewrites MEMORY.md{when}: `memfuse"
                " cron --install` moves it clear (or move it yourself)"
            )
            check["ok"] = False


def check_job(
    job: Job,
    timeout: float,
    own: trial.Own,
    shell: bool,
    again: list[str],
) -> JobCheck | None:
    """Check one memfuse job (the module's docstring says how); None for one not memfuse's."""
    job = trial.unwrap_env(job)
    if trial.subcommand(job.argv)[0] is None:
        return None
    problems: list[str] = []
    if _STDERR_AWAY.search(job.command):
        problems.append(
            "stderr is redirected away from the scheduler's mail: a run that needs a person"
            " could never tell anyone (leave stderr alone; memfuse keeps its own log)"
        )
    program = trial.program_of(job)
    ours = list(own.memfuse)
    same = program is not None and _same_program([program, *job.argv[1:]], ours)
    if program is not None and not same:
        # A job file may be the agent's: only this very memfuse is ever run to check one.
        problems.append(
            f"runs {shlex.join([program, *job.argv[1 : len(ours)]])}, not this memfuse"
            f" ({shlex.join(ours)}): not run; `memfuse cron` prints the line to use"
        )
    tried = trial.plan(job, own, same_program=same)
    if shell:
        tried.findings += trial.shell_findings(job.command)
    if tried.argv is not None:
        problems += _dry_run(tried.argv, tried.env, timeout, Path(own.home))
    done: JobCheck = {"job": job.source, "command": shlex.join(job.argv), "when": job.when,
                      "ok": not problems and not tried.findings, "findings": tried.findings,
                      "problems": problems}  # fmt: skip
    if tried.elsewhere:
        # Tried with the operator's store instead, such a job "would fail" though it runs as
        # written: a false alarm teaches people to ignore the check. Said, not tried.
        words = shlex.join([*tried.again_env, *again, *tried.again_flags])
        done["unchecked"] = [
            *tried.elsewhere,
            "not tried: the check runs jobs only with your own store settings, and this job"
            f" names its own; if that setting is yours (a job list may be the agent's), try it"
            f" as written: `{words}`",
        ]
    return done


def _same_program(argv: list[str], ours: list[str]) -> bool:
    """Whether `argv` starts with this memfuse's own command (the same files, links resolved)."""
    if len(argv) < len(ours) or argv[1 : len(ours)] != ours[1:]:
        return False
    return os.path.realpath(argv[0]) == os.path.realpath(ours[0])


def _dry_run(argv: list[str], env: dict[str, str], timeout: float, home: Path) -> list[str]:
    try:
        done = subprocess.run(
            argv, env=env, cwd=home if home.is_dir() else "/",
            stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return [f"did not finish within {timeout:g}s"]
    except OSError as exc:
        return [f"cannot be run: {exc.strerror or exc}"]
    try:
        envelope = json.loads(done.stdout)
    except ValueError:
        return [f"exit {done.returncode}: {tail(done.stderr.decode('utf-8', 'replace'))}"]
    if envelope.get("status") == "ok" and done.returncode == 0:
        return []
    data = envelope.get("data", {})
    warnings = [str(w) for w in envelope.get("warnings", [])]
    reason = str(data.get("error") or (warnings[0] if warnings else envelope.get("status")))
    return [f"would {'fail' if done.returncode else 'degrade'}: {reason}"]
