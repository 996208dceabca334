"""The first hour of a newcomer, in-process: the store's folder made, agent-memory found where
the README builds it from source, and said which."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.fakes import World


def source_build(home: Path) -> Path:
    """agent-memory built from its source release where the README puts it."""
    root = home / ".local" / "share" / "agent-memory" / "src"
    (root / "dist" / "mcp").mkdir(parents=True)
    (root / "package.json").write_text('{"name": "@smyslenny/agent-memory", "version": "5.1.0"}')
    js = root / "dist" / "mcp" / "server.js"
    js.write_text("// the server\n")
    return js


def test_install_config_makes_the_database_folder_and_finds_a_source_build(
    world: World, tmp_path: Path
) -> None:
    home = Path(os.environ["HOME"])
    js = source_build(home)
    config = tmp_path / "mcporter.json"
    assert not (home / ".openclaw").exists()  # a machine without OpenClaw's folder
    out = world.json("doctor", "--install-config", str(config))
    assert out.code == 0, out.stdout
    entry = json.loads(config.read_text())["mcpServers"]["agent-memory"]
    assert entry["args"] == [str(js)]
    db_folder = Path(entry["env"]["AGENT_MEMORY_DB"]).parent
    assert db_folder.is_dir() and db_folder.stat().st_mode & 0o077 == 0
    assert f"made {db_folder}, the folder of the store's database" in out.data["changes"]
    assert any("(built from its source, not the npm package)" in c for c in out.data["changes"])
    checked = world.json("doctor", "--mcporter-config", str(config))
    line = next(c for c in checked.data["checks"] if c["name"] == "mcporter-config")
    assert f"{js} (built from its source, not the npm package)" in line["detail"]
    again = world.json("doctor", "--install-config", str(config))
    assert not any("made " in c for c in again.data["changes"])
