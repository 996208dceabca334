"""`memfuse rerank-test` in-process: the real HTTP client against a scorer on 127.0.0.1.

The reranker here is not faked: the run's client is memfuse's own `RerankClient` speaking HTTP
to tests/rerank_server.py in a thread, so the request shape, the failure handling and the
masking of the key are the real ones. Only the store is the in-process fake.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import UNREACHED
from tests.fakes import Outcome, World, state_of
from tests.rerank_server import base_url, serve

KEY = "sk-live-NEVER-PRINT-ME-0123456789"


@pytest.fixture
def http_world(world: World) -> World:
    """The fake store, and the real rerank client (no fake reranker)."""
    world.real_reranker = True
    return world


def rerank_env(url: str, **extra: str) -> dict[str, str]:
    """The provider's timeout is out of play unless a test sets one (against a server that
    never answers within it): an answering loopback never races it on a busy machine."""
    return {
        "AGENT_MEMORY_RERANK_PROVIDER": "jina", "AGENT_MEMORY_RERANK_API_KEY": KEY,
        "AGENT_MEMORY_RERANK_BASE_URL": url, "AGENT_MEMORY_RERANK_TIMEOUT": str(UNREACHED),
        **extra,
    }  # fmt: skip


def run(world: World, url: str, *args: str, **extra: str) -> Outcome:
    return world.run("rerank-test", *args, env=rerank_env(url, **extra))


def assert_no_key(outcome: Outcome, workspace: Path) -> None:
    assert KEY not in outcome.stdout
    assert KEY not in outcome.stderr
    log = state_of(workspace) / "memfuse.log"
    assert not log.exists() or KEY not in log.read_text()


def envelope(outcome: Outcome) -> dict[str, Any]:
    return outcome.envelope


def test_ranked_table_and_json(http_world: World) -> None:
    docs = ["Lunch menu for Tuesday", "User prefers dark mode in editors", "Dark chocolate recipe"]
    with serve() as server:
        human = run(http_world, base_url(server), "dark mode editors", *docs)
        machine = run(http_world, base_url(server), "dark mode editors", *docs, "--json")
    assert human.code == 0, human.stderr
    lines = human.stdout.splitlines()
    assert "provider jina, model Qwen/Qwen3-Reranker-8B" in lines[0]
    assert "latency" in lines[1]
    table = [line for line in lines if line.strip()[:1].isdigit()]
    assert "User prefers dark mode" in table[0]
    assert "Lunch menu" in table[-1]
    env = machine.envelope
    assert env["status"] == "ok"
    assert [r["index"] for r in env["data"]["results"]] == [1, 2, 0]
    assert {c["name"] for c in env["data"]["checks"]} == {"call", "scores vary"}
    assert server.auth_headers[0] == f"Bearer {KEY}"
    assert_no_key(human, http_world.workspace)
    assert_no_key(machine, http_world.workspace)


def test_the_built_in_probe_passes_against_a_sane_scorer(http_world: World) -> None:
    with serve() as server:
        result = run(http_world, base_url(server), "--json")
    assert result.code == 0
    checks = {c["name"]: c["ok"] for c in result.data["checks"]}
    assert checks["relevant first"] is True


def test_constant_scores_fail_the_health_check(http_world: World) -> None:
    with serve("constant") as server:
        result = run(http_world, base_url(server), "dark mode", "a", "b", "c")
    assert result.code == 1
    assert "FAIL  scores vary: every document scored 0.5" in result.stdout
    assert "scores vary" in result.stderr
    assert_no_key(result, http_world.workspace)


@pytest.mark.parametrize("mode", ["error500", "error429", "truncated", "wrong-index", "stall"])
def test_a_broken_provider_exits_non_zero_and_never_leaks_the_key(
    http_world: World, mode: str
) -> None:
    with serve(mode) as server:
        timeout = {"AGENT_MEMORY_RERANK_TIMEOUT": "0.3"} if mode == "stall" else {}
        result = run(http_world, base_url(server), "q", "a", "b", "--json", **timeout)
    assert result.code == 1
    assert result.envelope["status"] == "failed"
    assert result.data["checks"][0]["ok"] is False
    assert_no_key(result, http_world.workspace)


def test_from_recall_shows_the_order_without_and_with_the_reranker(http_world: World) -> None:
    http_world.gateway.direct(
        "remember", {"content": "Dark mode toggle shipped in the settings page", "type": "event"}
    )
    http_world.gateway.direct(
        "remember", {"content": "User prefers dark mode in every editor", "type": "knowledge"}
    )
    http_world.gateway.direct(
        "remember", {"content": "Dark roast coffee order for the team", "type": "identity"}
    )
    with serve() as server:
        result = run(http_world, base_url(server), "dark mode editor", "--from-recall", "--json")
    assert result.code == 0, result.stderr
    comparison = result.data["comparison"]
    assert sorted(comparison["without"]) == sorted(comparison["with"])
    assert comparison["with"][0] == "User prefers dark mode in every editor"
    assert http_world.gateway.count("recall") == 1
    assert_no_key(result, http_world.workspace)


def test_from_recall_with_the_store_down_says_so(http_world: World) -> None:
    http_world.gateway.down = "timeout"
    with serve() as server:
        result = run(http_world, base_url(server), "dark mode", "--from-recall", "--json")
    assert result.code != 0
    assert "recall" in result.stderr.lower() or "recall" in result.stdout.lower()
    assert server.auth_headers == []  # nothing to rerank: the reranker was never called
    assert_no_key(result, http_world.workspace)


def test_disabled_reranker_says_how_to_enable_it(http_world: World) -> None:
    result = run(http_world, "http://127.0.0.1:9/v1", "q", "a", AGENT_MEMORY_RERANK_PROVIDER="none")
    assert result.code == 1
    assert "AGENT_MEMORY_RERANK_PROVIDER" in result.stderr


def test_from_recall_survives_a_store_answer_with_odd_fields(http_world: World) -> None:
    odd = {"memories": [
        {"id": 1, "content": "User prefers dark mode in every editor", "priority": "high",
         "vitality": "full", "score": None, "updated_at": "last week"},
        {"content": "Dark roast coffee order for the team", "type": "event"},
        {"no": "content"}, "text",
    ]}  # fmt: skip
    http_world.gateway.texts["recall"] = json.dumps(odd)
    with serve() as server:
        result = run(http_world, base_url(server), "dark mode editor", "--from-recall", "--json")
    assert result.code == 0, result.stderr
    assert result.data["comparison"]["with"][0] == "User prefers dark mode in every editor"
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("mode", ["slowloris", "huge", "deep"])
def test_a_hostile_reranker_costs_recall_and_surface_one_warning(
    http_world: World, mode: str
) -> None:
    """Issue 29: a reranker that trickles bytes, answers without end or nests its JSON 200 000
    deep held recall and cron's surface for a minute, took memory, or crashed the run."""
    http_world.journal("2026-11-29", "## 09:00\n- Met Bob about the billing migration\n")
    now = "2026-11-29T22:00"
    assert http_world.run("sync", "--now", now).code == 0
    with serve(mode) as server:
        # a trickle is cut at the timeout: a third of a second is as telling as 1 s
        env = rerank_env(base_url(server), AGENT_MEMORY_RERANK_TIMEOUT="0.3")
        found = http_world.json("recall", "billing", "--now", now, env=env)
        written = http_world.json("surface", "--now", now, env=env)
    assert found.code == 0, found.stderr
    assert found.data["results"][0]["content"] == "Met Bob about the billing migration"
    assert found.data["reranked"] is False
    assert [w for w in found.envelope["warnings"] if w.startswith("rerank failed")]
    assert written.code == 0 and written.data["source"] == "agent-memory"
