"""memfuse's private SQLite files (the ledger, the recall index): opened so that nothing in them
that memfuse did not create can run, and nothing can run for long (docs/security.md).

A SQLite file can carry code (a trigger, a view named like a table), so a file is used only
when its schema is exactly the one memfuse creates, and every statement is interrupted after
`STATEMENT_SECONDS`. A file that fails is `Foreign`: the caller moves it aside.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memfuse.confine import UnsafePath
from memfuse.state.folder import StateFolder

SIDECARS = ("", "-wal", "-shm", "-journal")
# CPU seconds of this process: far above any statement memfuse makes, a hard stop for a planted
# one. Not the wall: a loaded machine stretched a 1 MiB journal's index write past 20 s of it.
STATEMENT_SECONDS = 20.0
_STEPS = 10_000  # VM instructions between two looks at the clock


class Foreign(sqlite3.DatabaseError):
    """The file is not one memfuse made: not SQLite, or a schema that is not memfuse's."""


class Outdated(Foreign):
    """The file is memfuse's own, from a former version whose schema cannot be added to."""


class BoundedConnection(sqlite3.Connection):
    """A connection whose every statement is interrupted (OperationalError) once it has run
    `seconds`, counted from the `execute` that started it, rows fetched later included. Not a
    trace callback: SQLite traces FTS5's inner statements too, one per matching row, and
    calling Python for each made a year's recall three times slower (docs/performance.md)."""

    seconds = STATEMENT_SECONDS
    clock: Callable[[], float] = staticmethod(time.process_time)

    def bound(self, seconds: float, clock: Callable[[], float] = time.process_time) -> None:
        self.seconds = seconds
        self.clock = clock
        self._started = clock()
        self.set_progress_handler(self._overdue, _STEPS)

    def _overdue(self) -> int:
        return int(self.clock() - self._started > self.seconds)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self._started = self.clock()
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        self._started = self.clock()
        return super().executemany(sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        self._started = self.clock()
        return super().executescript(script)


def connect_bounded(
    target: str,
    *,
    seconds: float = STATEMENT_SECONDS,
    clock: Callable[[], float] = time.process_time,
    **options: Any,
) -> BoundedConnection:
    """Connect to SQLite in autocommit, every statement bounded to `seconds` of `clock`, and
    nothing a file's schema holds (a view's function, a trigger's) run as trusted."""
    db = sqlite3.connect(target, isolation_level=None, factory=BoundedConnection, **options)
    db.bound(seconds, clock)
    db.execute("PRAGMA trusted_schema = OFF")
    return db


@functools.cache
def expected_schema(schema: str) -> frozenset[tuple[str, str, str, str | None]]:
    """What `sqlite_master` holds after `schema` runs on an empty database."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema)
        return _objects(db)
    finally:
        db.close()


def _objects(db: sqlite3.Connection) -> frozenset[tuple[str, str, str, str | None]]:
    rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset((str(t), str(n), str(tb), None if s is None else " ".join(str(s).split()))
                     for t, n, tb, s in rows)  # fmt: skip


def check_schema(db: sqlite3.Connection, schema: str, version: int | None = None) -> bool:
    """Foreign unless every object of the database is one `schema` creates; with a `version`
    (a derived file), Outdated unless it is exactly this build's, every object and that
    `user_version`. Reading the catalogue runs nothing of the file's. True when empty."""
    try:
        found = _objects(db)
        made = int(db.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise Foreign(f"not a SQLite database memfuse can read ({exc})") from None
    strange = found - expected_schema(schema)
    if strange:
        kinds = sorted({f"{kind} {name}" for kind, name, _t, _s in strange})
        raise Foreign(f"holds what memfuse did not create: {', '.join(kinds[:5])}")
    if version is not None and found and (made != version or found < expected_schema(schema)):
        raise Outdated("memfuse's own, from another build")
    return not found


def open_private_db(
    state: StateFolder, name: str, schema: str, *, version: int | None = None
) -> sqlite3.Connection:
    """A connection to a SQLite file of the state folder, created 0600, its schema memfuse's
    own (created when empty), every statement bounded. UnsafePath for a link, a non-file or a
    hard link; Foreign when it is not memfuse's; sqlite3.Error when SQLite cannot use it."""
    path = state.database(name, SIDECARS, create=True)
    assert path is not None  # created
    db = connect_bounded(path, timeout=30, check_same_thread=False)
    try:
        if check_schema(db, schema, version) and version is not None:
            # One transaction: another process never sees some tables, or all without their
            # version (it would take them for another build's and remove them under this one).
            # A PRAGMA that must precede the first table (auto_vacuum) runs before it.
            pragmas = "".join(
                f"{line}\n" for line in schema.splitlines() if line.startswith("PRAGMA")
            )
            stamp = f"PRAGMA user_version = {int(version)};"
            db.executescript(f"{pragmas}BEGIN IMMEDIATE;\n{schema}\n{stamp}\nCOMMIT;")
        else:
            db.executescript(schema)
    except BaseException:
        db.close()
        raise
    return db


def open_read_only(state: StateFolder, name: str, schema: str) -> sqlite3.Connection | None:
    """A read-only connection held to the same checks; None when there is no such file."""
    path = state.database(name, SIDECARS, create=False)
    if path is None:
        return None
    uri = f"file:{path}?mode=ro"
    db = connect_bounded(uri, uri=True, timeout=5)
    try:
        check_schema(db, schema)
    except BaseException:
        db.close()
        raise
    return db


def open_or_set_aside(
    state: StateFolder, name: str, open_db: Callable[[], sqlite3.Connection]
) -> tuple[sqlite3.Connection, str | None]:
    """Open a private database, one memfuse cannot use made afresh: the connection, and what
    became of the old file (None: used; "outdated": removed; "set aside": moved aside with its
    sidecars). A moment's trouble (sqlite3.OperationalError) is raised, the file left as it is."""
    try:
        return open_db(), None
    except sqlite3.OperationalError:
        raise
    except Outdated:
        for suffix in SIDECARS:
            state.remove(f"{name}{suffix}")
        return open_db(), "outdated"
    except (sqlite3.DatabaseError, UnsafePath) as exc:
        for suffix in SIDECARS:
            state.quarantine(f"{name}{suffix}", str(exc))
    return open_db(), "set aside"


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any exception. IMMEDIATE takes the write lock
    up front, so two processes cannot both read-then-write the same rows."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if db.in_transaction:  # an interrupted write has rolled it back already
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
