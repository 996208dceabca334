"""What a newcomer meets in the first hour, with real processes: a server that will not start
is told by its cause and its log, and by its name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app

pytestmark = pytest.mark.integration


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on PATH")
def test_a_missing_server_script_is_told_by_cannot_find_module_and_the_log(
    tmp_path: Path, workspace: Path
) -> None:
    node = shutil.which("node")
    config = tmp_path / "mcporter.json"
    missing = tmp_path / "nope" / "dist" / "mcp" / "server.js"
    entry = {
        "command": node,
        "args": [str(missing)],
        "env": {"AGENT_MEMORY_DB": str(tmp_path / "m.db")},
    }
    config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}}))
    result = CliRunner().invoke(
        app, ["doctor", "-w", str(workspace), "--mcporter-config", str(config), "--json"]
    )
    assert result.exit_code == 1
    server = next(c for c in json.loads(result.stdout)["data"]["checks"] if c["name"] == "server")
    assert f"Cannot find module '{missing}'" in server["detail"]  # not Node's last line
    assert "session-server.log" in server["detail"]
    assert "the MCP session to agent-memory did not open" in result.stderr
    assert repr(node) not in result.stderr  # the server by its name, not /usr/bin/node
