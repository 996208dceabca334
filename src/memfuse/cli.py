"""The `memfuse` command: typer wiring and the common options.

Each subcommand parses its own options and hands a function of a RunContext to `runner.run`,
which does everything a run shares (settings, log, lock, printing, the exit code).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from memfuse import __version__
from memfuse.config import FLAG_OPTIONS
from memfuse.errors import ExitCode
from memfuse.run import runner
from memfuse.run.context import Seams
from memfuse.run.runner import Common
from memfuse.schedule import registry as schedulers

app = typer.Typer(
    name="memfuse",
    help="Keep an agent's Markdown memory and its agent-memory store in one lifecycle.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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

# Every command takes these; the rest only where they change what the command does.
_ALWAYS = ("workspace", "state_dir", "json_output", "quiet", "verbose", "now")
_STORE = ("mcporter", "mcporter_config", "server", "transport", "timeout")
_LIFECYCLE = (*_STORE, "jobs", "strict", "wait")
OPTIONS_OF: dict[str, tuple[str, ...]] = {
    "doctor": _STORE,
    "status": (),  # reads the state folder only
    "sync": _LIFECYCLE,
    "surface": _LIFECYCLE,
    "tidy": _LIFECYCLE,
    "rollback": (*_STORE, "jobs", "wait"),
    "recall": (*_STORE, "strict"),
    "where": _STORE,
    "serve": _STORE,
    "cron": _STORE,  # written into each scheduled job
    "rerank_test": _STORE,  # --from-recall asks the store
    "classify": (),
}
_RUN_DEFAULTS = {"strict": False, "wait": None}


# The command line's context: its object is the outside world a caller hands the run (tests).
_CONTEXT = inspect.Parameter(
    "cli_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context
)


def _seams(context: typer.Context) -> Seams:
    """The outside world the run reaches: the Seams a caller handed the command line as its
    object (`CliRunner().invoke(app, argv, obj=Seams(...))`), else the real one."""
    given = context.find_root().obj
    return given if isinstance(given, Seams) else Seams()


def with_common_options(func: Callable[..., None]) -> Callable[..., None]:
    """Add the common options this command takes (OPTIONS_OF) to it; the command receives them
    as `common: Common`, an option it does not take as unset."""
    signature = inspect.signature(func, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "common"]
    taken = {*_ALWAYS, *OPTIONS_OF[func.__name__]}
    params = [p for p in _COMMON_PARAMS if p.name in taken]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> None:
        settings = {name: kwargs.pop(name, None) for name in _SETTING_NAMES}
        run = {name: kwargs.pop(name, _RUN_DEFAULTS.get(name)) for name in _RUN_NAMES}
        run["json"] = run.pop("json_output")
        seams = _seams(kwargs.pop(_CONTEXT.name))
        func(**kwargs, common=Common(settings, **run, seams=seams))

    wrapper.__signature__ = signature.replace(parameters=[*own, *params, _CONTEXT])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *params, _CONTEXT]}
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


# --- subcommands ---------------------------------------------------------------------------


@app.command(short_help="Check the setup; or write the server's entry.")
@with_common_options
def doctor(
    show_config: Annotated[
        bool, typer.Option("--show-config", help="Print every setting in effect after the checks.")
    ] = False,
    print_config: Annotated[
        bool,
        typer.Option(
            "--print-config",
            help="Print a new mcporter config holding agent-memory's entry (for a file of its"
            " own; to add it to an existing one, use --install-config).",
        ),
    ] = False,
    install_config: Annotated[
        Path | None,
        typer.Option(
            "--install-config",
            metavar="FILE",
            help="Add agent-memory's entry to this mcporter config, keeping every other server;"
            " the file as it was is kept beside it and the change shown.",
        ),
    ] = None,
    server_js: Annotated[
        Path | None,
        typer.Option(
            "--server-js",
            metavar="PATH",
            help="agent-memory's server.js, for the entry (default: npm's usual places).",
        ),
    ] = None,
    server_version: Annotated[
        str | None,
        typer.Option(
            "--server-version",
            metavar="X.Y",
            help="agent-memory's version, for the entry's capacities (default: its package.json).",
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Check the workspace, the server's entry, the server and the reranker; or write the
    server's mcporter entry.

    Example: memfuse doctor; memfuse doctor --install-config ~/.mcporter/mcporter.json
    """
    from memfuse.commands import doctor as command

    setup = command.ServerSetup(server_js, server_version)
    if print_config and install_config is not None:
        raise typer.BadParameter("--print-config or --install-config, not both")
    if (server_js or server_version) and not (print_config or install_config):
        raise typer.BadParameter(
            "--server-js and --server-version shape the entry that"
            " --print-config or --install-config writes"
        )
    body: Callable[[Any], Any]
    if install_config is not None:
        target = install_config
        body = lambda ctx: command.install_config(ctx, setup, target)  # noqa: E731
    elif print_config:
        body = lambda ctx: command.print_config(ctx, setup)  # noqa: E731
    else:
        body = lambda ctx: command.run(ctx, show_config=show_config)  # noqa: E731
    runner.run("doctor", common, body, lock=False, workspace=False)


