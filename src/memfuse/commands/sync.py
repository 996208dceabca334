"""`memfuse sync`: journal bullets into agent-memory, one memory per bullet.

Flow: one `status` call (is the store there?) → journals in scope → bullets → classification →
compare with the ledger → `remember` only what is new or changed (concurrently, under the
guard) → record each outcome as it arrives.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from memfuse.ledger.ledger import LEDGER_NAME, Entry, Ledger, content_hash, position_key
from memfuse.ledger.reconcile import expected_at_uri, verify_index
from memfuse.recall.index import refresh_index
from memfuse.run import render
from memfuse.run.context import RunContext
from memfuse.run.output import CommandResult
from memfuse.run.results import PrunedRow, RejectedRow, SyncData
from memfuse.text.classify import Classifier, Verdict
from memfuse.workspace.journal import Bullet
from memfuse.workspace.journals import journal_path, list_journals, read_journal

COUNT_KEYS = (
    "added", "updated", "merged", "skipped", "rejected", "failed", "unchanged", "stale",
    "restored",
)  # fmt: skip
NOT_FOUND = ("Memory not found",)


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

    day: str
    bullet: Bullet
    verdict: Verdict
    digest: str
    previous: Entry | None

    @property
    def position(self) -> str:
        return position_key(self.day, self.bullet.position)

    @property
    def memory_type(self) -> str:
        pinned = self.previous.memory_type if self.previous and self.previous.uri else None
        return pinned or self.verdict.type

    @property
    def uri(self) -> str:
        if self.previous is not None and self.previous.uri:
            return self.previous.uri
        return f"{self.verdict.type}://journal/{self.position}"

    @property
    def source(self) -> str:
        return f"memory-sync:{self.day}"

    @property
    def unchanged(self) -> bool:
        p = self.previous
        return p is not None and p.settles(self.digest)

    def arguments(self) -> dict[str, Any]:
        return {
            "content": self.bullet.text,
            "type": self.memory_type,
            "uri": self.uri,
            "source": self.source,
        }


def read_items(
    ctx: RunContext, scope: Scope, ledger: Ledger | None, also: Iterable[str] = ()
) -> tuple[list[str], list[Item], dict[str, Entry]]:
    """The days read (the scope's, and `also` where a journal exists), their bullets as items,
    and ledger entries whose bullet is gone."""
    s = ctx.settings
    journals = list_journals(s.workspace)
    classifier = Classifier(s.knowledge_keywords, s.emotion_keywords)
    days_read: list[str] = []
    items: list[Item] = []
    stale: dict[str, Entry] = {}
    chosen = set(scope.select(list(journals), s.now.date()))
    chosen |= {d for d in map(date.fromisoformat, also) if d in journals}
    for day in sorted(chosen):
        path = journals.get(day, journal_path(s.workspace, day))
        try:
            parsed = read_journal(ctx.files, path, ctx.reporter.warn)
        except FileNotFoundError:
            if scope.day is not None:
                ctx.reporter.warn(f"no journal for {day}: {path} does not exist")
            continue
        if parsed is None:
            continue
        iso = day.isoformat()
        days_read.append(iso)
        known = ledger.entries_for([iso]) if ledger is not None else {}
        for bullet in parsed.bullets:
            position = position_key(iso, bullet.position)
            items.append(
                Item(
                    iso,
                    bullet,
                    classifier.classify(bullet.text),
                    content_hash(bullet.text),
                    known.pop(position, None),
                )
            )
        stale.update(known)
    return days_read, items, stale


def outcome_of(answer: dict[str, Any] | None) -> tuple[str, str | None]:
    """The ledger outcome and memory id for one remember answer (None = the call failed)."""
    if answer is None:
        return "failed", None
    action = answer.get("action")
    memory_id = answer.get("memoryId")
    memory_id = memory_id if isinstance(memory_id, str) else None
    if action in ("added", "updated", "merged"):
        return str(action), memory_id
    if action == "skipped":
        return ("skipped", memory_id) if memory_id else ("rejected", None)
    return "failed", None


def run(
    ctx: RunContext,
    scope: Scope,
    *,
    prune: bool = False,
    explain: bool = False,
    verify: bool = False,
) -> CommandResult:
    s = ctx.settings
    counts = dict.fromkeys(COUNT_KEYS, 0)
    existing = (s.state_dir / LEDGER_NAME).exists()
    ledger = Ledger(s.state_dir) if not ctx.dry_run or existing else None
    try:
        # One cheap read first, alone: it tells a reachable store from a dead one even when
        # nothing changed (the run history needs that), and whether the index looks reset.
        probe = ctx.guard.call("status", {})
        report = None
        if ledger is not None and (verify or _looks_reset(probe, ledger)):
            report = verify_index(ctx, ledger)
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
            data["today_journal"] = str(journal_path(s.workspace, s.now.date()))
        if report is not None:
            data["index"] = report.as_dict()
            data["index_line"] = report.line()
        if explain:
            data["explain"] = [
                {"position": i.position, "type": i.verdict.type, "keyword": i.verdict.keyword,
                 "uri": i.uri, "text": i.bullet.text}
                for i in items
            ]  # fmt: skip
        if ctx.dry_run:
            data["would_send"] = [item.arguments() for item in todo]
            data["calls"] = ctx.calls_made
            return _result(data, stale, rejected=[], pruned=[])
        assert ledger is not None
        rejected = _send(ctx, ledger, todo, counts)
        pruned = _prune(ctx, ledger, stale) if prune else []
        counts["stale"] = len(stale) - len(pruned)
        data["calls"] = ctx.calls_made
        # The Markdown side of recall, kept current where the journals are read anyway.
        data["recall_index_refreshed"] = refresh_index(
            s.state_dir, ctx.files, Classifier(s.knowledge_keywords, s.emotion_keywords),
            ctx.reporter.warn,
        )  # fmt: skip
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
    calls = [("remember", item.arguments()) for item in todo]
    with ctx.progress("sync", len(calls)) as advance:
        for index, answer in ctx.guard.as_completed(calls):
            item = todo[index]
            outcome, memory_id = outcome_of(answer)
            if outcome == "failed" and answer is not None:
                ctx.reporter.warn(
                    f"{item.position}: unexpected remember answer {answer}", guard=True
                )
            lost = item.previous is not None and item.previous.outcome == "lost"
            counts["restored" if lost and outcome != "failed" else outcome] += 1
            advance()
            if outcome == "failed":
                continue  # not recorded: the next run retries it
            if outcome == "rejected":
                reason = str(answer.get("reason", "")) if answer else ""
                rejected.append({"position": item.position, "reason": reason})
            ledger.record(
                Entry(
                    position=item.position,
                    day=item.day,
                    content_hash=item.digest,
                    outcome=outcome,
                    uri=item.uri if memory_id else None,
                    memory_type=item.memory_type if memory_id else None,
                    memory_id=memory_id,
                    created=_created(ctx, item, outcome, memory_id),
                ),
                now,
            )
    return rejected


def _looks_reset(probe: dict[str, Any] | None, ledger: Ledger) -> bool:
    """The cheap check: the store holds fewer memories than memfuse alone put there."""
    total = (probe or {}).get("total")
    if not isinstance(total, int) or isinstance(total, bool):
        return False
    return total < sum(1 for e in ledger.all_entries() if expected_at_uri(e))


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
        found = ctx.guard.call("recall_path", {"uri": item.uri})
        memory = (found or {}).get("memory") or {}
        return memory.get("id") == memory_id and memory.get("source") == item.source
    return False


def _prune(ctx: RunContext, ledger: Ledger, stale: dict[str, Entry]) -> list[PrunedRow]:
    pruned: list[PrunedRow] = []
    for position, entry in sorted(stale.items()):
        if entry.created and entry.memory_id:
            answer = ctx.guard.call(
                "forget", {"id": entry.memory_id, "hard": True}, tolerate=NOT_FOUND
            )
            if answer is None:
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
