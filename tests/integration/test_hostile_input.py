"""Hostile journals and a hostile environment: clear messages, nothing lost."""

from __future__ import annotations

import errno
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer

pytestmark = pytest.mark.integration
DAY = "2026-11-29"
NOW = f"{DAY}T22:05"


def invoke(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(app, [*args, "--now", NOW, "--json"])
    return result.exit_code, json.loads(result.stdout), result.stderr


def test_a_hostile_journal_is_synced_and_surfaced_without_loss(
    store: StoreServer, workspace: Path
) -> None:
    huge = "长" * 300_000 + " Alice " + "x" * 700_000  # a 1 MB+ line
    nested = "- top of a deep list\n" + "".join("  " * d + "- level\n" for d in range(1, 300))
    raw = (
        b"## 09:00\n- " + huge.encode() + b"\n"
        b"- NUL \x00 inside, kept as written\n"
        b"- caf\xe9 with a broken byte\n"
        + nested.encode()
        + b"## 10:00\n- before an unterminated fence\n```\n- swallowed by the fence, as Markdown renders it\n"
    )
    (workspace / "memory" / f"{DAY}.md").write_bytes(raw)
    code, envelope, stderr = invoke(
        "sync", "-w", str(workspace), "--date", DAY, *store.cli_args("mcporter")
    )
    assert code == 0, stderr
    assert envelope["data"]["counts"]["added"] == 5
    assert "not valid UTF-8" in stderr
    stored = store.direct("recall_path", {"uri": f"event://journal/{DAY}#0900-1"})["memory"][
        "content"
    ]
    assert stored == huge
    nul = store.direct("recall_path", {"uri": f"event://journal/{DAY}#0900-2"})["memory"]["content"]
    assert nul == "NUL \x00 inside, kept as written"
    code, _envelope, _ = invoke("surface", "-w", str(workspace), *store.cli_args("mcporter"))
    assert code == 0
    lines = (workspace / "RECENT.md").read_text().splitlines()
    assert len(lines) <= 80
    assert max(len(line) for line in lines) <= 202


def test_ten_thousand_sections_are_each_read_and_planned(workspace: Path) -> None:
    text = "".join(
        f"## {h % 24:02d}:{h % 60:02d} section {h}\n- bullet number {h}\n" for h in range(10_000)
    )
    (workspace / "memory" / f"{DAY}.md").write_text(text)
    code, envelope, _ = invoke(
        "sync", "-w", str(workspace), "--date", DAY, "--dry-run", "--mcporter", "/nope"
    )
    assert code == 78  # the missing mcporter named as the cause (decision 262)…
    assert len(envelope["data"]["plan"]["send"]) == 10_000  # …and every section read and planned
    # (its speed at 1×, 10×, 100×: `benchmarks/run.py journal_costs`, "a heading before every
    # item"; not a clock here)
    uris = [item["uri"] for item in envelope["data"]["would_send"]]
    assert len(uris) == len(set(uris)) == 10_000


def test_a_read_only_workspace_fails_clearly_and_loses_nothing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "memory" / f"{DAY}.md").write_text("- Shipped the 2.5 release\n")
    (workspace / "RECENT.md").write_text("old\n")

    def read_only(*_args: object, **_kwargs: object) -> Any:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("memfuse.confine.WorkspaceFiles.write", read_only)
    code, envelope, stderr = invoke("surface", "-w", str(workspace), "--mcporter", "/nope")
    assert code == 1
    assert "Read-only file system" in envelope["data"]["error"]
    assert "previous RECENT.md is unchanged" in stderr
    assert (workspace / "RECENT.md").read_text() == "old\n"


def test_a_full_disk_under_the_ledger_stops_the_run_and_the_next_run_catches_up(
    store: StoreServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "memory" / f"{DAY}.md").write_text(
        "- Reviewed the billing migration plan\n- Booked train tickets to Hamburg\n"
    )

    def disk_full(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    with monkeypatch.context() as patch:
        patch.setattr("memfuse.ledger.ledger.Ledger._insert", disk_full)
        code, envelope, stderr = invoke(
            "sync", "-w", str(workspace), "--date", DAY, *store.cli_args()
        )
    assert code == 1
    assert "cannot write the sync ledger" in stderr and "disk is full" in stderr
    assert envelope["status"] == "failed"
    code, envelope, _ = invoke("sync", "-w", str(workspace), "--date", DAY, *store.cli_args())
    assert code == 0
    counts = envelope["data"]["counts"]
    assert counts["added"] + counts["skipped"] == 2
    assert store.direct("status")["total"] == 2


def test_a_workspace_config_with_wrong_types_is_a_warning_not_a_stop(workspace: Path) -> None:
    (workspace / ".memfuse").mkdir()
    (workspace / ".memfuse" / "config.toml").write_text("[surface]\nmax_lines = 'eighty'\n")
    result = CliRunner().invoke(app, ["surface", "-w", str(workspace), "--mcporter", "/nope"])
    assert result.exit_code == 78  # the missing mcporter named (decision 262); RECENT.md written
    assert (workspace / "RECENT.md").exists()
    assert "surface.max_lines" in result.stderr and "skipped" in result.stderr
    assert (workspace / "RECENT.md").exists()
