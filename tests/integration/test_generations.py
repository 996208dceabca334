"""sync, surface, tidy and the index repair against each generation of agent-memory (the
reference server's AGENT_MEMORY_COMPAT), auto-ingest's stdout noise on, over both transports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer
from tests.integration.test_sync import DAY, JOURNAL, NOW, journal

pytestmark = pytest.mark.integration


def run(ws: Path, store: StoreServer, transport: str, *args: str) -> dict[str, Any]:
    argv = [*args, "-w", str(ws), "--now", NOW, *store.cli_args(transport), "--json"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    envelope: dict[str, Any] = json.loads(result.stdout)
    assert envelope["status"] == "ok", envelope["warnings"]
    return envelope["data"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("generation", ["2", "3", "4", "5"])
def test_the_lifecycle_over_the_session_against_each_generation(
    store: StoreServer, workspace: Path, generation: str
) -> None:
    store.set_mode("ok", AGENT_MEMORY_COMPAT=generation)  # ≥ 3: [auto-ingest] on stdout
    journal(workspace).write_text(JOURNAL)
    synced = run(workspace, store, "session", "sync")
    counts = synced["counts"]
    assert counts["failed"] == 0
    assert counts["added"] + counts["merged"] + counts["rejected"] == 10
    surfaced = run(workspace, store, "session", "surface")
    assert surfaced["source"] == "agent-memory"
    tidied = run(workspace, store, "session", "tidy")
    if generation == "3":
        assert tidied["reflect_totals"]["after"] >= 1
    else:
        assert set(tidied["reflect"]) == {"decay", "tidy", "govern"}
    doctor = run(workspace, store, "session", "doctor")
    assert doctor["generation"] == int(generation)

    store.db.unlink()
    restored = run(workspace, store, "session", "sync")
    assert restored["counts"]["restored"] == counts["added"]


@pytest.mark.parametrize("generation", ["3", "5"])
def test_both_transports_survive_auto_ingest_noise_alike(
    store: StoreServer, tmp_path: Path, generation: str
) -> None:
    results = {}
    for transport in ("mcporter", "session"):
        ws = tmp_path / transport
        (ws / "memory").mkdir(parents=True)
        (ws / "memory" / f"{DAY}.md").write_text(JOURNAL)
        store.set_mode(
            "ok", AGENT_MEMORY_COMPAT=generation, AGENT_MEMORY_DB=str(tmp_path / f"{transport}.db")
        )
        results[transport] = run(ws, store, transport, "sync")["counts"]
    assert results["mcporter"] == results["session"]
