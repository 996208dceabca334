"""One command run for each agent of the roster (`status`/`doctor --all-agents`), each on a
context of its own."""

from __future__ import annotations

from collections.abc import Callable

from memfuse.report import Reporter
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.schedule import agents
from memfuse.untrusted import one_line


def as_agent(
    ctx: RunContext, agent: agents.Agent, command: Callable[[RunContext], CommandResult]
) -> tuple[CommandResult, list[str]]:
    """`command` for one agent, on a context of its own closed before the next (one agent's
    store server at a time, not 64 held open); its warnings said under its id, and returned."""
    reporter = Reporter()
    reporter.begin(ctx.reporter.mask, ctx.reporter.logger)
    sub = RunContext(agent.settings(ctx.settings), reporter, seams=ctx.seams)
    try:
        done = command(sub)
    finally:
        sub.close()
    for warning in reporter.warnings:
        ctx.reporter.warn(f"agent {one_line(agent.id)}: {warning}")
    return done, list(reporter.warnings)
