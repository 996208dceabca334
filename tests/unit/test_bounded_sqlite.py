"""Every statement on memfuse's own SQLite files is stopped after its time, counted from the
call that started it: a planted endless query cannot hang a cron run."""

from __future__ import annotations

import sqlite3
import time

import pytest

from memfuse.state.sqlite import connect_bounded, immediate

COUNTED = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 50000) SELECT x FROM n"
FOREVER = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT max(x) FROM n"


class Clock:
    """A clock that moves only when told, and counts how often it was looked at."""

    def __init__(self) -> None:
        self.now = 0.0
        self.looks = 0
        self.step = 0.0  # how far each look moves it

    def __call__(self) -> float:
        self.looks += 1
        self.now += self.step
        return self.now


def test_each_statement_has_its_own_budget() -> None:
    """A connection open for longer than the bound still runs new statements: each is timed
    from its own call (the clock jumps past the bound between them, never during one)."""
    clock = Clock()
    db = connect_bounded(":memory:", seconds=1.0, clock=clock)
    db.execute("CREATE TABLE t (x)")
    clock.now += 5
    db.executemany(f"INSERT INTO t SELECT count(*) FROM ({COUNTED}) WHERE ? = 1", [(1,), (1,)])
    clock.now += 5
    db.executescript(f"INSERT INTO t SELECT count(*) FROM ({COUNTED});")
    clock.now += 5
    looked = clock.looks
    assert db.execute(f"SELECT sum(x) + (SELECT count(*) FROM ({COUNTED})) FROM t").fetchone() == (
        4 * 50_000,
    )
    assert clock.looks > looked + 1  # the statement looked at the clock while it ran


def test_a_statement_is_interrupted_once_its_own_clock_passes_the_bound() -> None:
    clock = Clock()
    db = connect_bounded(":memory:", seconds=1.0, clock=clock)
    clock.step = 0.4  # the third look inside one statement is past its second
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        db.execute(f"SELECT count(*) FROM ({COUNTED})").fetchall()


def test_an_endless_statement_is_interrupted() -> None:
    clock = Clock()
    db = connect_bounded(":memory:", seconds=1.0, clock=clock)
    clock.step = 0.4
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        db.execute(FOREVER).fetchall()


def test_rows_fetched_later_count_against_the_statement() -> None:
    clock = Clock()
    db = connect_bounded(":memory:", seconds=1.0, clock=clock)
    clock.step = 0.4
    cursor = db.execute(FOREVER.replace("SELECT max(x) FROM n", "SELECT x FROM n"))
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        for _ in cursor:
            pass


def test_the_bound_counts_the_process_cpu_not_the_wall() -> None:
    """A loaded machine stretches the wall time of a statement, not its CPU: a 1 MiB journal's
    index write passed 20 s of wall at load 27 and was interrupted (issue 57)."""
    assert connect_bounded(":memory:").clock is time.process_time


def test_an_interrupted_write_in_a_transaction_is_the_interruption() -> None:
    """SQLite rolls a transaction back itself when a write in it is interrupted: the rollback
    on the way out must not replace that error with "no transaction is active"."""
    clock = Clock()
    db = connect_bounded(":memory:", seconds=1.0, clock=clock)
    db.execute("CREATE TABLE t (x)")
    clock.step = 0.4
    with pytest.raises(sqlite3.OperationalError, match="interrupted"), immediate(db):
        db.execute(f"INSERT INTO t SELECT x FROM ({COUNTED})")
    clock.step = 0.0
    assert db.execute("SELECT count(*) FROM t").fetchone() == (0,)
    assert not db.in_transaction
