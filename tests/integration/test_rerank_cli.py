"""`memfuse rerank-test` as a real subprocess against a real HTTP scorer on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memfuse.refserver.store import Store
from tests.conftest import StoreServer
from tests.rerank_server import base_url, serve

pytestmark = pytest.mark.integration
KEY = "sk-live-NEVER-PRINT-ME-0123456789"
MEMFUSE = str(Path(sys.executable).parent / "memfuse")


def run(
    args: list[str], server_url: str, workspace: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    full_env = {
        **os.environ, "AGENT_MEMORY_RERANK_PROVIDER": "jina", "AGENT_MEMORY_RERANK_API_KEY": KEY,
        "AGENT_MEMORY_RERANK_BASE_URL": server_url, "AGENT_MEMORY_RERANK_TIMEOUT": "2", **env,
    }  # fmt: skip
    return subprocess.run(
        [MEMFUSE, "rerank-test", *args, "-w", str(workspace)],
        capture_output=True, text=True, env=full_env, timeout=60, check=False,
    )  # fmt: skip


def assert_no_key(result: subprocess.CompletedProcess[str], workspace: Path) -> None:
    assert KEY not in result.stdout
    assert KEY not in result.stderr
    log = workspace / ".memfuse" / "memfuse.log"
    assert not log.exists() or KEY not in log.read_text()


def test_ranked_table_and_json(workspace: Path) -> None:
    docs = ["Lunch menu for Tuesday", "User prefers dark mode in editors", "Dark chocolate recipe"]
    with serve() as server:
        human = run(["dark mode editors", *docs], base_url(server), workspace)
        machine = run(["dark mode editors", *docs, "--json"], base_url(server), workspace)
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert "provider jina, model Qwen/Qwen3-Reranker-8B" in lines[0]
    assert "latency" in lines[1]
    table = [line for line in lines if line.strip()[:1].isdigit()]
    assert "User prefers dark mode" in table[0]
    assert "Lunch menu" in table[-1]
    envelope = json.loads(machine.stdout)
    assert envelope["status"] == "ok"
    assert [r["index"] for r in envelope["data"]["results"]] == [1, 2, 0]
    assert {c["name"] for c in envelope["data"]["checks"]} == {"call", "scores vary"}
    assert server.auth_headers[0] == f"Bearer {KEY}"
    assert_no_key(human, workspace)
    assert_no_key(machine, workspace)


def test_the_built_in_probe_passes_against_a_sane_scorer(workspace: Path) -> None:
    with serve() as server:
        result = run(["--json"], base_url(server), workspace)
    envelope = json.loads(result.stdout)
    assert result.returncode == 0
    assert {c["name"]: c["ok"] for c in envelope["data"]["checks"]}["relevant first"] is True


def test_constant_scores_fail_the_health_check(workspace: Path) -> None:
    with serve("constant") as server:
        result = run(["dark mode", "a", "b", "c"], base_url(server), workspace)
    assert result.returncode == 1
    assert "FAIL  scores vary: every document scored 0.5" in result.stdout
    assert "scores vary" in result.stderr
    assert_no_key(result, workspace)


@pytest.mark.parametrize("mode", ["error500", "error429", "truncated", "wrong-index", "stall"])
def test_a_broken_provider_exits_non_zero_and_never_leaks_the_key(
    workspace: Path, mode: str
) -> None:
    with serve(mode) as server:
        result = run(["q", "a", "b", "--json"], base_url(server), workspace)
    envelope = json.loads(result.stdout)
    assert result.returncode == 1
    assert envelope["status"] == "failed"
    assert envelope["data"]["checks"][0]["ok"] is False
    assert_no_key(result, workspace)


def test_from_recall_shows_the_order_without_and_with_the_reranker(
    store: StoreServer, workspace: Path
) -> None:
    db = Store(str(store.db), "default", lambda: datetime.now(UTC))
    db.remember("Dark mode toggle shipped in the settings page", "event")
    db.remember("User prefers dark mode in every editor", "knowledge")
    db.remember("Dark roast coffee order for the team", "identity")
    with serve() as server:
        result = run(
            ["dark mode editor", "--from-recall", "--json", *store.cli_args()],
            base_url(server),
            workspace,
        )
    envelope = json.loads(result.stdout)
    assert result.returncode == 0, result.stderr
    comparison = envelope["data"]["comparison"]
    assert sorted(comparison["without"]) == sorted(comparison["with"])
    assert comparison["with"][0] == "User prefers dark mode in every editor"
    assert_no_key(result, workspace)


def test_disabled_reranker_says_how_to_enable_it(workspace: Path) -> None:
    result = run(
        ["q", "a"], "http://127.0.0.1:9/v1", workspace, AGENT_MEMORY_RERANK_PROVIDER="none"
    )
    assert result.returncode == 1
    assert "AGENT_MEMORY_RERANK_PROVIDER" in result.stderr
