"""Which journals a sync reads: what changed since a run last covered it (the default), one
day, a range ending today, or all of them; and every day that still holds a pending bullet."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from memfuse.ledger.ledger import JournalStamp, Ledger
from memfuse.workspace.layout import Journal, Workspace
from memfuse.workspace.position import JournalPosition


@dataclass(frozen=True)
class Scope:
    """Which journals to read (the options of `memfuse sync`)."""

    day: date | None = None
    since: date | None = None
    days: int | None = None
    all: bool = False

    @property
    def plain(self) -> bool:
        return not (self.all or self.day or self.since or self.days)

    @property
    def name(self) -> str:
        """What the run was asked to read, in the words of its option."""
        if self.plain:
            return "changed"
        if self.all:
            return "all"
        if self.day is not None:
            return f"date {self.day}"
        return f"since {self.since}" if self.since else f"days {self.days}"

    def select(self, available: list[date], today: date) -> list[date]:
        if self.all:
            return available
        if self.day is not None:
            return [self.day]
        start = self.since or today - timedelta(days=(self.days or 1) - 1)
        return [d for d in available if start <= d <= today]


@dataclass(frozen=True)
class InScope:
    """The days to read, and each journal file's stamp now and days it holds, by location."""

    days: list[date]
    stamps: dict[str, JournalStamp]
    holds: dict[str, set[str]]


def stamp(path: Path | str) -> JournalStamp | None:
    """A file's size, times and inode now; None when it is not there."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def in_scope(workspace: Workspace, scope: Scope, ledger: Ledger | None, today: date) -> InScope:
    """What a run reads: the days `scope` names (a plain run: those with a file changed since
    a run covered it), and every day the ledger still holds a pending bullet of."""
    sources = workspace.sources()
    where = {day: {workspace.location(f.path) for f in forms} for day, forms in sources.items()}
    top = os.fspath(workspace.root)
    now = {
        loc: found
        for loc in set().union(*where.values())
        if (found := stamp(os.path.join(top, loc)))
    }
    if scope.plain:
        covered = ledger.covered() if ledger is not None else {}
        chosen = {
            day for day, locs in where.items() if any(covered.get(x) != now.get(x) for x in locs)
        }
    else:
        chosen = set(scope.select(list(sources), today))
    if ledger is not None:
        pending = [
            *ledger.positions_with("lost"),
            *ledger.positions_with("resumed"),
            *(p for p, _attempt in ledger.pending()),
        ]
        chosen |= {pos.day for pos in map(JournalPosition.parse, pending) if pos} & set(sources)
    holds: dict[str, set[str]] = {}
    for day, locs in where.items():
        for loc in locs:
            holds.setdefault(loc, set()).add(day.isoformat())
    return InScope(sorted(chosen), now, holds)


def unchanged(
    parsed: Mapping[date, Journal],
    stamps: Mapping[str, JournalStamp],
    location: Callable[[Path], str],
) -> dict[date, Journal]:
    """Of the journals a run read, those whose every file still has the stamp it had when
    read (`stamps`, by location): what the run knows of them is what the files hold now."""
    return {
        day: journal
        for day, journal in parsed.items()
        if journal.read
        and all(
            (loc := location(path)) in stamps and stamp(path) == stamps[loc]
            for path in journal.read
        )
    }
