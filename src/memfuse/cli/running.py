"""The commands for running memfuse unattended: status, doctor, cron and rerank-test."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from memfuse.cli.app import STORE, app, with_common_options
from memfuse.run import runner
from memfuse.run.runner import Common
from memfuse.schedule import registry as schedulers


@app.command(short_help="The lifecycle at a glance; exit 4 when a person is needed.")
@with_common_options()
def status(
    all_agents: Annotated[
        bool,
        typer.Option("--all-agents", help="One row per agent its host configures; the worst exit."),
    ] = False,
    *,
    common: Common,
) -> None:
    """Show the lifecycle at a glance: last runs, RECENT.md, the ledger, the lock.

    Reads only memfuse's state folder (no store call). Exits 4 when something needs a person, so
    `memfuse status -q` can be a monitoring probe. Example: memfuse status --json
    """
    if all_agents:  # every agent, each its own status (memfuse.commands.status_all)
        from memfuse.commands import status_all

        runner.run("status", common, status_all.run, lock=False, workspace=False)
        return
    from memfuse.views import status as command

    runner.run("status", common, command.run, lock=False)


@app.command(short_help="Check the setup; or write the server's entry.")
@with_common_options(*STORE)
def doctor(
    all_agents: Annotated[
        bool,
        typer.Option(
            "--all-agents", help="Check every agent its host configures, each its own store."
        ),
    ] = False,
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
    if all_agents and (print_config or install_config is not None):
        raise typer.BadParameter("--all-agents checks every agent; it writes no entry")
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
    elif all_agents:  # every agent, each its own doctor
        body = command.run_all
    else:
        body = lambda ctx: command.run(ctx, show_config=show_config)  # noqa: E731
    runner.run("doctor", common, body, lock=False, workspace=False)


@app.command(short_help="The schedule of the daily runs: print, check, install.")
@with_common_options(*STORE, "workspaces")
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
    all_agents: Annotated[
        bool,
        typer.Option(
            "--all-agents",
            help="Every agent the host's configuration lists (as"
            f" {'/'.join(s.name for s in schedulers.every() if s.lists_agents)} configures them),"
            " each its own jobs, workspace, state folder and store.",
        ),
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
    several = common.workspaces if len(common.workspaces) > 1 else ()
    if several and (all_agents or file is not None):
        raise typer.BadParameter(
            "several -w name the workspaces themselves; not with --all-agents or a FILE",
            param_hint="--workspace",
        )
    if several and common.settings.get("state_dir") is not None:
        raise typer.BadParameter(
            "several -w each keep their own state folder", param_hint="--state-dir"
        )
    request = command.CronRequest(fmt, archive, install, remove, check, file, all_agents, several)
    # A checked file names its jobs' workspaces, every agent its own: the default one need
    # not exist.
    needs = not (check and file is not None) and not all_agents
    runner.run("cron", common, lambda ctx: command.run(ctx, request), lock=False, workspace=needs)


@app.command("rerank-test", short_help="Check the configured reranker.")
@with_common_options(*STORE)
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
    request = command.RerankTestRequest(query, tuple(docs), top_n, from_recall)
    runner.run(
        "rerank-test", common, lambda ctx: command.run(ctx, request), lock=False, workspace=False
    )
