"""How a refresh of the recall index (memfuse.recall.index) writes a file's rows: its docs and
FTS rows in place of those it held (all of them, or from a line on: memfuse.recall.tail), the
count of rows each term is in kept exact, and a bounded share of FTS5's merge work after."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable

from memfuse.recall import matrix
from memfuse.recall.rows import Row, RowStamp

MERGE_PAGES = 64  # FTS5 segment pages merged after a refresh that changed something


def put(
    db: sqlite3.Connection, name: str, stamp: RowStamp, rows: list[Row], first_id: int, held: int
) -> None:
    """`rows` as the file's, numbered from `first_id`, and its stamp; `held`: its rows besides."""
    numbered = list(zip(range(first_id, first_id + len(rows)), rows, strict=True))
    db.executemany(
        "INSERT INTO docs (id, path, line, day, type, content) VALUES (?, ?, ?, ?, ?, ?)",
        [(i, name, *row[:4]) for i, row in numbered],
    )
    db.executemany(
        "INSERT INTO bullets (rowid, own, near1, near2, dates) VALUES (?, ?, ?, ?, ?)",
        [(i, *row[4:]) for i, row in numbered],
    )
    count(db, (row[4:] for row in rows), +1)
    db.execute(
        "INSERT OR REPLACE INTO files (path, mtime_ns, ctime_ns, ino, size, days, rows)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (name, *stamp, held + len(rows)),
    )


def drop_rows(db: sqlite3.Connection, name: str, from_line: int = 0) -> list[str]:
    """Delete the file's rows from `from_line` on (all of them by default): their texts."""
    old = db.execute(
        "SELECT own, near1, near2, dates FROM bullets"
        " WHERE rowid IN (SELECT id FROM docs WHERE path = ? AND line >= ?)",
        (name, from_line),
    ).fetchall()
    count(db, old, -1)
    matrix.log_dropped(db, name, from_line)
    texts = [
        str(row[0])
        for row in db.execute(
            "SELECT content FROM docs WHERE path = ? AND line >= ?", (name, from_line)
        )
    ]
    db.execute(
        "DELETE FROM bullets WHERE rowid IN (SELECT id FROM docs WHERE path = ? AND line >= ?)",
        (name, from_line),
    )
    db.execute("DELETE FROM docs WHERE path = ? AND line >= ?", (name, from_line))
    return texts


def count(db: sqlite3.Connection, rows: Iterable[tuple[str, ...]], sign: int) -> None:
    """Keep `terms` the number of rows that hold each term, in any column (as FTS5 matches)."""
    held: Counter[str] = Counter()
    for columns in rows:
        held.update(set(" ".join(columns).split()))
    db.executemany(
        "INSERT INTO terms (term, rows) VALUES (?, ?)"
        " ON CONFLICT (term) DO UPDATE SET rows = rows + excluded.rows",
        ((term, sign * n) for term, n in held.items()),
    )
    if sign < 0:
        db.executemany("DELETE FROM terms WHERE term = ? AND rows <= 0", ((term,) for term in held))


def compact(db: sqlite3.Connection) -> None:
    """A bounded share of FTS5's merge work, and the pages freed: what a refresh deleted is
    reclaimed instead of piling up with every touch of a journal."""
    db.execute("INSERT INTO bullets (bullets, rank) VALUES ('merge', ?)", (MERGE_PAGES,))
    (free,) = db.execute("PRAGMA freelist_count").fetchone()
    for _ in range(int(free)):  # Python's sqlite3 steps the pragma once: one page a call
        db.execute("PRAGMA incremental_vacuum(1)")
