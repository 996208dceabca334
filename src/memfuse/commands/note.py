"""`memfuse note TEXT`: one bullet appended to today's journal from a shell, a hook or a job, by
the one writer serve's `note` tool uses (memfuse.serve.note): the same rules, the same answer."""

from __future__ import annotations

from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.serve.note import written
from memfuse.workspace.note_file import Marks


def run(ctx: RunContext, text: str) -> CommandResult:
    workspace = ctx.workspace
    data = written(workspace, ctx.settings.now, ctx.classifier, Marks(workspace.state), text)
    return CommandResult("note", data, tuple(render.note(data)))
