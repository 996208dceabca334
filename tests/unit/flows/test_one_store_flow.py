"""Issue 55, "crossed or lost": a store serves one workspace. Two workspaces on one store entry
(a hand-written mcporter config, `--server` reused) overwrote and pruned each other's bullets;
every command now checks whose database the entry names before its first store call, and
refuses with the way out."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from memfuse.commands import serve
from memfuse.config import load_settings
from memfuse.report import Reporter, SecretMasker
from memfuse.run.context import RunContext
from tests.fakes import World
from tests.unit.flows.test_openclaw_agents_flow import setup

TUE = "2026-12-01"
SUFFIX = ".memfuse-workspace"  # the claim beside the database
HOME = "## 09:00\n- The garden needs watering on Fridays\n"
WORK = "## 09:00\n- The payments migration ships in March\n"


def config(tmp_path: Path, entries: dict[str, dict[str, str]]) -> Path:
    """An mcporter config of stdio entries with these envs (the fake store stands in)."""
    path = tmp_path / "mcporter.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    servers: dict[str, Any] = {
        name: {"command": "/usr/bin/node", "args": ["/opt/server.js"], "env": env}
        for name, env in entries.items()
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def two(world: World, tmp_path: Path) -> tuple[World, World]:
    work = World(tmp_path / "work", world.gateway)  # the one database, as the entry says
    world.journal(TUE, HOME)
    work.journal(TUE, WORK)
    return world, work


def test_a_second_workspace_on_a_claimed_store_is_refused_before_it_writes(
    world: World, tmp_path: Path
) -> None:
    home, work = two(world, tmp_path)
    db = world.gateway.db_path
    cfg = str(config(tmp_path, {"agent-memory": {"AGENT_MEMORY_DB": str(db)}}))
    assert home.run("sync", "--mcporter-config", cfg, "--now", f"{TUE}T15:00").code == 0
    assert Path(f"{db}{SUFFIX}").read_text() == str(home.workspace.resolve())
    before = dict(world.gateway.journal_uris())
    calls = len(world.gateway.calls)

    # the same URI (event://journal/2026-12-01#0900-1) would overwrite home's bullet
    out = work.json("sync", "--mcporter-config", cfg, "--now", f"{TUE}T15:05")
    assert out.code == 2, out.stdout
    said = out.data["error"]
    assert f"holds the memories of workspace {home.workspace.resolve()}" in said
    assert f"memfuse cron --install -w {home.workspace.resolve()} -w" in said
    assert len(world.gateway.calls) == calls  # not one store call, no write, no prune
    assert world.gateway.journal_uris() == before
    for command in (("recall", "garden"), ("surface",), ("tidy",), ("where", "payments")):
        refused = work.json(*command, "--mcporter-config", cfg)
        assert refused.code == 2 and "holds the memories of workspace" in refused.data["error"]
    assert len(world.gateway.calls) == calls
    status = work.json("status", env={"MCPORTER_CONFIG": cfg})  # no store call: it names it
    assert status.code == 4
    assert any("holds the memories of workspace" in a for a in status.data["alarms"])
    mine = home.json("status", env={"MCPORTER_CONFIG": cfg}).data["alarms"]
    assert not any("holds the memories" in a for a in mine)
    # the way out of issue 50 still reaches it: take out what work sent (nothing here)
    way_out = work.json("rollback", "--shared-with", str(home.workspace), "--mcporter-config", cfg)
    assert way_out.code == 0, way_out.stdout
    assert Path(f"{db}{SUFFIX}").read_text() == str(home.workspace.resolve())


def test_two_entries_on_one_database_are_refused_to_both(world: World, tmp_path: Path) -> None:
    """work's entry edited to home's database: nobody claimed it yet, and both are refused."""
    home, work = two(world, tmp_path)
    db = str(world.gateway.db_path)
    cfg = str(config(tmp_path, {
        "agent-memory": {"AGENT_MEMORY_DB": db, "AGENT_MEMORY_WORKSPACE": str(home.workspace)},
        "agent-memory-work": {"AGENT_MEMORY_DB": db, "AGENT_MEMORY_WORKSPACE": str(work.workspace)},
    }))  # fmt: skip
    for one, server in ((home, "agent-memory"), (work, "agent-memory-work")):
        out = one.json("sync", "--mcporter-config", cfg, "--server", server)
        assert out.code == 2 and "names its database" in out.data["error"], out.stdout
        doctor = one.json("doctor", "--mcporter-config", cfg, "--server", server)
        row = next(c for c in doctor.data["checks"] if c["name"] == "server")
        assert not row["ok"] and "holds the memories of workspace" in row["detail"]
    # home's entry, used for work (`--server` reused): its AGENT_MEMORY_WORKSPACE says whose
    out = work.json("recall", "garden", "--mcporter-config", cfg)
    assert out.code == 2 and "AGENT_MEMORY_WORKSPACE names that one" in out.data["error"]
    assert world.gateway.journal_uris() == {}


def test_serve_answers_from_the_journals_and_says_why(world: World, tmp_path: Path) -> None:
    home, work = two(world, tmp_path)
    cfg = config(tmp_path, {"agent-memory": {
        "AGENT_MEMORY_DB": str(world.gateway.db_path),
        "AGENT_MEMORY_WORKSPACE": str(home.workspace),
    }})  # fmt: skip
    settings = load_settings({"workspace": str(work.workspace), "mcporter_config": str(cfg)})
    reporter = Reporter()
    reporter.begin(SecretMasker(()), logging.getLogger("memfuse.test"))
    ctx = RunContext(settings, reporter, seams=work.seams)
    answer = serve.service(ctx, pinned_now=False).call("recall", {"query": "payments migration"})
    assert "payments migration" in answer.text  # its own journals
    assert answer.data is not None and answer.data["data"]["sources"] == ["journals"]
    assert "holds the memories of workspace" in " ".join(answer.data["warnings"])
    assert world.gateway.calls == []


def test_doctors_fix_for_a_second_server_gives_it_a_database_of_its_own(
    world: World, tmp_path: Path
) -> None:
    """`doctor --install-config FILE --server agent-memory-work` pointed work at the shared
    agent-memory.db and dropped its AGENT_MEMORY_WORKSPACE."""
    server_js = tmp_path / "server.js"
    server_js.write_text("// agent-memory\n")
    work = tmp_path / "work"
    (work / "memory").mkdir(parents=True)
    kept = {"AGENT_MEMORY_DB": "/srv/work.db", "AGENT_MEMORY_WORKSPACE": str(work)}
    cfg = config(tmp_path, {"agent-memory-work": kept})
    args = ("--server-js", str(server_js), "--server-version", "5.1.0")
    out = world.json("doctor", "--install-config", str(cfg), "--server", "agent-memory-work", *args)
    assert out.code == 0, out.stdout
    env = json.loads(cfg.read_text())["mcpServers"]["agent-memory-work"]["env"]
    assert env["AGENT_MEMORY_DB"] == "/srv/work.db"  # the entry in place: kept
    assert env["AGENT_MEMORY_WORKSPACE"] == str(work)
    fresh = tmp_path / "fresh.json"
    new = World(work, world.gateway).json(
        "doctor", "--install-config", str(fresh), "--server", "agent-memory-work", *args
    )
    assert new.code == 0, new.stdout
    env = json.loads(fresh.read_text())["mcpServers"]["agent-memory-work"]["env"]
    assert env["AGENT_MEMORY_DB"].endswith("/.openclaw/agent-memory-work.db")
    assert env["AGENT_MEMORY_WORKSPACE"] == str(work.resolve())


def test_an_agent_whose_workspace_holds_anothers_store_is_named_and_left_out(
    world: World, tmp_path: Path
) -> None:
    """main's workspace `~/.openclaw` holds every agent's database (work's secret bullet
    readable in main's workspace); one of `~` holds their state folders too."""
    home = Path(os.environ["HOME"])
    work = home / ".openclaw" / "workspace-work"
    (work / "memory").mkdir(parents=True)
    setup(world, {"main": home / ".openclaw", "work": work})
    out = world.json("status", "--all-agents")
    assert out.data["agents"] == []  # work's workspace lies inside main's: left out before
    said = " | ".join(out.envelope["warnings"])
    assert f"agent main: its workspace ({home / '.openclaw'}) holds agent work's database" in said
    cron = world.run("cron", "--format", "crontab", "--all-agents")
    assert cron.code == 2 and "agent main: its workspace" in cron.stderr
    elsewhere = tmp_path / "work-ws"
    (elsewhere / "memory").mkdir(parents=True)
    setup(world, {"main": home, "work": elsewhere})
    said = " | ".join(world.json("status", "--all-agents").envelope["warnings"])
    assert f"agent main: its workspace ({home}) holds agent work's state folder" in said
    assert [r["agent"] for r in world.json("status", "--all-agents").data["agents"]] == ["work"]


def test_doctor_all_agents_names_two_agents_on_one_database(world: World, tmp_path: Path) -> None:
    """With work's entry edited to home's database, `doctor --all-agents` said both ok."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    _, mcporter = setup(world, {"home": world.workspace, "work": work})
    servers = json.loads(mcporter.read_text())["mcpServers"]
    shared = servers["agent-memory"]["env"]["AGENT_MEMORY_DB"]
    servers["agent-memory-work"] = {**servers["agent-memory"], "env": {
        "AGENT_MEMORY_DB": shared, "AGENT_MEMORY_WORKSPACE": str(work)}}  # fmt: skip
    mcporter.write_text(json.dumps({"mcpServers": servers}))
    out = world.json("doctor", "--all-agents")
    rows = {row["agent"]: row for row in out.data["agents"]}
    for agent, other in (("home", work), ("work", world.workspace)):
        assert any(f"holds the memories of workspace {other}" in f for f in rows[agent]["failed"])
    assert out.code == 1


def test_a_serve_or_recall_without_its_server_does_not_use_the_shared_database(
    world: World, tmp_path: Path
) -> None:
    """docs/serve.md's example left `--server` out for home: unless home's workspace was
    `~/.openclaw/workspace`, its recall used the shared database and said "from agent-memory
    and journals". The entry `cron --all-agents` made for it names its workspace."""
    home = world
    home.journal(TUE, HOME)
    cfg = str(config(tmp_path, {
        "agent-memory": {"AGENT_MEMORY_DB": str(tmp_path / "agent-memory.db")},
        "agent-memory-home": {"AGENT_MEMORY_DB": str(world.gateway.db_path),
                              "AGENT_MEMORY_WORKSPACE": str(home.workspace)},
    }))  # fmt: skip
    out = home.json("recall", "garden", "--mcporter-config", cfg)
    assert out.code == 2, out.stdout
    assert "entry agent-memory-home serves this workspace, not agent-memory" in out.data["error"]
    assert "--server agent-memory-home" in out.data["error"]
    mine = home.json("recall", "garden", "--mcporter-config", cfg, "--server", "agent-memory-home")
    assert mine.code == 0 and mine.data["sources"] == ["agent-memory", "journals"]


def test_the_agent_that_claimed_the_first_database_keeps_it(world: World, tmp_path: Path) -> None:
    """An `agent-memory` entry without AGENT_MEMORY_WORKSPACE served `~/.openclaw/workspace`
    alone: the agent whose sync filled and claimed it was given a new, empty database."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work}, store=False)
    db = Path(os.environ["HOME"]) / ".openclaw" / "agent-memory.db"
    mcporter = config(Path(os.environ["HOME"]) / ".mcporter", {"agent-memory": {
        "AGENT_MEMORY_DB": str(db)}})  # fmt: skip
    world.journal(TUE, HOME)
    assert world.run("sync", "--mcporter-config", str(mcporter)).code == 0  # claims it
    out = world.json("cron", "--format", "crontab", "--all-agents")
    assert out.code == 0, out.stdout
    lines = out.data["text"].splitlines()
    assert not any("--server" in line for line in lines if str(world.workspace) in line)
    assert any("--server agent-memory-work" in line for line in lines if str(work) in line)
