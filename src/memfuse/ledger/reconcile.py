"""The store is a derived index: check it against the ledger, and tell lost from forgotten.

A memory the ledger expects that the store no longer lists is either *forgotten* (decayed
away in `reflect`, or evicted above capacity) or *lost*, and then the next sync re-sends it.
A listing that fails changes nothing: a store that does not answer must never cause a mass
re-send or a ledger rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from memfuse.ledger.ledger import HOLDING, Entry, Ledger, content_hash
from memfuse.report import Reporter
from memfuse.store.answers import StoredMemory
from memfuse.store.client import StoreClient
from memfuse.store.decay import priority_of, vitality
from memfuse.workspace.position import JOURNAL_PREFIXES

# Outcomes after which the memory sits at its pinned URI (a skip or a merge may sit elsewhere).
AT_URI = frozenset({"added", "updated", "lost"})
PRUNE = "`memfuse sync --prune` forgets them"
DELETE_BELOW = 0.05  # agent-memory 2.2's reflect deletes P3 memories below this vitality
DELETED_PRIORITY = 3


def expected_at_uri(entry: Entry) -> bool:
    """Whether the store should hold this ledger entry's memory at its URI."""
    if entry.uri is None or entry.outcome in ("forgotten", "rejected", "withdrawn", "resumed"):
        return False
    return entry.outcome in AT_URI or entry.created


@dataclass(frozen=True)
class Reconciliation:
    """What a verification found."""

    expected: int
    present: int
    lost: tuple[Entry, ...]
    forgotten: tuple[Entry, ...]
    altered: int = 0  # of `lost`, those present but no longer holding their bullet's text
    stale: int = 0  # gone, and so is their bullet from the journals (memfuse.ledger.stale)

    def as_dict(self) -> dict[str, int]:
        return {
            "expected": self.expected,
            "present": self.present,
            "lost": len(self.lost),
            "forgotten": len(self.forgotten),
            "altered": self.altered,
        } | ({"stale": self.stale} if self.stale else {})

    def line(self) -> str:
        if not self.lost and not self.forgotten and not self.stale:
            return f"index: all {self.expected} memories memfuse stored are in the store"
        parts = []
        if self.stale:
            parts.append(
                f"{self.stale} stale (no journal holds their bullet any more, so none is"
                f" re-sent: {PRUNE})"
            )
        if self.lost:
            reset = " (the store was reset?)" if self.present == 0 and not self.stale else ""
            parts.append(f"{len(self.lost)} lost{reset}, to be re-sent from the journals")
            if self.altered:
                parts.append(f"{self.altered} of them still there but no longer holding the text")
        if self.forgotten:
            parts.append(f"{len(self.forgotten)} forgotten by the store's decay, not re-sent")
        gone = self.expected - self.present
        where = " or no longer hold their text" if self.altered else ""
        return (
            f"index: {gone} of {self.expected} memories memfuse stored are gone from the"
            f" store{where}: {'; '.join(parts)}"
        )


def judge(entries: Iterable[Entry], listed: set[str], now: datetime) -> Reconciliation:
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
    return Reconciliation(len(expected), present, tuple(lost), tuple(forgotten))


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


def unheld(
    entries: Iterable[Entry], memories: Iterable[StoredMemory], texts: Mapping[str, str]
) -> list[Entry]:
    """The entries whose bullet's text the store's memory no longer holds (pure; `holds`).

    `texts`: each bullet's text now, by position. An entry whose bullet changed since is left
    to the sync that sends it; one whose memory is not among `memories`, to `judge`."""
    entries = list(entries)
    by_id = {m.id: m for m in memories if m.id}
    by_uri = {m.uri: m for m in memories if m.uri}
    # A listing may not name ids: a shared memory is found at the URI of the bullet that made it.
    home = {e.memory_id: e.uri for e in entries if e.memory_id and expected_at_uri(e)}
    found: list[Entry] = []
    for entry in entries:
        text = texts.get(entry.position)
        if text is None or entry.content_hash != content_hash(text):
            continue
        if entry.outcome not in HOLDING or not entry.memory_id:
            continue
        memory = by_id.get(entry.memory_id) or by_uri.get(home.get(entry.memory_id) or "")
        if memory is not None and not holds(memory.content, text):
            found.append(entry)
    return found


# Where agent-memory 4.x/5.x cut texts it merges into clauses (its `synthesize`, in the public
# source's src/core/merge.ts): a merged bullet is held as its clauses, joined with `；`.
_CLAUSE_ENDS = re.compile(r"[\n；;。.!?！？]+")


def holds(content: str, text: str) -> bool:
    """Whether a memory's content holds a bullet's text (pure): the text itself, whitespace
    aside, or every clause of it, as a later generation's merge keeps it."""
    whole = _squeezed(content)
    if _squeezed(text) in whole:
        return True
    clauses = [_squeezed(c) for c in _CLAUSE_ENDS.split(text)]
    return any(clauses) and all(c in whole for c in clauses if c)


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def verify_index(
    store: StoreClient,
    ledger: Ledger,
    now: datetime,
    reporter: Reporter,
    *,
    mark: bool = True,
    texts: Mapping[str, str] | None = None,
) -> Reconciliation | None:
    """Compare the store with the ledger; with `mark`, mark what it lost and what it forgot
    (with `texts`, a memory no longer holding its bullet's text is lost). None, after one
    warning and nothing changed, when the store could not be listed."""
    memories = store.memories_under(JOURNAL_PREFIXES)
    if memories is None:
        reporter.warn(NOT_LISTED)
        return None
    entries = ledger.all_entries()
    report = judge(entries, {m.uri for m in memories if m.uri}, now)
    if report.lost:
        report = _evicted_by_capacity(store, report)
    if texts is not None:
        missing = {e.position for e in report.lost}
        altered = tuple(e for e in unheld(entries, memories, texts) if e.position not in missing)
        if altered:
            reporter.info(
                f"index: {len(altered)} bullet(s) whose text the store's memory no longer"
                " holds (a shared memory rewritten?): to be re-sent"
            )
            report = replace(report, lost=report.lost + altered, altered=len(altered))
    if mark:
        ledger.mark((e.position for e in report.lost), "lost")
        ledger.mark((e.position for e in report.forgotten), "forgotten")
    reporter.info(report.line())
    return report


def _evicted_by_capacity(store: StoreClient, report: Reconciliation) -> Reconciliation:
    """Missing memories the store evicted above its capacity were forgotten, not lost."""
    evicted = store.evicted({e.uri for e in report.lost if e.uri})
    if not evicted:
        return report
    gone = tuple(e for e in report.lost if e.uri in evicted)
    lost = tuple(e for e in report.lost if e.uri not in evicted)
    return replace(report, lost=lost, forgotten=report.forgotten + gone)
