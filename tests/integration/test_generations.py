"""sync, surface, tidy, doctor and the index repair through the real mcporter against each
generation of agent-memory (the reference server's AGENT_MEMORY_COMPAT), auto-ingest's stdout
noise on; and the session transport surviving that noise like mcporter does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import StoreServer

pytestmark = pytest.mark.integration


def run(ws: Path, store: StoreServer, transport: str, *args: str) -> dict[str, Any]:
    argv = [*args, "-w", str(ws), "--now", NOW, *store.cli_args(transport), "--json"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    envelope: dict[str, Any] = json.loads(result.stdout)
    assert envelope["status"] == "ok", envelope["warnings"]
    return envelope["data"]  # type: ignore[no-any-return]


DAY = "2026-02-21"
NOW = f"{DAY}T23:00"
# Each command's path through every generation with as few bullets as show it: every call
# through mcporter costs ~0.5 s of CPU (node loading its modules), and this runs 4 times.
JOURNAL = f"""# {DAY}

## 09:30 standup
- 今天很开心，终于修好了登录问题
- Remember to rotate the staging database credentials monthly
- Deployed version 2.4 of the API gateway to staging

## 23:00 late
- Fixed login bug
- Deployed version 2.5 of the API gateway to staging today
"""  # "Fixed login bug": 15 effective characters, and 4.x/5.x's gate wants 20;
# the 2.5 line is a near-duplicate of the 2.4 one, which 4.x/5.x merge.


def journal(ws: Path) -> Path:
    return ws / "memory" / f"{DAY}.md"


@pytest.mark.parametrize("generation", ["2", "3", "4", "5"])
def test_the_lifecycle_through_mcporter_against_each_generation(
    store: StoreServer, workspace: Path, generation: str
) -> None:
    store.set_mode("ok", AGENT_MEMORY_COMPAT=generation)  # ≥ 3: [auto-ingest] on stdout
    journal(workspace).write_text(JOURNAL)
    synced = run(workspace, store, "mcporter", "sync")
    counts = synced["counts"]
    assert counts["failed"] == 0
    if generation in ("4", "5"):
        assert (counts["added"], counts["merged"], counts["rejected"]) == (3, 1, 1)
        assert "effective 15 < 20" in synced["rejected"][0]["reason"]
    else:
        assert (counts["added"], counts["merged"], counts["rejected"]) == (5, 0, 0)
    surfaced = run(workspace, store, "mcporter", "surface")
    assert surfaced["source"] == "agent-memory"
    tidied = run(workspace, store, "mcporter", "tidy")
    if generation == "3":
        assert tidied["reflect_totals"]["after"] >= 1
    else:
        assert set(tidied["reflect"]) == {"decay", "tidy", "govern"}
        assert all(
            isinstance(v, int)
            for phase in tidied["reflect"].values()
            for v in phase.values()
            if not isinstance(v, dict)
        )
    doctor = run(workspace, store, "mcporter", "doctor")
    assert doctor["generation"] == int(generation)

    store.db.unlink()  # the repair is not about the transport: one session does it
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
