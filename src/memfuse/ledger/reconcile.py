"""The store is a derived index: check it against the ledger, and tell lost from forgotten.

The ledger knows every memory memfuse put at a journal URI. Three `recall_path` prefix calls
list what the store holds at those URIs, whatever their number. A memory the ledger expects
that the store no longer lists is either *forgotten* — agent-memory deletes P3 memories whose
vitality fell below 0.05 in `reflect` (estimated here with the same decay model, from the time
memfuse last synced it) — or *lost* (a deleted database, a migration gone wrong), and then it
is marked in the ledger so that the next sync re-sends it from its journal to its pinned URI.

A listing that fails changes nothing: a store that does not answer must never cause a mass
re-send or a ledger rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memfuse.ledger.ledger import Entry, Ledger
from memfuse.run.context import RunContext
from memfuse.store.decay import priority_of, vitality
from memfuse.store.gateway.base import GatewayError
from memfuse.store.gateway.guard import Guard

PREFIXES = ("event://journal/", "knowledge://journal/", "emotion://journal/")
# Outcomes after which the memory sits at its pinned URI (a skip or a merge may sit elsewhere).
AT_URI = frozenset({"added", "updated", "lost"})
DELETE_BELOW = 0.05  # agent-memory 2.2's reflect deletes P3 memories below this vitality
DELETED_PRIORITY = 3


def expected_at_uri(entry: Entry) -> bool:
    """Whether the store should hold this ledger entry's memory at its URI."""
    if entry.uri is None or entry.outcome in ("forgotten", "rejected"):
        return False
    return entry.outcome in AT_URI or entry.created


def listed_uris(guard: Guard) -> set[str] | None:
    """Every URI the store holds under the journal prefixes; None when any listing failed."""
    answers = guard.call_many([("recall_path", {"uri": p, "traverse_hops": 0}) for p in PREFIXES])
    found: set[str] = set()
    for prefix, answer in zip(PREFIXES, answers, strict=True):
        uris = _uris(prefix, answer)
        if uris is None:
            return None
        found |= uris
    return found


def _uris(prefix: str, answer: Mapping[str, Any] | None) -> set[str] | None:
    if answer is None:
        return None
    if answer.get("found") is False:
        return set()
    memories = answer.get("memories")
    if isinstance(memories, list):
        return {str(m["uri"]) for m in memories if isinstance(m, dict) and m.get("uri")}
    memory = answer.get("memory")
    if isinstance(memory, dict):  # a store answering the prefix as one exact URI
        return {prefix}
    return None


@dataclass(frozen=True)
class Report:
    """What a verification found."""

    expected: int
    present: int
    lost: tuple[Entry, ...]
    forgotten: tuple[Entry, ...]

    def as_dict(self) -> dict[str, int]:
        return {
            "expected": self.expected,
            "present": self.present,
            "lost": len(self.lost),
            "forgotten": len(self.forgotten),
        }

    def line(self) -> str:
        if not self.lost and not self.forgotten:
            return f"index: all {self.expected} memories memfuse stored are in the store"
        parts = []
        if self.lost:
            reset = " (the store was reset?)" if self.present == 0 else ""
            parts.append(f"{len(self.lost)} lost{reset}, re-sent from the journals")
        if self.forgotten:
            parts.append(f"{len(self.forgotten)} forgotten by the store's decay, not re-sent")
        return (
            f"index: {self.expected - self.present} of {self.expected} memories memfuse stored"
            f" are gone from the store: {'; '.join(parts)}"
        )


def judge(entries: Iterable[Entry], listed: set[str], now: datetime) -> Report:
    """Compare the ledger with the store's listing (pure)."""
    expected = [e for e in entries if expected_at_uri(e)]
    lost: list[Entry] = []
    forgotten: list[Entry] = []
    present = 0
    for entry in expected:
        if entry.uri in listed:
            present += 1
        elif decayed(entry, now):
            forgotten.append(entry)
        else:
            lost.append(entry)
    return Report(len(expected), present, tuple(lost), tuple(forgotten))


def decayed(entry: Entry, now: datetime) -> bool:
    """Whether the store would have deleted this memory by now (estimated from synced_at)."""
    priority = priority_of(entry.memory_type or "event")
    if priority != DELETED_PRIORITY or not entry.synced_at:
        return False
    try:
        synced = datetime.fromisoformat(entry.synced_at)
    except ValueError:
        return False
    if synced.tzinfo is None:
        synced = synced.astimezone()
    age_days = (now - synced).total_seconds() / 86400
    return vitality(priority, age_days) < DELETE_BELOW


def verify_index(ctx: RunContext, ledger: Ledger) -> Report | None:
    """Compare the store with the ledger; mark what it lost (re-sent by the next sync) and
    what it forgot (never re-sent). None, and nothing changed, when it could not be listed."""
    listed = listed_uris(ctx.guard)
    if listed is None:
        ctx.reporter.warn(
            "could not list the store's journal memories: the index was not verified"
            " (nothing changed; the next run tries again)"
        )
        return None
    report = judge(ledger.all_entries(), listed, ctx.settings.now)
    if report.lost:
        report = _evicted_by_capacity(ctx.guard, report, _gen4_limit(ctx))
    if not ctx.dry_run:
        ledger.mark((e.position for e in report.lost), "lost")
        ledger.mark((e.position for e in report.forgotten), "forgotten")
    ctx.reporter.info(report.line())
    return report


# 4.x keeps at most this many memories (AGENT_MEMORY_MAX_MEMORIES) and evicts the rest outright.
GEN4_LIMIT = 200


def _gen4_limit(ctx: RunContext) -> int:
    """4.x's capacity: AGENT_MEMORY_MAX_MEMORIES in the server entry's env, else its default."""
    from memfuse.errors import ConfigError
    from memfuse.store.server_entry import server_spec

    try:
        value = server_spec(ctx.settings).env.get("AGENT_MEMORY_MAX_MEMORIES", "")
    except ConfigError:
        return GEN4_LIMIT
    return int(value) if value.strip().isdigit() else GEN4_LIMIT


def _evicted_by_capacity(guard: Guard, report: Report, gen4_limit: int) -> Report:
    """Missing memories that 4.x/5.x evicted above their capacity were forgotten by design:
    5.x lists them in its archive; 4.x deletes them, so when a 4.x store is at its limit every
    missing memory counts as evicted. Costs calls only when something is missing."""
    try:
        tools = set(guard.gateway.list_tools())
    except GatewayError:
        return report
    evicted: set[str] = set()
    if "archive" in tools:
        answer = guard.call("archive", {"action": "list"})
        items = (answer or {}).get("archived")
        for item in items if isinstance(items, list) else []:
            uris = item.get("uris") if isinstance(item, dict) else None
            if isinstance(uris, list):
                evicted.update(u for u in uris if isinstance(u, str))
    elif "reindex" in tools:
        status = guard.call("status", {}) or {}
        total = status.get("total")
        if isinstance(total, int) and total >= gen4_limit:
            evicted = {e.uri for e in report.lost if e.uri}
    if not evicted:
        return report
    gone = tuple(e for e in report.lost if e.uri in evicted)
    lost = tuple(e for e in report.lost if e.uri not in evicted)
    return Report(report.expected, report.present, lost, report.forgotten + gone)
