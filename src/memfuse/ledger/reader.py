"""The sync ledger read without writing: by a run that must not create, migrate or lock it
(`memfuse status`, `where`, recall's URIs). Every read raises LedgerError when it fails; a
missing ledger reads as nothing."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.ledger.ledger import (
    _FAILING_SINCE,
    _PENDING,
    _REJECTED,
    _SELECT_SOME,
    SCHEMA,
    Attempt,
    Entry,
    LedgerError,
    _entry,
)
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import open_read_only


def uris_of(state: StateFolder, memory_ids: Iterable[str]) -> dict[str, str]:
    """The URI memfuse gave each of these memories, read-only (recall's answers hold none). A
    memory that several bullets were merged into has the URI of the bullet that created it."""
    wanted = sorted(set(memory_ids))
    reader = LedgerReader.open(state) if wanted else None
    if reader is None:
        return {}
    try:
        rows = reader.rows(
            "SELECT memory_id, uri FROM entries WHERE uri IS NOT NULL"
            " AND memory_id IN (SELECT value FROM json_each(?))"
            " ORDER BY created",  # a created entry last, so it wins
            [json.dumps(wanted)],
        )
    finally:
        reader.close()
    return {str(memory_id): str(uri) for memory_id, uri in rows}


class LedgerReader:
    """The ledger opened read-only once, for every read of a run (`memfuse status`)."""

    def __init__(self, state: StateFolder, db: sqlite3.Connection) -> None:
        self.state = state
        self.db = db

    @classmethod
    def open(cls, state: StateFolder) -> LedgerReader | None:
        """None when there is no ledger (or no state folder)."""
        if not state.exists():
            return None
        try:
            db = open_read_only(state, state.LEDGER, SCHEMA)
        except (sqlite3.Error, UnsafePath) as exc:
            raise LedgerError(f"the sync ledger {state.ledger} cannot be read ({exc})") from None
        return None if db is None else cls(state, db)

    def rows(self, query: str, parameters: Sequence[str] = ()) -> list[tuple[Any, ...]]:
        try:
            return self.db.execute(query, parameters).fetchall()
        except sqlite3.Error as exc:
            raise LedgerError(
                f"the sync ledger {self.state.ledger} cannot be read ({exc})"
            ) from None

    def entries_of(self, positions: Iterable[str]) -> dict[str, Entry]:
        """The entries of these positions (for `memfuse where`)."""
        rows = self.rows(_SELECT_SOME, [json.dumps(sorted(set(positions)))])
        return {row[0]: _entry(row) for row in rows}

    def attempts_of(self, positions: Iterable[str]) -> dict[str, list[Attempt]]:
        """The last attempts of these positions, oldest first."""
        rows = self.rows(
            "SELECT position, at, outcome, reason, memory_id, content_hash FROM attempts"
            " WHERE position IN (SELECT value FROM json_each(?)) ORDER BY id",
            [json.dumps(sorted(set(positions)))],
        )
        found: dict[str, list[Attempt]] = {}
        for row in rows:
            found.setdefault(str(row[0]), []).append(Attempt(*row[1:]))
        return found

    def outcome_counts(self) -> dict[str, int]:
        """How many positions have each outcome."""
        rows = self.rows("SELECT outcome, COUNT(*) FROM entries GROUP BY outcome")
        return {str(outcome): int(count) for outcome, count in rows}

    def pending(self) -> list[tuple[str, Attempt]]:
        """Ledger.pending, read-only."""
        return [(str(row[0]), Attempt(*row[1:])) for row in self.rows(_PENDING)]

    def failing_longer_than(self, now: datetime, after: timedelta) -> list[tuple[str, str]]:
        """(position, since when) of every pending bullet failing for longer than `after`."""
        found = []
        for position, at in self.rows(_FAILING_SINCE):
            try:
                since = datetime.fromisoformat(str(at))
            except ValueError:
                continue
            if since.tzinfo is not None and now - since > after:
                found.append((str(position), str(at)))
        return sorted(found, key=lambda row: row[1])

    def rejected(self) -> list[tuple[str, str]]:
        """(position, the store's reason) of every bullet its write gate refused."""
        return [(str(p), str(r)) for p, r in self.rows(_REJECTED)]

    def unreadable(self) -> list[tuple[str, str, str]]:
        """(location, why, since when) of every journal the last syncs could not read."""
        rows = self.rows("SELECT path, reason, since FROM unreadable ORDER BY path")
        return [(str(p), str(r), str(s)) for p, r, s in rows]

    def close(self) -> None:
        self.db.close()
