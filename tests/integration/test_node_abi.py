"""A server whose native module was built for another Node (issue 47): Node names it over
several lines of its stderr, below the `Error: The module '…'` line; doctor and a run name it
with its fixes, from the server's log, through the real session transport."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memfuse.cli import app

pytestmark = pytest.mark.integration

SAID = """/srv/am/dist/mcp/server.js:3
const Database = require('better-sqlite3');
Error: The module '/srv/am/node_modules/better-sqlite3/build/Release/better_sqlite3.node'
was compiled against a different Node.js version using
NODE_MODULE_VERSION 115. This version of Node.js requires
NODE_MODULE_VERSION 137. Please try re-compiling or re-installing
the module (for instance, using `npm rebuild` or `npm install`).
Node.js v24.4.0
"""


def test_doctor_and_a_run_name_a_node_abi_mismatch_and_its_fixes(
    workspace: Path, tmp_path: Path
) -> None:
    server = tmp_path / "server.py"  # dies as the real one does, saying what Node says
    server.write_text(f"import sys\nsys.stderr.write({SAID!r})\nsys.exit(1)\n")
    config = tmp_path / "mcporter.json"
    entry = {"command": sys.executable, "args": [str(server)]}
    config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}}))
    common = ["-w", str(workspace), "--mcporter-config", str(config), "--transport", "session"]
    doctor = CliRunner().invoke(app, ["doctor", *common, "--json"])
    row = next(c for c in json.loads(doctor.stdout)["data"]["checks"] if c["name"] == "server")
    assert not row["ok"]
    assert "better_sqlite3.node was built for another Node" in row["detail"]
    assert "NODE_MODULE_VERSION 115, Node 20" in row["detail"]
    assert "`npm rebuild better-sqlite3` in /srv/am" in row["detail"]
    assert "--server-js PATH` picks a Node that loads it" in row["detail"]
    (workspace / "memory" / "2026-11-29.md").write_text("## 09:30\n- met Bob\n")
    run = CliRunner().invoke(app, ["sync", *common, "-q", "--now", "2026-11-29T10:00"])
    assert run.exit_code == 78, run.stderr  # the setup, not a store that is down
    assert "npm rebuild better-sqlite3" in run.stderr
