"""`memfuse sync`: journal bullets into agent-memory, one memory per bullet (the engine:
memfuse.sync), then the recall index kept current by words."""

from __future__ import annotations

from memfuse.recall.index import refresh_index
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.sync.engine import SyncRequest, SyncServices, sync
from memfuse.sync.scope import Scope, unchanged

__all__ = ["Scope", "run"]


def run(
    ctx: RunContext,
    scope: Scope,
    *,
    prune: bool = False,
    explain: bool = False,
    verify: bool = False,
) -> CommandResult:
    workspace = ctx.workspace
    # A dry run on a workspace with no ledger yet creates none.
    ledger = ctx.ledger if not ctx.dry_run or workspace.state.ledger.exists() else None
    request = SyncRequest(scope, ctx.settings.now, prune, explain, verify, ctx.dry_run)
    services = SyncServices(
        workspace, ctx.store, ledger, ctx.classifier, ctx.reporter, ctx.progress,
        lambda: ctx.calls_made,
    )  # fmt: skip
    report = sync(request, services)
    data = report.data()
    if not ctx.dry_run:
        # the index from the journals read and unchanged since, by words (vectors after the lock)
        given = unchanged(report.reading.parsed, report.stamps, workspace.location)
        refreshed = refresh_index(workspace, ctx.classifier, ctx.reporter.warn, given=given)
        data["recall_index_refreshed"] = None if refreshed is None else refreshed[0]
        ctx.embed_afterwards()
    return CommandResult("sync", data, tuple(render.sync(data)))
