"""Issue 50, the roster's edges: agents past AGENTS_MAX are said, never dropped without a
word, by `cron`, `status` and `doctor --all-agents`; a roster or alert route kept in another
file by OpenClaw's `$include` is read as OpenClaw reads it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memfuse.errors import ExitCode
from memfuse.schedule.openclaw import host
from tests.fakes import World
from tests.unit.flows.test_openclaw_agents_flow import setup
from tests.unit.flows.test_openclaw_install_flow import Gateway, stand_in


@pytest.fixture
def gateway(world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Gateway:
    return stand_in(tmp_path, monkeypatch, world)


def test_agents_past_the_cap_are_said_by_cron_status_and_doctor(
    world: World, gateway: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host, "AGENTS_MAX", 2)
    spaces = {"home": world.workspace, **{f"extra{n}": tmp_path / f"ws{n}" for n in range(4)}}
    for workspace in spaces.values():
        (workspace / "memory").mkdir(parents=True, exist_ok=True)
    setup(world, spaces)
    said = (
        "OpenClaw's configuration lists 5 agents; memfuse takes the first 2 and leaves 3 out,"
        " unscheduled and unchecked: extra1, extra2, extra3"
    )
    for command in (
        ("cron", "--format", "openclaw", "--all-agents"),
        ("cron", "--format", "openclaw", "--install", "--all-agents"),
        ("status", "--all-agents"),
        ("doctor", "--all-agents"),
    ):
        out = world.json(*command)
        assert said in out.warnings_text + json.dumps(out.data.get("notes")), command
    assert sorted({str(j.get("agentId")) for j in gateway.jobs if j.get("agentId")}) == [
        "extra0", "home",
    ]  # fmt: skip
    printed = world.run("status", "--all-agents")
    assert said in printed.stderr


def test_an_agent_pushed_past_the_cap_has_its_jobs_named_as_such_not_as_gone(
    world: World, gateway: Gateway, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spaces = {"home": world.workspace, "work": tmp_path / "work"}
    (spaces["work"] / "memory").mkdir(parents=True)
    setup(world, spaces)
    assert world.json("cron", "--format", "openclaw", "--install", "--all-agents").code == 0
    monkeypatch.setattr(host, "AGENTS_MAX", 1)  # an agent added earlier in the roster, say
    out = world.json("cron", "--format", "openclaw", "--install", "--all-agents")
    said = json.dumps(out.data)
    assert "agent work is past the first 1 agents memfuse takes" in said
    assert "work is no longer configured" not in said
    removed = world.json("cron", "--format", "openclaw", "--remove", "--all-agents")
    assert "agent work is past the first 1 agents memfuse takes: removed its job" in (
        json.dumps(removed.data)
    )


def test_no_warning_at_or_under_the_cap(world: World, gateway: Gateway) -> None:
    setup(world, {"home": world.workspace})
    assert host.agents_left_out(dict(os.environ)) is None
    assert "leaves" not in world.json("status", "--all-agents").warnings_text


def test_past_64_agents_the_count_and_the_first_five_left_out_are_named(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    entries = {f"a{n:02}": {"workspace": str(tmp_path / f"ws{n}")} for n in range(60)}
    listed = [{"id": f"b{n:02}"} for n in range(10)] + [{"id": "a00"}]  # a00: once
    path.write_text(json.dumps({"agents": {"entries": entries, "list": listed}}))
    env = {"HOME": str(tmp_path), "OPENCLAW_CONFIG_PATH": str(path)}
    taken = host.agents(env)
    assert len(taken) == host.AGENTS_MAX == 64 and taken[-1][0] == "b03"
    assert host.agents_left_out(env) == (
        "OpenClaw's configuration lists 70 agents; memfuse takes the first 64 and leaves 6"
        " out, unscheduled and unchecked: b04, b05, b06, b07, b08, …"
    )


def test_a_roster_in_an_included_file_is_installed_and_a_bad_include_said_by_doctor(
    world: World, gateway: Gateway, tmp_path: Path
) -> None:
    work = tmp_path / "work-ws"
    (work / "memory").mkdir(parents=True)
    config, _ = setup(world, {"home": world.workspace})
    config.write_text("// the agents kept apart\n{ agents: { $include: './agents.json5' } }\n")
    roster = {"entries": {"home": {"workspace": str(world.workspace)},
                          "work": {"workspace": str(work)}}}  # fmt: skip
    (config.parent / "agents.json5").write_text(json.dumps(roster))
    assert world.json("cron", "--format", "openclaw", "--install", "--all-agents").code == 0
    assert sorted({str(j.get("agentId")) for j in gateway.jobs if j.get("agentId")}) == [
        "home", "work",
    ]  # fmt: skip
    assert not [c for c in world.json("doctor").data["checks"] if c["name"] == "openclaw-config"]
    config.write_text("{ agents: { $include: '../agents.json5' } }\n")  # out of its folder
    checks = {c["name"]: c for c in world.json("doctor").data["checks"]}
    row = checks["openclaw-config"]
    assert not row["ok"] and not row["critical"] and "lies outside" in row["detail"]
    assert "memfuse read none of its settings there" in row["detail"]
    printed = world.run("cron", "--format", "openclaw")
    assert "lies outside" in printed.stderr


def test_a_workspace_no_file_system_can_name_is_shown_not_a_traceback(
    world: World, gateway: Gateway
) -> None:
    """A lone surrogate is valid JSON5 text but no file name: shown as an escape, never
    written raw to a UTF-8 stream (UnicodeEncodeError: a traceback, exit 1)."""
    setup(world, {"home": world.workspace, "work": Path("/tmp/\\ud800")}, store=False)
    for command in (("status", "--all-agents"), ("status", "--all-agents", "--json")):
        out = world.run(*command)
        assert out.code == ExitCode.OK, (command, out)  # left out, and said
        assert "/tmp/\\ud800" in out.stdout + out.stderr, command


def test_an_agent_whose_workspace_no_file_system_can_name_is_left_out_and_said(
    world: World, gateway: Gateway, dry_runs: list[list[str]]
) -> None:
    """Its state folder and its jobs' arguments cannot be named: each --all-agents command
    ended in "internal error: UnicodeEncodeError", the other agents unscheduled with it.
    The check's dry runs are recorded (tests/conftest.py): which agent's job it tried is the
    point, not what a run answers."""
    setup(world, {"home": world.workspace, "work": Path("/tmp/\\ud800")})
    for command in (
        ("cron", "--format", "openclaw", "--install", "--all-agents"),
        ("cron", "--format", "openclaw", "--check", "--all-agents"),
        ("doctor", "--all-agents"),
    ):
        out = world.json(*command)
        assert "internal error" not in out.stderr, (command, out)
        said = out.warnings_text + json.dumps(out.data)
        assert "agent work: its workspace" in said and "left out" in said, (command, out)
    assert {str(j.get("agentId")) for j in gateway.jobs if j.get("agentId")} == {"home"}
    tried = [(argv[1], argv[argv.index("--workspace") + 1]) for argv in dry_runs]
    assert tried == [(c, str(world.workspace)) for c in ("sync", "surface", "tidy")]
