"""Issue 50: `memfuse serve` in a Gateway of several agents. MCP servers are Gateway-wide, so
each agent's entry must be kept from the others by their tool policy; memfuse names every
agent that can still call another agent's memory, with the line that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

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
