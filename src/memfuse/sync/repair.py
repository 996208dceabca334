"""The ledger put right before a sync reads: a fresh ledger takes back what the store holds at
memfuse's journal URIs, and a store that looks reset (or `--verify`) is checked against the
ledger and every bullet's text, the memories it lost marked to be sent again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime

from memfuse.ledger.ledger import Entry, Ledger, content_hash
from memfuse.ledger.reconcile import Reconciliation, verify_index
from memfuse.ledger.stale import gone_from_journals
from memfuse.report import Reporter
from memfuse.store.answers import StoreStatus
from memfuse.store.client import StoreClient
from memfuse.workspace.layout import Journal, Workspace
from memfuse.workspace.position import JOURNAL_PREFIXES, JournalPosition


@dataclass
class Repair:
    """What the repair step did (its journals handed on, so that none is read twice)."""

    rebuilt: int = 0
    report: Reconciliation | None = None
    stale: set[str] = field(default_factory=set)  # of the lost, those no journal holds now
    journals: dict[date, Journal] = field(default_factory=dict)


def repair(
    store: StoreClient,
    ledger: Ledger | None,
    workspace: Workspace,
    reporter: Reporter,
    *,
    probe: StoreStatus | None,
    now: datetime,
    verify: bool,
    dry_run: bool,
) -> Repair:
    """Put the ledger right before reading; `probe` is the store's status of this run."""
    done = Repair()
    if ledger is None:
        return done
    # a first sync on an empty store has nothing to take back
    if ledger.fresh and probe is not None and (probe.total is None or probe.total > 0):
        done.rebuilt = rebuild(store, ledger, reporter.info, reporter.warn, now)
    if verify or _looks_reset(probe, ledger):
        journals = {j.day: j for j in workspace.journals(workspace.sources(), reporter.warn)}
        texts = {p.key: b.text for j in journals.values() for p, b in j.positioned()}
        done.report = verify_index(store, ledger, now, reporter, mark=not dry_run, texts=texts)
        done.journals = journals
        if done.report is not None:  # warned of once already, by the reading above
            done.stale = gone_from_journals(
                workspace, done.report.lost, lambda _m: None, read=journals
            )
    return done


def rebuild(
    store: StoreClient,
    ledger: Ledger,
    info: Callable[[str], None],
    warn: Callable[[str], None],
    now: datetime,
) -> int:
    """A fresh ledger takes back what the store holds at memfuse's journal URIs, so that the
    sync sends only what differs; how many entries were taken back."""
    memories = store.memories_under(JOURNAL_PREFIXES)
    if memories is None:
        warn("the store's journal memories could not be listed: nothing rebuilt")
        return 0
    at = now.isoformat(timespec="seconds")
    entries = []
    for memory in memories:
        position = JournalPosition.parse(memory.uri)
        if position is None or memory.uri != position.uri(memory.type):
            continue
        entries.append(
            Entry(position.key, position.day.isoformat(), content_hash(memory.content.strip()),
                  "added", memory.uri, memory.type, None, created=False, synced_at=at)
        )  # fmt: skip
    taken = ledger.adopt(entries)
    if taken:
        info(f"the sync ledger was rebuilt from the store: {taken} memories")
    return taken


def _looks_reset(probe: StoreStatus | None, ledger: Ledger) -> bool:
    """The cheap check: the store holds fewer memories than memfuse alone put there."""
    if probe is None or probe.total is None:
        return False
    return probe.total < ledger.expected_count()
