"""The store's merges as they are (issue 39, families 1 and 7), through the real mcporter:
against the reference server's compat 5, and (opt-in) against the real agent-memory.

The real one is not installable from this machine's registry: point `MEMFUSE_TEST_AGENT_MEMORY` at
its built server (`…/agent-memory/dist/mcp/server.js`, built from the public source) to run
it; it skips saying so otherwise. It runs on a database of its own, auto-ingest off.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from tests.conftest import UNREACHED, StoreServer, mcporter_command

pytestmark = pytest.mark.integration

DAY0, DAY1, DAY2 = "2026-11-26", "2026-11-28", "2026-11-29"
NOW = f"{DAY2}T22:00"
NINE = "Maria prefers the weekly sync meeting on Tuesday mornings at nine"
SHARP = f"{NINE} sharp"
TEN = "Maria prefers the weekly sync meeting on Tuesday mornings at ten sharp"
ROUTINE = "Checked the backup logs and rotated the nightly snapshots as usual"
EDITED = "Checked the backup logs and found the billing snapshot failed overnight"


def _sync(ws: Path, args: list[str], now: str = NOW) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["sync", "-w", str(ws), "--now", now, *args, "--json"])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    data: dict[str, Any] = json.loads(result.stdout)["data"]
    return data


def _family_1(ws: Path, args: list[str], at: Any) -> None:
    """A near-duplicate merged, then edited: each text held, and the next sync settled."""
    (ws / "memory" / f"{DAY1}.md").write_text(f"- {NINE}\n")
    _sync(ws, args, f"{DAY1}T22:00")
    (ws / "memory" / f"{DAY2}.md").write_text(f"- {SHARP}\n")
    merged = _sync(ws, args)
    assert merged["counts"]["merged"] == 1, merged["counts"]
    (ws / "memory" / f"{DAY2}.md").write_text(f"- {TEN}\n")
    edited = _sync(ws, args)
    assert edited["calls"] == 2, edited  # the probe and one rewrite
    held = at(f"{DAY1}#0000-1")
    assert NINE in held and TEN in held and SHARP not in held, held
    assert at(f"{DAY2}#0000-1") == held  # ≥ 4 bound day 2's URI to it
    assert _sync(ws, args)["calls"] == 1


def _family_7(ws: Path, args: list[str], at: Any, copies: int) -> None:
    """One of many identical notes edited: one call, not one per copy."""
    lines = [f"- {ROUTINE}\n"] * copies
    path = ws / "memory" / f"{DAY0}.md"
    path.write_text("".join(lines))
    first = _sync(ws, args)
    assert (first["counts"]["added"], first["counts"]["skipped"]) == (1, copies - 1)
    lines[copies // 2] = f"- {EDITED}\n"
    path.write_text("".join(lines))
    edited = _sync(ws, args)
    assert edited["calls"] == 2, edited
    assert EDITED in at(f"{DAY0}#0000-{copies // 2 + 1}")
    assert at(f"{DAY0}#0000-1") == ROUTINE
    assert _sync(ws, args)["calls"] == 1


def test_an_edited_merged_bullet_through_mcporter_on_compat_5(
    store: StoreServer, workspace: Path
) -> None:
    store.set_mode("ok", AGENT_MEMORY_COMPAT="5", AGENT_MEMORY_AUTO_INGEST="0")

    _family_1(workspace, store.cli_args("mcporter"), _held(store.direct))


def _real_server(tmp_path: Path, workspace: Path) -> list[str]:
    """memfuse's flags for the real agent-memory named by MEMFUSE_TEST_AGENT_MEMORY."""
    entry = os.environ.get("MEMFUSE_TEST_AGENT_MEMORY")
    node = shutil.which("node")
    if not entry:
        pytest.skip(
            "the real agent-memory is not installable from this machine's registry: set"
            " MEMFUSE_TEST_AGENT_MEMORY to its dist/mcp/server.js to run this test"
        )
    if not Path(entry).is_file() or node is None:
        pytest.skip(f"MEMFUSE_TEST_AGENT_MEMORY={entry} is not a file, or there is no node")
    data = tmp_path / "agent-memory"
    data.mkdir()
    env = {
        "AGENT_MEMORY_DB": str(data / "memory.db"), "AGENT_MEMORY_AUTO_INGEST": "0",
        "AGENT_MEMORY_WORKSPACE": str(workspace),  # the store serves it (ingestion off)
    }  # fmt: skip
    config = tmp_path / "mcporter.json"
    server = {"command": node, "args": [entry], "env": env}
    config.write_text(json.dumps({"mcpServers": {"agent-memory": server}, "imports": []}))
    return [
        "--mcporter", mcporter_command(), "--mcporter-config", str(config),
        "--transport", "mcporter",
    ]  # fmt: skip


def _reader(args: list[str]) -> Any:
    from memfuse.store.gateway import McporterGateway

    gateway = McporterGateway(args[1], "agent-memory", config=Path(args[3]), timeout=UNREACHED)
    return _held(lambda tool, arguments: gateway.call(tool, arguments).require_object())


def _held(call: Any) -> Any:
    """The text of the memory the store holds at a journal position, whatever its type."""

    def at(position: str) -> str:
        for prefix in ("knowledge", "event", "emotion"):
            found = call("recall_path", {"uri": f"{prefix}://journal/{position}"})
            if found.get("found") and "memory" in found:  # an exact hit, not a prefix
                return str(found["memory"]["content"])
        raise AssertionError(f"the store holds nothing at {position}")

    return at


def test_families_1_and_7_against_the_real_agent_memory(tmp_path: Path, workspace: Path) -> None:
    args = _real_server(tmp_path, workspace)
    at = _reader(args)
    _family_1(workspace, args, at)
    _family_7(workspace, args, at, copies=30)
