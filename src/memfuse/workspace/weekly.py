"""Weekly roll-ups read as journals: a roll-up's `## YYYY-MM-DD` sections are forms of their
days (memfuse.workspace.forms), found where CommonMark sees a heading (memfuse.workspace.sections),
and a section for a day outside the roll-up's week is named, never synced."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, timedelta
from pathlib import Path
from typing import Protocol

from memfuse.workspace.journal import ParsedJournal
from memfuse.workspace.names import name_date
from memfuse.workspace.sections import split

Warn = Callable[[str], None]


class RollupSource(Protocol):
    """What the roll-ups are read through (the workspace object)."""

    misplaced: dict[Path, str]

    def read_weekly(
        self, path: Path, warn: Warn, odd: list[str] | None = None
    ) -> dict[date, list[ParsedJournal]] | None: ...

    def location(self, path: Path) -> str: ...


def weekly_sections(text: str) -> dict[date, list[ParsedJournal]]:
    """Each day's `## YYYY-MM-DD` sections of a weekly roll-up's text (sections.split)."""
    return split(text, heading_day)[0]


def heading_day(iso: str) -> date | None:
    return name_date(f"{iso}.md")


# How a roll-up's section for a day outside its week is named (in sync's warning and in
# `status`'s alarm), and how many such days one line shows.
MISPLACED = "holds a section"
SHOWN_DAYS = 5


class Weeklies:
    """The weekly roll-ups one pass over the journals reads, each read once: the pass goes day
    by day, so the last few are kept (a bounded cache, whatever the pass's length)."""

    KEEP = 4

    def __init__(self, workspace: RollupSource) -> None:
        self.workspace = workspace
        # each roll-up read: its sections (None: unreadable), its warning, whether it was gone
        self.read: dict[Path, tuple[dict[date, list[ParsedJournal]] | None, str, bool]] = {}

    def sections(self, path: Path, day: date, warn: Warn) -> list[ParsedJournal] | None:
        """The day's sections of this roll-up ([] when it holds none); None, with the same
        warning each time, when it cannot be read; FileNotFoundError when it is not there.
        Sections for days outside its week are never any day's (`_place`)."""
        if path not in self.read:
            if len(self.read) >= self.KEEP:
                del self.read[next(iter(self.read))]
            said: list[str] = []
            odd: list[str] = []  # day headings that name no real day
            gone = False
            try:
                found = self.workspace.read_weekly(path, said.append, odd)
            except FileNotFoundError:
                found, gone = {}, True
            self.read[path] = (found, said[-1] if said else "", gone)
            self._place(path, found or {}, odd, warn)
        found, why, gone = self.read[path]
        if why:
            warn(why)
        if found is None:
            return None
        if gone:
            raise FileNotFoundError(path)
        return found.get(day, [])

    def _place(
        self, path: Path, found: dict[date, list[ParsedJournal]], odd: list[str], warn: Warn
    ) -> None:
        """Note (and say) the sections of a roll-up just read that are no day of its week."""
        first = name_date(path.name)
        reasons = []
        if first is not None:
            last = first + timedelta(days=6)
            outside = [d for d in found if not first <= d <= last]
            if outside:
                reasons.append(
                    f"{MISPLACED} for a day outside the week it names, {first} to {last}:"
                    f" {_some(f'## {d}' for d in outside)}; not synced until it is moved to its"
                    f" day's journal (memory/{outside[0]}.md)"
                )
        if odd:
            reasons.append(
                f"{MISPLACED} under a heading that names no real day:"
                f" {_some(odd)}; not synced until the heading names its day"
            )
        if not reasons:
            self.workspace.misplaced.pop(path, None)
            return
        why = "; and ".join(reasons)
        self.workspace.misplaced[path] = why
        warn(f"{self.workspace.location(path)} {why}")


def _some(names: Iterable[str]) -> str:
    """The first few of a list, and how many more."""
    shown = list(names)
    more = f" and {len(shown) - SHOWN_DAYS} more" if len(shown) > SHOWN_DAYS else ""
    return ", ".join(shown[:SHOWN_DAYS]) + more