@app.command(short_help="The lifecycle at a glance; exit 4 when a person is needed.")
@with_common_options
def status(common: Common) -> None:
    """Show the lifecycle at a glance: last runs, RECENT.md, the ledger, the lock.

    Reads only .memfuse/ (no store call). Exits 4 when something needs a person, so
    `memfuse status -q` can be a monitoring probe. Example: memfuse status --json
    """
    from memfuse.commands import status as command

    runner.run("status", common, command.run, lock=False)


@app.command(short_help="Journal bullets into agent-memory, only what changed.")
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
        bool,
        typer.Option(
            "--dry-run",
            help="Show what would be sent; write nothing, and ask the store only read-only"
            " questions (its status; with --verify, its listings).",
        ),
    ] = False,
    *,
    common: Common,
) -> None:
    """Push journal bullets into agent-memory: one memory per bullet, only what changed.

    With no --date/--since/--days/--all: every journal that changed since the last sync,
    whatever its day (and any bullet whose last call failed). Example: memfuse sync --days 3
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
    runner.run(
        "sync",
        common,
        lambda ctx: command.run(ctx, scope, prune=prune, explain=explain, verify=verify),
        dry_run=dry_run,
    )


@app.command(short_help="Write RECENT.md from the store (journals if it is down).")
@with_common_options
def surface(
    to_stdout: Annotated[
        bool, typer.Option("--stdout", help="Print the file instead of writing RECENT.md.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Build RECENT.md from the store's answers, but write nothing."
        ),
    ] = False,
    *,
    common: Common,
) -> None:
    """Write RECENT.md from agent-memory's recent, high-vitality memories (journals if down).

    Example: memfuse surface -q
    """
    from memfuse.commands import surface as command

    runner.run(
        "surface",
        common,
        lambda ctx: command.run(ctx, to_stdout=to_stdout),
        lock=not to_stdout,
        dry_run=dry_run,
    )


@app.command(short_help="The store's sleep cycle, MEMORY.md check and backup.")
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

    runner.run("tidy", common, lambda ctx: command.run(ctx, do_archive=archive), dry_run=dry_run)


@app.command("rerank-test", short_help="Check the configured reranker.")
@with_common_options
def rerank_test(
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
    from memfuse.commands import rerank_test as command

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
    runner.run(
        "rerank-test", common, lambda ctx: command.run(ctx, request), lock=False, workspace=False
    )


@app.command(short_help="The schedule of the daily runs: print, check, install.")
@with_common_options
def cron(
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="|".join(schedulers.names()),
            help=schedulers.format_help(),
        ),
    ] = schedulers.default(),
    archive: Annotated[
        bool, typer.Option("--archive", help="Let tidy roll old journals into weekly files.")
    ] = False,
    install: Annotated[
        bool,
        typer.Option(
            "--install", help="Put the schedule in place beside what is there (shows the change)."
        ),
    ] = False,
    remove: Annotated[
        bool, typer.Option("--remove", help="Take memfuse's schedule out, and nothing else.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option("--check", help="Run each memfuse job as its scheduler would, --dry-run."),
    ] = False,
    file: Annotated[
        str | None,
        typer.Argument(
            help=f"With --check: the schedule to check ({schedulers.source_help()}; - for"
            " stdin). Default: the one memfuse prints.",
            show_default=False,
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Print the schedule of memfuse's runs for this machine's scheduler; install it beside
    what is there, remove it, or check a schedule the way its scheduler would run it.

    Example: memfuse cron --install; memfuse cron --format FORMAT --install;
    memfuse cron --check memfuse.cron
    """
    from memfuse.commands import cron as command

    if fmt not in schedulers.names():
        raise typer.BadParameter(f"one of {', '.join(schedulers.names())}", param_hint="--format")
    if file is not None and not check:
        raise typer.BadParameter("a FILE is read only with --check")
    if sum((install, remove, check)) > 1:
        raise typer.BadParameter("one of --install, --remove and --check at a time")
    request = command.Request(fmt, archive, install, remove, check, file)
    # A checked file names its jobs' workspaces: the default one need not exist.
    needs = not (check and file is not None)
    runner.run("cron", common, lambda ctx: command.run(ctx, request), lock=False, workspace=needs)


