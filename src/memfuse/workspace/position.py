"""Where a bullet stands: its journal's day, its section's time and its count in that section.

A position is the stable name of a bullet (SPEC §5), written as the ledger's key and as the
URI of the memory synced from it (`uri`); both are built and read here alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, tzinfo

# The types a journal bullet can be classified as: the schemes of journal URIs.
JOURNAL_TYPES = ("event", "knowledge", "emotion")
# The URI prefixes under which the store holds every memory memfuse synced.
JOURNAL_PREFIXES = tuple(f"{t}://journal/" for t in JOURNAL_TYPES)
SOURCE_PREFIX = "memory-sync:"

_KEY = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})#([0-9]{2})([0-9]{2})-([1-9][0-9]*)")
_URI = re.compile(r"([a-z]+)://journal/(.+)")


@dataclass(frozen=True, order=True)
class JournalPosition:
    day: date
    section: str  # HHMM of the bullet's section, "0000" when it has none
    n: int  # 1-based count of bullets with this section key, in file order

    @property
    def key(self) -> str:
        """The ledger's name for it: `YYYY-MM-DD#HHMM-N`."""
        return f"{self.day.isoformat()}#{self.section}-{self.n}"

    def uri(self, memory_type: str) -> str:
        return f"{memory_type}://journal/{self.key}"

    @property
    def source(self) -> str:
        """The `source` every memory synced from this day carries (rollback finds them by it)."""
        return f"{SOURCE_PREFIX}{self.day.isoformat()}"

    def moment(self, tz: tzinfo | None = None) -> datetime:
        """When its section happened: the day at its `HHMM` (`0000`: the start of the day)."""
        hour, minute = min(int(self.section[:2]), 23), min(int(self.section[2:]), 59)
        return datetime.combine(self.day, time(hour, minute), tzinfo=tz)

    @classmethod
    def parse(cls, text: str | None) -> JournalPosition | None:
        """A ledger key or a journal URI read back; None for anything else."""
        if not text:
            return None
        uri = _URI.fullmatch(text)
        match = _KEY.fullmatch(uri[2] if uri else text)
        if match is None:
            return None
        try:
            day = date.fromisoformat(match[1])
        except ValueError:
            return None
        return cls(day, match[2] + match[3], int(match[4]))

    def __str__(self) -> str:
        return self.key
