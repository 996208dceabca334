"""The recall index's vectors: each distinct bullet text's meaning, made by the installed model.

A vector is keyed by the text it was made from, not by the row: a journal edited, archived or
rolled up is re-read into new rows, and only a text the index has no vector for is embedded
(a new or edited bullet). At most `limit` texts a refresh, newest day first, each batch
computed outside any write transaction and stored in a short one of its own: a year's journals
on a first run are embedded over a few runs instead of holding up one, and a process waiting
on the index waits for a write, never for the model. Vectors of texts no row holds any more
are dropped when a refresh changed something. A different model starts them all again.
"""

from __future__ import annotations

import itertools
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memfuse.recall.semantic import Embedder, unpacked
from memfuse.state.sqlite import immediate

if TYPE_CHECKING:
    from memfuse.recall.semantic import Matrix

SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (content TEXT PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embedder (
    name TEXT PRIMARY KEY, pending INTEGER NOT NULL DEFAULT 1
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS docs_content ON docs(content);
"""
# Texts embedded by one refresh: sync's, at night (a few seconds of one core:
# docs/performance.md), and the one before a question, which a person or an agent waits for.
PER_REFRESH = 5000
PER_QUESTION = 200
STEP = 256  # texts embedded, then written, at a time

_PENDING = (
    "SELECT content FROM docs d WHERE NOT EXISTS"
    " (SELECT 1 FROM vectors v WHERE v.content = d.content)"
    " GROUP BY content ORDER BY max(coalesce(day, '9999')) DESC, min(id) LIMIT ?"
)


def embed_pending(db: sqlite3.Connection, embedder: Embedder, limit: int) -> tuple[int, bool]:
    """Embed up to `limit` texts the index has no vector for: how many, and whether some are
    left for a later refresh."""
    _same_model(db, embedder.name)
    changes = _changes(db)
    if not changes:
        return 0, False  # no row written since every text had its vector: no scan
    texts = [str(row[0]) for row in db.execute(_PENDING, (limit + 1,)).fetchall()]
    pending = texts[limit:]
    texts = texts[:limit]
    done = 0
    for at in range(0, len(texts), STEP):
        batch = texts[at : at + STEP]
        vectors = embedder.embed(batch)
        with immediate(db):
            if _model_of(db) != embedder.name:
                return done, True  # another process changed the model meanwhile: later
            db.executemany(
                "INSERT OR REPLACE INTO vectors (content, vec) VALUES (?, ?)",
                zip(batch, (bytes(v.tobytes()) for v in vectors), strict=True),
            )
        done += len(batch)
    if not pending:  # all done, unless another process's refresh wrote rows meanwhile
        db.execute("UPDATE embedder SET pending = 0 WHERE pending = ?", (changes,))
    return done, bool(pending)


def flag(db: sqlite3.Connection) -> None:
    """Rows were written: texts may be without a vector (inside the refresh's transaction).
    A count, so that an embedding run that began before it does not take it down."""
    db.execute("UPDATE embedder SET pending = pending + 1")


def _changes(db: sqlite3.Connection) -> int:
    """The refreshes that wrote rows since every text last had its vector (0: none)."""
    row = db.execute("SELECT pending FROM embedder").fetchone()
    return 1 if row is None else int(row[0])


def drop_unheld(db: sqlite3.Connection) -> None:
    """Forget the vectors of texts no row holds any more (inside the refresh's transaction)."""
    db.execute(
        "DELETE FROM vectors WHERE NOT EXISTS"
        " (SELECT 1 FROM docs d WHERE d.content = vectors.content)"
    )


@dataclass(frozen=True)
class Loaded:
    """The vectors of every row `model` made, as a question is scored against them: the rows'
    ids in order, their vectors (memfuse.recall.semantic.unpacked), where each id is, and the
    positions of each row's neighbours — the rows before and after it in the same file (a
    file's rows are written in its order), or its own position where it has none."""

    model: str
    ids: list[int]
    matrix: Any
    at: dict[int, int]
    before: Any  # numpy int64 positions
    after: Any


def load(db: sqlite3.Connection, model: str) -> Loaded:
    """Every row with a vector `model` made (none when the index's vectors are another
    model's)."""
    import numpy as np

    query = (
        "SELECT d.id, d.path, v.vec FROM docs d JOIN vectors v ON v.content = d.content"
        " ORDER BY d.id"
    )
    rows = (
        [(int(i), str(p), bytes(v)) for i, p, v in db.execute(query)]
        if _model_of(db) == model
        else []
    )
    dim = len(rows[0][2]) if rows else 1
    rows = [row for row in rows if len(row[2]) == dim]  # not one model's: ignored until re-embedded
    ids = [row_id for row_id, _path, _vec in rows]
    paths = [path for _id, path, _vec in rows]
    matrix: Matrix = np.frombuffer(b"".join(v for *_, v in rows), dtype=np.int8).reshape(
        len(rows), dim
    )
    own = np.arange(len(ids), dtype=np.int64)
    same = np.array([a == b for a, b in itertools.pairwise(paths)], dtype=bool)  # n, n + 1
    before, after = own.copy(), own.copy()
    before[1:][same] -= 1
    after[:-1][same] += 1
    at = {row_id: n for n, row_id in enumerate(ids)}
    return Loaded(model, ids, unpacked(matrix), at, before, after)


def _model_of(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT name FROM embedder").fetchone()
    return None if row is None else str(row[0])


def _same_model(db: sqlite3.Connection, name: str) -> None:
    """The vectors are this model's: another's are dropped (their cosines mean nothing here)."""
    if _model_of(db) == name:
        return
    with immediate(db):
        db.execute("DELETE FROM vectors")
        db.execute("DELETE FROM embedder")
        db.execute("INSERT INTO embedder (name) VALUES (?)", (name,))
