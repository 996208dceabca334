"""The `memfuse` command: typer wiring, the common options, and rendering.

Each subcommand parses its own options and hands a function of a RunContext to `_run`, which
resolves settings, opens the log, takes the workspace lock, renders the result (human text or
the `--json` envelope on stdout) and exits with the documented code.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memfuse import __version__, confine
from memfuse.config import FLAG_OPTIONS, load_settings, secrets_in
from memfuse.context import Advance, RunContext, Seams, no_progress
from memfuse.errors import ExitCode, MemfuseError, WorkspaceError
from memfuse.history import LIFECYCLE, Alarm, History, RunRecord, assess
from memfuse.lock import WorkspaceLock
from memfuse.output import CommandResult, Reporter, SecretMasker, failure, setup_log, to_json

app = typer.Typer(
    name="memfuse",
    help="Keep an agent's Markdown memory and its agent-memory store in one lifecycle.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


if TYPE_CHECKING:
    from rich.console import Console


@functools.cache
def _stderr() -> Console:
    from rich.console import Console  # loaded on first use: most cron runs print nothing

    return Console(stderr=True, highlight=False, soft_wrap=True)


def _say(message: str) -> None:
    """One line for people, on stderr."""
    _stderr().print(message, markup=False)


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

    def flags(self) -> dict[str, Any]:
        return {**self.settings, "now": self.now}


def _option(
    name: str, annotation: Any, default: Any, *decls: str, **kwargs: Any
) -> inspect.Parameter:
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(default, *decls, **kwargs),
        annotation=annotation,
    )


# Settings with a flag come from the one option table; the rest shape this run only.
_SETTING_PARAMS = [
    _option(o.target, o.flag_type | None, None, *o.flag, help=o.flag_help) for o in FLAG_OPTIONS
]
_RUN_PARAMS = [
    _option("json_output", bool, False, "--json", help="Print the result as a JSON envelope."),
    _option("quiet", bool, False, "--quiet", "-q", help="Print nothing on success."),
    _option("verbose", bool, False, "--verbose", "-v", help="Log debug detail."),
    _option("strict", bool, False, "--strict", help="Exit 3 when any store call failed."),
    _option("wait", float | None, None, "--wait", min=0,
            help="Wait up to SECONDS for another run's workspace lock instead of exiting 75."),
    _option("now", str | None, None, "--now", hidden=True,
            help="Replace the clock (ISO date-time), for replays and tests."),
]  # fmt: skip
_COMMON_PARAMS = _SETTING_PARAMS + _RUN_PARAMS
_SETTING_NAMES = [p.name for p in _SETTING_PARAMS]
_RUN_NAMES = [p.name for p in _RUN_PARAMS]


def with_common_options(func: Callable[..., None]) -> Callable[..., None]:
    """Add the common options to a command; the command receives them as `common: Common`."""
    signature = inspect.signature(func, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "common"]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> None:
        settings = {name: kwargs.pop(name) for name in _SETTING_NAMES}
        run = {name: kwargs.pop(name) for name in _RUN_NAMES}
        run["json"] = run.pop("json_output")
        func(**kwargs, common=Common(settings, **run))

    wrapper.__signature__ = signature.replace(parameters=own + _COMMON_PARAMS)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in own + _COMMON_PARAMS}
    del wrapper.__wrapped__  # typer must see the new signature, not the original's
    return wrapper


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memfuse {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Keep an agent's Markdown memory and its agent-memory store in one lifecycle."""


# The outside world a run reaches (the store, the reranker). Tests replace it with fakes.
seams = Seams()


