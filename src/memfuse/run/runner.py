"""One run of a command, the same for every subcommand: prepare, execute, conclude.

`run` resolves the settings (flags > env > config files), masks the secrets, opens the log,
refuses an unsafe state folder, takes the workspace lock, calls the command's function of a
`RunContext`, settles the exit code (strict, escalation), records the run in the history,
prints the result — the `--json` envelope, the rendered lines or the payload on stdout, one
line for people on stderr — and exits with the documented code.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from memfuse.config import load_settings, secrets_in
from memfuse.errors import ExitCode, MemfuseError, NoWorkspace
from memfuse.report import Reporter, SecretMasker
from memfuse.run import colour
from memfuse.run.context import Advance, RunContext, Seams, no_progress
from memfuse.run.history import (
    ERROR_KEPT,
    LIFECYCLE,
    MISCONFIGURED,
    SETUP_PREFIX,
    Alarm,
    History,
    RunRecord,
    assess,
    by_schedule,
)
from memfuse.run.lock import WorkspaceLock
from memfuse.run.output import CommandResult, failure, libraries, setup_log, to_json
from memfuse.schedule import registry
from memfuse.schedule.install import recorded
from memfuse.store.diagnose import close_file
from memfuse.untrusted import json_printable, printable

if TYPE_CHECKING:
    from rich.console import Console


@functools.cache
def _stderr() -> Console:
    from rich.console import Console  # loaded on first use: most cron runs print nothing

    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False, markup=False)


def _say(message: str) -> None:
    """One line for people, on stderr (escape sequences and bidi overrides made visible; in
    colour only where `colour.wanted` says a person reads: rich's own test would also colour
    a pipe under FORCE_COLOR, and embolden a terminal under NO_COLOR)."""
    line = printable(message)
    try:
        if colour.wanted(sys.stderr):
            colour.console(sys.stderr).print(colour.painted(line))
        else:
            _stderr().print(line)
    except BrokenPipeError:
        _reader_gone(2)


def _out(text: str) -> None:
    """The result, on stdout."""
    try:
        typer.echo(text)
    except BrokenPipeError:
        _reader_gone(1)


def print_line(text: str) -> bool:
    """One line of a result that streams (recall --batch), on stdout now; False when the
    reader is gone, so that the run stops asking (`… --batch | head -1` must end)."""
    try:
        typer.echo(json_printable(text))
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone(1)
        return False
    return True


def _reader_gone(fd: int) -> None:
    """The reader closed the pipe (`memfuse doctor | head -3`): like the Unix tools memfuse sits
    among, stop writing there without a word. The descriptor is pointed at /dev/null, so the
    rest of the run and the flush at exit write nowhere instead of failing; the run's own exit
    code stands."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


@dataclass(frozen=True)
class Common:
    """The options every subcommand accepts: settings given as flags (by Settings field; they
    beat env and config file, see memfuse.config.OPTIONS) and how this one run behaves."""

    settings: dict[str, Any] = field(default_factory=dict)
    json: bool = False
    quiet: bool = False
    verbose: bool = False
    strict: bool = False
    wait: float | None = None
    now: str | None = None
    # The outside world the run reaches (the store, the reranker): what the caller handed the
    # command line as its object (tests: `CliRunner().invoke(app, argv, obj=Seams(...))`), else
    # the real one.
    seams: Seams = field(default_factory=Seams)
    # Every -w given, in order, where the command takes several (`cron`); the first is also
    # `settings["workspace"]`.
    workspaces: tuple[Path, ...] = ()


def run(
    name: str,
    common: Common,
    body: Callable[[RunContext], CommandResult],
    *,
    lock: bool,  # the workspace lock: the commands that write (sync, surface, tidy, rollback)
    dry_run: bool = False,
    workspace: bool = True,
) -> None:
    """Prepare a run, execute the command, and conclude: every command goes through here.
    `workspace`: the command needs the workspace to exist (all but classify, rerank-test and
    doctor, which reports it among its checks)."""
    started = time.monotonic()
    # Under -q (cron) warnings go to the log and the run history only: a person is told when
    # the run escalates or fails, not about each best-effort hiccup.
    reporter = Reporter(echo=(lambda _m: None) if common.quiet else _say)
    libraries()  # until the log is open, what libraries log goes nowhere
    ctx: RunContext | None = None
    refused = False
    try:
        ctx, refused = _prepare(name, common, reporter, dry_run=dry_run, workspace=workspace)
        if lock and not dry_run:
            ctx.claims = True  # a run that writes claims a database nobody has
            with WorkspaceLock(ctx.workspace.state, name, common.wait):
                try:
                    result = body(ctx)
                finally:
                    ctx.close_ledger()  # its last write done under the lock
        else:
            result = body(ctx)
        if ctx.afterwards:  # the lock let go: nobody waits for these, nor for the store
            ctx.close()
            for step in ctx.afterwards:
                result = replace(result, data={**result.data, **step()})
    except MemfuseError as exc:
        result = failure(name, reporter.mask(str(exc)), exc.exit_code)
    except KeyboardInterrupt:
        result = failure(name, "interrupted", ExitCode.INTERRUPTED)
    except Exception as exc:
        if common.verbose:
            raise
        mask = reporter.mask
        reporter.logger.error("unexpected error\n%s", mask(traceback.format_exc()))
        message = (
            f"internal error: {type(exc).__name__}: {mask(str(exc))}"
            f" (the trace is in {ctx.workspace.state.log if ctx else 'the log'}; -v shows it here)"
        )
        result = failure(name, message, ExitCode.FATAL)
    finally:
        if ctx is not None:
            ctx.close()

    _conclude(name, common, ctx, result, reporter, started=started, refused=refused)


