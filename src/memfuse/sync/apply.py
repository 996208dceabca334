"""Carrying out a sync's plan: the only step that writes. The plan's calls go to the store
concurrently, each outcome recorded in the ledger the moment it arrives; then the files read
are noted (covered), and the journals that could not be read kept on record."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from memfuse.ledger.ledger import Entry, Ledger
from memfuse.ledger.refolds import send_refolds
from memfuse.run.context import Advance
from memfuse.run.results import PrunedRow, RejectedRow
from memfuse.store.client import StoreClient
from memfuse.sync.plan import Plan
from memfuse.sync.reading import Item, Reading
from memfuse.workspace.layout import Workspace

COUNT_KEYS = (
    "added", "updated", "merged", "skipped", "rejected", "failed", "unchanged", "stale",
    "restored",
)  # fmt: skip

Progress = Callable[[str, int], AbstractContextManager[Advance]]


@dataclass
class Applied:
    """What applying a plan did."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNT_KEYS, 0))
    rejected: list[RejectedRow] = field(default_factory=list)
    failed_days: set[str] = field(default_factory=set)
    pruned: list[PrunedRow] = field(default_factory=list)


@dataclass(frozen=True)
class Applier:
    """The services a plan is carried out with, and the time its records bear."""

    store: StoreClient
    ledger: Ledger
    progress: Progress
    at: str  # the run's time, ISO seconds

    def apply(self, the_plan: Plan, applied: Applied) -> Applied:
        """Send, prune, then send again what shared a memory with either."""
        for entry in the_plan.learned:
            self.ledger.record(entry, entry.synced_at)
        # shared memories first: a bullet sent after may be folded into one of them again
        applied.failed_days |= send_refolds(
            self.store, self.ledger, the_plan.refold, applied.counts, self.at
        )
        self._send(list(the_plan.send), applied)
        self._prune(the_plan.prune, applied)
        if the_plan.resend:
            self._send(list(the_plan.resend), applied)
        return applied

    def _send(self, todo: list[Item], applied: Applied) -> None:
        """Remember each item concurrently; record every outcome the moment it arrives."""
        counts = applied.counts
        with self.progress("sync", len(todo)) as advance:
            for index, outcome in self.store.remember_all([item.memory() for item in todo]):
                item = todo[index]
                action = outcome.action
                lost = item.previous is not None and item.previous.outcome == "lost"
                counts["restored" if lost and action != "failed" else action] += 1
                advance()
                key = item.position.key
                self.ledger.log_attempt(
                    key, self.at, action, outcome.reason, outcome.memory_id, item.digest
                )
                if action == "failed":
                    applied.failed_days.add(item.day)
                    continue  # not recorded: the next run retries it
                if action == "rejected":
                    applied.rejected.append({"position": key, "reason": outcome.reason})
                memory_id = outcome.memory_id
                self.ledger.record(
                    Entry(
                        position=key,
                        day=item.day,
                        content_hash=item.digest,
                        outcome=action,
                        uri=item.uri if memory_id else None,
                        memory_type=item.memory_type if memory_id else None,
                        memory_id=memory_id,
                        created=self._created(item, action, memory_id),
                    ),
                    self.at,
                )

    def _created(self, item: Item, outcome: str, memory_id: str | None) -> bool:
        """Whether memfuse itself made this memory, the only kind `--prune` may delete."""
        previous = item.previous
        if previous is not None and previous.created and previous.memory_id == memory_id:
            return True
        if outcome == "added":
            return True
        if (
            outcome == "skipped"
            and memory_id
            and not self.ledger.made_elsewhere(memory_id, item.uri)
        ):
            # A run killed after the store added the memory but before the ledger recorded it:
            # the re-send is an exact duplicate of a memory at our URI with our source.
            found = self.store.lookup(item.uri)
            return (
                found is not None and found.id == memory_id and found.source == item.position.source
            )
        return False

    def _prune(self, stale: Sequence[Entry], applied: Applied) -> None:
        """Drop the stale entries; delete the memories memfuse created for them, unless a
        bullet still in a journal shares one now (this run's send may be `skipped` onto it)."""
        dropping = {e.position for e in stale}
        shared = self.ledger.sharing({e.memory_id for e in stale if e.created and e.memory_id})
        for entry in stale:
            position = entry.position
            others = [
                e for e in shared.get(entry.memory_id or "", ()) if e.position not in dropping
            ]
            delete = entry.created and bool(entry.memory_id) and not others
            if delete and not self.store.forget(str(entry.memory_id)):
                continue  # kept in the ledger: the next --prune tries again
            self.ledger.forget(position)
            applied.pruned.append(
                {"position": position, "memory_id": entry.memory_id, "deleted": delete}
            )


def note_files(
    ledger: Ledger,
    workspace: Workspace,
    reading: Reading,
    applied: Applied,
    *,
    paused: bool,
    at: str,
) -> None:
    """After the calls: note each file read whose bullets all settled (not while paused), and
    keep the journals that could not be read on record (an alarm in `status`)."""
    if not paused:
        _cover(ledger, reading, applied.failed_days, at)
    gone = [p for p in ledger.unreadable_paths() if not os.path.lexists(workspace.root / p)]
    # a roll-up read with a section outside its week stays on record until read without it
    misplaced = {workspace.location(p): why for p, why in workspace.misplaced.items()}
    found = {**misplaced, **reading.unreadable}
    read = [file[0] for files in reading.files.values() for file in files if file[0] not in found]
    ledger.note_unreadable(found, read, gone, at)


def _cover(ledger: Ledger, reading: Reading, failed_days: set[str], at: str) -> None:
    """Cover the files read, but those of a day with a failed call or a form not read, and a
    roll-up some of whose days this run did not read: the next run reads them again."""
    again = failed_days | reading.partial
    done = [file for day, files in reading.files.items() if day not in again for file in files]
    undone = {file[0] for day, files in reading.files.items() if day in again for file in files}
    undone |= {
        loc for loc, _stamp in done if not reading.holds.get(loc, set()) <= reading.files.keys()
    }
    ledger.cover([file for file in done if file[0] not in undone], at)
    ledger.uncover(sorted(undone))
