"""Issue 25 through the real mcporter and a real server: a plain sync follows what changed, on
any day — a bullet written after the day's last sync, a call that failed at 22:00 — and a store
reset is restored from an archived week."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer
from tests.integration.ten_bullets import uris

pytestmark = pytest.mark.integration

TUE, WED = "2026-12-01", "2026-12-02"


def plain_sync(ws: Path, store: StoreServer, now: str, transport: str) -> dict[str, Any]:
    argv = ["sync", "-w", str(ws), "--now", now, "--json", *store.cli_args(transport)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    value: dict[str, Any] = json.loads(result.stdout)
    return value


def test_a_late_bullet_and_a_failed_call_are_sent_by_the_next_days_plain_sync(
    store: StoreServer, workspace: Path
) -> None:
    journal = workspace / "memory" / f"{TUE}.md"
    journal.write_text("## 14:00\n- Met Bob about the billing migration plan\n")
    first = plain_sync(workspace, store, f"{TUE}T14:00", "mcporter")
    assert first["data"]["counts"]["added"] == 1

    store.set_mode("crash-start")  # 22:00: the server will not start
    with journal.open("a") as out:
        out.write("## 21:00\n- Alice prefers async updates for the billing work\n")
    failed = plain_sync(workspace, store, f"{TUE}T22:00", "mcporter")
    assert failed["data"]["counts"]["failed"] == 1
    store.set_mode("ok")
    with journal.open("a") as out:  # 23:30, after the day's last sync
        out.write("## 23:30\n- Late note: the payments dry run is booked for Friday\n")

    next_day = plain_sync(workspace, store, f"{WED}T14:00", "mcporter")
    assert next_day["data"]["dates"] == [TUE]
    assert next_day["data"]["counts"]["added"] == 2
    assert set(uris(store).values()) == {
        "Met Bob about the billing migration plan",
        "Alice prefers async updates for the billing work",
        "Late note: the payments dry run is booked for Friday",
    }
    quiet = plain_sync(workspace, store, f"{WED}T22:00", "mcporter")
    assert (quiet["data"]["dates"], quiet["data"]["calls"]) == ([], 1)


def test_a_reset_store_is_restored_from_an_archived_week(
    store: StoreServer, workspace: Path
) -> None:
    topics = ["invoice export", "cutover rehearsal", "queue alert tuning", "runbook review",
              "Hamburg offsite", "replication password", "schema freeze"]  # fmt: skip
    for n, topic in enumerate(topics):
        day = f"2026-11-{16 + n:02d}"
        (workspace / "memory" / f"{day}.md").write_text(f"## 09:00\n- Worked on the {topic}\n")
    args = ["-w", str(workspace), *store.cli_args("session"), "--json"]
    assert CliRunner().invoke(app, ["sync", "--all", "--now", f"{TUE}T22:00", *args]).exit_code == 0
    rolled = CliRunner().invoke(app, ["tidy", "--archive", "--now", f"{WED}T03:00", *args])
    assert len(json.loads(rolled.stdout)["data"]["archive"]["archived"]) == 7
    store.db.unlink()  # the store's database is gone
    restored = plain_sync(workspace, store, f"{WED}T14:00", "session")
    assert restored["data"]["index"]["lost"] == 7
    assert (restored["data"]["counts"]["restored"], restored["data"]["lost_left"]) == (7, 0)
    assert len(uris(store)) == 7
