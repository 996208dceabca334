"""memfuse's private SQLite files (the ledger, the recall index): opening one safely, and one
write transaction on a connection opened with `isolation_level=None`."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memfuse.confine import check_private_file, open_private

SIDECARS = ("", "-wal", "-shm", "-journal")


def open_private_db(path: Path) -> sqlite3.Connection:
    """A connection to a SQLite file in the state folder, created 0600. The file and its
    sidecars (`-wal`, `-shm`, `-journal`) are refused when they are links or not regular
    files: SQLite would otherwise write through them. UnsafePath for those; sqlite3.Error
    when SQLite cannot use the file."""
    for suffix in SIDECARS:
        check_private_file(Path(f"{path}{suffix}"))
    os.close(open_private(path, os.O_RDWR))
    return sqlite3.connect(path, timeout=30, isolation_level=None)


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any exception. IMMEDIATE takes the write lock
    up front, so two processes cannot both read-then-write the same rows."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
