"""The first hour of a newcomer, in-process: the store's folder made, agent-memory found where
the README builds it from source, and said which."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

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


# --- installing a schedule: under $HOME, all or nothing -------------------------------------


def tool(bin_dir: Path, name: str, script: str) -> None:
    """A stand-in for a scheduler's command on PATH, recording its calls."""
    path = bin_dir / name
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {bin_dir}/calls\n{script}\n')
    path.chmod(0o755)


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # not the password file's home
    return bin_dir


def everything_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_launchd_without_launchctl_fails_and_writes_nothing(world: World, tools: Path) -> None:
    home = Path(os.environ["HOME"])
    out = world.json("cron", "--format", "launchd", "--install")
    assert out.code == 1 and "launchctl is not on this PATH" in out.data["error"]
    assert not (home / "Library").exists()


def test_launchd_agents_go_under_home(world: World, tools: Path) -> None:
    tool(tools, "launchctl", "exit 0")
    out = world.json("cron", "--format", "launchd", "--install")
    assert out.code == 0, out.stdout
    agents = Path(os.environ["HOME"]) / "Library" / "LaunchAgents"
    assert len(list(agents.glob("*.plist"))) == 3


def test_systemd_without_a_user_bus_fails_with_its_cause_and_writes_nothing(
    world: World, tools: Path
) -> None:
    tool(
        tools,
        "systemctl",
        'case "$*" in *show-environment*) echo "Failed to connect to bus: No medium found" >&2;'
        " exit 1;; esac; exit 0",
    )
    home = Path(os.environ["HOME"])
    out = world.json("cron", "--format", "systemd", "--install")
    assert out.code == 1
    assert "Failed to connect to bus: No medium found" in out.data["error"]
    assert not (home / ".config").exists()
    assert "daemon-reload" not in (tools / "calls").read_text()
    assert not (world.state / "schedule.json").exists()


def test_a_systemd_install_that_fails_half_way_puts_the_files_back(
    world: World, tools: Path
) -> None:
    tool(tools, "systemctl", 'case "$*" in *enable*) echo "Unit not found" >&2; exit 1;; esac')
    units = Path(os.environ["HOME"]) / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "backup.timer").write_text("[Timer]\nOnCalendar=daily\n")
    out = world.json("cron", "--format", "systemd", "--install")
    assert out.code == 1 and "Unit not found" in out.data["error"]
    assert everything_under(units) == ["backup.timer"]  # under $HOME/.config, and only the user's


def test_removing_one_formats_schedule_keeps_the_others_record(world: World, tools: Path) -> None:
    tool(tools, "systemctl", "exit 0")
    table = tools / "table"
    table.write_text("MAILTO=me@example.invalid\n")
    tool(tools, "crontab", f'if [ "$1" = -l ]; then cat {table}; else cat > {table}; fi')
    assert world.json("cron", "--format", "systemd", "--install").code == 0
    assert world.json("cron", "--remove").code == 0  # the crontab's, never installed
    record = json.loads((world.state / "schedule.json").read_text())
    assert record["format"] == "systemd"  # status still tells its missed runs
    assert world.json("cron", "--format", "systemd", "--remove").code == 0
    assert not (world.state / "schedule.json").exists()
