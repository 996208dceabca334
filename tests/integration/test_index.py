"""The index rebuilt through the real mcporter and the reference server (issue 13): a deleted
database, memories deleted behind memfuse's back, memories the store forgot by decay, and a
store that does not answer the verification."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer
from tests.fakes import state_of
from tests.integration.ten_bullets import JOURNAL, NOW, journal, sync, uris

pytestmark = pytest.mark.integration


def ledger_rows(ws: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(state_of(ws) / "ledger.sqlite3")
    try:
        return db.execute("SELECT * FROM entries ORDER BY position").fetchall()
    finally:
        db.close()


def plain_sync(ws: Path, store: StoreServer) -> dict[str, Any]:
    """`memfuse sync` with no scope flag, on the day of the journal."""
    argv = ["sync", "-w", str(ws), "--now", NOW, *store.cli_args(), "--json"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)["data"]
    return data


def test_a_deleted_database_is_restored_by_the_next_plain_sync(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    assert sync(workspace, store)[1]["data"]["counts"]["added"] == 10
    before = uris(store)
    store.db.unlink()

    data = plain_sync(workspace, store)
    assert data["counts"]["restored"] == 10
    assert data["index"]["lost"] == 10
    assert uris(store) == before
    assert store.direct("status")["total"] == 10  # exactly once each

    again = plain_sync(workspace, store)
    assert again["counts"]["restored"] == 0
    assert again["calls"] == 1


def test_five_memories_deleted_behind_memfuses_back_are_restored_by_verify(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    sync(workspace, store)
    gone = sorted(uris(store))[:5]
    for uri in gone:
        memory = store.direct("recall_path", {"uri": uri})["memory"]
        store.direct("forget", {"id": memory["id"], "hard": True})
    assert len(uris(store)) == 5

    code, result, _ = sync(workspace, store, "--verify")
    assert code == 0
    assert result["data"]["counts"]["restored"] == 5
    assert result["data"]["counts"]["added"] == 0
    assert result["data"]["index"] == {
        "expected": 10,
        "present": 5,
        "lost": 5,
        "forgotten": 0,
        "altered": 0,
    }
    assert len(uris(store)) == 10
    assert store.direct("status")["total"] == 10


def test_memories_deleted_by_decay_are_recorded_forgotten_and_not_resent(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    store.set_mode("ok", AGENT_MEMORY_NOW=datetime.fromisoformat(NOW).isoformat())
    sync(workspace, store)
    stored = set(uris(store))
    later = datetime.fromisoformat(NOW) + timedelta(days=60)
    store.set_mode("ok", AGENT_MEMORY_NOW=later.isoformat())
    store.direct("reflect", {"phase": "all"})
    left = uris(store)
    assert not any(u.startswith("event://") for u in left)  # 2.2 deletes decayed P3 events

    after = later.strftime("%Y-%m-%dT%H:%M")
    code, result, _ = sync(workspace, store, "--verify", "--now", after)
    assert code == 0
    index = result["data"]["index"]
    assert index["forgotten"] == 10 - len(left)
    assert index["lost"] == 0
    assert result["data"]["counts"]["restored"] == 0
    assert uris(store) == left
    forgotten = {str(row[4]) for row in ledger_rows(workspace) if row[3] == "forgotten"}
    assert forgotten == stored - set(left)


def test_a_store_that_does_not_answer_the_verification_changes_nothing(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    sync(workspace, store)
    rows = ledger_rows(workspace)
    store.db.unlink()
    store.set_mode("error")  # every tool answers {"error": …}

    code, result, stderr = sync(workspace, store, "--verify")
    assert code == 0
    assert "index" not in result["data"]
    assert result["data"]["counts"]["restored"] == 0
    assert result["data"]["calls"] <= 4  # the probe and the three listings: nothing re-sent
    assert "the index was not verified" in stderr
    assert ledger_rows(workspace) == rows
