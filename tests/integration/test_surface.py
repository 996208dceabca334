"""`memfuse surface` through the real mcporter against the reference server (SPEC §6)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.refserver.store import Store
from memfuse.text.similarity import similarity
from tests.conftest import StoreServer

pytestmark = pytest.mark.integration
NOW = datetime(2026, 2, 28, 14, 5, tzinfo=UTC)
HEADINGS = ["## 最近情感", "## 最近决策/知识", "## 最近事件"]

EVENTS = [
    "Shipped the 2.4 release of the API gateway", "Met Carol to plan the Lisbon offsite",
    "Fixed the flaky checkout integration test", "Wrote the Tuesday outage postmortem",
    "Migrated the wiki to the new host", "Reviewed Dana's caching proposal",
    "Ran the quarterly disaster recovery drill", "Upgraded Postgres on the staging cluster",
    "Interviewed two backend candidates", "Cleaned up the old feature flags",
]  # fmt: skip
EMOTIONS = ["今天很开心，发布很顺利", "Worried about the March deadline", "I love this team's calm"]
KNOWLEDGE = ["Alice prefers short status reports", "Never deploy on Fridays", "记住：周五不发版"]


def populate(store: StoreServer) -> None:
    """Ten days of journal memories of every type, written straight into the store's file."""
    for days_ago in range(10):
        day = (NOW - timedelta(days=days_ago)).date().isoformat()
        db = Store(str(store.db), "default", lambda d=days_ago: NOW - timedelta(days=d, hours=1))
        db.remember(EVENTS[days_ago], "event", f"event://journal/{day}#1000-1")
        db.remember(
            EMOTIONS[days_ago % 3] + f" (day {days_ago})",
            "emotion",
            f"emotion://journal/{day}#1000-2",
        )
        db.remember(
            KNOWLEDGE[days_ago % 3] + f", noted on day {days_ago}",
            "knowledge",
            f"knowledge://journal/{day}#1000-3",
        )
    db = Store(str(store.db), "default", lambda: NOW)
    # Same text as day 0's event under another type: the store keeps both, surface shows one.
    db.remember(
        "Shipped the 2.4 release of the API gateway!", "knowledge", "knowledge://manual/dup"
    )
    db.remember(
        "User prefers dark mode in every editor", "knowledge", "knowledge://preferences/theme"
    )


def surface(ws: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(
        app, ["surface", "-w", str(ws), "--now", NOW.isoformat(), "--json", *args]
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def entries(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(heading) + 1
    out = []
    for line in lines[start:]:
        if line.startswith("## "):
            break
        if line.startswith("- "):
            out.append(line[2:])
    return out


def test_recent_md_from_the_store(store: StoreServer, workspace: Path) -> None:
    populate(store)
    code, envelope, _ = surface(workspace, *store.cli_args())
    assert code == 0
    assert envelope["data"]["source"] == "agent-memory"
    text = (workspace / "RECENT.md").read_text()
    lines = text.splitlines()
    assert lines[:3] == ["# RECENT.md", "", "_auto-updated: 2026-02-28 14:05_"]
    assert [line for line in lines if line.startswith("## ")] == HEADINGS
    events = entries(text, "## 最近事件")
    # Only the last 7 days' events, newest (most vital) first; days 8 and 9 are out.
    assert events[:7] == EVENTS[:7]
    assert EVENTS[8] not in events and EVENTS[9] not in events
    assert "(day 8)" not in text and "(day 9)" not in text
    knowledge = entries(text, "## 最近决策/知识")
    assert "User prefers dark mode in every editor" in knowledge
    assert not any(k.startswith("Shipped the 2.4") for k in knowledge)
    every = [e for h in HEADINGS for e in entries(text, h)]
    for i, a in enumerate(every):
        for b in every[i + 1 :]:
            assert similarity(a, b) < 0.9, (a, b)
    assert envelope["data"]["lines"] == len(lines)
    assert envelope["data"]["sections"] == {
        h: len(entries(text, t))
        for h, t in zip(("emotion", "knowledge", "event"), HEADINGS, strict=True)
    }


def test_two_runs_with_the_same_store_and_clock_are_byte_identical(
    store: StoreServer, workspace: Path
) -> None:
    populate(store)
    surface(workspace, *store.cli_args())
    first = (workspace / "RECENT.md").read_bytes()
    surface(workspace, *store.cli_args())
    assert (workspace / "RECENT.md").read_bytes() == first


JOURNAL_TODAY = "## 09:00\n- Reviewed the 2.5 release checklist\n- 今天很开心\n## 13:00\n- We must keep the changelog current\n"
JOURNAL_OLD = "## 09:00\n- Something from last week that should not appear\n"


@pytest.mark.parametrize("fault", ["mcporter-missing", "server-crashes"])
def test_store_unreachable_falls_back_to_the_last_three_days_of_journals(
    store: StoreServer, workspace: Path, fault: str
) -> None:
    (workspace / "memory" / "2026-02-28.md").write_text(JOURNAL_TODAY)
    (workspace / "memory" / "2026-02-27.md").write_text("- Paired with Bob on the importer\n")
    (workspace / "memory" / "2026-02-20.md").write_text(JOURNAL_OLD)
    args = ["--mcporter", "/nonexistent/mcporter"]
    if fault == "server-crashes":
        store.set_mode("crash-start")
        args = store.cli_args("mcporter")
    code, envelope, stderr = surface(workspace, *args)
    assert code == (78 if fault == "mcporter-missing" else 0)  # its own setup: named (262)
    assert envelope["data"]["source"] == "journals"
    assert "warning:" in stderr
    text = (workspace / "RECENT.md").read_text()
    assert entries(text, "## 最近情感") == ["今天很开心"]
    assert entries(text, "## 最近决策/知识") == ["We must keep the changelog current"]
    assert entries(text, "## 最近事件") == [
        "Reviewed the 2.5 release checklist",
        "Paired with Bob on the importer",
    ]
    assert "last week" not in text