def _run(
    name: str,
    common: Common,
    body: Callable[[RunContext], CommandResult],
    *,
    lock: bool = True,
    dry_run: bool = False,
) -> None:
    """Prepare a run, execute the command, and conclude: every command goes through here."""
    started = time.monotonic()
    # Under -q (cron) warnings go to the log and the run history only: a person is told when
    # the run escalates or fails, not about each best-effort hiccup.
    reporter = Reporter(mask=SecretMasker())
    reporter.echo = (lambda _m: None) if common.quiet else (lambda m: _say(reporter.mask(m)))
    ctx: RunContext | None = None
    refused = False
    try:
        ctx, refused = _prepare(name, common, reporter, lock=lock, dry_run=dry_run)
        if lock and not dry_run:
            with WorkspaceLock(ctx.settings.state_dir, name, common.wait):
                result = body(ctx)
        else:
            result = body(ctx)
    except MemfuseError as exc:
        result = failure(name, reporter.mask(str(exc)), exc.exit_code)
    except KeyboardInterrupt:
        result = failure(name, "interrupted", ExitCode.FATAL)
    except Exception as exc:
        if common.verbose:
            raise
        mask = reporter.mask
        reporter.logger.error("unexpected error\n%s", mask(traceback.format_exc()))
        message = (
            f"internal error: {type(exc).__name__}: {mask(str(exc))}"
            " (the trace is in .memfuse/memfuse.log; -v shows it here)"
        )
        result = failure(name, message, ExitCode.FATAL)
    finally:
        if ctx is not None:
            ctx.close()

    _conclude(name, common, ctx, result, reporter, started=started, refused=refused)


def _prepare(
    name: str, common: Common, reporter: Reporter, *, lock: bool, dry_run: bool
) -> tuple[RunContext, bool]:
    """Settings, the secret mask, the log and the run's context; and whether the workspace
    config had trusted keys refused. Raises MemfuseError for a run that cannot start."""
    settings = load_settings(common.flags())
    mask = SecretMasker(secrets_in(settings))
    reporter.mask = mask
    if lock:
        _require_workspace(settings.workspace)
    if settings.workspace.is_dir():
        # A .memfuse/ that is a link or someone else's is refused before anything is written.
        confine.state_dir(settings.workspace)
        reporter.logger = setup_log(settings.state_dir, mask, common.verbose)
    else:
        reporter.logger = logging.getLogger("memfuse.nolog")
    reporter.info(f"start {name} {' '.join(mask(a) for a in sys.argv[1:])}")
    for notice in settings.config_notices:
        reporter.warn(notice)
    interactive = sys.stderr.isatty() and not common.quiet and not common.json
    ctx = RunContext(
        settings,
        reporter,
        dry_run=dry_run,
        progress=_progress_bar if interactive else no_progress,
        gateway_factory=seams.gateway_factory,
        rerank_factory=seams.rerank_factory,
        verbose=common.verbose,
    )
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
    if common.strict and result.exit_code == ExitCode.OK and (result.guard_failures or refused):
        result = replace(result, exit_code=ExitCode.STRICT)
    duration_ms = int((time.monotonic() - started) * 1000)
    alarm = None
    if ctx is not None and name in LIFECYCLE and not dry_run:
        alarm = _record(ctx, name, result, duration_ms)
        if alarm is not None and result.exit_code in (ExitCode.OK, ExitCode.STRICT):
            data = {**result.data, "alarm": {"reason": alarm.reason, "since": alarm.since}}
            result = replace(result, data=data, exit_code=ExitCode.ESCALATED)
    # The reporter saw every warning of the run, whichever layer raised it.
    result = replace(result, warnings=tuple(reporter.warnings))
    envelope = result.envelope(duration_ms)
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


def _record(ctx: RunContext, name: str, result: CommandResult, duration_ms: int) -> Alarm | None:
    """Add this run to the history; return why it needs a person, if it does."""
    settings = ctx.settings
    if result.exit_code == ExitCode.LOCKED or not settings.state_dir.is_dir():
        return None
    counts = result.data.get("counts")
    record = RunRecord(
        command=name,
        started=settings.now.isoformat(timespec="seconds"),
        duration_ms=duration_ms,
        status=result.status,
        exit_code=int(result.exit_code),
        store=ctx.store_outcome,
        calls=ctx.calls_made,
        counts={k: v for k, v in counts.items() if isinstance(v, int)}
        if isinstance(counts, dict)
        else {},
        warnings=tuple(ctx.reporter.warnings[:5]),
        warning_count=len(ctx.reporter.warnings),
    )
    history = History(settings.state_dir)
    runs, problem = history.load()
    if problem:
        ctx.reporter.warn(problem)
    alarm = assess([*runs.get(name, []), record], settings.alert_policy, settings.now)
    if alarm is not None:
        record = replace(record, exit_code=int(ExitCode.ESCALATED))
    try:
        history.append(record, runs)
    except (OSError, MemfuseError) as exc:
        ctx.reporter.warn(f"cannot record this run in {history.path}: {exc}")
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
    if common.json:
        typer.echo(mask(to_json(envelope)))
    elif result.payload is not None:
        typer.echo(mask(result.payload))
    elif not common.quiet or result.exit_code not in _QUIET_EXITS:
        for line in result.human:
            typer.echo(mask(line))


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


