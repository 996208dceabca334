"""`memfuse recall` through the real mcporter against the reference server, and a loopback
reranker over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer
from tests.integration.ten_bullets import DAY, JOURNAL, NOW, journal, sync

pytestmark = pytest.mark.integration


def recall(ws: Path, store: StoreServer, query: str, *extra: str) -> dict[str, object]:
    # recall's own runs go through the real mcporter (one store call each); the syncs that
    # arrange the store take the session.
    argv = ["recall", query, "-w", str(ws), "--now", NOW, *store.cli_args("mcporter"), "--json",
            *extra]  # fmt: skip
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_recall_joins_the_store_and_the_journal_and_survives_the_store_down(
    store: StoreServer, workspace: Path
) -> None:
    journal(workspace).write_text(JOURNAL + "- ok\n")  # line 18, which the store's gate refuses
    sync(workspace, store)
    envelope = recall(workspace, store, "Lisbon offsite flights")
    data = envelope["data"]
    assert isinstance(data, dict)
    assert data["sources"] == ["agent-memory", "journals"]
    top = data["results"][0]
    assert top["content"] == "Booked flights to Lisbon for the March offsite"
    assert top["id"] and top["location"] == f"memory/{DAY}.md:17"

    refused = recall(workspace, store, "ok")["data"]
    assert isinstance(refused, dict)
    hit = next(r for r in refused["results"] if r["content"] == "ok")
    assert hit["id"] is None and hit["location"] == f"memory/{DAY}.md:18"

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
                *store.cli_args("mcporter"), "--json"]  # fmt: skip
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
