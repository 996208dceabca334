"""`memfuse where`: one bullet's whole story. The flow is memfuse.views.where, which serve's
`where` tool answers through as well."""

from __future__ import annotations

from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.views import where


def run(ctx: RunContext, what: str) -> CommandResult:
    return where.run(ctx, what)
