"""`memfuse tidy` through the real mcporter against the reference server (SPEC §7)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.refserver.store import Store
from memfuse.workspace.journal import parse
from tests.conftest import StoreServer

pytestmark = pytest.mark.integration


def tidy(
    ws: Path, store: StoreServer, *extra: str, now: str = "2026-12-02T03:00"
) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(
        app, ["tidy", "-w", str(ws), *store.cli_args(), "--now", now, "--json", *extra]
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def seed(store: StoreServer, items: list[tuple[str, str]], days_ago: float = 0) -> None:
    """Write memories straight into the store file, as if made `days_ago` days ago."""
    moment = datetime.now(UTC) - timedelta(days=days_ago)
    db = Store(str(store.db), "default", lambda: moment)
    for content, kind in items:
        db.remember(content, kind)


def test_reflect_counts_and_the_store_shows_the_effect(store: StoreServer, workspace: Path) -> None:
    seed(
        store,
        [(f"Event number {n} from the old sprint about topic {n * 31}", "event") for n in range(4)],
        days_ago=60,
    )
    seed(store, [("Alice prefers short status reports", "knowledge")], days_ago=60)
    assert store.direct("status")["by_type"] == {"event": 4, "knowledge": 1}
    code, envelope, _ = tidy(workspace, store)
    assert code == 0
    report = envelope["data"]["reflect"]
    assert report["decay"]["decayed"] == 5
    assert report["tidy"]["archived"] == 4
    assert set(report) == {"decay", "tidy", "govern"}
    assert store.direct("status")["by_type"] == {"knowledge": 1}


def test_a_conflict_with_memory_md_is_shown_with_both_lines(
    store: StoreServer, workspace: Path
) -> None:
    (workspace / "MEMORY.md").write_text("# MEMORY\n\n- User prefers dark mode\n")
    seed(store, [("重要的事：User prefers light mode", "knowledge")])
    result = CliRunner().invoke(app, ["tidy", "-w", str(workspace), *store.cli_args()])
    assert result.exit_code == 0
    assert "consistency check: ⚠️ CONFLICT (1)" in result.stdout
    assert "重要的事：User prefers light mode" in result.stdout
    assert "User prefers dark mode" in result.stdout


def test_identical_facts_are_ok(store: StoreServer, workspace: Path) -> None:
    (workspace / "MEMORY.md").write_text("- 当前最重要的事：User prefers light mode\n")
    seed(store, [("当前最重要的事：User prefers light mode", "knowledge")])
    _code, envelope, _ = tidy(workspace, store)
    assert envelope["data"]["consistency"]["status"] == "ok"
    assert envelope["data"]["consistency"]["summary"] == (
        "consistency check: OK — 1 recent memory read against MEMORY.md, no contradiction"
    )


def test_nothing_recalled_is_skipped_not_a_vacuous_ok(store: StoreServer, workspace: Path) -> None:
    (workspace / "MEMORY.md").write_text("- User prefers dark mode\n")
    _code, envelope, _ = tidy(workspace, store)
    assert (
        envelope["data"]["consistency"]["summary"]
        == "consistency check: skipped (nothing recalled)"
    )


def test_no_memory_md_and_a_failing_reflect_skip_the_check(
    store: StoreServer, workspace: Path
) -> None:
    _code, envelope, _ = tidy(workspace, store)
    assert envelope["data"]["consistency"]["summary"] == "consistency check: skipped (no MEMORY.md)"
    (workspace / "MEMORY.md").write_text("- User prefers dark mode\n")
    store.set_mode("error")
    code, envelope, stderr = tidy(workspace, store)
    assert code == 0
    assert envelope["data"]["reflect"] is None
    assert (
        envelope["data"]["consistency"]["summary"] == "consistency check: skipped (reflect failed)"
    )
    assert "injected failure" in stderr


def test_prose_reflect_answer_is_reported_verbatim(store: StoreServer, workspace: Path) -> None:
    store.set_mode("prose")
    result = CliRunner().invoke(app, ["tidy", "-w", str(workspace), *store.cli_args()])
    assert result.exit_code == 0
    assert "Sleep cycle complete. Decayed 3 memories; archived 1." in result.stdout


def test_memory_md_is_backed_up_once_a_day_and_its_size_guarded(
    store: StoreServer, workspace: Path
) -> None:
    (workspace / "MEMORY.md").write_text("".join(f"- fact {n}\n" for n in range(250)))
    tidy(workspace, store)
    _code, envelope, stderr = tidy(workspace, store)
    backups = sorted((workspace / "memory" / "archive").iterdir())
    assert [b.name for b in backups] == ["MEMORY.md.bak-2026-12-02"]
    assert backups[0].read_bytes() == (workspace / "MEMORY.md").read_bytes()
    assert envelope["data"]["memory_md"]["over_limit"] is True
    assert "250 lines" in stderr


def bullets_in(folder: Path) -> list[tuple[str, str]]:
    return sorted(
        (b.key, b.text)
        for p in folder.rglob("*.md")
        if "bak" not in p.name
        for b in parse(p.read_text())
    )


def test_archive_rolls_old_journals_into_monday_files_losslessly(
    store: StoreServer, workspace: Path
) -> None:
    today = date(2026, 12, 2)
    for age in range(20):
        day = today - timedelta(days=age)
        (workspace / "memory" / f"{day}.md").write_text(
            f"## 09:{age:02d} standup\n- Standup notes for {day}: topic {age * 17}\n## 22:00\n- Evening log for {day}\n"
        )
    runner = CliRunner()
    synced = runner.invoke(
        app,
        [
            "sync",
            "--all",
            "-w",
            str(workspace),
            *store.cli_args(),
            "--now",
            "2026-12-02T02:00",
            "-q",
        ],
    )
    assert synced.exit_code == 0, synced.stderr
    before = bullets_in(workspace / "memory")
    assert len(before) == 40

    code, envelope, _ = tidy(workspace, store, "--archive")
    assert code == 0
    archived = envelope["data"]["archive"]["archived"]
    assert len(archived) == 13
    assert sorted(p.name for p in (workspace / "memory").glob("*.md")) == [
        f"{today - timedelta(days=age)}.md" for age in range(6, -1, -1)
    ]
    mondays = {
        (today - timedelta(days=age)) - timedelta(days=(today - timedelta(days=age)).weekday())
        for age in range(7, 20)
    }
    assert sorted(p.stem for p in (workspace / "memory" / "weekly").iterdir()) == sorted(
        m.isoformat() for m in mondays
    )
    for row in archived:
        day = date.fromisoformat(row["date"])
        assert Path(row["weekly"]).name == f"{day - timedelta(days=day.weekday())}.md"
    after = bullets_in(workspace / "memory")
    # The weekly files hold every archived bullet, and the archived dailies are kept too.
    weekly_and_daily = sorted(
        (b.key, b.text)
        for p in [
            *(workspace / "memory" / "weekly").iterdir(),
            *(workspace / "memory").glob("*.md"),
        ]
        for b in parse(p.read_text())
    )
    assert weekly_and_daily == before
    assert len(after) == len(before) + 26

    snapshot = {p: p.read_bytes() for p in (workspace / "memory").rglob("*") if p.is_file()}
    _code, again, _ = tidy(workspace, store, "--archive")
    assert again["data"]["archive"]["archived"] == []
    assert {p: p.read_bytes() for p in (workspace / "memory").rglob("*") if p.is_file()} == snapshot


def test_archive_refuses_journals_with_unsynced_bullets(
    store: StoreServer, workspace: Path
) -> None:
    (workspace / "memory" / "2026-11-01.md").write_text(
        "- Never synced, must not be archived yet\n"
    )
    code, envelope, stderr = tidy(workspace, store, "--archive")
    assert code == 0
    assert envelope["data"]["archive"]["refused"] == [{"date": "2026-11-01", "unsynced": 1}]
    assert (workspace / "memory" / "2026-11-01.md").exists()
    assert "memfuse sync --date 2026-11-01" in stderr


def test_dry_run_changes_no_file_and_calls_only_read_only_tools(
    counted_store: StoreServer, workspace: Path
) -> None:
    (workspace / "MEMORY.md").write_text("- fact\n")
    (workspace / "memory" / "2026-11-01.md").write_text("- old\n")
    code, envelope, _ = tidy(workspace, counted_store, "--archive", "--dry-run")
    assert code == 0
    assert envelope["data"]["reflect"] is None
    assert envelope["data"]["status"]["total"] == 0
    assert counted_store.tool_calls() == 1  # status only
    # Only memfuse's own log (every run appends to it) is written; no workspace file changes.
    files = sorted(
        p.name for p in workspace.rglob("*") if p.is_file() and ".memfuse" not in p.parts
    )
    assert files == ["2026-11-01.md", "MEMORY.md"]