def _require_workspace(workspace: Path) -> None:
    if not workspace.is_dir():
        raise WorkspaceError(
            f"workspace {workspace} does not exist (set --workspace or MEMFUSE_WORKSPACE)"
        )


# --- subcommands ---------------------------------------------------------------------------


@app.command()
@with_common_options
def doctor(
    print_config: Annotated[
        bool,
        typer.Option("--print-config", help="Print a ready mcporter config for agent-memory."),
    ] = False,
    *,
    common: Common,
) -> None:
    """Check the workspace, mcporter, the server and the reranker; show the configuration.

    Example: memfuse doctor --workspace ~/.openclaw/workspace
    """
    from memfuse.commands import doctor as command

    _run("doctor", common, command.print_config if print_config else command.run, lock=False)


@app.command()
@with_common_options
def status(common: Common) -> None:
    """Show the lifecycle at a glance: last runs, RECENT.md, the ledger, the lock.

    Reads only .memfuse/ (no store call). Exits 4 when something needs a person, so
    `memfuse status -q` can be a monitoring probe. Example: memfuse status --json
    """
    from memfuse.commands import status as command

    _run("status", common, command.run, lock=False)


@app.command()
@with_common_options
def sync(
    day: Annotated[
        str | None, typer.Option("--date", metavar="YYYY-MM-DD", help="Sync this day's journal.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="YYYY-MM-DD", help="Sync journals from this day to today."),
    ] = None,
    days: Annotated[
        int | None, typer.Option("--days", min=1, help="Sync the last N days (today included).")
    ] = None,
    all_journals: Annotated[
        bool, typer.Option("--all", help="Backfill every journal in memory/.")
    ] = False,
    prune: Annotated[
        bool,
        typer.Option("--prune", help="Forget store memories whose bullet is gone (ours only)."),
    ] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each bullet's type and deciding keyword.")
    ] = False,
    verify: Annotated[
        bool,
        typer.Option("--verify", help="Check the store against the ledger; re-send what it lost."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be sent; call nothing.")
    ] = False,
    *,
    common: Common,
) -> None:
    """Push journal bullets into agent-memory: one memory per bullet, only what changed.

    Default scope is today's journal. Example: memfuse sync --days 3 --json
    """
    from memfuse.commands import sync as command

    chosen = [x for x in (day, since, days, all_journals or None) if x is not None]
    if len(chosen) > 1:
        raise typer.BadParameter("give only one of --date, --since, --days, --all")
    scope = command.Scope(
        day=_parse_day(day, "--date"),
        since=_parse_day(since, "--since"),
        days=days,
        all=all_journals,
    )
    _run(
        "sync",
        common,
        lambda ctx: command.run(ctx, scope, prune=prune, explain=explain, verify=verify),
        dry_run=dry_run,
    )


@app.command()
@with_common_options
def surface(
    to_stdout: Annotated[
        bool, typer.Option("--stdout", help="Print the file instead of writing RECENT.md.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Build RECENT.md but write nothing.")
    ] = False,
    *,
    common: Common,
) -> None:
    """Write RECENT.md from agent-memory's recent, high-vitality memories (journals if down).

    Example: memfuse surface -q
    """
    from memfuse.commands import surface as command

    _run(
        "surface",
        common,
        lambda ctx: command.run(ctx, to_stdout=to_stdout),
        lock=not to_stdout,
        dry_run=dry_run,
    )


@app.command()
@with_common_options
def tidy(
    archive: Annotated[
        bool,
        typer.Option("--archive", help="Roll journals older than 7 days into weekly files."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Change no file; call only read-only tools.")
    ] = False,
    *,
    common: Common,
) -> None:
    """Run the store's decay/tidy/govern cycle and check it against MEMORY.md.

    Also backs MEMORY.md up once a day. Example: memfuse tidy --archive -q
    """
    from memfuse.commands import tidy as command

    _run("tidy", common, lambda ctx: command.run(ctx, do_archive=archive), dry_run=dry_run)


@app.command("rerank-test")
@with_common_options
def rerank_check(
    query: Annotated[str, typer.Argument(help="The query to rank documents for.")] = "",
    documents: Annotated[
        list[str] | None, typer.Argument(help="Documents to rank (none: a built-in probe).")
    ] = None,
    docs_file: Annotated[
        Path | None, typer.Option("--docs-file", help="Read documents from a file, one per line.")
    ] = None,
    from_recall: Annotated[
        bool,
        typer.Option("--from-recall", help="Rank the store's recall of QUERY; compare orders."),
    ] = False,
    top_n: Annotated[
        int | None, typer.Option("--top-n", min=1, help="Ask the provider for the best N only.")
    ] = None,
    *,
    common: Common,
) -> None:
    """Call the configured reranker, show its ranking and latency, and check its health.

    Exits non-zero when the call fails or the scores look broken (e.g. all equal).
    Example: memfuse rerank-test "dark mode" "User prefers dark mode" "Lunch at noon"
    """
    from memfuse.commands import rerank_check as command

    docs = list(documents or [])
    if docs_file is not None:
        try:
            text = docs_file.read_text(encoding="utf-8")
        except OSError as exc:
            raise typer.BadParameter(str(exc.strerror), param_hint="--docs-file") from None
        docs += [line.strip() for line in text.splitlines() if line.strip()]
    if (docs or from_recall) and not query:
        raise typer.BadParameter("give a QUERY to rank documents for")
    request = command.Request(query, tuple(docs), top_n, from_recall)
    _run("rerank-test", common, lambda ctx: command.run(ctx, request), lock=False)


@app.command()
@with_common_options
def cron(
    archive: Annotated[
        bool, typer.Option("--archive", help="Let tidy roll old journals into weekly files.")
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Run each memfuse line as cron would, --dry-run.")
    ] = False,
    crontab: Annotated[
        str | None,
        typer.Argument(
            help="With --check: the crontab file to check (- for stdin).", show_default=False
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Print a crontab for this machine, or check one the way cron would run it.

    Example: memfuse cron > memfuse.cron && memfuse cron --check memfuse.cron
    """
    from memfuse.commands import cron as command

    if crontab is not None and not check:
        raise typer.BadParameter("a CRONTAB file is read only with --check")
    _run(
        "cron",
        common,
        lambda ctx: command.run(ctx, archive=archive, check_file=crontab, do_check=check),
        lock=False,
    )


@app.command()
@with_common_options
def recall(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Results to show.")] = 10,
    types: Annotated[
        list[str] | None,
        typer.Option("--type", help="Only this type (emotion, knowledge, event, identity)."),
    ] = None,
    days: Annotated[
        int | None, typer.Option("--days", min=1, help="Only what is from the last N days.")
    ] = None,
    *,
    common: Common,
) -> None:
    """One ranked search over the store and the journals/MEMORY.md, with provenance.

    Example: memfuse recall "billing migration" --limit 5 --json
    """
    from memfuse.commands import recall as command

    request = command.Request(query, limit, tuple(types or ()), days)
    _run("recall", common, lambda ctx: command.run(ctx, request), lock=False)


@app.command()
@with_common_options
def classify(
    text: Annotated[str, typer.Argument(help="The bullet text to classify.")],
    *,
    common: Common,
) -> None:
    """Show the type a bullet would get, and the keyword that decided it.

    Example: memfuse classify "记住：周五发版"
    """
    from memfuse.commands import classify as command

    _run("classify", common, lambda ctx: command.run(ctx, text), lock=False)


def _parse_day(text: str | None, option: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not a date (YYYY-MM-DD)", param_hint=option
        ) from None


def main() -> None:
    """Console-script entry point."""
    if os.environ.get("NO_COLOR"):
        os.environ.setdefault("TERM", "dumb")
    app()
