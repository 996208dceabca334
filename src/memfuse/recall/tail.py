"""The recall index takes what was appended to a journal, not the whole file again.

A daily journal of TAIL_MIN or more, once read whole, gets a checkpoint (`tails`): when it only
grew since, it is read from its last section's fourth-last bullet and its rows are replaced from
the second-last's on (the two before it read as its neighbours). That reads what the whole file
reads, because the plain reading closes everything at a column-0 heading or item; where that is
not shown (`_from`, `only_day`, an edit before the end, a file that shrank) it is read whole.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import sqlite3
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from memfuse.confine import UnsafePath
from memfuse.recall.rows import Days, Row, bullet_rows
from memfuse.text.classify import Classifier
from memfuse.workspace.bullets import Bullet
from memfuse.workspace.journal import plain_part
from memfuse.workspace.layout import Workspace
from memfuse.workspace.names import DAILY

SCHEMA = """
CREATE TABLE IF NOT EXISTS tails (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, digest BLOB NOT NULL,
    at INTEGER NOT NULL, line INTEGER NOT NULL, key TEXT NOT NULL, written INTEGER NOT NULL,
    keys TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS docs_line ON docs(path, line);
"""
TAIL_MIN = 64 * 1024  # bytes: a smaller journal is read whole, at little cost
_HEADING = re.compile(rb"#{1,6} ")  # what the plain reading takes for a heading at column 0


@dataclass(frozen=True)
class Checkpoint:
    """What the index keeps of a daily journal it read: see the module's docstring."""

    size: int
    digest: bytes
    at: int  # the byte offset of the line read again from (0: the file's start)
    line: int  # its 1-based line
    key: str  # its section's key when it is a bullet's line ("": a heading's, or the start)
    written: int  # the line from which the rows are replaced
    keys: frozenset[str]  # the section keys of the bullets before its section's heading


START = Checkpoint(0, b"", 0, 1, "", 0, frozenset())
CONTEXT = 2  # bullets a bullet's `near` columns reach, each way (memfuse.recall.rows)


@dataclass(frozen=True)
class Appended:
    """A journal's rows from `line` on, read again from its last checkpoint, and its next."""

    line: int
    rows: list[Row]
    checkpoint: Checkpoint
    read: int  # the bytes read again (decoded and parsed)


@dataclass(frozen=True)
class _Part:
    """The bullets of a file from a checkpoint's heading on, and the checkpoint after them."""

    bullets: tuple[Bullet, ...]
    checkpoint: Checkpoint
    size: int


def only_day(path: os.PathLike[str], days: Days) -> date | None:
    """The day a file is the one form of (nothing archived or rolled up for its day), or None."""
    if len(days) != 1:
        return None
    day, forms = days[0]
    if len(forms) != 1 or forms[0].kind != DAILY or Path(forms[0].path) != Path(path):
        return None
    return day


def appended(
    db: sqlite3.Connection,
    workspace: Workspace,
    name: str,
    path: os.PathLike[str],
    day: date,
    classifier: Classifier,
) -> Appended | None:
    """The rows to replace when the file only grew since its checkpoint (or was touched and
    holds what it held); None when it must be read whole."""
    old = _checkpoint(db, name)
    if old is None:
        return None
    raw = _read(workspace, path)
    if raw is None or len(raw) < old.size:
        return None  # shrunk: not an append (the same size: only touched, or re-saved as it was)
    digest = hashlib.sha256(memoryview(raw)[: old.size])
    if digest.digest() != old.digest:
        return None  # not an append: an edit before the end
    digest.update(memoryview(raw)[old.size :])
    part = _from(raw, digest.digest(), old)
    if part is None:
        return None
    rows = [row for _b, row in bullet_rows(part.bullets, day, classifier) if row[0] >= old.written]
    return Appended(old.written, rows, part.checkpoint, part.size)


def record(
    db: sqlite3.Connection,
    workspace: Workspace,
    name: str,
    path: os.PathLike[str],
    day: date | None,
    rows: list[Row],
    size: int,
) -> None:
    """After the file was read whole into `rows` (`size` bytes by its stamp): its checkpoint,
    taken only when the bytes read again give those very rows (the file did not change)."""
    db.execute("DELETE FROM tails WHERE path = ?", (name,))
    if day is None or size < TAIL_MIN:
        return
    raw = _read(workspace, path)
    if raw is None or len(raw) < TAIL_MIN:
        return
    whole = _from(raw, hashlib.sha256(raw).digest(), START)
    if whole is None or [(b.line, b.text) for b in whole.bullets] != sorted(
        (row[0], row[3]) for row in rows
    ):
        return
    save(db, name, whole.checkpoint)


def save(db: sqlite3.Connection, name: str, checkpoint: Checkpoint) -> None:
    c = checkpoint
    db.execute(
        "INSERT OR REPLACE INTO tails (path, size, digest, at, line, key, written, keys)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (name, c.size, c.digest, c.at, c.line, c.key, c.written, " ".join(sorted(c.keys))),
    )


def _checkpoint(db: sqlite3.Connection, name: str) -> Checkpoint | None:
    row = db.execute(
        "SELECT size, digest, at, line, key, written, keys FROM tails WHERE path = ?", (name,)
    ).fetchone()
    if row is None:
        return None
    size, digest, at, line, key, written, keys = row
    return Checkpoint(int(size), bytes(digest), int(at), int(line), str(key), int(written),
                      frozenset(str(keys).split()))  # fmt: skip


def _read(workspace: Workspace, path: os.PathLike[str]) -> bytes | None:
    """The file's bytes, read as every journal is, or None (the whole reading says why)."""
    try:
        return workspace.files.read(Path(path))
    except (OSError, UnsafePath):
        return None


def _from(raw: bytes, digest: bytes, old: Checkpoint) -> _Part | None:
    """The bullets of `raw` from `old`'s line on, and the checkpoint after them; None where
    that is not what the whole file reads (the module's docstring)."""
    part = raw[old.at :]
    if not raw.endswith(b"\n") or b"\r" in part or raw.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        text = part.decode("utf-8")
    except UnicodeDecodeError:
        return None
    read = plain_part(text, old.key)
    if read is None:
        return None
    bullets = tuple(replace(b, line=b.line + old.line - 1) for b in read)
    if any(b.key in old.keys for b in bullets):
        return None  # a key held before: its neighbours are there
    after = _next(part, bullets, old, len(raw), digest)
    return None if after is None else _Part(bullets, after, len(part))


def _next(
    part: bytes, bullets: tuple[Bullet, ...], old: Checkpoint, size: int, digest: bytes
) -> Checkpoint | None:
    """The checkpoint after `part` (read from `old`'s line, its `bullets` numbered in the
    file), or None: the file is read whole next time."""
    lines = part.split(b"\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=old.at))
    headings = [n for n, line in enumerate(lines) if _HEADING.match(line)]
    base: tuple[int, int] | None = (old.at, old.line) if not old.key else None
    keys, section = old.keys, list(bullets)
    if headings:  # a section begun in the part: the last
        base = (starts[headings[-1]], old.line + headings[-1])
        keys = keys | {b.key for b in bullets if b.line < base[1]}
        section = [b for b in bullets if b.line > base[1]]
    if len(section) >= 2 * CONTEXT:
        again, written = section[-2 * CONTEXT], section[-CONTEXT]
        at = starts[again.line - old.line]
        return Checkpoint(size, digest, at, again.line, again.key, written.line, keys)
    if base is None:
        return None
    return Checkpoint(size, digest, base[0], base[1], "", base[1], keys)
