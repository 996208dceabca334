"""What a sync reads, and nothing it writes: the bullets of the days in scope as items set
against the ledger, the entries whose bullet is gone, the files read with their stamps, and
what the store answers about the memories a plan may change."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from memfuse.ledger.ledger import Entry, JournalStamp, Ledger, content_hash
from memfuse.store.client import NewMemory, StoreClient
from memfuse.sync.scope import InScope, stamp
from memfuse.text.classify import Classifier, Verdict
from memfuse.workspace.bullets import Bullet, Tally
from memfuse.workspace.layout import Journal, Workspace
from memfuse.workspace.position import SOURCE_PREFIX, JournalPosition
from memfuse.workspace.weekly import Warn

PARSED_KEPT = 400  # journals a reading keeps for the index (a year of dailies and some)


@dataclass(frozen=True)
class Item:
    """One bullet and what the ledger knows of its position."""

    position: JournalPosition
    bullet: Bullet
    verdict: Verdict
    digest: str
    previous: Entry | None

    @property
    def day(self) -> str:
        return self.position.day.isoformat()

    @property
    def memory_type(self) -> str:
        pinned = self.previous.memory_type if self.previous and self.previous.uri else None
        return pinned or self.verdict.type

    @property
    def uri(self) -> str:
        if self.previous is not None and self.previous.uri:
            return self.previous.uri
        return self.position.uri(self.verdict.type)

    @property
    def unchanged(self) -> bool:
        p = self.previous
        return p is not None and p.settles(self.digest)

    def memory(self) -> NewMemory:
        return NewMemory(self.bullet.text, self.memory_type, self.uri, self.position.source)


@dataclass
class Reading:
    """What a run read, by the day they hold."""

    days: list[str]
    items: list[Item]
    stale: dict[str, Entry]
    files: dict[
        str, list[tuple[str, JournalStamp]]
    ]  # by day: its files' locations and stamps when read
    unreadable: dict[str, str] = field(default_factory=dict)  # location -> why
    partial: set[str] = field(default_factory=set)  # days with a form that could not be read
    holds: dict[str, set[str]] = field(default_factory=dict)  # location -> the days it is a form of
    learned: tuple[Entry, ...] = ()  # entries whose memory id the store told this run
    tallies: dict[str, Tally] = field(default_factory=dict)  # what each form held, by location
    # The journals read whole, for the recall index (at most PARSED_KEPT, kept in memory).
    parsed: dict[date, Journal] = field(default_factory=dict)


@dataclass(frozen=True)
class Reader:
    """What reading a journal needs (the ledger is read, never written)."""

    workspace: Workspace
    ledger: Ledger | None
    classifier: Classifier
    warn: Warn

    def read(
        self, scope: InScope, *, named: bool, journals: Mapping[date, Journal] | None = None
    ) -> Reading:
        """Every bullet of the days in scope, as items against the ledger (`named`: a missing
        day is warned about; `journals`: days already read this run)."""
        for name in self.workspace.look_alikes():
            self.warn(
                f"{name!r} reads like a journal but is not one (a journal is named YYYY-MM-DD.md"
                " in ASCII digits, a real date from 1900 to 2999): not synced"
            )
        reading = Reading([], [], {}, {}, holds=scope.holds)
        self.days(reading, scope.days, scope.stamps, named=named, journals=journals)
        return reading

    def days(
        self,
        reading: Reading,
        days: Iterable[date],
        stamps: Mapping[str, JournalStamp],
        *,
        named: bool = False,
        journals: Mapping[date, Journal] | None = None,
    ) -> None:
        """Add the bullets of these days to what a run read."""
        workspace = self.workspace

        def unreadable(path: Path, why: str) -> None:
            reading.unreadable[workspace.location(path)] = why

        def passed(day: date, path: Path) -> None:
            where = workspace.location(path)
            files = reading.files.setdefault(day.isoformat(), [])
            found = stamps.get(where) or stamp(path)
            if found is not None and (where, found) not in files:
                files.append((where, found))

        for journal in workspace.journals(
            days, self.warn, missing=self.warn if named else None, unreadable=unreadable,
            read=journals, passed=passed,
        ):  # fmt: skip
            iso = journal.day.isoformat()
            reading.days.append(iso)
            for path in journal.read:
                passed(journal.day, path)
            for path, tally in journal.tallies:
                where = workspace.location(path)
                reading.tallies[where] = reading.tallies.get(where, Tally()) + tally
            if not journal.complete:
                reading.partial.add(iso)
            elif len(reading.parsed) < PARSED_KEPT:
                reading.parsed[journal.day] = journal
            known = self.ledger.entries_for([iso]) if self.ledger is not None else {}
            for position, bullet in journal.positioned():
                verdict = self.classifier.classify(bullet.text)
                digest = content_hash(bullet.text)
                reading.items.append(
                    Item(position, bullet, verdict, digest, known.pop(position.key, None))
                )
            if journal.complete:  # a form not read may hold the rest: nothing is taken for gone
                reading.stale.update(known)

    def siblings(self, reading: Reading, sharing: Mapping[str, Sequence[Entry]]) -> None:
        """Read the days of the bullets that share a memory with one this run may change, when
        they are not read already: the plan needs their text to send them again."""
        read = set(reading.days)
        wanted = {
            pos.day
            for entries in sharing.values()
            for e in entries
            if e.day not in read and (pos := JournalPosition.parse(e.position)) is not None
        }
        if wanted:
            self.days(reading, sorted(wanted), {})


def with_memory_ids(store: StoreClient, reading: Reading, *, prune: bool) -> Reading:
    """Entries taken back by a rebuild know a URI but not the memory's id: the ones this run
    may change are looked up (one call each): sharers are found, only memfuse's own deleted."""
    unknown = [
        i.previous for i in reading.items
        if not i.unchanged and i.previous and not i.previous.memory_id and i.previous.uri
    ]  # fmt: skip
    if prune:
        unknown += [e for e in reading.stale.values() if not e.memory_id and e.uri]
    if not unknown:
        return reading
    known: dict[str, Entry] = {}
    for entry in unknown:
        found = store.lookup(str(entry.uri))
        if found is None or not found.id:
            continue
        ours = (found.source or "").startswith(SOURCE_PREFIX)
        known[entry.position] = replace(entry, memory_id=found.id, created=ours)
    items = [
        replace(i, previous=known[i.position.key]) if i.position.key in known else i
        for i in reading.items
    ]
    stale = {p: known.get(p, e) for p, e in reading.stale.items()}
    return replace(reading, items=items, stale=stale, learned=tuple(known.values()))


def touched(reading: Reading, *, prune: bool) -> set[str]:
    """The memories a plan may change: those of the bullets to send, and with `prune` those of
    the stale bullets memfuse created (pure)."""
    ids = {i.previous.memory_id for i in reading.items if not i.unchanged and i.previous}
    if prune:
        ids |= {e.memory_id for e in reading.stale.values() if e.created}
    return {i for i in ids if i}
