"""`memfuse status`: the lifecycle at a glance. The flow is memfuse.views.status, which
serve's `status` tool and `status --all-agents` answer through as well."""

from __future__ import annotations

from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.views import status


def run(ctx: RunContext) -> CommandResult:
    return status.run(ctx)
