"""Refolding shared memories (memfuse.ledger.folds) in the store, and recording what it did.

The plan's refolds are written as ordinary `remember` calls at each memory's anchor URI, all
of them concurrently, and every bullet a write carries is recorded (its attempt too) the
moment its answer arrives, as a bullet sent on its own would be.
"""

from __future__ import annotations

from collections.abc import Sequence

from memfuse.ledger.folds import Refold, carried
from memfuse.ledger.ledger import Ledger
from memfuse.store.client import NewMemory, StoreClient
from memfuse.store.generations import GENERATIONS, Generation
from memfuse.workspace.position import SOURCE_PREFIX, JournalPosition


def writes(refolds: Sequence[Refold], generation: Generation) -> list[NewMemory]:
    """The writes that refold these memories (pure): at the URI of the bullet that made each,
    its members' texts joined as a store of this generation joins a merge."""
    joiner = generation.merge_separator
    found = []
    for refold in refolds:
        anchor = refold.anchor
        position = JournalPosition.parse(anchor.position)
        source = position.source if position is not None else SOURCE_PREFIX
        memory = NewMemory(
            refold.text(joiner), anchor.memory_type or "knowledge", str(anchor.uri), source
        )
        found.append(memory)
    return found


def refold_writes(store: StoreClient, refolds: Sequence[Refold]) -> list[NewMemory]:
    """`writes` for this store's generation, asked only when there is something to refold
    (4.x's join when the store cannot say)."""
    if not refolds:
        return []
    return writes(refolds, store.generation() or GENERATIONS[1])


def send_refolds(
    store: StoreClient,
    ledger: Ledger,
    refolds: Sequence[Refold],
    counts: dict[str, int],
    now: str,
) -> set[str]:
    """Rewrite each shared memory once; record every bullet a write carries with the store's
    answer (a failed write records nothing: the next run plans it again). Each carried bullet
    is counted under the answer's action. The days with a failed write."""
    failed_days: set[str] = set()
    for index, outcome in store.remember_all(refold_writes(store, refolds)):
        refold = refolds[index]
        entries = carried(refold, outcome.action, outcome.memory_id)
        for entry in entries:
            counts[outcome.action] += 1
            ledger.log_attempt(entry.position, now, outcome.action, outcome.reason,
                               outcome.memory_id, entry.content_hash)  # fmt: skip
            if outcome.action == "failed":
                failed_days.add(entry.day)
            else:
                ledger.record(entry, now)
    return failed_days
