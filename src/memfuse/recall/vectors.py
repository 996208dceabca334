"""The recall index's vectors: each distinct bullet text's meaning, made by the installed model.

A vector is keyed by its text, not its row: a journal re-read into new rows (edited, archived,
rolled up) embeds only the texts that are new. A run embeds within a `EmbedBudget`, the rows
written last first, each step computed outside any write transaction and stored in a short
one: a process waiting on the index waits for a write, never for the model. A cold process
takes the vectors from the file beside the index (memfuse.recall.matrix) and reads from the
index only what changed since.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memfuse.errors import MemfuseError
from memfuse.recall import matrix
from memfuse.recall.semantic import Embedder, cosines, unpacked
from memfuse.state.folder import StateFolder
from memfuse.state.sqlite import immediate

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS vectors (content TEXT PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embedder (
    name TEXT PRIMARY KEY, pending INTEGER NOT NULL DEFAULT 1
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS docs_content ON docs(content);
"""
    + matrix.SCHEMA
)


@dataclass(frozen=True)
class EmbedBudget:
    """What one run may embed: at most `count` texts, `step` at a time. `seconds` is a safety
    valve, not a bound: no step begins past it, and a run it cut says so."""

    count: int
    seconds: float
    step: int = 256


# A question: itself and a few pending texts; a scheduled run, after the lock: what is new.
QUESTION = EmbedBudget(count=48, seconds=10.0, step=16)
RUN = EmbedBudget(count=20_000, seconds=600.0, step=256)

# The texts without a vector, the rows written last first (ids grow with each write): the
# scan stops once it has enough, however many rows the index holds.
_PENDING = (
    "SELECT content FROM docs d WHERE NOT EXISTS"
    " (SELECT 1 FROM vectors v WHERE v.content = d.content) ORDER BY id DESC"
)


