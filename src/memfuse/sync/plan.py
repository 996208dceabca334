"""What a sync will do about what it read, decided before any call that changes the store
(pure: no file, no store, no clock)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memfuse.ledger.folds import Refold, plan_folds
from memfuse.ledger.ledger import Entry
from memfuse.sync.reading import Item, Reading


@dataclass(frozen=True)
class Plan:
    """What a sync will do, decided before any call that changes the store."""

    send: tuple[Item, ...]  # new, changed or pending bullets
    unchanged: int
    stale: dict[str, Entry]  # ledger entries whose bullet is gone from its journal
    prune: tuple[Entry, ...]  # of those, what --prune drops
    resend: tuple[Item, ...]  # unchanged bullets sharing a memory with one sent or pruned
    paused: str | None
    learned: tuple[Entry, ...] = ()  # memory ids the store told this run, to record
    refold: tuple[Refold, ...] = ()  # shared memories rewritten (memfuse.ledger.folds)

    def as_dict(self) -> dict[str, list[str] | int | str | None]:
        return {
            "send": [i.position.key for i in self.send],
            "unchanged": self.unchanged,
            "stale": sorted(self.stale),
            "prune": [e.position for e in self.prune],
            "resend": [i.position.key for i in self.resend],
            "refold": [r.anchor.position for r in self.refold],
            "paused": self.paused,
        }


def plan(
    reading: Reading,
    sharing: Mapping[str, Sequence[Entry]],
    *,
    paused: str | None,
    prune: bool,
) -> Plan:
    """What to do about what was read. `sharing`: the ledger entries of each memory `touched`
    names. A bullet that shares a memory with one sent (its memory rewritten) or pruned (its
    memory deleted) is sent again after them, as its own memory if the store now takes it as
    one: editing or deleting one bullet never takes another's text out."""
    if paused:
        return Plan((), 0, dict(reading.stale), (), (), paused)
    send = tuple(i for i in reading.items if not i.unchanged)
    dropped = tuple(e for _, e in sorted(reading.stale.items())) if prune else ()
    changed = {i.position.key for i in send} | set(reading.stale)
    # A memory memfuse made that a changed bullet shares is refolded: written once with its
    # members' texts now, its exact duplicates that changed sent on their own; no other
    # member is sent again (memfuse.ledger.folds). The rest are sent again after the change.
    edited = {i.previous.memory_id for i in send if i.previous and i.previous.memory_id}
    texts: dict[str, tuple[str, str] | None] = dict.fromkeys(reading.stale)
    texts.update((i.position.key, (i.bullet.text, i.digest)) for i in reading.items)
    folds = plan_folds({m: sharing[m] for m in sorted(edited) if m in sharing}, texts)
    refolds = tuple(f.refold for f in folds.values() if f.refold is not None)
    stored = {m.entry.position for r in refolds for m in r.carries}
    send = tuple(i for i in send if i.position.key not in stored)
    ids = {i.previous.memory_id for i in send if i.previous} - folds.keys()
    ids |= {e.memory_id for e in dropped if e.created}
    by_position = {i.position.key: i for i in reading.items}
    resend: dict[str, Item] = {}
    for memory_id in sorted(i for i in ids if i):
        for entry in sharing.get(memory_id, ()):
            item = by_position.get(entry.position)
            if entry.position not in changed and item is not None:
                resend.setdefault(entry.position, item)
    return Plan(
        send, len(reading.items) - len(send) - len(stored), dict(reading.stale), dropped,
        tuple(resend.values()), None, reading.learned, refolds,
    )  # fmt: skip
