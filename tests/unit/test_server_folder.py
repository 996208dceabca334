"""Every process memfuse starts for the store runs in a folder memfuse chose, never in the
workspace: `python -m` imports from its working folder, and memfuse may be started from inside
the workspace (issue 33)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from memfuse.config import load_settings
from memfuse.errors import ConfigError
from memfuse.settings import Settings
from memfuse.store.connect import connect, find_server


def settings_with(tmp_path: Path, **session: object) -> Settings:
    workspace = tmp_path / "workspace"
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    config = tmp_path / "config" / "memfuse" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in session.items())
    config.write_text(f'transport = "session"\n[session]\ncommand = "python3"\n{table}')
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_STATE_HOME": str(tmp_path / "state")}  # fmt: skip
    s = load_settings({"workspace": str(workspace)}, env)
    assert s.state_dir is not None
    s.state_dir.mkdir(parents=True, exist_ok=True)
    return s


def test_a_session_server_runs_in_the_state_folder_even_from_inside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = settings_with(tmp_path, args=["-m", "agent_memory_server"])
    monkeypatch.chdir(s.workspace)  # before: the server inherited this, and imported from it
    gateway, _why = connect(s, find_server(s))
    assert gateway.spec.cwd == str(s.state_dir)  # type: ignore[attr-defined]
    mcporter, _ = connect(dataclasses.replace(s, transport="mcporter"), find_server(s))
    assert mcporter._cwd == str(s.state_dir)  # type: ignore[attr-defined]


def test_a_server_cwd_inside_the_workspace_is_refused(tmp_path: Path) -> None:
    s = settings_with(tmp_path, cwd=str(tmp_path / "workspace" / "memory"))
    with pytest.raises(ConfigError, match="inside the workspace"):
        connect(s, find_server(s))
    os.symlink(tmp_path / "workspace", tmp_path / "link")  # a link into it is inside it too
    s = settings_with(tmp_path, cwd=str(tmp_path / "link"))
    with pytest.raises(ConfigError, match="inside the workspace"):
        connect(s, find_server(s))


def test_an_mcporter_entry_cwd_resolves_as_mcporter_resolves_it(tmp_path: Path) -> None:
    """Relative to the config's folder, `~` expanded: not relative to memfuse's own folder."""
    config = tmp_path / "mc" / "mcporter.json"
    config.parent.mkdir()
    entry = {"command": "node", "args": ["server.js"], "cwd": "srv"}
    config.write_text(json.dumps({"mcpServers": {"agent-memory": entry}}))
    s = load_settings({"workspace": str(tmp_path / "ws"), "mcporter_config": str(config)},
                      {"HOME": str(tmp_path)})  # fmt: skip
    spec = find_server(s)
    assert not isinstance(spec, ConfigError)
    assert spec.cwd == str(tmp_path / "mc" / "srv")


def test_doctor_says_why_a_server_inside_the_workspace_is_not_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from memfuse.cli import app

    s = settings_with(tmp_path, cwd=str(tmp_path / "workspace"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    out = CliRunner().invoke(app, ["doctor", "-w", str(s.workspace), "--json"])
    assert out.exit_code == 1, out.output
    server = next(c for c in json.loads(out.stdout)["data"]["checks"] if c["name"] == "server")
    assert not server["ok"] and "inside the workspace" in server["detail"]