@app.command(short_help="One ranked search over the Markdown and the store.")
@with_common_options
def recall(
    query: Annotated[
        str | None, typer.Argument(help="What to look for (not with --batch).", show_default=False)
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Results to show.")] = 10,
    types: Annotated[
        list[str] | None,
        typer.Option("--type", help="Only this type (emotion, knowledge, event, identity)."),
    ] = None,
    days: Annotated[
        int | None, typer.Option("--days", min=1, help="Only what is from the last N days.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="YYYY-MM-DD", help="Only what is from this day on."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar="YYYY-MM-DD", help="Only what is from this day or before."),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch", help="One question per line of stdin; one JSON envelope per line out."
        ),
    ] = False,
    without: Annotated[
        list[str] | None,
        typer.Option("--without", hidden=True, help="Switch a stage off (for the benchmark)."),
    ] = None,
    *,
    common: Common,
) -> None:
    """One ranked search over the journals/MEMORY.md and the store, with provenance.

    Example: memfuse recall "billing migration" --limit 5 --json; or, many at once,
    memfuse recall --batch < questions.txt (one JSON envelope per line, one store session)
    """
    import sys
    from dataclasses import replace

    from memfuse.commands import recall as command

    off = frozenset(without or ())
    if off - set(command.STAGES):
        raise typer.BadParameter(f"stages are {', '.join(command.STAGES)}", param_hint="--without")
    if batch == (query is not None):
        raise typer.BadParameter("give a QUERY, or --batch and the questions on stdin")
    if query is not None and len(query) > command.QUESTION_MAX:
        raise typer.BadParameter(
            f"a question longer than {command.QUESTION_MAX} characters is not one",
            param_hint="QUERY",
        )
    first, last = _parse_day(since, "--since"), _parse_day(until, "--until")
    if first is not None and last is not None and first > last:
        raise typer.BadParameter(f"--since {first} is after --until {last}")
    request = command.Request(query or "", limit, tuple(types or ()), days, off, first, last)
    if batch:
        # The output is JSON lines whatever --json says: one envelope per question, printed
        # as it is answered.
        lines = command.questions(sys.stdin)
        common = replace(common, json=False, quiet=True)
        runner.run(
            "recall",
            common,
            lambda ctx: command.run_batch(ctx, request, lines, runner.print_line),
            lock=False,
        )
    else:
        runner.run("recall", common, lambda ctx: command.run(ctx, request), lock=False)


@app.command(short_help="One bullet's story: its journal line, URI and answers.")
@with_common_options
def where(
    what: Annotated[
        str, typer.Argument(help="Some of a bullet's text, its URI, or a journal line (FILE:LINE).")
    ],
    *,
    common: Common,
) -> None:
    """Where is this bullet? Its journal line, URI, type, every answer the store gave it, and
    whether the store holds it now.

    Example: memfuse where "billing migration"; memfuse where memory/2026-12-01.md:7
    """
    from memfuse.commands import where as command

    runner.run("where", common, lambda ctx: command.run(ctx, what), lock=False)


@app.command(short_help="Recall, where and status for an agent, as an MCP server.")
@with_common_options
def serve(common: Common) -> None:
    """Serve recall, where and status to an agent as an MCP server over stdio (read-only).

    Keeps the recall index and one store session warm between calls; add it to the agent's
    MCP config (docs/serve.md). Example, one question without a config entry:
    echo '{"query": "billing"}' | mcporter call --stdio "memfuse serve" recall --args -
    """
    from dataclasses import replace

    from memfuse.commands import serve as command

    # stdout is the MCP channel: nothing else may be printed there, before or after.
    pinned = common.now is not None
    common = replace(common, json=False, quiet=True)
    runner.run("serve", common, lambda ctx: command.run(ctx, pinned_now=pinned), lock=False)


@app.command(short_help="Forget what memfuse made in the store, and pause sync.")
@with_common_options
def rollback(
    undo: Annotated[
        bool, typer.Option("--undo", help="Resume syncing; re-send what was withdrawn.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be forgotten; change nothing.")
    ] = False,
    *,
    common: Common,
) -> None:
    """Forget every memory memfuse made in the store, and pause sync until --undo.

    Only memfuse's own (the ledger's, or at a journal URI with a memory-sync: source) are
    forgotten. Example: memfuse rollback --dry-run; memfuse rollback; memfuse rollback --undo
    """
    from memfuse.commands import rollback as command

    runner.run("rollback", common, lambda ctx: command.run(ctx, undo=undo), dry_run=dry_run)


@app.command(short_help="The type a bullet would get, and why.")
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

    runner.run("classify", common, lambda ctx: command.run(ctx, text), lock=False, workspace=False)


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
    """Console-script entry point. A usage error is one message on stderr and exit 2, as
    typer gives it; under --json, also the envelope on stdout, so a caller that parses stdout
    always has one."""
    if os.environ.get("NO_COLOR"):
        os.environ.setdefault("TERM", "dumb")
    try:
        code = app(standalone_mode=False)
    except Exception as exc:
        message, exit_code = getattr(exc, "format_message", None), getattr(exc, "exit_code", None)
        if not callable(message) or not isinstance(exit_code, int):
            if type(exc).__name__ == "Abort":  # Ctrl-C at a prompt
                raise SystemExit(1) from None
            raise
        if "--json" in sys.argv[1:]:
            _usage_envelope(str(message()), exit_code)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        raise SystemExit(exit_code) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)


def _usage_envelope(message: str, exit_code: int) -> None:
    from memfuse.run.output import CommandResult
    from memfuse.run.runner import print_line
    from memfuse.untrusted import printable

    words = [a for a in sys.argv[1:] if not a.startswith("-")]
    command = words[0] if words and words[0] in _command_names() else "memfuse"
    data = {"error": printable(message), "usage": True}
    result = CommandResult(command, data, exit_code=ExitCode(exit_code))
    print_line(json.dumps(result.envelope(0), ensure_ascii=False))


def _command_names() -> set[str]:
    return {c.name or c.callback.__name__ for c in app.registered_commands if c.callback}
