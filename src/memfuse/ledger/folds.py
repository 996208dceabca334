"""How the store folds several bullets into one memory, and what an edit does to such a fold.

agent-memory keeps one memory for several bullets in two ways (docs/reference.md, agent-memory):
- an exact duplicate is answered `skipped` with the existing memory's id, and its URI is not
  created: the bullet is held while that memory's text is its text;
- a near duplicate is answered `merged` into an existing memory whose text becomes
  `old\\n\\n[Updated] new` (2.x, 3.x) or `old；new` (4.x, 5.x, which also attach the write's
  URI to that memory).

Either way the memory's text is made of its members' texts, and every URI the store binds to
it (the one memfuse created it at; on 4.x/5.x every merged write's too) reaches that one
memory: a `remember` at any of them rewrites the whole text. So when a member's text changes,
the memory is written once, at the URI of the bullet that created it, with the text the store
itself would have made of its members as they read now (`Refold`): each bullet's current text
is held, the old one is not, and the cost is one call per memory whose text changed, not one
per copy. An exact duplicate that changes is no longer one: it is sent on its own and leaves
the memory, which is rewritten only when it held a text no other member still has.

A memory memfuse did not create (an agent's own `remember`, the server's auto-ingest) holds a
text memfuse does not know: it is never rewritten here. Its exact duplicates that changed
leave it as above; for any other change `plan_fold` answers None and the sync falls back to
sending the changed bullets, and again those sharing their memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memfuse.ledger.ledger import HOLDING, Entry

# A memory the store lost (or a rollback undone) is sent again bullet by bullet, not refolded.
UNSETTLED = frozenset({"lost", "resumed"})


@dataclass(frozen=True)
class Member:
    """One bullet the ledger keeps in a shared memory, and its text now."""

    entry: Entry
    text: str | None  # None: gone from its journal (stale)
    digest: str | None

    @property
    def changed(self) -> bool:
        return self.digest != self.entry.content_hash

    @property
    def duplicate(self) -> bool:
        """An exact duplicate: the store holds it only while the memory's text equals it."""
        return self.entry.outcome == "skipped" and not self.entry.created


@dataclass(frozen=True)
class Refold:
    """One write that puts a shared memory's members' current texts into it."""

    memory_id: str
    anchor: Entry  # the entry whose URI the store binds to the memory (memfuse created it there)
    parts: tuple[str, ...]  # the distinct texts it is to hold, in the journals' order
    carries: tuple[Member, ...]  # the changed bullets this write stores

    def text(self, joiner: str) -> str:
        return joiner.join(self.parts)


@dataclass(frozen=True)
class FoldPlan:
    """What an edit does to one shared memory: a rewrite (or none), and the changed bullets
    that leave it to be sent on their own (exact duplicates no longer)."""

    refold: Refold | None
    leave: tuple[str, ...]


def plan_fold(memory_id: str, members: Sequence[Member]) -> FoldPlan | None:
    """What to do about the members of one memory after some changed (pure). None when the
    fold is not modelled here: a member the store lost (sent again as it is), or a memory
    memfuse did not make that changed otherwise than by exact duplicates leaving it."""
    members = sorted(members, key=lambda m: m.entry.position)
    if any(m.entry.outcome in UNSETTLED for m in members):
        return None
    holding = [m for m in members if m.entry.outcome in HOLDING]
    leave = tuple(m.entry.position for m in holding if m.changed and m.duplicate and m.text)
    anchor = next((m.entry for m in members if m.entry.created and m.entry.uri), None)
    if anchor is None:
        # Not memfuse's memory (an agent's own, the server's auto-ingest): its text is not
        # known here and is never rewritten. Exact duplicates that changed leave it without
        # touching it (their URI is not bound to it); any other change is not modelled.
        changed = [m for m in members if m.changed]
        if changed and all(m.entry.position in leave for m in changed):
            return FoldPlan(None, leave)
        return None
    stay = [m for m in holding if m.text is not None and m.entry.position not in leave]
    before = {m.entry.content_hash for m in holding}
    parts: dict[str, str] = {}
    for m in stay:
        parts.setdefault(str(m.digest), str(m.text))
    if not parts or set(parts) == before:
        return FoldPlan(None, leave)  # the memory's text holds every staying bullet already
    carries = tuple(m for m in stay if m.changed)
    return FoldPlan(Refold(memory_id, anchor, tuple(parts.values()), carries), leave)


def plan_folds(
    sharing: Mapping[str, Sequence[Entry]], texts: Mapping[str, tuple[str, str] | None]
) -> dict[str, FoldPlan]:
    """`plan_fold` for every shared memory a change touches (pure). `texts`: each member's
    text and digest now by position, None when its bullet is gone; a memory with a member
    whose text is not known (its journal not read) is left out, as is one `plan_fold` cannot
    model."""
    plans: dict[str, FoldPlan] = {}
    for memory_id, entries in sharing.items():
        if any(e.position not in texts for e in entries):
            continue
        members = []
        for entry in entries:
            now = texts[entry.position]
            members.append(Member(entry, *(now if now is not None else (None, None))))
        found = plan_fold(memory_id, members)
        if found is not None:
            plans[memory_id] = found
    return plans


def carried(refold: Refold, action: str, memory_id: str | None) -> list[Entry]:
    """The ledger entries of the bullets a refold stored, once the store answered `action`
    with `memory_id` (pure; a failed write records nothing: the next run plans it again).
    On `updated` (the memory rewritten at its anchor) each keeps how it came into the memory;
    any other answer is recorded as it is, as for a bullet sent on its own."""
    found = []
    for member in refold.carries:
        entry = member.entry
        if action == "updated":
            outcome = (
                entry.outcome if entry.outcome in ("added", "updated", "merged") else "updated"
            )
        else:
            outcome = action
        found.append(
            Entry(
                entry.position, entry.day, str(member.digest), outcome,
                entry.uri if memory_id else None, entry.memory_type if memory_id else None,
                memory_id, created=entry.created and memory_id == entry.memory_id,
            )
        )  # fmt: skip
    return found
