"""The store is a derived index: check it against the ledger, and tell lost from forgotten.

The ledger knows every memory memfuse put at a journal URI. The store lists what it holds
under the journal prefixes, whatever their number. A memory the ledger expects
that the store no longer lists is either *forgotten* — agent-memory deletes P3 memories whose
vitality fell below 0.05 in `reflect` (estimated here with the same decay model, from the time
memfuse last synced it) — or *lost* (a deleted database, a migration gone wrong), and then it
is marked in the ledger so that the next sync re-sends it from its journal to its pinned URI.

A listing that fails changes nothing: a store that does not answer must never cause a mass
re-send or a ledger rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from memfuse.ledger.ledger import Entry, Ledger
from memfuse.report import Reporter
from memfuse.store.client import StoreClient
from memfuse.store.decay import priority_of, vitality
from memfuse.workspace.position import JOURNAL_PREFIXES

# Outcomes after which the memory sits at its pinned URI (a skip or a merge may sit elsewhere).
AT_URI = frozenset({"added", "updated", "lost"})
DELETE_BELOW = 0.05  # agent-memory 2.2's reflect deletes P3 memories below this vitality
DELETED_PRIORITY = 3


def expected_at_uri(entry: Entry) -> bool:
    """Whether the store should hold this ledger entry's memory at its URI."""
    if entry.uri is None or entry.outcome in ("forgotten", "rejected", "withdrawn", "resumed"):
        return False
    return entry.outcome in AT_URI or entry.created


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
            parts.append(f"{len(self.lost)} lost{reset}, to be re-sent from the journals")
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


NOT_LISTED = (
    "could not list the store's journal memories: the index was not verified"
    " (nothing changed; the next run tries again)"
)


def verify_index(
    store: StoreClient, ledger: Ledger, now: datetime, reporter: Reporter, *, mark: bool = True
) -> Report | None:
    """Compare the store with the ledger; with `mark`, mark what it lost (re-sent by the next
    sync) and what it forgot (never re-sent). None, one warning, and nothing changed, when the
    store could not be listed."""
    listed = store.uris_under(JOURNAL_PREFIXES)
    if listed is None:
        reporter.warn(NOT_LISTED)
        return None
    report = judge(ledger.all_entries(), listed, now)
    if report.lost:
        report = _evicted_by_capacity(store, report)
    if mark:
        ledger.mark((e.position for e in report.lost), "lost")
        ledger.mark((e.position for e in report.forgotten), "forgotten")
    reporter.info(report.line())
    return report


def _evicted_by_capacity(store: StoreClient, report: Report) -> Report:
    """Missing memories the store evicted above its capacity were forgotten by design, not
    lost (memfuse.store.client.StoreClient.evicted)."""
    evicted = store.evicted({e.uri for e in report.lost if e.uri})
    if not evicted:
        return report
    gone = tuple(e for e in report.lost if e.uri in evicted)
    lost = tuple(e for e in report.lost if e.uri not in evicted)
    return Report(report.expected, report.present, lost, report.forgotten + gone)
