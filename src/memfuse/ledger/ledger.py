"""The sync ledger: what memfuse has already put into the store, per journal position.

One row per position (`Entry`). Each outcome is committed on its own, so a run killed
half-way keeps every result it had; a failed call is never recorded and is retried by the next
run.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import astuple, dataclass
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import immediate, open_or_set_aside, open_private_db

JournalStamp = tuple[int, int, int, int]  # a journal file's size, mtime_ns, ctime_ns and inode

# Outcomes that settle a position until its text changes.
# `forgotten`: the store deleted it by its own decay; re-sending would undo its forgetting.
# `withdrawn`: `memfuse rollback` forgot it on purpose; nothing is re-sent until it is undone.
# `lost` is not settled: the store lost it (memfuse.ledger.reconcile); the next sync re-sends it.
# `resumed` is not settled either: a rollback was undone, so the next sync sends it again.
SETTLED = {"added", "updated", "merged", "skipped", "rejected", "forgotten", "withdrawn"}
# Outcomes after which the store holds the bullet's text in some memory.
HOLDING = frozenset({"added", "updated", "merged", "skipped"})
ATTEMPTS_KEPT = 5  # the last attempts of each position, for `memfuse where`
# An entry's columns, in the order of Entry's fields.
_COLUMNS = "position, day, content_hash, outcome, uri, memory_type, memory_id, created, synced_at"
# S608: the SQL below is built of these constants alone.
_SELECT_ALL = f"SELECT {_COLUMNS} FROM entries"  # noqa: S608
_SELECT_SOME = f"{_SELECT_ALL} WHERE position IN (SELECT value FROM json_each(?))"  # noqa: S608
_SELECT_SHARING = (
    f"{_SELECT_ALL} WHERE memory_id IN (SELECT value FROM json_each(?))"  # noqa: S608
    " AND outcome NOT IN ('forgotten', 'withdrawn', 'rejected') ORDER BY position"
)
_INSERT = f"INTO entries ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


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

    def row(self, synced_at: str) -> tuple[Any, ...]:
        """The entry as the ledger's columns hold it, recorded at `synced_at`."""
        return (*astuple(self)[:-1], synced_at)


@dataclass(frozen=True)
class Attempt:
    """One remember of a bullet, as the store answered it (the reason, its own words)."""

    at: str
    outcome: str
    reason: str
    memory_id: str | None
    content_hash: str


class LedgerError(MemfuseError):
    """The ledger file cannot be opened or is not a memfuse ledger."""


# The ledger's schema. Only ever add to it: a file whose objects are not all among these is not
# memfuse's (memfuse.state.sqlite), and an altered table would make every older ledger so.
# Nothing reads or writes `files` and `settings` any more; they keep today's ledgers memfuse's.
SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    position TEXT PRIMARY KEY, day TEXT NOT NULL, content_hash TEXT NOT NULL,
    outcome TEXT NOT NULL, uri TEXT, memory_type TEXT, memory_id TEXT,
    created INTEGER NOT NULL DEFAULT 0, synced_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_day ON entries(day);
