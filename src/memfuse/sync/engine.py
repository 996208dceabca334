"""One sync, step by step: the store's status probe, ledger repair, reading, the pure plan,
and (unless a dry run) applying it — each step handed the services it uses, each step's
output the next one's input. The answer is the command's data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from memfuse.ledger.ledger import Entry, Ledger, Stamp
from memfuse.ledger.refolds import refold_writes
from memfuse.ledger.stale import with_stale
from memfuse.report import Reporter
from memfuse.run.results import SyncData
from memfuse.state.pause import paused_since
from memfuse.store.client import StoreClient
from memfuse.sync import accounting
from memfuse.sync.apply import Applied, Applier, Progress, note_files
from memfuse.sync.plan import Plan, plan
from memfuse.sync.reading import Reader, Reading, touched, with_memory_ids
from memfuse.sync.repair import Repair, repair
from memfuse.sync.scope import Scope, in_scope
from memfuse.text.classify import Classifier
from memfuse.workspace.layout import Journal, Workspace


@dataclass(frozen=True)
class Request:
    """What the run was asked: which journals, and what besides sending."""

    scope: Scope
    now: datetime
    prune: bool = False
    explain: bool = False
    verify: bool = False
    dry_run: bool = False


@dataclass(frozen=True)
class Services:
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
class Synced:
    """A sync's answer, and the journals it read whole with the stamp each file had then
    (the recall index takes those that have not changed since, instead of reading them)."""

    data: SyncData
    parsed: dict[date, Journal]
    stamps: dict[str, Stamp]


def sync(request: Request, services: Services) -> Synced:
    """Repair, read, plan, and apply unless a dry run; the command's data."""
    workspace, store, ledger = services.workspace, services.store, services.ledger
    # A rollback's pause lives in its own state file, not in the ledger: a ledger lost or set
    # aside must not undo it.
    paused = paused_since(workspace.state)
    # One cheap read first, alone: it tells a reachable store from a dead one even when nothing
    # changed (the run history needs that), and whether the index looks reset.
    probe = store.status()
    fixed = Repair()
    if not paused:
        fixed = repair(
            store, ledger, workspace, services.reporter, probe=probe, now=request.now,
            verify=request.verify, dry_run=request.dry_run,
        )  # fmt: skip
    reading, the_plan = read_and_plan(request, services, paused=paused, repaired=fixed)
    data = _data(request, reading, the_plan, fixed)
    data["accounting"] = accounting.account(reading, the_plan)
    for warning in accounting.warnings(data["accounting"]):
        services.reporter.warn(warning)
    today = workspace.journal_path(request.now.date())
    if not reading.days and not today.exists():
        data["today_journal"] = str(today)
    if paused:
        services.reporter.warn(
            f"sync is rolled back since {paused}: nothing is sent until `memfuse rollback --undo`"
        )
    if request.dry_run or ledger is None:
        data["would_send"] = [
            dict(m.arguments()) for m in refold_writes(store, the_plan.refold)
        ] + [dict(item.memory().arguments()) for item in the_plan.send + the_plan.resend]
        data["calls"] = services.calls()
        return Synced(_finish(data, reading.stale, Applied()), {}, {})
    at = request.now.isoformat(timespec="seconds")
    applied = Applier(store, ledger, services.progress, at).apply(the_plan, Applied())
    note_files(ledger, workspace, reading, applied, paused=bool(paused), at=at)
    for key in ("added", "updated", "merged", "skipped", "rejected", "failed", "restored"):
        data["counts"][key] = applied.counts[key]
    data["resent"] = len(the_plan.resend)
    data["refolded"] = len(the_plan.refold)
    if fixed.report is not None and fixed.report.lost:
        data["lost_left"] = len(ledger.positions_with("lost"))
    data["calls"] = services.calls()
    stamps = {loc: stamp for files in reading.files.values() for loc, stamp in files}
    return Synced(_finish(data, reading.stale, applied), reading.parsed, stamps)


def read_and_plan(
    request: Request, services: Services, *, paused: str | None, repaired: Repair
) -> tuple[Reading, Plan]:
    """Read the journals in scope (those the repair step read are not read again) and what the
    plan needs besides (the ids of memories a rebuilt ledger does not know, the bullets sharing
    a memory with a change), then plan. Nothing is written."""
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


def _data(request: Request, reading: Reading, the_plan: Plan, fixed: Repair) -> SyncData:
    """The command's data as planned: counts of what needs no call, what was read."""
    counts = {
        "added": 0, "updated": 0, "merged": 0, "skipped": 0, "rejected": 0, "failed": 0,
        "unchanged": the_plan.unchanged, "stale": len(reading.stale), "restored": 0,
    }  # fmt: skip
    data: SyncData = {
        "dry_run": request.dry_run, "counts": counts, "dates": reading.days, "calls": 0,
        "stale": [], "rejected": [], "pruned": [], "scope": request.scope.name,
        "plan": the_plan.as_dict(),
    }  # fmt: skip
    if the_plan.paused:
        data["paused_since"] = the_plan.paused
    if fixed.rebuilt:
        data["rebuilt"] = fixed.rebuilt
    if fixed.report is not None:
        data["index"], data["index_line"] = with_stale(fixed.report, fixed.stale)
    if request.explain:
        data["explain"] = [
            {"position": i.position.key, "type": i.verdict.type, "keyword": i.verdict.keyword,
             "uri": i.uri, "text": i.bullet.text}
            for i in reading.items
        ]  # fmt: skip
    return data


def _finish(data: SyncData, stale: dict[str, Entry], applied: Applied) -> SyncData:
    """What is left stale (not pruned), rejected and pruned."""
    pruned = {p["position"] for p in applied.pruned}
    data["counts"]["stale"] = len(stale) - len(pruned)
    data["stale"] = [
        {"position": p, "uri": e.uri, "memory_id": e.memory_id, "created_by_memfuse": e.created}
        for p, e in sorted(stale.items())
        if p not in pruned
    ]
    data["rejected"] = applied.rejected
    data["pruned"] = applied.pruned
    return data
