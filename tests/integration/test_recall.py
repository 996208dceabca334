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


@pytest.mark.parametrize("mode", ["ok", "error500", "stall", "constant"])
def test_recall_with_a_loopback_reranker(
    store: StoreServer, workspace: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    from tests.rerank_server import base_url, serve

    journal(workspace).write_text(JOURNAL)
    sync(workspace, store)
    plain = recall(workspace, store, "staging credentials rotate")["data"]
    assert isinstance(plain, dict)
    key = "sk-loopback-recall-secret-0123456789"
    with serve(mode) as server:
        server.stall_seconds = 5
        monkeypatch.setenv("AGENT_MEMORY_RERANK_PROVIDER", "jina")
        monkeypatch.setenv("AGENT_MEMORY_RERANK_API_KEY", key)
        monkeypatch.setenv("AGENT_MEMORY_RERANK_BASE_URL", base_url(server))
        monkeypatch.setenv("AGENT_MEMORY_RERANK_TIMEOUT", "1")
        argv = ["recall", "staging credentials rotate", "-w", str(workspace), "--now", NOW,
                *store.cli_args(), "--json"]  # fmt: skip
        result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    assert key not in result.stdout + result.stderr
    envelope = json.loads(result.stdout)
    data = envelope["data"]
    if mode == "ok":
        assert data["reranked"] is True
        assert data["results"][0]["content"].startswith("Remember to rotate the staging database")
        assert "+rerank" in data["results"][0]["reason"]
    else:
        assert data["reranked"] is False
        assert [r["content"] for r in data["results"]] == [r["content"] for r in plain["results"]]
        assert len(envelope["warnings"]) == 1, envelope["warnings"]