def _prepare(
    name: str, common: Common, reporter: Reporter, *, dry_run: bool, workspace: bool
) -> tuple[RunContext, bool]:
    """Settings, the secret mask, the log and the run's context — the one place a run's
    services (store, reranker, ledger, workspace, classifier, clock) are built from; and
    whether the workspace config had trusted keys refused. Raises MemfuseError for a run that
    cannot start."""
    settings = load_settings({**common.settings, "now": common.now})
    mask = SecretMasker(secrets_in(settings))
    if workspace and not settings.workspace.is_dir():
        near = close_file(settings.workspace, folder=True)
        meant = f"; did you mean {near}?" if near else ""
        raise NoWorkspace(
            f"workspace {settings.workspace} does not exist{meant} (set --workspace or"
            " MEMFUSE_WORKSPACE)"
        )
    interactive = sys.stderr.isatty() and not common.quiet and not common.json
    ctx = RunContext(
        settings,
        reporter,
        dry_run=dry_run,
        seams=common.seams,
        progress=_progress_bar if interactive else no_progress,
        verbose=common.verbose,
    )
    state = ctx.workspace.state
    logger = logging.getLogger("memfuse.nolog")
    if settings.workspace.is_dir():
        # A state folder that is a link or someone else's is refused before anything is written.
        state.ensure()
        logger = setup_log(state, mask, common.verbose)
    reporter.begin(mask, logger)
    reporter.info(f"start {name} {' '.join(mask(a) for a in sys.argv[1:])}")
    for notice in [*settings.config_notices, *registry.refused()]:  # a plugin set aside too
        reporter.warn(notice)
    return ctx, bool(settings.config_refused)


def _conclude(
    name: str,
    common: Common,
    ctx: RunContext | None,
    result: CommandResult,
    reporter: Reporter,
    *,
    started: float,
    refused: bool,
) -> None:
    """Settle the exit code (strict, escalation), record the run, print it, and exit."""
    mask = reporter.mask
    dry_run = ctx is not None and ctx.dry_run
    result = replace(result, guard_failures=reporter.guard_failures)
    if ctx is not None and result.exit_code in (ExitCode.OK, ExitCode.STRICT):
        result = _named_setup_fault(ctx, result)
    if common.strict and result.exit_code == ExitCode.OK and (result.guard_failures or refused):
        result = replace(result, exit_code=ExitCode.STRICT)
    duration_ms = int((time.monotonic() - started) * 1000)
    if ctx is not None:
        for notice in ctx.workspace.state.notices:  # state files moved aside this run
            reporter.warn(notice)
    alarm = None
    if ctx is not None and name in LIFECYCLE and not dry_run:
        alarm = _record(ctx, name, result, duration_ms)
        if alarm is not None and result.exit_code in (ExitCode.OK, ExitCode.STRICT):
            data = {**result.data, "alarm": {"reason": alarm.reason, "since": alarm.since}}
            result = replace(result, data=data, exit_code=ExitCode.ESCALATED)
    # The reporter saw every warning of the run, whichever layer raised it.
    result = replace(result, warnings=tuple(reporter.warnings))
    envelope = result.envelope(duration_ms, ctx.store_ms if ctx is not None else 0)
    reporter.info(
        f"end {name} status={envelope['status']} exit={envelope['exit_code']} "
        f"warnings={len(result.warnings)} in {duration_ms} ms"
    )
    if alarm is not None:
        _say(f"memfuse {name}: {mask(alarm.line())} (memfuse status shows more)")
    elif common.quiet and result.exit_code == ExitCode.ESCALATED:  # status -q, a probe
        for line in result.data.get("alarms", ()):
            _say(f"memfuse {name}: {mask(str(line))}")
    _emit(name, common, result, envelope, mask)
    raise typer.Exit(int(result.exit_code))


