"""Issue 50: crontab, systemd and launchd without OpenClaw — several `-w` give one block per
workspace, each its own state folder and its own store (a database per workspace, made as
`--all-agents` makes one per agent); idempotent; nested or repeated workspaces refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memfuse.schedule import plan
from memfuse.state.folder import default_state_dir
from tests.fakes import World
from tests.unit.flows.test_cron_flow import fake_crontab, tool
from tests.unit.flows.test_openclaw_agents_flow import setup


def store_entry(world: World) -> Path:
    """The one `agent-memory` entry a single-workspace install wrote (it serves world's)."""
    home = Path(os.environ["HOME"])
    mcporter = home / ".mcporter" / "mcporter.json"
    mcporter.parent.mkdir(parents=True, exist_ok=True)
    entry = {"command": "/usr/bin/node", "args": ["/opt/agent-memory/dist/mcp/server.js"],
             "env": {"AGENT_MEMORY_DB": str(home / ".agent-memory" / "agent-memory.db"),
                     "AGENT_MEMORY_WORKSPACE": str(world.workspace)}}  # fmt: skip
    mcporter.write_text(json.dumps({"mcpServers": {"agent-memory": entry}}, indent=2))
    return mcporter


def own_server(lines: list[str]) -> set[str]:
    return {line.split("--server ")[1].split()[0] for line in lines if "--server " in line}


def test_several_w_give_a_crontab_block_per_workspace_each_its_own_store(
    world: World, tools: Path, tmp_path: Path
) -> None:
    table = fake_crontab(tools, "MAILTO=me@example.invalid\n")
    mcporter = store_entry(world)
    work = tmp_path / "work"
    (work / "memory").mkdir(parents=True)
    out = world.json("cron", "--format", "crontab", "--install", "-w", str(work))
    assert out.code == 0, out.stdout
    installed = table.read_text()
    assert installed.startswith("MAILTO=me@example.invalid\n")
    for ws in (world.workspace, work):
        assert installed.count(f"# >>> memfuse {plan.label_for(ws)} >>>") == 1, installed
        assert json.loads((default_state_dir(ws, os.environ) / "schedule.json").read_text())
    lines = [line for line in installed.splitlines() if line[:1].isdigit()]
    work_lines = [line for line in lines if f"--workspace {work}" in line]
    home_lines = [line for line in lines if f"--workspace {world.workspace}" in line]
    assert len(work_lines) == 3 and len(home_lines) == 3
    assert own_server(home_lines) == set()  # the entry that serves it, and its database, kept
    (server,) = own_server(work_lines)
    assert server.startswith("agent-memory-work-")
    servers = json.loads(mcporter.read_text())["mcpServers"]
    assert servers[server]["env"]["AGENT_MEMORY_WORKSPACE"] == str(work)
    assert servers[server]["env"]["AGENT_MEMORY_DB"].endswith(f"/.agent-memory/{server}.db")
    assert servers["agent-memory"]["env"]["AGENT_MEMORY_DB"].endswith("/agent-memory.db")

    again = world.json("cron", "--format", "crontab", "--install", "-w", str(work))
    assert again.code == 0 and table.read_text() == installed
    assert json.loads(mcporter.read_text())["mcpServers"] == servers  # the same id each run
    printed = world.json("cron", "--format", "crontab", "-w", str(work)).data["text"]
    assert all(f">>> memfuse {plan.label_for(ws)} >>>" in printed for ws in (world.workspace, work))

    removed = world.json("cron", "--format", "crontab", "--remove", "-w", str(work))
    assert removed.code == 0, removed.stdout
    assert table.read_text() == "MAILTO=me@example.invalid\n"
    assert server in json.loads(mcporter.read_text())["mcpServers"]  # memories never deleted


def test_several_w_give_systemd_units_per_workspace_and_check_each(
    world: World, tools: Path, tmp_path: Path, dry_runs: list[list[str]]
) -> None:
    tool(tools, "systemctl", "exit 0")
    store_entry(world)
    work = tmp_path / "work"
    (work / "memory").mkdir(parents=True)
    out = world.json("cron", "--format", "systemd", "--install", "-w", str(work))
    assert out.code == 0, out.stdout
    units = {p.name for p in (tmp_path / "config" / "systemd" / "user").iterdir()}
    for ws in (world.workspace, work):
        assert {f"{plan.label_for(ws)}-{r}.timer" for r in ("surface", "sync", "tidy")} <= units
    checked = world.json("cron", "--format", "systemd", "--check", "-w", str(work))
    names = [job["job"] for job in checked.data["jobs"]]
    assert sum(n.startswith("work-") for n in names) >= 3, names
    work_jobs = [job for job in checked.data["jobs"] if job["job"].startswith("work-")]
    assert all("--server agent-memory-work-" in job["command"] for job in work_jobs
               if job["job"].endswith(".service"))  # fmt: skip
    tried = [argv for argv in dry_runs if str(work) in argv]
    assert len(tried) == 3 and all("agent-memory-work-" in " ".join(a) for a in tried)


def test_nested_repeated_or_openclaw_workspaces_are_refused(
    world: World, tools: Path, tmp_path: Path
) -> None:
    table = fake_crontab(tools, None)
    bare = world.json("cron", "--format", "crontab", "--install", "-w", str(tmp_path))
    assert bare.code == 2 and "-w: no 'agent-memory' entry in" in bare.data["error"]
    store_entry(world)
    inner = world.workspace / "inner"
    (inner / "memory").mkdir(parents=True)
    out = world.json("cron", "--format", "crontab", "--install", "-w", str(inner))
    assert out.code == 0, out.stdout
    assert any("inner" in n and "lies inside" in n for n in out.data["notes"])
    assert plan.label_for(inner) not in table.read_text()  # its memory would not be its own

    twice = world.json("cron", "--format", "crontab", "-w", str(world.workspace) + "/.")
    assert twice.code == 2 and "given twice" in twice.data["error"]
    openclaw = world.json("cron", "--format", "openclaw", "-w", str(tmp_path))
    assert openclaw.code == 2 and "--all-agents reads them" in openclaw.data["error"]
    setup(world, {"home": world.workspace})
    both = world.run("cron", "--format", "crontab", "--all-agents", "-w", str(tmp_path))
    assert both.code == 2 and "not with --all-agents" in both.stdout + both.stderr
    one_state = world.run("cron", "--state-dir", str(tmp_path / "st"), "-w", str(tmp_path))
    assert one_state.code == 2 and "their own state folder" in one_state.stderr
