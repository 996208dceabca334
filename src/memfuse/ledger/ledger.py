"""The sync ledger: what memfuse has already put into the store, per journal position.

SQLite in `.memfuse/ledger.sqlite3`. One row per position (`YYYY-MM-DD#HHMM-N`) holding the
content hash last synced, the URI and type pinned at the first successful sync, the memory id,
and the outcome. Each outcome is committed on its own, so a run killed half-way keeps every
result it had; a failed call is never recorded and is retried by the next run.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import immediate, open_private_db, open_read_only, quarantine_db

SCHEMA_VERSION = 1

# Outcomes that settle a position until its text changes.
# `forgotten`: the store deleted it by its own decay; re-sending would undo its forgetting.
# `lost` is not settled: the store lost it (memfuse.ledger.reconcile); the next sync re-sends it.
SETTLED = {"added", "updated", "merged", "skipped", "rejected", "forgotten"}
_SELECT_ALL = (
    "SELECT position, day, content_hash, outcome, uri, memory_type, memory_id, created,"
    " synced_at FROM entries"
)
_SELECT_DAY = (
    "SELECT position, day, content_hash, outcome, uri, memory_type, memory_id, created,"
    " synced_at FROM entries WHERE day = ?"
)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Entry:
    position: str  # YYYY-MM-DD#HHMM-N
    day: str
    content_hash: str
    outcome: str
    uri: str | None  # pinned; None while nothing is stored for it (gate rejection)
    memory_type: str | None
    memory_id: str | None
    created: bool  # memfuse's own call created this memory (only those may be pruned)
    synced_at: str = ""  # when this outcome was recorded (ISO); ages the memory for decay

    def settles(self, digest: str) -> bool:
        """Whether this entry covers a bullet whose text hashes to `digest`: nothing to send."""
        return self.content_hash == digest and self.outcome in SETTLED


class LedgerError(MemfuseError):
    """The ledger file cannot be opened or is not a memfuse ledger."""


# The ledger's schema. Only ever add to it: a file whose objects are not all among these is not
# memfuse's (memfuse.state.sqlite), and an altered table would make every older ledger so.
SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    position TEXT PRIMARY KEY, day TEXT NOT NULL, content_hash TEXT NOT NULL,
    outcome TEXT NOT NULL, uri TEXT, memory_type TEXT, memory_id TEXT,
    created INTEGER NOT NULL DEFAULT 0, synced_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_day ON entries(day);
"""