def embed_pending(
    db: sqlite3.Connection,
    embedder: Embedder,
    budget: EmbedBudget,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[int, bool, bool]:
    """Embed the texts the index has no vector for, within `budget`: how many, whether some
    are left for a later run, and whether the safety valve cut it."""
    _same_model(db, embedder.name)
    row = db.execute("SELECT pending FROM embedder").fetchone()
    changes = 1 if row is None else int(row[0])  # refreshes that wrote rows since all had one
    if not changes or budget.count <= 0:
        return 0, bool(changes), False  # no row written since every text had its vector
    texts = pending_texts(db, budget.count + 1)
    left = len(texts) > budget.count
    texts = texts[: budget.count]
    done = 0
    started = clock()
    for at in range(0, len(texts), budget.step):
        if at and clock() - started > budget.seconds:
            return done, True, True
        batch = texts[at : at + budget.step]
        vectors = embedder.embed(batch)
        with immediate(db):
            if _model_of(db) != embedder.name:
                return done, True, False  # another process changed the model meanwhile
            db.executemany(
                "INSERT OR REPLACE INTO vectors (content, vec) VALUES (?, ?)",
                zip(batch, (bytes(v.tobytes()) for v in vectors), strict=True),
            )
            matrix.log_stored(db, batch)
        done += len(batch)
    if not left:  # all done, unless another process's refresh wrote rows meanwhile
        db.execute("UPDATE embedder SET pending = 0 WHERE pending = ?", (changes,))
    return done, left, False


def pending_texts(db: sqlite3.Connection, limit: int) -> list[str]:
    """Up to `limit` distinct texts without a vector, the rows written last first."""
    found: dict[str, None] = {}
    rows = db.execute(_PENDING)
    try:
        for (content,) in rows:
            found[str(content)] = None
            if len(found) >= limit:
                break
    finally:
        rows.close()  # the scan stops here: no statement left open before the writes
    return list(found)


def flag(db: sqlite3.Connection) -> None:
    """Rows were written (inside the refresh's transaction): a count, so that an embedding
    run that began before it does not take it down; and a new generation of the matrix."""
    db.execute("UPDATE embedder SET pending = pending + 1")
    matrix.bump(db)
    matrix.bound(db)


def drop_unheld(db: sqlite3.Connection, texts: list[str]) -> None:
    """Forget the vectors of these texts (a refresh's deleted rows') that no row holds any
    more: a refresh costs what it deleted, not the size of the index."""
    db.execute(
        "DELETE FROM vectors WHERE content IN (SELECT value FROM json_each(?)) AND NOT EXISTS"
        " (SELECT 1 FROM docs d WHERE d.content = vectors.content)",
        (json.dumps(texts, ensure_ascii=False),),
    )


@dataclass(frozen=True)
class LoadedVectors:
    """The vectors of every row `model` made, as a question is scored against them: the ids in
    order, their vectors, where each id is, and the positions of each row's neighbours in its
    file (its own where it has none); and what they were loaded from: the rows, the index's
    generation, the file's (-1: none) and how many rows were read from the index."""

    model: str
    ids: list[int]
    parts: tuple[Any, ...]  # the rows' vectors, a block after another (unpacked)
    at: dict[int, int]
    before: Any  # numpy int64 positions
    after: Any
    rows: matrix.Rows
    gen: int = 0
    made: int = -1
    read: int = 0

    def cosines(self, query: Any) -> Any:
        """The cosine of each row with `query`, in order."""
        import numpy as np

        return np.concatenate([cosines(part, query) for part in self.parts])

    @property
    def far(self) -> bool:
        """Not from the file, or so much read besides that the next process should not."""
        return self.made < 0 or self.read > max(FAR, len(self.ids) // 8)


FAR = 4096  # rows read besides the file past which a question writes the file again
_ALL = (
    "SELECT d.id, d.path, v.vec FROM docs d JOIN vectors v ON v.content = d.content ORDER BY d.id"
)
# Since the file's generation: rows above its last id or of an id deleted since (given again),
# and rows at or below it whose vector was stored since.
_NEWER = (
    "SELECT d.id, d.path, v.vec FROM docs d JOIN vectors v ON v.content = d.content"
    " WHERE d.id > ? OR d.id IN (SELECT id FROM dropped WHERE gen > ?)"
)
_EMBEDDED = (
    "SELECT d.id, d.path, v.vec FROM stored s JOIN vectors v ON v.content = s.content"
    " JOIN docs d ON d.content = s.content WHERE s.gen > ? AND d.id <= ?"
)


def load(db: sqlite3.Connection, model: str, state: StateFolder | None = None) -> LoadedVectors:
    """Every row with a vector `model` made: from the file in `state` and what changed since,
    when that file is the one recorded; else from the index."""
    db.execute("BEGIN")  # one snapshot of the index: its generation and its rows agree
    try:
        if _model_of(db) != model:
            return _loaded(model, matrix.Rows.of([]), 0, -1, 0)
        gen, made, record = matrix.recorded(db)
        kept = matrix.read(state, model, made, record) if state is not None else None
        if kept is None:
            rows = sql_rows(db, _ALL, ())
            return _loaded(model, matrix.Rows.of(rows), gen, -1, len(rows))
        dropped = [int(i) for (i,) in db.execute("SELECT id FROM dropped WHERE gen > ?", (made,))]
        high = int(kept.ids[-1]) if len(kept.ids) else 0
        changed = sql_rows(db, _NEWER, (high, made)) + sql_rows(db, _EMBEDDED, (made, high))
    finally:
        db.execute("COMMIT")
    return _loaded(model, kept.merged(dropped, changed), gen, made, len(changed))


def keep(
    db: sqlite3.Connection, state: StateFolder, loaded: LoadedVectors | None = None, model: str = ""
) -> bool:
    """Write the vectors' file from `loaded` (or `model`'s, loaded now) unless it is the file's
    own generation: whether it was written. Best-effort: the file only spares a read."""
    try:
        loaded = loaded or load(db, model, state)
        if loaded.made == loaded.gen:
            return False
        matrix.save(state, db, loaded.model, loaded.gen, loaded.rows)
    except (OSError, MemfuseError, sqlite3.Error):
        return False  # a full disk, a read-only or busy state folder: the rows are read
    return True


def sql_rows(
    db: sqlite3.Connection, query: str, args: tuple[int, ...]
) -> list[tuple[int, str, bytes]]:
    """Rows with their vectors, read from the index (what a file spares a cold process)."""
    return [(int(i), str(p), bytes(v)) for i, p, v in db.execute(query, args)]


def _loaded(model: str, rows: matrix.Rows, gen: int, made: int, read: int) -> LoadedVectors:
    import numpy as np

    own = np.arange(len(rows.ids), dtype=np.int64)
    same = rows.codes[1:] == rows.codes[:-1]  # n, n + 1 in the same file
    before, after = own.copy(), own.copy()
    before[1:][same] -= 1
    after[:-1][same] += 1
    ids = rows.ids.tolist()
    at = {row_id: n for n, row_id in enumerate(ids)}
    parts = tuple(unpacked(block) for block in rows.blocks if len(block)) or (rows.blocks[0],)
    return LoadedVectors(model, ids, parts, at, before, after, rows, gen, made, read)


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
        matrix.reset(db)
