"""`memfuse sync`: journal bullets into agent-memory, one memory per bullet.

A run repairs the ledger, reads, plans, then acts (memfuse.sync: repair, reading, plan,
apply). A plain `memfuse sync` reads what changed: every journal file — daily, archived or
weekly roll-up — whose size, times or inode differ from when a run last covered it, and the
days of every bullet still pending. `--date`, `--days`, `--since` and `--all` name the days
instead; `--dry-run` shows the plan.
"""

from __future__ import annotations

from memfuse.recall.index import refresh_index
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.sync.engine import Request, Services, sync
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
    request = Request(scope, ctx.settings.now, prune, explain, verify, ctx.dry_run)
    services = Services(
        workspace, ctx.store, ledger, ctx.classifier, ctx.reporter, ctx.progress,
        lambda: ctx.calls_made,
    )  # fmt: skip
    report = sync(request, services)
    data = report.data()
    if not ctx.dry_run:
        # The Markdown side of recall, kept current from the journals the sync read, where
        # their files have not changed since: by words alone. The vectors of what is new are
        # made once the run let go of the lock, where nothing waits on the model.
        given = unchanged(report.reading.parsed, report.stamps, workspace.location)
        refreshed = refresh_index(workspace, ctx.classifier, ctx.reporter.warn, given=given)
        data["recall_index_refreshed"] = None if refreshed is None else refreshed[0]
        ctx.embed_afterwards(data)
    return CommandResult("sync", data, tuple(render.sync(data)))
