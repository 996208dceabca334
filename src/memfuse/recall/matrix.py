"""The recall index's vectors as one file beside it, memory-mapped by the next process.

Reading every vector out of the index cost a cold question 2.2 s at 146 000 bullets
(docs/performance.md). `recall-vectors.bin` (memfuse.recall.paged) holds the rows' ids, a code
for each row's file (its neighbours') and the int8 matrix; the next process maps it and reads
from the index only what changed since, known by generations the index keeps in the same
transactions as its writes: each refresh that writes rows and each embedding step is one, and
a stored text or a deleted row's id is logged with its generation until a file of it is
recorded. The file is used only when it is the very one recorded (docs/security.md).
"""

from __future__ import annotations

import json
import mmap
import os
import secrets
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.errors import MemfuseError
from memfuse.recall import paged
from memfuse.state.folder import StateFolder, fingerprint
from memfuse.state.sqlite import immediate

NAME = "recall-vectors.bin"
MAGIC = b"memfuse-vectors\x02"  # 16 bytes
HEADER_MAX = 16 << 20  # the paths of every file of the index, and a few numbers
DIM_MAX = 4096
DATA_MAX = 1 << 40  # far past any index: the file's size is checked against what it says
DROPPED_MAX = 20_000  # ids and texts logged for the file; past it the file is forgotten

SCHEMA = """
CREATE TABLE IF NOT EXISTS matrix (
    one INTEGER PRIMARY KEY CHECK (one = 1), gen INTEGER NOT NULL DEFAULT 0,
    made INTEGER NOT NULL DEFAULT -1, reset INTEGER NOT NULL DEFAULT 0,
    file TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS dropped (id INTEGER PRIMARY KEY, gen INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS stored (content TEXT PRIMARY KEY, gen INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS stored_gen ON stored(gen);
"""


@dataclass(frozen=True)
class Rows:
    """Rows with a vector: their ids (int64, increasing), a code for each one's file (int32,
    into `paths`) and their vectors (int8), in blocks (the file's, mapped, then those read)."""

    ids: Any
    codes: Any
    paths: list[str]
    blocks: tuple[Any, ...]

    @property
    def vecs(self) -> Any:
        """The vectors as one matrix (the blocks copied into one, when there are several)."""
        import numpy as np

        return self.blocks[0] if len(self.blocks) == 1 else np.concatenate(self.blocks)

    @staticmethod
    def of(rows: Sequence[tuple[int, str, bytes]], dim: int | None = None) -> Rows:
        """Rows read from the index (id, path, vector), in any order, an id twice taking its
        last; the vectors of another length than `dim` (the first's) left out."""
        import numpy as np

        by_id = {row_id: (path, vec) for row_id, path, vec in rows}
        dim = dim or (len(next(iter(by_id.values()))[1]) if by_id else 1)
        kept = sorted(i for i, (_p, vec) in by_id.items() if len(vec) == dim)
        paths: dict[str, int] = {}
        codes = [paths.setdefault(by_id[i][0], len(paths)) for i in kept]
        vecs = np.frombuffer(b"".join(by_id[i][1] for i in kept), dtype=np.int8)
        return Rows(
            np.array(kept, dtype=np.int64),
            np.array(codes, dtype=np.int32),
            list(paths),
            (vecs.reshape(len(kept), dim),),
        )

    def merged(self, dropped: list[int], changed: Sequence[tuple[int, str, bytes]]) -> Rows:
        """These rows without the `dropped` ids, with the `changed` rows in place of theirs."""
        import numpy as np

        fresh = Rows.of(changed, int(self.blocks[0].shape[1]))
        if not dropped and not len(fresh.ids):
            return self
        codes = {path: n for n, path in enumerate(self.paths)}
        remap = np.array([codes.setdefault(p, len(codes)) for p in fresh.paths], dtype=np.int32)
        if not dropped and (not len(self.ids) or fresh.ids[0] > self.ids[-1]):
            # only rows above the last (a sync's, a question's): a block after the others
            return Rows(
                np.concatenate([self.ids, fresh.ids]),
                np.concatenate([self.codes, remap[fresh.codes]]),
                list(codes),
                (*self.blocks, fresh.vecs),
            )
        gone = np.array([*dropped, *fresh.ids.tolist()], dtype=np.int64)
        keep = ~np.isin(self.ids, gone)
        ids = np.concatenate([self.ids[keep], fresh.ids])
        rows = Rows(
            ids,
            np.concatenate([self.codes[keep], remap[fresh.codes]]),
            list(codes),
            (np.concatenate([self.vecs[keep], fresh.vecs]),),
        )
        if len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1])):
            return rows
        order = np.argsort(ids, kind="stable")
        return Rows(ids[order], rows.codes[order], rows.paths, (rows.vecs[order],))


def bump(db: sqlite3.Connection) -> int:
    """A new generation of the vectors (inside the writing transaction): its number."""
    db.execute(
        "INSERT INTO matrix (one, gen) VALUES (1, 1) ON CONFLICT (one) DO UPDATE SET gen = gen + 1"
    )
    return int(db.execute("SELECT gen FROM matrix").fetchone()[0])


