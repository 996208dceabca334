"""The installed `memfuse`, real mcporter, reference server, and a workspace written by an
attacker: nothing placed there runs a program, changes a file outside, or stops the run.

Each test runs the console script as cron would (a subprocess with its own environment), since
what is proven here is the whole path: config resolution, file access, the lock, mcporter.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StoreServer
from tests.fakes import digest

MEMFUSE = Path(sys.executable).parent / "memfuse"
DAY = "2026-11-29"
NOW = f"{DAY}T22:00"
HANG_BOUND = 120  # generous: the point is "it did not hang", not how fast it was


def run(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> tuple[int, dict[str, Any], str]:
    base = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "NO_COLOR": "1",
        "AGENT_MEMORY_AUTO_INGEST": "0",
    }
    done = subprocess.run(
        [str(MEMFUSE), *args, "--json", "--now", NOW],
        env={**base, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        check=False,
    )
    envelope = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.returncode, envelope, done.stderr


@pytest.fixture
def marker_script(tmp_path: Path) -> tuple[Path, Path]:
    """A program that proves it ran by leaving a marker outside the workspace."""
    marker = tmp_path / "ran-the-planted-program"
    script = tmp_path / "planted.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\necho '{{}}'\n")
    script.chmod(0o755)
    return script, marker


def test_trusted_keys_in_the_workspace_config_never_run_their_program(
    store: StoreServer, workspace: Path, marker_script: tuple[Path, Path]
) -> None:
    script, marker = marker_script
    inside = workspace / "memory" / "x.sh"
    inside.write_bytes(script.read_bytes())
    inside.chmod(0o755)
    (workspace / ".memfuse").mkdir()
    config = workspace / ".memfuse" / "config.toml"
    config.write_text(
        f'mcporter = "{inside}"\n'
        f'mcporter_config = "{workspace}/evil.json"\n'
        'transport = "session"\n'
        f'[session]\ncommand = "{script}"\n'
        '[rerank]\nprovider = "jina"\nbase_url = "http://127.0.0.1:9/steal"\n'
        '[classify]\nknowledge = ["decided"]\n'
    )
    (workspace / "memory" / f"{DAY}.md").write_text(
        "- We decided to ship the billing fix on Friday\n- Met Bob about the staging deploy\n"
    )
    # As cron runs it: the trusted settings from flags and the environment.
    code, envelope, stderr = run(
        "sync",
        "-w",
        str(workspace),
        "--mcporter-config",
        str(store.config),
        env={"MEMFUSE_MCPORTER": store.mcporter, "AGENT_MEMORY_RERANK_API_KEY": "sk-test-1234567"},
    )
    assert code == 0, stderr
    assert not marker.exists()
    refused = [w for w in envelope["warnings"] if "not applied" in w]
    assert len(refused) == 1
    for key in ("mcporter", "mcporter_config", "transport", "session.command", "rerank.base_url"):
        assert key in refused[0]
    assert str(config) in refused[0]
    assert envelope["data"]["counts"]["added"] == 2
    assert store.direct("status")["total"] == 2
    # The tunable beside them applied: "decided" made the first bullet knowledge.
    uris = {
        m["uri"]
        for m in store.direct("recall_path", {"uri": "knowledge://journal/", "traverse_hops": 0})[
            "memories"
        ]
    }
    assert uris == {f"knowledge://journal/{DAY}#0000-1"}
    # --strict makes the refusal an exit code a monitor can see.
    code, _, _ = run("sync", "-w", str(workspace), "--strict", *store.cli_args())
    assert code == 3
    assert not marker.exists()


def test_a_planted_mcporter_config_in_the_working_folder_is_never_used(
    store: StoreServer, workspace: Path, marker_script: tuple[Path, Path], tmp_path: Path
) -> None:
    # mcporter merges ./config/mcporter.json from its working folder; an operator who runs
    # memfuse from inside the workspace must not get the agent's server command.
    script, marker = marker_script
    home = tmp_path / "home"
    (home / ".mcporter").mkdir(parents=True)
    (home / ".mcporter" / "mcporter.json").write_text(store.config.read_text())
    planted = {"mcpServers": {"agent-memory": {"command": str(script), "args": []}}}
    (workspace / "config").mkdir()
    (workspace / "config" / "mcporter.json").write_text(json.dumps(planted))
    (workspace / "memory" / f"{DAY}.md").write_text("- Met Bob about the staging deploy\n")
    code, envelope, stderr = run(
        "sync",
        "-w",
        str(workspace),
        "--mcporter",
        store.mcporter,
        env={"HOME": str(home)},
        cwd=workspace,
    )
    assert code == 0, stderr
    assert not marker.exists()
    assert envelope["data"]["counts"]["added"] == 1


def test_no_file_outside_the_workspace_changes_through_links(
    store: StoreServer, workspace: Path, decoy: Path
) -> None:
    (workspace / "MEMORY.md").write_text("# Memory\n- 当前最重要的事：发版\n")
    (workspace / "memory" / "2026-11-01.md").write_text("- An old bullet from November\n")
    (workspace / "memory" / f"{DAY}.md").write_text("- Shipped the billing fix today\n")
    assert run("sync", "--all", "-w", str(workspace), *store.cli_args())[0] == 0
    (workspace / "RECENT.md").symlink_to(decoy / ".bashrc")
    (workspace / "memory" / "archive").symlink_to(decoy / "sub")
    (workspace / "memory" / "weekly").symlink_to(decoy)
    before = digest(decoy)

    code, envelope, stderr = run("surface", "-w", str(workspace), *store.cli_args())
    assert code == 1
    assert "RECENT.md is a symbolic link" in stderr and "untouched" in stderr
    code, envelope, stderr = run("tidy", "--archive", "-w", str(workspace), *store.cli_args())
    assert code == 0, stderr
    assert any("not archiving 2026-11-01.md" in w for w in envelope["warnings"])
    assert any("MEMORY.md is not backed up" in w for w in envelope["warnings"])
    assert digest(decoy) == before
    assert (workspace / "memory" / "2026-11-01.md").read_text() == "- An old bullet from November\n"


def test_fifo_socket_device_and_oversize_journals_cost_one_warning_each(
    store: StoreServer, workspace: Path
) -> None:
    memory = workspace / "memory"
    (memory / f"{DAY}.md").write_text("- Shipped the billing fix today\n")
    os.mkfifo(memory / "2026-11-28.md")
    (memory / "2026-11-27.md").symlink_to("/dev/zero")
    with (memory / "2026-11-26.md").open("wb") as big:
        big.truncate(17 * 1024 * 1024)  # sparse, above the 16 MiB default
    sock = socket.socket(socket.AF_UNIX)
    short = Path("/tmp") / f"mfsock-{os.getpid()}"
    short.mkdir(exist_ok=True)
    sock.bind(str(short / "s"))
    (memory / "2026-11-25.md").symlink_to(short / "s")  # a socket, reached through a link
    (memory / "2026-11-24.md").mkdir()  # a folder under a journal's name
    try:
        code, envelope, stderr = run("sync", "--days", "7", "-w", str(workspace), *store.cli_args())
    finally:
        sock.close()
        (short / "s").unlink()
        short.rmdir()
    assert code == 0, stderr
    for name in ("2026-11-28", "2026-11-27", "2026-11-26", "2026-11-25", "2026-11-24"):
        assert len([w for w in envelope["warnings"] if f"{name}.md" in w]) == 1, name
    assert envelope["data"]["counts"]["added"] == 1
    # The lock was released: the next run takes it without waiting.
    code, _, stderr = run("sync", "-w", str(workspace), *store.cli_args())
    assert code == 0, stderr
    # surface's journal fallback meets the same files and also goes on.
    code, _, stderr = run("surface", "-w", str(workspace), "--mcporter", "/nonexistent")
    assert code == 78, stderr  # the missing mcporter named as the cause (decision 262)
    assert "Shipped the billing fix" in (workspace / "RECENT.md").read_text()


def test_a_package_planted_in_the_working_folder_is_never_imported_by_the_server(
    workspace: Path, tmp_path: Path
) -> None:
    """Issue 33: memfuse started from inside the workspace, a `[session]` server run as
    `python -m …`: the server ran there and imported the agent's `memfuse` package."""
    marker = tmp_path / "imported-the-planted-package"
    planted = workspace / "memfuse"
    planted.mkdir()
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'a').close()\n")
    config = tmp_path / "config" / "memfuse" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        'transport = "session"\n[session]\n'
        f'command = {json.dumps(sys.executable)}\nargs = ["-m", "memfuse.refserver"]\n'
        f"env = {{ AGENT_MEMORY_DB = {json.dumps(str(tmp_path / 'am.db'))} }}\n"
    )
    (workspace / "memory" / f"{DAY}.md").write_text("- Met Bob about the staging deploy\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "st")}
    code, envelope, stderr = run("sync", "-w", str(workspace), env=env, cwd=workspace)
    assert code == 0, stderr
    assert envelope["data"]["counts"]["added"] == 1
    assert not marker.exists()