def _named_setup_fault(ctx: RunContext, result: CommandResult) -> CommandResult:
    """A run whose every store call failed because of the store's setup — a mistyped
    `--mcporter-config`, no mcporter, a server script that is not there — fails with that
    cause, named as doctor names it (exit 78), instead of a transport's `Connection closed`;
    it is recorded as such, and does not count toward the store-down alarm."""
    try:
        faults = ctx.setup_faults()
    except (OSError, MemfuseError) as exc:  # the diagnosis must not hide the run's own result
        ctx.reporter.info(f"the store's setup could not be checked: {exc}")
        return result
    if not faults:
        return result
    error = SETUP_PREFIX + "; ".join(f.line() for f in faults)
    data = {**result.data, "error": error}
    return replace(result, data=data, exit_code=ExitCode.SETUP)


def _record(ctx: RunContext, name: str, result: CommandResult, duration_ms: int) -> Alarm | None:
    """Add this run to the history (a run the workspace lock refused too); return why the
    command needs a person, if it does."""
    settings = ctx.settings
    state = ctx.workspace.state
    if not state.exists():
        return None
    locked = result.exit_code == ExitCode.LOCKED
    counts = result.data.get("counts")
    record = RunRecord(
        command=name,
        started=settings.now.isoformat(timespec="seconds"),
        duration_ms=duration_ms,
        status="locked" if locked else result.status,
        exit_code=int(result.exit_code),
        store=MISCONFIGURED if result.exit_code == ExitCode.SETUP else ctx.store_outcome,
        calls=ctx.calls_made,
        counts={k: v for k, v in counts.items() if isinstance(v, int)}
        if isinstance(counts, dict)
        else {},
        warnings=tuple(ctx.reporter.warnings[:5]),
        warning_count=len(ctx.reporter.warnings),
        read=_numbers(result.data.get("accounting")),
        error=ctx.reporter.mask(str(result.data.get("error", "")))[:ERROR_KEPT]
        if result.exit_code not in (ExitCode.OK, ExitCode.STRICT)
        else "",
        setup=settings.store_setup,
    )
    schedule = recorded(state)
    history = History(state)
    try:
        with history.locked():
            runs, problem = history.load()
            ours, _theirs = by_schedule(
                [*runs.get(name, []), record], schedule.setup if schedule else None
            )
            alarm = assess(ours, settings.alert_policy, settings.now) if record in ours else None
            if problem:
                # The history is what the alarms are computed from: losing it is an alarm itself.
                why = f"{problem}; it was moved aside and starts afresh, so look at what touched it"
                alarm = Alarm(name, why, record.started)
            if alarm is not None and not locked:
                record = replace(record, exit_code=int(ExitCode.ESCALATED))
            history.append(record, runs)
    except (OSError, MemfuseError) as exc:
        ctx.reporter.warn(f"cannot record this run in {history.path}: {exc}")
        return None
    return alarm


# Under -q these print nothing on stdout: escalation has its own line on stderr.
_QUIET_EXITS = (ExitCode.OK, ExitCode.ESCALATED)


def _emit(
    name: str,
    common: Common,
    result: CommandResult,
    envelope: dict[str, Any],
    mask: SecretMasker,
) -> None:
    """Print a finished run: the envelope or the human lines on stdout, a failure on stderr."""
    if result.exit_code not in (ExitCode.OK, ExitCode.STRICT, ExitCode.ESCALATED):
        # One line for people on stderr, whatever stdout's format.
        _say(f"memfuse {name}: {mask(str(result.data.get('error', 'failed')))}")
    # The envelope keeps every text exact (JSON escapes); text for people shows an escape
    # sequence or a bidi override as an escape, never as what it would do to a terminal.
    if common.json:
        _out(json_printable(mask(to_json(envelope))))
    elif result.payload is not None:
        _out(printable(mask(result.payload)))
    elif result.human and (not common.quiet or result.exit_code not in _QUIET_EXITS):
        _out_lines(name, [printable(mask(line)) for line in result.human])


PAINTED = ("doctor", "status")  # the commands whose lines a person scans for a verdict


def _out_lines(name: str, lines: list[str]) -> None:
    """The lines for people, on stdout: doctor's and status's in colour at a terminal."""
    if name not in PAINTED or not colour.wanted(sys.stdout):
        _out("\n".join(lines))
        return
    try:
        painter = colour.console(sys.stdout)
        for line in lines:
            painter.print(colour.painted(line))
    except BrokenPipeError:
        _reader_gone(1)


@contextlib.contextmanager
def _progress_bar(label: str, total: int) -> Iterator[Advance]:
    """A progress bar on stderr, for runs long enough to need one (a backfill)."""
    if total < 20:
        yield lambda: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (f"{label}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=_stderr(), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


def _numbers(value: object) -> dict[str, int]:
    """The whole numbers of a mapping (a sync's accounting, for the run history)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}
