"""The `memfuse` command's frame: the typer app, the common options every subcommand takes
(one option table, memfuse.config), and the console-script entry point; the subcommands are
the modules beside it (docs/architecture.md)."""

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
from memfuse.run.context import Seams
from memfuse.run.runner import Common

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
# `-w` as a command that takes "workspaces" reads it: given more than once, each workspace.
_SEVERAL_WORKSPACES = _option(
    "workspace", list[Path] | None, None, "--workspace", "-w", metavar="<path>",
    help=next(o.flag_help for o in FLAG_OPTIONS if o.target == "workspace")
    + " Give -w more than once for one block per workspace, each its own store.",
)  # fmt: skip
_SETTING_NAMES = [p.name for p in _SETTING_PARAMS]
_RUN_NAMES = [p.name for p in _RUN_PARAMS]

# Every command takes these; the rest only where they change what the command does, named
# by each command's decorator (`@with_common_options(*LIFECYCLE)`).
_ALWAYS = ("workspace", "state_dir", "json_output", "quiet", "verbose", "now")
STORE = ("mcporter", "mcporter_config", "server", "transport", "timeout")
LIFECYCLE = (*STORE, "jobs", "strict", "wait")
_RUN_DEFAULTS = {"strict": False, "wait": None}


# The command line's context: its object is the outside world a caller hands the run (tests).
_CONTEXT = inspect.Parameter(
    "cli_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context
)


def with_common_options(*takes: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Add the common options every command takes, and those it `takes` besides, to it; the
    command receives them as `common: Common`, an option it does not take as unset."""
    several = "workspaces" in takes  # -w given more than once: each workspace (cron)
    takes = tuple(t for t in takes if t != "workspaces")
    params = [p for p in _COMMON_PARAMS if p.name in {*_ALWAYS, *takes}]
    if len(params) != len({*_ALWAYS, *takes}):
        raise ValueError(f"no common option among {takes}")
    if several:
        params = [_SEVERAL_WORKSPACES if p.name == "workspace" else p for p in params]

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(func, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "common"]

        @functools.wraps(func)
        def wrapper(**kwargs: Any) -> None:
            settings = {name: kwargs.pop(name, None) for name in _SETTING_NAMES}
            given = settings["workspace"] if several else None
            if several:  # the first is the run's own workspace; the rest ride in `workspaces`
                settings["workspace"] = given[0] if given else None
            run = {name: kwargs.pop(name, _RUN_DEFAULTS.get(name)) for name in _RUN_NAMES}
            run["json"] = run.pop("json_output")
            handed = kwargs.pop(_CONTEXT.name).find_root().obj  # tests hand fakes in
            seams = handed if isinstance(handed, Seams) else Seams()
            workspaces = tuple(given or ())
            func(**kwargs, common=Common(settings, **run, seams=seams, workspaces=workspaces))

        wrapper.__signature__ = signature.replace(parameters=[*own, *params, _CONTEXT])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *params, _CONTEXT]}
        del wrapper.__wrapped__  # typer must see the new signature, not the original's
        return wrapper

    return decorate


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
    """Console-script entry point. A usage error is typer's message and exit 2; under --json,
    also the envelope on stdout, so a caller that parses stdout always has one."""
    if os.environ.get("NO_COLOR"):
        os.environ.setdefault("TERM", "dumb")
    try:
        code = app(standalone_mode=False)
    except KeyboardInterrupt:  # Ctrl-C before or after a run (a run reports its own)
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    except Exception as exc:
        message, exit_code = getattr(exc, "format_message", None), getattr(exc, "exit_code", None)
        if not callable(message) or not isinstance(exit_code, int):
            if type(exc).__name__ == "Abort":  # Ctrl-C at a prompt
                raise SystemExit(int(ExitCode.INTERRUPTED)) from None
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
    names = {c.name or c.callback.__name__ for c in app.registered_commands if c.callback}
    command = words[0] if words and words[0] in names else "memfuse"
    data = {"error": printable(message), "usage": True}
    result = CommandResult(command, data, exit_code=ExitCode(exit_code))
    print_line(json.dumps(result.envelope(0), ensure_ascii=False))