CREATE INDEX IF NOT EXISTS entries_memory ON entries(memory_id);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    covered_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY, position TEXT NOT NULL, at TEXT NOT NULL, outcome TEXT NOT NULL,
    reason TEXT NOT NULL, memory_id TEXT, content_hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_position ON attempts(position);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stamps (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL, inode INTEGER NOT NULL, covered_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS unreadable (
    path TEXT PRIMARY KEY, reason TEXT NOT NULL, since TEXT NOT NULL
);
"""


class Ledger:
    def __init__(self, state: StateFolder) -> None:
        self.path = state.ledger
        state.ensure()
        # A ledger made by this run (none was there, or the one there was set aside): the sync
        # rebuilds what it can from the store's own record of memfuse's memories.
        self.fresh = not os.path.lexists(self.path)
        try:
            self.db, old = open_or_set_aside(state, state.LEDGER, lambda: self._open(state))
        except sqlite3.OperationalError as exc:
            # A full disk, an I/O error, a lock held too long: the file is fine, this moment is
            # not. Moving it aside would forget every decision it holds (a rollback's pause).
            raise LedgerError(
                f"the sync ledger {self.path} cannot be opened now ({exc}); it was left as it is"
            ) from None
        except (sqlite3.DatabaseError, UnsafePath) as again:
            # Not memfuse's, or not usable, even made afresh.
            raise LedgerError(f"the sync ledger {self.path} cannot be used ({again})") from None
        except OSError as exc:
            raise LedgerError(f"cannot create {self.path}: {exc.strerror}") from None
        # Not memfuse's, or not usable, the old one was moved aside: the next sync rebuilds
        # what it held from the store, which answers every bullet it has as a duplicate.
        self.fresh = self.fresh or old is not None

    @staticmethod
    def _open(state: StateFolder) -> sqlite3.Connection:
        db = open_private_db(state, state.LEDGER, SCHEMA)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        return db

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One write transaction. LedgerError when it fails (a full disk, an I/O error): the
        run stops, since carrying on would make calls whose results cannot be kept."""
        try:
            with immediate(self.db):
                yield
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot write the sync ledger {self.path}: {exc}") from None

    def entries_for(self, days: Iterable[str]) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for day in days:
            rows = self.db.execute(f"{_SELECT_ALL} WHERE day = ?", (day,))
            found.update((row[0], _entry(row)) for row in rows)
        return found

    def all_entries(self) -> list[Entry]:
        return [_entry(row) for row in self.db.execute(_SELECT_ALL)]

    def sharing(self, memory_ids: Collection[str]) -> dict[str, list[Entry]]:
        """The entries whose memory is one of these, by memory id, but those the store no
        longer holds for memfuse (forgotten, withdrawn, rejected)."""
        if not memory_ids:
            return {}
        rows = self.db.execute(_SELECT_SHARING, (json.dumps(sorted(memory_ids)),))
        found: dict[str, list[Entry]] = {}
        for row in rows:
            entry = _entry(row)
            found.setdefault(str(entry.memory_id), []).append(entry)
        return found

    def made_elsewhere(self, memory_id: str, uri: str) -> bool:
        """Whether memfuse made this memory at another URI: a bullet skipped onto it is a copy
        (no lookup needed), not one a killed run made and did not record."""
        row = self.db.execute(
            "SELECT 1 FROM entries WHERE memory_id = ? AND created = 1 AND uri IS NOT ?",
            (memory_id, uri),
        ).fetchone()
        return row is not None

    def mark(self, positions: Iterable[str], outcome: str) -> None:
        """Set the outcome of these positions, keeping their URI, type and memory id."""
        rows = [(outcome, p) for p in positions]
        self._write("UPDATE entries SET outcome = ? WHERE position = ?", rows)

    # --- the files a run covered (a plain sync reads only what changed since) ---------------
    # The stamp holds ctime and inode too: an old mtime put back (`rsync -t`) still changes them.
    def covered(self) -> dict[str, JournalStamp]:
        """The stamp of every journal file as the last run that covered it saw it."""
        rows = self.db.execute("SELECT path, size, mtime_ns, ctime_ns, inode FROM stamps")
        return {str(row[0]): (int(row[1]), int(row[2]), int(row[3]), int(row[4])) for row in rows}

    def cover(self, files: Iterable[tuple[str, JournalStamp]], at: str) -> None:
        """Note files whose every bullet is settled, as they were when read."""
        rows = [(path, *stamp, at) for path, stamp in files]
        self._write(
            "INSERT OR REPLACE INTO stamps (path, size, mtime_ns, ctime_ns, inode, covered_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )

    def uncover(self, paths: Iterable[str]) -> None:
        self._write("DELETE FROM stamps WHERE path = ?", [(p,) for p in paths])

    # --- journals a sync could not read (an alarm in `status` until they can be) ----------
    def note_unreadable(
        self, found: Mapping[str, str], read: Iterable[str], gone: Iterable[str], at: str
    ) -> None:
        """Record the journal files that could not be read (the first time kept), and clear
        those read since and those gone."""
        with self._writing():
            self.db.executemany(
                "INSERT INTO unreadable (path, reason, since) VALUES (?, ?, ?)"
                " ON CONFLICT (path) DO UPDATE SET reason = excluded.reason",
                [(path, reason[:500], at) for path, reason in found.items()],
            )
            self.db.executemany(
                "DELETE FROM unreadable WHERE path = ?", [(p,) for p in {*read, *gone}]
            )

    def unreadable_paths(self) -> list[str]:
        return [str(row[0]) for row in self.db.execute("SELECT path FROM unreadable")]

    # --- attempts: every answer the store gave a bullet, the last few kept ----------------
    def log_attempt(
        self, position: str, at: str, outcome: str, reason: str, memory_id: str | None, digest: str
    ) -> None:
        """Log one remember's outcome (a failed one too), keeping the last ATTEMPTS_KEPT."""
        with self._writing():
            self.db.execute(
                "INSERT INTO attempts (position, at, outcome, reason, memory_id, content_hash)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (position, at, outcome, reason[:500], memory_id, digest),
            )
            self.db.execute(
                "DELETE FROM attempts WHERE position = ? AND id NOT IN (SELECT id FROM"
                " attempts WHERE position = ? ORDER BY id DESC LIMIT ?)",
                (position, position, ATTEMPTS_KEPT),
            )

    def pending(self) -> list[tuple[str, Attempt]]:
        """Positions whose last attempt failed and whose text no entry settles since."""
        return [(str(row[0]), Attempt(*row[1:])) for row in self.db.execute(_PENDING)]

    def _write(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        with self._writing():
            self.db.executemany(sql, rows)

    def positions_with(self, outcome: str) -> list[str]:
        rows = self.db.execute("SELECT position FROM entries WHERE outcome = ?", (outcome,))
        return [str(row[0]) for row in rows]

    def expected_count(self) -> int:
        """How many memories the store should hold at memfuse's URIs, each memory once (the
        count in SQL of memfuse.ledger.reconcile.expected_at_uri)."""
        row = self.db.execute(
            "SELECT count(DISTINCT coalesce(memory_id, 'uri:' || uri)) FROM entries"
            " WHERE uri IS NOT NULL AND outcome NOT IN"
            " ('forgotten', 'rejected', 'withdrawn', 'resumed')"
            " AND (outcome IN ('added', 'updated', 'lost') OR created = 1)"
        ).fetchone()
        return int(row[0])

    def adopt(self, entries: Iterable[Entry]) -> int:
        """Add entries of positions the ledger does not know yet; how many were added."""
        with self._writing():
            before = self.db.total_changes
            rows = [e.row(e.synced_at) for e in entries]
            self.db.executemany(f"INSERT OR IGNORE {_INSERT}", rows)
            return self.db.total_changes - before

    def record(self, entry: Entry, synced_at: str) -> None:
        """Commit one outcome (its own transaction; a failed write stops the run)."""
        with self._writing():
            self._insert(entry, synced_at)

    def _insert(self, entry: Entry, synced_at: str) -> None:
        """The row written (apart: the full-disk test makes it fail where a disk would)."""
        self.db.execute(f"INSERT OR REPLACE {_INSERT}", entry.row(synced_at))

    def forget(self, position: str) -> None:
        self._write("DELETE FROM entries WHERE position = ?", [(position,)])


# Since when each pending bullet's calls have failed (of the attempts kept).
_FAILING_SINCE = (
    "SELECT a.position, min(a.at) FROM attempts a WHERE a.outcome = 'failed' AND a.id >"
    " coalesce((SELECT max(b.id) FROM attempts b WHERE b.position = a.position AND"
    " b.outcome != 'failed'), 0) AND a.position IN (SELECT c.position FROM attempts c WHERE"
    " c.id = (SELECT max(id) FROM attempts WHERE position = c.position) AND c.outcome ="
    " 'failed' AND NOT EXISTS (SELECT 1 FROM entries e WHERE e.position = c.position AND"
    " e.content_hash = c.content_hash)) GROUP BY a.position ORDER BY a.position"
)
# The bullets whose last call failed, and no run has stored since: retried by the next sync.
_PENDING = (
    "SELECT a.position, a.at, a.outcome, a.reason, a.memory_id, a.content_hash"
    " FROM attempts a WHERE a.id = (SELECT max(id) FROM attempts WHERE position ="
    " a.position) AND a.outcome = 'failed' AND NOT EXISTS (SELECT 1 FROM entries e"
    " WHERE e.position = a.position AND e.content_hash = a.content_hash)"
    " ORDER BY a.position"
)
# The bullets the store's write gate refused, with its last reason.
_REJECTED = (
    "SELECT e.position, coalesce((SELECT reason FROM attempts a WHERE a.position ="
    " e.position ORDER BY a.id DESC LIMIT 1), '') FROM entries e"
    " WHERE e.outcome = 'rejected' ORDER BY e.position"
)


def _entry(row: tuple[Any, ...]) -> Entry:
    position, day, digest, outcome, uri, memory_type, memory_id, created, synced_at = row
    return Entry(
        position, day, digest, outcome, uri, memory_type, memory_id, bool(created), synced_at
    )
