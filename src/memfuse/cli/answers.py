"""The commands that answer a question about the memory: recall, where, serve (the same as MCP
tools for an agent), note (serve's one writer, from a shell) and classify."""

from __future__ import annotations

from typing import Annotated

import typer

from memfuse.cli.app import STORE, _parse_day, app, with_common_options
from memfuse.run import runner
from memfuse.run.runner import Common


@app.command(short_help="One ranked search over the Markdown and the store.")
@with_common_options(*STORE, "strict")
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
    request = command.RecallRequest(query or "", limit, tuple(types or ()), days, off, first, last)
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
@with_common_options(*STORE)
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
    from memfuse.views import where as command

    runner.run("where", common, lambda ctx: command.run(ctx, what), lock=False)


@app.command(short_help="Recall, where, status and note (writes) for an agent, over MCP.")
@with_common_options(*STORE)
def serve(common: Common) -> None:
    """Serve recall, where and status to an agent as an MCP server over stdio, and note,
    which writes: it appends one bullet to today's journal (without the workspace lock).

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


@app.command(short_help="Append one bullet to today's journal, as serve's note tool does.")
@with_common_options()
def note(
    text: Annotated[str, typer.Argument(help="The bullet's text: one line, what to remember.")],
    *,
    common: Common,
) -> None:
    """Append TEXT as one bullet to today's journal under the current `## HH:MM` section, by
    the same rules as serve's `note` tool; the next sync stores it. Refused (nothing written,
    a non-zero exit) when the text is not one line of plain text or the journal cannot take it.

    Example: memfuse note "Decided: the billing cutover moves to Saturday"
    """
    from memfuse.commands import note as command
    from memfuse.workspace.note import NoteRefused, checked_text

    try:
        checked_text(text)
    except NoteRefused as exc:
        raise typer.BadParameter(str(exc), param_hint="TEXT") from None
    runner.run("note", common, lambda ctx: command.run(ctx, text), lock=False)


@app.command(short_help="The type a bullet would get, and why.")
@with_common_options()
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
