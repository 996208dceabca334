"""Issue 50: `memfuse serve` in a Gateway of several agents. MCP servers are Gateway-wide, so
each agent's entry must be kept from the others by their tool policy; memfuse names every
agent that can still call another agent's memory, with the line that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

from memfuse.commands import serve as serve_command
from memfuse.schedule.openclaw import serving


def env_with(tmp_path: Path, config: dict[str, object]) -> dict[str, str]:
    path = tmp_path / "openclaw.json"
    path.write_text(json.dumps(config))
    return {"HOME": str(tmp_path), "OPENCLAW_CONFIG_PATH": str(path)}


def serve(ws: Path) -> dict[str, object]:
    return {"command": "/home/me/.local/bin/memfuse", "args": ["serve", "-w", str(ws)]}


def test_an_agent_that_can_call_anothers_memory_is_named_with_its_fix(tmp_path: Path) -> None:
    home, work = tmp_path / "home-ws", tmp_path / "work-ws"
    config: dict[str, object] = {
        "agents": {"entries": {"home": {"workspace": str(home)},
                               "work": {"workspace": str(work),
                                        "tools": {"deny": ["memfuse-home__*"]}}}},
        "mcp": {"servers": {"memfuse-home": serve(home), "memfuse.work": serve(work),
                            "docs": {"command": "npx", "args": ["docs-server"]}}},
    }  # fmt: skip
    said = serving.leaks(env_with(tmp_path, config))
    assert said == [
        f"agent home can call mcp.servers.memfuse.work, the memory of {work} (not its own"
        f' {home}): add "memfuse-work__*" to agents.entries.home.tools.deny'
    ]  # the key made provider-safe, as OpenClaw prefixes its tools
    config["agents"]["entries"]["home"]["tools"] = {"deny": ["MEMFUSE-WORK__*"]}  # type: ignore[index]
    assert serving.leaks(env_with(tmp_path, config)) == []


def test_an_allow_list_that_leaves_the_server_out_keeps_it_away(tmp_path: Path) -> None:
    home, work = tmp_path / "home-ws", tmp_path / "work-ws"
    config = {
        "agents": {"list": [{"id": "home", "workspace": str(home),
                             "tools": {"allow": ["read", "memfuse-home__*"]}},
                            {"id": "work", "workspace": str(work),
                             "tools": {"allow": ["bundle-mcp"]}}]},
        "mcp": {"servers": {"memfuse-home": serve(home), "memfuse-work": serve(work)}},
    }  # fmt: skip
    said = serving.leaks(env_with(tmp_path, config))
    assert len(said) == 1 and said[0].startswith("agent work can call mcp.servers.memfuse-home")


def test_prefixes_are_openclaws() -> None:
    assert serving.prefix("memfuse home") == "memfuse-home"
    assert serving.prefix("1st") == "mcp-1st"


def test_only_a_star_is_a_wildcard_as_in_openclaws_tool_policy(tmp_path: Path) -> None:
    """Review of issues 47 and 50: OpenClaw's tool globs (dist/glob-pattern-*.mjs) know `*`
    alone; `?` and `[…]` are literal there. Matched with fnmatch, a deny of `memfuse-wor?__*`
    or `memfuse-wor[k]__*` counted as closing the work server, so no warning was given while
    the home agent could still call the work agent's memory."""
    home, work = tmp_path / "home-ws", tmp_path / "work-ws"
    for deny in ("memfuse-wor?__*", "memfuse-wor[k]__*"):
        config: dict[str, object] = {
            "agents": {"entries": {"home": {"workspace": str(home), "tools": {"deny": [deny]}},
                                   "work": {"workspace": str(work),
                                            "tools": {"deny": ["memfuse-home__*"]}}}},
            "mcp": {"servers": {"memfuse-home": serve(home), "memfuse-work": serve(work)}},
        }  # fmt: skip
        said = serving.leaks(env_with(tmp_path, config))
        assert len(said) == 1 and said[0].startswith("agent home can call mcp.servers.memfuse-work")


def test_a_tilde_inside_a_served_path_is_not_the_home(tmp_path: Path) -> None:
    """`~` is the home only at a path's start (as in each agent's own workspace): a folder
    named `ws~1` served to its own agent is no leak."""
    home, work = tmp_path / "home~1", tmp_path / "work~1"
    config = {
        "agents": {"entries": {"home": {"workspace": str(home),
                                        "tools": {"deny": ["memfuse-work__*"]}},
                               "work": {"workspace": str(work),
                                        "tools": {"deny": ["memfuse-home__*"]}}}},
        "mcp": {"servers": {"memfuse-home": serve(home), "memfuse-work": serve(work)}},
    }  # fmt: skip
    assert serving.leaks(env_with(tmp_path, config)) == []
    assert serving.serve_servers(env_with(tmp_path, config)) == [
        ("memfuse-home", str(home)),
        ("memfuse-work", str(work)),
    ]


def test_every_tool_of_serve_is_a_way_in_not_only_recall_and_note(tmp_path: Path) -> None:
    """Issue 55: a deny of `__recall` and `__note` left `where` (a bullet's text) and `status`
    open; an allow list that admits `__where` let it in."""
    home, work = tmp_path / "home-ws", tmp_path / "work-ws"
    config: dict[str, object] = {
        "agents": {"entries": {
            "home": {"workspace": str(home), "tools": {"deny": ["memfuse-work__*"]}},
            "work": {"workspace": str(work),
                     "tools": {"deny": ["memfuse-home__recall", "memfuse-home__note"]}}}},
        "mcp": {"servers": {"memfuse-home": serve(home), "memfuse-work": serve(work)}},
    }  # fmt: skip
    said = serving.leaks(env_with(tmp_path, config))
    assert len(said) == 1, said
    assert said[0].startswith(
        "agent work can call mcp.servers.memfuse-home (where, status of its tools)"
    )
    entries: dict[str, dict[str, object]] = config["agents"]["entries"]  # type: ignore[index]
    entries["work"]["tools"] = {"allow": ["read", "memfuse-work__*", "memfuse-home__where"]}
    (said,) = serving.leaks(env_with(tmp_path, config))
    assert "memfuse-home (where of its tools)" in said
    assert tuple(tool.name for tool in serve_command.TOOLS) == serving.TOOLS


def test_every_way_of_naming_the_served_workspace_is_read(tmp_path: Path) -> None:
    """`--workspace=/w`, `-w/w`, `-w /w` and MEMFUSE_WORKSPACE in the entry's env: the
    workspace the entry serves, so the warning goes to the agent that is not its own."""
    home, work = tmp_path / "home-ws", tmp_path / "work-ws"
    memfuse = "/home/me/.local/bin/memfuse"
    forms: list[dict[str, object]] = [
        {"command": memfuse, "args": ["serve", f"--workspace={home}"]},
        {"command": memfuse, "args": ["serve", f"-w{home}"]},
        {"command": memfuse, "args": ["serve", "-w", str(work), "-w", str(home)]},  # the last
        {"command": memfuse, "args": ["serve"], "env": {"MEMFUSE_WORKSPACE": str(home)}},
    ]
    for entry in forms:
        config = {
            "agents": {"entries": {"home": {"workspace": str(home)},
                                   "work": {"workspace": str(work)}}},
            "mcp": {"servers": {"memfuse-home": entry}},
        }  # fmt: skip
        env = env_with(tmp_path, config)
        assert serving.serve_servers(env) == [("memfuse-home", str(home))], entry
        (said,) = serving.leaks(env)
        assert said.startswith("agent work can call mcp.servers.memfuse-home,"), entry