def reset(db: sqlite3.Connection) -> None:
    """Every vector was dropped (another model): no older file may be recorded."""
    gen = bump(db)
    db.execute("UPDATE matrix SET made = -1, file = '', reset = ?", (gen,))
    db.execute("DELETE FROM dropped")
    db.execute("DELETE FROM stored")


def log_dropped(db: sqlite3.Connection, name: str, from_line: int) -> None:
    """Note the ids of the rows about to be deleted (inside the refresh, before `bump`), where
    the index holds vectors at all; past DROPPED_MAX the file is forgotten instead."""
    db.execute(
        "INSERT OR REPLACE INTO dropped (id, gen) SELECT id, coalesce((SELECT gen FROM matrix), 0)"
        " + 1 FROM docs WHERE path = ? AND line >= ? AND EXISTS (SELECT 1 FROM embedder)",
        (name, from_line),
    )


def log_stored(db: sqlite3.Connection, texts: list[str]) -> None:
    """A new generation (in the embedding step's transaction) that stored these texts' vectors."""
    gen = bump(db)
    db.executemany(
        "INSERT OR REPLACE INTO stored (content, gen) VALUES (?, ?)", ((t, gen) for t in texts)
    )
    bound(db)


def bound(db: sqlite3.Connection) -> None:
    """Keep the logs bounded: past DROPPED_MAX ids or texts logged, forget the file."""
    (logged,) = db.execute(
        "SELECT (SELECT count(*) FROM dropped) + (SELECT count(*) FROM stored)"
    ).fetchone()
    if int(logged) > DROPPED_MAX:
        reset(db)


def recorded(db: sqlite3.Connection) -> tuple[int, int, str]:
    """The index's generation, the generation of the file recorded, and the file's record."""
    row = db.execute("SELECT gen, made, file FROM matrix").fetchone()
    return (0, -1, "") if row is None else (int(row[0]), int(row[1]), str(row[2]))


def read(state: StateFolder, model: str, made: int, record: str) -> Rows | None:
    """The file's rows, mapped, when it is the one recorded for `model`'s generation `made`."""
    expected, _, nonce = record.partition("/")
    if made < 0 or not nonce:
        return None
    try:
        fd = state.open(NAME, os.O_RDONLY, create=False)
    except (OSError, MemfuseError):  # not there; a link, a FIFO, another's: not used
        return None
    try:
        info = os.fstat(fd)
        if fingerprint(info) != expected or info.st_size < len(MAGIC) + 8:
            return None
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    try:
        return _rows(mapped, model, made, nonce)
    except (ValueError, KeyError, TypeError):
        return None


def _rows(mapped: mmap.mmap, model: str, made: int, nonce: str) -> Rows | None:
    import numpy as np

    header, start = paged.header(mapped, MAGIC, HEADER_MAX, DATA_MAX)
    if (header.get("model"), header.get("gen"), header.get("nonce")) != (model, made, nonce):
        return None
    found, paths = paged.arrays(header, mapped, start), header.get("paths")
    ids, codes, vecs = found["ids"], found["codes"], found["vecs"]
    if (ids.dtype, codes.dtype, vecs.dtype) != (np.int64, np.int32, np.int8) or vecs.ndim != 2:
        return None
    n = len(ids)
    if codes.shape != (n,) or len(vecs) != n or not 0 < vecs.shape[1] <= DIM_MAX:
        return None
    if not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
        return None
    if n and not (ids[0] > 0 and np.all(ids[1:] > ids[:-1])):
        return None
    if n and not (codes.min() >= 0 and codes.max() < len(paths)):
        return None
    return Rows(ids, codes, paths, (vecs,))


def save(state: StateFolder, db: sqlite3.Connection, model: str, gen: int, rows: Rows) -> bool:
    """Write `rows` (`model`'s at generation `gen`) as the file, and record it unless a newer
    file was recorded or the vectors were dropped since `gen`: whether it was recorded."""
    import numpy as np

    nonce = secrets.token_hex(8)
    arrays = {
        "ids": np.asarray(rows.ids, dtype=np.int64),
        "codes": np.asarray(rows.codes, dtype=np.int32),
        "vecs": np.asarray(rows.vecs, dtype=np.int8),
    }
    if len(json.dumps(rows.paths)) > HEADER_MAX - 4096:
        return False
    try:
        state.check(NAME)
    except UnsafePath as exc:  # a link, a FIFO, a folder planted under its name
        state.quarantine(NAME, str(exc))
    paged.sweep(state, lambda name: name.startswith(f".{NAME}.") and name.endswith(".tmp"))

    def fill(fd: int) -> None:
        fields = {"model": model, "gen": gen, "nonce": nonce, "paths": rows.paths}
        paged.write(fd, MAGIC, fields, arrays)

    record = f"{fingerprint(state.replace(NAME, fill))}/{nonce}"
    with immediate(db):
        done = db.execute(
            "UPDATE matrix SET made = ?, file = ? WHERE made <= ? AND reset <= ?",
            (gen, record, gen, gen),
        ).rowcount
        if done:
            db.execute("DELETE FROM dropped WHERE gen <= ?", (gen,))
            db.execute("DELETE FROM stored WHERE gen <= ?", (gen,))
    return bool(done)
