"""One sync, step by step: the store's status probe, ledger repair, reading, the pure plan,
and (unless a dry run) applying it — each step's output the next one's input."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from memfuse.ledger.ledger import Entry, JournalStamp, Ledger
from memfuse.ledger.refolds import refold_writes
from memfuse.ledger.stale import with_stale
from memfuse.report import Reporter
from memfuse.run.results import AccountingData, SyncData
from memfuse.state.folder import paused_since
from memfuse.store.client import StoreClient
from memfuse.sync import accounting
from memfuse.sync.apply import Applied, Applier, Progress, note_files
from memfuse.sync.plan import Plan, plan
from memfuse.sync.reading import Reader, Reading, touched, with_memory_ids
from memfuse.sync.repair import Repair, repair
from memfuse.sync.scope import Scope, in_scope
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Workspace


@dataclass(frozen=True)
class SyncRequest:
    """What the run was asked: which journals, and what besides sending."""

    scope: Scope
    now: datetime
    prune: bool = False
    explain: bool = False
    verify: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class SyncServices:
    """What a sync reaches: the workspace, the store, the ledger (None in a dry run with no
    ledger yet: nothing is created then), the classifier, the reporter and the progress bar."""

    workspace: Workspace
    store: StoreClient
    ledger: Ledger | None
    classifier: Classifier
    reporter: Reporter
    progress: Progress
    calls: Callable[[], int]  # the store calls made so far


@dataclass(frozen=True)
class SyncReport:
    """A sync's answer, typed; `data()` is the command's `--json` data, made here alone."""

    request: SyncRequest
    reading: Reading
    plan: Plan
    repaired: Repair
    accounting: AccountingData
    calls: int  # the store calls the run made
    applied: Applied = field(default_factory=Applied)
    would_send: list[dict[str, Any]] | None = None  # a dry run: the remember arguments
    lost_left: int | None = None  # after a verification found losses: those not restored yet
    today_journal: str | None = None  # when no journal was read and today's does not exist

    @property
    def stamps(self) -> dict[str, JournalStamp]:
        """Each file read, with the stamp it had then (for the recall index)."""
        return {loc: stamp for files in self.reading.files.values() for loc, stamp in files}

    def data(self) -> SyncData:
        request, reading, the_plan, repaired = self.request, self.reading, self.plan, self.repaired
        pruned = {p["position"] for p in self.applied.pruned}
        stale = len(reading.stale) - len(pruned)
        data: SyncData = {
            "dry_run": request.dry_run,
            "counts": {**self.applied.counts, "unchanged": the_plan.unchanged, "stale": stale},
            "dates": reading.days, "calls": self.calls,
            "stale": [
                {"position": p, "uri": e.uri, "memory_id": e.memory_id,
                 "created_by_memfuse": e.created}
                for p, e in sorted(reading.stale.items()) if p not in pruned
            ],
            "rejected": self.applied.rejected, "pruned": self.applied.pruned,
            "scope": request.scope.name, "plan": the_plan.as_dict(),
        }  # fmt: skip
        if the_plan.paused:
            data["paused_since"] = the_plan.paused
        if repaired.rebuilt:
            data["rebuilt"] = repaired.rebuilt
        if repaired.report is not None:
            data["index"], data["index_line"] = with_stale(repaired.report, repaired.stale)
        if request.explain:
            data["explain"] = [
                {"position": i.position.key, "type": i.verdict.type, "keyword": i.verdict.keyword,
                 "uri": i.uri, "text": i.bullet.text}
                for i in reading.items
            ]  # fmt: skip
        data["accounting"] = self.accounting
        if self.today_journal is not None:
            data["today_journal"] = self.today_journal
        if self.would_send is not None:
            data["would_send"] = self.would_send
            return data
        data["resent"] = len(the_plan.resend)
        data["refolded"] = len(the_plan.refold)
        if self.lost_left is not None:
            data["lost_left"] = self.lost_left
        return data


def sync(request: SyncRequest, services: SyncServices) -> SyncReport:
    """Repair, read, plan, and apply unless a dry run."""
    workspace, store, ledger = services.workspace, services.store, services.ledger
    paused = paused_since(workspace.state)
    # One cheap read first, alone: it tells a reachable store from a dead one even when nothing
    # changed (the run history needs that), and whether the index looks reset.
    probe = store.status()
    repaired = Repair()  # paused: nothing repaired
    if not paused:
        repaired = repair(
            store, ledger, workspace, services.reporter, probe=probe, now=request.now,
            verify=request.verify, dry_run=request.dry_run,
        )  # fmt: skip
    reading, the_plan = read_and_plan(request, services, paused=paused, repaired=repaired)
    accounted = accounting.account(reading, the_plan)
    for warning in accounting.warnings(accounted):
        services.reporter.warn(warning)
    today = workspace.journal_path(request.now.date())
    today_journal = str(today) if not reading.days and not today.exists() else None
    if paused:
        services.reporter.warn(
            f"sync is rolled back since {paused}: nothing is sent until `memfuse rollback --undo`"
        )
    report = partial(SyncReport, request, reading, the_plan, repaired, accounted)
    if request.dry_run or ledger is None:
        would_send = [dict(m.arguments()) for m in refold_writes(store, the_plan.refold)] + [
            dict(item.memory().arguments()) for item in the_plan.send + the_plan.resend
        ]
        return report(services.calls(), would_send=would_send, today_journal=today_journal)
    at = request.now.isoformat(timespec="seconds")
    applied = Applier(store, ledger, services.progress, at).apply(the_plan, Applied())
    note_files(ledger, workspace, reading, applied, paused=bool(paused), at=at)
    lost_left = None
    if repaired.report is not None and repaired.report.lost:
        lost_left = len(ledger.positions_with("lost"))
    return report(services.calls(), applied, lost_left=lost_left, today_journal=today_journal)


def read_and_plan(
    request: SyncRequest, services: SyncServices, *, paused: str | None, repaired: Repair
) -> tuple[Reading, Plan]:
    """Read the journals in scope and what the plan needs besides, then plan. Nothing is
    written."""
    ledger = services.ledger
    reader = Reader(services.workspace, ledger, services.classifier, services.reporter.warn)
    scope = in_scope(services.workspace, request.scope, ledger, request.now.date())
    named = request.scope.day is not None
    reading = reader.read(scope, named=named, journals=repaired.journals)
    sharing: dict[str, list[Entry]] = {}
    if ledger is not None and not paused:
        reading = with_memory_ids(services.store, reading, prune=request.prune)
        sharing = ledger.sharing(touched(reading, prune=request.prune))
        reader.siblings(reading, sharing)
    return reading, plan(reading, sharing, paused=paused, prune=request.prune)