class Ledger:
    def __init__(self, state: StateFolder) -> None:
        self.path = state.ledger
        state.ensure()
        try:
            self.db = self._open(state)
        except (sqlite3.DatabaseError, UnsafePath) as exc:
            # Not memfuse's, or not usable: moved aside. The next sync rebuilds what it held
            # from the store, which answers every bullet it already has as a duplicate.
            quarantine_db(state, state.LEDGER, str(exc))
            try:
                self.db = self._open(state)
            except (sqlite3.DatabaseError, UnsafePath) as again:
                raise LedgerError(f"the sync ledger {self.path} cannot be used ({again})") from None
        except OSError as exc:
            raise LedgerError(f"cannot create {self.path}: {exc.strerror}") from None

    @staticmethod
    def _open(state: StateFolder) -> sqlite3.Connection:
        db = open_private_db(state, state.LEDGER, SCHEMA)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return db

    def close(self) -> None:
        self.db.close()

    def entries_for(self, days: Iterable[str]) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for day in days:
            rows = self.db.execute(_SELECT_DAY, (day,))
            found.update((row[0], _entry(row)) for row in rows)
        return found

    def all_entries(self) -> list[Entry]:
        return [_entry(row) for row in self.db.execute(_SELECT_ALL)]

    def days_with(self, outcome: str) -> list[str]:
        rows = self.db.execute(
            "SELECT DISTINCT day FROM entries WHERE outcome = ? ORDER BY day", (outcome,)
        )
        return [row[0] for row in rows]

    def mark(self, positions: Iterable[str], outcome: str) -> None:
        """Set the outcome of these positions, keeping their URI, type and memory id."""
        try:
            with immediate(self.db):
                self.db.executemany(
                    "UPDATE entries SET outcome = ? WHERE position = ?",
                    [(outcome, p) for p in positions],
                )
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot write the sync ledger {self.path}: {exc}") from None

    def days(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT DISTINCT day FROM entries ORDER BY day")]

    def adopt(self, entries: Iterable[Entry]) -> int:
        """Add entries of positions the ledger does not know yet (one transaction); how many
        were added. For the migration of a legacy ledger (memfuse.ledger.legacy)."""
        rows = [
            (e.position, e.day, e.content_hash, e.outcome, e.uri, e.memory_type, e.memory_id,
             int(e.created), e.synced_at)
            for e in entries
        ]  # fmt: skip
        try:
            with immediate(self.db):
                before = self.db.total_changes
                self.db.executemany(
                    "INSERT OR IGNORE INTO entries (position, day, content_hash, outcome, uri,"
                    " memory_type, memory_id, created, synced_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
                return self.db.total_changes - before
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot write the sync ledger {self.path}: {exc}") from None

    def record(self, entry: Entry, synced_at: str) -> None:
        """Commit one outcome (its own transaction). A write that fails (disk full, I/O error)
        stops the run: carrying on would make calls whose results cannot be kept."""
        try:
            self._insert(entry, synced_at)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot write the sync ledger {self.path}: {exc}") from None

    def _insert(self, entry: Entry, synced_at: str) -> None:
        with immediate(self.db):
            self.db.execute(
                "INSERT OR REPLACE INTO entries (position, day, content_hash, outcome, uri,"
                " memory_type, memory_id, created, synced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.position, entry.day, entry.content_hash, entry.outcome, entry.uri,
                    entry.memory_type, entry.memory_id, int(entry.created), synced_at,
                ),
            )  # fmt: skip

    def forget(self, position: str) -> None:
        try:
            with immediate(self.db):
                self.db.execute("DELETE FROM entries WHERE position = ?", (position,))
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot write the sync ledger {self.path}: {exc}") from None


def outcome_counts(state: StateFolder) -> dict[str, int] | None:
    """How many ledger positions have each outcome, read-only; None when there is no ledger.

    For `memfuse status`: it opens the ledger without creating or migrating anything.
    """
    rows = _read_only(state, "SELECT outcome, COUNT(*) FROM entries GROUP BY outcome")
    return None if rows is None else {str(outcome): int(count) for outcome, count in rows}


def uris_of(state: StateFolder, memory_ids: Iterable[str]) -> dict[str, str]:
    """The URI memfuse gave each of these memories, read-only (for recall: agent-memory 2.2's
    recall answers no URI, 3.x and later `null`). A memory that several bullets were merged
    into has the URI of the bullet that created it."""
    wanted = sorted(set(memory_ids))
    if not wanted:
        return {}
    rows = _read_only(
        state,
        "SELECT memory_id, uri FROM entries WHERE uri IS NOT NULL"
        " AND memory_id IN (SELECT value FROM json_each(?))"
        " ORDER BY created",  # a created entry last, so it wins
        [json.dumps(wanted)],
    )
    return {str(memory_id): str(uri) for memory_id, uri in rows or ()}


def _read_only(
    state: StateFolder, query: str, parameters: Sequence[str] = ()
) -> list[tuple[Any, ...]] | None:
    """Rows of a query on the ledger opened read-only (nothing created, migrated or locked for
    writing); None when there is no ledger (or no state folder). LedgerError when it cannot be
    read."""
    if not state.exists():
        return None
    try:
        db = open_read_only(state, state.LEDGER, SCHEMA)
        if db is None:
            return None
        try:
            return db.execute(query, parameters).fetchall()
        finally:
            db.close()
    except (sqlite3.Error, UnsafePath) as exc:
        raise LedgerError(f"the sync ledger {state.ledger} cannot be read ({exc})") from None


def _entry(row: tuple[Any, ...]) -> Entry:
    position, day, digest, outcome, uri, memory_type, memory_id, created, synced_at = row
    return Entry(
        position, day, digest, outcome, uri, memory_type, memory_id, bool(created), synced_at
    )
