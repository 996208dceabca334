"""Every statement on memfuse's own SQLite files is stopped after its time, counted from the
call that started it: a planted endless query cannot hang a cron run."""

from __future__ import annotations

import sqlite3
import time

import pytest

from memfuse.state.sqlite import connect_bounded

COUNTED = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 50000) SELECT x FROM n"
FOREVER = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n"


def test_an_endless_statement_is_interrupted() -> None:
    db = connect_bounded(":memory:", seconds=0.3)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        db.execute(FOREVER).fetchall()
    assert time.monotonic() - started < 10


def test_each_statement_has_its_own_budget() -> None:
    """A connection open for longer than the bound still runs new statements (each of these
    is long enough for the clock to be looked at, and each well inside the bound however
    loaded the machine: a second, for work of a few milliseconds)."""
    db = connect_bounded(":memory:", seconds=1.0)
    db.execute("CREATE TABLE t (x)")
    time.sleep(1.05)
    db.executemany(f"INSERT INTO t SELECT count(*) FROM ({COUNTED}) WHERE ? = 1", [(1,), (1,)])
    time.sleep(1.05)
    db.executescript(f"INSERT INTO t SELECT count(*) FROM ({COUNTED});")
    time.sleep(1.05)
    assert db.execute(f"SELECT sum(x) + (SELECT count(*) FROM ({COUNTED})) FROM t").fetchone() == (
        4 * 50_000,
    )


def test_rows_fetched_later_count_against_the_statement() -> None:
    db = connect_bounded(":memory:", seconds=0.3)
    cursor = db.execute(FOREVER.replace("SELECT max(x) FROM n", "SELECT x FROM n"))
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        for _ in cursor:
            pass
