"""The ledger memfuse kept in the workspace before its state moved out of the agent's reach
(`<workspace>/.memfuse/ledger.sqlite3`), imported once into the state folder.

That file sat where the agent writes, so it is read as hostile: through the same hardened
opener as every state database (no trigger or view it did not create runs, every statement
bounded, memfuse.state.sqlite), and row by row, each field checked; a row that is not one
memfuse could have written is left behind and counted. What a forged row could claim is
checked against the store anyway: tidy's nightly check re-sends what the store does not hold,
and nothing is ever forgotten in the store without finding it at its URI, by memfuse's source.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.ledger.ledger import SCHEMA, SETTLED, Entry, Ledger
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import open_read_only
from memfuse.workspace.position import JOURNAL_TYPES, JournalPosition

_HASH = re.compile(r"[0-9a-f]{64}")
_SHORT = 200  # a memory id or a timestamp longer than this was not written by memfuse


def import_ledger(legacy: StateFolder, ledger: Ledger) -> tuple[int, int]:
    """(imported, refused) rows of the legacy ledger; positions the new one knows are kept."""
    try:
        db = open_read_only(legacy, legacy.LEDGER, SCHEMA)
    except (sqlite3.Error, UnsafePath, OSError):
        return 0, 0  # not a ledger memfuse can read: the next sync rebuilds from the store
    if db is None:
        return 0, 0
    try:
        rows = db.execute(
            "SELECT position, day, content_hash, outcome, uri, memory_type, memory_id, created,"
            " synced_at FROM entries"
        ).fetchall()
    except sqlite3.Error:
        return 0, 0
    finally:
        db.close()
    entries = list(_valid(rows))
    return ledger.adopt(entries), len(rows) - len(entries)


def _valid(rows: list[tuple[Any, ...]]) -> Iterator[Entry]:
    for row in rows:
        position, day, digest, outcome, uri, memory_type, memory_id, created, synced_at = row
        where = JournalPosition.parse(position) if isinstance(position, str) else None
        if where is None or where.key != position or day != where.day.isoformat():
            continue
        if not (isinstance(digest, str) and _HASH.fullmatch(digest)):
            continue
        if outcome not in SETTLED | {"lost"} or created not in (0, 1):
            continue
        if uri is not None and (not isinstance(uri, str) or JournalPosition.parse(uri) != where):
            continue
        if uri is not None and uri.split("://", 1)[0] not in JOURNAL_TYPES:
            continue
        if memory_type is not None and memory_type not in JOURNAL_TYPES:
            continue
        if memory_id is not None and not (isinstance(memory_id, str) and len(memory_id) <= _SHORT):
            continue
        if not (isinstance(synced_at, str) and len(synced_at) <= _SHORT):
            continue
        yield Entry(position, day, digest, outcome, uri, memory_type, memory_id, bool(created),
                    synced_at)  # fmt: skip
