"""Reading openclaw.json (issue 50): JSON5 as OpenClaw writes it, and a file that cannot be
read said, never taken silently for OpenClaw's defaults; bounded in size and depth."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memfuse.schedule.openclaw import config, host, serving


def env_for(path: Path) -> dict[str, str]:
    return {"HOME": str(path.parent), "OPENCLAW_CONFIG_PATH": str(path)}


def test_json5_as_openclaws_docs_write_it(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    path.write_text(
        "{\n  // a comment\n  agents: { defaults: { workspace: '~/agents', }, },\n"
        "  plugins: { entries: { 'memory-core': { config: { dreaming: {"
        " frequency: '0 22 * * *', timezone: \"America/New_York\" } } } } },\n}\n"
    )
    found = host.read_config(env_for(path))
    assert found is not None and host.dig(found, "agents", "defaults", "workspace") == "~/agents"
    assert host.config_problem(env_for(path)) is None
    (writer,) = host.dreaming(env_for(path), lambda _name: None)
    assert writer.zone == "America/New_York" and writer.times == ((22, 0),)


def test_no_file_is_no_config_and_no_problem(tmp_path: Path) -> None:
    env = env_for(tmp_path / "absent.json")
    assert host.read_config(env) is None and host.config_problem(env) is None


def test_what_cannot_be_read_is_said_and_bounded(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    cases = {
        "{ agents: ": "is not JSON5",
        "[1, 2]": "is not a JSON5 object",
        "[" * 5000 + "]" * 5000: "nests too deep to read",
        '{"a": "' + "x" * config.CONFIG_LIMIT + '"}': "was not read",
    }
    for text, said in cases.items():
        path.write_text(text)
        assert host.read_config(env_for(path)) == {}
        problem = host.config_problem(env_for(path))
        assert problem is not None and said in problem, (said, problem)
    fifo = tmp_path / "fifo.json"
    import os

    os.mkfifo(fifo)  # never waited on
    assert host.config_problem(env_for(fifo)) is not None


def test_a_big_strict_json_file_takes_the_fast_path(tmp_path: Path) -> None:
    path = tmp_path / "openclaw.json"
    path.write_text('{"agents": {"list": [' + ",".join(['{"id": "a"}'] * 20000) + "]}}")
    found = host.read_config(env_for(path))
    assert found is not None and len(host.dig(found, "agents", "list")) == 20000  # type: ignore[arg-type]


def test_a_path_too_long_to_name_a_folder_is_not_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issues 47 and 50: resolving a path costs time in the square of its parts,
    and strict JSON may be 1 MiB: a 500 KB workspace took 9 s for each of the many times one
    command reads the agents (a 900 KB `agents.defaults.workspace` with many entries, hours).
    No path longer than the system resolves is resolved; the agent is still listed, its
    workspace one that does not exist."""
    path = tmp_path / "openclaw.json"
    long = "/a" * 100_000
    many = {f"a{i}": {} for i in range(50)}
    path.write_text(json.dumps({
        "agents": {"defaults": {"workspace": long}, "entries": {"home": {"workspace": long},
                                                                 **many}},
        "mcp": {"servers": {"m": {"command": "memfuse", "args": ["serve", "-w", long]}}},
    }))  # fmt: skip
    resolved: list[int] = []
    real = os.path.realpath

    def counted(value: str, **kwargs: object) -> str:
        resolved.append(len(str(value)))
        return real(value)

    monkeypatch.setattr(os.path, "realpath", counted)
    found = dict(host.agents(env_for(path)))
    serving.serve_servers(env_for(path))
    serving.serve_entries(env_for(path), str(tmp_path))
    assert found["home"] == long and found["a1"] == f"{long}/a1"
    assert resolved and max(resolved) <= host.PATH_MAX


def test_a_path_no_file_system_can_name_is_not_resolved(tmp_path: Path) -> None:
    """A lone surrogate is valid JSON text but no path: resolving it raised
    UnicodeEncodeError out of every command that reads the agents. The agent is still listed,
    its workspace one that does not exist."""
    path = tmp_path / "openclaw.json"
    odd = "/tmp/\ud800"
    path.write_text(json.dumps({
        "agents": {"defaults": {"workspace": odd}, "entries": {"home": {"workspace": odd},
                                                                "work": {}}},
        "mcp": {"servers": {"m": {"command": "memfuse", "args": ["serve", "-w", odd]}}},
    }))  # fmt: skip
    found = dict(host.agents(env_for(path)))
    assert found == {"home": odd, "work": f"{odd}/work"}
    assert host.agent_for(str(tmp_path), env_for(path)) is None
    serving.serve_servers(env_for(path))
    serving.serve_entries(env_for(path), str(tmp_path))


def test_workspaces_are_read_as_openclaw_reads_them(tmp_path: Path) -> None:
    """Issue 55: `${HOME}/ws` became `<cwd>/${HOME}/ws`, and a number, NaN or a list silently
    became OpenClaw's default workspace. `${VAR}` (upper case; `$${VAR}` a literal) comes from
    the environment, else the configuration's `env`; `~` is the home; a workspace OpenClaw would
    refuse, or one whose folder memfuse cannot know, is left out with its key's path."""
    path = tmp_path / "openclaw.json"
    path.write_text(
        "{ env: { vars: { WS_ROOT: '/srv/agents' } },\n"
        "  agents: { entries: {\n"
        "    home: { workspace: '${HOME}/ws' }, tilde: { workspace: '~/t' },\n"
        "    vars: { workspace: '${WS_ROOT}/v' }, escaped: { workspace: '/srv/$${WS_ROOT}' },\n"
        "    number: { workspace: 42 }, nan: { workspace: NaN }, list: { workspace: ['/a'] },\n"
        "    unset: { workspace: '${NOT_SET_HERE}/u' }, relative: { workspace: 'ws/r' },\n"
        "    plain: {} } } }\n"
    )
    env = {**env_for(path), "OPENCLAW_STATE_DIR": str(tmp_path / "state")}
    home = str(tmp_path)
    assert dict(host.agents(env)) == {
        "home": f"{home}/ws", "tilde": f"{home}/t", "vars": "/srv/agents/v",
        "escaped": "/srv/${WS_ROOT}", "plain": f"{tmp_path}/state/workspace-plain",
    }  # fmt: skip
    said = host.agents_left_out(env) or ""
    for named in (
        "agent number: agents.entries.number.workspace is 42, not a path: left out",
        "agent nan: agents.entries.nan.workspace is NaN, not a path",
        'agent list: agents.entries.list.workspace is ["/a"], not a path',
        "agents.entries.unset.workspace names ${NOT_SET_HERE}, which is not set here",
        "agents.entries.relative.workspace (ws/r) is relative: OpenClaw resolves it against",
    ):
        assert named in said, (named, said)


def test_a_default_workspace_memfuse_cannot_read_leaves_out_the_agents_that_take_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "openclaw.json"
    path.write_text("{ agents: { defaults: { workspace: 7 }, list: [{ id: 'a' }] } }")
    assert host.agents(env_for(path)) == []
    said = host.agents_left_out(env_for(path))
    assert said == "agent a: agents.defaults.workspace is 7, not a path: left out"
