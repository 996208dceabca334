"""Issue 50: `memfuse cron --format openclaw --all-agents` — every agent OpenClaw's
configuration lists gets its own three jobs (`agentId`), its own workspace, state folder and
store; idempotent; an agent added later is picked up, one removed is named and removed."""

from __future__ import annotations

import functools
import itertools
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memfuse.cli import app
from memfuse.ledger.reader import LedgerReader
from memfuse.schedule import plan, registry
from memfuse.schedule.base import InstallOutcome, Machine, Scheduler, run_tool
from memfuse.schedule.runs import Job, Schedule
from memfuse.state.folder import StateFolder, default_state_dir
from tests.fakes import World
from tests.unit.flows.test_cron_flow import fake_crontab
from tests.unit.flows.test_openclaw_install_flow import USERS, Gateway, stand_in


@pytest.fixture
def gateway(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Gateway:
    return stand_in(tmp_path, monkeypatch, world)


def setup(world: World, agents: dict[str, Path], *, store: bool = True) -> tuple[Path, Path]:
    home = Path(os.environ["HOME"])
    config = home / ".openclaw" / "openclaw.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    roster = ",\n".join(f"    {name}: {{ workspace: '{ws}', }}" for name, ws in agents.items())
    config.write_text(
        f"// JSON5, as OpenClaw's docs write it\n{{ agents: {{ entries: {{\n{roster}\n}} }} }}\n"
    )
    mcporter = home / ".mcporter" / "mcporter.json"
    if store and not mcporter.exists():
        mcporter.parent.mkdir(parents=True, exist_ok=True)
        entry = {"command": "/usr/bin/node", "args": ["/opt/agent-memory/dist/mcp/server.js"],
                 "env": {"AGENT_MEMORY_DB": str(home / ".openclaw" / "agent-memory.db"),
                         "AGENT_MEMORY_AUTO_INGEST": "0",
                         "AGENT_MEMORY_WORKSPACE": str(world.workspace)}}  # fmt: skip
        mcporter.write_text(json.dumps({"mcpServers": {"agent-memory": entry}}, indent=2))
    return config, mcporter


def by_agent(gateway: Gateway) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for job in gateway.jobs:
        if str(job.get("declarationKey", "")).startswith("memfuse:"):
            found.setdefault(str(job.get("agentId")), []).append(job)
    return found


def test_every_agent_gets_its_own_jobs_state_and_store(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    _, mcporter = setup(world, {"home": world.workspace, "work": work})
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert out.code == 0, out.stdout
    jobs = by_agent(gateway)
    assert sorted(jobs) == ["home", "work"] and all(len(v) == 3 for v in jobs.values())
    for agent, ws in (("home", world.workspace), ("work", work)):
        label = plan.label_for(ws)
        assert all(str(j["declarationKey"]).startswith(f"memfuse:{label}-") for j in jobs[agent])
        argv = [a for j in jobs[agent] for a in j["payload"]["argv"]]  # type: ignore[index]
        assert str(ws) in argv
        record = default_state_dir(ws, os.environ) / "schedule.json"
        assert json.loads(record.read_text())["format"] == "openclaw"
    home_argv = jobs["home"][0]["payload"]["argv"]  # type: ignore[index]
    work_argv = jobs["work"][0]["payload"]["argv"]  # type: ignore[index]
    assert "--server" not in home_argv  # the existing entry and its database: nothing moves
    assert work_argv[work_argv.index("--server") + 1] == "agent-memory-work"
    servers = json.loads(mcporter.read_text())["mcpServers"]
    own = servers["agent-memory-work"]
    assert own["env"]["AGENT_MEMORY_DB"].endswith("/.openclaw/agent-memory-work.db")
    assert own["env"]["AGENT_MEMORY_WORKSPACE"] == str(work)
    assert own["args"] == servers["agent-memory"]["args"]
    assert servers["agent-memory"]["env"]["AGENT_MEMORY_DB"].endswith("/agent-memory.db")

    gateway.forget_calls()
    again = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert again.code == 0, again.stdout
    assert gateway.calls("gateway", "call", "cron.add") == [] and by_agent(gateway) == jobs
    assert any("already holds this entry" in c for c in again.data["changes"])

    # `work` leaves the configuration: its jobs are named, then removed.
    setup(world, {"home": world.workspace})
    named = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    stays = [c for c in named.data["changes"] if c.startswith("agent work is no longer")]
    assert len(stays) == 3 and all("--remove --all-agents" in c for c in stays)
    removed = world.json("cron", "--format", "openclaw", "--remove", "--all-agents")
    assert removed.code == 0, removed.stdout
    assert by_agent(gateway) == {}
    assert (
        sum("is no longer configured: removed its job" in c for c in removed.data["changes"]) == 3
    )


def test_two_agents_install_and_remove_with_one_job_list_and_one_hook_call(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """Issue 57: each `openclaw` call starts Node (seconds at load); the agents' installs read
    one job list for them all and the strays (before: one per agent and one more), the hook is
    enabled once, and removal takes every agent's jobs, the hook and its settings whole."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work})
    installed = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert installed.code == 0, installed.stdout
    assert len(gateway.calls("cron", "list")) == 1  # before: 3
    assert gateway.calls("hooks") + gateway.calls("config") == [] and len(gateway.patches()) == 1
    assert len(gateway.calls("gateway", "call", "cron.add")) == 6
    assert len(gateway.calls()) == 9  # before: 10, the hook's `hooks enable` 3× a light call
    assert sorted(by_agent(gateway)) == ["home", "work"]
    gateway.forget_calls()
    removed = world.json("cron", "--format", "openclaw", "--remove", "--all-agents")
    assert removed.code == 0, removed.stdout
    assert len(gateway.calls("cron", "list")) == 1 and len(gateway.calls("cron", "rm")) == 6
    assert gateway.calls("config") + gateway.calls("hooks") == []
    assert gateway.patches() == [{"hooks": None}]
    assert len(gateway.calls()) == 9  # before: 10
    assert by_agent(gateway) == {}
    config = json.loads((Path(os.environ["HOME"]) / ".openclaw" / "openclaw.json").read_text())
    assert "hooks" not in config


class Rounds:
    """The `openclaw` calls of a command in the rounds a test says (calls that wait on each
    other; each call costs a start of Node, seconds at load): each call is held until every call
    of its round has begun, so calls said to run side by side must (a build that makes one wait
    on another never fills the round; the bound only ends that wait), whatever the machine's
    speed."""

    def __init__(self, world: World, gateway: Gateway) -> None:
        self.gateway, self.lock = gateway, threading.Lock()
        self.made: list[tuple[int, str]] = []
        self.sizes: list[int] = []
        self.full: list[threading.Event] = []
        world.tool = functools.partial(run_tool, run=self.run)

    def run(self, argv: list[str], **how: Any) -> Any:
        with self.lock:
            ends = list(itertools.accumulate(self.sizes))
            at = next((i for i, end in enumerate(ends) if len(self.made) < end), len(ends))
            self.made.append((at + 1, argv[3] if argv[1] == "gateway" else " ".join(argv[1:3])))
            if at < len(ends) and len(self.made) == ends[at]:
                self.full[at].set()
        if at < len(ends):
            assert self.full[at].wait(120), f"round {at + 1} was never full: {self.made}"
        return self.gateway.run(argv, **how)

    def of(self, world: World, *args: str, rounds: list[int]) -> list[tuple[int, str]]:
        """One command's calls, each with its round, sorted."""
        self.made, self.sizes = [], rounds
        self.full = [threading.Event() for _ in rounds]
        out = world.json("cron", "--format", "openclaw", *args, "--all-agents")
        assert out.code == 0, out.stdout
        return sorted(self.made)


def test_two_agents_calls_in_rounds_and_none_that_changes_nothing(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """Issue 57: install is the list beside the hook's read of openclaw.json's revision, then the
    six declarations beside the hook's one write (`config.patch`: two light calls where `config
    set` was one of three times the CPU); again one list; removal the same two rounds, the read
    once for both agents; and no write for a hook whose settings are already gone from
    openclaw.json (before: `hooks disable` and two `config unset` one after another, which wrote
    an entry to take it out again)."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    config, _ = setup(world, {"home": world.workspace, "work": work})
    calls = Rounds(world, gateway)
    add, rm = [(2, "cron.add")] * 6, [(2, "cron rm")] * 6
    assert calls.of(world, "--install", rounds=[2, 7]) == [
        (1, "config.get"), (1, "cron list"), (2, "config.patch"), *add
    ]  # fmt: skip
    assert calls.of(world, "--install", rounds=[1]) == [(1, "cron list")]
    assert calls.of(world, "--remove", rounds=[2, 7]) == [
        (1, "config.get"), (1, "cron list"), (2, "config.patch"), *rm
    ]  # fmt: skip
    assert calls.of(world, "--remove", rounds=[1]) == [(1, "cron list")]  # nothing installed
    assert calls.of(world, "--install", rounds=[2, 7])[:2] == [(1, "config.get"), (1, "cron list")]
    settings = json.loads(config.read_text())
    del settings["hooks"]  # the user took the hook's settings out by hand
    config.write_text(json.dumps(settings))
    assert calls.of(world, "--remove", rounds=[2, 6]) == [
        (1, "config.get"), (1, "cron list"), *rm
    ]  # fmt: skip  # before: 10 calls in 4 rounds; the read begun beside the list writes nothing
    assert by_agent(gateway) == {} and "hooks" not in json.loads(config.read_text())


def test_an_agent_without_its_workspace_yet_is_said_not_installed(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    setup(world, {"home": world.workspace, "later": tmp_path / "not-yet"})
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert out.code == 0, out.stdout
    assert sorted(by_agent(gateway)) == ["home"]
    assert any("agent later" in n and "does not exist yet" in n for n in out.data["notes"])


def test_all_agents_needs_a_roster(world: World, gateway: Gateway) -> None:
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert out.code == 2 and "no host's configuration lists agents" in out.data["error"]
    # the file it looked in, by its path (a newcomer could not tell which file was read)
    assert "agents.entries or agents.list in /" in out.data["error"]
    assert "openclaw.json" in out.data["error"]


def test_an_mcporter_config_nested_past_reason_is_refused_not_a_crash(
    world: World, gateway: Gateway
) -> None:
    _, mcporter = setup(world, {"home": world.workspace})
    deep = "[" * 100_000 + "]" * 100_000
    mcporter.write_text('{"mcpServers": {"agent-memory": ' + deep + "}}")
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert out.code == 2, out.stdout
    assert "cannot read" in out.data["error"] and "nested" in out.data["error"]
    assert by_agent(gateway) == {}


def test_a_crontab_gets_one_block_per_agent_each_its_own_store(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 50: crontab (systemd, launchd) `--all-agents` reads OpenClaw's agents too."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    fake_crontab(bin_dir, "MAILTO=me@example.invalid\n")
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    _, mcporter = setup(world, {"home": world.workspace, "work": work})
    out = world.json("cron", "--format", "crontab", "--install", "--all-agents")
    assert out.code == 0, out.stdout
    table = (bin_dir / "table").read_text()
    assert table.startswith("MAILTO=me@example.invalid\n")
    for ws in (world.workspace, work):
        assert table.count(f"# >>> memfuse {plan.label_for(ws)} >>>") == 1, table
    lines = [line for line in table.splitlines() if line[:1].isdigit()]
    assert len(lines) == 6
    work_lines = [line for line in lines if f"--workspace {work}" in line]
    assert len(work_lines) == 3 and all("--server agent-memory-work" in x for x in work_lines)
    assert "agent-memory-work" in json.loads(mcporter.read_text())["mcpServers"]
    again = world.json("cron", "--format", "crontab", "--install", "--all-agents")
    assert again.code == 0 and (bin_dir / "table").read_text() == table
    printed = world.json("cron", "--format", "crontab", "--all-agents").data["text"]
    assert all(f">>> memfuse {plan.label_for(ws)} >>>" in printed for ws in (world.workspace, work))


def test_check_tries_every_agents_jobs_with_its_own_store(
    world: World, gateway: Gateway, tmp_path: Path, dry_runs: list[list[str]]
) -> None:
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work})
    out = world.json("cron", "--format", "openclaw", "--check", "--all-agents")
    names = [job["job"] for job in out.data["jobs"]]
    assert len(names) == 6, names
    assert sum(n.startswith("home: ") for n in names) == 3
    assert sum(n.startswith("work: ") for n in names) == 3
    assert not any(job.get("unchecked") or job["findings"] for job in out.data["jobs"])
    work_jobs = [job for job in out.data["jobs"] if job["job"].startswith("work: ")]
    assert all("--server agent-memory-work" in job["command"] for job in work_jobs)
    tried = [" ".join(argv) for argv in dry_runs]
    assert len(tried) == 6 and sum("--server agent-memory-work" in t for t in tried) == 3


def home_synced_beside_work(world: World, tmp_path: Path) -> Path:
    """Two agents, no store; home has synced one journal. Returns work's workspace."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work}, store=False)
    world.journal("2026-12-01", "## 09:00\n- Home: booked the plumber for Tuesday morning\n")
    assert world.run("sync").code == 0
    return work


def test_status_all_agents_is_one_table_and_the_worst_exit(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """Issue 50: one row per agent (its last runs, pending bullets, alarms), one exit code."""
    work = home_synced_beside_work(world, tmp_path)
    (work / "memory" / "2026-12-01.md").write_text(
        "## 09:00\n- Work: the quarterly review slides\n"
    )
    world.gateway.down = "failed"
    for hour in ("10", "12", "14"):
        synced = CliRunner().invoke(
            app, ["sync", "-q", "--now", f"2026-12-01T{hour}:00", "-w", str(work)],
            catch_exceptions=False, obj=world.seams,
        )  # fmt: skip
    assert synced.exit_code == 4
    out = world.json("status", "--all-agents")
    rows = {row["agent"]: row for row in out.data["agents"]}
    assert sorted(rows) == ["home", "work"]
    assert rows["home"]["exit_code"] == 0 and rows["home"]["alarms"] == []
    assert rows["work"]["exit_code"] == 4 and rows["work"]["alarms"]
    assert rows["work"]["pending"] >= 1
    assert out.code == 4
    printed = world.run("status", "--all-agents").stdout
    assert "  home: exit 0" in printed and "  work: exit 4" in printed
    setup(world, {"home": world.workspace, "work": work, "later": tmp_path / "nil"}, store=False)
    assert world.json("status", "--all-agents").code == 66


def test_status_all_agents_closes_each_agents_ledger_before_the_next(
    world: World, gateway: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home_synced_beside_work(world, tmp_path)
    opened: list[LedgerReader] = []
    real_open = LedgerReader.open

    def counted(state: StateFolder) -> LedgerReader | None:
        reader = real_open(state)
        if reader is not None:
            opened.append(reader)
        return reader

    monkeypatch.setattr(LedgerReader, "open", staticmethod(counted))
    closed: list[LedgerReader] = []
    real_close = LedgerReader.close
    monkeypatch.setattr(LedgerReader, "close", lambda self: (closed.append(self), real_close(self)))
    assert world.json("status", "--all-agents").code == 0
    assert opened and all(reader in closed for reader in opened)


def test_doctor_all_agents_checks_each_agents_own_store(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """Issue 50: one row per agent, each checked with its own store entry; the worst exit."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work})
    before = world.json("doctor", "--all-agents")
    rows = {row["agent"]: row for row in before.data["agents"]}
    assert [rows["home"]["server"], rows["work"]["server"]] == ["agent-memory", "agent-memory-work"]
    assert any("has no server 'agent-memory-work'" in line for line in rows["work"]["failed"])
    fix = "`memfuse cron --install --all-agents` writes it from 'agent-memory', with a database"
    assert any(fix in x for x in rows["work"]["failed"]), rows["work"]["failed"]
    assert before.code == 1
    assert world.json("cron", "--format", "openclaw", "--install", "--all-agents").code == 0
    after = {row["agent"]: row for row in world.json("doctor", "--all-agents").data["agents"]}
    assert after["work"]["failed"] == [] and after["work"]["exit_code"] == 0
    printed = world.run("doctor", "--all-agents").stdout
    assert "memfuse doctor, every agent:" in printed and "  work: " in printed


def test_status_and_install_name_an_agent_that_can_reach_anothers_memory(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    config, _ = setup(world, {"home": world.workspace, "work": work})
    entries = {"home": {"workspace": str(world.workspace), "tools": {"deny": ["memfuse-work__*"]}},
               "work": {"workspace": str(work)}}  # fmt: skip
    servers = {
        name: {"command": "memfuse", "args": ["serve", "-w", str(ws)]}
        for name, ws in (("memfuse-home", world.workspace), ("memfuse-work", work))
    }
    config.write_text(json.dumps({"agents": {"entries": entries}, "mcp": {"servers": servers}}))
    warned = world.json("status", "--all-agents").envelope["warnings"]
    assert [w for w in warned if "can call" in w] == [
        f"agent work can call mcp.servers.memfuse-home, the memory of {world.workspace} (not its"
        f' own {work}): add "memfuse-home__*" to agents.entries.work.tools.deny'
    ]
    installed = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert any("agent work can call" in w for w in installed.envelope["warnings"])


def test_remove_all_agents_needs_no_store_entry(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    _, mcporter = setup(world, {"home": world.workspace, "work": work})
    assert world.json("cron", "--format", "openclaw", "--install", "--all-agents").code == 0
    mcporter.unlink()  # the store's config gone: the jobs must still come out
    out = world.json("cron", "--format", "openclaw", "--remove", "--all-agents")
    assert out.code == 0, out.stdout
    assert by_agent(gateway) == {}


def test_an_agent_inside_anothers_workspace_or_named_apart_by_case_is_left_out(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """Review of issues 47 and 50: a workspace nested in another agent's (OpenClaw's
    `agents.defaults.workspace`/<id> beside an agent whose workspace is that folder) is written
    by the outer agent: its journals would carry the outer agent's words into the inner's
    store, RECENT.md and recall. And `Work` beside `work` is one database file where names
    ignore case. Each is left out, and said."""
    inner = world.workspace / "nested"
    (inner / "memory").mkdir(parents=True)
    twin = tmp_path / "twin-ws"
    (twin / "memory").mkdir(parents=True)
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    _, mcporter = setup(world, {"home": world.workspace, "nested": inner, "work": work,
                                "Work": twin})  # fmt: skip
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert out.code == 0, out.stdout
    assert sorted(by_agent(gateway)) == ["home", "work"]
    notes = " | ".join(out.data["notes"])
    assert f"agent nested: its workspace ({inner}) lies inside agent home's" in notes
    assert "agent 'Work': an id memfuse cannot name files by: left out" in notes
    servers = json.loads(mcporter.read_text())["mcpServers"]
    assert sorted(servers) == ["agent-memory", "agent-memory-work"]


def test_names_and_paths_from_openclaw_json_cannot_print_lines_of_their_own(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """Review of issues 47 and 50: an agent id, a workspace, an MCP server's key or a channel's
    name from openclaw.json reached `status` and its warnings as written: escapes were shown,
    but a line break printed a line of its own ("  work: exit 0" under an agent in alarm)."""
    forged = "\n  work: exit 0  all is well"
    config, _ = setup(world, {"home": world.workspace})
    entries = {f"home{forged}": {"workspace": str(world.workspace)},
               "other": {"workspace": str(tmp_path / f"nil{forged}")}}  # fmt: skip
    servers = {f"m{forged}": {"command": "memfuse", "args": ["serve", "-w", str(tmp_path)]}}
    config.write_text(json.dumps({
        "agents": {"entries": entries}, "mcp": {"servers": servers},
        "cron": {"failureAlert": {"channel": f"ops{forged}"}},
    }))  # fmt: skip
    out = world.run("status", "--all-agents")
    assert "all is well" in out.stdout + out.stderr  # shown, as an escape within a line
    said = (out.stdout + out.stderr).splitlines()
    assert not [line for line in said if "all is well" in line and line.startswith("  work")]
    alone = world.run("status")
    assert not [line for line in alone.stdout.splitlines() if line.startswith("  work: exit 0")]


def test_an_agents_entry_made_by_hand_keeps_its_database(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """Review of issues 47 and 50: an `agent-memory-work` entry already in the mcporter config
    (a second install made by hand, as issue 50 says users do) was replaced with one naming a
    new, empty `agent-memory-work.db`: the work agent's memories stayed in its own database,
    out of recall's reach. Its database is kept; one naming the shared database is not."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    _, mcporter = setup(world, {"home": world.workspace, "work": work})
    data = json.loads(mcporter.read_text())
    mine = str(tmp_path / "by-hand" / "work-memories.db")
    data["mcpServers"]["agent-memory-work"] = {
        **data["mcpServers"]["agent-memory"],
        "env": {"AGENT_MEMORY_DB": mine},
    }
    mcporter.write_text(json.dumps(data))
    assert world.json("cron", "--format", "openclaw", "--install", "--all-agents").code == 0
    servers = json.loads(mcporter.read_text())["mcpServers"]
    assert servers["agent-memory-work"]["env"]["AGENT_MEMORY_DB"] == mine
    assert servers["agent-memory-work"]["env"]["AGENT_MEMORY_WORKSPACE"] == str(work)
    shared = servers["agent-memory"]["env"]["AGENT_MEMORY_DB"]
    servers["agent-memory-work"]["env"]["AGENT_MEMORY_DB"] = shared
    mcporter.write_text(json.dumps({"mcpServers": servers}))
    assert world.json("cron", "--format", "openclaw", "--install", "--all-agents").code == 0
    after = json.loads(mcporter.read_text())["mcpServers"]["agent-memory-work"]["env"]
    assert after["AGENT_MEMORY_DB"].endswith("/agent-memory-work.db")


class LabHost(Scheduler):
    """Another package's host that configures agents too: past the first host in the registry."""

    name = "lab"
    summary = "a second host with agents of its own"
    source_help = "nothing"
    lists_agents = True

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def render(self, schedule: Schedule, machine: Machine) -> dict[str, str]:
        return {}

    def install(
        self, schedule: Schedule, files: dict[str, str], machine: Machine
    ) -> InstallOutcome:
        return InstallOutcome(schedule)

    def remove(self, schedule: Schedule, files: dict[str, str], machine: Machine) -> list[str]:
        return []

    def read(self, files: dict[str, str]) -> list[Job]:
        return []

    def available(self, machine: Machine) -> bool:
        return False

    def agents(self, machine: Machine) -> list[tuple[str, str]]:
        return [("lab", str(self.workspace))]


def test_status_cron_and_doctor_take_one_roster_from_every_host(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 48: `status --all-agents` listed every host's agents, `cron --all-agents` only the
    first host's that listed any, so an agent past the first host had a status row and no
    jobs. One roster: every host's agents, in the registry's order, each once."""
    lab = tmp_path / "lab-ws"
    (lab / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace})
    registry.every()  # the built-ins, loaded
    monkeypatch.setitem(registry._REGISTERED, "lab", LabHost(lab))
    status = world.json("status", "--all-agents")
    assert [row["agent"] for row in status.data["agents"]] == ["home", "lab"]
    printed = world.json("cron", "--format", "crontab", "--all-agents").data["text"]
    assert [ws for ws in (world.workspace, lab) if plan.label_for(ws) in printed] == [
        world.workspace,
        lab,
    ]
    doctor = world.json("doctor", "--all-agents")
    assert [row["agent"] for row in doctor.data["agents"]] == ["home", "lab"]


def test_archive_reaches_every_agents_tidy(world: World, tmp_path: Path) -> None:
    """Issue 48: `cron --all-agents --archive` planned each agent's runs without `--archive`."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work})
    printed = world.json("cron", "--format", "crontab", "--all-agents", "--archive").data["text"]
    tidy = [line for line in printed.splitlines() if line[:1].isdigit() and " tidy " in line]
    assert len(tidy) == 2 and all("--archive" in line for line in tidy)


def test_every_agents_printed_openclaw_jobs_clear_dreaming_as_one_workspaces_do(
    world: World, tmp_path: Path
) -> None:
    """Issue 48: printed for one workspace, OpenClaw's tidy moves off the minute its
    configuration gives dreaming (03:00 when it is silent); printed for every agent it did not."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work})
    one = json.loads(world.json("cron", "--format", "openclaw").data["text"].split("\n", 1)[1])
    every = world.json("cron", "--format", "openclaw", "--all-agents").data["files"]
    tidy = [job["schedule"]["expr"] for text in every.values() for job in json.loads(text)
            if job["name"].startswith("memfuse tidy")]  # fmt: skip
    assert [j["schedule"]["expr"] for j in one if j["name"].startswith("memfuse tidy")] == [
        "30 3 * * *"
    ]
    assert tidy == ["30 3 * * *", "30 3 * * *"]


# --- issue 55: the failure alert names the agent and the run ---------------------------------


RUNS = ("sync", "surface", "tidy")


def named(gateway: Gateway) -> dict[str, tuple[str, ...]]:
    """Each agent's jobs' names, in the order of the runs."""
    return {
        agent: tuple(sorted((str(j["name"]) for j in jobs), key=lambda n: RUNS.index(n.split()[1])))
        for agent, jobs in by_agent(gateway).items()
    }


def test_two_agents_jobs_are_named_by_run_and_agent_as_openclaws_alert_says_them(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """OpenClaw's alert says `Automation "<name>" failed 1 times`: with the hash label for a
    name an operator of two agents could not tell whose run failed."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work})
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert out.code == 0, out.stdout
    assert named(gateway) == {
        agent: tuple(f"memfuse {run} for agent {agent}" for run in RUNS)
        for agent in ("home", "work")
    }
    for job in gateway.jobs:  # `cron list` shows the same words; the key keeps the hash label
        assert job["displayName"] == job["name"]
    assert any(
        "added the OpenClaw job memfuse sync for agent work (" in c for c in out.data["changes"]
    )


def test_jobs_an_older_memfuse_named_by_hash_converge_in_place_then_go_with_the_new(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    """An install over jobs named by their hash label keeps their ids (OpenClaw's cron.add by
    declaration key keeps a job's name: cron.update renames it), makes no duplicate and leaves
    the user's job, even one named like memfuse's; the next install costs no call; removal
    takes old- and new-named jobs alike."""
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    setup(world, {"home": world.workspace, "work": work})
    assert world.json("cron", "--format", "openclaw", "--install", "--all-agents").code == 0
    users = {**USERS, "name": "memfuse sync for agent home"}  # the user's, not memfuse's
    older = []
    for job in gateway.jobs:  # as memfuse declared them before: hash names, no threshold
        label = str(job["declarationKey"]).removeprefix("memfuse:")
        folder = Path(str(job["payload"]["argv"][-1])).name  # type: ignore[index]
        older.append({**job, "name": label, "displayName": f"memfuse {label.split('-')[2]}"
                      f" ({folder})", "failureAlert": None})  # fmt: skip
    gateway.put(users, *older)
    gateway.forget_calls()
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert out.code == 0, out.stdout
    assert sorted(j["id"] for j in gateway.jobs) == sorted([users["id"], *(j["id"] for j in older)])
    assert named(gateway) == {
        agent: tuple(f"memfuse {run} for agent {agent}" for run in RUNS)
        for agent in ("home", "work")
    }
    assert all(j["failureAlert"] == {"after": 1} for j in gateway.jobs if j["id"] != "j-user")
    assert users in gateway.jobs and gateway.calls("cron", "rm") == []
    assert len(gateway.calls("gateway", "call", "cron.update")) == 6
    assert sum("): updated" in c for c in out.data["changes"]) == 6
    gateway.forget_calls()
    again = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    assert again.code == 0, again.stdout
    assert gateway.calls("gateway", "call") == []  # converged: no call at all

    home_label = plan.label_for(world.workspace)
    legacy = {"id": "legacy-tidy", "name": f"{home_label}-tidy", "enabled": True,
              "schedule": {"kind": "cron", "expr": "0 3 * * *"}, "payload": {}}  # fmt: skip
    jobs = gateway.jobs
    for job in jobs:  # home's as an older memfuse named them, work's as this one does
        if job.get("agentId") == "home":
            job["name"] = str(job["declarationKey"]).removeprefix("memfuse:")
    gateway.put(*jobs, legacy)
    removed = world.json("cron", "--format", "openclaw", "--remove", "--all-agents")
    assert removed.code == 0, removed.stdout
    assert gateway.jobs == [users]
