"""`memfuse recall` through the real mcporter against the reference server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer
from tests.integration.test_sync import DAY, JOURNAL, NOW, journal, sync

pytestmark = pytest.mark.integration


def recall(ws: Path, store: StoreServer, query: str, *extra: str) -> dict[str, object]:
    argv = ["recall", query, "-w", str(ws), "--now", NOW, *store.cli_args(), "--json", *extra]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_recall_joins_the_store_and_the_journal_and_survives_the_store_down(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL)
    sync(workspace, store)
    envelope = recall(workspace, store, "Lisbon offsite flights")
    data = envelope["data"]
    assert isinstance(data, dict)
    assert data["sources"] == ["agent-memory", "journals"]
    top = data["results"][0]
    assert top["content"] == "Booked flights to Lisbon for the March offsite"
    assert top["id"] and top["location"] == f"memory/{DAY}.md:17"

    store.set_mode("error")
    down = recall(workspace, store, "Lisbon offsite flights")["data"]
    assert isinstance(down, dict)
    assert down["sources"] == ["journals"]
    assert down["results"][0]["location"] == f"memory/{DAY}.md:17"
