"""The daily lifecycle's commands: sync, surface and tidy, and rollback, which undoes what sync
put in the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memfuse.cli.app import LIFECYCLE, STORE, _parse_day, app, with_common_options
from memfuse.run import runner
from memfuse.run.runner import Common


@app.command(short_help="Journal bullets into agent-memory, only what changed.")
@with_common_options(*LIFECYCLE)
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
        lock=True,
        dry_run=dry_run,
    )


@app.command(short_help="Write RECENT.md from the store (journals if it is down).")
@with_common_options(*LIFECYCLE)
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
@with_common_options(*LIFECYCLE)
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

    runner.run(
        "tidy", common, lambda ctx: command.run(ctx, do_archive=archive), lock=True, dry_run=dry_run
    )


@app.command(short_help="Forget what memfuse made in the store, and pause sync.")
@with_common_options(*STORE, "jobs", "wait")
def rollback(
    undo: Annotated[
        bool, typer.Option("--undo", help="Resume syncing; re-send what was withdrawn.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be forgotten; change nothing.")
    ] = False,
    shared_with: Annotated[
        list[Path] | None,
        typer.Option(
            "--shared-with",
            metavar="<path>",
            help="Another workspace whose memories share this store (repeat for each): forget"
            " only this ledger's own memories, none another ledger holds.",
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Forget every memory memfuse made in the store, and pause sync until --undo.

    Only memfuse's own (the ledger's, or at a journal URI with a memory-sync: source) are
    forgotten. Example: memfuse rollback --dry-run; memfuse rollback; memfuse rollback --undo
    """
    from memfuse.commands import rollback as command

    others = tuple(shared_with or ())
    if undo and others:
        raise typer.BadParameter("--undo forgets nothing", param_hint="--shared-with")
    body = lambda ctx: command.run(ctx, undo=undo, shared_with=others)  # noqa: E731
    runner.run("rollback", common, body, lock=True, dry_run=dry_run)
