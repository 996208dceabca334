"""What a sync will do about what it read, decided before any call that changes the store
(pure: no file, no store, no clock)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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

    def as_dict(self) -> dict[str, list[str] | int | str | None]:
        return {
            "send": [i.position.key for i in self.send],
            "unchanged": self.unchanged,
            "stale": sorted(self.stale),
            "prune": [e.position for e in self.prune],
            "resend": [i.position.key for i in self.resend],
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
    ids = {i.previous.memory_id for i in send if i.previous} | {
        e.memory_id for e in dropped if e.created
    }
    by_position = {i.position.key: i for i in reading.items}
    resend: dict[str, Item] = {}
    for memory_id in sorted(i for i in ids if i):
        for entry in sharing.get(memory_id, ()):
            item = by_position.get(entry.position)
            if entry.position not in changed and item is not None:
                resend.setdefault(entry.position, item)
    return Plan(
        send, len(reading.items) - len(send), dict(reading.stale), dropped,
        tuple(resend.values()), None, reading.learned,
    )  # fmt: skip
