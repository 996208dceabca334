"""`memfuse sync`: journal bullets into agent-memory, one memory per bullet.

Flow: one `status` call (is the store there?) → journals in scope → bullets → classification →
compare with the ledger → `remember` only what is new or changed (concurrently, under the
guard) → record each outcome as it arrives.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from memfuse.ledger.ledger import Entry, Ledger, content_hash
from memfuse.ledger.reconcile import expected_at_uri, verify_index
from memfuse.recall.index import refresh_index
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import PrunedRow, RejectedRow, SyncData
from memfuse.store.answers import StoreStatus
from memfuse.store.client import NewMemory
from memfuse.text.classify import Verdict
from memfuse.workspace.journal import Bullet
from memfuse.workspace.position import JournalPosition

COUNT_KEYS = (
    "added", "updated", "merged", "skipped", "rejected", "failed", "unchanged", "stale",
    "restored",
)  # fmt: skip


@dataclass(frozen=True)
class Scope:
    """Which journals to read: one day, a range ending today, or all of them."""

    day: date | None = None
    since: date | None = None
    days: int | None = None
    all: bool = False

    def select(self, available: list[date], today: date) -> list[date]:
        if self.all:
            return available
        if self.day is not None:
            return [self.day]
        start = self.since
        if self.days is not None:
            start = today - timedelta(days=self.days - 1)
        if start is not None:
            return [d for d in available if start <= d <= today]
        return [today]


@dataclass(frozen=True)
class Item:
    """One bullet and what the ledger knows of its position."""

    position: JournalPosition
    bullet: Bullet
    verdict: Verdict
    digest: str
    previous: Entry | None

    @property
    def day(self) -> str:
        return self.position.day.isoformat()

    @property
    def memory_type(self) -> str:
        pinned = self.previous.memory_type if self.previous and self.previous.uri else None
        return pinned or self.verdict.type

    @property
    def uri(self) -> str:
        if self.previous is not None and self.previous.uri:
            return self.previous.uri
        return self.position.uri(self.verdict.type)

    @property
    def unchanged(self) -> bool:
        p = self.previous
        return p is not None and p.settles(self.digest)

    def memory(self) -> NewMemory:
        return NewMemory(self.bullet.text, self.memory_type, self.uri, self.position.source)


def read_items(
    ctx: RunContext, scope: Scope, ledger: Ledger | None, also: Iterable[str] = ()
) -> tuple[list[str], list[Item], dict[str, Entry]]:
    """The days read (the scope's, and `also` where a journal exists), their bullets as items,
    and ledger entries whose bullet is gone."""
    s = ctx.settings
    workspace = ctx.workspace
    available = workspace.daily_journals()
    chosen = set(scope.select(list(available), s.now.date()))
    chosen |= {d for d in map(date.fromisoformat, also) if d in available}
    named = ctx.reporter.warn if scope.day is not None else None
    for name in workspace.look_alikes():
        ctx.reporter.warn(
            f"{workspace.location(workspace.journal_dir / name)!r} reads like a journal but is"
            " not one (a journal is named YYYY-MM-DD.md in ASCII digits, a real date): not synced"
        )
    days_read: list[str] = []
    items: list[Item] = []
    stale: dict[str, Entry] = {}
    for journal in workspace.journals(chosen, ctx.reporter.warn, missing=named):
        iso = journal.day.isoformat()
        days_read.append(iso)
        known = ledger.entries_for([iso]) if ledger is not None else {}
        for position, bullet in journal.positioned():
            items.append(
                Item(
                    position,
                    bullet,
                    ctx.classifier.classify(bullet.text),
                    content_hash(bullet.text),
                    known.pop(position.key, None),
                )
            )
        stale.update(known)
    return days_read, items, stale


def run(
    ctx: RunContext,
    scope: Scope,
    *,
    prune: bool = False,
    explain: bool = False,
    verify: bool = False,
) -> CommandResult:
    s = ctx.settings
    workspace = ctx.workspace
    counts = dict.fromkeys(COUNT_KEYS, 0)
    existing = workspace.state.ledger.exists()
    ledger = Ledger(workspace.state) if not ctx.dry_run or existing else None
    try:
        # One cheap read first, alone: it tells a reachable store from a dead one even when
        # nothing changed (the run history needs that), and whether the index looks reset.
        probe = ctx.store.status()
        report = None
        if ledger is not None and (verify or _looks_reset(probe, ledger)):
            report = verify_index(ctx.store, ledger, s.now, ctx.reporter, mark=not ctx.dry_run)
        lost_days = ledger.days_with("lost") if ledger is not None else []
        days, items, stale = read_items(ctx, scope, ledger, also=lost_days)
        todo = [item for item in items if not item.unchanged]
        counts["unchanged"] = len(items) - len(todo)
        counts["stale"] = len(stale)
        data: SyncData = {
            "dry_run": ctx.dry_run, "counts": counts, "dates": days, "calls": 0,
            "stale": [], "rejected": [], "pruned": [],
        }  # fmt: skip
        if not days:
            data["today_journal"] = str(workspace.journal_path(s.now.date()))
        if report is not None:
            data["index"] = report.as_dict()
            data["index_line"] = report.line()
        if explain:
            data["explain"] = [
                {"position": i.position.key, "type": i.verdict.type, "keyword": i.verdict.keyword,
                 "uri": i.uri, "text": i.bullet.text}
                for i in items
            ]  # fmt: skip
        if ctx.dry_run:
            data["would_send"] = [dict(item.memory().arguments()) for item in todo]
            data["calls"] = ctx.calls_made
            return _result(data, stale, rejected=[], pruned=[])
        assert ledger is not None
        rejected = _send(ctx, ledger, todo, counts)
        pruned = _prune(ctx, ledger, stale) if prune else []
        counts["stale"] = len(stale) - len(pruned)
        data["calls"] = ctx.calls_made
        # The Markdown side of recall, kept current where the journals are read anyway.
        data["recall_index_refreshed"] = refresh_index(workspace, ctx.classifier, ctx.reporter.warn)
        return _result(data, stale, rejected, pruned)
    finally:
        if ledger is not None:
            ledger.close()


def _send(
    ctx: RunContext, ledger: Ledger, todo: list[Item], counts: dict[str, int]
) -> list[RejectedRow]:
    """Remember each item concurrently; record every outcome the moment it arrives."""
    rejected: list[RejectedRow] = []
    now = ctx.settings.now.isoformat(timespec="seconds")
    with ctx.progress("sync", len(todo)) as advance:
        for index, outcome in ctx.store.remember_all([item.memory() for item in todo]):
            item = todo[index]
            action = outcome.action
            lost = item.previous is not None and item.previous.outcome == "lost"
            counts["restored" if lost and action != "failed" else action] += 1
            advance()
            if action == "failed":
                continue  # not recorded: the next run retries it
            if action == "rejected":
                rejected.append({"position": item.position.key, "reason": outcome.reason})
            memory_id = outcome.memory_id
            ledger.record(
                Entry(
                    position=item.position.key,
                    day=item.day,
                    content_hash=item.digest,
                    outcome=action,
                    uri=item.uri if memory_id else None,
                    memory_type=item.memory_type if memory_id else None,
                    memory_id=memory_id,
                    created=_created(ctx, item, action, memory_id),
                ),
                now,
            )
    return rejected


def _looks_reset(probe: StoreStatus | None, ledger: Ledger) -> bool:
    """The cheap check: the store holds fewer memories than memfuse alone put there."""
    if probe is None or probe.total is None:
        return False
    return probe.total < sum(1 for e in ledger.all_entries() if expected_at_uri(e))


def _created(ctx: RunContext, item: Item, outcome: str, memory_id: str | None) -> bool:
    """Whether memfuse itself made this memory, the only kind `--prune` may delete."""
    previous = item.previous
    if previous is not None and previous.created and previous.memory_id == memory_id:
        return True
    if outcome == "added":
        return True
    if outcome == "skipped" and memory_id:
        # A run killed after the store added the memory but before the ledger recorded it: the
        # re-send is an exact duplicate of a memory sitting at our URI with our source.
        found = ctx.store.lookup(item.uri)
        return found is not None and found.id == memory_id and found.source == item.position.source
    return False


def _prune(ctx: RunContext, ledger: Ledger, stale: dict[str, Entry]) -> list[PrunedRow]:
    pruned: list[PrunedRow] = []
    for position, entry in sorted(stale.items()):
        if entry.created and entry.memory_id and not ctx.store.forget(entry.memory_id):
            continue  # kept in the ledger: the next --prune tries again
        ledger.forget(position)
        pruned.append(
            {"position": position, "memory_id": entry.memory_id, "deleted": entry.created}
        )
    return pruned


def _result(
    data: SyncData,
    stale: dict[str, Entry],
    rejected: list[RejectedRow],
    pruned: list[PrunedRow],
) -> CommandResult:
    pruned_positions = {p["position"] for p in pruned}
    data["stale"] = [
        {"position": p, "uri": e.uri, "memory_id": e.memory_id, "created_by_memfuse": e.created}
        for p, e in sorted(stale.items())
        if p not in pruned_positions
    ]
    data["rejected"] = rejected
    data["pruned"] = pruned
    return CommandResult("sync", data, tuple(render.sync(data)))
